package middleware_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
)

// targetLayers lists the limits and the cache configured so that a read
// passes, with the allocations a passing read may make (-1: not pinned).
func targetLayers() []struct {
	name   string
	mw     mcpkit.Middleware
	allocs float64
} {
	return []struct {
		name   string
		mw     mcpkit.Middleware
		allocs float64
	}{
		{"RateLimit", middleware.RateLimit(middleware.NewTokenBucket(1e12, 1<<30, nil), nil), 0},
		{"ConcurrencyLimit", middleware.ConcurrencyLimit(1000, nil), 0},
		{"CircuitBreaker", middleware.CircuitBreaker(nil), 0},
		{"CacheResults/hit", middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{
			Targets:   func(mcpkit.Target) bool { return true },
			TargetKey: func(mcpkit.Target, mcpkit.Caller) string { return "all" },
		}), -1},
	}
}

// readHandler answers every read with one text.
var readHandler = struct {
	mcpkit.HandlerFunc
	mcpkit.ResourceHandlerFunc
}{ok, func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "hello"}}}, nil
}}

// BenchmarkTargetLayers measures an anonymous resources/read through each
// layer, called directly (no transport), against the bare handler.
func BenchmarkTargetLayers(b *testing.B) {
	req := &mcpkit.ResourceRequest{Resource: &mcpkit.Resource{Resource: mcp.Resource{URI: "memo://r"}}, URI: "memo://r"}
	run := func(b *testing.B, h mcpkit.Handler) {
		r := h.(mcpkit.ResourceHandler)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.ServeResource(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, readHandler) })
	for _, c := range targetLayers() {
		b.Run(c.name, func(b *testing.B) { run(b, c.mw(readHandler)) })
	}
}

// TestTargetLayersAllocate pins the allocations of a passing anonymous
// read through the limits: none beyond the handler's.
func TestTargetLayersAllocate(t *testing.T) {
	req := &mcpkit.ResourceRequest{Resource: &mcpkit.Resource{Resource: mcp.Resource{URI: "memo://r"}}, URI: "memo://r"}
	serve := func(h mcpkit.ResourceHandler) func() {
		return func() { h.ServeResource(context.Background(), req) }
	}
	bare := testing.AllocsPerRun(100, serve(readHandler))
	for _, c := range targetLayers() {
		if c.allocs < 0 {
			continue
		}
		h := c.mw(readHandler).(mcpkit.ResourceHandler)
		if got := testing.AllocsPerRun(100, serve(h)) - bare; got != c.allocs {
			t.Errorf("%s: %v allocations beyond the handler's, want %v", c.name, got, c.allocs)
		}
	}
}
