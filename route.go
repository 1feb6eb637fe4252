package mcpkit

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/nameindex"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The one route.
//
// Which tool a call reaches (which prompt a prompts/get reaches), and
// whether its caller may see it, is decided here and nowhere else, for
// every way in: tools/call, prompts/get, resources/read, the list pages,
// the early refusal of a 2026-07-28 call, prompts/get or resources/read by
// its headers, Resolve (and so discovery's meta-tools and the rounds of a
// task), Reaches and the search of provided tools. The rules:
//
//   - one test of "may this caller see this version": state.sees;
//   - one walk: the registered versions of the name first; when the caller
//     sees none of them, the sources (providers and mounted servers) in the
//     order they were added, the first of which offers the caller a version
//     it sees deciding the name for it. A registered tool hidden from the
//     caller is for it a name never registered;
//   - one pin rule: the version the call pins among those the caller sees
//     under the deciding source, or the highest of them: state.pick;
//   - one listing rule: the first version the caller sees is listed, unless
//     it is Unlisted, its _meta naming the versions the caller may pin.
//
// Prompts and resources take the same route, by their own names (a
// resource by its URI, then by the templates that match it: see
// reachURI): one version each, no pin, the registered ones first, then
// the sources (a Provider that is a PromptProvider or ResourceProvider,
// a mounted server's, behind its prefix). A completion/complete takes it
// too, for the prompt or template it completes (see reachTemplate).

// pin is the version a call pins with [MetaKeyVersion] in its _meta, if
// it pins one.
type pin struct {
	version string
	set     bool
}

// pinOf returns what the _meta of call pins. A pin that is not a string
// pins no version that can exist.
func pinOf(call *mcp.CallToolRequest) pin {
	if call == nil || call.Params == nil {
		return pin{}
	}
	return metaPin(call.Params.Meta)
}

// metaPin returns what a call's _meta pins.
func metaPin(meta mcp.Meta) pin {
	raw, ok := meta[MetaKeyVersion]
	if !ok {
		return pin{}
	}
	v, ok := raw.(string)
	if !ok {
		return pin{version: "\x00", set: true}
	}
	return pin{version: v, set: true}
}

// sees reports whether c may see e in st: the per-request half of the
// Visibility, asked of the version the transforms made. A nil c is
// whoever calls: only the rules for everyone apply.
func (st *state) sees(ctx context.Context, c Caller, e *entry) bool {
	if e.target != nil {
		return st.allowedTarget == nil || c == nil || st.allowedTarget(ctx, e.target, c)
	}
	return st.allowed == nil || c == nil || st.allowed(ctx, e.tool, c)
}

// pick applies the pin rule to es, the versions of one name highest first:
// it returns the version p pins among those c sees (or, unpinned, the first
// c sees), and whether c sees any of es. With all set, it appends every
// version c sees to *all instead, and returns none.
func (st *state) pick(ctx context.Context, c Caller, es []*entry, p pin, all *[]*entry) (*entry, bool) {
	seen := false
	for _, e := range es {
		if !st.sees(ctx, c, e) {
			continue
		}
		seen = true
		if all != nil {
			*all = append(*all, e)
			continue
		}
		if !p.set || e.tool.Version == p.version {
			return e, true
		}
	}
	return nil, seen
}

// walk is the route: it asks the registered versions of name (of kind
// k), then each source in order, until one offers c a version it sees;
// that one decides, by the pin rule, and seen is set. With blind set (a
// review of listeners, which never calls a Provider under the server's
// lock), it stops where a Provider would be asked (a mounted server's
// too), setting blocked. A resource's URI takes reachURI's route.
func (s *Server) walk(ctx context.Context, st *state, c Caller, k Kind, name string, p pin, all *[]*entry, blind bool) (e *entry, seen, blocked bool) {
	if k == KindResource {
		e, _, blocked := s.reachURI(ctx, st, c, name, false, blind)
		if e != nil && all != nil {
			*all = append(*all, e)
			return nil, true, false
		}
		return e, e != nil, blocked
	}
	if n, ok := st.index(k).Get(name); ok {
		if e, seen := st.pick(ctx, c, n.versions, p, all); seen {
			return e, true, false
		}
	}
	for _, src := range st.sources {
		var es []*entry
		if k == KindTool {
			es, blocked = src.offer(ctx, st, c, name, blind)
		} else {
			var e *entry
			if e, blocked = src.target(ctx, st, c, famPrompt, name, blind); e != nil {
				es = []*entry{e}
			}
		}
		if blocked {
			return nil, false, true
		}
		if e, seen := st.pick(ctx, c, es, p, all); seen {
			return e, true, false
		}
	}
	return nil, false, false
}

// reach returns the entry of kind k that a request for name pinned by p
// from c reaches in st, or nil for the answer of a name never registered.
func (s *Server) reach(ctx context.Context, st *state, c Caller, k Kind, name string, p pin) *entry {
	e, _, _ := s.walk(ctx, st, c, k, name, p, nil, false)
	return e
}

// reachResource is the route of a resources/read of uri from c in st (see
// reachURI), with the variables the template that serves it decoded.
func (s *Server) reachResource(ctx context.Context, st *state, c Caller, uri string) (*entry, map[string]string) {
	e, params, _ := s.reachURI(ctx, st, c, uri, false, false)
	return e, params
}

// reachTemplate is the route of a completion of a ref/resource of uri
// from c in st: the template whose text is uri, when c sees it; else what
// a resources/read of uri reaches. It returns nil for the answer of a URI
// never served.
func (s *Server) reachTemplate(ctx context.Context, st *state, c Caller, uri string) *entry {
	e, _, _ := s.reachURI(ctx, st, c, uri, true, false)
	return e
}

// reachURI is the route of a URI from c in st: with text set (a
// completion), the template whose text is uri first; then the resource
// registered under uri, when c sees it; else the first template, in match
// order, that matches uri and c sees, with the variables it decoded; else
// the sources in order, the first that serves c uri (a mounted server by
// its own route, behind the mount's prefix) deciding it. It returns nil
// for the answer of a URI never served. With blind set, it stops where a
// Provider would be asked, setting blocked.
func (s *Server) reachURI(ctx context.Context, st *state, c Caller, uri string, text, blind bool) (e *entry, params map[string]string, blocked bool) {
	if text {
		if n, ok := st.targets[famTemplate].Get(uri); ok && st.sees(ctx, c, n.versions[0]) {
			return n.versions[0], nil, false
		}
	}
	if n, ok := st.targets[famResource].Get(uri); ok && st.sees(ctx, c, n.versions[0]) {
		return n.versions[0], nil, false
	}
	for _, e := range st.templates {
		if params := e.template.match(uri); params != nil && st.sees(ctx, c, e) {
			return e, params, false
		}
	}
	for _, src := range st.sources {
		e, params, blocked := src.read(ctx, st, c, uri, text, blind)
		if blocked {
			return nil, nil, true
		}
		if e != nil && st.sees(ctx, c, e) {
			return e, params, false
		}
	}
	return nil, nil, false
}

// targetAt is the route of the target of family f under key (a prompt's
// name, a resource's URI, a template's text, as served) from c in st: the
// registered one when c sees it, else the first a source serves c under
// key. With blind set, it stops where a Provider would be asked, setting
// blocked.
func (s *Server) targetAt(ctx context.Context, st *state, c Caller, f family, key string, blind bool) (e *entry, blocked bool) {
	if n, ok := st.targets[f].Get(key); ok && st.sees(ctx, c, n.versions[0]) {
		return n.versions[0], false
	}
	for _, src := range st.sources {
		e, blocked := src.target(ctx, st, c, f, key, blind)
		if blocked {
			return nil, true
		}
		if e != nil && st.sees(ctx, c, e) {
			return e, false
		}
	}
	return nil, false
}

// registeredSeen reports whether c sees a registered version of name on
// the shelf sh of st: then the name is the registry's for c, and no
// source's.
func (st *state) registeredSeen(ctx context.Context, c Caller, sh shelf, name string) bool {
	n, ok := st.shelved(sh).Get(name)
	if !ok {
		return false
	}
	_, seen := st.pick(ctx, c, n.versions, pin{}, nil)
	return seen
}

// listing is the listing rule for a registered name: the definition of n
// that c is listed, or nil; for a name of another kind, its entry
// instead. When
// c sees some of n's versions only, the definition's _meta names those
// alone, so that a version hidden from c is not advertised to it; such
// definitions are made once per set of versions seen (for names of up to
// 64 versions).
func (st *state) listing(ctx context.Context, c Caller, n *toolName) (*Tool, *entry) {
	first, every := -1, true
	var set uint64
	for i, e := range n.versions {
		if !st.sees(ctx, c, e) {
			every = false
			continue
		}
		if first < 0 {
			if e.unlisted() {
				return nil, nil
			}
			first = i
		}
		set |= 1 << min(i, 63)
	}
	if first < 0 {
		return nil, nil
	}
	e := n.versions[first]
	if e.target != nil {
		return nil, e
	}
	if every || e.listed == nil {
		return e.tool, nil
	}
	cache := len(n.versions) <= 64
	if cache {
		if t := n.versionDefs().get(set); t != nil {
			return t, nil
		}
	}
	var listed []string
	for i := first; i < len(n.versions); i++ {
		v := n.versions[i]
		if (i == first || cache && set&(1<<i) != 0 || !cache && st.sees(ctx, c, v)) && v.tool.Version != "" {
			listed = append(listed, v.tool.Version)
		}
	}
	t := withVersionMeta(e.derived, listed)
	if cache {
		n.versionDefs().put(set, t)
	}
	return t, nil
}

// listedOf is the listing rule for es, the versions c sees of a name a
// source offers, highest first: the first is listed, unless it is
// Unlisted, its _meta naming the versions of es when c sees fewer than its
// own _meta names.
func listedOf(es []*entry) *Tool {
	if len(es) == 0 || es[0].tool.Unlisted {
		return nil
	}
	first := es[0].tool
	if first.Version == "" {
		return first
	}
	listed := make([]string, 0, len(es))
	for _, e := range es {
		if e.tool.Version != "" {
			listed = append(listed, e.tool.Version)
		}
	}
	if all, _ := first.Meta[MetaKeyVersions].([]string); slices.Equal(all, listed) {
		return first
	}
	return withVersionMeta(first, listed)
}

// A shelf is one of the lists a server answers: its tools, prompts,
// resources or resource templates.
type shelf uint8

const (
	shelfTools shelf = iota
	shelfPrompts
	shelfResources
	shelfTemplates
)

// kind returns the kind of what sh holds.
func (sh shelf) kind() Kind {
	switch sh {
	case shelfPrompts:
		return KindPrompt
	case shelfResources, shelfTemplates:
		return KindResource
	}
	return KindTool
}

// family returns the family of the targets on sh, which is not
// shelfTools.
func (sh shelf) family() family {
	switch sh {
	case shelfPrompts:
		return famPrompt
	case shelfResources:
		return famResource
	}
	return famTemplate
}

// shelved returns the registered names on the shelf sh of st: tools,
// prompts, resources by URI, templates by their text.
func (st *state) shelved(sh shelf) *nameindex.Index[*toolName] {
	if sh == shelfTools {
		return &st.byName
	}
	return st.targets[sh.family()]
}

// A listPage is a page of what a caller is listed, in name order.
type listPage struct {
	items []listItem
	last  string // the last name looked at: the next page starts after it when more is set
	more  bool   // names after last may be listed
}

// A listItem is a name of a page: the definition the caller is listed
// (nil for a name a source decides for the caller without listing it),
// or the entry of a target of another kind, and the versions the caller
// sees, highest first.
type listItem struct {
	name   string
	def    *Tool
	target *entry
	group  []*entry
}

// tools returns the definitions the page lists.
func (pg listPage) tools() []*Tool {
	out := make([]*Tool, 0, len(pg.items))
	for _, it := range pg.items {
		if it.def != nil {
			out = append(out, it.def)
		}
	}
	return out
}

// targets returns the entries of the targets of other kinds than tools
// the page lists.
func (pg listPage) targets() []*entry {
	out := make([]*entry, 0, len(pg.items))
	for _, it := range pg.items {
		if it.target != nil {
			out = append(out, it.target)
		}
	}
	return out
}

// page returns the page of what c is listed on the shelf sh of st after
// the name after, at most limit names (no limit when limit is not positive), merging the
// registered tools with those of each source by the route's rules. Each
// source is asked for one page; where one stopped before the others, the
// page stops there too (last), so that a name is neither skipped nor
// listed twice. A source that fails is left out (see providerSource.list).
// With groups set (for a server s is mounted into), each name comes with
// the versions c sees, and the names c sees but is not listed are on the
// page too, without a definition.
func (s *Server) page(ctx context.Context, st *state, c Caller, sh shelf, after string, limit int, groups bool) listPage {
	pg := st.registeredPage(ctx, c, sh, after, limit, groups)
	if len(st.sources) == 0 {
		return pg
	}
	type ranked struct {
		listItem
		rank int // 0 for the registry, then the sources in order
	}
	all := make([]ranked, 0, len(pg.items))
	for _, it := range pg.items {
		all = append(all, ranked{it, 0})
	}
	frontier, more := pg.last, pg.more
	for i, src := range st.sources {
		sp := src.page(ctx, st, c, sh, after, limit)
		if sp.more && (!more || sp.last < frontier) {
			frontier, more = sp.last, true
		}
		for _, it := range sp.items {
			if !st.registeredSeen(ctx, c, sh, it.name) { // else the registry decides the name for c
				all = append(all, ranked{it, i + 1})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b ranked) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return a.rank - b.rank
	})
	all = slices.CompactFunc(all, func(a, b ranked) bool { return a.name == b.name })
	out := listPage{items: make([]listItem, 0, len(all)), last: frontier, more: more}
	for _, r := range all {
		if more && r.name > frontier {
			break
		}
		if r.def == nil && r.target == nil && !groups {
			continue
		}
		if limit > 0 && len(out.items) == limit {
			out.more, out.last = true, out.items[limit-1].name
			break
		}
		out.items = append(out.items, r.listItem)
	}
	if !out.more && len(out.items) > 0 {
		out.last = out.items[len(out.items)-1].name
	}
	return out
}

// registeredPage is page for the registered tools alone. With groups set
// (for a server s is mounted into), it also has the names c sees but is
// not listed, without a definition: they are the registry's for c all the
// same, and the parent may list another version of them (one its rules
// leave visible). Each name c sees counts toward limit then.
func (st *state) registeredPage(ctx context.Context, c Caller, sh shelf, after string, limit int, groups bool) listPage {
	names := &st.listed
	if groups || sh != shelfTools {
		names = st.shelved(sh)
	}
	return st.pageOf(ctx, c, names, after, limit, groups)
}

// pageOf is registeredPage over the names given: those of one kind (or,
// for resources/templates/list, the templates).
func (st *state) pageOf(ctx context.Context, c Caller, names *nameindex.Index[*toolName], after string, limit int, groups bool) listPage {
	var pg listPage
	for name, n := range names.After(after) {
		if limit > 0 && len(pg.items) == limit {
			pg.more = true
			break
		}
		pg.last = name
		it := listItem{name: name}
		it.def, it.target = st.listing(ctx, c, n)
		if groups {
			st.pick(ctx, c, n.versions, pin{}, &it.group)
			if len(it.group) == 0 {
				continue
			}
		} else if it.def == nil && it.target == nil {
			continue
		}
		pg.items = append(pg.items, it)
	}
	return pg
}

// Resolve returns the tool that a call of name from c reaches, and the
// Handler that serves it, or false when name is unknown or hidden from c:
// exactly what a tools/call of name with the _meta meta from c reaches, by
// the same route (the registered tools, then the providers and mounted
// servers): the version meta pins with [MetaKeyVersion], or else the
// highest c may see, listed or not. It is for code that calls tools on a
// caller's behalf (a discovery meta-tool, the later rounds of a task), so
// that it reaches exactly what the caller may call.
//
// The Handler runs the tool's whole chain (the server-wide middleware, the
// tool's own, validation, the handler), after checking that the Mcp-Param
// headers the request carries, if any, agree with its arguments (a request
// that reaches the tool by another name than its own need not carry
// them). The Go error it returns is not mapped onto the wire. The server's
// observers (see [Server.Observe]) are told of the call.
func (s *Server) Resolve(ctx context.Context, c Caller, name string, meta mcp.Meta) (*Tool, Handler, bool) {
	e := s.reach(ctx, s.state.Load(), c, KindTool, name, metaPin(meta))
	if e == nil {
		return nil, nil, false
	}
	return e.tool, &resolved{s: s, e: e, name: name}, true
}

// resolved is the Handler of a tool reached through Resolve by name.
type resolved struct {
	s    *Server
	e    *entry
	name string
}

func (r *resolved) ServeTool(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
	obs := r.s.observing()
	var start time.Time
	if obs != nil {
		start = time.Now()
	}
	if err := r.e.checkHeaders(ctx, req, false); err != nil {
		if obs != nil {
			observeUnrouted(ctx, obs, DecisionHeaderMismatch, r.name, r.e, req, err, start)
		}
		return nil, err
	}
	if obs == nil {
		return r.e.chain.handler.ServeTool(ctx, req)
	}
	res, err := r.e.chain.handler.ServeTool(ctx, req)
	observeServed(ctx, obs, r.name, r.e, req, res, err, start)
	return res, err
}

// Reaches reports whether a call from c can reach the tool whose identity
// is id (see [Tool.ID]), under whichever name and version it is served:
// whether some registered tool of that identity is visible to c, or, when
// none is, whether a call pinned to id's version, of a name a source may
// serve it under (a provider's, id's name; a mounted server's, the names
// it serves that identity under, behind the mount's prefix), reaches a
// tool of that identity. It costs a map lookup plus the per-request
// [Visibility] of the tools of that identity, and a route through the
// sources when no registered tool of it is visible.
func (s *Server) Reaches(ctx context.Context, c Caller, id ToolID) bool {
	st := s.state.Load()
	for e := range st.identity(id) {
		if st.sees(ctx, c, e) {
			return true
		}
	}
	tried := map[string]bool{}
	for _, src := range st.sources {
		for _, name := range src.served(id) {
			if tried[name] {
				continue
			}
			tried[name] = true
			if e := s.reach(ctx, st, c, KindTool, name, pin{version: id.Version, set: true}); e != nil && e.tool.ID() == id {
				return true
			}
		}
	}
	return false
}

// Callable returns, sorted by name, the registered tools c may call: for
// each name, the version a call from c reaches, whether tools/list shows it
// or not (unlisted tools, such as deprecated aliases and tools behind a
// discovery meta-tool, included). With a nil c, it returns the highest
// enabled version of every name, whoever calls (the per-request half of
// the Visibility is not asked): for indexes that callers' requests then
// filter. Tools of providers (see [Provider]) are not included.
func (s *Server) Callable(ctx context.Context, c Caller) []*Tool {
	st := s.state.Load()
	out := make([]*Tool, 0, st.byName.Len())
	for n := range st.byName.All() {
		if e, _ := st.pick(ctx, c, n.versions, pin{}, nil); e != nil {
			out = append(out, e.tool)
		}
	}
	return out
}

// Tools returns the registered tools that tools/list shows when no
// per-request [Visibility] is in effect: the highest enabled version of
// each name, after transforms, sorted by name (providers' tools, which
// exist per request, are not included). The Tools are shared and must not
// be modified.
func (s *Server) Tools() []*Tool {
	return s.state.Load().registeredPage(context.Background(), nil, shelfTools, "", 0, false).tools()
}

// Lookup returns the tool served under name (after transforms, the highest
// enabled version, listed or not), if any: what [Server.Callable] returns
// for name with a nil Caller. With [Server.ChangedSince] it keeps something
// derived from the served tools up to date. The Tool is shared and must
// not be modified.
func (s *Server) Lookup(name string) (*Tool, bool) {
	e := s.registered(name)
	if e == nil {
		return nil, false
	}
	return e.tool, true
}

// Handler returns the full chain that serves calls to name (server-wide
// middleware, the tool's own, validation and the handler), and whether name
// is served. It lets tests and adapters call a tool without a transport;
// the Go error the chain returns is not mapped onto the wire, and no
// per-request [Visibility] is applied.
func (s *Server) Handler(name string) (Handler, bool) {
	e := s.registered(name)
	if e == nil {
		return nil, false
	}
	return e.chain.handler, true
}

// Pipeline returns the layers that serve calls to the tool called name,
// outermost first, and whether name is served: the server-wide middleware,
// the tool's own, and the server's validation, with the middleware of each
// [Chain] listed one by one and those a [ForTools] selection skipped for
// this tool marked as skipped. It is for tests ("is the time limit of
// report 5 minutes?") and debug endpoints, in the spirit of chi's Walk.
func (s *Server) Pipeline(name string) ([]Layer, bool) {
	e := s.registered(name)
	if e == nil {
		return nil, false
	}
	return slices.Clone(e.chain.layers), true
}

// registered returns the entry of the highest enabled registered version
// of name, whoever calls, or nil.
func (s *Server) registered(name string) *entry {
	st := s.state.Load()
	n, ok := st.byName.Get(name)
	if !ok {
		return nil
	}
	e, _ := st.pick(context.Background(), nil, n.versions, pin{}, nil)
	return e
}
