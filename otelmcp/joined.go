package otelmcp

import (
	"context"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// A pending is the tools/call span that [Instrument]'s receiving
// middleware starts when the call arrives, before mcpkit routes it, for
// the tools/call middleware of the same Instrument to take over once the
// call reaches a tool. Started there, the span is in the context of
// everything the server does with the call: its observers (an audit
// trail's trace_id) and its refusals before any tool (an unknown or
// hidden tool, invalid parameters) included.
type pending struct {
	i       *instrumentation
	span    trace.Span
	claimed atomic.Bool // by the tools/call middleware, or by the receiving one at the end
}

type pendingKey struct{}

// claim returns the span of ctx's pending call, if i started it and no
// tool's chain has taken it yet: the first tool a call reaches has its
// span; a tool it calls in turn (call_tool, Server.Resolve) starts one of
// its own.
func (i *instrumentation) claim(ctx context.Context) (trace.Span, bool) {
	p, ok := ctx.Value(pendingKey{}).(*pending)
	if !ok || p.i != i || !p.claimed.CompareAndSwap(false, true) {
		return nil, false
	}
	return p.span, true
}

// serveCall serves a tools/call inside its span, started here; the
// tools/call middleware finishes it once the call reaches a tool, and
// serveCall otherwise, with the error or the result the call got.
func (i *instrumentation) serveCall(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (res mcp.Result, err error) {
	var name string
	var meta mcp.Meta
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw: // as a server receives it
		if p == nil {
			return next(ctx, method, req)
		}
		name, meta = p.Name, p.Meta
	case *mcp.CallToolParams:
		if p == nil {
			return next(ctx, method, req)
		}
		name, meta = p.Name, p.Meta
	default:
		return next(ctx, method, req)
	}
	ctx, span := i.start(ctx, methodToolsCall+" "+name, meta)
	if !span.IsRecording() {
		span.End()
		return next(ctx, method, req)
	}
	p := &pending{i: i, span: span}
	defer func() {
		if !p.claimed.CompareAndSwap(false, true) {
			return // a tool's chain has it, and ended it
		}
		attrs, _ := requestAttributes([]attribute.KeyValue{keyMethod.String(methodToolsCall), keyToolName.String(name), keyOperation.String(operationExecTool)}, req)
		span.SetAttributes(attrs...)
		switch r, _ := res.(*mcp.CallToolResult); {
		case err != nil:
			recordError(span, err)
		case r != nil:
			i.finish(span, r, nil)
		}
		span.End()
	}()
	return next(context.WithValue(ctx, pendingKey{}, p), method, req)
}
