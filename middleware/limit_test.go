package middleware_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// gate is a handler whose calls block until the gate opens.
type gate struct {
	open    chan struct{}
	started chan string // receives the tool name of each call that starts
}

func newGate() *gate { return &gate{open: make(chan struct{}), started: make(chan string, 100)} }

func (g *gate) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	g.started <- req.Tool.Name
	select {
	case <-g.open:
		return textResult("ok"), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// background starts a call of h on tool and returns a channel with its
// error.
func background(ctx context.Context, h mcpkit.Handler, tool string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := h.ServeTool(ctx, mcpkittest.NewRequest(newTool(tool, nil), nil))
		done <- err
	}()
	return done
}

// checkBusy checks that err is the rejection of a busy tool.
func checkBusy(t *testing.T, err error, want string) {
	t.Helper()
	var te *mcpkit.ToolError
	if !errors.As(err, &te) || te.ErrorClass() != mcpkit.Retryable || !errors.Is(err, middleware.ErrBusy) {
		t.Fatalf("got %#v, want a retryable tool error wrapping ErrBusy", err)
	}
	if err.Error() != want {
		t.Errorf("text = %q, want %q", err.Error(), want)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		h := middleware.ConcurrencyLimit(2, nil)(g)
		ctx := t.Context()
		first, second := background(ctx, h, "a"), background(ctx, h, "b")
		synctest.Wait()
		_, err := h.ServeTool(ctx, mcpkittest.NewRequest(newTool("c", nil), nil))
		checkBusy(t, err, `tool "c" is busy: the limit of 2 concurrent calls is reached; try again later`)
		close(g.open)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		<-second
		if res, err := h.ServeTool(ctx, mcpkittest.NewRequest(newTool("c", nil), nil)); err != nil || resultText(t, res) != "ok" {
			t.Errorf("after release: %v, %v", res, err)
		}
	})
}

func TestConcurrencyLimitWait(t *testing.T) {
	tests := []struct {
		name     string
		wait     time.Duration
		freeAt   time.Duration // when the running call ends
		wantBusy bool
		wantAt   time.Duration // when the waiting call is answered
	}{
		{"slot frees in time", 2 * time.Second, time.Second, false, time.Second},
		{"slot frees too late", 2 * time.Second, 5 * time.Second, true, 2 * time.Second},
		{"unbounded wait", -1, time.Hour, false, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGate()
				h := middleware.ConcurrencyLimit(1, &middleware.ConcurrencyLimitOptions{Wait: tt.wait})(g)
				running := background(t.Context(), h, "a")
				<-g.started
				time.AfterFunc(tt.freeAt, func() { close(g.open) })
				start := time.Now()
				_, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("b", nil), nil))
				if d := time.Since(start); d != tt.wantAt {
					t.Errorf("answered after %v, want %v", d, tt.wantAt)
				}
				if tt.wantBusy {
					checkBusy(t, err, `tool "b" is busy: the limit of 1 concurrent calls was still reached after 2s; try again later`)
				} else if err != nil {
					t.Errorf("got %v, want success", err)
				}
				<-running
				time.Sleep(time.Hour) // let the gate's timer fire
			})
		})
	}
}

func TestConcurrencyLimitCancelWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		h := middleware.ConcurrencyLimit(1, &middleware.ConcurrencyLimitOptions{Wait: time.Hour})(g)
		running := background(t.Context(), h, "a")
		<-g.started
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, err := h.ServeTool(ctx, mcpkittest.NewRequest(newTool("b", nil), nil))
		if !errors.Is(err, context.Canceled) || time.Since(start) != time.Second {
			t.Errorf("got %v after %v, want context.Canceled after 1s", err, time.Since(start))
		}
		close(g.open)
		<-running
	})
}

func TestConcurrencyLimitPerToolAndKey(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		opts    *middleware.ConcurrencyLimitOptions
		running []string // tools of the calls started first, which block
		call    string   // then this tool is called
		busy    bool     // and is rejected
	}{
		{"shared slots", 1, nil, []string{"a"}, "b", true},
		{"own slots", 1, &middleware.ConcurrencyLimitOptions{PerTool: middleware.ByName(map[string]int{"b": 1})},
			[]string{"a"}, "b", false},
		{"own slots full", 5, &middleware.ConcurrencyLimitOptions{PerTool: middleware.ByName(map[string]int{"b": 1})},
			[]string{"b"}, "b", true},
		{"own slots do not use shared ones", 1, &middleware.ConcurrencyLimitOptions{PerTool: middleware.ByName(map[string]int{"b": 2})},
			[]string{"b"}, "a", false},
		{"no limit for a tool", 1, &middleware.ConcurrencyLimitOptions{PerTool: middleware.ByName(map[string]int{"b": -1})},
			[]string{"b", "b", "a"}, "b", false},
		{"only per-tool limits", 0, &middleware.ConcurrencyLimitOptions{PerTool: middleware.ByName(map[string]int{"b": 1})},
			[]string{"a", "a", "b"}, "b", true},
		{"keys are separate", 1, &middleware.ConcurrencyLimitOptions{Key: func(r *mcpkit.Request) string { return r.Tool.Name }},
			[]string{"a"}, "b", false},
		{"same key shares", 1, &middleware.ConcurrencyLimitOptions{Key: func(r *mcpkit.Request) string { return r.Tool.Name[:1] }},
			[]string{"a1"}, "a2", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGate()
				h := middleware.ConcurrencyLimit(tt.n, tt.opts)(g)
				var wg sync.WaitGroup
				for _, name := range tt.running {
					wg.Go(func() { h.ServeTool(t.Context(), mcpkittest.NewRequest(newTool(name, nil), nil)) })
				}
				synctest.Wait()
				done := background(t.Context(), h, tt.call)
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

// TestConcurrencyLimitEndToEnd checks, over the wire, that one
// ConcurrencyLimit in a server-wide chain counts the calls of every tool
// together, except those of a tool with slots of its own.
func TestConcurrencyLimitEndToEnd(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		g := newGate()
		limit := middleware.ConcurrencyLimit(1, &middleware.ConcurrencyLimitOptions{
			PerTool: middleware.ByName(map[string]int{"own": 1}),
		})
		srv := newServer(t, []mcpkit.Middleware{limit},
			&mcpkit.Tool{Tool: mcp.Tool{Name: "slow", InputSchema: objectSchema}, Handler: g},
			newTool("fine", ok), newTool("own", ok))
		ts := connect(srv)
		done := make(chan error, 1)
		go func() {
			_, err := ts.CallTool(context.Background(), "slow", nil)
			done <- err
		}()
		<-g.started
		res, err := ts.CallTool(t.Context(), "fine", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := `tool "fine" is busy: the limit of 1 concurrent calls is reached; try again later`
		if !res.IsError || resultText(t, res) != want || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
			t.Errorf("got %+v (class %q), want %q", res, mcpkit.ErrorClassOf(res), want)
		}
		if res, err := ts.CallTool(t.Context(), "own", nil); err != nil || res.IsError {
			t.Errorf("a tool with its own slot: %v, %+v", err, res)
		}
		close(g.open)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if res, err := ts.CallTool(t.Context(), "fine", nil); err != nil || resultText(t, res) != "ok" {
			t.Errorf("after release: %v, %v", res, err)
		}
	})
}
