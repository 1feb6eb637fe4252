package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/schema"
)

// ErrMountCycle is wrapped by the error of a [Server.Mount] that would
// make a server reach itself through its mounts: a server mounted into
// itself, or into a server mounted, directly or not, inside it.
var ErrMountCycle = errors.New("mcpkit: mount cycle")

// mountSeparator joins a namespace and a tool's name in the names that
// Mount serves, as transform.Namespace(namespace, "_") and FastMCP's mount
// do.
const mountSeparator = "_"

// mountMu serializes the mounts and unmounts of every server, so that the
// check for cycles in Mount sees every mount made before it: two servers
// mounted into each other at once would otherwise both pass it.
var mountMu sync.Mutex

// Mount serves the tools of child in s, each under namespace, "_" and its
// name ("docs" and "search" make "docs_search"), with its prompts and
// resources (see below), and keeps them live: a tool added to or removed
// from child, a change of its middleware or its [Visibility], reaches the
// clients of s as notifications/tools/list_changed (prompts/list_changed,
// resources/list_changed for those), those whose list it changes (those of
// other replicas of s too, when s shares its changes: see
// [Server.ShareChanges]). The unmount function it returns takes child's
// tools out of s and tells the clients again; it may be called more than
// once.
//
// A mounted tool is what child serves to the caller, renamed: its
// definition, tags, versions and annotations are child's, and its
// [Tool.Origin] is child's tool, so that it keeps that tool's identity
// ([Tool.ID]): a visibility rule, [ForTools] selection, rate limit or
// cache of s keyed on child's tool by its own name holds for the mounted
// name too, on every prefix it is mounted under. A rule that names the
// mounted name ("docs_search") concerns that mount alone.
//
// A call of a mounted tool runs the middleware of s (server-wide), then
// child's whole chain: its server-wide middleware, the tool's own, child's
// validation of the arguments and of the structured output (s does not
// validate them again), and the handler; the error table applies once, in
// s. Child's middleware sees the Request as s serves it: Request.Tool is
// the mounted tool. Both servers' visibility applies, version by version:
// a version that child hides from the caller (disabled, or not allowed per
// request) or that s hides is, for that caller, a version never
// registered, so that a call reaches the highest version both serve it.
//
// Child's prompts, resources and templates are served too, by the same
// rules: a prompt as namespace, "_" and its name; a resource's URI and a
// template's text with namespace inserted right after the scheme's "://"
// ("file:///readme" under "docs" is "file://docs//readme"), those without
// one left out (s logs them). A read of such a URI takes child's route
// (its resource of the URI, then its templates) under child's own URI,
// which child's handler sees. Their Origin is child's, as a tool's is,
// and a mounted tool's MCP Apps view (_meta.ui.resourceUri) names the
// view as s serves it.
//
// The mount is a source of s, as a [Provider] is, asked in the order it
// was added among them: a tool registered in s wins over a
// mounted one of the same name for the callers who see it, a catalog
// transform of s that renames tools leaves mounted ones out, and child's
// list middleware and the tools registered on child's SDK server directly
// are not seen (s's list middleware applies). A mounted name longer than
// 128 characters is not served (s logs it). A change in child makes a new
// state of s in proportion to the change: nothing of s is rebuilt, and
// mounted tools are made again as callers come to them.
//
// One child can be mounted into several servers, and into one server
// under several namespaces. Mount fails, changing nothing, when namespace
// is not a valid tool name of at most 126 characters (the error wraps
// [ErrInvalidToolName]), when s already mounts a server under namespace,
// when child is nil, and when the mount would make a cycle (the error
// wraps [ErrMountCycle]).
func (s *Server) Mount(namespace string, child *Server) (unmount func(), err error) {
	if child == nil {
		return nil, errors.New("mcpkit: Mount: nil server")
	}
	if err := ValidateToolName(namespace); err != nil {
		return nil, fmt.Errorf("mcpkit: Mount: namespace: %w", err)
	}
	if len(namespace) > 126 {
		return nil, fmt.Errorf("mcpkit: Mount: namespace: %w: %d characters, at most 126 leave room for a tool's name", ErrInvalidToolName, len(namespace))
	}
	mountMu.Lock()
	defer mountMu.Unlock()
	if child == s || reaches(child, s, map[*Server]bool{}) {
		return nil, fmt.Errorf("%w: the server mounted under %q already serves, through its mounts, the server it would be mounted into", ErrMountCycle, namespace)
	}
	m := &mount{parent: s, child: child, prefix: namespace + mountSeparator}
	serving, err := s.attach(m)
	if err != nil {
		return nil, err
	}
	if serving {
		// A server mounted into one that serves serves too.
		child.firstServe()
	}
	if child.completes.Load() {
		s.noteCompleting()
	}
	var once sync.Once
	return func() { once.Do(m.unmount) }, nil
}

// attach makes the mount m a source of s, and reports whether s serves
// already. mountMu is held.
func (s *Server) attach(m *mount) (serving bool, err error) {
	// The child's lock first, as the child's commits take it before the
	// parent's: from here on, each change of child reaches s.
	child := m.child
	child.mu.Lock()
	defer child.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.sources, func(src source) bool {
		other, ok := src.(*mountView)
		return ok && other.m.prefix == m.prefix
	}) {
		return false, fmt.Errorf("mcpkit: Mount: a server is already mounted under %q", strings.TrimSuffix(m.prefix, mountSeparator))
	}
	child.mountedIn = append(slices.Clone(child.mountedIn), m)
	s.setSources(append(slices.Clone(s.sources), &mountView{m: m, child: child.state.Load()}))
	return s.names.serving, nil
}

// reaches reports whether from is to or mounts it, directly or through
// other mounts. seen keeps the servers already walked (mounts make a
// graph without cycles, but a server can be reached by several ways).
func reaches(from, to *Server, seen map[*Server]bool) bool {
	if from == to {
		return true
	}
	if seen[from] {
		return false
	}
	seen[from] = true
	for _, src := range from.state.Load().sources {
		if mv, ok := src.(*mountView); ok && reaches(mv.m.child, to, seen) {
			return true
		}
	}
	return false
}

// A mount is child mounted into parent under prefix.
type mount struct {
	parent, child *Server
	prefix        string // the namespace and mountSeparator

	// made keeps the mounted tools by the child's entry they were made
	// of, so that the parent finds the same *Tool for the same entry (it
	// keeps chains by that pointer), and madeTargets the mounted prompts,
	// resources and templates (nil for one left out). Bounded by
	// maxProvided.
	mu          sync.Mutex
	made        map[*entry]*Tool
	madeTargets map[*entry]Target
}

// unmount takes m's tools out of its parent and stops m hearing of its
// child's changes.
func (m *mount) unmount() {
	mountMu.Lock()
	defer mountMu.Unlock()
	c, p := m.child, m.parent
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mountedIn = slices.DeleteFunc(slices.Clone(c.mountedIn), func(x *mount) bool { return x == m })
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.IndexFunc(p.sources, func(src source) bool { mv, ok := src.(*mountView); return ok && mv.m == m }); i >= 0 {
		p.setSources(slices.Delete(slices.Clone(p.sources), i, i+1))
	}
}

// tool returns the mounted tool made of ce, an entry of the child: its
// tool renamed, deriving from it, served by its chain.
func (m *mount) tool(ce *entry) *Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := m.made[ce]; d != nil {
		return d
	}
	if m.made == nil || len(m.made) >= maxProvided {
		m.made = make(map[*entry]*Tool)
	}
	d := ce.tool.clone()
	d.Name = m.prefix + ce.tool.Name
	d.Origin = ce.tool
	d.Meta = m.viewMeta(d.Meta)
	d.Handler = &mountedHandler{child: m.child, chain: ce.chain.handler}
	// The child's chain holds the tool's own middleware and validates
	// with the child's mode: the parent adds neither again.
	d.Middleware = nil
	d.Validation = NoValidation
	m.made[ce] = d
	return d
}

// A mountedHandler serves a mounted tool, prompt, resource or template
// with the child's chain, as a request of the child: counted among the
// child's calls in flight, and refused while the child drains, as the
// child refuses a new call itself (see Server.Drain).
type mountedHandler struct {
	child    *Server
	chain    Handler
	prompt   PromptHandler
	resource ResourceHandler
	origin   *entry // the child's entry, for a prompt, resource or template
	ns       string // the mount's namespace, for a resource or template
}

func (h *mountedHandler) ServeTool(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
	if !h.child.drain.enter() {
		return nil, drainingError()
	}
	defer h.child.drain.leave()
	return h.chain.ServeTool(ctx, req)
}

func (h *mountedHandler) ServePrompt(ctx context.Context, req *PromptRequest) (*mcp.GetPromptResult, error) {
	if !h.child.drain.enter() {
		return nil, drainingError()
	}
	defer h.child.drain.leave()
	return h.prompt.ServePrompt(ctx, req)
}

// ServeResource serves a read as the child serves it: under the child's
// URI, the mount's namespace taken out, with the child's resource or
// template. Contents that name the child's URI name the URI read.
func (h *mountedHandler) ServeResource(ctx context.Context, req *ResourceRequest) (*mcp.ReadResourceResult, error) {
	if !h.child.drain.enter() {
		return nil, drainingError()
	}
	defer h.child.drain.leave()
	cr := *req
	cr.Resource, cr.Template = h.origin.resource, h.origin.template
	uri, ok := unprefixURI(h.ns, req.URI)
	if !ok {
		uri = req.URI
	}
	return ReadAt(ctx, h.resource, &cr, uri)
}

// target returns the mounted prompt, resource or template made of ce, an
// entry of the child: its target renamed (a resource's URI and a
// template's text prefixed by prefixURI), deriving from it, served by its
// chain; or nil for a resource or template whose URI cannot be prefixed,
// which is logged.
func (m *mount) target(ce *entry) Target {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.madeTargets[ce]; ok {
		return t
	}
	if m.madeTargets == nil || len(m.madeTargets) >= maxProvided {
		m.madeTargets = make(map[*entry]Target)
	}
	ns := strings.TrimSuffix(m.prefix, mountSeparator)
	var t Target
	switch {
	case ce.prompt != nil:
		p := *ce.prompt
		p.Name = m.prefix + p.Name
		p.Origin, p.Middleware = ce.prompt, nil
		p.Handler = &mountedHandler{child: m.child, prompt: ce.chain.prompt, origin: ce}
		t = &p
	case ce.resource != nil:
		if uri, ok := prefixURI(ns, ce.resource.URI); ok {
			r := *ce.resource
			r.URI, r.Origin, r.Middleware = uri, ce.resource, nil
			r.Handler = &mountedHandler{child: m.child, resource: ce.chain.resource, origin: ce, ns: ns}
			t = &r
		}
	case ce.template != nil:
		if text, ok := prefixURI(ns, ce.template.URITemplate); ok {
			tt := *ce.template
			tt.URITemplate, tt.Origin, tt.Middleware = text, ce.template, nil
			tt.compiled, tt.literal = nil, ""
			tt.Handler = &mountedHandler{child: m.child, resource: ce.chain.resource, origin: ce, ns: ns}
			t = &tt
		}
	}
	if t == nil {
		m.parent.logger.Warn("mcpkit: a mounted resource is not served: its URI has no scheme:// to put the namespace after",
			"uri", schema.Clip(ce.servedName()), "namespace", ns)
	}
	m.madeTargets[ce] = t
	return t
}

// prefixURI returns uri, a URI or a template's text, with the namespace
// ns inserted right after its scheme's "://" ("file:///a" under "docs" is
// "file://docs//a"), and false when uri does not start with a scheme and
// "://" (a template whose scheme is an expression, say). The order of
// URIs is kept: of two URIs prefixed under one namespace, the lower is
// the prefix of the lower.
func prefixURI(ns, uri string) (string, bool) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || !isScheme(scheme) {
		return "", false
	}
	return scheme + "://" + ns + "/" + rest, true
}

// unprefixURI is the inverse of prefixURI: it returns the URI that uri,
// served under the namespace ns, stands for, and false when uri is not
// one prefixURI makes for ns.
func unprefixURI(ns, uri string) (string, bool) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || !isScheme(scheme) {
		return "", false
	}
	rest, ok = strings.CutPrefix(rest, ns+"/")
	if !ok {
		return "", false
	}
	return scheme + "://" + rest, true
}

// uriAfter returns the URI u such that the URIs prefixURI makes for ns
// that sort after after are those made of the URIs after u: mounted URIs
// are paged by the child's.
func uriAfter(ns, after string) string {
	scheme, rest, ok := strings.Cut(after, "://")
	if !ok || !isScheme(scheme) {
		// after differs from every URI with a scheme where prefixURI
		// changes nothing.
		return after
	}
	if r, ok := strings.CutPrefix(rest, ns+"/"); ok {
		return scheme + "://" + r
	}
	if rest < ns+"/" {
		return scheme + ":/" // below every URI of that scheme
	}
	return scheme + ":/0" // above every URI of that scheme, below the next scheme's
}

// isScheme reports whether s is a URI scheme (RFC 3986): a letter, then
// letters, digits, "+", "-" and ".".
func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case i > 0 && ('0' <= r && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// viewMeta returns meta with the view a mounted tool names (the MCP Apps
// _meta.ui.resourceUri, and the deprecated flat key ui/resourceUri)
// prefixed as the mount serves the child's resources, so that the view
// mounted with the tool is found; meta itself is not changed.
func (m *mount) viewMeta(meta mcp.Meta) mcp.Meta {
	ns := strings.TrimSuffix(m.prefix, mountSeparator)
	var out mcp.Meta
	set := func(key string, v any) {
		if out == nil {
			out = maps.Clone(meta)
		}
		out[key] = v
	}
	if ui, ok := meta["ui"].(map[string]any); ok {
		if uri, ok := ui["resourceUri"].(string); ok {
			if p, ok := prefixURI(ns, uri); ok {
				ui = maps.Clone(ui)
				ui["resourceUri"] = p
				set("ui", ui)
			}
		}
	}
	if uri, ok := meta["ui/resourceUri"].(string); ok {
		if p, ok := prefixURI(ns, uri); ok {
			set("ui/resourceUri", p)
		}
	}
	if out == nil {
		return meta
	}
	return out
}

// childName returns the child's name that the mounted name stands for.
func (m *mount) childName(name string) (string, bool) {
	cname, ok := strings.CutPrefix(name, m.prefix)
	return cname, ok && cname != ""
}

// childAfter returns the child's name that the mounted name after stands
// for in paging, and false when every mounted name sorts before after.
func (m *mount) childAfter(after string) (string, bool) {
	switch {
	case strings.HasPrefix(after, m.prefix):
		return after[len(m.prefix):], true
	case after < m.prefix:
		return "", true
	}
	// after is above the prefix and does not start with it: it sorts
	// after every name that does.
	return "", false
}

// A mountView is a mount as a source of its parent's state: with the
// state of the child that the parent's state serves, so that a state of
// the parent answers as the child did when it was made (the parent's
// listeners are reviewed by comparing the two).
type mountView struct {
	m     *mount
	child *state
}

// served returns the names under which the child serves the tool whose
// identity is id (its registered names of that identity, and what its own
// sources may serve it under), each behind the mount's prefix.
func (mv *mountView) served(id ToolID) []string {
	var out []string
	for e := range mv.child.identity(id) {
		out = append(out, mv.m.prefix+e.tool.Name)
	}
	for _, src := range mv.child.sources {
		for _, name := range src.served(id) {
			out = append(out, mv.m.prefix+name)
		}
	}
	return out
}

// offer returns the versions of the child's tool that name stands for,
// among those the child serves c, as entries of the parent.
func (mv *mountView) offer(ctx context.Context, st *state, c Caller, name string, blind bool) ([]*entry, bool) {
	cname, ok := mv.m.childName(name)
	if !ok {
		return nil, false
	}
	var ces []*entry
	if _, _, blocked := mv.m.child.walk(ctx, mv.child, c, KindTool, cname, pin{}, &ces, blind); blocked {
		return nil, true
	}
	return mv.entries(st, ces), false
}

// entries returns the parent's entries of the child's entries ces.
func (mv *mountView) entries(st *state, ces []*entry) []*entry {
	out := make([]*entry, 0, len(ces))
	for _, ce := range ces {
		if e := mv.m.parent.provide(st, mv.m.tool(ce), ce.key()); e != nil {
			out = append(out, e)
		}
	}
	return out
}

// page returns the child's page of the shelf sh that c sees, renamed.
// Mounted names are the child's behind one prefix (a URI's after its
// scheme, see prefixURI), so they sort as the child's do, and the child's
// pages are the parent's.
func (mv *mountView) page(ctx context.Context, st *state, c Caller, sh shelf, after string, limit int) listPage {
	uris := sh == shelfResources || sh == shelfTemplates
	ns := strings.TrimSuffix(mv.m.prefix, mountSeparator)
	from, ok := "", true
	if uris {
		from = uriAfter(ns, after)
	} else {
		from, ok = mv.m.childAfter(after)
	}
	if !ok {
		return listPage{}
	}
	cp := mv.m.child.page(ctx, mv.child, c, sh, from, limit, true)
	pg := listPage{more: cp.more}
	if cp.last != "" {
		pg.last = mv.m.prefix + cp.last
		if uris {
			// A URI that cannot be prefixed sorts among the prefixed
			// ones as it does among the child's.
			pg.last = cp.last
			if p, ok := prefixURI(ns, cp.last); ok {
				pg.last = p
			}
		}
	}
	for _, it := range cp.items {
		if sh != shelfTools {
			if e := mv.targetEntry(st, it.group[0]); e != nil && st.sees(ctx, c, e) {
				li := listItem{name: e.servedName(), group: []*entry{e}}
				if !e.unlisted() {
					li.target = e
				}
				pg.items = append(pg.items, li)
			}
			continue
		}
		var es []*entry
		st.pick(ctx, c, mv.entries(st, it.group), pin{}, &es)
		if len(es) > 0 {
			pg.items = append(pg.items, listItem{name: mv.m.prefix + it.name, def: listedOf(es), group: es})
		}
	}
	return pg
}

// targetEntry returns the parent's entry of ce, a prompt, resource or
// template of the child, or nil when the parent does not serve it.
func (mv *mountView) targetEntry(st *state, ce *entry) *entry {
	t := mv.m.target(ce)
	if t == nil {
		return nil
	}
	return mv.m.parent.provideTarget(st, t, ce.target, ce.silent)
}

// target returns the parent's entry of the child's target of family f
// that key stands for, among those the child serves c.
func (mv *mountView) target(ctx context.Context, st *state, c Caller, f family, key string, blind bool) (*entry, bool) {
	ckey, ok := mv.m.childKey(f, key)
	if !ok {
		return nil, false
	}
	ce, blocked := mv.m.child.targetAt(ctx, mv.child, c, f, ckey, blind)
	if ce == nil {
		return nil, blocked
	}
	return mv.targetEntry(st, ce), false
}

// read returns the parent's entry of what the child's route reaches for
// the URI that uri stands for, with the variables it decoded.
func (mv *mountView) read(ctx context.Context, st *state, c Caller, uri string, text, blind bool) (*entry, map[string]string, bool) {
	curi, ok := unprefixURI(strings.TrimSuffix(mv.m.prefix, mountSeparator), uri)
	if !ok {
		return nil, nil, false
	}
	ce, params, blocked := mv.m.child.reachURI(ctx, mv.child, c, curi, text, blind)
	if ce == nil {
		return nil, nil, blocked
	}
	return mv.targetEntry(st, ce), params, false
}

// uniform reports whether the child offers everyone the same targets of
// kind k.
func (mv *mountView) uniform(k Kind) bool { return mv.child.uniform(k) }

// serves reports whether the child serves some target of kind k.
func (mv *mountView) serves(k Kind) bool { return mv.child.serves(k) }

// childKey returns the child's key of family f that the mounted key
// stands for.
func (m *mount) childKey(f family, key string) (string, bool) {
	if f == famPrompt {
		return m.childName(key)
	}
	return unprefixURI(strings.TrimSuffix(m.prefix, mountSeparator), key)
}

// mountedKey returns the key of family f under which the parent serves
// the child's key, as childKey's inverse.
func (m *mount) mountedKey(f family, key string) (string, bool) {
	if f == famPrompt {
		return m.prefix + key, true
	}
	return prefixURI(strings.TrimSuffix(m.prefix, mountSeparator), key)
}
