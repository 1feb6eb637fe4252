package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// LoggingOptions configures [Logging]. A nil *LoggingOptions means the
// defaults.
type LoggingOptions struct {
	// Logger receives the records. Nil means no logging: Logging then adds
	// no layer.
	Logger *slog.Logger

	// LogArguments adds the call's arguments to each record, under
	// "arguments": as raw JSON, or as Redact returns them.
	LogArguments bool

	// Redact, if set, returns what is logged for a call's arguments when
	// LogArguments is set, for instance the arguments without their
	// secrets. It must not modify args.
	Redact func(tool *mcpkit.Tool, args json.RawMessage) any

	// LogResults adds each successful call's result (and each result the
	// handler returned with isError set) to its record, under "result": as
	// JSON, or as RedactResult returns it.
	LogResults bool

	// RedactResult, if set, returns what is logged for a result when
	// LogResults is set. It must not modify res.
	RedactResult func(tool *mcpkit.Tool, res *mcp.CallToolResult) any

	// Level, if set, returns the level of a call's record from its outcome.
	// It is called once per outcome, when the middleware is built. The
	// default is Info for OutcomeOK, Warn for OutcomeToolError and Error for
	// the rest.
	Level func(mcpkit.Outcome) slog.Level
}

// Logging returns a Middleware that writes exactly one record to
// [LoggingOptions.Logger] per call, once it ends, with the message
// "tool call" and these attributes:
//
//   - tool, version: the tool called, and its version when it has one;
//   - reaches: for a call by an alias, a derived or a namespaced name,
//     the identity of the tool it reaches ([mcpkit.Tool.ID], as
//     "name@version");
//   - duration: the time the rest of the chain took;
//   - outcome, class: the call's [mcpkit.Outcome] and, when it failed,
//     its error class, as [mcpkit.Classify] decides them;
//   - error: for a failed call, the error's text, where masked errors
//     ([MaskErrors]) show their real text and panics their value (logs are
//     for operators); for a result with isError set, its first text;
//   - stack: for a panic, the stack of the goroutine that panicked;
//   - arguments, result: only when [LoggingOptions] ask for them.
//
// A panic passing through Logging is logged with outcome "panic" and goes on.
// When the logger's handler is not enabled for the highest of the levels,
// Logging costs one Enabled call; when it is not enabled for a record's
// level, the record costs no allocation.
//
// Logging serves prompts and resources too: one record per prompts/get,
// with the message "prompt get" and the attributes prompt, duration,
// outcome, class, error and stack as above, and one per resources/read,
// with the message "resource read" and the attribute resource (the URI
// read) instead of prompt (arguments and results are not logged for
// either).
//
// Logging belongs outermost, so that its record covers everything the other
// middleware did (a rejection by a limit, a timeout, a masked error).
func Logging(opts *LoggingOptions) mcpkit.Middleware {
	l := &logging{}
	if opts != nil {
		l.opts = *opts
	}
	l.logger = l.opts.Logger
	all := [...]mcpkit.Outcome{mcpkit.OutcomeOK, mcpkit.OutcomePanic, mcpkit.OutcomeTimeout, mcpkit.OutcomeToolError, mcpkit.OutcomeProtocolError, mcpkit.OutcomeError}
	for i, o := range all {
		level := defaultLevel(o)
		if l.opts.Level != nil {
			level = l.opts.Level(o)
		}
		l.levels[outcomeIndex(o)] = level
		if i == 0 || level > l.maxLevel {
			l.maxLevel = level
		}
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		if l.logger == nil {
			return next
		}
		return &loggingHandler{l: l, next: next, prompts: promptsOf(next), resources: resourcesOf(next)}
	}
}

type logging struct {
	logger   *slog.Logger
	opts     LoggingOptions
	levels   [numOutcomes]slog.Level // by outcomeIndex
	maxLevel slog.Level
}

const numOutcomes = 6

// outcomeIndex returns the index of o in logging.levels.
func outcomeIndex(o mcpkit.Outcome) int {
	switch o {
	case mcpkit.OutcomeOK:
		return 0
	case mcpkit.OutcomePanic:
		return 1
	case mcpkit.OutcomeTimeout:
		return 2
	case mcpkit.OutcomeToolError:
		return 3
	case mcpkit.OutcomeProtocolError:
		return 4
	}
	return 5 // OutcomeError
}

type loggingHandler struct {
	l         *logging
	next      mcpkit.Handler
	prompts   mcpkit.PromptHandler
	resources mcpkit.ResourceHandler
}

func (h *loggingHandler) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (res *mcp.GetPromptResult, err error) {
	if !h.l.logger.Enabled(ctx, h.l.maxLevel) {
		return h.prompts.ServePrompt(ctx, req)
	}
	start := time.Now()
	returned := false
	defer func() {
		if !returned {
			h.l.logTarget(ctx, mcpkit.KindPrompt, req.Prompt.Name, time.Since(start), nil, true)
		}
	}()
	res, err = h.prompts.ServePrompt(ctx, req)
	returned = true
	h.l.logTarget(ctx, mcpkit.KindPrompt, req.Prompt.Name, time.Since(start), err, false)
	return res, err
}

func (h *loggingHandler) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (res *mcp.ReadResourceResult, err error) {
	if !h.l.logger.Enabled(ctx, h.l.maxLevel) {
		return h.resources.ServeResource(ctx, req)
	}
	start := time.Now()
	returned := false
	defer func() {
		if !returned {
			h.l.logTarget(ctx, mcpkit.KindResource, req.URI, time.Since(start), nil, true)
		}
	}()
	res, err = h.resources.ServeResource(ctx, req)
	returned = true
	h.l.logTarget(ctx, mcpkit.KindResource, req.URI, time.Since(start), err, false)
	return res, err
}

// logTarget writes the record of a prompts/get of the prompt called name
// (a resources/read of the URI name, for KindResource) that returned err,
// or that is panicking through Logging.
func (l *logging) logTarget(ctx context.Context, k mcpkit.Kind, name string, d time.Duration, err error, panicking bool) {
	o, class := mcpkit.Classify(nil, err)
	if panicking {
		o, class = mcpkit.OutcomePanic, mcpkit.Fatal
	}
	level := l.levels[outcomeIndex(o)]
	if !l.logger.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs,
		slog.String(k.String(), name),
		slog.Duration("duration", d),
		slog.String("outcome", string(o)))
	if class != "" {
		attrs = append(attrs, slog.String("class", string(class)))
	}
	if err != nil {
		text, _ := errorText(nil, err)
		attrs = append(attrs, slog.String("error", text))
		var p *mcpkit.PanicError
		if errors.As(err, &p) {
			attrs = append(attrs, slog.String("stack", string(p.Stack)))
		}
	}
	msg := "prompt get"
	if k == mcpkit.KindResource {
		msg = "resource read"
	}
	l.logger.LogAttrs(ctx, level, msg, attrs...)
}

func (h *loggingHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (res *mcp.CallToolResult, err error) {
	if !h.l.logger.Enabled(ctx, h.l.maxLevel) {
		return h.next.ServeTool(ctx, req) // no record could be written: skip the clock
	}
	start := time.Now()
	returned := false
	defer func() {
		if !returned { // panicking: record it, do not stop it
			h.l.log(ctx, req, time.Since(start), nil, nil, true)
		}
	}()
	res, err = h.next.ServeTool(ctx, req)
	returned = true
	h.l.log(ctx, req, time.Since(start), res, err, false)
	return res, err
}

func defaultLevel(o mcpkit.Outcome) slog.Level {
	switch o {
	case mcpkit.OutcomeOK:
		return slog.LevelInfo
	case mcpkit.OutcomeToolError:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// log writes the record of a call that returned res and err, or that is
// panicking through Logging.
func (l *logging) log(ctx context.Context, req *mcpkit.Request, d time.Duration, res *mcp.CallToolResult, err error, panicking bool) {
	o, class := mcpkit.Classify(res, err)
	if panicking {
		o, class = mcpkit.OutcomePanic, mcpkit.Fatal
	}
	level := l.levels[outcomeIndex(o)]
	if !l.logger.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs, slog.String("tool", req.Tool.Name))
	if req.Tool.Version != "" {
		attrs = append(attrs, slog.String("version", req.Tool.Version))
	}
	if req.Tool.Origin != nil {
		if id := req.Tool.ID(); id.Name != req.Tool.Name || id.Version != req.Tool.Version {
			attrs = append(attrs, slog.String("reaches", id.String()))
		}
	}
	attrs = append(attrs,
		slog.Duration("duration", d),
		slog.String("outcome", string(o)))
	if class != "" {
		attrs = append(attrs, slog.String("class", string(class)))
	}
	if o != mcpkit.OutcomeOK {
		if text, ok := errorText(res, err); ok {
			attrs = append(attrs, slog.String("error", text))
		}
	}
	var p *mcpkit.PanicError
	if errors.As(err, &p) {
		attrs = append(attrs, slog.String("stack", string(p.Stack)))
	}
	if l.opts.LogArguments {
		var args any = req.Arguments
		if l.opts.Redact != nil {
			args = l.opts.Redact(req.Tool, req.Arguments)
		}
		attrs = append(attrs, slog.Any("arguments", args))
	}
	if l.opts.LogResults && err == nil && res != nil {
		var v any
		if l.opts.RedactResult != nil {
			v = l.opts.RedactResult(req.Tool, res)
		} else if data, merr := json.Marshal(res); merr == nil {
			v = json.RawMessage(data)
		}
		attrs = append(attrs, slog.Any("result", v))
	}
	l.logger.LogAttrs(ctx, level, "tool call", attrs...)
}

// errorText returns the text to log for a failed call.
func errorText(res *mcp.CallToolResult, err error) (string, bool) {
	if err == nil {
		if res == nil {
			return "", false
		}
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				return tc.Text, true
			}
		}
		return "", false
	}
	var p *mcpkit.PanicError
	if errors.As(err, &p) {
		return p.Error(), true
	}
	var m *maskedError
	if errors.As(err, &m) {
		return m.err.Error(), true
	}
	return err.Error(), true
}
