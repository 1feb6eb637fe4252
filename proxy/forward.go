package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// ErrUnavailable is wrapped by every [*UpstreamError] that says the
// upstream could not be reached or broke off, for errors.Is.
var ErrUnavailable = errors.New("proxy: upstream unavailable")

// An UpstreamError reports a forwarded call that the upstream did not
// answer with a result: it could not be reached, it broke off, it sent
// something that is not a valid answer, or it answered with a JSON-RPC
// error. Its class is [mcpkit.Retryable]; it is not a [*mcpkit.ToolError],
// so that the upstream's circuit breaker counts it as a failure, and the
// local client sees a result with isError set (its text unless errors are
// masked). An upstream's JSON-RPC error is kept as text only: it describes
// the proxy's request to the upstream, not the client's, and must not
// reach the client as a JSON-RPC error of the local server.
type UpstreamError struct {
	Upstream string // the upstream's name
	Tool     string // the upstream's name of the tool
	// Code is the upstream's JSON-RPC error code, or 0 when the upstream
	// did not answer with one.
	Code int64
	// Err is what went wrong; its text is clipped to a few hundred bytes.
	Err error
}

func (e *UpstreamError) Error() string {
	if errors.Is(e.Err, ErrResponseTooLarge) {
		return fmt.Sprintf("upstream %q answered tool %q with too much: %v", e.Upstream, e.Tool, e.Err)
	}
	if e.Code != 0 {
		return fmt.Sprintf("upstream %q failed tool %q: JSON-RPC error %d: %v", e.Upstream, e.Tool, e.Code, e.Err)
	}
	return fmt.Sprintf("upstream %q is unavailable for tool %q: %v", e.Upstream, e.Tool, e.Err)
}

// Unwrap returns Err and, when the upstream gave no JSON-RPC error and
// was not merely too talkative, [ErrUnavailable].
func (e *UpstreamError) Unwrap() []error {
	if e.Code != 0 || errors.Is(e.Err, ErrResponseTooLarge) {
		return []error{e.Err}
	}
	return []error{e.Err, ErrUnavailable}
}

// ErrorClass returns Retryable: the upstream may be back, or the call may
// go better with other arguments.
func (*UpstreamError) ErrorClass() mcpkit.ErrorClass { return mcpkit.Retryable }

// maxErrorText bounds the text an UpstreamError keeps of what the upstream
// or the transport said.
const maxErrorText = 512

// forward is the Handler of a proxied tool: it sends the call on to the
// upstream.
type forward struct {
	u    *Upstream
	name string // the tool's name upstream
}

type credentialsKey struct{}

// ServeTool forwards req to the upstream tool: its arguments (as local
// validation left them), its _meta except the keys that belong to this
// hop (the protocol's, mcpkit's and the progress token), the answers and
// state of an earlier input_required round, and a progress token of the
// proxy's own when the client asked for progress. The call's context
// bounds it: a cancelled call is cancelled upstream. The upstream's result
// is answered as it is, but for the protocol's keys in its _meta.
func (f *forward) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	u := f.u
	var creds http.Header
	if u.opts.Credentials != nil {
		h, err := u.opts.Credentials(ctx, req)
		if err != nil {
			// The caller's problem, not the upstream's: a tool error, which
			// the upstream's circuit breaker does not count.
			return nil, mcpkit.NewToolError(fmt.Errorf("proxy: no credentials for upstream %q: %s", u.Name(), clip(err.Error())), mcpkit.Retryable)
		}
		if len(h) > 0 {
			creds = canonical(h)
			ctx = context.WithValue(ctx, credentialsKey{}, creds)
		}
	}
	params := &mcp.CallToolParams{Name: f.name}
	if len(req.Arguments) > 0 {
		// A pointer is sent as the bytes it points to, and goes in an
		// interface without a copy.
		params.Arguments = &req.Arguments
	}
	var mark callMark
	if req.Call != nil && req.Call.Params != nil {
		p := req.Call.Params
		params.Meta = passMeta(p.Meta)
		params.InputResponses = p.InputResponses
		params.RequestState = p.RequestState
		if p.GetProgressToken() != nil {
			mark.route = openProgress(ctx)
			defer mark.route.close()
			if params.Meta == nil {
				params.Meta = mcp.Meta{}
			}
			params.Meta["progressToken"] = mark.route.token
		}
	}
	ctx = context.WithValue(ctx, callKey{}, mark)
	// An upstream that forgot the session (it restarted) did not run the
	// call: it is sent once more on a new one.
	for try := 0; ; try++ {
		res, err := f.send(ctx, mcpkit.VerifiedPrincipal(req), creds, params, mark.route)
		if errors.Is(err, mcp.ErrSessionMissing) && try == 0 && ctx.Err() == nil {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var refused *toolRefusal
			if errors.As(err, &refused) {
				return nil, refused.err
			}
			var wire *jsonrpc.Error
			if errors.As(err, &wire) && !sdkTransportCode(wire.Code) {
				if e := tooLarge(wire); e != nil {
					return nil, &UpstreamError{Upstream: u.Name(), Tool: f.name, Err: e}
				}
				if e := callerRefused(wire); e != nil {
					// About the caller, not the upstream's health: a tool
					// error, which the breaker does not count.
					e.Upstream = u.Name()
					return nil, mcpkit.NewToolError(e, mcpkit.Fatal)
				}
				if wire.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(wire.Message, "unknown tool") {
					u.wantRefresh() // the tool left: the catalog is stale
				}
				return nil, &UpstreamError{Upstream: u.Name(), Tool: f.name, Code: wire.Code, Err: errors.New(clip(wire.Message))}
			}
			return nil, u.unavailable(f.name, err)
		}
		res.Meta = resultMeta(res.Meta)
		return res, nil
	}
}

// A toolRefusal is a refusal of the proxy's own that is no failure of the
// upstream (a caller's session cannot be had): err, a tool error, goes to
// the caller as it is.
type toolRefusal struct{ err error }

func (r *toolRefusal) Error() string { return r.err.Error() }

// send sends one call to the upstream: on the session of its caller
// (principal, or its credentials creds) when the upstream keeps sessions
// and the call has credentials of its own, on the proxy's connection
// otherwise; either way with creds on its request. A session the upstream
// forgot is forgotten too, so that the next call opens another; a broken
// connection is found by its watch (see Upstream.watch, sessions.open).
func (f *forward) send(ctx context.Context, principal string, creds http.Header, params *mcp.CallToolParams, route *progressRoute) (*mcp.CallToolResult, error) {
	u := f.u
	cs, err := u.current(ctx)
	if err != nil {
		return nil, err
	}
	var caller *callerSession
	if len(creds) > 0 && cs.ID() != "" {
		if caller, err = u.sessions.acquire(ctx, principal, creds); err != nil {
			if errors.Is(err, ErrTooManySessions) {
				return nil, &toolRefusal{mcpkit.NewToolError(err, mcpkit.Retryable)}
			}
			return nil, err
		}
		defer u.sessions.release(caller)
		cs = caller.cs
	}
	if route != nil {
		route.session.Store(cs)
	}
	res, err := cs.CallTool(ctx, params)
	if err == nil && res == nil {
		err = errors.New("no result")
	}
	if err != nil && ctx.Err() == nil && u.broken(err) {
		if caller != nil {
			u.sessions.forget(caller)
		} else {
			u.lost(cs)
		}
	}
	return res, err
}

// broken reports whether err, the failure of a call, says that the
// session it went on is of no more use: the upstream forgot it, the
// connection closed, or, on a transport other than streamable HTTP (where
// one request may fail alone), anything but an answer of the upstream.
func (u *Upstream) broken(err error) bool {
	if errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed) {
		return true
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && !sdkTransportCode(wire.Code) {
		return false // the upstream answered
	}
	return !u.streamable.Load()
}

// sdkTransportCode reports whether code is one the SDK's JSON-RPC layer
// gives its own failures to reach the other side (-32001, -32003 to
// -32005): the upstream said nothing.
func sdkTransportCode(code int64) bool {
	return code == -32001 || -32005 <= code && code <= -32003
}

func (u *Upstream) unavailable(tool string, err error) error {
	if errors.Is(err, ErrClosed) {
		return &UpstreamError{Upstream: u.Name(), Tool: tool, Err: ErrClosed}
	}
	return &UpstreamError{Upstream: u.Name(), Tool: tool, Err: errors.New(clip(err.Error()))}
}

// passMeta returns the entries of a call's _meta that travel on to the
// upstream: trace context (traceparent, tracestate, baggage) and any
// other key, except the progress token (the proxy sends its own) and the
// keys of the MCP protocol and of mcpkit, which describe this hop (the
// client's protocol version, capabilities and identity; a version pin of
// a local tool). It returns nil when none do.
func passMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if k == "progressToken" || strings.HasPrefix(k, "io.modelcontextprotocol/") || strings.HasPrefix(k, "io.github.mcpkit/") {
			continue
		}
		if out == nil {
			out = make(mcp.Meta, len(m))
		}
		out[k] = v
	}
	return out
}

// resultMeta removes from m, the _meta of an upstream's result (the
// proxy's own copy), the keys of the MCP protocol, which describe the
// upstream's hop: its serverInfo, where the local server puts its own.
// It returns m, or nil when nothing is left.
func resultMeta(m mcp.Meta) mcp.Meta {
	for k := range m {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// elicit answers an upstream that asks for input over its session, as
// servers of protocols before 2026-07-28 do: such a request names no call
// the proxy could pass it to, so it is declined. Upstreams of 2026-07-28
// ask with input_required results, which are passed through.
func (u *Upstream) elicit(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// credentials returns the headers Options.Credentials gave for the call ctx
// belongs to.
func credentials(ctx context.Context) http.Header {
	h, _ := ctx.Value(credentialsKey{}).(http.Header)
	return h
}

// clip returns s cut to maxErrorText bytes at a character boundary, with
// "..." when cut.
func clip(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	s = s[:maxErrorText]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}
