package redisstore_test

// End-to-end tests of each store through its middleware (the EventBus
// through ShareChanges): two mcpkit
// Servers, as two replicas behind a load balancer, each with an SDK client
// over streamable HTTP, share one store, the in-memory one (one instance
// shared by the two Servers in this process) or the Redis one (a client
// each, as two processes would have).

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// replica returns a stateless server with one read-only tool, "t", behind
// MaskErrors and mw, connected to an SDK client. The tool counts its runs
// in runs, when not nil, and answers "run N". The clients of every replica
// send one bearer token, as one client retrying on another replica would:
// the cache and idempotency keep records for callers they can tell apart,
// never for anonymous ones.
func replica(t *testing.T, runs *atomic.Int64, mw ...mcpkit.Middleware) *mcpkittest.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "replica"}, nil)
	srv.Use(append([]mcpkit.Middleware{middleware.MaskErrors(nil)}, mw...)...)
	err := srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{
			Name:        "t",
			InputSchema: &jsonschema.Schema{Type: "object"},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			n := int64(1)
			if runs != nil {
				n = runs.Add(1)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("run ", n)}}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Token: "client-token"})
}

// callTool calls "t" on ts with args and _meta, failing t on a protocol
// error.
func callTool(t *testing.T, ts *mcpkittest.Server, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "t", Arguments: args, Meta: meta})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	if len(res.Content) != 1 {
		return fmt.Sprintf("%d contents", len(res.Content))
	}
	if c, ok := res.Content[0].(*mcp.TextContent); ok {
		return c.Text
	}
	return fmt.Sprintf("%T", res.Content[0])
}

// testRateLimitReplicas checks that two replicas behind RateLimit on
// limiters a and b, allowing a burst of 3, share one budget.
func testRateLimitReplicas(t *testing.T, a, b middleware.Limiter) {
	ra, rb := replica(t, nil, middleware.RateLimit(a, nil)), replica(t, nil, middleware.RateLimit(b, nil))
	for i, ts := range []*mcpkittest.Server{ra, rb, ra} {
		if res := callTool(t, ts, nil, nil); res.IsError {
			t.Fatalf("call %d of the burst of 3: %+v", i+1, res)
		}
	}
	for _, ts := range []*mcpkittest.Server{rb, ra} {
		res := callTool(t, ts, nil, nil)
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || res.Meta[middleware.MetaKeyRetryAfter] == nil {
			t.Fatalf("call over the shared burst: %+v (class %q); want a retryable error with a retry delay", res, mcpkit.ErrorClassOf(res))
		}
	}
}

func TestRateLimitReplicasShareBudget(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		l := middleware.NewTokenBucket(rate.Limit(1.0/3600), 3, nil)
		testRateLimitReplicas(t, l, l)
	})
	t.Run("Redis", func(t *testing.T) {
		s := redistest.Shared(t)
		prefix := s.Prefix(t)
		newLimiter := func() middleware.Limiter {
			return redisstore.NewLimiter(s.Client(t), 1.0/3600, 3, &redisstore.LimiterOptions{Prefix: prefix})
		}
		testRateLimitReplicas(t, newLimiter(), newLimiter())
	})
}

// testCacheReplicas checks that a result cached through replica a answers
// the same call on replica b, and only that call.
func testCacheReplicas(t *testing.T, a, b middleware.Cache) {
	var runs atomic.Int64
	ra, rb := replica(t, &runs, middleware.CacheResults(a, nil)), replica(t, &runs, middleware.CacheResults(b, nil))
	args := map[string]any{"q": "x", "n": 1}
	first := callTool(t, ra, args, nil)
	if first.IsError || text(first) != "run 1" || first.Meta[middleware.MetaKeyCache] != nil {
		t.Fatalf("first call: %+v; want run 1, not from the cache", first)
	}
	hit := callTool(t, rb, map[string]any{"n": 1, "q": "x"}, nil)
	if hit.IsError || text(hit) != "run 1" || hit.Meta[middleware.MetaKeyCache] != "hit" {
		t.Errorf("same call on the other replica: %q, _meta %v; want run 1 from the cache", text(hit), hit.Meta)
	}
	if miss := callTool(t, rb, map[string]any{"q": "y", "n": 1}, nil); text(miss) != "run 2" {
		t.Errorf("call with other arguments: %q; want run 2", text(miss))
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the tool ran %d times, want 2", n)
	}
}

func TestCacheResultsAcrossReplicas(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		c := middleware.NewMemoryCache(1 << 20)
		testCacheReplicas(t, c, c)
	})
	t.Run("Redis", func(t *testing.T) {
		s := redistest.Shared(t)
		prefix := s.Prefix(t)
		newCache := func() middleware.Cache {
			return redisstore.NewCache(s.Client(t), &redisstore.CacheOptions{Prefix: prefix})
		}
		testCacheReplicas(t, newCache(), newCache())
	})
}

// testIdempotentReplicas checks that a call made through replica a with an
// idempotency key is replayed, not run, when the client re-issues it on
// replica b, and that the key cannot be reused there for another call.
func testIdempotentReplicas(t *testing.T, a, b middleware.IdempotencyStore) {
	var runs atomic.Int64
	ra, rb := replica(t, &runs, middleware.Idempotent(a, nil)), replica(t, &runs, middleware.Idempotent(b, nil))
	key := mcp.Meta{middleware.MetaKeyIdempotencyKey: "3f1c2a9e-key"}
	args := map[string]any{"amount": 10}
	first := callTool(t, ra, args, key)
	if first.IsError || text(first) != "run 1" || first.Meta[middleware.MetaKeyIdempotent] != nil {
		t.Fatalf("first call: %+v; want run 1, not replayed", first)
	}
	again := callTool(t, rb, args, key)
	if again.IsError || text(again) != "run 1" || again.Meta[middleware.MetaKeyIdempotent] != "replayed" {
		t.Errorf("the call re-issued on the other replica: %q, _meta %v; want run 1, replayed", text(again), again.Meta)
	}
	other := callTool(t, rb, map[string]any{"amount": 20}, key)
	if !other.IsError || mcpkit.ErrorClassOf(other) != mcpkit.Fatal {
		t.Errorf("the key reused for other arguments on the other replica: %+v (class %q); want a fatal error", other, mcpkit.ErrorClassOf(other))
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
}

func TestIdempotentAcrossReplicas(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		s := middleware.NewMemoryIdempotencyStore(nil)
		testIdempotentReplicas(t, s, s)
	})
	t.Run("Redis", func(t *testing.T) {
		s := redistest.Shared(t)
		prefix := s.Prefix(t)
		newStore := func() middleware.IdempotencyStore {
			return redisstore.NewIdempotencyStore(s.Client(t), &redisstore.IdempotencyOptions{Prefix: prefix})
		}
		testIdempotentReplicas(t, newStore(), newStore())
	})
}

// TestRateLimitRedisDown runs two replicas on one Redis: they share the
// budget; with Redis down, the one that fails closed answers an error and
// the one that fails open serves.
func TestRateLimitRedisDown(t *testing.T) {
	s := redistest.Start(t)
	prefix := s.Prefix(t)
	closed := replica(t, nil, middleware.RateLimit(redisstore.NewLimiter(s.Client(t), 1.0/3600, 3, &redisstore.LimiterOptions{Prefix: prefix}), nil))
	open := replica(t, nil, middleware.RateLimit(redisstore.NewLimiter(s.Client(t), 1.0/3600, 3, &redisstore.LimiterOptions{
		Prefix:   prefix,
		FailOpen: middleware.NewTokenBucket(rate.Inf, 0, nil),
	}), nil))
	call := func(ts *mcpkittest.Server) *mcp.CallToolResult {
		t.Helper()
		res, err := ts.CallTool(t.Context(), "t", nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	for i, ts := range []*mcpkittest.Server{closed, open, closed} {
		if res := call(ts); res.IsError {
			t.Fatalf("call %d of the burst of 3: %+v", i+1, res)
		}
	}
	for _, ts := range []*mcpkittest.Server{open, closed} {
		res := call(ts)
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || res.Meta[middleware.MetaKeyRetryAfter] == nil {
			t.Fatalf("call over the shared burst: %+v (class %q); want a retryable error with a retry delay", res, mcpkit.ErrorClassOf(res))
		}
	}

	s.Stop(t)
	res := call(closed)
	// An internal error (masked: the client does not learn where Redis
	// is), retryable since Redis may be back, without a retry delay since
	// nobody knows when.
	if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || res.Meta[middleware.MetaKeyRetryAfter] != nil ||
		res.Content[0].(*mcp.TextContent).Text != `error calling tool "t"` {
		t.Errorf("fail-closed replica with Redis down: %+v (class %q); want a masked, retryable internal error", res, mcpkit.ErrorClassOf(res))
	}
	if res := call(open); res.IsError {
		t.Errorf("fail-open replica with Redis down: %+v; want served", res)
	}
}

// testShareChangesReplicas checks that a tool added on one of two replicas
// sharing their changes on buses a and b reaches the clients of the other:
// they get notifications/tools/list_changed, and list again.
func testShareChangesReplicas(t *testing.T, a, b mcpkit.EventBus) {
	newReplica := func(bus mcpkit.EventBus) (*mcpkit.Server, <-chan struct{}) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "replica"}, nil)
		stop, err := srv.ShareChanges(bus, &mcpkit.ShareOptions{Delay: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		changed := make(chan struct{}, 16)
		// Sessions and server-sent events, for the notification.
		ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		}})
		// Stop the session before the server's subscription ends.
		t.Cleanup(ts.Close)
		return srv, changed
	}
	srvA, _ := newReplica(a)
	_, changedB := newReplica(b)
	tool := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "added", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}),
	}
	if err := srvA.Add(tool); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changedB:
	case <-time.After(eventWait):
		t.Fatalf("no tools/list_changed on the other replica within %v", eventWait)
	}
}

func TestShareChangesAcrossReplicas(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		bus := mcpkit.NewMemoryBus()
		testShareChangesReplicas(t, bus, bus)
	})
	t.Run("Redis", func(t *testing.T) {
		s := redistest.Shared(t)
		prefix := s.Prefix(t)
		newBus := func() mcpkit.EventBus {
			bus := redisstore.NewEventBus(s.Client(t), &redisstore.EventBusOptions{Prefix: prefix})
			t.Cleanup(func() { bus.Close() })
			return bus
		}
		testShareChangesReplicas(t, newBus(), newBus())
	})
}
