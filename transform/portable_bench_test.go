package transform_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

// BenchmarkPortable serves one call through the server's chain for the
// tool (validation and handler), without a transport: the tool as written,
// and as each profile rewrites it. The tool's object is closed, which
// Gemini cannot say, and one argument is optional, which OpenAI's strict
// mode makes nullable: calls without null cost one more validation for
// Gemini and AllProviders (the tool's own schema), and nothing more for
// OpenAIStrict; a call with a null for the optional argument is mapped
// back.
func BenchmarkPortable(b *testing.B) {
	result := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	tool := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object","properties":{
			"q":{"type":"string"},"limit":{"type":"integer"},"since":{"type":["string","null"]}},
			"required":["q","since"],"additionalProperties":false}`)},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return result, nil
		}),
	}
	serve := func(b *testing.B, srv *mcpkit.Server, args string) {
		t, _ := srv.Lookup("search")
		h, _ := srv.Handler("search")
		req := mcpkittest.NewRequest(t, json.RawMessage(args))
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if res, err := h.ServeTool(ctx, req); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench"}, nil)
	if err := srv.Add(tool); err != nil {
		b.Fatal(err)
	}
	b.Run("bare", func(b *testing.B) { serve(b, srv, `{"q":"model context protocol","limit":5,"since":"2026"}`) })
	for _, p := range profiles {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench"}, nil)
		if err := srv.Add(tool); err != nil {
			b.Fatal(err)
		}
		if err := srv.Transform(transform.Portable(p, nil)); err != nil {
			b.Fatal(err)
		}
		b.Run(p.String(), func(b *testing.B) { serve(b, srv, `{"q":"model context protocol","limit":5,"since":"2026"}`) })
		if p == transform.OpenAIStrict {
			b.Run(p.String()+"/null", func(b *testing.B) { serve(b, srv, `{"q":"model context protocol","limit":null,"since":"2026"}`) })
		}
	}
}
