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
//
// [RawClient] speaks to an HTTP server as a 2026-07-28 client without the
// SDK's client, one JSON-RPC request per call with the protocol's headers
// and _meta, for what that client does not model: the tasks extension's
// methods and its CreateTaskResult, or a request a conforming client would
// not send (a mismatched Mcp-Name header, say).
//
// [CheckLock] guards a server's tool definitions against changes nobody
// meant: it compares what the server lists with a lockfile committed next
// to the test, and fails when a definition changed without a version
// change, or broke compatibility within a major version ([Compare]
// classifies each difference). MCPKIT_UPDATE_LOCK=1 go test rewrites the
// lockfile. [Fingerprint] is the canonical hash it records.
//
// Options follow two rules, one per kind of call. A test server is
// configured, like the SDK's servers and clients, by an [*Options] struct
// where nil means the defaults. A request is built with variadic
// [RequestOption] values, so that the common case stays
// NewRequest(tool, args).
//
// A test server closes itself when its test ends, in order: the client, then
// the HTTP server, then the server's side of each session it opened, so that
// once [Server.Close] returns nothing of the harness is still running.
package mcpkittest
