package middleware_test

// Who a decision is about: the tool a call reaches, whichever route it came
// in by, and a caller that the caller cannot choose. Every test here goes
// through real SDK clients over streamable HTTP.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/transform"
)

// bearer returns harness options whose client sends tok as a bearer token
// that no verifier checks.
func bearer(tok string) *mcpkittest.Options {
	return &mcpkittest.Options{Header: http.Header{"Authorization": {"Bearer " + tok}}}
}

// verified returns harness options whose client sends a token that the
// server verifies as user's.
func verified(user string) *mcpkittest.Options {
	return &mcpkittest.Options{Tokens: map[string]*auth.TokenInfo{"tok-" + user: {UserID: user}}, Token: "tok-" + user}
}

// callMeta calls name with args and _meta on ts, failing t on a protocol
// error.
func callMeta(t *testing.T, ts *mcpkittest.Server, name string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestRateLimitUnverifiedTokens sends eight calls, each with a new random
// bearer token that no verifier checks, against a fleet-wide limit of one
// call: a token the caller makes up buys no budget, so only the first
// passes.
func TestRateLimitUnverifiedTokens(t *testing.T) {
	bucket := middleware.NewTokenBucket(rate.Every(time.Hour), 1, nil)
	srv := newServer(t, []mcpkit.Middleware{middleware.RateLimit(bucket, nil)}, newTool("t", ok))
	for i := range 8 {
		ts := mcpkittest.NewStatelessServer(t, srv, bearer(rand.Text()))
		res := callMeta(t, ts, "t", nil, nil)
		if i == 0 {
			if res.IsError {
				t.Fatalf("the first call: %+v", res)
			}
			continue
		}
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.HasPrefix(onlyText(res), `tool "t" is rate limited`) {
			t.Errorf("call %d, with a token of its own: %q (class %q); want it rate limited", i+1, onlyText(res), mcpkit.ErrorClassOf(res))
		}
	}
}

// tenantServer returns a server with a read-only tool, "accounts", behind
// mw, that answers with the tenant of the X-Tenant header of the call and
// counts its runs.
func tenantServer(t *testing.T, runs *atomic.Int32, mw ...mcpkit.Middleware) *mcpkit.Server {
	accounts := withHandler(annotated("accounts", readOnly), func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult(fmt.Sprintf("tenant=%s run %d", req.Header().Get("X-Tenant"), runs.Add(1))), nil
	})
	return newServer(t, mw, accounts)
}

// TestCacheResultsAnonymousCallers has two anonymous clients of tenants
// acme and globex call one cached tool with the same arguments: neither is
// answered the other's result, and nothing anonymous is kept. A Key that
// tells them apart caches again; so does a bearer token, unverified or
// not, which is a secret its holder keeps.
func TestCacheResultsAnonymousCallers(t *testing.T) {
	type step struct {
		client string
		want   string // the answer, with " hit" for a cache hit
	}
	tenant := func(req *mcpkit.Request) string { return req.Header().Get("X-Tenant") }
	tests := []struct {
		name    string
		opts    *middleware.CacheOptions
		clients map[string]*mcpkittest.Options
		steps   []step
	}{
		{"anonymous", nil, map[string]*mcpkittest.Options{
			"A": {Header: http.Header{"X-Tenant": {"acme"}}},
			"B": {Header: http.Header{"X-Tenant": {"globex"}}},
		}, []step{
			{"A", "tenant=acme run 1"},
			{"B", "tenant=globex run 2"},
			{"A", "tenant=acme run 3"},
		}},
		{"anonymous, with a Key", &middleware.CacheOptions{Key: tenant}, map[string]*mcpkittest.Options{
			"A": {Header: http.Header{"X-Tenant": {"acme"}}},
			"B": {Header: http.Header{"X-Tenant": {"globex"}}},
		}, []step{
			{"A", "tenant=acme run 1"},
			{"B", "tenant=globex run 2"},
			{"A", "tenant=acme run 1 hit"},
			{"B", "tenant=globex run 2 hit"},
		}},
		{"unverified tokens", nil, map[string]*mcpkittest.Options{
			"A": {Header: http.Header{"X-Tenant": {"acme"}, "Authorization": {"Bearer tok-a"}}},
			"B": {Header: http.Header{"X-Tenant": {"globex"}, "Authorization": {"Bearer tok-b"}}},
		}, []step{
			{"A", "tenant=acme run 1"},
			{"B", "tenant=globex run 2"},
			{"A", "tenant=acme run 1 hit"},
			{"B", "tenant=globex run 2 hit"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int32
			srv := tenantServer(t, &runs, middleware.CacheResults(middleware.NewMemoryCache(1<<20), tt.opts))
			clients := map[string]*mcpkittest.Server{}
			for name, opts := range tt.clients {
				clients[name] = mcpkittest.NewStatelessServer(t, srv, opts)
			}
			for i, s := range tt.steps {
				res := callMeta(t, clients[s.client], "accounts", map[string]any{"q": "balance"}, nil)
				got := onlyText(res)
				if res.Meta[middleware.MetaKeyCache] == "hit" {
					got += " hit"
				}
				if got != s.want {
					t.Errorf("step %d, client %s: %q, want %q", i, s.client, got, s.want)
				}
			}
		})
	}
}

// TestIdempotentAnonymousCallers has two anonymous clients send the same
// idempotency key: a key from an anonymous caller is refused, so the
// second never learns what the first did, and neither runs the tool. Calls
// without a key run as usual. Bearer tokens, verified or not, separate
// their holders' keys.
func TestIdempotentAnonymousCallers(t *testing.T) {
	var runs atomic.Int32
	pay := newTool("pay", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult(fmt.Sprintf("paid %s for %s (run %d)", req.Arguments, req.Header().Get("X-Tenant"), runs.Add(1))), nil
	})
	srv := newServer(t, []mcpkit.Middleware{middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil)}, pay)
	key := mcp.Meta{middleware.MetaKeyIdempotencyKey: "order-1"}
	args := map[string]any{"amount": 10}

	t.Run("anonymous", func(t *testing.T) {
		runs.Store(0)
		a := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Header: http.Header{"X-Tenant": {"acme"}}})
		b := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Header: http.Header{"X-Tenant": {"globex"}}})
		want := `tool "pay": an idempotency key needs an authenticated caller (a bearer token): anonymous callers cannot be told apart`
		for _, c := range []struct {
			name string
			ts   *mcpkittest.Server
		}{{"A", a}, {"B", b}, {"A again", a}} {
			res := callMeta(t, c.ts, "pay", args, key)
			if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Fatal || onlyText(res) != want {
				t.Errorf("%s, with a key: %q (class %q); want %q, fatal", c.name, onlyText(res), mcpkit.ErrorClassOf(res), want)
			}
		}
		if n := runs.Load(); n != 0 {
			t.Errorf("the tool ran %d times for anonymous calls with a key, want 0", n)
		}
		if res := callMeta(t, b, "pay", args, nil); res.IsError || runs.Load() != 1 {
			t.Errorf("B without a key: %q; want it to run", onlyText(res))
		}
	})
	t.Run("tokens", func(t *testing.T) {
		runs.Store(0)
		a := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Header: http.Header{"X-Tenant": {"acme"}, "Authorization": {"Bearer tok-a"}}})
		b := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Header: http.Header{"X-Tenant": {"globex"}, "Authorization": {"Bearer tok-b"}}})
		for i, c := range []struct {
			ts   *mcpkittest.Server
			want string
		}{
			{a, `paid {"amount":10} for acme (run 1)`},
			{b, `paid {"amount":10} for globex (run 2)`},
			{a, `paid {"amount":10} for acme (run 1) replayed`},
			{b, `paid {"amount":10} for globex (run 2) replayed`},
		} {
			res := callMeta(t, c.ts, "pay", args, key)
			got := onlyText(res)
			if res.Meta[middleware.MetaKeyIdempotent] == "replayed" {
				got += " replayed"
			}
			if got != c.want {
				t.Errorf("call %d: %q, want %q", i, got, c.want)
			}
		}
	})
}

// routes returns a server with mw around one tool, "search", reached by
// three routes: its own name; "find", a deprecated alias (transform.Alias)
// that calls its argument "text"; and "lookup", a derived tool
// (transform.Tool) that calls it "query". Each route takes its argument
// under its own name; h sees it as "q".
func routes(t *testing.T, mw []mcpkit.Middleware, h mcpkit.HandlerFunc) *mcpkit.Server {
	t.Helper()
	search := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "search", Annotations: readOnly, InputSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"q": {Type: "string"}},
		}},
		Handler: h,
	}
	find, err := transform.Alias(search, "find", &transform.AliasOptions{Arguments: map[string]string{"q": "text"}})
	if err != nil {
		t.Fatal(err)
	}
	lookup, err := transform.Tool(search, transform.Spec{Name: "lookup", Arguments: map[string]transform.Arg{"q": {Name: "query"}}})
	if err != nil {
		t.Fatal(err)
	}
	return newServer(t, mw, search, find, lookup)
}

// routeArgs are the arguments of a call with q on each route of routes.
func routeArgs(route, q string) map[string]any {
	switch route {
	case "find":
		return map[string]any{"text": q}
	case "lookup":
		return map[string]any{"query": q}
	}
	return map[string]any{"q": q}
}

// TestLimitsFollowTheTool checks that every limit keyed on a tool keys on
// its identity: a call by a deprecated alias or a derived tool counts
// against the budget, pool and circuit of the tool it reaches.
func TestLimitsFollowTheTool(t *testing.T) {
	t.Run("RateLimit", func(t *testing.T) {
		bucket := middleware.NewTokenBucket(rate.Every(time.Hour), 1, nil)
		ts := mcpkittest.NewStatelessServer(t, routes(t, []mcpkit.Middleware{middleware.RateLimit(bucket, nil)}, ok), verified("ada"))
		if res := callMeta(t, ts, "search", routeArgs("search", "go"), nil); res.IsError {
			t.Fatalf("the first call: %q", onlyText(res))
		}
		for _, route := range []string{"find", "lookup"} {
			res := callMeta(t, ts, route, routeArgs(route, "go"), nil)
			if want := fmt.Sprintf("tool %q is rate limited", route); !res.IsError || !strings.HasPrefix(onlyText(res), want) {
				t.Errorf("%s, after the budget went to search: %q; want %q...", route, onlyText(res), want)
			}
		}
	})

	t.Run("Bulkhead", func(t *testing.T) {
		started, release := make(chan struct{}, 1), make(chan struct{})
		h := func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			if strings.Contains(string(req.Arguments), "slow") {
				started <- struct{}{}
				<-release
			}
			return textResult("ok"), nil
		}
		ts := mcpkittest.NewStatelessServer(t, routes(t, []mcpkit.Middleware{middleware.Bulkhead(map[string]int{"search": 1}, nil)}, h), nil)
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, err := ts.CallTool(context.Background(), "search", routeArgs("search", "slow"))
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		<-started // search's one slot is taken
		for _, route := range []string{"find", "lookup"} {
			res := callMeta(t, ts, route, routeArgs(route, "fast"), nil)
			if want := fmt.Sprintf("tool %q is busy", route); !res.IsError || !strings.HasPrefix(onlyText(res), want) {
				t.Errorf("%s, while search's pool is full: %q; want %q...", route, onlyText(res), want)
			}
		}
		close(release)
		if res := <-done; res == nil || res.IsError {
			t.Errorf("the slow call: %+v", res)
		}
	})

	t.Run("CircuitBreaker", func(t *testing.T) {
		fail := func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, errors.New("db: connection refused")
		}
		breaker := middleware.CircuitBreaker(&middleware.CircuitBreakerOptions{Window: 2, MinCalls: 2, Cooldown: time.Hour})
		ts := mcpkittest.NewStatelessServer(t, routes(t, []mcpkit.Middleware{breaker}, fail), nil)
		for _, route := range []string{"search", "find"} {
			if res := callMeta(t, ts, route, routeArgs(route, "go"), nil); !strings.Contains(onlyText(res), "connection refused") {
				t.Fatalf("%s: %q; want the tool's failure", route, onlyText(res))
			}
		}
		for _, route := range []string{"lookup", "search", "find"} {
			res := callMeta(t, ts, route, routeArgs(route, "go"), nil)
			if want := fmt.Sprintf("tool %q is unavailable after repeated failures", route); !strings.HasPrefix(onlyText(res), want) {
				t.Errorf("%s, after two failures by two routes: %q; want %q...", route, onlyText(res), want)
			}
		}
	})
}

// sameArguments returns three routes to one tool, "search", served by h,
// by which the arguments {"q":"de"} mean three different calls: search
// itself, a search for "de"; "find", a deprecated alias
// (transform.Alias) that takes search's "lang" as "q" (and its "q" as
// "text"), a search in German; and "search_en", a derived tool
// (transform.Tool) that fills a hidden "lang" with "en".
func sameArguments(t *testing.T, h mcpkit.HandlerFunc) []*mcpkit.Tool {
	t.Helper()
	search := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "search", Annotations: readOnly, InputSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"q": {Type: "string"}, "lang": {Type: "string"}},
		}},
		Handler: h,
	}
	find, err := transform.Alias(search, "find", &transform.AliasOptions{Arguments: map[string]string{"lang": "q", "q": "text"}})
	if err != nil {
		t.Fatal(err)
	}
	english, err := transform.Tool(search, transform.Spec{Name: "search_en", Arguments: map[string]transform.Arg{"lang": {Hide: true, Value: "en"}}})
	if err != nil {
		t.Fatal(err)
	}
	return []*mcpkit.Tool{search, find, english}
}

// TestIdempotentFollowsTheTool sends one idempotency key, with the same
// arguments, by three routes to one tool: it is one key, so the first call
// runs, a call by another route (whose arguments mean another call) is
// refused as another call, neither replayed nor run, and a retry by the
// first route is replayed.
func TestIdempotentFollowsTheTool(t *testing.T) {
	var runs atomic.Int32
	h := func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult(fmt.Sprintf("found %s (run %d)", req.Arguments, runs.Add(1))), nil
	}
	srv := newServer(t, []mcpkit.Middleware{middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil)}, sameArguments(t, h)...)
	ts := mcpkittest.NewStatelessServer(t, srv, verified("ada"))
	key := mcp.Meta{middleware.MetaKeyIdempotencyKey: "k1"}
	args := map[string]any{"q": "de"}
	if res := callMeta(t, ts, "search", args, key); onlyText(res) != `found {"q":"de"} (run 1)` {
		t.Fatalf("the first call: %q", onlyText(res))
	}
	for _, route := range []string{"find", "search_en"} {
		res := callMeta(t, ts, route, args, key)
		want := fmt.Sprintf("tool %q: this idempotency key was used for a call with other arguments", route)
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Fatal || !strings.HasPrefix(onlyText(res), want) {
			t.Errorf("%s, the key again: %q (class %q); want %q..., fatal", route, onlyText(res), mcpkit.ErrorClassOf(res), want)
		}
	}
	if res := callMeta(t, ts, "search", args, key); res.Meta[middleware.MetaKeyIdempotent] != "replayed" || onlyText(res) != `found {"q":"de"} (run 1)` {
		t.Errorf("search, the key again: %q, _meta %v; want the first result replayed", onlyText(res), res.Meta)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
}

// TestCacheResultsKeepsRoutesApart calls one cached tool with the same
// arguments by three routes, where they mean three calls: no route is
// answered another's result, and each hits its own entry.
func TestCacheResultsKeepsRoutesApart(t *testing.T) {
	var runs atomic.Int32
	h := func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult(fmt.Sprintf("%s (run %d)", req.Arguments, runs.Add(1))), nil
	}
	srv := newServer(t, []mcpkit.Middleware{middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil)}, sameArguments(t, h)...)
	ts := mcpkittest.NewStatelessServer(t, srv, verified("ada"))
	args := map[string]any{"q": "de"}
	for i, c := range []struct{ route, want string }{
		{"search", `{"q":"de"} (run 1)`},
		{"find", `{"lang":"de"} (run 2)`},
		{"search_en", `{"q":"de","lang":"en"} (run 3)`},
		{"search", `{"q":"de"} (run 1) hit`},
		{"find", `{"lang":"de"} (run 2) hit`},
		{"search_en", `{"q":"de","lang":"en"} (run 3) hit`},
	} {
		res := callMeta(t, ts, c.route, args, nil)
		got := onlyText(res)
		if res.Meta[middleware.MetaKeyCache] == "hit" {
			got += " hit"
		}
		if got != c.want {
			t.Errorf("call %d, %s: %q, want %q", i, c.route, got, c.want)
		}
	}
}
