package redisstore_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// BenchmarkStoreOverhead measures what each store adds to one call through
// its middleware, side by side in one run: for each case, "bare" is the
// tool's chain without the middleware (the baseline), "memory" the
// middleware on the in-memory store, "redis" on a redis-server on
// loopback. Calls go straight to the chain (Server.Handler): no transport,
// so that only the store's cost shows over bare.
//
//   - RateLimit: an allowed call (a budget that never runs out: 1e9 calls
//     a second in memory, which runs a million a second; 1e6 on Redis).
//   - CacheResults/hit: a call answered from the cache.
//   - CacheResults/miss+set: a call with new arguments: a Get that misses,
//     the tool runs, its result is encoded and Set.
//   - Idempotent/first: a call with a new idempotency key: Claim, the tool
//     runs, Complete.
//   - Idempotent/replay: a repeat of a completed call: Claim finds the
//     record and the result is decoded.
//   - Publish: one ShareChanges event published on the bus, the replica's
//     own ShareChanges subscribed to it; bare only encodes the event.
//
// The cases with new arguments or keys build a request per call, bare
// included, so that the difference is the store's.
func BenchmarkStoreOverhead(b *testing.B) {
	rs := redistest.Shared(b)
	ctx := context.Background()
	prefix := func(b *testing.B) string { return rs.Prefix(b) }

	type impl struct {
		name string
		mw   func(b *testing.B) mcpkit.Middleware // nil: bare
	}
	limiters := []impl{
		{"bare", nil},
		{"memory", func(*testing.B) mcpkit.Middleware {
			return middleware.RateLimit(middleware.NewTokenBucket(rate.Limit(1e9), 1e9, nil), nil)
		}},
		{"redis", func(b *testing.B) mcpkit.Middleware {
			return middleware.RateLimit(redisstore.NewLimiter(rs.Client(b), 1e6, 1e6, &redisstore.LimiterOptions{Prefix: prefix(b)}), nil)
		}},
	}
	caches := []impl{
		{"bare", nil},
		{"memory", func(*testing.B) mcpkit.Middleware {
			return middleware.CacheResults(middleware.NewMemoryCache(64<<20), nil)
		}},
		{"redis", func(b *testing.B) mcpkit.Middleware {
			return middleware.CacheResults(redisstore.NewCache(rs.Client(b), &redisstore.CacheOptions{Prefix: prefix(b)}), nil)
		}},
	}
	idempotency := []impl{
		{"bare", nil},
		{"memory", func(*testing.B) mcpkit.Middleware {
			return middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil)
		}},
		{"redis", func(b *testing.B) mcpkit.Middleware {
			return middleware.Idempotent(redisstore.NewIdempotencyStore(rs.Client(b), &redisstore.IdempotencyOptions{Prefix: prefix(b)}), nil)
		}},
	}

	// Calls by a verified user: the cache and idempotency keep no records
	// for anonymous callers.
	ada := mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"})
	same := mcpkittest.NewRequest(benchTool, json.RawMessage(`{"query":"golang middleware","limit":10}`), ada)
	keyed := mcpkittest.NewRequest(benchTool, same.Arguments, mcpkittest.WithMeta(mcp.Meta{middleware.MetaKeyIdempotencyKey: "order-1234"}), ada)
	// newArgs returns a request whose arguments no earlier call had.
	var buf []byte
	newArgs := func(i int) *mcpkit.Request {
		buf = strconv.AppendInt(append(buf[:0], `{"query":"golang middleware","limit":`...), int64(i), 10)
		return mcpkittest.NewRequest(benchTool, json.RawMessage(append(buf, '}')), ada)
	}
	// newKey returns a request with an idempotency key no earlier call had.
	newKey := func(i int) *mcpkit.Request {
		return mcpkittest.NewRequest(benchTool, same.Arguments,
			mcpkittest.WithMeta(mcp.Meta{middleware.MetaKeyIdempotencyKey: "order-" + strconv.Itoa(i)}), ada)
	}

	// serve calls h with req(i) in a loop, after one warm-up call (which
	// fills the cache or the record a hit or a replay needs).
	serve := func(b *testing.B, h mcpkit.Handler, req func(i int) *mcpkit.Request) {
		if _, err := h.ServeTool(ctx, req(-1)); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			res, err := h.ServeTool(ctx, req(i))
			if err != nil || res.IsError {
				b.Fatal(res, err)
			}
			i++
		}
	}
	fixed := func(r *mcpkit.Request) func(int) *mcpkit.Request { return func(int) *mcpkit.Request { return r } }
	for _, c := range []struct {
		name  string
		impls []impl
		req   func(int) *mcpkit.Request
	}{
		{"RateLimit", limiters, fixed(same)},
		{"CacheResults/hit", caches, fixed(same)},
		{"CacheResults/miss+set", caches, newArgs},
		{"Idempotent/first", idempotency, newKey},
		{"Idempotent/replay", idempotency, fixed(keyed)},
	} {
		for _, im := range c.impls {
			b.Run(c.name+"/"+im.name, func(b *testing.B) {
				var mw []mcpkit.Middleware
				if im.mw != nil {
					mw = append(mw, im.mw(b))
				}
				serve(b, benchChain(b, mw...), c.req)
			})
		}
	}

	type changeEvent struct { // as ShareChanges encodes it
		Origin string `json:"origin"`
		Seq    uint64 `json:"seq"`
	}
	for _, bus := range []struct {
		name string
		new  func(b *testing.B) mcpkit.EventBus // nil: bare
	}{
		{"bare", nil},
		{"memory", func(*testing.B) mcpkit.EventBus { return mcpkit.NewMemoryBus() }},
		{"redis", func(b *testing.B) mcpkit.EventBus {
			bus := redisstore.NewEventBus(rs.Client(b), &redisstore.EventBusOptions{Prefix: prefix(b)})
			b.Cleanup(func() { bus.Close() })
			return bus
		}},
	} {
		b.Run("Publish/"+bus.name, func(b *testing.B) {
			var eb mcpkit.EventBus
			if bus.new != nil {
				eb = bus.new(b)
				stop, err := benchChainServer(b).ShareChanges(eb, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(stop)
			}
			ev := changeEvent{Origin: "other-replica"}
			b.ReportAllocs()
			for b.Loop() {
				ev.Seq++
				payload, err := json.Marshal(ev)
				if err != nil {
					b.Fatal(err)
				}
				if eb == nil {
					continue
				}
				if err := eb.Publish(ctx, mcpkit.DefaultShareTopic, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var benchTool = &mcpkit.Tool{
	Tool: mcp.Tool{
		Name:        "search",
		InputSchema: &jsonschema.Schema{Type: "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	},
	Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 results"}}}, nil
	}),
}

// benchChainServer returns a Server serving benchTool behind mw.
func benchChainServer(b *testing.B, mw ...mcpkit.Middleware) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench"}, nil)
	srv.Use(mw...)
	if err := srv.Add(benchTool); err != nil {
		b.Fatal(err)
	}
	return srv
}

// benchChain returns the chain that serves benchTool behind mw.
func benchChain(b *testing.B, mw ...mcpkit.Middleware) mcpkit.Handler {
	h, ok := benchChainServer(b, mw...).Handler(benchTool.Name)
	if !ok {
		b.Fatal("no chain")
	}
	return h
}
