package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// An Outcome is how a tool call ended, as [Logging] records it.
type Outcome string

// The outcomes of a call, checked in this order: the first that applies is
// the call's outcome.
const (
	OutcomeOK            Outcome = "ok"             // a result without isError
	OutcomePanic         Outcome = "panic"          // a [*mcpkit.PanicError] in the error's chain, or a panic passing through
	OutcomeTimeout       Outcome = "timeout"        // [context.DeadlineExceeded] in the chain, as in a [*TimeoutError]
	OutcomeToolError     Outcome = "tool_error"     // a [*mcpkit.ToolError] in the chain, or a result with isError set
	OutcomeProtocolError Outcome = "protocol_error" // a JSON-RPC error with a non-zero code in the chain
	OutcomeError         Outcome = "error"          // any other error
)

// OutcomeOf returns the outcome of a call that returned res and err.
func OutcomeOf(res *mcp.CallToolResult, err error) Outcome {
	if err == nil {
		if res != nil && res.IsError {
			return OutcomeToolError
		}
		return OutcomeOK
	}
	var p *mcpkit.PanicError
	if errors.As(err, &p) {
		return OutcomePanic
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return OutcomeTimeout
	}
	var te *mcpkit.ToolError
	if errors.As(err, &te) {
		return OutcomeToolError
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && wire.Code != 0 {
		return OutcomeProtocolError
	}
	return OutcomeError
}

// LoggingOptions configures [Logging]. A nil *LoggingOptions means the
// defaults.
type LoggingOptions struct {
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
	Level func(Outcome) slog.Level
}

// Logging returns a Middleware that writes exactly one record to logger per
// call, once it ends, with the message "tool call" and these attributes:
//
//   - tool, version: the tool called;
//   - duration: the time the rest of the chain took;
//   - outcome: the call's [Outcome], as [OutcomeOf] decides it;
//   - class: the error class, when the call failed and has one;
//   - error: for a failed call, the error's text, where masked errors
//     ([MaskErrors]) show their real text and panics their value (logs are
//     for operators); for a result with isError set, its first text;
//   - arguments, result: only when [LoggingOptions] ask for them.
//
// A panic passing through Logging is logged with outcome "panic" and goes on.
// A nil logger means no logging: Logging then returns the chain unchanged.
// When the logger's handler is not enabled for the highest of the levels,
// Logging costs one Enabled call; when it is not enabled for a record's
// level, the record costs no allocation.
//
// Logging belongs outermost, so that its record covers everything the other
// middleware did (a rejection by a limit, a timeout, a masked error).
func Logging(logger *slog.Logger, opts *LoggingOptions) mcpkit.Middleware {
	l := &logging{logger: logger}
	if opts != nil {
		l.opts = *opts
	}
	all := [...]Outcome{OutcomeOK, OutcomePanic, OutcomeTimeout, OutcomeToolError, OutcomeProtocolError, OutcomeError}
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
		if logger == nil {
			return next
		}
		return &loggingHandler{l: l, next: next}
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
func outcomeIndex(o Outcome) int {
	switch o {
	case OutcomeOK:
		return 0
	case OutcomePanic:
		return 1
	case OutcomeTimeout:
		return 2
	case OutcomeToolError:
		return 3
	case OutcomeProtocolError:
		return 4
	}
	return 5 // OutcomeError
}

type loggingHandler struct {
	l    *logging
	next mcpkit.Handler
}

func (h *loggingHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (res *mcp.CallToolResult, err error) {
	if !h.l.logger.Enabled(ctx, h.l.maxLevel) {
		return h.next.ServeTool(ctx, req) // no record could be written: skip the clock
	}
	start := time.Now()
	returned := false
	defer func() {
		if !returned { // panicking: record it, do not stop it
			h.l.log(ctx, req, time.Since(start), OutcomePanic, nil, nil)
		}
	}()
	res, err = h.next.ServeTool(ctx, req)
	returned = true
	h.l.log(ctx, req, time.Since(start), OutcomeOf(res, err), res, err)
	return res, err
}

func defaultLevel(o Outcome) slog.Level {
	switch o {
	case OutcomeOK:
		return slog.LevelInfo
	case OutcomeToolError:
		return slog.LevelWarn
	}
	return slog.LevelError
}

func (l *logging) log(ctx context.Context, req *mcpkit.Request, d time.Duration, o Outcome, res *mcp.CallToolResult, err error) {
	level := l.levels[outcomeIndex(o)]
	if !l.logger.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("tool", toolName(req)),
		slog.String("version", toolVersion(req)),
		slog.Duration("duration", d),
		slog.String("outcome", string(o)))
	if class := classOf(res, err, o); class != "" {
		attrs = append(attrs, slog.String("class", string(class)))
	}
	if o != OutcomeOK {
		if text, ok := errorText(res, err); ok {
			attrs = append(attrs, slog.String("error", text))
		}
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

// classOf returns the error class of a failed call, or "".
func classOf(res *mcp.CallToolResult, err error, o Outcome) mcpkit.ErrorClass {
	switch {
	case o == OutcomeOK:
		return ""
	case o == OutcomePanic:
		return mcpkit.Fatal
	case err == nil:
		return mcpkit.ErrorClassOf(res)
	}
	var c interface{ ErrorClass() mcpkit.ErrorClass }
	if errors.As(err, &c) {
		if class := c.ErrorClass(); class != "" {
			return class
		}
	}
	if o == OutcomeProtocolError {
		return "" // the wire carries no class for JSON-RPC errors
	}
	return mcpkit.Fatal
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
