package mcpkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/visibility"
)

// benchSchema is the input schema of the catalog benchmarks' tools: two
// arguments, as a typed tool of two fields has.
var benchSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`)

func benchTool(i int) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool:    mcp.Tool{Name: fmt.Sprintf("tool_%06d", i), Description: "A tool of a large catalog.", InputSchema: benchSchema},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil }),
	}
}

// filledServer returns a server with n tools, added in one batch.
func filledServer(b *testing.B, n int) *mcpkit.Server {
	b.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "catalog"}, nil)
	batch := make([]*mcpkit.Tool, n)
	for i := range batch {
		batch[i] = benchTool(i)
	}
	if err := srv.Add(batch...); err != nil {
		b.Fatal(err)
	}
	return srv
}

// BenchmarkRegistryChange measures one Add and one Remove of a tool on a
// server that has n tools already: registry work is in proportion to the
// change, so the time should not grow with n.
func BenchmarkRegistryChange(b *testing.B) {
	for _, n := range []int{100, 10_000, 100_000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			srv := filledServer(b, n)
			extra := benchTool(n + 1)
			b.ReportAllocs()
			for b.Loop() {
				if err := srv.Add(extra); err != nil {
					b.Fatal(err)
				}
				srv.Remove(extra.Name)
			}
		})
	}
}

// BenchmarkAddOneAtATime adds n tools one Add each, against the go-sdk's
// own AddTool of the same definitions in the same run.
func BenchmarkAddOneAtATime(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		tools := make([]*mcpkit.Tool, n)
		for i := range tools {
			tools[i] = benchTool(i)
		}
		b.Run(fmt.Sprintf("mcpkit/tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				srv := mcpkit.NewServer(&mcp.Implementation{Name: "catalog"}, nil)
				for _, t := range tools {
					if err := srv.Add(t); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(fmt.Sprintf("go-sdk/tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			h := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }
			for b.Loop() {
				srv := mcp.NewServer(&mcp.Implementation{Name: "catalog"}, nil)
				for _, t := range tools {
					def := t.Tool
					srv.AddTool(&def, h)
				}
			}
		})
	}
}

// BenchmarkBytesPerTool reports the heap a server keeps per registered
// tool (bytes/tool), at 10,000 tools with one schema, next to the go-sdk's
// own server holding the same definitions.
func BenchmarkBytesPerTool(b *testing.B) {
	const n = 10_000
	tools := make([]*mcpkit.Tool, n)
	for i := range tools {
		tools[i] = benchTool(i)
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	b.Run("mcpkit", func(b *testing.B) {
		var per float64
		for b.Loop() {
			before := heap()
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "catalog"}, nil)
			if err := srv.Add(tools...); err != nil {
				b.Fatal(err)
			}
			per = float64(heap()-before) / n
			runtime.KeepAlive(srv)
		}
		b.ReportMetric(per, "bytes/tool")
	})
	b.Run("go-sdk", func(b *testing.B) {
		var per float64
		h := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }
		for b.Loop() {
			before := heap()
			srv := mcp.NewServer(&mcp.Implementation{Name: "catalog"}, nil)
			for _, t := range tools {
				def := t.Tool
				srv.AddTool(&def, h)
			}
			per = float64(heap()-before) / n
			runtime.KeepAlive(srv)
		}
		b.ReportMetric(per, "bytes/tool")
	})
}

// BenchmarkCatalogServe measures a tools/list of the first page and a
// tools/call through an in-memory client, at 100, 10,000 and 100,000
// tools: plain, with a per-request visibility rule, and with Deref as list
// middleware. Neither should grow with the catalog.
func BenchmarkCatalogServe(b *testing.B) {
	for _, n := range []int{100, 10_000, 100_000} {
		for _, mode := range []string{"plain", "visibility", "deref"} {
			srv := filledServer(b, n)
			switch mode {
			case "visibility":
				visibility.New(visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))).Attach(srv)
			case "deref":
				srv.UseList(middleware.Deref(nil))
			}
			cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("list/%s/tools=%d", mode, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					res, err := cs.ListTools(context.Background(), nil)
					if err != nil || len(res.Tools) == 0 {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("call/%s/tools=%d", mode, n), func(b *testing.B) {
				b.ReportAllocs()
				params := &mcp.CallToolParams{Name: "tool_000050", Arguments: map[string]any{"a": 1}}
				for b.Loop() {
					if _, err := cs.CallTool(context.Background(), params); err != nil {
						b.Fatal(err)
					}
				}
			})
			cs.Close()
		}
	}
}

// BenchmarkRuleChange adds and removes a visibility rule that disables one
// tool, on a server with n tools. A rule with a match function (match) has
// the rules asked about every tool, since the function is opaque; a rule
// by name (names: DisableNames; require: RequireNames) has them asked about
// the named tool alone, so its cost should not grow with n. listening adds
// a per-request rule on other tools and a connected client whose view the
// server reviews for each change: for the named tool alone.
func BenchmarkRuleChange(b *testing.B) {
	for _, rule := range []string{"match", "names", "require", "listening"} {
		for _, n := range []int{100, 10_000, 100_000} {
			b.Run(fmt.Sprintf("rule=%s/tools=%d", rule, n), func(b *testing.B) {
				srv := filledServer(b, n)
				rules := visibility.New()
				rules.Attach(srv)
				var r *visibility.Rule
				switch rule {
				case "match":
					r = visibility.Disable(mcpkit.Named("tool_000050"))
				case "names":
					r = visibility.DisableNames("tool_000050")
				case "require":
					r = visibility.RequireNames(visibility.Scopes("admin"), "tool_000050")
				case "listening":
					r = visibility.DisableNames("tool_000050")
					rules.Add(visibility.RequireNames(visibility.Scopes("admin"), "tool_000060"))
					cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { cs.Close() })
				}
				b.ReportAllocs()
				for b.Loop() {
					rules.Add(r)
					rules.Remove(r)
				}
			})
		}
	}
}
