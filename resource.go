package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// A Resource is an MCP resource, served at one URI, together with the
// code that reads it.
//
// The embedded [mcp.Resource] is what clients see in resources/list: URI,
// name, title, description, MIME type, size, annotations, icons and
// _meta. The URI must be absolute, with a scheme. [Server.AddResources]
// copies the Resource; changing it afterwards has no effect on the server.
type Resource struct {
	mcp.Resource

	// Handler serves resources/read of the resource. It is required.
	Handler ResourceHandler

	// Middleware wraps Handler for this resource only, inside the
	// server-wide middleware. Only the layers whose Handler also serves
	// resources apply (see [ResourceHandler]).
	Middleware []Middleware

	// Tags are free-form labels for filtering and visibility rules.
	Tags []string

	// Unlisted keeps the resource out of resources/list while
	// resources/read still serves it.
	Unlisted bool

	// Origin is the resource this one derives from (a mounted server's,
	// served under a prefixed URI), or nil for a resource of its own; see
	// [Tool.Origin]. It is shared and must not be modified.
	Origin *Resource
}

// Kind returns KindResource.
func (r *Resource) Kind() Kind { return KindResource }

// Key returns the URI of the resource at the end of r's chain of origins.
func (r *Resource) Key() string {
	o := r
	for i := 0; o.Origin != nil && i < maxOrigins; i++ {
		o = o.Origin
	}
	return o.URI
}

// HasTag reports whether r carries tag.
func (r *Resource) HasTag(tag string) bool { return slices.Contains(r.Tags, tag) }

func (r *Resource) target() {}

// A ResourceTemplate serves the resources whose URIs match a URI template
// (RFC 6570), together with the code that reads them.
//
// The embedded [mcp.ResourceTemplate] is what clients see in
// resources/templates/list. The template is compiled once, by
// [Server.AddResourceTemplates], which copies the ResourceTemplate. A
// resources/read of a URI no resource has is matched against the
// templates, the template with the longest literal text before its first
// expression first (then in the order of their text); the first that
// matches, with no variable empty, serves it, its variables decoded into
// [ResourceRequest.Params]. Values are percent-decoded: any variable can
// hold "/", ".." or a NUL once decoded ("docs://{name}" gives
// "../../etc/passwd" for "docs://..%2F..%2Fetc%2Fpasswd"), and a reserved
// expansion ({+path}) matches them unencoded too: a value must never be
// used as a file path.
type ResourceTemplate struct {
	mcp.ResourceTemplate

	// Handler serves resources/read of the URIs the template matches. It
	// is required.
	Handler ResourceHandler

	// Middleware wraps Handler for this template only, inside the
	// server-wide middleware, as [Resource.Middleware] does.
	Middleware []Middleware

	// Complete suggests values for the template's variables, by
	// variable name, for completion/complete, as [Prompt.Complete] does
	// for a prompt's arguments.
	Complete map[string]CompleteFunc

	// Tags are free-form labels for filtering and visibility rules.
	Tags []string

	// Unlisted keeps the template out of resources/templates/list while
	// resources/read still serves the URIs it matches.
	Unlisted bool

	// Origin is the template this one derives from (a mounted server's,
	// served under a prefixed text), or nil for a template of its own;
	// see [Tool.Origin]. It is shared and must not be modified.
	Origin *ResourceTemplate

	compiled *uritemplate.Template
	literal  string // the text before the first expression
}

// Kind returns KindResource.
func (t *ResourceTemplate) Kind() Kind { return KindResource }

// Key returns the text of the template at the end of t's chain of
// origins.
func (t *ResourceTemplate) Key() string {
	o := t
	for i := 0; o.Origin != nil && i < maxOrigins; i++ {
		o = o.Origin
	}
	return o.URITemplate
}

// HasTag reports whether t carries tag.
func (t *ResourceTemplate) HasTag(tag string) bool { return slices.Contains(t.Tags, tag) }

func (t *ResourceTemplate) target() {}

// match returns the variables of uri decoded, or nil when t does not
// match it or a variable is empty.
func (t *ResourceTemplate) match(uri string) map[string]string {
	if !strings.HasPrefix(uri, t.literal) {
		return nil
	}
	vals := t.compiled.Match(uri)
	if vals == nil {
		return nil
	}
	params := make(map[string]string, len(vals))
	for name, v := range vals {
		s := v.String()
		if v.T != uritemplate.ValueTypeString {
			s = strings.Join(v.V, ",")
		}
		if s == "" {
			return nil
		}
		params[name] = s
	}
	return params
}

// A ResourceHandler answers a resources/read.
//
// A middleware serves resources as well as tools when the Handler it
// returns also implements ResourceHandler, as for prompts (see
// [PromptHandler]); [Server.ResourcePipeline] lists the layers skipped.
// Errors are mapped onto the wire as JSON-RPC errors: a [*jsonrpc.Error]
// is kept, any other error is -32603 with its text (generic when masked,
// for panics), its class in the error's data under [MetaKeyErrorClass].
//
// [*jsonrpc.Error]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/jsonrpc#Error
type ResourceHandler interface {
	ServeResource(ctx context.Context, req *ResourceRequest) (*mcp.ReadResourceResult, error)
}

// The ResourceHandlerFunc type is an adapter to allow the use of ordinary
// functions as resource handlers.
type ResourceHandlerFunc func(ctx context.Context, req *ResourceRequest) (*mcp.ReadResourceResult, error)

// ServeResource calls f(ctx, req).
func (f ResourceHandlerFunc) ServeResource(ctx context.Context, req *ResourceRequest) (*mcp.ReadResourceResult, error) {
	return f(ctx, req)
}

// A ResourceRequest is one resources/read as middleware and handlers see
// it. Like a [Request], it is treated as immutable once passed on.
type ResourceRequest struct {
	// Resource is the resource being read, or nil when a template serves
	// the URI. It is shared and must not be modified.
	Resource *Resource

	// Template is the template that matched the URI, or nil. It is shared
	// and must not be modified.
	Template *ResourceTemplate

	// URI is the URI read, as the server serves it.
	URI string

	// Params are the template's variables, decoded from URI (nil for a
	// resource). The map belongs to the request.
	Params map[string]string

	// Call is the SDK's form of the request. It is nil only for a
	// ResourceRequest built by hand.
	Call *mcp.ReadResourceRequest

	private bool // see Private
}

// Private reports whether the server answers the read with cacheScope
// "private", whatever the handler says: what the caller reads depends on
// who asks (a per-request rule decides resources). A cache whose key
// several principals share must not keep it.
func (r *ResourceRequest) Private() bool { return r.private }

// ReadAt serves req with h as a read of uri, as a mount serves a read
// with the mounted server's resource, and a derived resource (package
// transform) with the one it derives from: h sees req with its URI, in
// its SDK form too, set to uri, and the contents it returns for uri are
// answered under req.URI. req itself is unchanged.
func ReadAt(ctx context.Context, h ResourceHandler, req *ResourceRequest, uri string) (*mcp.ReadResourceResult, error) {
	if uri == req.URI {
		return h.ServeResource(ctx, req)
	}
	at := *req
	at.URI = uri
	if req.Call != nil && req.Call.Params != nil {
		call := *req.Call
		params := *req.Call.Params
		params.URI = uri
		call.Params = &params
		at.Call = &call
	}
	res, err := h.ServeResource(ctx, &at)
	if res == nil {
		return res, err
	}
	out := *res
	out.Contents = slices.Clone(res.Contents)
	for i, c := range out.Contents {
		if c != nil && c.URI == uri {
			cc := *c
			cc.URI = req.URI
			out.Contents[i] = &cc
		}
	}
	return &out, err
}

// Session returns the SDK session the request arrived on, or nil; see
// [Request.Session].
func (r *ResourceRequest) Session() *mcp.ServerSession {
	return sdkCall[*mcp.ReadResourceParams]{r.Call}.Session()
}

// ProtocolVersion returns the MCP protocol version of the request, or "".
func (r *ResourceRequest) ProtocolVersion() string {
	return sdkCall[*mcp.ReadResourceParams]{r.Call}.ProtocolVersion()
}

// ClientCapabilities returns the capabilities the client declared, or nil.
func (r *ResourceRequest) ClientCapabilities() *mcp.ClientCapabilities {
	return sdkCall[*mcp.ReadResourceParams]{r.Call}.ClientCapabilities()
}

// ClientInfo returns the name and version the client gave, or nil.
func (r *ResourceRequest) ClientInfo() *mcp.Implementation {
	return sdkCall[*mcp.ReadResourceParams]{r.Call}.ClientInfo()
}

// Meta returns the request's _meta object, or nil. It must not be
// modified.
func (r *ResourceRequest) Meta() mcp.Meta {
	return sdkCall[*mcp.ReadResourceParams]{r.Call}.Meta()
}

// Header returns the HTTP headers of the request, or nil on transports
// without HTTP.
func (r *ResourceRequest) Header() http.Header {
	return sdkCall[*mcp.ReadResourceParams]{r.Call}.Header()
}

// TokenInfo returns the verified bearer token of the request, or nil.
func (r *ResourceRequest) TokenInfo() *auth.TokenInfo {
	return sdkCall[*mcp.ReadResourceParams]{r.Call}.TokenInfo()
}

// name returns what the request reads, for messages: the resource's URI,
// or the template's text.
func (r *ResourceRequest) name() string {
	if r.Template != nil {
		return r.Template.URITemplate
	}
	return r.URI
}

// ErrDuplicateResource is returned by [Server.AddResources] and
// [Server.AddResourceTemplates] for a resource already registered under
// its URI, or a template under its text.
var ErrDuplicateResource = errors.New("mcpkit: duplicate resource")

// AddResources registers resources. Each is checked first: its URI
// (absolute, with a scheme), its name and its handler. If any is invalid,
// or already registered under its URI (unless
// [ServerOptions.ReplaceDuplicates] is set), AddResources returns an
// error naming it and registers none of them.
//
// AddResources copies each Resource. Once a resource or template is
// added, the server declares the resources capability; clients listening
// for changes that see an added resource receive
// notifications/resources/list_changed.
func (s *Server) AddResources(resources ...*Resource) error {
	ts := make([]Target, len(resources))
	for i, r := range resources {
		if r == nil {
			return fmt.Errorf("mcpkit: AddResources: resource %d is nil", i)
		}
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme == "" {
			return fmt.Errorf("mcpkit: resource %q: the URI must be absolute, with a scheme", r.URI)
		}
		if err := checkTarget("resource", r.URI, r.Name, r.Handler != nil, r.Middleware); err != nil {
			return err
		}
		c := *r
		c.Middleware = slices.Clone(r.Middleware)
		c.Tags = slices.Clone(r.Tags)
		ts[i] = &c
	}
	if len(ts) == 0 {
		return nil
	}
	return s.addTargets(famResource, ts, ErrDuplicateResource, "AddResources")
}

// badPercent returns the index of the first percent sign of text that is
// not followed by two hexadecimal digits, or -1.
func badPercent(text string) int {
	for i := 0; i < len(text); i++ {
		if text[i] != '%' {
			continue
		}
		if i+2 >= len(text) || !isHex(text[i+1]) || !isHex(text[i+2]) {
			return i
		}
		i += 2
	}
	return -1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// compileTemplate checks t as AddResourceTemplates does, and returns a
// copy of it, compiled.
func compileTemplate(t *ResourceTemplate) (*ResourceTemplate, error) {
	if i := badPercent(t.URITemplate); i >= 0 {
		return nil, fmt.Errorf("mcpkit: template %q: the percent sign at byte %d does not begin an escape of two hexadecimal digits (write %%25 for a percent sign)", t.URITemplate, i)
	}
	compiled, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return nil, fmt.Errorf("mcpkit: template %q: %w", t.URITemplate, err)
	}
	literal, _, _ := strings.Cut(t.URITemplate, "{")
	if u, err := url.Parse(literal); err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("mcpkit: template %q: the template must be absolute, with a scheme before its first expression", t.URITemplate)
	}
	if err := checkTarget("template", t.URITemplate, t.Name, t.Handler != nil, t.Middleware); err != nil {
		return nil, err
	}
	vars := map[string]bool{}
	for _, v := range compiled.Varnames() {
		vars[v] = true
	}
	if err := checkCompleters("template", t.URITemplate, "variable", t.Complete, vars); err != nil {
		return nil, err
	}
	compiled.Match(literal) // compiles its matcher once, here
	c := *t
	c.Middleware = slices.Clone(t.Middleware)
	c.Tags = slices.Clone(t.Tags)
	c.Complete = maps.Clone(t.Complete)
	c.compiled, c.literal = compiled, literal
	return &c, nil
}

// AddResourceTemplates registers templates, as [Server.AddResources]
// registers resources: each is checked first (its template compiles, and
// is absolute: a scheme before the first expression; each completer is of
// one of its variables), and none is
// registered if one is invalid or already registered under its text.
func (s *Server) AddResourceTemplates(templates ...*ResourceTemplate) error {
	ts := make([]Target, len(templates))
	for i, t := range templates {
		if t == nil {
			return fmt.Errorf("mcpkit: AddResourceTemplates: template %d is nil", i)
		}
		c, err := compileTemplate(t)
		if err != nil {
			return err
		}
		ts[i] = c
	}
	if len(ts) == 0 {
		return nil
	}
	if err := s.addTargets(famTemplate, ts, ErrDuplicateResource, "AddResourceTemplates"); err != nil {
		return err
	}
	for _, t := range ts {
		s.noteCompleters(t.(*ResourceTemplate).Complete)
	}
	return nil
}

// checkTarget checks what a resource or template needs besides its URI.
func checkTarget(what, key, name string, handler bool, mw []Middleware) error {
	if name == "" {
		return fmt.Errorf("mcpkit: %s %q has no name", what, key)
	}
	if !handler {
		return fmt.Errorf("mcpkit: %s %q has no handler", what, key)
	}
	for i, m := range mw {
		if m == nil {
			return fmt.Errorf("mcpkit: %s %q: middleware %d is nil", what, key, i)
		}
	}
	return nil
}

// RemoveResources unregisters the resources registered under the given
// URIs. URIs that are not registered are ignored. A resources/read
// already running finishes; later ones get the not-found error (or are
// served by a template that matches the URI).
func (s *Server) RemoveResources(uris ...string) {
	s.removeTargets(famResource, uris)
}

// RemoveResourceTemplates unregisters the templates registered under the
// given template texts, as [Server.RemoveResources] does resources.
func (s *Server) RemoveResourceTemplates(templates ...string) {
	s.removeTargets(famTemplate, templates)
}

// ResourcePipeline returns the layers that serve resources/read of uri,
// outermost first, and whether uri is served: by the resource registered
// under it, or else by the first template that matches it; uri may also
// be the text of a registered template. As [Server.PromptPipeline] does,
// it marks as skipped, with the reason, the layers whose Handler does not
// serve resources. No per-request [Visibility] is applied.
func (s *Server) ResourcePipeline(uri string) ([]Layer, bool) {
	st := s.state.Load()
	e, _ := s.reachResource(context.Background(), st, nil, uri)
	if e == nil {
		return st.targetPipeline(famTemplate, uri)
	}
	return slices.Clone(e.chain.layers), true
}
