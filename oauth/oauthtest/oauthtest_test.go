package oauthtest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/oauth"
	"github.com/mcpkit/mcpkit/oauth/oauthtest"
)

const resource = "https://orders.example.com/mcp"

// bearer sends a bearer token with every request, and keeps the last
// status.
type bearer struct {
	token  string
	status int
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		b.status = resp.StatusCode
	}
	return resp, err
}

// serve starts an mcpkit server behind auth.RequireBearerToken with a
// verifier of iss's tokens, found by discovery, for resource: the tool
// whoami needs the scope orders:read and answers with the caller's
// subject and scopes.
func serve(t *testing.T, iss *oauthtest.Issuer) string {
	t.Helper()
	v, err := oauth.NewJWTVerifier(t.Context(), iss.URL, resource, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "orders"}, nil)
	srv.Use(mcpkit.ForTools(mcpkit.Named("whoami"), mcpkit.RequireScopes("orders:read")))
	err = srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			info := req.TokenInfo()
			text := info.UserID + " " + strings.Join(info.Scopes, " ") + " " + info.Extra["tenant"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(auth.RequireBearerToken(v.Verify, nil)(srv.HTTPHandler(nil)))
	t.Cleanup(ts.Close)
	return ts.URL
}

// call calls whoami at url with token, on a session of its own (the SDK
// client closes its session after a 401 or 403), and returns its text, or
// the HTTP status of the failure.
func call(ctx context.Context, url, token string) (string, int, error) {
	b := &bearer{token: token}
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: b}},
		&mcp.ClientSessionOptions{ProtocolVersion: mcpkittest.StatelessVersion})
	if err != nil {
		return "", b.status, err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		return "", b.status, err
	}
	if res.IsError {
		return "", b.status, errors.New(res.Content[0].(*mcp.TextContent).Text)
	}
	return res.Content[0].(*mcp.TextContent).Text, b.status, nil
}

// TestIssuerTokensVerified checks that oauth.NewJWTVerifier, discovering
// the issuer's keys from its metadata, accepts the tokens it mints, end
// to end through an mcpkit server over HTTP: the subject, scopes and
// claims reach the tool, a requirement of scopes holds, and a token for
// another audience, an expired one or one of another issuer is refused.
func TestIssuerTokensVerified(t *testing.T) {
	now := time.Now()
	iss := oauthtest.NewIssuer(&oauthtest.Options{Now: func() time.Time { return now }})
	defer iss.Close()
	url := serve(t, iss)
	ctx := t.Context()

	got, _, err := call(ctx, url, iss.MintClaims(map[string]any{"sub": "ada", "aud": resource, "scope": "orders:read orders:write", "tenant": "acme"}))
	if err != nil || got != "ada orders:read orders:write acme" {
		t.Errorf("a token with the scope: %q, %v", got, err)
	}
	if _, status, err := call(ctx, url, iss.MintClaims(map[string]any{"sub": "bob", "aud": resource, "tenant": "acme"})); err == nil || status != http.StatusForbidden {
		t.Errorf("a token without the scope: %d, %v, want a 403", status, err)
	}
	other := oauthtest.NewIssuer(nil)
	defer other.Close()
	for name, token := range map[string]string{
		"another audience": iss.Mint("ada", "https://elsewhere.example.com/mcp", "orders:read"),
		"expired":          iss.MintClaims(map[string]any{"sub": "ada", "aud": resource, "scope": "orders:read", "exp": now.Add(-time.Minute).Unix()}),
		"another issuer":   other.Mint("ada", resource, "orders:read"),
		"tampered":         tamper(iss.Mint("ada", resource, "orders:read")),
	} {
		if _, status, err := call(ctx, url, token); err == nil || status != http.StatusUnauthorized {
			t.Errorf("%s: %d, %v, want a 401", name, status, err)
		}
	}
}

// tamper changes the subject of token and keeps its signature.
func tamper(token string) string {
	parts := strings.Split(token, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	json.Unmarshal(payload, &claims)
	claims["sub"] = "mallory"
	payload, _ = json.Marshal(claims)
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

// TestMintShape checks what a minted token holds: the header RFC 9068
// asks for (typ at+jwt, the key's kid) and its claims.
func TestMintShape(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	iss := oauthtest.NewIssuer(&oauthtest.Options{Now: func() time.Time { return now }, Lifetime: 5 * time.Minute, ClientID: "agent"})
	defer iss.Close()
	parts := strings.Split(iss.Mint("ada", resource, "a", "b"), ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %d parts", len(parts))
	}
	var header, claims map[string]any
	for i, v := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}
	if header["typ"] != "at+jwt" || header["alg"] != "ES256" || header["kid"] == "" {
		t.Errorf("header %v, want typ at+jwt, alg ES256 and a kid", header)
	}
	for k, want := range map[string]any{
		"iss": iss.URL, "sub": "ada", "aud": resource, "scope": "a b", "client_id": "agent",
		"iat": float64(now.Unix()), "exp": float64(now.Add(5 * time.Minute).Unix()),
	} {
		if claims[k] != want {
			t.Errorf("claim %s = %v, want %v", k, claims[k], want)
		}
	}
	if claims["jti"] == "" || claims["jti"] == nil {
		t.Error("no jti")
	}
}
