package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/schema"
	"github.com/mcpkit/mcpkit/skills"
)

// An Upstream serves the upstream's prompts, resources, templates and
// skills too.
var (
	_ mcpkit.PromptProvider   = (*Upstream)(nil)
	_ mcpkit.ResourceProvider = (*Upstream)(nil)
	_ skills.Upstream         = (*Upstream)(nil)
)

// ListPrompts returns the prompts of the last catalog read from the
// upstream, sorted by name, after the name after and at most limit of
// them (see [mcpkit.PromptProvider]). Like [Upstream.ListTools], it never
// waits for the upstream and never fails.
func (u *Upstream) ListPrompts(_ context.Context, _ mcpkit.Caller, after string, limit int) ([]*mcpkit.Prompt, error) {
	c := u.served()
	if c == nil {
		return nil, nil
	}
	return pageAfter(c.prompts, after, limit, func(p *mcpkit.Prompt) string { return p.Name }), nil
}

// LookupPrompt returns the prompt called name in the last catalog read
// from the upstream, or nil (see [mcpkit.PromptProvider]). Its Handler
// forwards prompts/get to the upstream.
func (u *Upstream) LookupPrompt(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Prompt, error) {
	if c := u.served(); c != nil {
		return c.byPrompt[name], nil
	}
	return nil, nil
}

// ListResources returns the resources of the last catalog read from the
// upstream, sorted by URI, after the URI after and at most limit of them
// (see [mcpkit.ResourceProvider]). It never waits for the upstream and
// never fails.
func (u *Upstream) ListResources(_ context.Context, _ mcpkit.Caller, after string, limit int) ([]*mcpkit.Resource, error) {
	c := u.served()
	if c == nil {
		return nil, nil
	}
	return pageAfter(c.resources, after, limit, func(r *mcpkit.Resource) string { return r.URI }), nil
}

// ListResourceTemplates returns the resource templates of the last
// catalog read from the upstream, sorted by their text, after after and
// at most limit of them (see [mcpkit.ResourceProvider]).
func (u *Upstream) ListResourceTemplates(_ context.Context, _ mcpkit.Caller, after string, limit int) ([]*mcpkit.ResourceTemplate, error) {
	c := u.served()
	if c == nil {
		return nil, nil
	}
	return pageAfter(c.templates, after, limit, func(t *mcpkit.ResourceTemplate) string { return t.URITemplate }), nil
}

// LookupResource returns the upstream's resource at uri in the last
// catalog read, or else a resource made for uri when it is a file of one
// of the upstream's skills, or nil (see [mcpkit.ResourceProvider]). A file
// of a skill is a URI below the directory of a SKILL.md in the catalog,
// without dot segments, when the upstream declares the Skills extension:
// the extension serves a skill's other files beside its SKILL.md, and they
// need not be listed. The Handler forwards resources/read of uri to the
// upstream.
func (u *Upstream) LookupResource(_ context.Context, _ mcpkit.Caller, uri string) (*mcpkit.Resource, error) {
	c := u.served()
	if c == nil {
		return nil, nil
	}
	if r := c.byURI[uri]; r != nil {
		return r, nil
	}
	if c.skills && c.skillFile(uri) {
		return c.made.get(uri, func() *mcpkit.Resource {
			name := uri[strings.LastIndexByte(uri, '/')+1:]
			return &mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: name}, Handler: forwardResource{u}, Middleware: u.mw}
		}), nil
	}
	return nil, nil
}

// LookupResourceTemplate returns the upstream's template that serves a
// read of uri, or nil (see [mcpkit.ResourceProvider]). Templates are tried
// as the local server tries its own: the longest literal text before the
// first expression first, then by text; one that leaves a variable empty
// does not match; a template's own text (a completion's reference) finds
// it too. Its Handler forwards resources/read of the URI read to the
// upstream.
func (u *Upstream) LookupResourceTemplate(_ context.Context, _ mcpkit.Caller, uri string) (*mcpkit.ResourceTemplate, error) {
	c := u.served()
	if c == nil {
		return nil, nil
	}
	for _, m := range c.matchers {
		if m.t.URITemplate == uri || m.matches(uri) {
			return m.t, nil
		}
	}
	return nil, nil
}

// skillFile reports whether uri is below the directory of one of the
// SKILL.md resources of c, with no segment that is empty, "." or "..",
// or holds an encoded slash or backslash, and no query or fragment.
func (c *catalog) skillFile(uri string) bool {
	if strings.ContainsAny(uri, "?#") {
		return false
	}
	for i := len(uri) - 1; i > 0; i-- {
		if uri[i] != '/' {
			continue
		}
		if !c.skillRoots[uri[:i+1]] {
			continue
		}
		for seg := range strings.SplitSeq(uri[i+1:], "/") {
			// A segment that decodes to a path of its own (an encoded
			// slash or backslash) could climb out of the skill where the
			// upstream decodes it.
			if p, err := url.PathUnescape(seg); err != nil || p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\\") {
				return false
			}
		}
		return true
	}
	return false
}

// pageAfter returns the items of sorted, whose keys are in order, after
// the key after, at most limit of them when limit is positive. It shares
// sorted's array, clipped.
func pageAfter[T any](sorted []T, after string, limit int, key func(T) string) []T {
	i, found := slices.BinarySearchFunc(sorted, after, func(x T, k string) int { return strings.Compare(key(x), k) })
	if found {
		i++
	}
	out := sorted[i:]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return slices.Clip(out)
}

// loadPrompts makes defs, the upstream's prompts, the prompts of next,
// keeping those of old whose definitions did not change.
func (u *Upstream) loadPrompts(next, old *catalog, defs []*mcp.Prompt) {
	next.prompts = nil
	next.byPrompt = make(map[string]*mcpkit.Prompt, len(defs))
	next.promptProblems = nil
	for _, d := range defs {
		if d == nil {
			continue
		}
		p, err := u.prompt(d, next.completes)
		if err != nil {
			next.promptProblems = append(next.promptProblems, err)
			u.logger.Warn("proxy: an upstream prompt is left out", "upstream", u.Name(), "error", err)
			continue
		}
		if _, dup := next.byPrompt[p.Name]; dup {
			continue
		}
		if old != nil {
			if prev := old.byPrompt[p.Name]; prev != nil && sameDefinition(&prev.Prompt, &p.Prompt) && (prev.Complete != nil) == (p.Complete != nil) {
				p = prev
			}
		}
		next.byPrompt[p.Name] = p
		next.prompts = append(next.prompts, p)
	}
	slices.SortFunc(next.prompts, func(a, b *mcpkit.Prompt) int { return strings.Compare(a.Name, b.Name) })
}

// prompt returns the local prompt serving d, an upstream prompt: named
// with the prefix, its definition copied, its prompts/get forwarded, and
// its arguments completed by the upstream when completes is set. It
// returns an error naming the prompt when it cannot be served.
func (u *Upstream) prompt(d *mcp.Prompt, completes bool) (*mcpkit.Prompt, error) {
	name := u.opts.Prefix + d.Name
	if err := mcpkit.ValidateToolName(name); err != nil {
		return nil, fmt.Errorf("proxy: %s: prompt %q: %w", u.label(), schema.Clip(d.Name), err)
	}
	seen := make(map[string]bool, len(d.Arguments))
	for i, a := range d.Arguments {
		if a == nil || a.Name == "" {
			return nil, fmt.Errorf("proxy: %s: prompt %q: argument %d has no name", u.label(), name, i)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("proxy: %s: prompt %q: argument %q appears twice", u.label(), name, schema.Clip(a.Name))
		}
		seen[a.Name] = true
	}
	p := &mcpkit.Prompt{Prompt: *d, Handler: &forwardPrompt{u: u, name: d.Name}, Middleware: u.mw}
	p.Name = name
	p.Arguments = make([]*mcp.PromptArgument, len(d.Arguments))
	for i, a := range d.Arguments {
		c := *a
		p.Arguments[i] = &c
	}
	p.Icons = slices.Clone(d.Icons)
	if completes && len(d.Arguments) > 0 {
		ref := &mcp.CompleteReference{Type: "ref/prompt", Name: d.Name}
		p.Complete = make(map[string]mcpkit.CompleteFunc, len(d.Arguments))
		for _, a := range d.Arguments {
			p.Complete[a.Name] = u.completer(ref)
		}
	}
	return p, nil
}

// loadResources makes defs and tdefs, the upstream's resources and
// templates, those of next, keeping those of old whose definitions did
// not change, and compiles the templates.
func (u *Upstream) loadResources(next, old *catalog, defs []*mcp.Resource, tdefs []*mcp.ResourceTemplate) {
	next.resources = nil
	next.byURI = make(map[string]*mcpkit.Resource, len(defs))
	next.skillRoots = map[string]bool{}
	next.made = newMadeCache()
	next.templates = nil
	next.matchers = nil
	next.resourceProblems = nil
	problem := func(err error) {
		next.resourceProblems = append(next.resourceProblems, err)
		u.logger.Warn("proxy: an upstream resource is left out", "upstream", u.Name(), "error", err)
	}
	for _, d := range defs {
		if d == nil {
			continue
		}
		if !absolute(d.URI) {
			problem(fmt.Errorf("proxy: %s: resource %q: the URI is not absolute", u.label(), schema.Clip(d.URI)))
			continue
		}
		if _, dup := next.byURI[d.URI]; dup {
			continue
		}
		r := &mcpkit.Resource{Resource: *d, Handler: forwardResource{u}, Middleware: u.mw}
		r.Icons = slices.Clone(d.Icons)
		if old != nil {
			if prev := old.byURI[d.URI]; prev != nil && sameDefinition(&prev.Resource, &r.Resource) {
				r = prev
			}
		}
		next.byURI[r.URI] = r
		next.resources = append(next.resources, r)
		if dir, ok := strings.CutSuffix(r.URI, "/"+skillMD); ok {
			next.skillRoots[dir+"/"] = true
		}
	}
	slices.SortFunc(next.resources, func(a, b *mcpkit.Resource) int { return strings.Compare(a.URI, b.URI) })

	var prevs map[string]*matcher
	if old != nil {
		prevs = make(map[string]*matcher, len(old.matchers))
		for _, m := range old.matchers {
			prevs[m.t.URITemplate] = m
		}
	}
	seen := make(map[string]bool, len(tdefs))
	for _, d := range tdefs {
		if d == nil || seen[d.URITemplate] {
			continue
		}
		seen[d.URITemplate] = true
		m, err := u.matcher(d, next.completes)
		if err != nil {
			problem(err)
			continue
		}
		if prev := prevs[d.URITemplate]; prev != nil && sameDefinition(&prev.t.ResourceTemplate, &m.t.ResourceTemplate) && (prev.t.Complete != nil) == (m.t.Complete != nil) {
			m = prev
		}
		next.matchers = append(next.matchers, m)
		next.templates = append(next.templates, m.t)
	}
	slices.SortFunc(next.templates, func(a, b *mcpkit.ResourceTemplate) int { return strings.Compare(a.URITemplate, b.URITemplate) })
	slices.SortFunc(next.matchers, func(a, b *matcher) int {
		return cmp.Or(cmp.Compare(len(b.literal), len(a.literal)), strings.Compare(a.t.URITemplate, b.t.URITemplate))
	})
}

// absolute reports whether uri is an absolute URI, with a scheme.
func absolute(uri string) bool {
	p, err := url.Parse(uri)
	return err == nil && p.Scheme != ""
}

// A matcher is one of the upstream's templates, compiled: the local
// template it is listed as, and what reads of the URIs it matches need.
type matcher struct {
	t        *mcpkit.ResourceTemplate
	compiled *uritemplate.Template
	literal  string // the text before the first expression
}

// matcher compiles d, an upstream template, into the local template that
// lists it, its variables completed by the upstream when completes is
// set. It returns an error naming the template when it does not compile.
func (u *Upstream) matcher(d *mcp.ResourceTemplate, completes bool) (*matcher, error) {
	compiled, err := uritemplate.New(d.URITemplate)
	if err != nil {
		return nil, fmt.Errorf("proxy: %s: resource template %q: %w", u.label(), schema.Clip(d.URITemplate), err)
	}
	t := &mcpkit.ResourceTemplate{ResourceTemplate: *d, Handler: forwardResource{u}, Middleware: u.mw}
	t.Icons = slices.Clone(d.Icons)
	if names := compiled.Varnames(); completes && len(names) > 0 {
		ref := &mcp.CompleteReference{Type: "ref/resource", URI: d.URITemplate}
		t.Complete = make(map[string]mcpkit.CompleteFunc, len(names))
		for _, v := range names {
			t.Complete[v] = u.completer(ref)
		}
	}
	literal, _, _ := strings.Cut(d.URITemplate, "{")
	return &matcher{t: t, compiled: compiled, literal: literal}, nil
}

// matches reports whether the template matches uri with no variable
// empty.
func (m *matcher) matches(uri string) bool {
	if !strings.HasPrefix(uri, m.literal) {
		return false
	}
	vals := m.compiled.Match(uri)
	if vals == nil {
		return false
	}
	for _, v := range vals {
		s := v.String()
		if v.T != uritemplate.ValueTypeString {
			s = strings.Join(v.V, ",")
		}
		if s == "" {
			return false
		}
	}
	return true
}

// madeCache keeps the resources made for the files of a catalog's
// skills, by URI, so that reads of one URI get one *Resource, whose chain
// the local server keeps. It is bounded: past maxMade resources it starts
// again empty, and a URI longer than maxMadeURI gets a resource of its
// own.
type madeCache struct {
	mu sync.Mutex
	m  map[string]*mcpkit.Resource
}

const (
	maxMade    = 1024
	maxMadeURI = 2048
)

func newMadeCache() *madeCache { return &madeCache{m: map[string]*mcpkit.Resource{}} }

// get returns the resource made for uri, by build if none is kept.
func (c *madeCache) get(uri string, build func() *mcpkit.Resource) *mcpkit.Resource {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.m[uri]; r != nil {
		return r
	}
	r := build()
	if len(uri) > maxMadeURI {
		return r
	}
	if len(c.m) >= maxMade {
		c.m = map[string]*mcpkit.Resource{}
	}
	c.m[uri] = r
	return r
}

// forwardPrompt is the Handler of a proxied prompt: it sends prompts/get
// on to the upstream.
type forwardPrompt struct {
	u    *Upstream
	name string // the prompt's name upstream
}

// ServePrompt forwards req to the upstream prompt as [forward.ServeTool]
// forwards a call: its arguments, its _meta but this hop's keys, the
// answers and state of an input_required round, a progress token of the
// proxy's own, with the credentials of [Options.TargetCredentials]. The
// upstream's result (an input_required one too) is answered as it is, its
// messages' content (embedded resources and resource links included)
// untouched, but for the protocol's keys in its _meta. A prompt the
// upstream no longer has is answered as a prompt never registered.
func (f *forwardPrompt) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	u := f.u
	creds, err := u.targetCredentials(ctx, req, req.Prompt)
	if err != nil {
		return nil, err
	}
	params := &mcp.GetPromptParams{Name: f.name, Arguments: req.Arguments}
	progress := false
	if req.Call != nil && req.Call.Params != nil {
		p := req.Call.Params
		params.Meta = passMeta(p.Meta)
		params.InputResponses = p.InputResponses
		params.RequestState = p.RequestState
		progress = p.GetProgressToken() != nil
	}
	var res *mcp.GetPromptResult
	err = u.exchange(ctx, verifiedPrincipal(req), creds, &params.Meta, progress, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.GetPrompt(ctx, params)
		if err == nil && res == nil {
			err = errors.New("no result")
		}
		return err
	})
	if err != nil {
		if wire := upstreamAnswer(err); wire != nil && wire.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(wire.Message, "unknown prompt") {
			u.wantRefresh(kindPrompts) // the prompt left: the catalog is stale
			local := f.name
			if req.Prompt != nil {
				local = req.Prompt.Name
			}
			return nil, mcpkit.NewUnknownPromptError(local)
		}
		return nil, u.failure(ctx, mcpkit.KindPrompt, f.name, err)
	}
	res.Meta = resultMeta(res.Meta)
	return res, nil
}

// forwardResource is the Handler of a proxied resource and of a proxied
// template: it sends resources/read on to the upstream.
type forwardResource struct{ u *Upstream }

// ServeResource forwards a read of req.URI to the upstream as
// [forwardPrompt.ServePrompt] forwards prompts/get. The contents are
// answered as the upstream sent them, text and blob byte for byte, and so
// is its cache hint, but for the protocol's keys in its _meta. A URI the
// upstream no longer serves is answered as a URI never served.
func (f forwardResource) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	u := f.u
	var target mcpkit.Target = req.Resource
	if req.Template != nil {
		target = req.Template
	}
	creds, err := u.targetCredentials(ctx, req, target)
	if err != nil {
		return nil, err
	}
	uri := req.URI
	if uri == "" && req.Resource != nil {
		uri = req.Resource.URI
	}
	params := &mcp.ReadResourceParams{URI: uri}
	progress := false
	if req.Call != nil && req.Call.Params != nil {
		p := req.Call.Params
		params.Meta = passMeta(p.Meta)
		params.InputResponses = p.InputResponses
		params.RequestState = p.RequestState
		progress = p.GetProgressToken() != nil
	}
	var (
		res  *mcp.ReadResourceResult
		hint mcp.Cacheable
	)
	ctx = context.WithValue(ctx, readHintKey{}, &hint)
	err = u.exchange(ctx, verifiedPrincipal(req), creds, &params.Meta, progress, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.ReadResource(ctx, params)
		if err == nil && res == nil {
			err = errors.New("no result")
		}
		return err
	})
	if err != nil {
		if wire := upstreamAnswer(err); wire != nil && (wire.Code == jsonrpc.CodeInvalidParams || wire.Code == -32002) && wire.Message == "Resource not found" {
			u.wantRefresh(kindResources) // the resource left: the catalog is stale
			return nil, mcpkit.NewResourceNotFoundError(uri)
		}
		return nil, u.failure(ctx, mcpkit.KindResource, uri, err)
	}
	// res may be the SDK's cached copy (see uncachedReads): it is not
	// modified.
	out := *res
	out.Cacheable = hint
	out.Meta = resultMeta(maps.Clone(res.Meta))
	return &out, nil
}

// readHintKey carries, in the context of a forwarded read, where
// uncachedReads puts the upstream's cache hint.
type readHintKey struct{}

// uncachedReads is a sending middleware of the proxy's client that keeps
// the SDK's client from caching the results of resources/read: it caches
// them by URI alone, and the proxy reads for many callers, with
// credentials of their own. The upstream's hint goes to the forwarded
// read (see readHintKey), which passes it to its client, and the SDK
// keeps the result with none.
func uncachedReads(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.ReadResourceResult); ok && r != nil {
			if hint, _ := ctx.Value(readHintKey{}).(*mcp.Cacheable); hint != nil {
				*hint = r.Cacheable
			}
			// r was decoded for this request alone.
			r.Cacheable = mcp.Cacheable{}
		}
		return res, err
	}
}

// completer returns the CompleteFunc that forwards completion/complete of
// ref, an upstream prompt or template, to the upstream: the argument, the
// arguments already resolved, and the _meta but this hop's keys, with the
// credentials of [Options.TargetCredentials], within [Options.Timeout].
// The upstream's values are answered (the local server bounds their
// number).
func (u *Upstream) completer(ref *mcp.CompleteReference) mcpkit.CompleteFunc {
	return func(ctx context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
		var target mcpkit.Target = req.Prompt
		if req.Template != nil {
			target = req.Template
		}
		creds, err := u.targetCredentials(ctx, req, target)
		if err != nil {
			return nil, err
		}
		params := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: req.Argument, Value: req.Value}}
		if req.Arguments != nil {
			params.Context = &mcp.CompleteContext{Arguments: req.Arguments}
		}
		if req.Call != nil && req.Call.Params != nil {
			params.Meta = passMeta(req.Call.Params.Meta)
		}
		if d := u.opts.Timeout; d >= 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, cmp.Or(d, DefaultTimeout))
			defer cancel()
		}
		var res *mcp.CompleteResult
		err = u.exchange(ctx, verifiedPrincipal(req), creds, &params.Meta, false, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
			res, err = cs.Complete(ctx, params)
			if err == nil && res == nil {
				err = errors.New("no result")
			}
			return err
		})
		if err != nil {
			if ref.Type == "ref/resource" {
				return nil, u.failure(ctx, mcpkit.KindResource, ref.URI, err)
			}
			return nil, u.failure(ctx, mcpkit.KindPrompt, ref.Name, err)
		}
		return res.Completion.Values, nil
	}
}

// targetCredentials returns the headers of [Options.TargetCredentials]
// for the request c of t, in canonical form, or nil. Without
// TargetCredentials, a proxy with Credentials refuses the request: its
// upstream expects the caller's credentials, not only the proxy's.
func (u *Upstream) targetCredentials(ctx context.Context, c mcpkit.Caller, t mcpkit.Target) (http.Header, error) {
	switch {
	case u.opts.TargetCredentials != nil:
		h, err := u.opts.TargetCredentials(ctx, c, t)
		if err != nil {
			return nil, noCredentials(u, err)
		}
		if len(h) > 0 {
			return canonical(h), nil
		}
	case u.opts.Credentials != nil:
		return nil, mcpkit.NewToolError(fmt.Errorf("proxy: no credentials for upstream %q: the proxy has none for prompts and resources (see Options.TargetCredentials)", u.Name()), mcpkit.Fatal)
	}
	return nil, nil
}

// verifiedPrincipal is [mcpkit.VerifiedPrincipal] for any Caller: the
// key of a caller's session with the upstream (see sessions).
func verifiedPrincipal(c mcpkit.Caller) string {
	return mcpkit.VerifiedPrincipal(&mcpkit.Request{Call: &mcp.CallToolRequest{Extra: &mcp.RequestExtra{TokenInfo: c.TokenInfo()}}})
}
