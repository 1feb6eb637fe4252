package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// MaskErrorsOptions configures [MaskErrors]. A nil *MaskErrorsOptions means
// the defaults.
type MaskErrorsOptions struct {
	// Logger receives every error that is masked, with its real text, at
	// level Error. Nil means no logging.
	Logger *slog.Logger
}

// MaskErrors returns a Middleware that hides the text of internal errors
// from clients, which would otherwise see the text of any error a handler
// returns (connection strings, file paths, SQL).
//
// An error is masked when [mcpkit.Classify] calls it an internal error
// (OutcomeError); the rest were meant for the client and pass unchanged:
// tool errors (validation errors, timeouts and limit rejections are all tool
// errors), JSON-RPC errors and recovered panics (whose text is generic
// already). A masked error reaches the client as a result with isError set and the
// text `error calling tool "name"`; its class is kept, and nothing else of the original reaches the client
// (not its text, not its _meta). The returned error
// wraps the original, so outer middleware still reach it with errors.Is and
// errors.As, and [Logging] logs its real text. A result the handler returned
// itself, with isError set, is the handler's own answer and passes
// unchanged.
//
// MaskErrors serves prompts and resources too: an internal error serving a
// prompts/get reaches the client as the JSON-RPC error -32603 with the
// text `error getting prompt "name"`, one serving a resources/read with
// `error reading resource "uri"` (the template's text, for a template).
//
// MaskErrors belongs inside [Logging] and [Recover] and outside everything
// that produces errors: limits, [Timeout], validation and the handler.
func MaskErrors(opts *MaskErrorsOptions) mcpkit.Middleware {
	var logger *slog.Logger
	if opts != nil {
		logger = opts.Logger
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		return &maskHandler{logger: logger, next: next, prompts: promptsOf(next), resources: resourcesOf(next)}
	}
}

type maskHandler struct {
	logger    *slog.Logger
	next      mcpkit.Handler
	prompts   mcpkit.PromptHandler
	resources mcpkit.ResourceHandler
}

func (h *maskHandler) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	res, err := h.resources.ServeResource(ctx, req)
	if err == nil || !maskable(err) {
		return res, err
	}
	name := resourceName(req)
	if h.logger != nil {
		h.logger.LogAttrs(ctx, slog.LevelError, "resource error masked",
			slog.String("resource", name),
			slog.String("error", err.Error()))
	}
	return nil, &maskedError{tool: name, kind: mcpkit.KindResource, err: err}
}

func (h *maskHandler) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	res, err := h.prompts.ServePrompt(ctx, req)
	if err == nil || !maskable(err) {
		return res, err
	}
	if h.logger != nil {
		h.logger.LogAttrs(ctx, slog.LevelError, "prompt error masked",
			slog.String("prompt", req.Prompt.Name),
			slog.String("error", err.Error()))
	}
	return nil, &maskedError{tool: req.Prompt.Name, kind: mcpkit.KindPrompt, err: err}
}

func (h *maskHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	res, err := h.next.ServeTool(ctx, req)
	if err == nil || !maskable(err) {
		return res, err
	}
	if h.logger != nil {
		h.logger.LogAttrs(ctx, slog.LevelError, "tool error masked",
			slog.String("tool", req.Tool.Name),
			slog.String("version", req.Tool.Version),
			slog.String("error", err.Error()))
	}
	return nil, &maskedError{tool: req.Tool.Name, err: err}
}

// maskable reports whether err is an internal error, one whose text the
// client must not see, that has not been masked yet.
func maskable(err error) bool {
	if o, _ := mcpkit.Classify(nil, err); o != mcpkit.OutcomeError {
		return false
	}
	var m *maskedError
	return !errors.As(err, &m)
}

// maskedError shows a generic text and unwraps to the real error, whose
// ErrorClass method (if any) therefore still decides the class.
type maskedError struct {
	tool string // the tool's name, the prompt's, or the resource's URI
	kind mcpkit.Kind
	err  error
}

func (e *maskedError) Error() string {
	switch e.kind {
	case mcpkit.KindPrompt:
		return fmt.Sprintf("error getting prompt %q", e.tool)
	case mcpkit.KindResource:
		return fmt.Sprintf("error reading resource %q", e.tool)
	}
	return fmt.Sprintf("error calling tool %q", e.tool)
}
func (e *maskedError) Unwrap() error { return e.err }

// ResultMeta returns nil: the _meta of the masked error, like its text,
// stays on the server.
func (e *maskedError) ResultMeta() mcp.Meta { return nil }
