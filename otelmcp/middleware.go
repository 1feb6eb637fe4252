package otelmcp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit"
)

// Attribute keys, as the conventions name them, and mcpkit's own.
const (
	keyMethod         = attribute.Key("mcp.method.name")
	keyToolName       = attribute.Key("gen_ai.tool.name")
	keyOperation      = attribute.Key("gen_ai.operation.name")
	keyProtocol       = attribute.Key("mcp.protocol.version")
	keySession        = attribute.Key("mcp.session.id")
	keyTransport      = attribute.Key("network.transport")
	keyErrorType      = attribute.Key("error.type")
	keyStatusCode     = attribute.Key("rpc.response.status_code")
	keyArguments      = attribute.Key("gen_ai.tool.call.arguments")
	keyResult         = attribute.Key("gen_ai.tool.call.result")
	keyToolVersion    = attribute.Key("mcpkit.tool.version")
	keyErrorClass     = attribute.Key("mcpkit.error.class")
	keyOutcome        = attribute.Key("mcpkit.outcome")
	durationMetric    = "mcp.server.operation.duration"
	methodToolsCall   = "tools/call"
	operationExecTool = "execute_tool"
)

// durationBuckets are the conventions' bucket boundaries, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// NewMiddleware returns a Middleware that traces each tools/call with a
// SERVER span and records its duration in the mcp.server.operation.duration
// histogram, following the MCP semantic conventions (see the package
// documentation).
//
// It belongs outermost, so that its span and its duration cover every other
// layer, and it sees every outcome (a panic passing through is recorded and
// goes on). The tracer, meter and instruments are made once, here; with the
// no-op providers a call costs no allocation.
func NewMiddleware(opts ...Option) mcpkit.Middleware {
	return newInstrumentation(opts).middleware()
}

// middleware returns the tools/call middleware of i.
func (i *instrumentation) middleware() mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		return &handler{i: i, next: next}
	}
}

// newInstrumentation makes the tracer, meter and instruments of a
// middleware, once.
func newInstrumentation(opts []Option) *instrumentation {
	c := newConfig(opts)
	tracer := c.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version))
	meter := c.meterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(Version))
	duration, err := meter.Float64Histogram(durationMetric,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request or notification as observed on the receiver from the time it was received until the result or ack is sent."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		panic("otelmcp: " + err.Error()) // only for an invalid name or bucket list, fixed above
	}
	return &instrumentation{c: c, tracer: tracer, duration: duration,
		serverKind: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}}
}

type instrumentation struct {
	c          *config
	tracer     trace.Tracer
	duration   metric.Float64Histogram
	serverKind []trace.SpanStartOption // made once: a call allocates none
	names      sync.Map                // *mcpkit.Tool -> its span name, for the default formatter
}

// spanName returns the span name of req, made once per tool by the default
// formatter.
func (i *instrumentation) spanName(req *mcpkit.Request) string {
	if i.c.customName {
		return i.c.spanName(req)
	}
	if n, ok := i.names.Load(req.Tool); ok {
		return n.(string)
	}
	n := i.c.spanName(req)
	i.names.Store(req.Tool, n)
	return n
}

type handler struct {
	i    *instrumentation
	next mcpkit.Handler
}

func (h *handler) ServeTool(ctx context.Context, req *mcpkit.Request) (res *mcp.CallToolResult, err error) {
	i := h.i
	for _, f := range i.c.filters {
		if !f(req) {
			return h.next.ServeTool(ctx, req)
		}
	}
	start := time.Now()
	span, joined := i.claim(ctx)
	if joined {
		span.SetName(i.spanName(req))
	} else {
		ctx, span = i.start(ctx, i.spanName(req), req.Meta())
	}
	recording := span.IsRecording()
	measuring := i.duration.Enabled(ctx)
	if !recording && !measuring {
		defer span.End()
		return h.next.ServeTool(ctx, req)
	}

	common := commonAttributes(req)
	if recording {
		span.SetAttributes(common...)
		if i.c.arguments && len(req.Arguments) > 0 {
			span.SetAttributes(keyArguments.String(string(req.Arguments)))
		}
	}
	labeler := &Labeler{}
	ctx = ContextWithLabeler(ctx, labeler)
	if recording {
		ctx = mcpkit.WatchProgress(ctx, progressEvents(span))
	}

	returned := false
	defer func() {
		var outcome []attribute.KeyValue
		if !returned { // panicking: record it, do not stop it
			outcome = i.finish(span, nil, errPanicking)
		} else {
			outcome = i.finish(span, res, err)
		}
		span.End()
		if measuring {
			attrs := append(append(common[:len(common):len(common)], outcome...), labeler.Get()...)
			i.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(metricAttributes(attrs)...))
		}
	}()
	res, err = h.next.ServeTool(ctx, req)
	returned = true
	return res, err
}

// MaxProgressEvents is the most "progress" events a tools/call span gets:
// a tool that reports progress in a tight loop does not grow its span
// without bound. The span's mcpkit.progress.reports attribute counts them
// all.
const MaxProgressEvents = 32

// progressEvents returns a progress watcher that records each report
// (mcpkit.ReportProgress) as an event of span, up to MaxProgressEvents.
func progressEvents(span trace.Span) mcpkit.ProgressWatcher {
	var n atomic.Int64
	return func(done, total float64, message string) {
		k := n.Add(1)
		span.SetAttributes(keyProgressReports.Int64(k))
		if k > MaxProgressEvents {
			return
		}
		attrs := []attribute.KeyValue{keyProgress.Float64(done)}
		if total > 0 {
			attrs = append(attrs, keyProgressTotal.Float64(total))
		}
		if message != "" {
			attrs = append(attrs, keyProgressMessage.String(message))
		}
		span.AddEvent("progress", trace.WithAttributes(attrs...))
	}
}

// Attributes of progress events and of the span that has them.
const (
	keyProgress        = attribute.Key("mcp.progress")
	keyProgressTotal   = attribute.Key("mcp.progress.total")
	keyProgressMessage = attribute.Key("mcp.progress.message")
	keyProgressReports = attribute.Key("mcpkit.progress.reports")
)

// errPanicking stands for a panic passing through.
var errPanicking = &mcpkit.PanicError{Value: "panic passing through"}

// start starts the SERVER span of a request, in the trace its _meta gives
// (see parent).
func (i *instrumentation) start(ctx context.Context, name string, meta mcp.Meta) (context.Context, trace.Span) {
	parent, link := i.parent(ctx, meta)
	opts := i.serverKind
	if link.SpanContext.IsValid() {
		opts = []trace.SpanStartOption{opts[0], trace.WithLinks(link)}
	}
	return i.tracer.Start(parent, name, opts...)
}

// recordError records on span the error a method failed with: a JSON-RPC
// error's code as error.type and rpc.response.status_code, anything else as
// "_OTHER"; the status is Error unless the client caused the error. It
// returns the attributes the error adds to the metric.
func recordError(span trace.Span, err error) []attribute.KeyValue {
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code == 0 {
		span.SetAttributes(keyErrorType.String("_OTHER"))
		span.SetStatus(codes.Error, err.Error())
		return []attribute.KeyValue{keyErrorType.String("_OTHER")}
	}
	code := strconv.FormatInt(wire.Code, 10)
	attrs := []attribute.KeyValue{keyErrorType.String(code), keyStatusCode.String(code)}
	span.SetAttributes(attrs...)
	if !clientFaults[wire.Code] {
		span.SetStatus(codes.Error, wire.Message)
	}
	return attrs
}

// parent returns the context to start the span in: the trace context of the
// request's params._meta when it has one, with the context's own span as a
// link; otherwise ctx itself.
func (i *instrumentation) parent(ctx context.Context, meta mcp.Meta) (context.Context, trace.Link) {
	if len(meta) == 0 {
		return ctx, trace.Link{}
	}
	remote := i.c.propagators.Extract(ctx, metaCarrier(meta))
	sc := trace.SpanContextFromContext(remote)
	if !sc.IsValid() || sc.Equal(trace.SpanContextFromContext(ctx)) {
		return remote, trace.Link{} // baggage alone, or nothing new
	}
	return remote, trace.Link{SpanContext: trace.SpanContextFromContext(ctx)}
}

// commonAttributes are the attributes of a call known before it runs.
func commonAttributes(req *mcpkit.Request) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs,
		keyMethod.String(methodToolsCall),
		keyToolName.String(req.Tool.Name),
		keyOperation.String(operationExecTool))
	attrs = transportAttributes(attrs, req.ProtocolVersion(), req.Header() != nil, req.Session())
	if req.Tool.Version != "" {
		attrs = append(attrs, keyToolVersion.String(req.Tool.Version))
	}
	return attrs
}

// transportAttributes appends what a request says of its protocol version,
// its transport and its session.
func transportAttributes(attrs []attribute.KeyValue, version string, http bool, ss *mcp.ServerSession) []attribute.KeyValue {
	if version != "" {
		attrs = append(attrs, keyProtocol.String(version))
	}
	if http {
		attrs = append(attrs, keyTransport.String("tcp"))
	} else {
		attrs = append(attrs, keyTransport.String("pipe"))
	}
	if ss != nil && ss.ID() != "" {
		attrs = append(attrs, keySession.String(ss.ID()))
	}
	return attrs
}

// metricAttributes drops the attributes of high cardinality from a span's
// set: the session, and the URI of a resource (opt-in for metrics, by the
// conventions).
func metricAttributes(attrs []attribute.KeyValue) []attribute.KeyValue {
	out := attrs[:0:0]
	for _, a := range attrs {
		if a.Key != keySession && a.Key != keyResourceURI {
			out = append(out, a)
		}
	}
	return out
}

// clientFaults are the JSON-RPC codes of errors the client caused, which
// the conventions do not count as span errors.
var clientFaults = map[int64]bool{
	jsonrpc.CodeParseError:     true,
	jsonrpc.CodeInvalidRequest: true,
	jsonrpc.CodeMethodNotFound: true,
	jsonrpc.CodeInvalidParams:  true,
	-32002:                     true, // resource not found
}

// finish records the outcome of a call on its span and returns the
// attributes the outcome adds to the metric.
func (i *instrumentation) finish(span trace.Span, res *mcp.CallToolResult, err error) []attribute.KeyValue {
	outcome, class := mcpkit.Classify(res, err)
	var attrs []attribute.KeyValue
	switch outcome {
	case mcpkit.OutcomeOK:
		if i.c.results && res != nil && span.IsRecording() {
			if b, merr := json.Marshal(resultContent(res)); merr == nil {
				span.SetAttributes(keyResult.String(string(b)))
			}
		}
		return nil
	case mcpkit.OutcomeProtocolError:
		attrs = recordError(span, err)
	default:
		// The client gets a result with isError set.
		attrs = append(attrs, keyErrorType.String("tool_error"))
		span.SetAttributes(attrs...)
		span.SetStatus(codes.Error, string(outcome))
	}
	span.SetAttributes(keyOutcome.String(string(outcome)))
	if class != "" {
		span.SetAttributes(keyErrorClass.String(string(class)))
	}
	return attrs
}

// resultContent is what gen_ai.tool.call.result records: the structured
// content when there is some, the content blocks otherwise.
func resultContent(res *mcp.CallToolResult) any {
	if res.StructuredContent != nil {
		return res.StructuredContent
	}
	return res.Content
}
