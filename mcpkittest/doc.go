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
// [NewRequest] builds a [mcpkit.Request] for calling a Handler or a
// Middleware directly, with no transport at all.
package mcpkittest
