package tasks

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// Info describes the task that work runs for. [Tool] puts it in the
// context of the work it runs as a task, and not in that of a call it
// serves synchronously: middleware in [ToolOptions].Middleware tells the
// two apart with [InfoFromContext].
type Info struct {
	// ID is the task's ID.
	ID string

	// Origin is the span context, in the sense of OpenTelemetry, of the
	// request this run of the work began with: the tools/call that created
	// the task or, for a round after input, the tasks/update that
	// completed its answers. It is invalid when that request was not
	// traced. The work's context still holds that request's span, ended
	// by then, as its current span; instrumentation of the work links to
	// Origin instead (otelmcp.NewTaskMiddleware does).
	Origin trace.SpanContext
}

type infoKey struct{}

// ContextWithInfo returns a copy of ctx that carries info.
func ContextWithInfo(ctx context.Context, info Info) context.Context {
	return context.WithValue(ctx, infoKey{}, info)
}

// InfoFromContext returns the Info that ctx carries, and whether it
// carries one: whether ctx is that of the work of a task.
func InfoFromContext(ctx context.Context) (Info, bool) {
	info, ok := ctx.Value(infoKey{}).(Info)
	return info, ok
}
