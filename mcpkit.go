package mcpkit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
// apply it once (at registration) and keep the Handler it returns.
func Chain(mw ...Middleware) Middleware {
	for i, m := range mw {
		if m == nil {
			panic(fmt.Sprintf("mcpkit: Chain: middleware %d is nil", i))
		}
	}
	mw = slices.Clone(mw) // the caller may reuse its slice
	return func(h Handler) Handler {
		// Inside a Server's chain, keep every layer labelled with its tool
		// (see ToolOf), as if the middleware had been given one by one.
		t, bound := ToolOf(h)
		for i := len(mw) - 1; i >= 0; i-- {
			h = mw[i](h)
			if bound && i > 0 {
				h = boundHandler{tool: t, next: h}
			}
		}
		return h
	}
}

// ToolOf returns the tool that h serves, when h is the next handler a
// [Server] passes to a middleware while building that tool's chain. A
// middleware calls it once, at construction, to do per-tool work there
// (compile a schema, resolve a per-tool setting) instead of on every call:
//
//	func(next mcpkit.Handler) mcpkit.Handler {
//		limit := defaultLimit
//		if t, ok := mcpkit.ToolOf(next); ok {
//			limit = limitFor(t)
//		}
//		...
//	}
//
// It returns false for handlers built outside a Server (by [Chain] in a
// test, say); such middleware falls back to req.Tool at call time.
func ToolOf(h Handler) (*Tool, bool) {
	if b, ok := h.(boundHandler); ok {
		return b.tool, true
	}
	return nil, false
}

// boundHandler is a layer of a tool's chain, labelled with its tool for
// [ToolOf]. It costs one indirect call per layer and no allocation.
type boundHandler struct {
	tool *Tool
	next Handler
}

func (b boundHandler) ServeTool(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
	return b.next.ServeTool(ctx, req)
}

// buildChain returns t's handler wrapped in server-wide middleware use,
// then t's own, each layer labelled with t.
func buildChain(t *Tool, use []Middleware) Handler {
	h := Handler(boundHandler{tool: t, next: t.Handler})
	for i := len(t.Middleware) - 1; i >= 0; i-- {
		h = boundHandler{tool: t, next: t.Middleware[i](h)}
	}
	for i := len(use) - 1; i >= 0; i-- {
		h = boundHandler{tool: t, next: use[i](h)}
	}
	return h
}

// A Request is one tools/call as middleware and handlers see it.
//
// A Request is treated as immutable once it has been passed to a Handler:
// middleware that wants to change it makes a copy ([Request.WithArguments],
// [Request.Clone]) and passes the copy on.
type Request struct {
	// Tool is the tool being called, as registered (after transforms). It is
	// shared by every call to that tool and must not be modified.
	Tool *Tool

	// Arguments is the raw JSON of the call's arguments, as received.
	// It is nil when the client sent none.
	Arguments json.RawMessage

	// Call is the SDK's form of the request: the session, the request's
	// _meta (progress token and others), and what the transport knows
	// (HTTP headers, token info). It is nil only for a Request built by hand.
	Call *mcp.CallToolRequest
}

// Clone returns a shallow copy of r: a new Request with the same Tool, the
// same Arguments slice and the same Call.
func (r *Request) Clone() *Request {
	r2 := *r
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
// request was built without one.
func (r *Request) Session() *mcp.ServerSession {
	if r.Call == nil {
		return nil
	}
	return r.Call.Session
}

// Meta returns the request's _meta object (which holds, for instance, the
// progress token), or nil when there is none. The map belongs to the request
// and must not be modified.
func (r *Request) Meta() mcp.Meta {
	if r.Call == nil || r.Call.Params == nil {
		return nil
	}
	return r.Call.Params.Meta
}

// Header returns the HTTP headers of the request that carried the call, or
// nil on transports without HTTP (stdio, in-memory).
func (r *Request) Header() http.Header {
	if r.Call == nil || r.Call.Extra == nil {
		return nil
	}
	return r.Call.Extra.Header
}

// TokenInfo returns the verified bearer token of the call, or nil when the
// transport did not authenticate it.
func (r *Request) TokenInfo() *auth.TokenInfo {
	if r.Call == nil || r.Call.Extra == nil {
		return nil
	}
	return r.Call.Extra.TokenInfo
}

// sdkCall returns the SDK form of r, building one when r was made by hand.
func (r *Request) sdkCall() *mcp.CallToolRequest {
	if r.Call != nil {
		return r.Call
	}
	name := ""
	if r.Tool != nil {
		name = r.Tool.Name
	}
	return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name, Arguments: r.Arguments}}
}

// NotifyProgress reports the call's progress to the client, if the client
// asked for progress by sending a progress token; otherwise, and for requests
// without a session, it does nothing and returns nil. Total is zero when
// unknown; progress should increase with each notification.
func (r *Request) NotifyProgress(ctx context.Context, progress, total float64, message string) error {
	ss := r.Session()
	if ss == nil || r.Call.Params == nil {
		return nil
	}
	token := r.Call.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	return ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: token,
		Progress:      progress,
		Total:         total,
		Message:       message,
	})
}

// Log sends a log message to the client (notifications/message), naming the
// tool as its logger. Client logging is deprecated as of protocol
// 2026-07-28 (SEP-2577) but works during the deprecation window. The
// session drops messages below the level the client set with
// logging/setLevel, and all of them until it set one. Without a session Log
// does nothing and returns nil.
func (r *Request) Log(ctx context.Context, level mcp.LoggingLevel, data any) error {
	ss := r.Session()
	if ss == nil {
		return nil
	}
	params := &mcp.LoggingMessageParams{Level: level, Data: data}
	if r.Tool != nil {
		params.Logger = r.Tool.Name
	}
	return ss.Log(ctx, params)
}
