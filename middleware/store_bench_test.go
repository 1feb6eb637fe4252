package middleware_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// BenchmarkStores measures the per-call cost of CacheResults and
// Idempotent over in-memory stores, called directly (no transport) by a
// verified user, against the bare handler: a cache hit, a cache miss (a
// cache too small to keep anything, so that every call runs, encodes and
// offers its result), a call without an idempotency key, a replay, and a
// first call (keys cycled through a store that forgets them before they
// come back).
func BenchmarkStores(b *testing.B) {
	ctx := context.Background()
	tool := annotated("search", readOnly)
	args := map[string]any{"query": "golang middleware", "limit": 10, "filters": map[string]any{"lang": "en", "since": "2026-01-01"}}
	plain := mcpkittest.NewRequest(tool, args, asAda)
	keyed := mcpkittest.NewRequest(tool, args, withKey("order-1234"), asAda)
	fresh := make([]*mcpkit.Request, 1024)
	for i := range fresh {
		fresh[i] = mcpkittest.NewRequest(tool, args, withKey(fmt.Sprintf("order-%d", i)), asAda)
	}
	run := func(b *testing.B, h mcpkit.Handler, reqs ...*mcpkit.Request) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := h.ServeTool(ctx, reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	bare := mcpkit.HandlerFunc(benchHandler)
	b.Run("bare", func(b *testing.B) { run(b, bare, plain) })
	b.Run("CacheResults/hit", func(b *testing.B) {
		run(b, middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil)(bare), plain)
	})
	b.Run("CacheResults/miss", func(b *testing.B) {
		run(b, middleware.CacheResults(middleware.NewMemoryCache(1), nil)(bare), plain)
	})
	b.Run("Idempotent/nokey", func(b *testing.B) {
		run(b, middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil)(bare), plain)
	})
	b.Run("Idempotent/replay", func(b *testing.B) {
		run(b, middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil)(bare), keyed)
	})
	b.Run("Idempotent/first", func(b *testing.B) {
		s := middleware.NewMemoryIdempotencyStore(&middleware.MemoryIdempotencyStoreOptions{MaxBytes: 64 << 10})
		run(b, middleware.Idempotent(s, nil)(bare), fresh...)
	})
}
