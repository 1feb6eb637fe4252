package mcpkit

import (
	"context"
	"maps"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DeclareExtension declares the extension id in the capabilities that the
// server answers initialize (before 2026-07-28) and server/discover with,
// with settings (nil is an empty object), besides those its SDK options
// declare. Declaring id again replaces its settings. It is for code that
// implements an extension on a server it is given, such as skills.Serve.
func (s *Server) DeclareExtension(id string, settings map[string]any) {
	if settings == nil {
		settings = map[string]any{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := map[string]any{}
	if old := s.extensions.Load(); old != nil {
		next = maps.Clone(*old)
	}
	next[id] = settings
	s.extensions.Store(&next)
}

// declareExtensions answers initialize or server/discover as next does,
// with ext added to the capabilities of its result.
func declareExtensions(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler, ext map[string]any) (mcp.Result, error) {
	res, err := next(ctx, method, req)
	var caps *mcp.ServerCapabilities
	switch r := res.(type) {
	case *mcp.InitializeResult:
		caps = r.Capabilities
	case *mcp.DiscoverResult:
		caps = r.Capabilities
	}
	if caps != nil {
		// The SDK makes these capabilities for this answer alone, their
		// extensions map included: they may be changed in place.
		for id, settings := range ext {
			caps.AddExtension(id, settings.(map[string]any))
		}
	}
	return res, err
}

// ReadsResource reports whether the caller of req may read uri: whether a
// resources/read of uri from that caller reaches a resource or a template,
// decided by the route resources/read takes. req is the SDK's form of any
// request (a custom method's, in an SDK receiving middleware), read for the
// caller's token, headers, protocol version and capabilities; nil is
// whoever calls, to whom only the rules for everyone apply.
//
// private reports whether the answer depends on who asks (a per-request
// [TargetVisibility] decides resources): a result built on it must then
// carry cacheScope "private", as resources/list does.
func (s *Server) ReadsResource(ctx context.Context, req mcp.Request, uri string) (reads, private bool) {
	st := s.state.Load()
	e, _ := s.reachResource(ctx, st, CallerOf(req), uri)
	return e != nil, !st.uniform(KindResource)
}

// CallerOf returns the caller of req, the SDK's form of a request of any
// method (a custom one's, in an SDK receiving middleware): its token,
// headers, protocol version and capabilities, as a [Caller] for the code
// that decides by them. It returns nil for a nil req.
func CallerOf(req mcp.Request) Caller {
	if req == nil {
		return nil
	}
	return requestCaller{req}
}

// requestCaller is the caller of an SDK request of any method.
type requestCaller struct{ r mcp.Request }

func (c requestCaller) TokenInfo() *auth.TokenInfo {
	if x := c.r.GetExtra(); x != nil {
		return x.TokenInfo
	}
	return nil
}

func (c requestCaller) Header() http.Header {
	if x := c.r.GetExtra(); x != nil {
		return x.Header
	}
	return nil
}

func (c requestCaller) ProtocolVersion() string {
	if r, ok := c.r.(interface{ ProtocolVersion() string }); ok {
		return r.ProtocolVersion()
	}
	return ""
}

func (c requestCaller) ClientCapabilities() *mcp.ClientCapabilities {
	if r, ok := c.r.(interface {
		ClientCapabilities() *mcp.ClientCapabilities
	}); ok {
		return r.ClientCapabilities()
	}
	return nil
}
