package mcpkit

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"sync"

	"github.com/mcpkit/mcpkit/internal/schema"
)

// A Provider is a source of tools resolved per request, for catalogs that
// are too large or change too often to register one by one: the tools of
// a tenant, read from a database by the tenant in the caller's token, say.
// A Server asks it for one page of tools per tools/list and for one tool
// per tools/call, never for the whole catalog.
//
// The tools it returns go through what registered tools go through: the
// server's catalog transforms (except that a tool a transform renames is
// left out, since the provider could not find it by its new name), its
// [Visibility] (enabled, and allowed per request), its middleware and the
// validation of arguments and results. A registered tool of the same name
// wins over a provided one for the callers who may see it; for the others,
// it is a name never registered, and the first provider (in the order they
// were added) that serves them the name decides it.
//
// Return the same *Tool for the same tool, from one call to the next: the
// Server keeps the chain and the compiled schemas of a tool by its pointer
// (a bounded number of them), so a tool seen again costs a map lookup; a
// new *Tool each time costs building its chain on each call. Compiled
// schemas are shared by content whatever the pointers. A Provider must be
// safe for concurrent use. A provider that fails (an error, a panic) is
// left out of the answer and logged, and its error never reaches a client.
type Provider interface {
	// ListTools returns, sorted by name, the tools c may see whose names
	// come after the name after ("" for the first), at most limit of them
	// when limit is positive, all of them otherwise.
	ListTools(ctx context.Context, c Caller, after string, limit int) ([]*Tool, error)

	// LookupTool returns the tool called name that c may call, or nil
	// when c has none of that name.
	LookupTool(ctx context.Context, c Caller, name string) (*Tool, error)
}

// A ToolSearcher is a [Provider] that can search its own tools, in its
// database, say, so that a search of the server's catalog (see
// [Server.SearchProvided]) finds them without listing them all.
//
// SearchTools returns the tools c may see that best answer query (the
// words of a caller's search, each once, space-separated), best first, at
// most limit of them. It need not be
// exact: what it returns is scored again, with the words of each tool,
// against the server's other tools; a tool it leaves out is not found.
type ToolSearcher interface {
	SearchTools(ctx context.Context, c Caller, query string, limit int) ([]*Tool, error)
}

// A PromptProvider is a [Provider] that also serves prompts, resolved per
// request as its tools are: the prompts it returns are listed and served
// beside the registered ones, by the same rules (a registered prompt of
// the same name wins for the callers who see it; the server's
// [Visibility], middleware and argument checks apply). Return the same
// *Prompt for the same prompt, as for tools.
type PromptProvider interface {
	// ListPrompts returns, sorted by name, the prompts c may see whose
	// names come after the name after ("" for the first), at most limit
	// of them when limit is positive, all of them otherwise.
	ListPrompts(ctx context.Context, c Caller, after string, limit int) ([]*Prompt, error)

	// LookupPrompt returns the prompt called name that c may get, or
	// nil when c has none of that name.
	LookupPrompt(ctx context.Context, c Caller, name string) (*Prompt, error)
}

// A ResourceProvider is a [Provider] that also serves resources and
// resource templates, resolved per request: listed beside the registered
// ones, read after them (a URI that a registered resource or template
// serves to the caller is theirs), by the same rules.
type ResourceProvider interface {
	// ListResources returns, sorted by URI, the resources c may see
	// whose URIs come after the URI after ("" for the first), at most
	// limit of them when limit is positive, all of them otherwise.
	ListResources(ctx context.Context, c Caller, after string, limit int) ([]*Resource, error)

	// ListResourceTemplates returns, sorted by their text, the templates
	// c may see whose texts come after after, at most limit of them when
	// limit is positive.
	ListResourceTemplates(ctx context.Context, c Caller, after string, limit int) ([]*ResourceTemplate, error)

	// LookupResource returns the resource whose URI is uri that c may
	// read, or nil when c has none of that URI.
	LookupResource(ctx context.Context, c Caller, uri string) (*Resource, error)

	// LookupResourceTemplate returns the template that serves a read of
	// uri for c (one of those it lists, which matches uri), or nil. It
	// is asked when LookupResource returns nil. The server decodes the
	// variables as for a registered template, and the read is the
	// template's: a rule, a limit or a cache keyed on the template
	// holds for every URI it serves. A completion/complete of a template
	// names it by its text: LookupResourceTemplate is then asked with the
	// text, and the template whose text it is answers. Return the same
	// *ResourceTemplate for the same template: the server compiles it
	// once per pointer.
	LookupResourceTemplate(ctx context.Context, c Caller, uri string) (*ResourceTemplate, error)
}

// A ResourceNotifier is a [ResourceProvider] that may announce the
// changes of its resources with [Server.ResourceUpdated]. A server
// agrees to a client's subscription to a URI a provider serves
// (resources/subscribe, a listen stream's resourceSubscriptions) only
// when the provider is one and NotifiesResourceUpdates reports true: it
// would otherwise promise updates no one announces. A subscription to a
// URI of another provider is answered as one to a URI never served.
type ResourceNotifier interface {
	NotifiesResourceUpdates() bool
}

// AddProvider makes the tools of p callable and listed, alongside the
// registered tools and those of other providers, merged by name, and so
// its prompts, resources and templates when p is a [PromptProvider] or a
// [ResourceProvider] (the server then answers completion/complete, for
// the completers of what p serves). Open sessions receive
// notifications/tools/list_changed. AddProvider panics if p is nil.
func (s *Server) AddProvider(p Provider) {
	if p == nil {
		panic("mcpkit: AddProvider: nil provider")
	}
	_, prompts := p.(PromptProvider)
	_, resources := p.(ResourceProvider)
	if prompts || resources {
		// Its prompts and templates may complete: completion/complete
		// is routed from the start.
		s.noteCompleting()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setSources(append(slices.Clone(s.sources), &providerSource{s: s, p: p}))
}

// RemoveProvider stops serving the tools of p, a Provider given to
// [Server.AddProvider], and reports whether it was one: calls already
// running finish, later calls and lists no longer see its tools, and
// listening clients receive notifications/tools/list_changed (the other
// replicas' too, when the server shares its changes). Providers are told
// apart with ==, so p must be the very value given to AddProvider, of a
// comparable type (a pointer, as providers usually are); for any other,
// RemoveProvider reports false. Its work does not grow with the registry:
// the registered tools are left as they are.
func (s *Server) RemoveProvider(p Provider) bool {
	if p == nil || !reflect.TypeOf(p).Comparable() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.sources, func(src source) bool {
		ps, ok := src.(*providerSource)
		return ok && reflect.TypeOf(ps.p) == reflect.TypeOf(p) && ps.p == p
	})
	if i < 0 {
		return false
	}
	s.setSources(slices.Delete(slices.Clone(s.sources), i, i+1))
	return true
}

// setSources makes srcs the server's sources, in a new state that shares
// the registered tools with the current one. s.mu is held.
func (s *Server) setSources(srcs []source) {
	s.sources = srcs
	s.commit(s.refreshed(), change{whole: true})
}

// ProviderChanged tells the server that what its providers list changed,
// for the callers whose [Principal] is principal, or for everyone when
// principal is "": their listening clients receive
// notifications/tools/list_changed (and prompts/list_changed and
// resources/list_changed, when a provider serves those kinds), and the other replicas' clients hear
// of it too, all of them, when the server shares its changes (see
// [Server.ShareChanges]; an event says only that something changed). It
// also drops the chains kept for provided tools, so that a provider that
// returns a changed tool under the same pointer is served anew.
func (s *Server) ProviderChanged(principal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commit(s.refreshed(), change{principal: &principal})
}

// A source is where the tools, prompts, resources and templates that are
// not registered come from, asked in the order they were added: a
// Provider, or a server mounted into this one (a mountView, as of one of
// the mounted server's states).
type source interface {
	// offer returns the versions of name that the source offers c,
	// highest first, as entries of the server whose state is st: made,
	// transformed and enabled, but not yet asked whether c may see them.
	// With blind set it asks no Provider, and reports blocked when it
	// would have had to.
	offer(ctx context.Context, st *state, c Caller, name string, blind bool) (es []*entry, blocked bool)

	// target returns the entry of the target of family f that the
	// source serves c under key (a prompt's name, a resource's URI, a
	// template's text), or nil, not yet asked whether c may see it. With
	// blind set it asks no Provider, and reports blocked when it would
	// have had to.
	target(ctx context.Context, st *state, c Caller, f family, key string, blind bool) (e *entry, blocked bool)

	// read returns the entry of what a resources/read of uri from c
	// reaches in the source (with text set, a template whose text is uri
	// first), with the variables a template decoded, as target does.
	read(ctx context.Context, st *state, c Caller, uri string, text, blind bool) (e *entry, params map[string]string, blocked bool)

	// page returns the source's page of the shelf sh for c after the
	// name after, at most limit names when limit is positive: each name
	// with the versions c sees (highest first) and the definition (for a
	// target, the entry) c is listed (nil when none).
	page(ctx context.Context, st *state, c Caller, sh shelf, after string, limit int) listPage

	// served returns the names under which the source may serve the tool
	// whose identity is id, without asking a Provider.
	served(id ToolID) []string

	// serves reports whether the source may serve targets of kind k
	// (tools, prompts, resources), and uniform whether it serves
	// everyone the same ones.
	serves(k Kind) bool
	uniform(k Kind) bool
}

// providerSource is a Provider as the route asks it.
type providerSource struct {
	s *Server
	p Provider
}

func (ps *providerSource) served(id ToolID) []string { return []string{id.Name} }

func (ps *providerSource) offer(ctx context.Context, st *state, c Caller, name string, blind bool) ([]*entry, bool) {
	if blind {
		return nil, true
	}
	t := ps.lookup(ctx, c, name)
	if t == nil || t.Name != name {
		return nil, false
	}
	e := ps.s.provide(st, t, nil)
	if e == nil {
		return nil, false
	}
	return []*entry{e}, false
}

func (ps *providerSource) page(ctx context.Context, st *state, c Caller, sh shelf, after string, limit int) listPage {
	if sh != shelfTools {
		return ps.targetPage(ctx, st, c, sh, after, limit)
	}
	var pg listPage
	n := 0 // the tools of the page, in order after after
	for _, t := range ps.list(ctx, c, after, limit) {
		if t == nil || t.Name <= after || n > 0 && t.Name <= pg.last {
			continue // a provider that breaks its contract: out of order, or not after after
		}
		if limit > 0 && n == limit {
			pg.more = true
			break
		}
		n++
		pg.last = t.Name
		e := ps.s.provide(st, t, nil)
		if e == nil || !st.sees(ctx, c, e) {
			continue
		}
		it := listItem{name: t.Name, group: []*entry{e}}
		if !e.tool.Unlisted {
			it.def = e.tool
		}
		pg.items = append(pg.items, it)
	}
	// A full page may have more after it; a short one has not.
	pg.more = pg.more || limit > 0 && n == limit
	return pg
}

// targetPage is page for a shelf of prompts, resources or templates.
func (ps *providerSource) targetPage(ctx context.Context, st *state, c Caller, sh shelf, after string, limit int) listPage {
	var pg listPage
	n := 0
	for _, t := range ps.listTargets(ctx, c, sh, after, limit) {
		if t == nil || reflect.ValueOf(t).IsNil() {
			continue
		}
		key := servedKey(t)
		if key <= after || n > 0 && key <= pg.last {
			continue // out of order, or not after after
		}
		if limit > 0 && n == limit {
			pg.more = true
			break
		}
		n++
		pg.last = key
		e := ps.s.provideTarget(st, t, nil, ps.silent())
		if e == nil || !st.sees(ctx, c, e) {
			continue
		}
		it := listItem{name: key, group: []*entry{e}}
		if !e.unlisted() {
			it.target = e
		}
		pg.items = append(pg.items, it)
	}
	pg.more = pg.more || limit > 0 && n == limit
	return pg
}

// listTargets asks the provider for a page of the shelf sh, as list
// asks for tools: a provider that fails, or does not serve the kind,
// lists nothing.
func (ps *providerSource) listTargets(ctx context.Context, c Caller, sh shelf, after string, limit int) (ts []Target) {
	defer ps.s.recoverProvider("List", nil) // a panic leaves ts nil
	var err error
	switch sh {
	case shelfPrompts:
		if pp, ok := ps.p.(PromptProvider); ok {
			var got []*Prompt
			got, err = pp.ListPrompts(ctx, c, after, limit)
			ts = targetsOf(got)
		}
	case shelfResources:
		if rp, ok := ps.p.(ResourceProvider); ok {
			var got []*Resource
			got, err = rp.ListResources(ctx, c, after, limit)
			ts = targetsOf(got)
		}
	case shelfTemplates:
		if rp, ok := ps.p.(ResourceProvider); ok {
			var got []*ResourceTemplate
			got, err = rp.ListResourceTemplates(ctx, c, after, limit)
			ts = targetsOf(got)
		}
	}
	if err != nil {
		ps.s.logger.Warn("mcpkit: a provider failed to list its "+sh.kind().String()+"s", "error", err)
		return nil
	}
	return ts
}

// targetsOf returns ts as Targets.
func targetsOf[T Target](ts []T) []Target {
	out := make([]Target, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

func (ps *providerSource) target(ctx context.Context, st *state, c Caller, f family, key string, blind bool) (*entry, bool) {
	if f == famTemplate || !ps.serves(f.kind()) {
		return nil, false // a provider's templates are listed only
	}
	if blind {
		return nil, true
	}
	t := ps.lookupTarget(ctx, c, f, key)
	if t == nil || servedKey(t) != key {
		return nil, false
	}
	return ps.s.provideTarget(st, t, nil, ps.silent()), false
}

func (ps *providerSource) read(ctx context.Context, st *state, c Caller, uri string, text, blind bool) (*entry, map[string]string, bool) {
	if e, blocked := ps.target(ctx, st, c, famResource, uri, blind); e != nil || blocked || !ps.serves(KindResource) {
		return e, nil, blocked
	}
	t := ps.lookupTarget(ctx, c, famTemplate, uri)
	if t == nil {
		return nil, nil, false
	}
	e := ps.s.provideTarget(st, t, nil, ps.silent())
	if e == nil || e.template == nil || e.chain == nil {
		return nil, nil, false
	}
	if text && e.template.URITemplate == uri {
		return e, nil, false // a completion of the template, by its text
	}
	params := e.template.match(uri)
	if params == nil {
		return nil, nil, false // the provider's template does not match uri
	}
	return e, params, false
}

func (ps *providerSource) serves(k Kind) bool {
	switch k {
	case KindPrompt:
		_, ok := ps.p.(PromptProvider)
		return ok
	case KindResource:
		_, ok := ps.p.(ResourceProvider)
		return ok
	}
	return true
}

func (ps *providerSource) uniform(k Kind) bool { return !ps.serves(k) }

// silent reports whether no one announces the changes of the provider's
// resources (see ResourceNotifier).
func (ps *providerSource) silent() bool {
	n, ok := ps.p.(ResourceNotifier)
	return !ok || !n.NotifiesResourceUpdates()
}

// lookupTarget asks the provider for the prompt (resource) under key, as
// lookup asks for a tool.
func (ps *providerSource) lookupTarget(ctx context.Context, c Caller, f family, key string) (t Target) {
	defer ps.s.recoverProvider("Lookup", nil)
	var err error
	switch f {
	case famPrompt:
		var p *Prompt
		if p, err = ps.p.(PromptProvider).LookupPrompt(ctx, c, key); p != nil {
			t = p
		}
	case famResource:
		var r *Resource
		if r, err = ps.p.(ResourceProvider).LookupResource(ctx, c, key); r != nil {
			t = r
		}
	case famTemplate:
		var rt *ResourceTemplate
		if rt, err = ps.p.(ResourceProvider).LookupResourceTemplate(ctx, c, key); rt != nil {
			t = rt
		}
	}
	if err != nil {
		ps.s.logger.Warn("mcpkit: a provider failed to look a "+f.kind().String()+" up", "key", schema.Clip(key), "error", err)
		return nil
	}
	return t
}

// lookup asks the provider for the tool name, as a handler is called: a
// panic is recovered, and it and an error are logged and answered as no
// tool.
func (ps *providerSource) lookup(ctx context.Context, c Caller, name string) (t *Tool) {
	defer ps.s.recoverProvider("LookupTool", &t)
	t, err := ps.p.LookupTool(ctx, c, name)
	if err != nil {
		ps.s.logger.Warn("mcpkit: a provider failed to look a tool up", "tool", schema.Clip(name), "error", err)
		return nil
	}
	return t
}

// list asks the provider for a page, as lookup asks for a tool: a
// provider that fails lists nothing.
func (ps *providerSource) list(ctx context.Context, c Caller, after string, limit int) (ts []*Tool) {
	defer ps.s.recoverProvider("ListTools", nil)
	ts, err := ps.p.ListTools(ctx, c, after, limit)
	if err != nil {
		ps.s.logger.Warn("mcpkit: a provider failed to list its tools", "error", err)
		return nil
	}
	return ts
}

// recoverProvider recovers a panic of a provider's method, logs it as a
// handler's panic is logged, and clears *t.
func (s *Server) recoverProvider(method string, t **Tool) {
	v := recover()
	if v == nil {
		return
	}
	pe := NewPanicError(v)
	s.logger.Error("mcpkit: a provider panicked", "method", method, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
	if t != nil {
		*t = nil
	}
}

// providedCache keeps the entries of provided tools by the pointer of the
// tool they were made of, for one state: middleware, transforms and
// visibility are the state's. It is bounded: past maxProvided entries it
// starts again empty.
type providedCache struct {
	mu sync.Mutex
	m  map[any]*provided // by *Tool, or by the Target of a prompt, resource or template
}

// provided is what the server made of a tool from a source: the entry
// serving it, or nil when the transforms left it out, renamed it, or the
// Visibility does not enable it.
type provided struct {
	e   *entry
	err error
}

const maxProvided = 4096

func newProvidedCache() *providedCache { return &providedCache{m: make(map[any]*provided)} }

// provide returns the entry serving t, a tool a source offers, made once
// per tool and state: t checked, transformed, its schemas compiled and its
// chain built; key stands for its definition in listeners' digests. It is
// nil when t is not served (a failed check is logged).
func (s *Server) provide(st *state, t, key *Tool) *entry {
	p := st.provided.get(t, func() (*entry, error) { return s.makeProvided(st, t, key) })
	if p.err != nil {
		s.logger.Warn("mcpkit: a provided tool is not served", "tool", schema.Clip(t.Name), "error", p.err)
	}
	return p.e
}

// get returns what was made of t, made by build on first need.
func (c *providedCache) get(t any, build func() (*entry, error)) *provided {
	c.mu.Lock()
	p, ok := c.m[t]
	c.mu.Unlock()
	if ok {
		return p
	}
	p = &provided{}
	p.e, p.err = build()
	c.mu.Lock()
	if len(c.m) >= maxProvided {
		clear(c.m)
	}
	c.m[t] = p
	c.mu.Unlock()
	return p
}

// provideTarget returns the entry serving t, a prompt, resource or
// template a source offers, made once per target and state as provide
// makes a tool's; key stands for its definition in listeners' digests
// (a mounted target's origin), or nil for t itself. It is nil when t is
// not served (a failed check is logged).
func (s *Server) provideTarget(st *state, t, key Target, silent bool) *entry {
	p := st.provided.get(t, func() (*entry, error) { return s.makeProvidedTarget(st, t, key, silent) })
	if p.err != nil {
		s.logger.Warn("mcpkit: a provided "+t.Kind().String()+" is not served", "key", schema.Clip(servedKey(t)), "error", p.err)
	}
	return p.e
}

func (s *Server) makeProvidedTarget(st *state, t, key Target, silent bool) (*entry, error) {
	var (
		err     error
		serving = true
		tt      = t // what is served: t, or t compiled
	)
	switch t := t.(type) {
	case *Prompt:
		err = t.validate()
		if len(t.Complete) > 0 {
			s.completes.Store(true) // s.mu may be held: see AddProvider for its parents
		}
	case *Resource:
		if u, perr := url.Parse(t.URI); perr != nil || u.Scheme == "" {
			err = fmt.Errorf("mcpkit: resource %q: the URI must be absolute, with a scheme", t.URI)
		} else {
			err = checkTarget("resource", t.URI, t.Name, t.Handler != nil, t.Middleware)
		}
	case *ResourceTemplate:
		// A provider's template serves the reads LookupResourceTemplate
		// sends it, compiled here once; a mounted one is the child's,
		// read through the child's route, and one without a handler is
		// listed only.
		serving = t.Handler != nil
		if serving && t.compiled == nil {
			tt, err = compileTemplate(t)
		} else {
			err = checkTarget("template", t.URITemplate, t.Name, true, t.Middleware)
		}
		if len(t.Complete) > 0 {
			s.completes.Store(true)
		}
	}
	if err != nil {
		return nil, err
	}
	if tv, ok := st.visibility.(TargetVisibility); ok && !tv.EnabledTarget(tt) {
		return nil, nil
	}
	var c *chain
	if serving {
		c = buildTargetChain(tt, st.use)
	}
	e := newTargetEntry(tt, c)
	e.provided, e.silent = true, silent
	e.made.Store(&entryMade{targetKey: key})
	return e, nil
}

func (s *Server) makeProvided(st *state, t, key *Tool) (*entry, error) {
	if t == nil {
		return nil, fmt.Errorf("mcpkit: a provider returned a nil tool")
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	d, err := applyTransforms(st.transforms, t)
	if err != nil || d == nil || d.Name != t.Name {
		return nil, err
	}
	if st.visibility != nil && !st.visibility.Enabled(d) {
		return nil, nil
	}
	if err := checkSchemas(d, s.validation, &s.validators); err != nil {
		return nil, err
	}
	c := newChecker(d, s.validation, &s.validators)
	return newProvided(d, key, compact(buildChain(d, st.use, c))), nil
}
