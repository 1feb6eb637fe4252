package otelmcp

import (
	"context"
	"reflect"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// keyPromptName is the conventions' attribute for a prompt's name, and
// keyResourceURI for the URI of a resources/read, subscribe or
// unsubscribe.
const (
	keyPromptName  = attribute.Key("gen_ai.prompt.name")
	keyResourceURI = attribute.Key("mcp.resource.uri")
)

// NewReceivingMiddleware returns SDK receiving middleware that traces every
// other MCP method the server receives (initialize, ping, prompts/get,
// resources/read, notifications, ...) with a SERVER span named after the
// method ("prompts/get {prompt name}" for a prompt; a resources/read, a
// subscribe and an unsubscribe carry the URI as mcp.resource.uri, kept out
// of the span's name and the metric) and records its duration, so that a trace shows all a client did. tools/call and
// tools/list pass untouched: [NewMiddleware] and [NewListMiddleware] trace
// them with what only mcpkit knows (the tool, the outcome). Install it on
// the SDK server:
//
//	srv.MCPServer().AddReceivingMiddleware(otelmcp.NewReceivingMiddleware())
//
// It takes the same options; those about tool calls do not apply.
func NewReceivingMiddleware(opts ...Option) mcp.Middleware {
	return newInstrumentation(opts).receiving(false)
}

// receiving returns the SDK receiving middleware of i. With calls set (as
// [Instrument] has it), it starts each tools/call's span too, for i's
// tools/call middleware to take over (see pending).
func (i *instrumentation) receiving(calls bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == methodToolsCall && calls {
				return i.serveCall(ctx, method, req, next)
			}
			if method == methodToolsCall || method == methodToolsList {
				return next(ctx, method, req)
			}
			return i.serveMethod(ctx, method, req, next)
		}
	}
}

func (i *instrumentation) serveMethod(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	start := time.Now()
	params := req.GetParams()
	var meta mcp.Meta
	if params != nil && !reflect.ValueOf(params).IsNil() {
		meta = params.GetMeta()
	}
	name, attrs := method, make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, keyMethod.String(method))
	switch p := params.(type) {
	case *mcp.GetPromptParams:
		if p != nil {
			name += " " + p.Name
			attrs = append(attrs, keyPromptName.String(p.Name))
		}
	case *mcp.ReadResourceParams:
		// The URI is an attribute, not in the span's name: the
		// conventions keep names of low cardinality.
		if p != nil {
			attrs = append(attrs, keyResourceURI.String(p.URI))
		}
	case *mcp.SubscribeParams:
		if p != nil {
			attrs = append(attrs, keyResourceURI.String(p.URI))
		}
	case *mcp.UnsubscribeParams:
		if p != nil {
			attrs = append(attrs, keyResourceURI.String(p.URI))
		}
	}
	ctx, span := i.start(ctx, name, meta)
	defer span.End()
	measuring := i.duration.Enabled(ctx)
	if !span.IsRecording() && !measuring {
		return next(ctx, method, req)
	}
	var version string
	attrs, version = requestAttributes(attrs, req)
	span.SetAttributes(attrs...)

	res, err := next(ctx, method, req)
	if ir, ok := res.(*mcp.InitializeResult); ok && ir != nil && version == "" {
		// An initialize has no version until it answers: the one it
		// negotiated is the session's.
		kv := keyProtocol.String(ir.ProtocolVersion)
		span.SetAttributes(kv)
		attrs = append(attrs, kv)
	}
	if err != nil {
		attrs = append(attrs, recordError(span, err)...)
	}
	if measuring {
		i.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(metricAttributes(attrs)...))
	}
	return res, err
}

// requestAttributes appends what an SDK request says of its protocol
// version, its transport and its session (see transportAttributes), and
// returns the version too.
func requestAttributes(attrs []attribute.KeyValue, req mcp.Request) ([]attribute.KeyValue, string) {
	var version string
	if v, ok := req.(interface{ ProtocolVersion() string }); ok {
		version = v.ProtocolVersion()
	}
	var ss *mcp.ServerSession
	if s, ok := req.GetSession().(*mcp.ServerSession); ok {
		ss = s
	}
	extra := req.GetExtra()
	return transportAttributes(attrs, version, extra != nil && extra.Header != nil, ss), version
}
