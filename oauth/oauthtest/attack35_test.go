package oauthtest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/oauth"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

// TestAttack35IssuerBothEras follows docs/testing.md's development issuer
// as a new user would: the verifier with default options, discovering the
// keys, a real server behind auth.RequireBearerToken with nil options (so
// that a token without exp would be refused), and a client of each
// protocol era, stateless and with a session. Mint's tokens are accepted,
// its scopes reach RequireScopes, a short Lifetime expires the token, and
// a token of several audiences is accepted for the one it names.
func TestAttack35IssuerBothEras(t *testing.T) {
	iss := oauthtest.NewIssuer(nil)
	defer iss.Close()
	v, err := oauth.NewJWTVerifier(t.Context(), iss.URL, resource, nil)
	if err != nil {
		t.Fatal(err)
	}
	short := oauthtest.NewIssuer(&oauthtest.Options{Now: func() time.Time { return time.Now().Add(-2 * time.Hour) }})
	defer short.Close()
	for _, era := range []struct {
		version  string
		sessions bool
	}{{mcpkittest.StatelessVersion, false}, {mcpkittest.StatefulVersion, true}, {mcpkittest.StatefulVersion, false}} {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "orders"}, nil)
		srv.Use(mcpkit.ForTools(mcpkit.Named("deleteOrder"), mcpkit.RequireScopes("orders:admin")))
		srv.Add(
			&mcpkit.Tool{Tool: mcp.Tool{Name: "deleteOrder", InputSchema: map[string]any{"type": "object"}},
				Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.TokenInfo().UserID}}}, nil
				})})
		hs := httptest.NewServer(auth.RequireBearerToken(v.Verify, nil)(srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: era.sessions})))
		callAs := func(token string) (string, int, error) {
			b := &postStatus{token: token}
			client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: b}},
				&mcp.ClientSessionOptions{ProtocolVersion: era.version})
			if err != nil {
				return "", b.status, err
			}
			defer cs.Close()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "deleteOrder"})
			if err != nil {
				return "", b.status, err
			}
			if res.IsError {
				return "", b.status, errors.New(res.Content[0].(*mcp.TextContent).Text)
			}
			return res.Content[0].(*mcp.TextContent).Text, b.status, nil
		}
		name := era.version
		if era.sessions {
			name += " with sessions"
		}
		if got, _, err := callAs(iss.Mint("ada", resource, "orders:read", "orders:admin")); err != nil || got != "ada" {
			t.Errorf("%s: Mint with the scope: %q, %v", name, got, err)
		}
		if _, status, err := callAs(iss.Mint("ada", resource, "orders:read")); err == nil || status != http.StatusForbidden {
			t.Errorf("%s: Mint without the scope: %d, %v, want a 403", name, status, err)
		}
		if _, status, err := callAs(iss.Mint("ada", resource)); err == nil || status != http.StatusForbidden {
			t.Errorf("%s: Mint of no scope: %d, %v, want a 403", name, status, err)
		}
		if got, _, err := callAs(iss.MintClaims(map[string]any{"sub": "bob", "aud": []string{"https://other.example.com", resource}, "scope": "orders:admin"})); err != nil || got != "bob" {
			t.Errorf("%s: two audiences: %q, %v", name, got, err)
		}
		if _, status, err := callAs(short.Mint("ada", resource, "orders:admin")); err == nil || status != http.StatusUnauthorized {
			t.Errorf("%s: a token that expired an hour ago: %d, %v, want a 401", name, status, err)
		}
		hs.Close()
	}
}

// postStatus sends a bearer token with every request and keeps the status
// of the last POST (a session's DELETE or GET answers otherwise).
type postStatus struct {
	token  string
	status int
}

func (b *postStatus) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost {
		b.status = resp.StatusCode
	}
	return resp, err
}
