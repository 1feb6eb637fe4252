package middleware

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// CodeTimeout is the JSON-RPC error code of a timeout when
// [TimeoutOptions.ProtocolError] is set: -32000, the first code of the
// range JSON-RPC leaves to servers.
const CodeTimeout = -32000

// A TimeoutError reports that a tool did not answer within its time limit.
// It unwraps to [context.DeadlineExceeded] and its class is Retryable.
type TimeoutError struct {
	// Tool is the name of the tool that timed out.
	Tool string
	// Limit is the time the tool was given.
	Limit time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("tool %q timed out after %v", e.Tool, e.Limit)
}

// Unwrap returns [context.DeadlineExceeded].
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// ErrorClass returns Retryable: the call may succeed later or with a
// smaller request.
func (e *TimeoutError) ErrorClass() mcpkit.ErrorClass { return mcpkit.Retryable }

// TimeoutOptions configures [Timeout]. A nil *TimeoutOptions means the
// defaults.
type TimeoutOptions struct {
	// PerTool, if set, returns the time limit of a tool, overriding the
	// server-wide one: zero means the server-wide limit, a negative
	// duration means no limit for that tool. See [ByName].
	PerTool func(*mcpkit.Tool) time.Duration

	// ProtocolError makes a timeout reach the client as the JSON-RPC error
	// [CodeTimeout] with the [TimeoutError]'s text, instead of a result
	// with isError set.
	ProtocolError bool

	// Logger receives the panics of handlers that panic after their
	// deadline, when nobody is waiting for them any more. Nil means no
	// logging.
	Logger *slog.Logger
}

// Timeout returns a Middleware that limits the time the rest of the chain
// has for a call to d, or to what opts.PerTool says for the tool. A zero or
// negative limit means none: the call passes through untouched.
//
// The rest of the chain runs on a goroutine of its own, with a context that
// is cancelled at the deadline. The caller gets its answer at the deadline
// even if the handler ignores its context: an error that is, by default, a
// [*mcpkit.ToolError] of class Retryable wrapping a [*TimeoutError], so the
// client sees a result with isError set and the text
// `tool "name" timed out after 2s`, never masked. With
// [TimeoutOptions.ProtocolError] it is a JSON-RPC error [CodeTimeout]
// instead; its chain holds the [*TimeoutError] too.
//
// A handler that overruns keeps running until it returns, since Go cannot
// stop a goroutine: its result or error is dropped, and a panic it raises
// then is recovered and logged to [TimeoutOptions.Logger]. An error the
// handler returns once its deadline has passed (typically its context's
// error) is replaced by the timeout error. A panic before the deadline is
// raised again on the caller's goroutine, as a [*mcpkit.PanicError] holding
// the original value and stack, for [Recover] to catch. When the caller's
// own context ends first (the client cancelled the call), Timeout returns
// that context's error at once.
//
// Timeout belongs inside the rate and concurrency limits, so that time
// spent waiting for a slot does not count, and outside size limits and
// validation; [Recover] must be outside it to catch re-raised panics.
func Timeout(d time.Duration, opts *TimeoutOptions) mcpkit.Middleware {
	var o TimeoutOptions
	if opts != nil {
		o = *opts
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		h := &timeoutHandler{limit: d, perTool: o.PerTool, protocolError: o.ProtocolError, logger: o.Logger, next: next}
		if l, ok := resolvePerTool(next, o.PerTool); ok {
			if l != 0 {
				h.limit = l
			}
			h.perTool = nil
		}
		if h.limit <= 0 && h.perTool == nil {
			return next
		}
		return h
	}
}

type timeoutHandler struct {
	limit         time.Duration
	perTool       func(*mcpkit.Tool) time.Duration // nil once resolved
	protocolError bool
	logger        *slog.Logger
	next          mcpkit.Handler
}

// The states of a timeoutCall: the handler's goroutine moves it from
// running to finished, the caller from running to abandoned; whichever moves
// first decides who owns the outcome.
const (
	running int32 = iota
	finished
	abandoned
)

// timeoutCall is one call running on its own goroutine.
type timeoutCall struct {
	state atomic.Int32
	done  chan struct{} // closed when the goroutine moves state to finished
	res   *mcp.CallToolResult
	err   error
	panic *mcpkit.PanicError
}

func (h *timeoutHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	limit := h.limit
	if h.perTool != nil {
		if l := h.perTool(req.Tool); l != 0 {
			limit = l
		}
	}
	if limit <= 0 {
		return h.next.ServeTool(ctx, req)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	tctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c := &timeoutCall{done: make(chan struct{})}
	go c.run(tctx, h, req)

	select {
	case <-c.done:
	case <-tctx.Done():
		if c.state.CompareAndSwap(running, abandoned) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, h.timeoutError(req, limit)
		}
		<-c.done // the handler finished just now; its outcome is ready
	}
	if c.panic != nil {
		panic(c.panic)
	}
	if c.err != nil && ctx.Err() == nil && tctx.Err() != nil {
		return nil, h.timeoutError(req, limit)
	}
	return c.res, c.err
}

// run calls the rest of the chain and hands the outcome to the caller, or,
// if the caller has left, drops it.
func (c *timeoutCall) run(ctx context.Context, h *timeoutHandler, req *mcpkit.Request) {
	defer func() {
		if v := recover(); v != nil {
			p, ok := v.(*mcpkit.PanicError)
			if !ok {
				p = &mcpkit.PanicError{Value: v, Stack: debug.Stack()}
			}
			c.panic = p
		}
		if c.state.CompareAndSwap(running, finished) {
			close(c.done)
			return
		}
		if c.panic != nil && h.logger != nil {
			h.logger.LogAttrs(ctx, slog.LevelError, "tool panicked after its timeout",
				slog.String("tool", toolName(req)),
				slog.String("version", toolVersion(req)),
				slog.String("panic", fmt.Sprint(c.panic.Value)),
				slog.String("stack", string(c.panic.Stack)))
		}
	}()
	c.res, c.err = h.next.ServeTool(ctx, req)
}

func (h *timeoutHandler) timeoutError(req *mcpkit.Request, limit time.Duration) error {
	te := &TimeoutError{Tool: toolName(req), Limit: limit}
	if h.protocolError {
		return &timeoutProtocolError{timeout: te, wire: &jsonrpc.Error{Code: CodeTimeout, Message: te.Error()}}
	}
	return &mcpkit.ToolError{Err: te, Class: mcpkit.Retryable}
}

// timeoutProtocolError is a timeout sent as a JSON-RPC error; errors.As
// finds both the *TimeoutError and the *jsonrpc.Error in it.
type timeoutProtocolError struct {
	timeout *TimeoutError
	wire    *jsonrpc.Error
}

func (e *timeoutProtocolError) Error() string   { return e.wire.Message }
func (e *timeoutProtocolError) Unwrap() []error { return []error{e.timeout, e.wire} }
