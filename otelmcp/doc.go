// Package otelmcp provides OpenTelemetry tracing and metrics for mcpkit
// tools, following the semantic conventions for MCP (Development status)
// and shaped like otelhttp.
//
// [NewMiddleware] returns an [mcpkit.Middleware] that, for every tools/call,
// starts a SERVER span named "tools/call {tool name}" and records the
// mcp.server.operation.duration histogram:
//
//	srv.Use(otelmcp.NewMiddleware()) // outermost: it times everything else
//	srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: logger}))
//	srv.UseList(otelmcp.NewListMiddleware()) // tools/list too
//	srv.MCPServer().AddReceivingMiddleware(otelmcp.NewReceivingMiddleware()) // and every other method
//
// [Instrument] does those three in one call, the common case:
//
//	otelmcp.Instrument(srv)
//	srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: logger}))
//
// Options follow OpenTelemetry's conventions rather than this module's
// options structs: [Option] values such as [WithTracerProvider],
// [WithMeterProvider] and [WithPropagators], whose defaults are the global
// providers and propagator, nil meaning the default.
//
// # Spans
//
// The span's attributes are mcp.method.name ("tools/call"),
// gen_ai.tool.name, gen_ai.operation.name ("execute_tool"),
// mcp.protocol.version, mcp.session.id (only when the call has a session:
// stateless servers and protocol 2026-07-28 have none), network.transport
// ("tcp" over HTTP, "pipe" otherwise), and mcpkit.tool.version for a
// versioned tool. A call that fails has error.type: "tool_error" for a
// result with isError set (which is how the client sees tool errors,
// validation errors, timeouts, limits, masked internal errors and panics),
// or the JSON-RPC code for a protocol error, which is also
// rpc.response.status_code. mcpkit.error.class says "retryable" or "fatal"
// and mcpkit.outcome says which row of the error table the call took
// ([mcpkit.Classify]). The status is Error for every failure except JSON-RPC
// errors the client caused (-32700, -32600, -32601, -32602, -32002).
// Arguments and results are recorded only when asked for
// ([WithToolCallContent]); they may hold anything.
//
// The parent is the trace context the client put in the request's
// params._meta (traceparent, tracestate, baggage), as the conventions and
// protocol 2026-07-28 say; when there is one, the span the context already
// holds (an HTTP server span, say, from otelhttp around the SDK handler) is
// linked, not used as the parent. Without one, the context's span is the
// parent.
//
// The JSON-RPC id of a request (jsonrpc.request.id) is not recorded: the
// go-sdk does not hand it to handlers or middleware.
//
// # Tasks
//
// A tool made by tasks.Tool answers its call at once with a task, and does
// the work afterwards, detached from the call: [NewMiddleware]'s span ends
// with the answer. [NewTaskMiddleware], first in the tool's
// tasks.ToolOptions.Middleware, gives the work a span of its own, the root
// of a new trace linked to the creating call's span:
//
//	srv.Use(otelmcp.NewMiddleware())
//	srv.Add(tasks.Tool(report, m, &tasks.ToolOptions{
//		Middleware: []mcpkit.Middleware{otelmcp.NewTaskMiddleware()},
//	}))
//
// Handlers and other middleware add attributes to the current span with
// trace.SpanFromContext, and to the metric with a [Labeler]
// ([LabelerFromContext]).
package otelmcp
