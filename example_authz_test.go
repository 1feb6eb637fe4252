package mcpkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// RequireScopes leaves delete_repo listed for everyone, and challenges a
// caller whose token lacks repo:admin: over HTTP with a 403 and the
// WWW-Authenticate header a client steps up from.
func ExampleRequireScopes() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "repos", Version: "1"}, nil)
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "delete_repo", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}),
	})

	// A verifier that knows one token, granting repo:read only.
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != "read-only" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "ada", Scopes: []string{"repo:read"}, Expiration: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}, nil
	}
	const meta = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	h := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta})(
		srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: meta}))
	ts := httptest.NewServer(h)
	defer ts.Close()

	seen := &lastResponse{}
	raw := mcpkittest.RawClient{Endpoint: ts.URL, Token: "read-only", HTTPClient: &http.Client{Transport: seen}}
	_, err := raw.Call(context.Background(), "tools/call", map[string]any{"name": "delete_repo", "arguments": map[string]any{}})
	fmt.Println(err != nil, seen.status)
	fmt.Println(seen.header.Get("WWW-Authenticate"))
	// Output:
	// true 403
	// Bearer error="insufficient_scope", scope="repo:admin", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
}

// lastResponse keeps the status and headers of the last response.
type lastResponse struct {
	status int
	header http.Header
}

func (l *lastResponse) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		l.status, l.header = resp.StatusCode, resp.Header
	}
	return resp, err
}

// RequireToken decides on a claim of the token instead of a scope: here a
// department that the issuer writes into its tokens.
func ExampleRequireToken() {
	opsOnly := mcpkit.RequireToken(func(_ context.Context, info *auth.TokenInfo) bool {
		return info.Extra["department"] == "ops"
	})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "ops", Version: "1"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool:       mcp.Tool{Name: "restart", InputSchema: map[string]any{"type": "object"}},
		Middleware: []mcpkit.Middleware{opsOnly},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "restarted"}}}, nil
		}),
	})
	sales := &auth.TokenInfo{UserID: "bob", Extra: map[string]any{"department": "sales"}}
	_, err := mcpkittest.ServeTool(context.Background(), srv, "restart", nil, mcpkittest.WithTokenInfo(sales))
	fmt.Println(err)
	// Output:
	// insufficient scope: the token does not grant tool "restart"
}
