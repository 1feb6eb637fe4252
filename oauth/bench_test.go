package oauth

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// BenchmarkJWT measures, in one run, the verification of an RS256 access
// token of the OP with a warm key cache, first (the token not cached:
// its signature checked) and repeated (taken from the cache), and a
// tools/call over HTTP (a real SDK client, 2026-07-28, stateless)
// without authorization and with the JWTVerifier behind
// auth.RequireBearerToken: the cost of verifying against the cost of a
// call.
func BenchmarkJWT(b *testing.B) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(b, opClients(resource))
	token := o.token(b, "agent", "", "repo:read")
	start := time.Now() // within the token's nbf and exp
	v := newVerifier(b, o.URL, resource, &JWTOptions{Now: func() time.Time { return start }, AcceptPlainJWT: true})
	b.Run("verify-first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v.cache.removeIf(func(verified) bool { return true })
			if _, err := v.Verify(b.Context(), token, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verify-repeated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Verify(b.Context(), token, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	srv.Add(echoTool("read_repo"))
	call := func(b *testing.B, h http.Handler, header string) {
		ts := httptest.NewServer(h)
		defer ts.Close()
		hc := &http.Client{Transport: &bearer{token: header}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(b.Context(),
			&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: mcpkittest.StatelessVersion})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "read_repo"})
			if err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	}
	b.Run("tools-call", func(b *testing.B) { call(b, srv.HTTPHandler(nil), "") })
	b.Run("tools-call-jwt", func(b *testing.B) {
		call(b, auth.RequireBearerToken(v.Verify, nil)(srv.HTTPHandler(nil)), token)
	})
}

// BenchmarkIntrospection measures, in one run, the verification of an
// opaque token of the OP by an IntrospectionVerifier, first (the token not
// cached: the OP asked over loopback HTTP) and repeated (taken from the
// cache).
func BenchmarkIntrospection(b *testing.B) {
	const resource = "https://mcp.example.com/mcp"
	o := newTestOP(b, opClients(resource))
	token := o.token(b, "opaque-agent", "", "repo:read")
	start := time.Now() // within the token's nbf and exp
	v, err := NewIntrospectionVerifier(b.Context(), o.URL, resource, &IntrospectionOptions{
		ClientID: "mcp-server", ClientSecret: "rs-secret", Now: func() time.Time { return start },
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("verify-first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v.cache.removeIf(func(verdict) bool { return true })
			if _, err := v.Verify(b.Context(), token, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verify-repeated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Verify(b.Context(), token, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (t *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.token != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	return http.DefaultTransport.RoundTrip(req)
}
