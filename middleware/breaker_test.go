package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// scripted answers each call as the outcome it is given says.
func scripted(ctx context.Context, outcome string, cancel context.CancelFunc) (*mcp.CallToolResult, error) {
	switch outcome {
	case "ok":
		return textResult("ok"), nil
	case "fault":
		return nil, errors.New("db: connection refused")
	case "panic":
		panic("boom")
	case "timeout":
		return nil, &mcpkit.ToolError{Err: &middleware.TimeoutError{Tool: "t", Limit: time.Second}, Class: mcpkit.Retryable}
	case "tool error":
		return nil, mcpkit.ToolErrorf("no such city")
	case "invalid":
		return nil, &mcpkit.ToolError{Err: &mcpkit.ValidationError{Tool: "t", Issues: []mcpkit.ValidationIssue{{Path: "city", Message: "want string"}}}}
	case "isError":
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "not found"}}}, nil
	case "protocol":
		return nil, mcpkit.NewProtocolError(-32602, "unknown tool")
	case "cancelled":
		cancel()
		return nil, errors.Join(errors.New("db: query cancelled"), ctx.Err())
	}
	panic("unknown outcome " + outcome)
}

type transition struct {
	key      string
	from, to middleware.CircuitState
}

func (tr transition) String() string { return fmt.Sprintf("%s:%v->%v", tr.key, tr.from, tr.to) }

// recorder collects state changes.
type recorder struct {
	mu  sync.Mutex
	got []transition
}

func (r *recorder) hook(key string, from, to middleware.CircuitState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, transition{key, from, to})
}

func (r *recorder) changes() []transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// checkOpen checks that err is the rejection of an open circuit, with the
// given delay (zero: none known).
func checkOpen(t *testing.T, err error, tool string, retry time.Duration) {
	t.Helper()
	var te *mcpkit.ToolError
	var oe *middleware.CircuitOpenError
	if !errors.As(err, &te) || te.ErrorClass() != mcpkit.Retryable || !errors.Is(err, middleware.ErrCircuitOpen) || !errors.As(err, &oe) {
		t.Fatalf("got %v, want a retryable tool error wrapping a CircuitOpenError", err)
	}
	if oe.Tool != tool || oe.RetryAfter != retry {
		t.Errorf("got %+v, want tool %q, retry after %v", oe, tool, retry)
	}
}

func TestCircuitBreaker(t *testing.T) {
	type step struct {
		sleep   time.Duration // before the call
		outcome string        // what the handler does
		open    bool          // the call is rejected
		retry   time.Duration // with this delay
	}
	calls := func(outcome string, n int) []step {
		s := make([]step, n)
		for i := range s {
			s[i] = step{outcome: outcome}
		}
		return s
	}
	opts := &middleware.CircuitBreakerOptions{Window: 4, MinCalls: 4, Cooldown: time.Minute}
	const (
		closed   = middleware.CircuitClosed
		open     = middleware.CircuitOpen
		halfOpen = middleware.CircuitHalfOpen
	)
	tests := []struct {
		name  string
		opts  *middleware.CircuitBreakerOptions
		steps []step
		want  []middleware.CircuitState // the states gone through, after closed
	}{
		{
			name: "opens at the failure rate, once the window holds MinCalls",
			steps: []step{
				{outcome: "fault"}, {outcome: "fault"}, {outcome: "fault"}, // 3 of 3, under MinCalls
				{outcome: "ok"}, // 3 of 4
				{outcome: "ok", open: true, retry: time.Minute},
				{sleep: 59 * time.Second, outcome: "ok", open: true, retry: time.Second},
			},
			want: []middleware.CircuitState{open},
		},
		{
			name: "timeouts and panics count",
			steps: []step{
				{outcome: "timeout"}, {outcome: "panic"}, {outcome: "ok"}, {outcome: "ok"},
				{outcome: "ok", open: true, retry: time.Minute},
			},
			want: []middleware.CircuitState{open},
		},
		{
			name: "what the model caused, protocol errors and cancelled calls do not count",
			steps: slices.Concat(
				[]step{{outcome: "fault"}, {outcome: "fault"}},
				calls("tool error", 3), calls("invalid", 3), calls("isError", 3), calls("protocol", 3), calls("cancelled", 3),
				[]step{{outcome: "ok"}, {outcome: "ok"}}, // 2 of 4 fail
				[]step{{outcome: "ok", open: true, retry: time.Minute}},
			),
			want: []middleware.CircuitState{open},
		},
		{
			name: "the window slides",
			opts: &middleware.CircuitBreakerOptions{Window: 4, FailureRate: 0.75},
			steps: slices.Concat(
				calls("fault", 2), calls("ok", 3), // fault ok ok ok: 1 of 4
				calls("fault", 2), // ok ok fault fault: 2 of 4
				calls("ok", 1),    // ok fault fault ok
				calls("fault", 1), // fault fault ok fault: 3 of 4
				[]step{{outcome: "ok", open: true, retry: 30 * time.Second}},
			),
			want: []middleware.CircuitState{open},
		},
		{
			name: "a window full of successes still slides",
			steps: slices.Concat(
				calls("ok", 10), // after the fourth, successes change nothing
				calls("fault", 2),
				[]step{{outcome: "ok", open: true, retry: time.Minute}},
			),
			want: []middleware.CircuitState{open},
		},
		{
			name: "a successful trial closes, with an empty window",
			steps: slices.Concat(
				calls("fault", 4),
				[]step{{sleep: time.Minute, outcome: "ok"}},
				calls("fault", 3), // 3 of 3: under MinCalls, the 4 before forgotten
			),
			want: []middleware.CircuitState{open, halfOpen, closed},
		},
		{
			name: "a failed trial opens again",
			steps: slices.Concat(
				calls("fault", 4),
				[]step{
					{sleep: time.Minute, outcome: "timeout"},
					{outcome: "ok", open: true, retry: time.Minute},
					{sleep: time.Minute, outcome: "ok"},
				},
			),
			want: []middleware.CircuitState{open, halfOpen, open, halfOpen, closed},
		},
		{
			name: "a trial that does not count leaves it half-open",
			steps: slices.Concat(
				calls("fault", 4),
				[]step{{sleep: time.Minute, outcome: "tool error"}, {outcome: "cancelled"}, {outcome: "ok"}},
			),
			want: []middleware.CircuitState{open, halfOpen, closed},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := *opts
				if tt.opts != nil {
					o = *tt.opts
				}
				rec := &recorder{}
				o.OnStateChange = rec.hook
				var outcome string
				var cancel context.CancelFunc
				h := mcpkit.Chain(middleware.Recover(nil), middleware.CircuitBreaker(&o))(mcpkit.HandlerFunc(
					func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
						return scripted(ctx, outcome, cancel)
					}))
				for i, s := range tt.steps {
					time.Sleep(s.sleep)
					var ctx context.Context
					ctx, cancel = context.WithCancel(t.Context())
					outcome = s.outcome
					res, err := h.ServeTool(ctx, mcpkittest.NewRequest(newTool("t", nil), nil))
					cancel()
					if s.open {
						checkOpen(t, err, "t", s.retry)
						continue
					}
					if errors.Is(err, middleware.ErrCircuitOpen) {
						t.Fatalf("step %d (%s): rejected: %v", i, s.outcome, err)
					}
					if s.outcome == "ok" && (err != nil || resultText(t, res) != "ok") {
						t.Fatalf("step %d: %v, %v", i, res, err)
					}
				}
				var want []transition
				from := closed
				for _, to := range tt.want {
					want = append(want, transition{"t", from, to})
					from = to
				}
				if got := rec.changes(); !slices.Equal(got, want) {
					t.Errorf("changes %v, want %v", got, want)
				}
			})
		})
	}
}

// byArgument answers as its arguments say: "ok", "fault", or "block"
// (wait for g to open, then fail).
func byArgument(g *gate) mcpkit.HandlerFunc {
	return func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		switch string(req.Arguments) {
		case `"ok"`:
			return textResult("ok"), nil
		case `"block"`:
			g.started <- req.Tool.Name
			<-g.open
		}
		return nil, errors.New("down")
	}
}

// TestCircuitBreakerOneTrial checks that a half-open circuit lets one call
// through at a time, rejecting the others with no delay known.
func TestCircuitBreakerOneTrial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		rec := &recorder{}
		h := middleware.CircuitBreaker(&middleware.CircuitBreakerOptions{Window: 2, Cooldown: time.Second, OnStateChange: rec.hook})(byArgument(g))
		tool := newTool("t", nil)
		call(t, h, tool, "fault")
		call(t, h, tool, "fault")
		_, err := call(t, h, tool, "ok")
		checkOpen(t, err, "t", time.Second)

		time.Sleep(time.Second)
		trial := make(chan error, 1)
		go func() {
			_, err := call(t, h, tool, "block")
			trial <- err
		}()
		<-g.started
		for range 3 {
			_, err := call(t, h, tool, "ok")
			checkOpen(t, err, "t", 0)
			if want := `tool "t" is unavailable after repeated failures: try again later`; err.Error() != want {
				t.Errorf("text %q, want %q", err.Error(), want)
			}
		}
		close(g.open)
		if err := <-trial; err == nil {
			t.Fatal("the trial succeeded, want its failure")
		}
		_, err = call(t, h, tool, "ok")
		checkOpen(t, err, "t", time.Second) // opened again by the trial
		time.Sleep(time.Second)
		if res, err := call(t, h, tool, "ok"); err != nil || resultText(t, res) != "ok" {
			t.Fatalf("second trial: %v, %v", res, err)
		}
		want := []transition{
			{"t", middleware.CircuitClosed, middleware.CircuitOpen},
			{"t", middleware.CircuitOpen, middleware.CircuitHalfOpen},
			{"t", middleware.CircuitHalfOpen, middleware.CircuitOpen},
			{"t", middleware.CircuitOpen, middleware.CircuitHalfOpen},
			{"t", middleware.CircuitHalfOpen, middleware.CircuitClosed},
		}
		if got := rec.changes(); !slices.Equal(got, want) {
			t.Errorf("changes %v, want %v", got, want)
		}
	})
}

// TestCircuitBreakerStaleOutcome checks that a call let through before a
// change of state is not counted after it.
func TestCircuitBreakerStaleOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		rec := &recorder{}
		h := middleware.CircuitBreaker(&middleware.CircuitBreakerOptions{Window: 2, Cooldown: time.Second, OnStateChange: rec.hook})(byArgument(g))
		tool := newTool("t", nil)
		stale := make(chan error, 1)
		go func() {
			_, err := call(t, h, tool, "block") // let through while closed
			stale <- err
		}()
		<-g.started
		call(t, h, tool, "fault")
		call(t, h, tool, "fault") // open
		time.Sleep(time.Second)
		call(t, h, tool, "ok") // a trial: closed, an empty window
		close(g.open)
		<-stale                   // a fault from the first closed state
		call(t, h, tool, "fault") // 1 of 1: under MinCalls, if the stale fault is not counted
		if got := rec.changes(); len(got) != 3 {
			t.Errorf("changes %v, want closed->open->half-open->closed", got)
		}
	})
}

// TestCircuitBreakerPanic checks that a panic passing through the breaker
// is counted and raised again with its value, for Recover outside.
func TestCircuitBreakerPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mcpkit.Chain(middleware.Recover(nil), middleware.CircuitBreaker(&middleware.CircuitBreakerOptions{Window: 1}))(
			mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { panic("boom") }))
		_, err := call(t, h, newTool("t", nil), nil)
		var p *mcpkit.PanicError
		if !errors.As(err, &p) || p.Value != "boom" || !strings.Contains(string(p.Stack), "TestCircuitBreakerPanic") {
			t.Fatalf("got %v, want the recovered panic with its stack", err)
		}
		_, err = call(t, h, newTool("t", nil), nil)
		checkOpen(t, err, "t", middleware.DefaultCooldown)
	})
}

// TestCircuitBreakerKeys checks that circuits are per tool by default and
// per key with a Key.
func TestCircuitBreakerKeys(t *testing.T) {
	tests := []struct {
		name     string
		key      func(*mcpkit.Request) string
		other    string // a call of this tool, after "a" has opened its circuit,
		rejected bool   // is rejected
	}{
		{"per tool", nil, "b", false},
		{"per tool, same tool", nil, "a", true},
		{"one key", func(*mcpkit.Request) string { return "all" }, "b", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := middleware.CircuitBreaker(&middleware.CircuitBreakerOptions{Window: 1, Key: tt.key})(byArgument(nil))
			call(t, h, newTool("a", nil), "fault")
			_, err := call(t, h, newTool(tt.other, nil), "ok")
			if got := errors.Is(err, middleware.ErrCircuitOpen); got != tt.rejected {
				t.Errorf("rejected = %v (%v), want %v", got, err, tt.rejected)
			}
		})
	}
}

func TestCircuitBreakerInvalidOptions(t *testing.T) {
	for _, o := range []middleware.CircuitBreakerOptions{
		{FailureRate: 1.5}, {FailureRate: -0.1}, {Window: -1}, {MinCalls: -1}, {Cooldown: -time.Second},
	} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.HasPrefix(fmt.Sprint(v), "middleware: CircuitBreaker: ") {
					t.Errorf("%+v: recovered %v, want a prefixed panic", o, v)
				}
			}()
			middleware.CircuitBreaker(&o)
		}()
	}
}

func TestCircuitOpenError(t *testing.T) {
	tests := []struct {
		retry    time.Duration
		wantText string
		wantMeta any
	}{
		{30 * time.Second, `tool "search" is unavailable after repeated failures: try again in 30s`, int64(30000)},
		{1500*time.Millisecond + 1, `tool "search" is unavailable after repeated failures: try again in 1.501s`, int64(1501)},
		{0, `tool "search" is unavailable after repeated failures: try again later`, nil},
	}
	for _, tt := range tests {
		e := &middleware.CircuitOpenError{Tool: "search", RetryAfter: tt.retry}
		if e.Error() != tt.wantText {
			t.Errorf("text %q, want %q", e.Error(), tt.wantText)
		}
		if got := e.ResultMeta()[middleware.MetaKeyRetryAfter]; got != tt.wantMeta {
			t.Errorf("meta %v, want %v", got, tt.wantMeta)
		}
		if !errors.Is(e, middleware.ErrCircuitOpen) {
			t.Error("does not wrap ErrCircuitOpen")
		}
	}
	for s, want := range map[middleware.CircuitState]string{
		middleware.CircuitClosed: "closed", middleware.CircuitOpen: "open", middleware.CircuitHalfOpen: "half-open", 7: "CircuitState(7)",
	} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(s), s.String(), want)
		}
	}
}

// TestCircuitBreakerEndToEnd checks what a client sees once a tool's
// dependency fails: its internal errors (masked), then, once the circuit
// is open, a retryable rejection with the delay in _meta, while another
// tool still answers; and, over the full cycle in memory, that a trial
// after the cooldown closes the circuit again.
func TestCircuitBreakerEndToEnd(t *testing.T) {
	newSrv := func(t testing.TB, down *bool) *mcpkit.Server {
		return newServer(t, []mcpkit.Middleware{
			middleware.Recover(nil),
			middleware.MaskErrors(nil),
			middleware.CircuitBreaker(&middleware.CircuitBreakerOptions{Window: 3, Cooldown: time.Minute}),
			middleware.Timeout(time.Second, nil),
		}, newTool("search", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			if *down {
				return nil, errors.New("search backend: connection refused")
			}
			return textResult("3 results"), nil
		}), newTool("status", ok))
	}
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		down := true
		ts := connect(newSrv(t, &down))
		for range 3 {
			res, err := ts.CallTool(t.Context(), "search", nil)
			if err != nil || !res.IsError || resultText(t, res) != `error calling tool "search"` {
				t.Fatalf("a failing call: %v, %+v", err, res)
			}
		}
		res, err := ts.CallTool(t.Context(), "search", nil)
		if err != nil {
			t.Fatal(err)
		}
		ms, _ := res.Meta[middleware.MetaKeyRetryAfter].(float64) // as JSON decodes it
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || ms <= 0 || ms > 60000 ||
			!strings.HasPrefix(resultText(t, res), `tool "search" is unavailable after repeated failures: try again in `) {
			t.Errorf("an open circuit: %+v (meta %v)", res, res.Meta)
		}
		if res, err := ts.CallTool(t.Context(), "status", nil); err != nil || resultText(t, res) != "ok" {
			t.Errorf("another tool: %v, %+v", err, res)
		}
	})
	t.Run("cycle", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			down := true
			ts := mcpkittest.NewInMemoryServer(t, newSrv(t, &down), nil)
			for range 3 {
				ts.CallTool(t.Context(), "search", nil)
			}
			time.Sleep(59 * time.Second)
			res, err := ts.CallTool(t.Context(), "search", nil)
			if err != nil || res.Meta[middleware.MetaKeyRetryAfter] != float64(1000) {
				t.Fatalf("a second before the trial: %v, %+v", err, res)
			}
			time.Sleep(time.Second)
			down = false
			if res, err := ts.CallTool(t.Context(), "search", nil); err != nil || resultText(t, res) != "3 results" {
				t.Errorf("the trial: %v, %+v", err, res)
			}
			ts.Close()
		})
	})
}
