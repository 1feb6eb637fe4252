package middleware_test

// What a decision is about: the tool a call reaches, whichever route it
// came in by. Every test here goes through real SDK clients over
// streamable HTTP.

import (
	"context"
	"errors"
	"fmt"
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
