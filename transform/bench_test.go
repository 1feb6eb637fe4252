package transform_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

// BenchmarkCall serves one call through the server's chain for the tool
// (validation and handler), without a transport: the parent, called with
// its own names and the user argument, and a tool derived from it that
// renames q to query and fills in the hidden user from the token.
func BenchmarkCall(b *testing.B) {
	result := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	parent := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object","properties":{
			"q":{"type":"string"},"limit":{"type":"integer","default":10},"user":{"type":"string"}},
			"required":["q","user"],"additionalProperties":false}`)},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return result, nil
		}),
	}
	derived, err := transform.Tool(parent, transform.Spec{Name: "find", Arguments: map[string]transform.Arg{
		"q": {Name: "query"},
		"user": {Hide: true, ValueFunc: func(_ context.Context, req *mcpkit.Request) (any, error) {
			return req.TokenInfo().UserID, nil
		}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench"}, nil)
	if err := srv.Add(parent, derived); err != nil {
		b.Fatal(err)
	}
	token := mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "alice"})
	for _, bc := range []struct {
		name, tool string
		args       string
	}{
		{"parent", "search", `{"q":"model context protocol","limit":5,"user":"alice"}`},
		{"derived", "find", `{"query":"model context protocol","limit":5}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tool, _ := srv.Lookup(bc.tool)
			h, _ := srv.Handler(bc.tool)
			req := mcpkittest.NewRequest(tool, json.RawMessage(bc.args), token)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if res, err := h.ServeTool(ctx, req); err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
	}
}
