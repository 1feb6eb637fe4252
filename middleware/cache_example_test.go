package middleware_test

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
)

func ExampleCacheResults() {
	runs := 0
	lookup := exampleTool("lookup", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		runs++
		return text1(fmt.Sprintf("looked up %s (run %d)", req.Arguments, runs)), nil
	})
	lookup.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true} // cached: it changes nothing
	srv := newExampleServer([]mcpkit.Middleware{
		middleware.CacheResults(middleware.NewMemoryCache(64<<20), &middleware.CacheOptions{
			TTL: 5 * time.Minute,
			// This server has one client, in memory as it would over
			// stdio, and no one to tell apart: without a Key, anonymous
			// calls are not cached. Over HTTP, the default key is the
			// caller's bearer token or verified user.
			Key: func(*mcpkit.Request) string { return "the client" },
		}),
	}, lookup)
	cs := connect(srv)
	defer cs.Close()
	for _, args := range []any{
		map[string]any{"city": "Oslo", "units": "metric"},
		map[string]any{"units": "metric", "city": "Oslo"}, // the same arguments
		map[string]any{"city": "Bergen"},
	} {
		res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup", Arguments: args})
		fmt.Println(res.Content[0].(*mcp.TextContent).Text, res.Meta[middleware.MetaKeyCache])
	}
	// Output:
	// looked up {"city":"Oslo","units":"metric"} (run 1) <nil>
	// looked up {"city":"Oslo","units":"metric"} (run 1) hit
	// looked up {"city":"Bergen"} (run 2) <nil>
}

func ExampleNewMemoryCache() {
	ctx := context.Background()
	c := middleware.NewMemoryCache(1 << 20) // at most 1 MiB of keys and values
	c.Set(ctx, "greeting", []byte("hello"), time.Minute)
	v, ok, err := c.Get(ctx, "greeting")
	fmt.Printf("%s %v %v\n", v, ok, err)
	_, ok, _ = c.Get(ctx, "farewell")
	fmt.Println(ok)
	// Output:
	// hello true <nil>
	// false
}

func ExampleIdempotent() {
	payments := 0
	pay := exampleTool("pay", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		payments++
		return text1(fmt.Sprintf("payment %d sent", payments)), nil
	})
	srv := newExampleServer([]mcpkit.Middleware{
		middleware.Timeout(30*time.Second, nil),
		// Inside Timeout, with a lease longer than the time limit. This
		// server has one client, in memory as it would over stdio: its
		// keys are that client's (without a Key, anonymous callers may
		// not send keys).
		middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), &middleware.IdempotencyOptions{
			Lease: time.Minute,
			Key:   func(*mcpkit.Request) string { return "the client" },
		}),
	}, pay)
	cs := connect(srv)
	defer cs.Close()
	call := func(key string, amount int) {
		res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{
			Meta:      mcp.Meta{middleware.MetaKeyIdempotencyKey: key},
			Name:      "pay",
			Arguments: map[string]any{"to": "bob", "amount": amount},
		})
		fmt.Println(res.Content[0].(*mcp.TextContent).Text, res.Meta[middleware.MetaKeyIdempotent])
	}
	call("order-1234", 10)
	call("order-1234", 10) // a retry: the payment is not sent again
	call("order-1234", 20) // the key names another payment
	call("order-1235", 20)
	// Output:
	// payment 1 sent <nil>
	// payment 1 sent replayed
	// tool "pay": this idempotency key was used for a call with other arguments, to another version of the tool or by another name; use a new key for a new call <nil>
	// payment 2 sent <nil>
}

func ExampleNewMemoryIdempotencyStore() {
	ctx := context.Background()
	s := middleware.NewMemoryIdempotencyStore(&middleware.MemoryIdempotencyStoreOptions{MaxBytes: 16 << 20})
	rec := middleware.IdempotencyRecord{Fingerprint: "f1", Token: "t1"}
	_, claimed, _ := s.Claim(ctx, "key", rec, time.Minute)
	fmt.Println("first claim:", claimed)
	existing, claimed, _ := s.Claim(ctx, "key", middleware.IdempotencyRecord{Fingerprint: "f1", Token: "t2"}, time.Minute)
	fmt.Println("second claim:", claimed, "running:", !existing.Done)
	s.Complete(ctx, "key", "t1", []byte(`{"content":[]}`), time.Hour)
	existing, _, _ = s.Claim(ctx, "key", rec, time.Minute)
	fmt.Printf("done: %v, result: %s\n", existing.Done, existing.Result)
	// Output:
	// first claim: true
	// second claim: false running: true
	// done: true, result: {"content":[]}
}
