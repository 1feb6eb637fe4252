package middleware

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// RecoverOptions configures [Recover]. A nil *RecoverOptions means the
// defaults.
type RecoverOptions struct {
	// OnPanic, if set, is called with every recovered panic, after it has
	// been logged, on the goroutine of the call (for metrics or alerts).
	// It must not panic.
	OnPanic func(ctx context.Context, req *mcpkit.Request, p *mcpkit.PanicError)
}

// Recover returns a Middleware that turns a panic in the rest of the chain
// into an error, so that one faulty tool cannot take the server down and
// the middleware outside Recover still see the call end.
//
// The client gets a result with isError set, class Fatal and the text
// `internal error in tool "name"`: never the panic value, which may hold
// anything. The value and the stack of the panicking goroutine go to logger
// (nil means no logging) and are readable by outer middleware as a
// [*mcpkit.PanicError] with errors.As. A [*mcpkit.PanicError] raised as a
// panic value (as [Timeout] does with a panic it carries over from the
// handler's goroutine) is used as is, keeping its original stack.
//
// The returned error is a [*mcpkit.ToolError] of class Fatal whose text is
// the generic one and whose chain holds the [*mcpkit.PanicError]: being a
// tool error, it is never masked or turned into a JSON-RPC error, whatever
// the panic value was (a panic(err) with a JSON-RPC error would otherwise
// reach the client as that error).
//
// Recover belongs near the outside of a chain, inside [Logging] and outside
// everything else, so that it also catches panics in middleware.
func Recover(logger *slog.Logger, opts *RecoverOptions) mcpkit.Middleware {
	r := &recoverer{logger: logger}
	if opts != nil {
		r.onPanic = opts.OnPanic
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		return &recoverHandler{r: r, next: next}
	}
}

type recoverer struct {
	logger  *slog.Logger
	onPanic func(context.Context, *mcpkit.Request, *mcpkit.PanicError)
}

type recoverHandler struct {
	r    *recoverer
	next mcpkit.Handler
}

func (h *recoverHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, h.r.recovered(ctx, req, v)
		}
	}()
	return h.next.ServeTool(ctx, req)
}

// recovered logs and reports the panic v. It is called by the deferred
// function that recovered v, so the panicking goroutine's frames are still
// on the stack for debug.Stack.
func (r *recoverer) recovered(ctx context.Context, req *mcpkit.Request, v any) error {
	p, ok := v.(*mcpkit.PanicError)
	if !ok {
		p = &mcpkit.PanicError{Value: v, Stack: debug.Stack()}
	}
	if r.logger != nil {
		r.logger.LogAttrs(ctx, slog.LevelError, "tool panicked",
			slog.String("tool", toolName(req)),
			slog.String("version", toolVersion(req)),
			slog.String("panic", fmt.Sprint(p.Value)),
			slog.String("stack", string(p.Stack)))
	}
	if r.onPanic != nil {
		r.onPanic(ctx, req, p)
	}
	return &mcpkit.ToolError{Err: &recoveredError{tool: toolName(req), panic: p}, Class: mcpkit.Fatal}
}

// recoveredError hides a panic behind a generic text.
type recoveredError struct {
	tool  string
	panic *mcpkit.PanicError
}

func (e *recoveredError) Error() string { return fmt.Sprintf("internal error in tool %q", e.tool) }
func (e *recoveredError) Unwrap() error { return e.panic }
