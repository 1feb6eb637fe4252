package otelmcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/tasks"
)

// keyTaskID is the attribute of a task's span that names the task.
const keyTaskID = attribute.Key("mcpkit.task.id")

// NewTaskMiddleware returns a Middleware that traces the work of a task
// (see package tasks) with a span of its own: an INTERNAL span named
// "tools/call {tool name} (task)" (or what [WithSpanNameFormatter] gives,
// followed by " (task)"), the root of a new trace, linked to the span of
// the request the work began with ([tasks.Info].Origin): the tools/call
// that created the task, traced by [NewMiddleware], or the tasks/update
// that resumed it. The work may run for hours after that request was
// answered, so it does not become a child of its span. The span has the
// attributes of the call's span, mcpkit.task.id, and the call's outcome,
// as [NewMiddleware] records them.
//
// It goes first in the tool's [tasks.ToolOptions].Middleware, so that its
// span covers the rest of the work. A call that the tool serves
// synchronously (for a client without the extension) is not a task, and
// passes through untraced: the call's own span covers it. It records no
// metric, since mcp.server.operation.duration measures requests, and
// takes no trace context from the request's _meta: the creating call's
// span did.
func NewTaskMiddleware(opts ...Option) mcpkit.Middleware {
	i := newInstrumentation(opts)
	name := i.c.spanName
	i.c.spanName = func(req *mcpkit.Request) string { return name(req) + " (task)" }
	return func(next mcpkit.Handler) mcpkit.Handler {
		return &taskHandler{i: i, next: next}
	}
}

type taskHandler struct {
	i    *instrumentation
	next mcpkit.Handler
}

func (h *taskHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (res *mcp.CallToolResult, err error) {
	i := h.i
	info, ok := tasks.InfoFromContext(ctx)
	if !ok {
		return h.next.ServeTool(ctx, req)
	}
	for _, f := range i.c.filters {
		if !f(req) {
			return h.next.ServeTool(ctx, req)
		}
	}
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal)}
	if info.Origin.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: info.Origin}))
	}
	ctx, span := i.tracer.Start(ctx, i.spanName(req), opts...)
	if span.IsRecording() {
		span.SetAttributes(commonAttributes(req)...)
		span.SetAttributes(keyTaskID.String(info.ID))
		if i.c.arguments && len(req.Arguments) > 0 {
			span.SetAttributes(keyArguments.String(string(req.Arguments)))
		}
	}
	returned := false
	defer func() {
		if !returned { // panicking: record it, do not stop it
			i.finish(span, nil, errPanicking)
		} else {
			i.finish(span, res, err)
		}
		span.End()
	}()
	res, err = h.next.ServeTool(ctx, req)
	returned = true
	return res, err
}
