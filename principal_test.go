package mcpkit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// tokenKey is what Principal returns for the bearer token tok.
func tokenKey(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return "tok:" + hex.EncodeToString(sum[:])[:32]
}

func TestPrincipal(t *testing.T) {
	tests := []struct {
		name string
		opts []mcpkittest.RequestOption
		want string
	}{
		{"nothing", nil, ""},
		{"verified user", []mcpkittest.RequestOption{mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"})}, "sub:ada"},
		{"user wins over header", []mcpkittest.RequestOption{
			mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"}),
			mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer secret"}}),
		}, "sub:ada"},
		{"token without user", []mcpkittest.RequestOption{
			mcpkittest.WithTokenInfo(&auth.TokenInfo{Scopes: []string{"read"}}),
			mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer secret"}}),
		}, tokenKey("secret")},
		{"bearer header", []mcpkittest.RequestOption{mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer secret"}})}, tokenKey("secret")},
		{"scheme in any case", []mcpkittest.RequestOption{mcpkittest.WithHeader(http.Header{"Authorization": {"bEaReR  secret "}})}, tokenKey("secret")},
		{"basic auth", []mcpkittest.RequestOption{mcpkittest.WithHeader(http.Header{"Authorization": {"Basic YWRhOnB3"}})}, ""},
		{"empty bearer", []mcpkittest.RequestOption{mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer"}})}, ""},
		{"three fields", []mcpkittest.RequestOption{mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer a b"}})}, ""},
		{"other headers", []mcpkittest.RequestOption{mcpkittest.WithHeader(http.Header{"X-User": {"ada"}})}, ""},
		{"session id is not identity", []mcpkittest.RequestOption{mcpkittest.WithHeader(http.Header{"Mcp-Session-Id": {"s1"}})}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mcpkit.Principal(mcpkittest.NewRequest(nil, nil, tt.opts...)); got != tt.want {
				t.Errorf("Principal = %q, want %q", got, tt.want)
			}
		})
	}
	if got := mcpkit.Principal(&mcpkit.Request{Tool: &mcpkit.Tool{}}); got != "" {
		t.Errorf("a request without a call: Principal = %q", got)
	}

	// VerifiedPrincipal is Principal without what the caller chooses:
	// the verified user or nothing.
	for _, tt := range tests {
		want := tt.want
		if !strings.HasPrefix(want, "sub:") {
			want = ""
		}
		if got := mcpkit.VerifiedPrincipal(mcpkittest.NewRequest(nil, nil, tt.opts...)); got != want {
			t.Errorf("%s: VerifiedPrincipal = %q, want %q", tt.name, got, want)
		}
	}
	if got := mcpkit.VerifiedPrincipal(&mcpkit.Request{Tool: &mcpkit.Tool{}}); got != "" {
		t.Errorf("a request without a call: VerifiedPrincipal = %q", got)
	}
	if got := mcpkit.Principal(mcpkittest.NewRequest(nil, nil, mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer secret"}}))); strings.Contains(got, "secret") {
		t.Errorf("Principal %q holds the token", got)
	}
}

// whoami returns a server with a tool that answers with its caller's
// principal.
func whoami(t *testing.T) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "whoami"}, nil)
	if err := srv.Add(tool("whoami", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult("principal=" + mcpkit.Principal(req)), nil
	})); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestPrincipalEndToEnd calls through real SDK clients on every transport
// of the harness: with a token the SDK's auth.RequireBearerToken verified,
// with a bearer token nobody verified, and with neither.
func TestPrincipalEndToEnd(t *testing.T) {
	tests := []struct {
		name string
		opts *mcpkittest.Options
		want map[string]string // by transport
	}{
		{"verified", &mcpkittest.Options{
			Tokens: map[string]*auth.TokenInfo{"tok-ada": {UserID: "ada"}},
			Token:  "tok-ada",
		}, map[string]string{"inmemory": "", "stateful": "sub:ada", "stateless": "sub:ada"}},
		{"verified without user id", &mcpkittest.Options{
			Tokens: map[string]*auth.TokenInfo{"tok-svc": {Scopes: []string{"read"}}},
			Token:  "tok-svc",
		}, map[string]string{"inmemory": "", "stateful": tokenKey("tok-svc"), "stateless": tokenKey("tok-svc")}},
		{"unverified header", &mcpkittest.Options{
			Header: http.Header{"Authorization": {"Bearer tok-bob"}},
		}, map[string]string{"inmemory": "", "stateful": tokenKey("tok-bob"), "stateless": tokenKey("tok-bob")}},
		{"anonymous", nil, map[string]string{"inmemory": "", "stateful": "", "stateless": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcpkittest.ForEachTransport(t, whoami, func(t *testing.T, ts *mcpkittest.Server) {
				transport := t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]
				for range 2 { // the same on every call, whatever the session
					res, err := ts.CallTool(t.Context(), "whoami", nil)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := onlyText(res), "principal="+tt.want[transport]; got != want {
						t.Errorf("got %q, want %q", got, want)
					}
				}
			}, tt.opts)
		})
	}
}

func ExamplePrincipal() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "whoami"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%q", mcpkit.Principal(req))}}}, nil
		}),
	})
	// A verified token's user, then a bearer token (as a digest), then no
	// one (stdio, in-memory, unauthenticated HTTP).
	for _, opts := range [][]mcpkittest.RequestOption{
		{mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"})},
		{mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer s3cr3t"}})},
		nil,
	} {
		res, _ := mcpkittest.ServeTool(context.Background(), srv, "whoami", nil, opts...)
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// "sub:ada"
	// "tok:4e738ca5563c06cfd0018299933d58db"
	// ""
}

func ExampleVerifiedPrincipal() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "whoami"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%q %q", mcpkit.VerifiedPrincipal(req), mcpkit.Principal(req))}}}, nil
		}),
	})
	// A verified token's user is both principals; a bearer token that no
	// verifier checked separates its holder's records (Principal) but
	// earns no budget of its own (VerifiedPrincipal); no token is "".
	for _, opts := range [][]mcpkittest.RequestOption{
		{mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"})},
		{mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer s3cr3t"}})},
		nil,
	} {
		res, _ := mcpkittest.ServeTool(context.Background(), srv, "whoami", nil, opts...)
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// "sub:ada" "sub:ada"
	// "" "tok:4e738ca5563c06cfd0018299933d58db"
	// "" ""
}
