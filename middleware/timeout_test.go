package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// waitCtx is a handler that respects its context: it answers after d, or
// with its context's error when that ends first.
func waitCtx(d time.Duration) mcpkit.HandlerFunc {
	return func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		select {
		case <-time.After(d):
			return textResult("done"), nil
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting: %w", ctx.Err())
		}
	}
}

// ignoreCtx is a handler that ignores its context and answers after d.
func ignoreCtx(d time.Duration) mcpkit.HandlerFunc {
	return func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		time.Sleep(d) // fake time: the tests run in a synctest bubble
		return textResult("late"), nil
	}
}

func TestTimeout(t *testing.T) {
	tests := []struct {
		name     string
		limit    time.Duration
		opts     *middleware.TimeoutOptions
		tool     string
		handler  mcpkit.HandlerFunc
		wantText string        // the result's text, if the call succeeds
		wantErr  string        // the error's text, if it fails
		wantAt   time.Duration // when the caller gets its answer
	}{
		{name: "fast", limit: time.Second, tool: "t", handler: waitCtx(100 * time.Millisecond),
			wantText: "done", wantAt: 100 * time.Millisecond},
		{name: "respects ctx", limit: time.Second, tool: "slow", handler: waitCtx(time.Hour),
			wantErr: `tool "slow" timed out after 1s`, wantAt: time.Second},
		{name: "ignores ctx", limit: 2 * time.Second, tool: "slow", handler: ignoreCtx(time.Hour),
			wantErr: `tool "slow" timed out after 2s`, wantAt: 2 * time.Second},
		{name: "zero limit", limit: 0, tool: "t", handler: waitCtx(time.Hour), wantText: "done", wantAt: time.Hour},
		{name: "negative limit", limit: -time.Second, tool: "t", handler: waitCtx(time.Hour), wantText: "done", wantAt: time.Hour},
		{name: "handler error passes", limit: time.Second, tool: "t",
			handler: func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				return nil, mcpkit.ToolErrorf("bad input")
			},
			wantErr: "bad input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := middleware.Timeout(tt.limit, tt.opts)(tt.handler)
				start := time.Now()
				res, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(newTool(tt.tool, nil), nil))
				if got := time.Since(start); got != tt.wantAt {
					t.Errorf("answered after %v, want %v", got, tt.wantAt)
				}
				if tt.wantErr == "" {
					if err != nil || resultText(t, res) != tt.wantText {
						t.Fatalf("got %+v, %v; want %q", res, err, tt.wantText)
					}
					return
				}
				if res != nil || err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %+v, %v; want error %q", res, err, tt.wantErr)
				}
				if tt.handler == nil || strings.HasPrefix(tt.wantErr, "bad") {
					return
				}
				checkTimeoutError(t, err, tt.tool)
				time.Sleep(2 * time.Hour) // let the abandoned handlers finish
			})
		})
	}
}

// checkTimeoutError checks what the chain of a timeout error holds: a
// retryable tool error, never a JSON-RPC error.
func checkTimeoutError(t *testing.T, err error, tool string) {
	t.Helper()
	var te *middleware.TimeoutError
	if !errors.As(err, &te) || te.Tool != tool {
		t.Errorf("errors.As(%v, *TimeoutError) = %v", err, te)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v is not context.DeadlineExceeded", err)
	}
	var toolErr *mcpkit.ToolError
	isToolErr := errors.As(err, &toolErr)
	var wire *jsonrpc.Error
	isRPC := errors.As(err, &wire)
	if !isToolErr || toolErr.ErrorClass() != mcpkit.Retryable || isRPC {
		t.Errorf("got %#v, want a retryable *mcpkit.ToolError", err)
	}
}

func TestTimeoutError(t *testing.T) {
	err := &middleware.TimeoutError{Tool: "x", Limit: 1500 * time.Millisecond}
	if got, want := err.Error(), `tool "x" timed out after 1.5s`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("not context.DeadlineExceeded")
	}
	if err.ErrorClass() != mcpkit.Retryable {
		t.Errorf("class = %q", err.ErrorClass())
	}
}

// TestTimeoutHandlerErrorAfterDeadline checks that an error a handler
// returns because its deadline passed becomes the timeout error, even when
// it arrives before the caller noticed the deadline.
func TestTimeoutHandlerErrorAfterDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := middleware.Timeout(time.Second, nil)(mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, errors.New("gave up: " + ctx.Err().Error())
		}))
		_, err := call(t, h, newTool("t", nil), nil)
		checkTimeoutError(t, err, "t")
	})
}

func TestTimeoutCallerCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		h := middleware.Timeout(time.Minute, nil)(ignoreCtx(time.Hour))
		start := time.Now()
		res, err := h.ServeTool(ctx, mcpkittest.NewRequest(newTool("t", nil), nil))
		if res != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, %v; want context.Canceled", res, err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("returned after %v, want 1s", d)
		}
		time.Sleep(2 * time.Hour) // let the abandoned handler finish
	})
}

// TestTimeoutPanicReRaised checks that a handler's panic before the deadline
// reaches an outer Recover with its value and the handler's own stack.
func TestTimeoutPanicReRaised(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mcpkit.Chain(middleware.Recover(nil), middleware.Timeout(time.Second, nil))(
			mcpkit.HandlerFunc(panickingHandler))
		_, err := call(t, h, newTool("t", nil), nil)
		var p *mcpkit.PanicError
		if !errors.As(err, &p) || p.Value != "handler boom" {
			t.Fatalf("got %v, want a *PanicError with the handler's value", err)
		}
		if !strings.Contains(string(p.Stack), "panickingHandler") {
			t.Errorf("stack is not the handler's:\n%s", p.Stack)
		}
	})
}

func panickingHandler(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	panic("handler boom")
}

// TestTimeoutPanicWithoutRecover checks that the re-raised panic propagates
// on the caller's goroutine.
func TestTimeoutPanicWithoutRecover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := middleware.Timeout(time.Second, nil)(mcpkit.HandlerFunc(panickingHandler))
		defer func() {
			p, ok := recover().(*mcpkit.PanicError)
			if !ok || p.Value != "handler boom" {
				t.Errorf("recovered %#v, want a *PanicError", p)
			}
		}()
		call(t, h, newTool("t", nil), nil)
		t.Error("the call returned")
	})
}

func TestTimeoutLatePanicLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		release := make(chan struct{})
		h := middleware.Timeout(time.Second, &middleware.TimeoutOptions{Logger: logs.logger()})(
			mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				<-release
				panic("late boom")
			}))
		_, err := call(t, h, newTool("late", nil), nil)
		checkTimeoutError(t, err, "late")
		close(release)
		synctest.Wait()
		recs := logs.records(t)
		if len(recs) != 1 || recs[0]["panic"] != "late boom" || recs[0]["tool"] != "late" ||
			!strings.Contains(fmt.Sprint(recs[0]["stack"]), "timeout_test.go") {
			t.Errorf("log = %s", logs.String())
		}
	})
}

// TestTimeoutNoGoroutineLeak runs 1,000 timed-out calls and checks that
// every goroutine Timeout started has ended. The calls run in a synctest
// bubble, so no real time passes; the goroutines are counted outside it,
// where other tests' goroutines may still be winding down, hence the
// bounded wait for the count to settle.
func TestTimeoutNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	synctest.Test(t, func(t *testing.T) {
		h := middleware.Timeout(time.Second, nil)(waitCtx(time.Hour))
		req := mcpkittest.NewRequest(newTool("t", nil), nil)
		start := time.Now()
		for i := range 1000 {
			if _, err := h.ServeTool(t.Context(), req); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if d := time.Since(start); d != 1000*time.Second {
			t.Errorf("took %v of fake time, want 1000s", d)
		}
	})
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		runtime.Gosched()
	}
	if after > before {
		t.Errorf("%d goroutines before, %d after", before, after)
	}
}

func TestTimeoutEndToEnd(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		release := make(chan struct{})
		defer close(release)
		slow := func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			<-release // ignores its context
			return textResult("late"), nil
		}
		srv := newServer(t, []mcpkit.Middleware{middleware.MaskErrors(nil), middleware.Timeout(20*time.Millisecond, nil)},
			newTool("slow", slow), newTool("fine", ok))
		ts := connect(srv)

		res, err := ts.CallTool(t.Context(), "slow", nil)
		if err != nil {
			t.Fatal(err)
		}
		// A tool error with the limit in _meta, never a JSON-RPC error.
		if !res.IsError || resultText(t, res) != `tool "slow" timed out after 20ms` || mcpkit.ErrorClassOf(res) != mcpkit.Retryable ||
			res.Meta[middleware.MetaKeyTimeout] != 20.0 {
			t.Errorf("got %+v (class %q)", res, mcpkit.ErrorClassOf(res))
		}

		if res, err := ts.CallTool(t.Context(), "fine", nil); err != nil || resultText(t, res) != "ok" {
			t.Errorf("fine: %v, %v", res, err)
		}
	})
}

// TestTimeoutIdle checks the idle limit, on the fake clock: a tool that
// keeps reporting progress runs past it, up to the overall limit; one that
// goes quiet stops one idle limit after its last report, with an error that
// says so.
func TestTimeoutIdle(t *testing.T) {
	reporting := func(every, lasting time.Duration) mcpkit.HandlerFunc {
		return func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			for elapsed := time.Duration(0); elapsed < lasting; elapsed += every {
				select {
				case <-time.After(every):
					mcpkit.ReportProgress(ctx, float64(elapsed), 0, "")
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return text1("done"), nil
		}
	}
	for _, tt := range []struct {
		name      string
		limit     time.Duration
		handler   mcpkit.HandlerFunc
		wantAfter time.Duration
		wantErr   string // "" for success
	}{
		{"progress keeps it alive", 0, reporting(20*time.Second, 2*time.Minute), 2 * time.Minute, ""},
		{"quiet too long", 0, reporting(45*time.Second, time.Hour), 30 * time.Second, `tool "calc" timed out: no progress for 30s`},
		{"progress, but the overall limit", time.Minute, reporting(10*time.Second, time.Hour), time.Minute, `tool "calc" timed out after 1m0s`},
		{"quiet after a while", 0, func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			time.Sleep(20 * time.Second)
			mcpkit.ReportProgress(ctx, 1, 2, "half")
			<-ctx.Done()
			return nil, ctx.Err()
		}, 50 * time.Second, `tool "calc" timed out: no progress for 30s`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := middleware.Timeout(tt.limit, &middleware.TimeoutOptions{Idle: 30 * time.Second})(tt.handler)
				start := time.Now()
				res, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("calc", nil), nil))
				if took := time.Since(start); took != tt.wantAfter {
					t.Errorf("answered after %v, want %v", took, tt.wantAfter)
				}
				var te *middleware.TimeoutError
				switch {
				case tt.wantErr == "" && (err != nil || res == nil):
					t.Errorf("got %v, %v; want the result", res, err)
				case tt.wantErr != "" && (!errors.As(err, &te) || te.Error() != tt.wantErr):
					t.Errorf("got %v; want %q", err, tt.wantErr)
				}
			})
		})
	}
}
