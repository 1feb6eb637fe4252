package middleware_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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

// busyHint returns the retry delay, in milliseconds, that a rejection
// puts in its result's _meta, and whether it has one.
func busyHint(t *testing.T, err error) (int64, bool) {
	t.Helper()
	var rme mcpkit.ResultMetaError
	if !errors.As(err, &rme) {
		return 0, false
	}
	v, ok := rme.ResultMeta()[middleware.MetaKeyRetryAfter]
	if !ok {
		return 0, false
	}
	ms, isInt := v.(int64)
	if !isInt {
		t.Fatalf("%s = %#v, want an int64 of milliseconds", middleware.MetaKeyRetryAfter, v)
	}
	return ms, true
}

// A busy rejection suggests when to retry, as the error table asks of
// every limit: one second by default, or what the options say, or nothing.
func TestConcurrencyLimitRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mw     mcpkit.Middleware
		wantMs int64 // 0: no hint
	}{
		{"default", middleware.ConcurrencyLimit(1, nil), 1000},
		{"set", middleware.ConcurrencyLimit(1, &middleware.ConcurrencyLimitOptions{RetryAfter: 250 * time.Millisecond}), 250},
		{"rounded up", middleware.ConcurrencyLimit(1, &middleware.ConcurrencyLimitOptions{RetryAfter: 1500 * time.Microsecond}), 2},
		{"none", middleware.ConcurrencyLimit(1, &middleware.ConcurrencyLimitOptions{RetryAfter: -1}), 0},
		{"bulkhead", middleware.Bulkhead(map[string]int{"a": 1}, &middleware.BulkheadOptions{RetryAfter: 3 * time.Second}), 3000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGate()
				h := tt.mw(g)
				first := background(t.Context(), h, "a")
				synctest.Wait()
				_, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("a", nil), nil))
				checkBusy(t, err, `tool "a" is busy: the limit of 1 concurrent calls is reached; try again later`)
				ms, ok := busyHint(t, err)
				if tt.wantMs == 0 && ok || tt.wantMs != 0 && ms != tt.wantMs {
					t.Errorf("retry hint = %d ms (present %v), want %d", ms, ok, tt.wantMs)
				}
				close(g.open)
				<-first
			})
		})
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

func TestConcurrencyLimitKeys(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		opts    *middleware.ConcurrencyLimitOptions
		running []string // tools of the calls started first, which block
		call    string   // then this tool is called
		busy    bool     // and is rejected
	}{
		{"shared slots", 1, nil, []string{"a"}, "b", true},
		{"no limit", 0, nil, []string{"a", "a"}, "b", false},
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
// ConcurrencyLimit in a server-wide chain counts the calls of every tool it
// wraps together, and that a tool selected out of it and given a limit of
// its own with ForTools does not use the shared slots.
func TestConcurrencyLimitEndToEnd(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		g := newGate()
		own := mcpkit.Named("own")
		limits := []mcpkit.Middleware{
			mcpkit.ForTools(mcpkit.Not(own), middleware.ConcurrencyLimit(1, nil)),
			mcpkit.ForTools(own, middleware.ConcurrencyLimit(1, nil)),
		}
		srv := newServer(t, limits,
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

// TestConcurrencyLimitCountsRunaways checks, through a client, that a limit
// in its documented place, outside Timeout, bounds the handler bodies that
// really run: calls answered at their deadline keep their slots until their
// handlers return, calls beyond the limit are rejected at once meanwhile,
// and every slot is free again once the handlers return (D3).
func TestConcurrencyLimitCountsRunaways(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var running, peak atomic.Int32
		enter := func() {
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
		}
		release, hold := make(chan struct{}), make(chan struct{})
		stubborn := newTool("stubborn", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			enter()
			<-release // ignores its context
			running.Add(-1)
			return textResult("late"), nil
		})
		holder := newTool("holder", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			enter()
			<-hold
			running.Add(-1)
			return textResult("held"), nil
		})
		srv := newServer(t, []mcpkit.Middleware{
			middleware.ConcurrencyLimit(4, nil),
			middleware.Timeout(time.Second, nil),
		}, stubborn, holder)
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)

		type outcome struct {
			res  *mcp.CallToolResult
			err  error
			took time.Duration
		}
		callAll := func(tool string, n int, every time.Duration) []outcome {
			out := make([]outcome, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					start := time.Now()
					res, err := ts.CallTool(t.Context(), tool, nil)
					out[i] = outcome{res, err, time.Since(start)}
				})
				time.Sleep(every)
			}
			wg.Wait()
			return out
		}
		// The calls arrive over 4s, past the first deadlines.
		var timedOut, busy int
		for i, o := range callAll("stubborn", 40, 100*time.Millisecond) {
			if o.err != nil {
				t.Fatalf("call %d: %v", i, o.err)
			}
			text := resultText(t, o.res)
			switch {
			case !o.res.IsError || mcpkit.ErrorClassOf(o.res) != mcpkit.Retryable:
				t.Errorf("call %d: got %+v (class %q), want a retryable tool error", i, o.res, mcpkit.ErrorClassOf(o.res))
			case text == `tool "stubborn" timed out after 1s` && o.took == time.Second:
				timedOut++
			case text == `tool "stubborn" is busy: the limit of 4 concurrent calls is reached; try again later` && o.took == 0:
				busy++
			default:
				t.Errorf("call %d: got %q after %v", i, text, o.took)
			}
		}
		if p := peak.Load(); p != 4 {
			t.Errorf("peak of %d handler bodies running at once, want 4", p)
		}
		if timedOut != 4 || busy != 36 {
			t.Errorf("%d timed out after 1s, %d busy at once; want 4 and 36", timedOut, busy)
		}

		// Once the runaways return, all four slots are free again: four
		// calls run at once, and only a fifth is turned away.
		close(release)
		synctest.Wait()
		if n := running.Load(); n != 0 {
			t.Fatalf("%d handlers still running", n)
		}
		peak.Store(0)
		done := make(chan []outcome)
		go func() { done <- callAll("holder", 4, 0) }()
		synctest.Wait()
		if n := running.Load(); n != 4 {
			t.Errorf("%d of 4 calls running after the runaways returned, want 4", n)
		}
		res, err := ts.CallTool(t.Context(), "holder", nil)
		if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
			t.Errorf("a fifth call: %+v, %v; want a busy rejection", res, err)
		}
		close(hold)
		for i, o := range <-done {
			if o.err != nil || o.res.IsError || resultText(t, o.res) != "held" {
				t.Errorf("holder call %d: %+v, %v", i, o.res, o.err)
			}
		}
	})
}

// TestConcurrencyLimitReleasesOnPanic checks that a panicking handler gives
// its slot back, also when Timeout re-raises the panic from the handler's
// goroutine.
func TestConcurrencyLimitReleasesOnPanic(t *testing.T) {
	panicky := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { panic("boom") })
	tests := []struct {
		name  string
		inner []mcpkit.Middleware
	}{
		{"bare", nil},
		{"outside Timeout", []mcpkit.Middleware{middleware.Timeout(time.Minute, nil)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain := append([]mcpkit.Middleware{middleware.Recover(nil), middleware.ConcurrencyLimit(1, nil)}, tt.inner...)
			h := mcpkit.Chain(chain...)(panicky)
			for i := range 3 {
				_, err := call(t, h, newTool("t", nil), nil)
				var p *mcpkit.PanicError
				if !errors.As(err, &p) {
					t.Fatalf("call %d: got %v, want the recovered panic (a busy rejection means the slot leaked)", i, err)
				}
			}
		})
	}
}
