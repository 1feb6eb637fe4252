package mcpkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/paramheader"
)

// A Handler answers a tools/call.
//
// ServeTool returns either a result or an error. The [Server] turns the error
// into what the client sees, following one table: a [*ToolError] becomes a
// result with isError set and its text shown; a [*jsonrpc.Error] (found with
// errors.As, so it may be wrapped) becomes that JSON-RPC error; any other
// error becomes a result with isError set and the error's text. A handler
// that returns a result and a nil error owns the result: it is sent as is.
//
// Handlers must not modify the [Request]. A handler returning (nil, nil) is
// answered with an empty, successful result.
//
// [*jsonrpc.Error]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/jsonrpc#Error
type Handler interface {
	ServeTool(ctx context.Context, req *Request) (*mcp.CallToolResult, error)
}

// The HandlerFunc type is an adapter to allow the use of ordinary functions
// as tool handlers.
type HandlerFunc func(ctx context.Context, req *Request) (*mcp.CallToolResult, error)

// ServeTool calls f(ctx, req).
func (f HandlerFunc) ServeTool(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
	return f(ctx, req)
}

// SDKHandler returns a Handler that calls an SDK [mcp.ToolHandler] with the
// request's SDK form, so that handlers written for [mcp.Server.AddTool] run
// inside mcpkit unchanged. Errors the SDK handler returns go through the
// mcpkit error table like any other handler error.
func SDKHandler(h mcp.ToolHandler) Handler {
	return HandlerFunc(func(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
		return h(ctx, req.sdkCall())
	})
}

// Middleware wraps a Handler with behaviour that runs before and after it.
// A Middleware is called once, when a chain is built, not once per call.
type Middleware func(Handler) Handler

// Chain returns a Middleware that applies the given middleware in order: the
// first is the outermost, sees the call first and the result last.
// Chain(a, b, c)(h) is a(b(c(h))). Chain panics if an entry is nil.
//
// The middleware run when the returned Middleware is applied to a Handler;
// apply it once (at registration) and keep the Handler it returns. Inside a
// [Server], a chain's middleware learn their tool exactly as if they had
// been given to [Server.Use] one by one, so [ForTools] works within it.
//
//go:noinline
func Chain(mw ...Middleware) Middleware {
	for i, m := range mw {
		if m == nil {
			panic(fmt.Sprintf("mcpkit: Chain: middleware %d is nil", i))
		}
	}
	mw = slices.Clone(mw) // the caller may reuse its slice
	return func(h Handler) Handler {
		if b, ok := h.(targetBound); ok {
			// Inside a Server, building a prompt's or a resource's
			// chain: each layer is
			// judged on its own.
			for i := len(mw) - 1; i >= 0; i-- {
				b = b.apply(mw[i])
			}
			return b
		}
		if b, ok := h.(boundHandler); ok {
			if b.probing() {
				// Skipped by a ForTools selection: names alone.
				for i := len(mw) - 1; i >= 0; i-- {
					b.rec.addSkipped(mw[i], b.tool)
				}
				return b
			}
			// Inside a Server: keep every layer labelled and recorded.
			for i := len(mw) - 1; i >= 0; i-- {
				b = apply(mw[i], b)
			}
			return b
		}
		for i := len(mw) - 1; i >= 0; i-- {
			h = mw[i](h)
		}
		return h
	}
}

// A Request is one tools/call as middleware and handlers see it.
//
// A Request is treated as immutable once it has been passed to a Handler:
// middleware that wants to change it makes a copy ([Request.WithArguments],
// [Request.Clone]) and passes the copy on.
type Request struct {
	// Tool is the tool being called, as registered (after transforms). It is
	// shared by every call to that tool and must not be modified. It is
	// never nil: the Server sets it, and so must code that builds a
	// Request by hand (mcpkittest.NewRequest does).
	Tool *Tool

	// Arguments is the raw JSON of the call's arguments, as received.
	// It is nil when the client sent none.
	Arguments json.RawMessage

	// Call is the SDK's form of the request: the session, the request's
	// _meta (progress token and others), and what the transport knows
	// (HTTP headers, token info). It is nil only for a Request built by hand.
	Call *mcp.CallToolRequest
}

// Clone returns a deep copy of r, for middleware that changes a request
// before passing it on: the copy has its own Arguments, its own SDK form
// (Call, with its own params, _meta map and HTTP headers), and shares only
// what nobody may modify: the Tool, the session and the token info.
func (r *Request) Clone() *Request {
	r2 := *r
	r2.Arguments = bytes.Clone(r.Arguments)
	if r.Call != nil {
		call := *r.Call
		if r.Call.Params != nil {
			params := *r.Call.Params
			params.Arguments = r2.Arguments
			params.Meta = maps.Clone(r.Call.Params.Meta)
			call.Params = &params
		}
		if r.Call.Extra != nil {
			extra := *r.Call.Extra
			extra.Header = r.Call.Extra.Header.Clone()
			call.Extra = &extra
		}
		r2.Call = &call
	}
	return &r2
}

// WithArguments returns a copy of r whose arguments are args. The SDK form of
// the copy (Call) carries args as well, so an SDK handler further down the
// chain sees the rewritten arguments; r itself is unchanged.
func (r *Request) WithArguments(args json.RawMessage) *Request {
	r2 := *r
	r2.Arguments = args
	if r.Call != nil {
		call := *r.Call
		if r.Call.Params != nil {
			params := *r.Call.Params
			params.Arguments = args
			call.Params = &params
		}
		r2.Call = &call
	}
	return &r2
}

// Session returns the SDK session the call arrived on, or nil when the
// request was built without one. It is for what the SDK does on a session
// (sending progress notifications, say), never for identity: on protocol
// 2026-07-28 and on stateless servers a session lasts one request, and
// nothing in mcpkit keys on one. Who is calling comes from the request:
// [Request.TokenInfo], [Request.Header], or the request's _meta. Nor is it
// for asking the client for input: the session's Elicit and CreateMessage
// fail on 2026-07-28 and on stateless servers; return an input_required
// result instead, which works on every protocol version (see
// [InputResponse]).
func (r *Request) Session() *mcp.ServerSession {
	return sdkCall[*mcp.CallToolParamsRaw]{r.Call}.Session()
}

// ProtocolVersion returns the MCP protocol version the call arrived with
// ("2026-07-28", "2025-11-25", ...), as the SDK reads it: from the request's
// _meta on 2026-07-28, from the session's initialization before. It is ""
// when it is not known (a request built by hand).
func (r *Request) ProtocolVersion() string {
	return sdkCall[*mcp.CallToolParamsRaw]{r.Call}.ProtocolVersion()
}

// ClientCapabilities returns the capabilities the calling client declared
// (elicitation, sampling, roots, extensions), as the SDK reads them: from
// the request's _meta on 2026-07-28, from the session's initialization
// before. It is nil when they are not known.
func (r *Request) ClientCapabilities() *mcp.ClientCapabilities {
	return sdkCall[*mcp.CallToolParamsRaw]{r.Call}.ClientCapabilities()
}

// ClientInfo returns the name and version the calling client gave, read as
// [Request.ClientCapabilities] reads its capabilities, or nil.
func (r *Request) ClientInfo() *mcp.Implementation {
	return sdkCall[*mcp.CallToolParamsRaw]{r.Call}.ClientInfo()
}

// Meta returns the request's _meta object (which holds, for instance, the
// progress token), or nil when there is none. The map belongs to the request
// and must not be modified.
func (r *Request) Meta() mcp.Meta {
	return sdkCall[*mcp.CallToolParamsRaw]{r.Call}.Meta()
}

// Header returns the HTTP headers of the request that carried the call, or
// nil on transports without HTTP (stdio, in-memory).
func (r *Request) Header() http.Header {
	return sdkCall[*mcp.CallToolParamsRaw]{r.Call}.Header()
}

// TokenInfo returns the verified bearer token of the call, or nil when the
// transport did not authenticate it.
func (r *Request) TokenInfo() *auth.TokenInfo {
	return sdkCall[*mcp.CallToolParamsRaw]{r.Call}.TokenInfo()
}

// sdkCall returns the SDK form of r, building one when r was made by hand.
func (r *Request) sdkCall() *mcp.CallToolRequest {
	if r.Call != nil {
		return r.Call
	}
	return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: r.Tool.Name, Arguments: r.Arguments}}
}

// NotifyProgress sends the client one progress notification now, if it
// asked for progress with a progress token the spec allows (a string or a
// number, as for [ReportProgress]); otherwise, and for requests without a
// session, it does nothing and returns nil. Total is zero when unknown;
// progress should increase with each notification. It waits for the
// notification to be sent and coalesces nothing: most handlers want
// [ReportProgress] instead, which also tells middleware watching progress
// (an idle timeout) that the call is alive.
func (r *Request) NotifyProgress(ctx context.Context, progress, total float64, message string) error {
	token, ok := progressToken(r.Call)
	if !ok {
		return nil
	}
	return r.Call.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: token,
		Progress:      progress,
		Total:         total,
		Message:       message,
	})
}

// ParamHeader returns the value of an argument that the tool's input schema
// mirrors into the Mcp-Param-<name> HTTP header (SEP-2243, protocol
// 2026-07-28), decoded from the header's Base64 form when the client used
// it, and whether the header was sent. The Server has already checked that
// the header agrees with the argument in the body (for the version of the
// tool the call reaches, and only once the caller may see it), so
// middleware may route or authorize on it without parsing the arguments.
func (r *Request) ParamHeader(name string) (string, bool) {
	values := r.Header().Values(paramheader.Prefix + name)
	if len(values) == 0 {
		return "", false
	}
	return paramheader.Decode(values[0])
}
