package middleware_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

var benchResult = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}

func benchHandler(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	return benchResult, nil
}

// passThrough lists each middleware configured so that a call passes: no
// panic, no error, no limit reached.
func passThrough() []struct {
	name string
	mw   mcpkit.Middleware
} {
	discard := slog.New(slog.DiscardHandler)
	return []struct {
		name string
		mw   mcpkit.Middleware
	}{
		{"Recover", middleware.Recover(&middleware.RecoverOptions{Logger: discard})},
		{"MaskErrors", middleware.MaskErrors(&middleware.MaskErrorsOptions{Logger: discard})},
		{"Logging/discard", middleware.Logging(&middleware.LoggingOptions{Logger: discard})},
		{"Logging/json", middleware.Logging(&middleware.LoggingOptions{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})},
		{"Timeout", middleware.Timeout(time.Minute, nil)},
		{"ConcurrencyLimit", middleware.ConcurrencyLimit(1000, nil)},
		{"ConcurrencyLimit/key", middleware.ConcurrencyLimit(1000, &middleware.ConcurrencyLimitOptions{
			Key: func(r *mcpkit.Request) string { return r.Tool.Name },
		})},
		{"RateLimit", middleware.RateLimit(middleware.NewTokenBucket(rate.Inf, 1, nil), nil)},
		{"RateLimit/bucket", middleware.RateLimit(middleware.NewTokenBucket(1e9, 1<<30, nil), nil)},
		{"ArgumentSizeLimit", middleware.ArgumentSizeLimit(1 << 20)},
		{"ResultSizeLimit", middleware.ResultSizeLimit(1<<20, nil)},
		// The tool has no hints and the call no idempotency key.
		{"CacheResults/not-cached", middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil)},
		{"Idempotent/no-key", middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil)},
	}
}

// BenchmarkPassThrough measures each middleware around a handler that
// returns a fixed result, called directly (no transport), against the bare
// handler.
func BenchmarkPassThrough(b *testing.B) {
	req := mcpkittest.NewRequest(newTool("t", nil), map[string]int{"a": 1})
	ctx := context.Background()
	run := func(b *testing.B, h mcpkit.Handler) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.ServeTool(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, mcpkit.HandlerFunc(benchHandler)) })
	for _, m := range passThrough() {
		b.Run(m.name, func(b *testing.B) { run(b, m.mw(mcpkit.HandlerFunc(benchHandler))) })
	}
}

// TestPassThroughAllocations pins the allocations a passing call costs in
// each middleware that can avoid them.
func TestPassThroughAllocations(t *testing.T) {
	want := map[string]float64{
		"Recover":           0,
		"MaskErrors":        0,
		"Logging/discard":   0,
		"ConcurrencyLimit":  0,
		"RateLimit":         0,
		"RateLimit/bucket":  0,
		"ArgumentSizeLimit": 0,

		"CacheResults/not-cached": 0,
		"Idempotent/no-key":       0,
	}
	req := mcpkittest.NewRequest(newTool("t", nil), map[string]int{"a": 1})
	ctx := context.Background()
	for _, m := range passThrough() {
		w, ok := want[m.name]
		if !ok {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			h := m.mw(mcpkit.HandlerFunc(benchHandler))
			got := testing.AllocsPerRun(1000, func() {
				if _, err := h.ServeTool(ctx, req); err != nil {
					t.Fatal(err)
				}
			})
			if got != w {
				t.Errorf("%v allocations per call, want %v", got, w)
			}
		})
	}
}
