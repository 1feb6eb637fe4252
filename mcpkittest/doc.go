// Package mcpkittest provides utilities for testing mcpkit tools and
// middleware, in the manner of net/http/httptest.
//
// [NewServer], [NewStatelessServer] and [NewInMemoryServer] run an
// [mcpkit.Server] for the length of a test and hand back a connected SDK
// client session, so that tests see exactly what an MCP client sees:
//
//	func TestGreet(t *testing.T) {
//		srv := mcpkit.NewServer(&mcp.Implementation{Name: "test"}, nil)
//		// ... srv.Add(...)
//		ts := mcpkittest.NewServer(t, srv, nil)
//		res, err := ts.CallTool(t.Context(), "greet", map[string]any{"name": "Ada"})
//		// ... check res
//	}
//
// Middleware authors test headers and tokens most: [Options] give the
// harness's client headers, a bearer token, and put the HTTP server behind
// the SDK's bearer-token check; [ForEachTransport] runs a test over
// in-memory, stateful and stateless HTTP. Without any transport,
// [NewRequest] builds a [mcpkit.Request] (with [WithHeader], [WithTokenInfo]
// and [WithMeta]) for calling a Handler or a Middleware directly, and
// [ServeTool] runs one tool's whole chain.
package mcpkittest
