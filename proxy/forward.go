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
// masked); for a prompt, a resource or a completion, it sees the error
// -32603 with that text, as for any other error of theirs. An upstream's
// JSON-RPC error is kept as text only: it describes the proxy's request to
// the upstream, not the client's, and must not reach the client as a
// JSON-RPC error of the local server.
type UpstreamError struct {
	Upstream string // the upstream's name
	// Kind is what Tool names: a tool (the zero value), a prompt, or a
	// resource, by its URI.
	Kind mcpkit.Kind
	Tool string // the upstream's name of the tool (prompt, resource URI)
	// Code is the upstream's JSON-RPC error code, or 0 when the upstream
	// did not answer with one.
	Code int64
	// Err is what went wrong; its text is clipped to a few hundred bytes.
	Err error
}

func (e *UpstreamError) Error() string {
	if errors.Is(e.Err, ErrResponseTooLarge) {
		return fmt.Sprintf("upstream %q answered %v %q with too much: %v", e.Upstream, e.Kind, e.Tool, e.Err)
	}
	if e.Code != 0 {
		return fmt.Sprintf("upstream %q failed %v %q: JSON-RPC error %d: %v", e.Upstream, e.Kind, e.Tool, e.Code, e.Err)
	}
	return fmt.Sprintf("upstream %q is unavailable for %v %q: %v", e.Upstream, e.Kind, e.Tool, e.Err)
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
			return nil, noCredentials(u, err)
		}
		if len(h) > 0 {
			creds = canonical(h)
		}
	}
	params := &mcp.CallToolParams{Name: f.name}
	if len(req.Arguments) > 0 {
		// A pointer is sent as the bytes it points to, and goes in an
		// interface without a copy.
		params.Arguments = &req.Arguments
	}
	progress := false
	if req.Call != nil && req.Call.Params != nil {
		p := req.Call.Params
		params.Meta = passMeta(p.Meta)
		params.InputResponses = p.InputResponses
		params.RequestState = p.RequestState
		progress = p.GetProgressToken() != nil
	}
	var res *mcp.CallToolResult
	err := u.exchange(ctx, mcpkit.VerifiedPrincipal(req), creds, &params.Meta, progress, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.CallTool(ctx, params)
		if err == nil && res == nil {
			err = errors.New("no result")
		}
		return err
	})
	if err != nil {
		if wire := upstreamAnswer(err); wire != nil && wire.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(wire.Message, "unknown tool") {
			u.wantRefresh(kindTools) // the tool left: the catalog is stale
		}
		return nil, u.failure(ctx, mcpkit.KindTool, f.name, err)
	}
	res.Meta = resultMeta(res.Meta)
	return res, nil
}

// noCredentials returns the error of a request whose credentials could
// not be had (err is why): the caller's problem, not the upstream's, so a
// tool error, which the upstream's circuit breaker does not count.
func noCredentials(u *Upstream, err error) error {
	return mcpkit.NewToolError(fmt.Errorf("proxy: no credentials for upstream %q: %s", u.Name(), clip(err.Error())), mcpkit.Retryable)
}

// exchange sends one request of a caller to the upstream, do making it on
// the session it is given: with the credentials creds on its request, on
// the caller's own session when the upstream keeps sessions (see send),
// and, when progress is set, under a progress token of the proxy's own,
// put in *meta, whose reports reach the local request. An upstream that
// forgot the session (it restarted) did not run the request: it is sent
// once more on a new one.
func (u *Upstream) exchange(ctx context.Context, principal string, creds http.Header, meta *mcp.Meta, progress bool, do func(context.Context, *mcp.ClientSession) error) error {
	if len(creds) > 0 {
		ctx = context.WithValue(ctx, credentialsKey{}, creds)
	}
	var mark callMark
	if progress {
		mark.route = openProgress(ctx)
		defer mark.route.close()
		if *meta == nil {
			*meta = mcp.Meta{}
		}
		(*meta)["progressToken"] = mark.route.token
	}
	ctx = context.WithValue(ctx, callKey{}, mark)
	for try := 0; ; try++ {
		err := u.send(ctx, principal, creds, mark.route, do)
		if errors.Is(err, mcp.ErrSessionMissing) && try == 0 && ctx.Err() == nil {
			continue
		}
		return err
	}
}

// upstreamAnswer returns the JSON-RPC error the upstream answered with,
// when err is one (and not the SDK's own failure to reach it), or nil.
func upstreamAnswer(err error) *jsonrpc.Error {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && !sdkTransportCode(wire.Code) {
		return wire
	}
	return nil
}

// failure returns the error of a forwarded request of the target of kind
// k that the upstream knows as name, which failed with err: the request's
// own context error, a refusal of the proxy's own, a tool error when the
// upstream refused the caller's credentials, and an [*UpstreamError]
// otherwise.
func (u *Upstream) failure(ctx context.Context, k mcpkit.Kind, name string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var refused *toolRefusal
	if errors.As(err, &refused) {
		return refused.err
	}
	if wire := upstreamAnswer(err); wire != nil {
		if e := tooLarge(wire); e != nil {
			return &UpstreamError{Upstream: u.Name(), Kind: k, Tool: name, Err: e}
		}
		if e := callerRefused(wire); e != nil {
			// About the caller, not the upstream's health: a tool
			// error, which the breaker does not count.
			e.Upstream = u.Name()
			return mcpkit.NewToolError(e, mcpkit.Fatal)
		}
		return &UpstreamError{Upstream: u.Name(), Kind: k, Tool: name, Code: wire.Code, Err: errors.New(clip(wire.Message))}
	}
	return u.unavailable(k, name, err)
}

// A toolRefusal is a refusal of the proxy's own that is no failure of the
// upstream (a caller's session cannot be had): err, a tool error, goes to
// the caller as it is.
type toolRefusal struct{ err error }

func (r *toolRefusal) Error() string { return r.err.Error() }

// send sends one request to the upstream, do making it: on the session
// of its caller (principal, or its credentials creds) when the upstream
// keeps sessions and the request has credentials of its own, on the
// proxy's connection otherwise; either way with creds on its request. A
// session the upstream forgot is forgotten too, so that the next request
// opens another; a broken connection is found by its watch (see
// Upstream.watch, sessions.open).
func (u *Upstream) send(ctx context.Context, principal string, creds http.Header, route *progressRoute, do func(context.Context, *mcp.ClientSession) error) error {
	cs, err := u.current(ctx)
	if err != nil {
		return err
	}
	var caller *callerSession
	if len(creds) > 0 && cs.ID() != "" {
		if caller, err = u.sessions.acquire(ctx, principal, creds); err != nil {
			if errors.Is(err, ErrTooManySessions) {
				return &toolRefusal{mcpkit.NewToolError(err, mcpkit.Retryable)}
			}
			return err
		}
		defer u.sessions.release(caller)
		cs = caller.cs
	}
	if route != nil {
		route.session.Store(cs)
	}
	err = do(ctx, cs)
	if err != nil && ctx.Err() == nil && u.broken(err) {
		if caller != nil {
			u.sessions.forget(caller)
		} else {
			u.lost(cs)
		}
	}
	return err
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

// unavailable returns the error of a request of the target of kind k
// called name that did not reach the upstream, or broke off: err is why.
func (u *Upstream) unavailable(k mcpkit.Kind, name string, err error) error {
	if errors.Is(err, ErrClosed) {
		return &UpstreamError{Upstream: u.Name(), Kind: k, Tool: name, Err: ErrClosed}
	}
	return &UpstreamError{Upstream: u.Name(), Kind: k, Tool: name, Err: errors.New(clip(err.Error()))}
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
