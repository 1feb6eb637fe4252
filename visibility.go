package mcpkit

import (
	"context"
	"maps"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Visibility decides which tools exist: for everyone, and for each
// request. Package visibility builds them from rules (by name, tag,
// version) and per-request predicates (scopes, claims, headers, client
// capabilities); see [Server.SetVisibility].
//
// A tool that is not visible is hidden everywhere: absent from tools/list,
// and a call to it, pinned or not, gets exactly the answer of a name never
// registered. When the highest version of a tool is not visible, the next
// visible one is listed and called.
type Visibility interface {
	// Enabled reports whether t, a version of a tool as the catalog
	// transforms made it, is served at all. The Server asks when its
	// registry or its visibility changes (see [Server.Refresh]), never per
	// request.
	Enabled(t *Tool) bool

	// PerRequest reports whether Allowed can answer false. It is asked
	// with Enabled. When it reports false, Allowed is never called and
	// lists may be cached by anyone; when it reports true, every tools/list
	// answer has cacheScope "private", since it depends on who asks.
	PerRequest() bool

	// Allowed reports whether the request c may see and call t, an
	// enabled tool. It is called for each tool a request touches (one or
	// a few per tools/call, up to a page per tools/list), so it must be
	// fast, and safe for concurrent use.
	Allowed(ctx context.Context, t *Tool, c Caller) bool
}

// A VisibilitySnapshotter is a [Visibility] that can keep the answers it
// gives at a moment. Package visibility's Rules is one. The Server takes a
// snapshot each time it asks the Visibility again (SetVisibility, Refresh,
// RefreshTools), and serves each state of its registry with the snapshot
// it was made with, so that calls and lists already running finish with the
// answers they started with, and so that [Server.RefreshTools] can compare
// what each listening client saw before a change with what it sees after,
// for the tools the change concerns alone.
type VisibilitySnapshotter interface {
	Visibility

	// Snapshot returns a Visibility that answers as this one does now, and
	// goes on answering so after this one changes (its per-request
	// predicates are still asked per request). It is called once per
	// refresh, not per request.
	Snapshot() Visibility
}

// A Caller is what a request says about who sends it, for per-request
// decisions: [*Request] and [*ListRequest] are Callers. On stdio and
// in-memory transports Header and TokenInfo are nil; a predicate that needs
// them should treat their absence as it would a stranger.
type Caller interface {
	// TokenInfo returns the verified bearer token, or nil.
	TokenInfo() *auth.TokenInfo
	// Header returns the HTTP headers, or nil.
	Header() http.Header
	// ProtocolVersion returns the MCP protocol version, or "".
	ProtocolVersion() string
	// ClientCapabilities returns the capabilities the client declared, or
	// nil.
	ClientCapabilities() *mcp.ClientCapabilities
}

// SetVisibility makes v decide which tools are served, and to whom; nil
// serves every tool to everyone. Clients listening for changes (sessions of
// protocols before 2026-07-28, 2026-07-28 subscriptions/listen streams)
// receive notifications/tools/list_changed when what they see may have
// changed; see [Server.Refresh] for how a listener is judged.
//
// When what v answers changes (a rule was added, say), call
// [Server.Refresh]; the rules of package visibility do it themselves.
func (s *Server) SetVisibility(v Visibility) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.visibility = v
	s.revisit()
}

// Refresh asks the server's [Visibility] again which tools are enabled, and
// to whom, and tells the clients listening for changes with
// notifications/tools/list_changed if what they see may have changed. Calls
// and lists already running finish with what they started with.
//
// Without a per-request Visibility every listener sees the same list, and
// hears of every change of it. With one, a listener hears only of the
// changes of what its own caller is listed: the names, and the definitions
// (the versions it may see, which the listed one names in its _meta). Its
// caller is the request that opened it, the initialize request of a session
// (protocols before 2026-07-28), or the subscriptions/listen request of a
// 2026-07-28 stream, with its token, headers and context values; a later
// request of the session with another token is not asked about. Each change
// of the registry asks the Visibility about the names that changed, for each
// listener; SetVisibility and Refresh ask about every tool, for each
// listener. A listener that the server did not see open (a session connected
// before [Wrap]) hears of every change; so does every listener when tools
// registered on the SDK server directly change, since they are everyone's.
// A listener on a replica hears of other replicas' changes as
// [Server.ShareChanges] says.
func (s *Server) Refresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revisit()
}

// RefreshTools is [Server.Refresh] for a change of the Visibility's answers
// that concerns only the tools that names select, as [Named] selects them:
// those served under one of the names, and those derived from them (whose
// [Tool.Lineage] has one of the names). It asks the Visibility again about
// those tools alone, so its work is in proportion to them, not to the
// registry. When the change may concern other tools (a match function on
// tags, say), call Refresh. The rules of package visibility call
// RefreshTools themselves for the rules that name their tools.
//
// With a per-request Visibility and clients listening for changes, each
// listener is asked about every tool, as Refresh does, unless the
// Visibility keeps the answers it gave before (see [VisibilitySnapshot]).
func (s *Server) RefreshTools(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revisitNames(names)
}

// revisit rebuilds the state after a change of visibility; publish tells
// the listeners whose view changed. The other replicas hear of it when the
// old or the new state answers per request, even if what this one serves
// did not change: their listeners are not this one's. s.mu is held.
func (s *Server) revisit() {
	old := s.state.Load()
	s.freeze()
	s.revisiting = true
	names := s.reenable()
	s.publish(s.freshProvided(s.update(names)), names)
	s.revisiting = false
	if old.allowed != nil || s.state.Load().allowed != nil {
		s.shareChange()
	}
}

// revisitNames is revisit for a change that concerns the tools names
// select alone. s.mu is held.
//
// When the states answer per request from snapshots of the Visibility (see
// [VisibilitySnapshotter]), the state before the change still answers as
// the Visibility did, so each listener is reviewed for the names the
// tools are served under, as for a change of the registry. Otherwise, and
// when providers serve tools (the names of whose tools are not known here),
// every listener is reviewed as revisit does.
func (s *Server) revisitNames(names []string) {
	old := s.state.Load()
	exact := s.frozen != nil && len(s.providers) == 0
	s.freeze()
	s.revisiting = !exact
	changed := map[string]bool{}
	served := map[string]bool{}
	seen := map[*Tool]bool{}
	for _, name := range names {
		for _, ts := range [2][]*Tool{s.versions[name], s.lineage[name]} {
			for _, t := range ts {
				if seen[t] {
					continue
				}
				seen[t] = true
				if d := s.derived[t].tool; d != nil {
					served[d.Name] = true
					s.reask(t, changed)
				}
			}
		}
	}
	changedNames := slices.Sorted(maps.Keys(changed))
	var reviewed []string
	if exact {
		reviewed = slices.Sorted(maps.Keys(served))
	}
	s.publishReviewing(s.freshProvided(s.update(changedNames)), changedNames, reviewed)
	s.revisiting = false
	if old.allowed != nil || s.state.Load().allowed != nil {
		s.shareChange()
	}
}

// freshProvided returns st with an empty cache of provided tools, when
// providers serve tools: the entries of that cache hold what the
// Visibility answered when they were made, so a change of visibility drops
// them, as ProviderChanged does. s.mu is held.
func (s *Server) freshProvided(st *state) *state {
	if len(st.providers) == 0 {
		return st
	}
	next := *st
	next.provided, next.lister = newProvidedCache(), nil
	s.finish(&next)
	return &next
}

// freeze takes the snapshot of the Visibility that the states made from
// now on answer with, if it takes snapshots. s.mu is held.
func (s *Server) freeze() {
	s.frozen = nil
	if sv, ok := s.visibility.(VisibilitySnapshotter); ok {
		s.frozen = sv.Snapshot()
	}
}

// reenable asks the Visibility again which served tools are enabled,
// brings s.groups in line, and returns the names whose enabled versions
// changed, sorted: the state needs building again for those alone. The
// Visibility is asked about every tool (its rules are opaque), the rest is
// in proportion to the change. s.mu is held.
func (s *Server) reenable() []string {
	changed := map[string]bool{}
	for _, vs := range s.versions {
		for _, t := range vs {
			s.reask(t, changed)
		}
	}
	return slices.Sorted(maps.Keys(changed))
}

// reask asks the Visibility again whether what the transforms made of t, a
// registered version, is enabled, brings s.groups in line, and adds the
// name it is served under to changed when the answer changed. s.mu is held.
func (s *Server) reask(t *Tool, changed map[string]bool) {
	dv := s.derived[t]
	d := dv.tool
	if d == nil {
		return
	}
	on := s.visibility == nil || s.visibility.Enabled(d)
	if on == dv.enabled {
		return
	}
	dv.enabled = on
	s.derived[t] = dv
	group := s.groups[d.Name]
	if on {
		s.groups[d.Name] = append(group, d)
	} else if group = slices.DeleteFunc(group, func(x *Tool) bool { return x == d }); len(group) == 0 {
		delete(s.groups, d.Name)
	} else {
		s.groups[d.Name] = group
	}
	changed[d.Name] = true
}

// resolve returns the version of n that serves a call, or nil when the
// call must be answered as for an unknown tool: the version req pins, or
// else the highest, among those req may see.
func (st *state) resolve(ctx context.Context, n *toolName, req *Request) *entry {
	pin, pinned := pinnedVersion(req.Call)
	for _, e := range n.versions {
		if pinned && e.tool.Version != pin {
			continue
		}
		if st.allowed != nil && !st.allowed(ctx, e.tool, req) {
			if pinned {
				return nil
			}
			continue
		}
		return e
	}
	return nil
}

// served returns the version of n that c sees listed, or nil when none is
// listed for c.
func (st *state) served(ctx context.Context, n *toolName, c Caller) *Tool {
	for i, e := range n.versions {
		if st.allowed != nil && !st.allowed(ctx, e.tool, c) {
			continue
		}
		if e.tool.Unlisted {
			return nil
		}
		if st.allowed != nil && e.listed != nil {
			return st.seenBy(ctx, n, i, c)
		}
		return e.tool
	}
	return nil
}

// seenBy returns the definition of n.versions[i], the version of n that c
// is served, as listed to c: its _meta names only the versions c may pin,
// so that a version hidden from c is not advertised to it. The versions
// above i are hidden from c. Definitions for each set of visible versions
// are made once per state (for names of up to 64 versions).
func (st *state) seenBy(ctx context.Context, n *toolName, i int, c Caller) *Tool {
	e := n.versions[i]
	all := i == 0
	var set uint64 = 1 << min(i, 63)
	for j := i + 1; j < len(n.versions); j++ {
		if st.allowed(ctx, n.versions[j].tool, c) {
			set |= 1 << min(j, 63)
		} else {
			all = false
		}
	}
	if all {
		return e.tool
	}
	cache := len(n.versions) <= 64
	if cache {
		n.mu.Lock()
		defer n.mu.Unlock()
		if t := n.seen[set]; t != nil {
			return t
		}
	}
	var listed []string
	for j := i; j < len(n.versions); j++ {
		seen := j == i
		if !seen && cache {
			seen = set&(1<<j) != 0
		} else if !seen {
			seen = st.allowed(ctx, n.versions[j].tool, c)
		}
		if v := n.versions[j].tool.Version; seen && v != "" {
			listed = append(listed, v)
		}
	}
	t := withVersionMeta(e.derived, listed)
	if cache {
		if n.seen == nil {
			n.seen = make(map[uint64]*Tool)
		}
		n.seen[set] = t
	}
	return t
}

// visible returns, in name order, the tools c sees listed whose names come
// after the name after, at most limit of them (no limit when negative).
// Its work is proportional to the names it looks at, not to the registry.
func (st *state) visible(ctx context.Context, c Caller, after string, limit int) []*Tool {
	out, _ := st.page(ctx, c, after, limit)
	return out
}

// page is visible, also reporting whether tools c sees may follow the
// last one returned (when the limit stopped it).
func (st *state) page(ctx context.Context, c Caller, after string, limit int) (out []*Tool, more bool) {
	for _, n := range st.listed.after(after) {
		if limit >= 0 && len(out) == limit {
			return out, true
		}
		if st.allowed == nil || c == nil {
			if t := n.versions[0].tool; !t.Unlisted {
				out = append(out, t)
			}
		} else if t := st.served(ctx, n, c); t != nil {
			out = append(out, t)
		}
	}
	return out, false
}

// Resolve returns the tool that a call to name from c reaches, and the
// Handler of its whole chain (server-wide middleware, the tool's own,
// validation, the handler), or false when name is unknown or hidden from c:
// the highest version of name that c may see, listed or not. It is for
// tools that call other tools on a caller's behalf (a discovery meta-tool,
// say), so that they see exactly what the caller may call. The Go error the
// chain returns is not mapped onto the wire.
func (s *Server) Resolve(ctx context.Context, c Caller, name string) (*Tool, Handler, bool) {
	st := s.state.Load()
	n, ok := st.byName.get(name)
	if !ok {
		return nil, nil, false
	}
	for _, e := range n.versions {
		if st.allowed == nil || st.allowed(ctx, e.tool, c) {
			return e.tool, e.handler, true
		}
	}
	return nil, nil, false
}

// Generation returns a number that changes whenever what the server serves
// may have changed: tools added or removed, transforms, middleware,
// visibility, providers. Code that derives something from the served tools
// (a search index, say) keeps the generation it was made for, and makes it
// again when the generation moves on.
func (s *Server) Generation() uint64 { return s.gen.Load() }

// Reaches reports whether a call from c can reach the tool whose identity
// is id (see [Tool.ID]): whether some enabled tool with that identity, under
// whichever name and version it is served, is visible to c. Code that runs a
// tool later than the call that started it (the rounds of a task, say)
// asks it first, so that a tool hidden or removed since then is not run.
// It costs a map lookup plus the per-request [Visibility] of the tools of
// that identity. When no registered tool of it is visible to c, the
// providers are asked for the tool of id's name (a mount, for its mounted
// name): a provided tool of that identity counts as any other.
func (s *Server) Reaches(ctx context.Context, c Caller, id ToolID) bool {
	st := s.state.Load()
	es, _ := st.byID.get(idKey(id))
	for _, e := range es {
		if st.allowed == nil || st.allowed(ctx, e.tool, c) {
			return true
		}
	}
	return len(st.providers) > 0 && s.reachesProvided(ctx, st, c, id)
}

// Callable returns, sorted by name, the tools c may call: for each name, the
// version a call from c reaches, whether tools/list shows it or not
// (unlisted tools, such as deprecated aliases and tools behind a discovery
// meta-tool, included). With a nil c, it returns the highest enabled
// version of every name, whoever calls (the per-request half of the
// Visibility is not asked): for indexes that callers' requests then filter.
// Tools of providers (see [Provider]) are not included.
func (s *Server) Callable(ctx context.Context, c Caller) []*Tool {
	st := s.state.Load()
	out := make([]*Tool, 0, st.byName.len())
	for n := range st.byName.all() {
		for _, e := range n.versions {
			if st.allowed == nil || c == nil || st.allowed(ctx, e.tool, c) {
				out = append(out, e.tool)
				break
			}
		}
	}
	return out
}
