package otelmcp

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/mcpkit/mcpkit"
)

const methodToolsList = "tools/list"

// NewListMiddleware returns a ListMiddleware that traces each tools/list
// with a SERVER span named "tools/list" and records its duration, as
// [NewMiddleware] does for tools/call, so that a trace shows a client
// listing and then calling:
//
//	srv.UseList(otelmcp.NewListMiddleware())
//
// It takes the same options; WithFilter, WithSpanNameFormatter and
// WithToolCallContent, which are about calls, do not apply. It belongs
// outermost among the list middleware.
func NewListMiddleware(opts ...Option) mcpkit.ListMiddleware {
	i := newInstrumentation(opts)
	return func(next mcpkit.Lister) mcpkit.Lister {
		return &lister{i: i, next: next}
	}
}

type lister struct {
	i    *instrumentation
	next mcpkit.Lister
}

func (l *lister) ServeList(ctx context.Context, req *mcpkit.ListRequest) (tools []*mcpkit.Tool, err error) {
	i := l.i
	start := time.Now()
	var meta map[string]any
	if req.Call != nil && req.Call.Params != nil {
		meta = req.Call.Params.Meta
	}
	ctx, span := i.start(ctx, methodToolsList, meta)
	defer span.End()
	recording, measuring := span.IsRecording(), i.duration.Enabled(ctx)
	if !recording && !measuring {
		return l.next.ServeList(ctx, req)
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, keyMethod.String(methodToolsList))
	attrs = transportAttributes(attrs, req.ProtocolVersion(), req.Header() != nil, req.Session())
	span.SetAttributes(attrs...)

	tools, err = l.next.ServeList(ctx, req)
	if err != nil {
		attrs = append(attrs, recordError(span, err)...)
	}
	if measuring {
		i.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(metricAttributes(attrs)...))
	}
	return tools, err
}
