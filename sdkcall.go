package mcpkit

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkParams are the SDK's params types, which are pointers.
type sdkParams interface {
	comparable
	mcp.Params
}

// sdkCall is the SDK form of a request, read as the accessors of Request,
// PromptRequest and ResourceRequest read it: each is nil-safe, answering
// the zero value for a request built by hand. It is a Caller too, for the
// lists, whose requests have no mcpkit form.
type sdkCall[P sdkParams] struct{ r *mcp.ServerRequest[P] }

func (c sdkCall[P]) Session() *mcp.ServerSession {
	if c.r == nil {
		return nil
	}
	return c.r.Session
}

func (c sdkCall[P]) ProtocolVersion() string {
	if c.r == nil {
		return ""
	}
	return c.r.ProtocolVersion()
}

func (c sdkCall[P]) ClientCapabilities() *mcp.ClientCapabilities {
	if c.r == nil {
		return nil
	}
	return c.r.ClientCapabilities()
}

func (c sdkCall[P]) ClientInfo() *mcp.Implementation {
	if c.r == nil {
		return nil
	}
	return c.r.ClientInfo()
}

func (c sdkCall[P]) Meta() mcp.Meta {
	var none P
	if c.r == nil || c.r.Params == none {
		return nil
	}
	return c.r.Params.GetMeta()
}

func (c sdkCall[P]) Header() http.Header {
	if c.r == nil || c.r.Extra == nil {
		return nil
	}
	return c.r.Extra.Header
}

func (c sdkCall[P]) TokenInfo() *auth.TokenInfo {
	if c.r == nil || c.r.Extra == nil {
		return nil
	}
	return c.r.Extra.TokenInfo
}
