package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// fixed returns a handler that always returns res.
func fixed(res *mcp.CallToolResult) mcpkit.Handler {
	return mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return res, nil })
}

// A page of 200 rows, as a typed tool returns it: the JSON as text and as
// structured content (about 4,000 tokens).
var benchPage = func() *mcp.CallToolResult {
	rows := make([]map[string]any, 200)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "name": fmt.Sprintf("customer number %d", i), "city": "Lisbon"}
	}
	data, _ := json.Marshal(map[string]any{"rows": rows, "total": 200})
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}, StructuredContent: json.RawMessage(data)}
}()

// resilienceCases lists the new middleware configured so that a call
// passes (no limit reached, nothing to cut), and a few calls that are cut,
// for comparison.
func resilienceCases() []struct {
	name   string
	mw     mcpkit.Middleware
	result *mcp.CallToolResult
	allocs float64 // on a passing call; -1: not pinned
} {
	return []struct {
		name   string
		mw     mcpkit.Middleware
		result *mcp.CallToolResult
		allocs float64
	}{
		{"TokenBudget", middleware.TokenBudget(25000, nil), benchResult, 0},
		{"TokenBudget/page", middleware.TokenBudget(25000, nil), benchPage, 0},
		// Under the budget in tokens, not in bytes: every byte is counted.
		{"TokenBudget/page-counted", middleware.TokenBudget(3000, nil), benchPage, 0},
		{"TokenBudget/cut-text", middleware.TokenBudget(500, nil), textResult(strings.Repeat("a line of some log output\n", 2000)), -1},
		{"TokenBudget/trim-page", middleware.TokenBudget(1000, nil), benchPage, -1},
		{"CircuitBreaker", middleware.CircuitBreaker(nil), benchResult, 0},
		{"CircuitBreaker/key", middleware.CircuitBreaker(&middleware.CircuitBreakerOptions{
			Key: func(r *mcpkit.Request) string { return r.Tool.Name },
		}), benchResult, 0},
		{"Bulkhead", middleware.Bulkhead(map[string]int{"t": 1000, "other": 10}, nil), benchResult, 0},
	}
}

// BenchmarkResilience measures the budget, breaker and bulkhead around a
// handler that returns a fixed result, called directly (no transport),
// against the bare handler. Outside a server, Bulkhead's pool is chosen on
// each call; BenchmarkBulkheadInServer measures it as a server builds it.
func BenchmarkResilience(b *testing.B) {
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
	b.Run("bare", func(b *testing.B) { run(b, fixed(benchResult)) })
	b.Run("bare/page", func(b *testing.B) { run(b, fixed(benchPage)) })
	for _, c := range resilienceCases() {
		b.Run(c.name, func(b *testing.B) { run(b, c.mw(fixed(c.result))) })
	}
}

// BenchmarkBulkheadInServer measures a call through a server's chain (its
// validation included, no transport) with and without a Bulkhead, which
// the server resolves to the one ConcurrencyLimit of the tool's pool.
func BenchmarkBulkheadInServer(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		mw   []mcpkit.Middleware
	}{
		{"bare", nil},
		{"Bulkhead", []mcpkit.Middleware{middleware.Bulkhead(map[string]int{"t": 1000, "a": 1, "b": 1, "c": 1}, nil)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := newServer(b, c.mw, newTool("t", benchHandler))
			h, _ := srv.Handler("t")
			tool, _ := srv.Lookup("t")
			req := mcpkittest.NewRequest(tool, map[string]int{"a": 1})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.ServeTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestResiliencePassThroughAllocations pins the allocations of a passing
// call.
func TestResiliencePassThroughAllocations(t *testing.T) {
	req := mcpkittest.NewRequest(newTool("t", nil), map[string]int{"a": 1})
	ctx := context.Background()
	for _, c := range resilienceCases() {
		if c.allocs < 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			h := c.mw(fixed(c.result))
			got := testing.AllocsPerRun(1000, func() {
				res, err := h.ServeTool(ctx, req)
				if err != nil || res != c.result {
					t.Fatalf("got %v, %v; want the handler's result", res, err)
				}
			})
			if got != c.allocs {
				t.Errorf("%v allocations per call, want %v", got, c.allocs)
			}
		})
	}
}
