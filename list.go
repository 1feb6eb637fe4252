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
// ListTools returns tools sorted by name. The returned slice and the tools in
// it are shared and must not be modified; a list middleware that filters
// builds a new slice, and one that rewrites a definition returns a modified
// copy of the [Tool] (and should cache that copy by the identity of the
// original, since tools/list is called often and tools change rarely).
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
}

// Session returns the SDK session the request arrived on, or nil.
func (r *ListRequest) Session() *mcp.ServerSession {
	if r.Call == nil {
		return nil
	}
	return r.Call.Session
}

// ProtocolVersion returns the MCP protocol version of the request, or ""
// when it is not known.
func (r *ListRequest) ProtocolVersion() string {
	if r.Call == nil {
		return ""
	}
	return r.Call.ProtocolVersion()
}

// ClientCapabilities returns the capabilities the client declared, read as
// [Request.ClientCapabilities] reads them, or nil.
func (r *ListRequest) ClientCapabilities() *mcp.ClientCapabilities {
	if r.Call == nil {
		return nil
	}
	return r.Call.ClientCapabilities()
}

// ClientInfo returns the name and version the client gave, or nil.
func (r *ListRequest) ClientInfo() *mcp.Implementation {
	if r.Call == nil {
		return nil
	}
	return r.Call.ClientInfo()
}

// Header returns the HTTP headers of the request, or nil on transports
// without HTTP.
func (r *ListRequest) Header() http.Header {
	if r.Call == nil || r.Call.Extra == nil {
		return nil
	}
	return r.Call.Extra.Header
}

// TokenInfo returns the verified bearer token of the request, or nil.
func (r *ListRequest) TokenInfo() *auth.TokenInfo {
	if r.Call == nil || r.Call.Extra == nil {
		return nil
	}
	return r.Call.Extra.TokenInfo
}
