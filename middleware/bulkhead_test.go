package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/transform"
)

// taggedTool returns a tool served by h with the given tags.
func taggedTool(name string, h mcpkit.Handler, tags ...string) *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: objectSchema}, Handler: h, Tags: tags}
}

func TestBulkhead(t *testing.T) {
	byTag := &middleware.BulkheadOptions{Pool: func(t *mcpkit.Tool) string {
		if t.HasTag("batch") {
			return "batch"
		}
		return "interactive"
	}}
	tests := []struct {
		name    string
		pools   map[string]int
		opts    *middleware.BulkheadOptions
		running []string // tools whose calls block
		call    string   // then this tool is called
		busy    bool     // and is rejected
	}{
		{"a tool's pool is full", map[string]int{"slow": 2}, nil, []string{"slow", "slow"}, "slow", true},
		{"another tool answers", map[string]int{"slow": 2}, nil, []string{"slow", "slow"}, "fast", false},
		{"another tool's own pool", map[string]int{"slow": 2, "fast": 1}, nil, []string{"slow", "slow"}, "fast", false},
		{"a pool not full", map[string]int{"slow": 2}, nil, []string{"slow"}, "slow", false},
		{"a pool of zero has no limit", map[string]int{"slow": 0}, nil, []string{"slow", "slow", "slow"}, "slow", false},
		{"tools share a tag's pool", map[string]int{"batch": 1, "interactive": 8}, byTag, []string{"export"}, "import", true},
		{"the other pool answers", map[string]int{"batch": 1, "interactive": 8}, byTag, []string{"export"}, "slow", false},
		{"no pools", nil, nil, []string{"slow", "slow"}, "slow", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGate()
				h := middleware.Bulkhead(tt.pools, tt.opts)(g)
				tool := func(name string) *mcpkit.Tool {
					if name == "export" || name == "import" {
						return taggedTool(name, g, "batch")
					}
					return taggedTool(name, g)
				}
				var wg sync.WaitGroup
				for _, name := range tt.running {
					wg.Go(func() { h.ServeTool(t.Context(), mcpkittest.NewRequest(tool(name), nil)) })
				}
				synctest.Wait()
				done := make(chan error, 1)
				go func() {
					_, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(tool(tt.call), nil))
					done <- err
				}()
				synctest.Wait()
				close(g.open)
				err := <-done
				if busy := errors.Is(err, middleware.ErrBusy); busy != tt.busy {
					t.Errorf("busy = %v (%v), want %v", busy, err, tt.busy)
				}
				wg.Wait()
			})
		})
	}
}

// TestBulkheadWait checks that a call waits for a slot of its pool as long
// as Wait says.
func TestBulkheadWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		h := middleware.Bulkhead(map[string]int{"slow": 1}, &middleware.BulkheadOptions{Wait: 2 * time.Second})(g)
		running := background(t.Context(), h, "slow")
		<-g.started
		time.AfterFunc(time.Second, func() { close(g.open) })
		start := time.Now()
		if _, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("slow", nil), nil)); err != nil {
			t.Errorf("got %v, want the call to run once the slot frees", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("answered after %v, want 1s", d)
		}
		<-running
	})
}

// TestBulkheadPipeline checks that inside a server each tool gets the one
// layer of its pool, and the others are skipped.
func TestBulkheadPipeline(t *testing.T) {
	srv := newServer(t, []mcpkit.Middleware{middleware.Bulkhead(map[string]int{"a": 1, "b": 2}, nil)},
		newTool("a", ok), newTool("b", ok), newTool("c", ok))
	for tool, want := range map[string][]bool{"a": {false, true}, "b": {true, false}, "c": {true, true}} {
		layers, _ := srv.Pipeline(tool)
		var skipped []bool
		for _, l := range layers {
			if l.Name == "middleware.Bulkhead" {
				skipped = append(skipped, l.Skipped)
			}
		}
		if len(skipped) != 2 || skipped[0] != want[0] || skipped[1] != want[1] {
			t.Errorf("%s: layers %+v, want the pools a and b skipped as %v", tool, layers, want)
		}
	}
}

// TestBulkheadEndToEnd checks, through a client, that a slow tool whose
// pool is full is turned away while the other tools still answer, also
// under a server-wide ConcurrencyLimit inside the bulkhead, which the slow
// tool cannot fill.
func TestBulkheadEndToEnd(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		g := newGate()
		srv := newServer(t, []mcpkit.Middleware{
			middleware.Bulkhead(map[string]int{"report": 2}, nil),
			middleware.ConcurrencyLimit(3, nil),
		}, taggedTool("report", g), newTool("status", ok))
		ts := connect(srv)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if res, err := ts.CallTool(context.Background(), "report", nil); err != nil || resultText(t, res) != "ok" {
					t.Errorf("a running report: %v, %+v", err, res)
				}
			})
		}
		<-g.started
		<-g.started
		res, err := ts.CallTool(t.Context(), "report", nil)
		want := `tool "report" is busy: the limit of 2 concurrent calls is reached; try again later`
		if err != nil || !res.IsError || resultText(t, res) != want || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
			t.Errorf("a third report: %v, %+v; want %q", err, res, want)
		}
		if res, err := ts.CallTool(t.Context(), "status", nil); err != nil || resultText(t, res) != "ok" {
			t.Errorf("status: %v, %+v", err, res)
		}
		close(g.open)
		wg.Wait()
	})
}

// TestBulkheadHoldsRunaways checks that a pool's slot stays taken while a
// handler that Timeout answered runs on, and that the other tools answer
// meanwhile.
func TestBulkheadHoldsRunaways(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		stuck := newTool("stuck", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			<-release // ignores its context
			return textResult("late"), nil
		})
		srv := newServer(t, []mcpkit.Middleware{
			middleware.Bulkhead(map[string]int{"stuck": 1}, nil),
			middleware.Timeout(time.Second, nil),
		}, stuck, newTool("status", ok))
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)
		res, err := ts.CallTool(t.Context(), "stuck", nil)
		if err != nil || resultText(t, res) != `tool "stuck" timed out after 1s` {
			t.Fatalf("first call: %v, %+v", err, res)
		}
		res, err = ts.CallTool(t.Context(), "stuck", nil)
		if err != nil || resultText(t, res) != `tool "stuck" is busy: the limit of 1 concurrent calls is reached; try again later` {
			t.Errorf("while the first runs on: %v, %+v", err, res)
		}
		if res, err := ts.CallTool(t.Context(), "status", nil); err != nil || resultText(t, res) != "ok" {
			t.Errorf("status: %v, %+v", err, res)
		}
		close(release)
		synctest.Wait()
		res, err = ts.CallTool(t.Context(), "stuck", nil)
		if err != nil || resultText(t, res) != "late" {
			t.Errorf("once it returned: %v, %+v", err, res)
		}
		ts.Close()
	})
}

// namedPoolsServer serves report, its deprecated alias old_report and
// status, under the namespace gh ("gh.report", "gh.old_report",
// "gh.status"), behind a Bulkhead of pools; report's calls block on g.
func namedPoolsServer(t *testing.T, pools map[string]int, g *gate) *mcpkit.Server {
	t.Helper()
	report := taggedTool("report", g)
	alias, err := transform.Alias(report, "old_report", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, []mcpkit.Middleware{middleware.Bulkhead(pools, nil)}, report, alias, newTool("status", ok))
	if err := srv.Transform(transform.Namespace("gh", ".")); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestBulkheadNamedPools checks, through a client, that a pool holds the
// tools mcpkit.Named selects by its name: a pool named after a namespaced
// name limits the calls of that name; a pool named after the tool limits
// its namespaced name and its alias, which share its slots; a tool that
// two pools hold takes a slot in each.
func TestBulkheadNamedPools(t *testing.T) {
	tests := []struct {
		name    string
		pools   map[string]int
		running []string // calls that hold their slots
		call    string   // then this call
		limit   int      // is rejected by a pool of this limit (0: it answers)
	}{
		{"a pool of the namespaced name", map[string]int{"gh.report": 1}, []string{"gh.report"}, "gh.report", 1},
		{"a pool of the namespaced name, not the alias's", map[string]int{"gh.report": 1}, []string{"gh.report"}, "gh.old_report", 0},
		{"a pool of the tool holds its namespaced name", map[string]int{"report": 1}, []string{"gh.report"}, "gh.report", 1},
		{"and its alias, in the same slots", map[string]int{"report": 1}, []string{"gh.report"}, "gh.old_report", 1},
		{"the same slots, the other way", map[string]int{"report": 1}, []string{"gh.old_report"}, "gh.report", 1},
		{"two slots, one taken by each route", map[string]int{"report": 2}, []string{"gh.report", "gh.old_report"}, "gh.report", 2},
		{"a slot left", map[string]int{"report": 2}, []string{"gh.old_report"}, "gh.report", 0},
		{"another tool answers", map[string]int{"report": 1}, []string{"gh.report"}, "gh.status", 0},
		{"two pools, the namespaced name's full", map[string]int{"gh.report": 1, "report": 2}, []string{"gh.report"}, "gh.report", 1},
		{"two pools, the tool's full", map[string]int{"gh.report": 2, "report": 1}, []string{"gh.old_report"}, "gh.report", 1},
		{"two pools, neither full", map[string]int{"gh.report": 2, "report": 2}, []string{"gh.report"}, "gh.report", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate()
			ts := mcpkittest.NewStatelessServer(t, namedPoolsServer(t, tt.pools, g), nil)
			var wg sync.WaitGroup
			for _, name := range tt.running {
				wg.Go(func() {
					if res, err := ts.CallTool(context.Background(), name, nil); err != nil || res.IsError {
						t.Errorf("a running %s: %v, %+v", name, err, res)
					}
				})
				<-g.started
			}
			type answer struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan answer, 1)
			go func() {
				res, err := ts.CallTool(t.Context(), tt.call, nil)
				done <- answer{res, err}
			}()
			var a answer
			want := "ok"
			switch {
			case tt.limit > 0: // rejected while the others run
				want = fmt.Sprintf("tool %q is busy: the limit of %d concurrent calls is reached; try again later", tt.call, tt.limit)
				select {
				case a = <-done:
					close(g.open)
				case <-g.started:
					t.Errorf("%s ran beside %v", tt.call, tt.running)
					close(g.open)
					a = <-done
				}
			case tt.call == "gh.status":
				a = <-done
				close(g.open)
			default: // it runs beside the others
				<-g.started
				close(g.open)
				a = <-done
			}
			if a.err != nil || resultText(t, a.res) != want {
				t.Errorf("%s: %v, %+v; want %q", tt.call, a.err, a.res, want)
			}
			wg.Wait()
		})
	}
}

// TestBulkheadPoolOrder checks that a tool two pools hold has the layer of
// each, in the order of the pools' names: gh.report takes a slot of the
// pool "gh.report" first, then of "report".
func TestBulkheadPoolOrder(t *testing.T) {
	srv := namedPoolsServer(t, map[string]int{"report": 1, "gh.report": 2, "status": 3}, newGate())
	for tool, want := range map[string][]string{
		"gh.report":     {"concurrency=2", "concurrency=1", "skipped"},
		"gh.old_report": {"skipped", "concurrency=1", "skipped"},
		"gh.status":     {"skipped", "skipped", "concurrency=3"},
	} {
		layers, _ := srv.Pipeline(tool)
		var got []string
		for _, l := range layers {
			switch {
			case l.Name != "middleware.Bulkhead":
			case l.Skipped:
				got = append(got, "skipped")
			default:
				got = append(got, l.Settings[0].Name+"="+l.Settings[0].Value)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: Bulkhead layers %v, want %v", tool, got, want)
		}
	}
}
