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
func Instrument(srv *mcpkit.Server, opts ...Option) {
	srv.Use(NewMiddleware(opts...))
	srv.UseList(NewListMiddleware(opts...))
	srv.MCPServer().AddReceivingMiddleware(NewReceivingMiddleware(opts...))
}
