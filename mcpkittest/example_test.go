package mcpkittest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

func ExampleNewRequest() {
	// A middleware under test: it refuses calls without arguments.
	requireArgs := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			if len(req.Arguments) == 0 {
				return nil, mcpkit.ToolErrorf("arguments required")
			}
			return next.ServeTool(ctx, req)
		})
	}
	h := requireArgs(mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}))
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "t"}}

	_, err := h.ServeTool(context.Background(), mcpkittest.NewRequest(tool, nil))
	fmt.Println(err)
	_, err = h.ServeTool(context.Background(), mcpkittest.NewRequest(tool, map[string]int{"n": 1}))
	fmt.Println(err)
	// Output:
	// arguments required
	// <nil>
}

func ExampleConnectInMemory() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "example"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "ping", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
		}),
	})
	cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ping"})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: pong
}

// ExampleServeTool runs one tool's whole chain without a transport, with
// the header and token a middleware under test reads.
func ExampleServeTool() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "example"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			msg := fmt.Sprintf("%s of %s", req.TokenInfo().UserID, req.Header().Get("X-Tenant"))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
		}),
	})
	res, err := mcpkittest.ServeTool(context.Background(), srv, "whoami", nil,
		mcpkittest.WithHeader(http.Header{"X-Tenant": {"acme"}}),
		mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"}))
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, err)
	// Output: ada of acme <nil>
}

// ExampleWithMeta gives a hand-built request the _meta a client would
// send, here a progress token.
func ExampleWithMeta() {
	req := mcpkittest.NewRequest(nil, nil, mcpkittest.WithMeta(mcp.Meta{"progressToken": "p1"}))
	fmt.Println(req.Tool.Name, req.Meta()["progressToken"], req.Call.Params.GetProgressToken())
	// Output: test p1 p1
}

// ExampleForEachTransport shows a test that runs over in-memory, stateful
// and stateless HTTP, with a header and a bearer token on the HTTP
// transports. It needs a *testing.T, so it is compiled but not run here; the
// package's tests run the same code.
func ExampleForEachTransport() {
	newServer := func(t *testing.T) *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "example"}, nil)
		srv.Add(&mcpkit.Tool{
			Tool: mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
			Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				user := "anonymous" // in memory: no HTTP, so no token
				if info := req.TokenInfo(); info != nil {
					user = info.UserID
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: user}}}, nil
			}),
		})
		return srv
	}
	TestWhoAmI := func(t *testing.T) {
		opts := &mcpkittest.Options{
			Header: http.Header{"X-Tenant": {"acme"}},
			Tokens: map[string]*auth.TokenInfo{"tok": {UserID: "ada", Scopes: []string{"read"}}},
			Token:  "tok",
		}
		mcpkittest.ForEachTransport(t, newServer, func(t *testing.T, ts *mcpkittest.Server) {
			res, err := ts.CallTool(t.Context(), "whoami", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(res.Content[0].(*mcp.TextContent).Text) // "ada" over HTTP
		}, opts)
	}
	_ = TestWhoAmI
}
