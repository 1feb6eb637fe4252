package redisstore_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/tasks"
)

// These examples need a Redis server, so they are compiled but not run.

// Every replica of the server counts each user's calls against one budget
// of 10 calls a second, with bursts of 20. If Redis is down, calls fail
// (with an internal error) rather than run unlimited.
func ExampleNewLimiter() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "demo"}, nil)
	srv.Use(middleware.RateLimit(
		redisstore.NewLimiter(rdb, 10, 20, nil),
		&middleware.RateLimitOptions{Key: func(req *mcpkit.Request) string {
			if ti := req.TokenInfo(); ti != nil {
				return ti.UserID
			}
			return ""
		}},
	))
}

// With a fallback, a Redis outage does not stop calls: each of the 4
// replicas then allows a quarter of the budget on its own, and the outage
// is logged (once every ten seconds at most) with its end.
func ExampleNewLimiter_failOpen() {
	rdb := redis.NewClient(&redis.Options{
		Addr: "localhost:6379",
		// What a call costs at most while Redis is away.
		DialTimeout: 200 * time.Millisecond,
		ReadTimeout: 200 * time.Millisecond,
	})
	defer rdb.Close()

	const replicas = 4
	limiter := redisstore.NewLimiter(rdb, 10, 20, &redisstore.LimiterOptions{
		Prefix:   "myapp:",
		Logger:   slog.Default(),
		FailOpen: middleware.NewTokenBucket(10.0/replicas, 20/replicas, nil),
	})
	ok, retryAfter, err := limiter.Allow(context.Background(), "user-1")
	fmt.Println(ok, retryAfter, err)
}

// A Cache holds values for every replica, up to MaxValueSize each.
func ExampleNewCache() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()

	cache := redisstore.NewCache(rdb, &redisstore.CacheOptions{MaxValueSize: 256 << 10})
	ctx := context.Background()
	if err := cache.Set(ctx, "report:2026-01", []byte(`{"total":42}`), time.Minute); err != nil {
		log.Print(err) // ErrValueTooLarge, or Redis is down: a cache can do without
	}
	v, ok, err := cache.Get(ctx, "report:2026-01")
	fmt.Println(string(v), ok, err)
}

// One replica claims an idempotency key; a repeat, on any replica, finds
// the claim (or, once done, the result) instead of running the call again.
func ExampleNewIdempotencyStore() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()

	store := redisstore.NewIdempotencyStore(rdb, nil)
	ctx := context.Background()
	rec := middleware.IdempotencyRecord{Fingerprint: `charge@1:{"amount":5}`, Token: "claim-7f3a"}
	existing, claimed, err := store.Claim(ctx, "user-1:order-99", rec, 30*time.Second)
	switch {
	case err != nil:
		log.Fatal(err)
	case !claimed:
		fmt.Println("already claimed; done:", existing.Done)
		return
	}
	result := []byte(`{"content":[{"type":"text","text":"charged"}]}`)
	if err := store.Complete(ctx, "user-1:order-99", rec.Token, result, 24*time.Hour); err != nil {
		log.Print(err) // middleware.ErrClaimLost: the lease ran out first
	}
}

// Every replica subscribes to the registry's changes; a nil payload says
// that the subscription reconnected and may have missed some.
func ExampleNewEventBus() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()

	bus := redisstore.NewEventBus(rdb, nil)
	defer bus.Close()
	ctx := context.Background()
	unsubscribe, err := bus.Subscribe(ctx, "tools", func(payload []byte) {
		if payload == nil {
			fmt.Println("reconnected: reload the whole registry")
			return
		}
		fmt.Printf("changed: %s\n", payload)
	})
	if err != nil {
		log.Fatal(err)
	}
	defer unsubscribe()
	if err := bus.Publish(ctx, "tools", []byte("search@2")); err != nil {
		log.Print(err)
	}
}

// Every replica runs the "report" tool's calls as tasks in one store, so
// that a client polls (tasks/get) or cancels (tasks/cancel) a task on
// whichever replica the load balancer sends it to, and a task whose
// replica died is reported failed once its lease runs out.
func ExampleNewTaskStore() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()

	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "demo"},
		&mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(&tasks.Options{Store: redisstore.NewTaskStore(rdb, &redisstore.TaskStoreOptions{Prefix: "myapp:"})})
	if err := m.Attach(srv); err != nil {
		log.Fatal(err)
	}
	defer m.Shutdown(context.Background())

	report := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "report", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a long report"}}}, nil
		}),
	}
	if err := srv.Add(tasks.Tool(report, m, &tasks.ToolOptions{Timeout: 10 * time.Minute})); err != nil {
		log.Fatal(err)
	}
}
