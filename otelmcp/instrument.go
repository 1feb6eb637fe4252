package otelmcp

import "github.com/mcpkit/mcpkit"

// Instrument traces and measures everything srv serves, the common case in
// one call: it adds [NewMiddleware] to srv's middleware (tools/call),
// [NewListMiddleware] to its list middleware (tools/list), and
// [NewReceivingMiddleware] to the SDK server (every other method), all with
// opts. Call it before the rest of srv.Use, so that the tools/call span is
// outermost and times the other middleware:
//
//	otelmcp.Instrument(srv)
//	srv.Use(middleware.Recommended(nil))
//
// For one of the three alone, or another order, use them directly. Task
// work is traced by [NewTaskMiddleware], which goes in the task tool's
// own middleware.
//
// Installed together, the three share the tools/call span: it starts when
// the call arrives, before the server routes it, so that a call refused
// before any tool (unknown, hidden, invalid) has its span, and the
// server's observers (an audit trail's trace_id) see the call in its
// trace. Unless a filter ([WithFilter]) is set: a filter decides by the
// tool, known once the call is routed, so the span then starts in the
// chain, as with [NewMiddleware] alone.
func Instrument(srv *mcpkit.Server, opts ...Option) {
	i := newInstrumentation(opts)
	srv.Use(i.middleware())
	srv.UseList(NewListMiddleware(opts...))
	srv.MCPServer().AddReceivingMiddleware(i.receiving(len(i.c.filters) == 0))
}
