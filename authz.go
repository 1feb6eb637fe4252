package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Authorization of a call, as opposed to visibility: a visibility rule
// hides a tool from a caller (not listed; a call is answered as for an
// unknown tool), while a requirement (RequireScopes, RequireToken) leaves
// the tool listed and answers a call from a caller who lacks what it needs
// with the MCP authorization spec's challenge, so that the client can
// obtain a better token and call again. Over HTTP the challenge is an HTTP
// status with a WWW-Authenticate header; since the check runs once the call
// has reached its tool (by any route: alias, namespace, version pin, a
// discovery meta-tool, a task), the response the SDK writes for the
// refused call is held and replaced (see holding).

// ErrInsufficientScope is what an [*InsufficientScopeError] unwraps to.
var ErrInsufficientScope = errors.New("mcpkit: insufficient scope")

// MetaKeyRequiredScopes is the key, in the _meta of the error result of a
// call refused by [RequireScopes] or [RequireToken], of the scopes the
// tool needs (a list of strings), for clients that get the refusal as a
// result rather than as an HTTP challenge.
const MetaKeyRequiredScopes = "io.github.mcpkit/requiredScopes"

// An InsufficientScopeError is the error of a call refused by
// [RequireScopes] or [RequireToken]: the caller's token lacks what the tool
// requires, or the caller has no verified token. It is Fatal: the model
// cannot fix it by changing the arguments; the client must get a token
// with Scopes (over HTTP it was challenged to).
type InsufficientScopeError struct {
	// Tool is the name the tool (or prompt, or the URI of the resource:
	// see Kind) was called by.
	Tool string
	// Kind is what was refused: a tool (the zero value), a prompt or a
	// resource.
	Kind Kind
	// Scopes are the scopes the tool needs, as the challenge names them;
	// empty when the requirement names none.
	Scopes []string
	// Unauthenticated reports that the caller had no verified token at
	// all (HTTP answers 401 then, and 403 otherwise).
	Unauthenticated bool
}

func (e *InsufficientScopeError) Error() string {
	switch {
	case e.Unauthenticated && len(e.Scopes) > 0:
		return fmt.Sprintf("%s %q requires authorization with scope %q", e.Kind, e.Tool, strings.Join(e.Scopes, " "))
	case e.Unauthenticated:
		return fmt.Sprintf("%s %q requires authorization", e.Kind, e.Tool)
	case len(e.Scopes) > 0:
		return fmt.Sprintf("insufficient scope: %s %q requires scope %q", e.Kind, e.Tool, strings.Join(e.Scopes, " "))
	}
	return fmt.Sprintf("insufficient scope: the token does not grant %s %q", e.Kind, e.Tool)
}

// Unwrap returns [ErrInsufficientScope].
func (e *InsufficientScopeError) Unwrap() error { return ErrInsufficientScope }

// ErrorClass returns Fatal.
func (e *InsufficientScopeError) ErrorClass() ErrorClass { return Fatal }

// ResultMeta puts the scopes the tool needs under [MetaKeyRequiredScopes].
func (e *InsufficientScopeError) ResultMeta() mcp.Meta {
	if len(e.Scopes) == 0 {
		return nil
	}
	return mcp.Meta{MetaKeyRequiredScopes: slices.Clone(e.Scopes)}
}

// RequireScopes returns a Middleware that lets a call through only when the
// caller's verified bearer token (see the SDK's auth.RequireBearerToken)
// grants every one of scopes. Other calls are refused with a fatal
// [*ToolError] wrapping an [*InsufficientScopeError] naming scopes (so that
// error masking never hides it), which reaches the client as:
//
//   - over HTTP ([Server.HTTPHandler]), status 403 and
//     `WWW-Authenticate: Bearer error="insufficient_scope", scope="<scopes>",
//     resource_metadata="<HTTPOptions.ResourceMetadataURL>"`, the MCP
//     authorization spec's scope challenge; or status 401 with
//     `WWW-Authenticate: Bearer scope="<scopes>", resource_metadata="..."`
//     for a caller without a verified token;
//   - on other transports, and for a call that no HTTP status can answer
//     any more (a task's later round, a call whose response already
//     streamed progress), a result with isError set, class Fatal, and the
//     scopes under [MetaKeyRequiredScopes] in its _meta.
//
// Give it for some tools with [ForTools] or [Tool.Middleware]:
//
//	srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
//
// A tool is then judged by what it derives from, whatever name, version
// or route a call takes to it, as every ForTools selection is. Put it first
// in [Server.Use], before middleware that does work or spends a caller's
// budget (caches, rate limits). Unlike a visibility rule, which hides the
// tool from callers without the scope, the tool stays listed: use a
// requirement when a caller may well obtain the scope (step-up), and
// visibility when the caller should not know the tool exists.
//
// Over HTTP the refusal is final: a middleware further out that turns the
// error into a success still has its response replaced by the challenge.
//
// RequireScopes panics if scopes is empty or holds an empty string or a
// string with a space or a double quote (a scope token cannot hold them).
func RequireScopes(scopes ...string) Middleware {
	if len(scopes) == 0 {
		panic("mcpkit: RequireScopes: no scope")
	}
	scopes = slices.Clone(scopes)
	// Named for itself in Server.Pipeline, which lists its scopes.
	return NamedMiddleware("mcpkit.RequireScopes", RequireToken(func(_ context.Context, info *auth.TokenInfo) bool {
		for _, s := range scopes {
			if !slices.Contains(info.Scopes, s) {
				return false
			}
		}
		return true
	}, scopes...))
}

// RequireToken returns a Middleware that lets a call through only when the
// caller has a verified bearer token for which check holds (a claim, a
// role, an issuer); check is never called without a token. A call it
// refuses is answered as [RequireScopes] answers, the challenge naming
// scopes (none if scopes is empty: the client then learns that it needs a
// better token, not which).
//
// Both guard prompts and resources too: a server-wide requirement, or one
// in a prompt's or resource's own Middleware, refuses a prompts/get or a
// resources/read as it refuses a call (over HTTP with the challenge, on
// 2026-07-28 from the headers, before the body is read; elsewhere with a
// JSON-RPC error saying what the prompt or resource requires).
//
// RequireToken panics if check is nil or a scope is empty or holds a space
// or a double quote.
func RequireToken(check func(ctx context.Context, info *auth.TokenInfo) bool, scopes ...string) Middleware {
	if check == nil {
		panic("mcpkit: RequireToken: nil check")
	}
	for _, s := range scopes {
		if s == "" || strings.ContainsAny(s, " \"\\") {
			panic(fmt.Sprintf("mcpkit: RequireToken: %q is not a scope token", s))
		}
	}
	scopes = slices.Clone(scopes)
	return func(next Handler) Handler {
		r := &requirement{check: check, scopes: scopes, next: next}
		// Inside a Server: the chain's record keeps it, for the refusal
		// of a request by its headers (see refusedEarly).
		switch b := next.(type) {
		case boundHandler:
			b.rec.requirements = append(b.rec.requirements, r)
		case targetBound:
			b.rec.requirements = append(b.rec.requirements, r)
		}
		r.prompts, _ = next.(PromptHandler)
		r.resources, _ = next.(ResourceHandler)
		return r
	}
}

// refusal returns the refusal of a call of the tool called name by a
// caller with token info (nil: none), or nil when the requirement lets it
// through.
func (h *requirement) refusal(ctx context.Context, info *auth.TokenInfo, name string) *InsufficientScopeError {
	if info != nil && h.check(ctx, info) {
		return nil
	}
	return &InsufficientScopeError{Tool: name, Scopes: h.scopes, Unauthenticated: info == nil}
}

// requirement is the layer of RequireToken.
type requirement struct {
	check     func(context.Context, *auth.TokenInfo) bool
	scopes    []string
	next      Handler
	prompts   PromptHandler   // next, in a prompt's chain
	resources ResourceHandler // next, in a resource's chain
}

// LayerSettings shows the scopes a call needs, space-separated as the
// challenge names them; none when the requirement names none.
func (h *requirement) LayerSettings() []Setting {
	if len(h.scopes) == 0 {
		return nil
	}
	return []Setting{{Name: "scopes", Value: strings.Join(h.scopes, " ")}}
}

func (h *requirement) ServeTool(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
	name := ""
	if req.Tool != nil {
		name = req.Tool.Name
	}
	err := h.refusal(ctx, req.TokenInfo(), name)
	if err == nil {
		return h.next.ServeTool(ctx, req)
	}
	verdictOf(ctx).refuse(req.Session(), err)
	// A tool error, so that error masking further out never hides what
	// the client must do.
	return nil, &ToolError{Err: err, Class: Fatal}
}

// ServePrompt refuses a prompts/get as ServeTool refuses a call: over HTTP
// with the challenge, elsewhere with the JSON-RPC error -32603 saying what
// the prompt requires. A requirement is never skipped in a prompt's chain:
// a server-wide RequireScopes guards prompts as it guards tools.
func (h *requirement) ServePrompt(ctx context.Context, req *PromptRequest) (*mcp.GetPromptResult, error) {
	if h.prompts == nil {
		return nil, errTargetChain
	}
	name := ""
	if req.Prompt != nil {
		name = req.Prompt.Name
	}
	err := h.refusal(ctx, req.TokenInfo(), name)
	if err == nil {
		return h.prompts.ServePrompt(ctx, req)
	}
	err.Kind = KindPrompt
	verdictOf(ctx).refuse(req.Session(), err)
	return nil, &ToolError{Err: err, Class: Fatal}
}

// ServeResource refuses a resources/read as ServePrompt refuses a
// prompts/get. A requirement is never skipped in a resource's chain
// either.
func (h *requirement) ServeResource(ctx context.Context, req *ResourceRequest) (*mcp.ReadResourceResult, error) {
	if h.resources == nil {
		return nil, errTargetChain
	}
	err := h.refusal(ctx, req.TokenInfo(), req.name())
	if err == nil {
		return h.resources.ServeResource(ctx, req)
	}
	err.Kind = KindResource
	verdictOf(ctx).refuse(req.Session(), err)
	return nil, &ToolError{Err: err, Class: Fatal}
}

// mountedOf returns the mountedHandler that serves e, a mounted prompt,
// resource or template, or nil.
func mountedOf(e *entry) *mountedHandler {
	var h any
	switch {
	case e.prompt != nil:
		h = e.prompt.Handler
	case e.resource != nil:
		h = e.resource.Handler
	case e.template != nil:
		h = e.template.Handler
	}
	mh, _ := h.(*mountedHandler)
	return mh
}

// requirementRefusal returns the refusal of c by the requirements
// (RequireToken, RequireScopes) of e's chain and, for a mounted target,
// of the chains below it in the servers it is mounted from, or nil. The
// server asks it of a prompt, resource or template before its chain
// runs, so that no layer of the chain (a cache shared by several
// principals) answers a caller the requirement refuses; and of a
// completion or a subscription, which run no chain.
func (s *Server) requirementRefusal(ctx context.Context, e *entry, c Caller) *InsufficientScopeError {
	info := c.TokenInfo()
	name := e.servedName() // what the caller asked for, at every depth
	// Mounts make no cycle (see Server.Mount): the walk ends.
	for e != nil {
		if e.chain != nil {
			for _, r := range e.chain.require {
				if err := r.refusal(ctx, info, name); err != nil {
					return err
				}
			}
		}
		mh := mountedOf(e)
		if mh == nil {
			break
		}
		e = mh.origin
	}
	return nil
}

// challengeResponse answers a call refused with err: 403 and the
// challenge, or 401 for a caller without a token.
func challengeResponse(w http.ResponseWriter, err *InsufficientScopeError, resourceMetadata string) {
	hdr := w.Header()
	for _, k := range []string{"Content-Type", "Content-Length", "Cache-Control", "Connection"} {
		hdr.Del(k)
	}
	status := http.StatusForbidden
	if err.Unauthenticated {
		status = http.StatusUnauthorized
	}
	hdr.Set("WWW-Authenticate", ChallengeHeader(err, resourceMetadata))
	http.Error(w, err.Error(), status)
}

// refusedEarly returns the refusal of a 2026-07-28 tools/call, prompts/get
// or resources/read that its headers alone decide, before the SDK reads its
// body, or nil to let the request through (it is then judged once it
// reaches its target, as on every other route). The protocol names the
// method in the Mcp-Method header, and the tool or prompt (params.name) or
// the resource (params.uri) in Mcp-Name (and the SDK refuses a body that
// says otherwise), so a request whose every target the caller sees, by the
// one route (walk), has a requirement the caller's token does not meet is
// refused at once, naming the first requirement of the target an unpinned
// request reaches. A name the headers cannot decide goes through: one the
// caller sees nothing under (it is answered as unknown, so that the
// refusal does not tell that a hidden target exists), one a provider
// decides (providers are asked once per call, when the call reaches
// them), a meta-tool that calls another by an argument
// (transform.Discovery's call_tool), a tool with a version the caller may
// reach without a requirement (a pin in the body could choose it). The
// client's capabilities, which travel in the body, are not known yet: a
// per-request predicate sees none. It returns the refusal with the entry
// it is of.
func (s *Server) refusedEarly(r *http.Request) (*entry, *InsufficientScopeError) {
	if r.Header.Get(protocolVersionHeader) < statelessVersion {
		return nil, nil
	}
	k, ok := headerKind(r.Header.Get("Mcp-Method"))
	if !ok {
		return nil, nil
	}
	st := s.state.Load()
	name := r.Header.Get("Mcp-Name")
	switch k {
	case KindResource:
		if !st.readRequiring {
			return nil, nil // the common case
		}
	default:
		if k == KindTool && st.requiring == 0 {
			return nil, nil // the common case
		}
		// A name whose registered versions have no requirement costs
		// no route.
		n, ok := st.index(k).Get(name)
		if !ok || !slices.ContainsFunc(n.versions, func(e *entry) bool { return len(e.chain.require) > 0 }) {
			return nil, nil
		}
	}
	ctx := r.Context()
	info := auth.TokenInfoFromContext(ctx)
	var seen []*entry
	if _, _, blocked := s.walk(ctx, st, headerCaller{info: info, header: r.Header}, k, name, pin{}, &seen, true); blocked {
		return nil, nil
	}
	var first *InsufficientScopeError
	var of *entry
	for _, e := range seen {
		var err *InsufficientScopeError
		for _, req := range e.chain.require {
			if err = req.refusal(ctx, info, e.servedName()); err != nil {
				err.Kind = k
				break
			}
		}
		if err == nil {
			return nil, nil
		}
		if first == nil {
			first, of = err, e
		}
	}
	return of, first
}

// headerKind returns the kind of target a request of method names in its
// Mcp-Name header, if it names one.
func headerKind(method string) (Kind, bool) {
	switch method {
	case "tools/call":
		return KindTool, true
	case "prompts/get":
		return KindPrompt, true
	case "resources/read":
		return KindResource, true
	}
	return 0, false
}

// ChallengeHeader returns the value of the WWW-Authenticate header that
// answers a call refused with err, naming resourceMetadata (the URL of the
// protected resource metadata, RFC 9728) if it is not empty:
// `Bearer error="insufficient_scope", scope="a b", resource_metadata="..."`,
// without the error for an unauthenticated caller. [Server.HTTPHandler]
// sends it; it is exported for servers that answer HTTP themselves.
func ChallengeHeader(err *InsufficientScopeError, resourceMetadata string) string {
	var b strings.Builder
	b.WriteString("Bearer ")
	sep := ""
	param := func(k, v string) {
		b.WriteString(sep)
		b.WriteString(k)
		b.WriteString(`="`)
		b.WriteString(v)
		b.WriteString(`"`)
		sep = ", "
	}
	if !err.Unauthenticated {
		param("error", "insufficient_scope")
	}
	if len(err.Scopes) > 0 {
		param("scope", strings.Join(err.Scopes, " "))
	}
	if resourceMetadata != "" {
		param("resource_metadata", strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(resourceMetadata))
	}
	if sep == "" {
		return "Bearer"
	}
	return b.String()
}

// headerCaller is the Caller of a request known by its headers alone.
type headerCaller struct {
	info   *auth.TokenInfo
	header http.Header
}

func (c headerCaller) TokenInfo() *auth.TokenInfo { return c.info }
func (c headerCaller) Header() http.Header        { return c.header }
func (c headerCaller) ProtocolVersion() string    { return c.header.Get(protocolVersionHeader) }

// ClientCapabilities returns nil: they travel in the body.
func (c headerCaller) ClientCapabilities() *mcp.ClientCapabilities { return nil }
