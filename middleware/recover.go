package middleware

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// RecoverOptions configures [Recover]. A nil *RecoverOptions means the
// defaults.
type RecoverOptions struct {
	// Logger receives each recovered panic, with its value and stack, at
	// level Error. Nil means no logging (as under [Recommended], where
	// [Logging] records the panic, stack included, in its one record).
	Logger *slog.Logger

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
// anything. The value and the stack of the panicking goroutine are readable
// by outer middleware as a [*mcpkit.PanicError] with errors.As (see
// [mcpkit.NewPanicError]); a panic re-raised by [Timeout] keeps the stack of
// the handler's goroutine.
//
// The returned error is a [*mcpkit.ToolError] of class Fatal whose text is
// the generic one and whose chain holds the [*mcpkit.PanicError]: being a
// tool error, it is never masked or turned into a JSON-RPC error, whatever
// the panic value was.
//
// Recover serves prompts and resources too: a panic serving a prompts/get
// becomes the JSON-RPC error -32603 `internal error in prompt "name"`,
// class Fatal in its data, and one serving a resources/read `internal
// error in resource "uri"` (the template's text, for a template). It is
// logged, but OnPanic, which takes a tool's request, is not called for
// it.
//
// Recover belongs near the outside of a chain, inside [Logging] and outside
// everything else, so that it also catches panics in middleware.
func Recover(opts *RecoverOptions) mcpkit.Middleware {
	r := &recoverer{}
	if opts != nil {
		r.logger, r.onPanic = opts.Logger, opts.OnPanic
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		return &recoverHandler{r: r, next: next, prompts: promptsOf(next), resources: resourcesOf(next)}
	}
}

type recoverer struct {
	logger  *slog.Logger
	onPanic func(context.Context, *mcpkit.Request, *mcpkit.PanicError)
}

type recoverHandler struct {
	r         *recoverer
	next      mcpkit.Handler
	prompts   mcpkit.PromptHandler
	resources mcpkit.ResourceHandler
}

func (h *recoverHandler) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (res *mcp.ReadResourceResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			p := mcpkit.NewPanicError(v)
			name := resourceName(req)
			if h.r.logger != nil {
				logTargetPanic(ctx, h.r.logger, "resource panicked", mcpkit.KindResource, name, p)
			}
			res, err = nil, &mcpkit.ToolError{Err: &recoveredError{tool: name, kind: mcpkit.KindResource, panic: p}, Class: mcpkit.Fatal}
		}
	}()
	return h.resources.ServeResource(ctx, req)
}

func (h *recoverHandler) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (res *mcp.GetPromptResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			p := mcpkit.NewPanicError(v)
			if h.r.logger != nil {
				logTargetPanic(ctx, h.r.logger, "prompt panicked", mcpkit.KindPrompt, req.Prompt.Name, p)
			}
			res, err = nil, &mcpkit.ToolError{Err: &recoveredError{tool: req.Prompt.Name, kind: mcpkit.KindPrompt, panic: p}, Class: mcpkit.Fatal}
		}
	}()
	return h.prompts.ServePrompt(ctx, req)
}

func (h *recoverHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, h.r.recovered(ctx, req, mcpkit.NewPanicError(v))
		}
	}()
	return h.next.ServeTool(ctx, req)
}

// recovered logs and reports the panic p.
func (r *recoverer) recovered(ctx context.Context, req *mcpkit.Request, p *mcpkit.PanicError) error {
	if r.logger != nil {
		logPanic(ctx, r.logger, "tool panicked", req, p)
	}
	if r.onPanic != nil {
		r.onPanic(ctx, req, p)
	}
	return &mcpkit.ToolError{Err: &recoveredError{tool: req.Tool.Name, panic: p}, Class: mcpkit.Fatal}
}

// logPanic writes one record for a panic, with its value and stack.
func logPanic(ctx context.Context, logger *slog.Logger, msg string, req *mcpkit.Request, p *mcpkit.PanicError) {
	logger.LogAttrs(ctx, slog.LevelError, msg,
		slog.String("tool", req.Tool.Name),
		slog.String("version", req.Tool.Version),
		slog.String("panic", fmt.Sprint(p.Value)),
		slog.String("stack", string(p.Stack)))
}

// logTargetPanic is logPanic for a prompt or a resource (of kind k)
// called name.
func logTargetPanic(ctx context.Context, logger *slog.Logger, msg string, k mcpkit.Kind, name string, p *mcpkit.PanicError) {
	logger.LogAttrs(ctx, slog.LevelError, msg,
		slog.String(k.String(), name),
		slog.String("panic", fmt.Sprint(p.Value)),
		slog.String("stack", string(p.Stack)))
}

// recoveredError hides a panic behind a generic text.
type recoveredError struct {
	tool  string // the tool's name, the prompt's, or the resource's URI
	kind  mcpkit.Kind
	panic *mcpkit.PanicError
}

func (e *recoveredError) Error() string {
	return fmt.Sprintf("internal error in %v %q", e.kind, e.tool)
}
func (e *recoveredError) Unwrap() error { return e.panic }
