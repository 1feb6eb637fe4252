package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// A TimeoutError reports that a tool (or a prompt) did not answer within
// its time limit. It unwraps to [context.DeadlineExceeded] and its class is
// Retryable.
type TimeoutError struct {
	// Tool is the name of the tool that timed out, of the prompt when
	// Kind is [mcpkit.KindPrompt], or the URI of the resource (the text
	// of the template) when Kind is [mcpkit.KindResource].
	Tool string
	// Kind is what timed out: a tool (the zero value), a prompt or a
	// resource.
	Kind mcpkit.Kind
	// Limit is the time the tool was given: in all, or, when Idle is set,
	// without reporting progress.
	Limit time.Duration
	// Idle is set when the tool went Limit without reporting progress
	// (see [TimeoutOptions.Idle]).
	Idle bool

	// running is closed when the abandoned handler really returns.
	running <-chan struct{}
}

func (e *TimeoutError) Error() string {
	if e.Idle {
		return fmt.Sprintf("%v %q timed out: no progress for %v", e.Kind, e.Tool, e.Limit)
	}
	return fmt.Sprintf("%v %q timed out after %v", e.Kind, e.Tool, e.Limit)
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

	// Idle, if positive, is the longest a call may go without reporting
	// progress ([mcpkit.ReportProgress]), counted from its start and from
	// each report: a long tool that keeps reporting runs on, up to the
	// overall limit, and one that goes quiet stops. It applies with a zero
	// overall limit too.
	Idle time.Duration
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
// Timeout serves prompts and resources too, alike: a prompts/get past the
// limit is answered with the JSON-RPC error -32603 `prompt "name" timed
// out after 2s`, a resources/read with `resource "uri" timed out after
// 2s`, its class and limit in the error's data.
//
// Timeout belongs inside the rate and concurrency limits, so that time
// spent waiting for a slot does not count, and outside size limits;
// [Recover] must be outside it to catch re-raised panics.
func Timeout(d time.Duration, opts *TimeoutOptions) mcpkit.Middleware {
	var o TimeoutOptions
	if opts != nil {
		o = *opts
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		if d <= 0 && o.Idle <= 0 {
			return next
		}
		return &timeoutHandler{limit: d, idle: o.Idle, logger: o.Logger, next: next, prompts: promptsOf(next), resources: resourcesOf(next)}
	}
}

type timeoutHandler struct {
	limit     time.Duration // <= 0: none
	idle      time.Duration // <= 0: none
	logger    *slog.Logger
	next      mcpkit.Handler
	prompts   mcpkit.PromptHandler
	resources mcpkit.ResourceHandler
}

// LayerSettings shows the time limits in the server's Pipeline; the overall
// one is a cap: a longer Timeout inside this one never fires.
func (h *timeoutHandler) LayerSettings() []mcpkit.Setting {
	var s []mcpkit.Setting
	if h.limit > 0 {
		s = append(s, mcpkit.Setting{Name: "timeout", Value: h.limit.String(), Cap: int64(h.limit)})
	}
	if h.idle > 0 {
		s = append(s, mcpkit.Setting{Name: "idle", Value: h.idle.String()})
	}
	return s
}

// errIdle is the cause of a call's context that went its idle limit
// without progress.
var errIdle = errors.New("middleware: no progress within the idle limit")

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
	req   *mcpkit.Request         // a tool's call, or
	preq  *mcpkit.PromptRequest   // a prompt's, or
	rreq  *mcpkit.ResourceRequest // a resource's
	state atomic.Int32
	done  chan struct{} // closed when the goroutine moves state to finished
	res   *mcp.CallToolResult
	pres  *mcp.GetPromptResult
	rres  *mcp.ReadResourceResult
	err   error
	panic *mcpkit.PanicError
	// gone is closed when an abandoned call's handler returns; set by the
	// caller before it abandons the call.
	gone chan struct{}
}

func (h *timeoutHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	c := &timeoutCall{h: h, req: req}
	if err := h.run(ctx, c); err != nil {
		return nil, err
	}
	return c.res, c.err
}

func (h *timeoutHandler) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	c := &timeoutCall{h: h, preq: req}
	if err := h.run(ctx, c); err != nil {
		return nil, err
	}
	return c.pres, c.err
}

func (h *timeoutHandler) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	c := &timeoutCall{h: h, rreq: req}
	if err := h.run(ctx, c); err != nil {
		return nil, err
	}
	return c.rres, c.err
}

// run runs c on a goroutine of its own within the limits, and returns the
// error that replaces its outcome, if any; a panic of c is raised again.
func (h *timeoutHandler) run(ctx context.Context, c *timeoutCall) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var tctx context.Context
	var cancel context.CancelFunc
	if h.limit > 0 {
		tctx, cancel = context.WithTimeout(ctx, h.limit)
	} else {
		tctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	if h.idle > 0 {
		ictx, icancel := context.WithCancelCause(tctx)
		defer icancel(nil)
		quiet := time.AfterFunc(h.idle, func() { icancel(errIdle) })
		defer quiet.Stop()
		tctx = mcpkit.WatchProgress(ictx, func(float64, float64, string) { quiet.Reset(h.idle) })
	}
	c.ctx, c.done = tctx, make(chan struct{})
	go c.run()

	select {
	case <-c.done:
	case <-tctx.Done():
		gone := make(chan struct{})
		c.gone = gone
		if c.state.CompareAndSwap(running, abandoned) {
			if err := ctx.Err(); err != nil {
				return &abandonedError{err: err, running: gone}
			}
			te := h.timeoutError(tctx, c)
			te.running = gone
			return &mcpkit.ToolError{Err: te, Class: mcpkit.Retryable}
		}
		<-c.done // the handler finished just now; its outcome is ready
	}
	if c.panic != nil {
		panic(c.panic)
	}
	if c.err != nil && ctx.Err() == nil && tctx.Err() != nil {
		return &mcpkit.ToolError{Err: h.timeoutError(tctx, c), Class: mcpkit.Retryable}
	}
	return nil
}

// timeoutError says which limit ended the call c of tctx.
func (h *timeoutHandler) timeoutError(tctx context.Context, c *timeoutCall) *TimeoutError {
	te := &TimeoutError{Limit: h.limit}
	switch {
	case c.preq != nil:
		te.Tool, te.Kind = c.preq.Prompt.Name, mcpkit.KindPrompt
	case c.rreq != nil:
		te.Tool, te.Kind = resourceName(c.rreq), mcpkit.KindResource
	default:
		te.Tool = c.req.Tool.Name
	}
	if errors.Is(context.Cause(tctx), errIdle) {
		te.Limit, te.Idle = h.idle, true
	}
	return te
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
			switch {
			case c.preq != nil:
				logTargetPanic(c.ctx, c.h.logger, "prompt panicked after its timeout", mcpkit.KindPrompt, c.preq.Prompt.Name, c.panic)
			case c.rreq != nil:
				logTargetPanic(c.ctx, c.h.logger, "resource panicked after its timeout", mcpkit.KindResource, resourceName(c.rreq), c.panic)
			default:
				logPanic(c.ctx, c.h.logger, "tool panicked after its timeout", c.req, c.panic)
			}
		}
		close(c.gone)
	}()
	switch {
	case c.preq != nil:
		c.pres, c.err = c.h.prompts.ServePrompt(c.ctx, c.preq)
		return
	case c.rreq != nil:
		c.rres, c.err = c.h.resources.ServeResource(c.ctx, c.rreq)
		return
	}
	c.res, c.err = c.h.next.ServeTool(c.ctx, c.req)
}
