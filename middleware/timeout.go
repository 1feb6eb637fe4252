package middleware

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// A TimeoutError reports that a tool did not answer within its time limit.
// It unwraps to [context.DeadlineExceeded] and its class is Retryable.
type TimeoutError struct {
	// Tool is the name of the tool that timed out.
	Tool string
	// Limit is the time the tool was given.
	Limit time.Duration

	// running is closed when the abandoned handler really returns.
	running <-chan struct{}
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("tool %q timed out after %v", e.Tool, e.Limit)
}

// Unwrap returns [context.DeadlineExceeded].
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// ErrorClass returns Retryable: the call may succeed later or with a
// smaller request.
func (e *TimeoutError) ErrorClass() mcpkit.ErrorClass { return mcpkit.Retryable }

// MetaKeyTimeout is the key, in the _meta of a timed-out call's result, of
// the time limit in milliseconds.
const MetaKeyTimeout = "io.github.mcpkit/timeoutMs"

// ResultMeta puts the time limit in the result's _meta under
// [MetaKeyTimeout].
func (e *TimeoutError) ResultMeta() mcp.Meta {
	return mcp.Meta{MetaKeyTimeout: e.Limit.Milliseconds()}
}

// Running returns a channel that is closed when the handler that timed out
// really returns, or nil when the handler had returned already.
func (e *TimeoutError) Running() <-chan struct{} { return e.running }

// abandonedError is the caller's own context error, returned while the
// handler goes on running.
type abandonedError struct {
	err     error
	running <-chan struct{}
}

func (e *abandonedError) Error() string            { return e.err.Error() }
func (e *abandonedError) Unwrap() error            { return e.err }
func (e *abandonedError) Running() <-chan struct{} { return e.running }

// TimeoutOptions configures [Timeout]. A nil *TimeoutOptions means the
// defaults.
type TimeoutOptions struct {
	// Logger receives the panics of handlers that panic after their
	// deadline, when nobody is waiting for them any more. Nil means no
	// logging.
	Logger *slog.Logger
}

// Timeout returns a Middleware that limits the time the rest of the chain
// has for a call to d. A zero or negative d means no limit: the middleware
// adds no layer. For a limit that differs per tool, select tools with
// [mcpkit.ForTools].
//
// The rest of the chain runs on a goroutine of its own, with a context that
// is cancelled at the deadline. The caller gets its answer at the deadline
// even if the handler ignores its context: a [*mcpkit.ToolError] of class
// Retryable wrapping a [*TimeoutError], so the client sees a result with
// isError set, the text `tool "name" timed out after 2s` (never masked) and
// the limit in its _meta under [MetaKeyTimeout].
//
// A handler that overruns keeps running until it returns, since Go cannot
// stop a goroutine: its result or error is dropped, and a panic it raises
// then is recovered and logged to [TimeoutOptions.Logger]. A
// [ConcurrencyLimit] outside Timeout keeps the overrunning call's slot until
// the handler really returns, so that runaways count against the limit. An
// error the handler returns once its deadline has passed (typically its
// context's error) is replaced by the timeout error. A panic before the
// deadline is raised again on the caller's goroutine, as a
// [*mcpkit.PanicError] holding the original value and stack, for [Recover]
// to catch. When the caller's own context ends first (the client cancelled
// the call), Timeout returns that context's error at once.
//
// Timeout belongs inside the rate and concurrency limits, so that time
// spent waiting for a slot does not count, and outside size limits;
// [Recover] must be outside it to catch re-raised panics.
func Timeout(d time.Duration, opts *TimeoutOptions) mcpkit.Middleware {
	var logger *slog.Logger
	if opts != nil {
		logger = opts.Logger
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		if d <= 0 {
			return next
		}
		return &timeoutHandler{limit: d, logger: logger, next: next}
	}
}

type timeoutHandler struct {
	limit  time.Duration
	logger *slog.Logger
	next   mcpkit.Handler
}

// LayerSettings shows the time limit in the server's Pipeline, as a cap:
// a longer Timeout inside this one never fires.
func (h *timeoutHandler) LayerSettings() []mcpkit.Setting {
	return []mcpkit.Setting{{Name: "timeout", Value: h.limit.String(), Cap: int64(h.limit)}}
}

// The states of a timeoutCall: the handler's goroutine moves it from
// running to finished, the caller from running to abandoned; whichever moves
// first decides who owns the outcome.
const (
	running int32 = iota
	finished
	abandoned
)

// timeoutCall is one call running on its own goroutine. It is not pooled:
// a channel made in one synctest bubble must not be used in another, and
// users test their servers with synctest.
type timeoutCall struct {
	h     *timeoutHandler
	ctx   context.Context
	req   *mcpkit.Request
	state atomic.Int32
	done  chan struct{} // closed when the goroutine moves state to finished
	res   *mcp.CallToolResult
	err   error
	panic *mcpkit.PanicError
	// gone is closed when an abandoned call's handler returns; set by the
	// caller before it abandons the call.
	gone chan struct{}
}

func (h *timeoutHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tctx, cancel := context.WithTimeout(ctx, h.limit)
	defer cancel()
	c := &timeoutCall{h: h, ctx: tctx, req: req, done: make(chan struct{})}
	go c.run()

	select {
	case <-c.done:
	case <-tctx.Done():
		gone := make(chan struct{})
		c.gone = gone
		if c.state.CompareAndSwap(running, abandoned) {
			if err := ctx.Err(); err != nil {
				return nil, &abandonedError{err: err, running: gone}
			}
			return nil, &mcpkit.ToolError{Err: &TimeoutError{Tool: req.Tool.Name, Limit: h.limit, running: gone}, Class: mcpkit.Retryable}
		}
		<-c.done // the handler finished just now; its outcome is ready
	}
	res, err := c.res, c.err
	if c.panic != nil {
		panic(c.panic)
	}
	if err != nil && ctx.Err() == nil && tctx.Err() != nil {
		return nil, &mcpkit.ToolError{Err: &TimeoutError{Tool: req.Tool.Name, Limit: h.limit}, Class: mcpkit.Retryable}
	}
	return res, err
}

// run calls the rest of the chain and hands the outcome to the caller, or,
// if the caller has left, drops it.
func (c *timeoutCall) run() {
	defer func() {
		if v := recover(); v != nil {
			c.panic = mcpkit.NewPanicError(v)
		}
		if c.state.CompareAndSwap(running, finished) {
			close(c.done)
			return
		}
		if c.panic != nil && c.h.logger != nil {
			logPanic(c.ctx, c.h.logger, "tool panicked after its timeout", c.req, c.panic)
		}
		close(c.gone)
	}()
	c.res, c.err = c.h.next.ServeTool(c.ctx, c.req)
}
