package mcpkit

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Lister answers tools/list with the tools a request may see.
//
// ServeList returns tools sorted by name. The returned slice and the tools
// in it are shared and must not be modified; a list middleware that filters
// builds a new slice, and one that rewrites a definition returns a modified
// copy of the [Tool] (and should cache that copy by the identity of the
// original, since tools/list is called often and tools change rarely).
//
// A tools/list answers one page, and the server asks for that page alone:
// [ListRequest.After] and [ListRequest.Limit] say which tools it needs, and
// the server's own Lister returns those, so that a list costs in proportion
// to the page, not to the catalog. List middleware that passes the request
// on and rewrites or drops what comes back needs nothing more: when it
// drops tools and the page comes back short, the server asks again for the
// tools after the last one its Lister looked at (with providers, which are
// asked for one page per tools/list, the page is answered short, with a
// cursor). A middleware that needs every tool (to rank them, say) passes
// on a copy of the request with Limit 0, and pays for the whole list.
type Lister interface {
	ServeList(ctx context.Context, req *ListRequest) ([]*Tool, error)
}

// The ListerFunc type is an adapter to allow the use of ordinary functions as
// Listers.
type ListerFunc func(ctx context.Context, req *ListRequest) ([]*Tool, error)

// ServeList calls f(ctx, req).
func (f ListerFunc) ServeList(ctx context.Context, req *ListRequest) ([]*Tool, error) {
	return f(ctx, req)
}

// A ListMiddleware wraps a Lister, to filter or rewrite what tools/list
// answers. Like [Middleware], it is applied once, not per request.
//
// A middleware that selects tools by name (middleware.Deref's Skip) says
// so with a method ToolNames() []string on the Lister it returns, giving
// the names of its match functions (see [SelectorNames]): a server reports
// those that select no tool, as it does a [Visibility]'s. To learn them,
// the server applies it to a Lister that lists nothing.
type ListMiddleware func(Lister) Lister

// ChainList is [Chain] for list middleware: ChainList(a, b, c)(l) is
// a(b(c(l))), so a sees the request first and the list last. It panics if an
// entry is nil.
func ChainList(mw ...ListMiddleware) ListMiddleware {
	for i, m := range mw {
		if m == nil {
			panic(fmt.Sprintf("mcpkit: ChainList: list middleware %d is nil", i))
		}
	}
	mw = slices.Clone(mw)
	return func(l Lister) Lister {
		for i := len(mw) - 1; i >= 0; i-- {
			l = mw[i](l)
		}
		return l
	}
}

// A ListRequest is one tools/list as list middleware sees it.
type ListRequest struct {
	// Call is the SDK's form of the request (session, cursor, transport
	// extras). It is nil for a ListRequest built by hand.
	Call *mcp.ListToolsRequest

	// After is the name the page starts after ("" for the first page),
	// read from the request's cursor.
	After string

	// Limit is how many tools after After the server needs for the page
	// (one more than a page, to know whether another follows). Zero means
	// every tool after After.
	Limit int

	// page, shared by the copies middleware makes, is where the server's
	// own Lister says how far it got.
	page *pageState
}

// pageState is what the server's own Lister reports of a paged request:
// the name of the last tool it returned, and whether more follow it.
type pageState struct {
	last string
	more bool
}

// Session returns the SDK session the request arrived on, or nil.
func (r *ListRequest) Session() *mcp.ServerSession {
	return sdkCall[*mcp.ListToolsParams]{r.Call}.Session()
}

// ProtocolVersion returns the MCP protocol version of the request, or ""
// when it is not known.
func (r *ListRequest) ProtocolVersion() string {
	return sdkCall[*mcp.ListToolsParams]{r.Call}.ProtocolVersion()
}

// ClientCapabilities returns the capabilities the client declared, read as
// [Request.ClientCapabilities] reads them, or nil.
func (r *ListRequest) ClientCapabilities() *mcp.ClientCapabilities {
	return sdkCall[*mcp.ListToolsParams]{r.Call}.ClientCapabilities()
}

// ClientInfo returns the name and version the client gave, or nil.
func (r *ListRequest) ClientInfo() *mcp.Implementation {
	return sdkCall[*mcp.ListToolsParams]{r.Call}.ClientInfo()
}

// Header returns the HTTP headers of the request, or nil on transports
// without HTTP.
func (r *ListRequest) Header() http.Header {
	return sdkCall[*mcp.ListToolsParams]{r.Call}.Header()
}

// TokenInfo returns the verified bearer token of the request, or nil.
func (r *ListRequest) TokenInfo() *auth.TokenInfo {
	return sdkCall[*mcp.ListToolsParams]{r.Call}.TokenInfo()
}
