package visibility_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/visibility"
)

type tenantCtxKey struct{}

// TestContextValue shows tools by a value that the embedding service's
// HTTP middleware puts in the request's context. On a stateless server
// every request brings its own; on a stateful one the SDK serves a
// session's requests in the context of the request that opened it, as the
// package documentation says.
func TestContextValue(t *testing.T) {
	internal := visibility.Predicate(func(ctx context.Context, _ mcpkit.Caller) bool {
		return ctx.Value(tenantCtxKey{}) == "internal"
	})
	for _, tt := range []struct {
		name      string
		stateless bool
		version   string
		want      string // what the client lists once its tenant is no longer internal
	}{
		{"stateless", true, "2026-07-28", "open"},
		{"stateful", false, "2025-11-25", "debug,open"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, nil, tool("debug"), tool("open"))
			visibility.New(visibility.Require(mcpkit.Named("debug"), internal)).Attach(srv)
			h := srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: !tt.stateless, SDK: &mcp.StreamableHTTPOptions{JSONResponse: tt.stateless}})
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx := context.WithValue(r.Context(), tenantCtxKey{}, r.Header.Get("X-Tenant"))
				h.ServeHTTP(w, r.WithContext(ctx))
			}))
			defer hs.Close()
			client := hs.Client()
			tenant := &tenantHeader{next: client.Transport}
			tenant.v.Store("internal")
			client.Transport = tenant
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: client, DisableStandaloneSSE: true, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := joined(names(t, cs)); got != "debug,open" {
				t.Errorf("tenant internal: lists %s, want debug,open", got)
			}
			tenant.v.Store("other")
			if got := joined(names(t, cs)); got != tt.want {
				t.Errorf("tenant other: lists %s, want %s", got, tt.want)
			}
		})
	}
}

// tenantHeader sends its tenant as X-Tenant.
type tenantHeader struct {
	v    atomic.Value
	next http.RoundTripper
}

func (t *tenantHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Tenant", t.v.Load().(string))
	return t.next.RoundTrip(req)
}
