// Package mcpkit provides a middleware pipeline for MCP tools, modelled on
// net/http and served through the official Go MCP SDK.
//
// A tool is a [Handler] with an MCP definition, gathered in a [Tool] and
// registered on a [Server]. Behaviour around handlers (validation, timeouts,
// logging, tracing) is [Middleware], a func(Handler) Handler; what tools/list
// answers is shaped by [ListMiddleware] in the same way. The SDK keeps the
// wire: transports, sessions and protocol versions.
//
//	srv := mcpkit.NewServer(&mcp.Implementation{Name: "demo"}, nil)
//	srv.Use(logCalls)                 // runs around every tool
//	err := srv.Add(&mcpkit.Tool{
//		Tool:    mcp.Tool{Name: "greet", InputSchema: schema},
//		Handler: mcpkit.HandlerFunc(greet),
//	})
//	...
//	http.Handle("/mcp", srv.HTTPHandler(nil))
//
// # Order
//
// The first middleware is the outermost: [Chain](a, b, c)(h) is a(b(c(h))),
// so a sees the call first and the result last. On a [Server], the
// server-wide middleware (in the order given to [Server.Use]) runs around a
// tool's own middleware ([Tool.Middleware]), which runs around its handler.
//
// # Errors
//
// Every call's outcome reaches the client by one table, applied after the
// outermost middleware, so that middleware sees the Go error a handler
// returned:
//
//   - unknown tool: JSON-RPC error -32602 `unknown tool "name"`; see
//     [NewUnknownToolError] for hiding a tool behind the same answer;
//   - a [*ToolError] anywhere in the error's chain ([ToolErrorf],
//     [NewToolError]): a result with isError set and the
//     tool error's own text (not what wrappers added around it), never
//     masked;
//   - a JSON-RPC error ([NewProtocolError], or a *jsonrpc.Error wrapped
//     anywhere in the chain) with a non-zero code: that JSON-RPC error,
//     code and message;
//   - any other error: a result with isError set and the error's text
//     (error-masking middleware replaces the text, not the error);
//   - a panic, or a [*PanicError] anywhere in the chain: the server keeps
//     serving, the stack goes to [ServerOptions.Logger], and the client
//     gets a result with isError set and a generic text;
//   - a nil result with a nil error: an empty, successful result.
//
// A Go error never reaches the wire as JSON-RPC code 0. Results with isError
// set carry an [ErrorClass] (Retryable or Fatal) in their _meta under
// [MetaKeyErrorClass], for agent loops to read with [ErrorClassOf]. Errors
// choose their class with an ErrorClass() ErrorClass method; a tool error is
// Retryable unless marked otherwise, any other error and a panic are Fatal.
// An error can add its own entries to the result's _meta by implementing
// [ResultMetaError].
//
// # Registry
//
// Tool names are 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.';
// [Server.Add] rejects others with an error. Several versions of a name may
// be registered; clients see and call the highest. A name and version
// registered twice is handled by [ServerOptions.OnDuplicate], an error by
// default. Adding and removing tools while clients are connected sends them
// notifications/tools/list_changed.
package mcpkit
