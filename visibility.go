package mcpkit

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"

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

// revisit asks the Visibility again about every registered tool, and
// commits the state that follows: every listener is reviewed whole. s.mu
// is held.
func (s *Server) revisit() {
	s.freeze()
	names := s.reenable()
	st, _ := s.update(names)
	targets := s.reindexTargets(st, nil)
	s.commit(st, change{names: names, whole: true, targets: targets})
}

// revisitNames is revisit for a change that concerns the tools names
// select alone. s.mu is held.
//
// When the states answer per request from snapshots of the Visibility (see
// [VisibilitySnapshotter]), the state before the change still answers as
// the Visibility did, so each listener is reviewed for the names the
// selected tools are served under (a provider's tools, by the names given,
// a mounted server's, by the lineage of its tools), as for a change of the
// registry. Otherwise every listener is reviewed whole, as revisit does.
func (s *Server) revisitNames(names []string) {
	exact := s.frozen != nil
	s.freeze()
	changed := map[string]bool{}
	served := map[string]bool{}
	seen := map[*Tool]bool{}
	for _, name := range names {
		for _, ts := range [2][]*Tool{s.registeredVersions(name), s.lineage[name]} {
			for _, t := range ts {
				if seen[t] {
					continue
				}
				seen[t] = true
				if d := s.derivationOf(t).tool; d != nil {
					served[d.Name] = true
					s.reask(t, changed)
				}
			}
		}
	}
	changedNames := slices.Sorted(maps.Keys(changed))
	st, _ := s.update(changedNames)
	targets := s.reindexTargets(st, names)
	if !exact {
		s.commit(st, change{names: changedNames, whole: true, targets: targets})
		return
	}
	for _, src := range st.sources {
		selectedNames(src, names, "", served)
	}
	s.commit(st, change{names: changedNames, reviewed: slices.Sorted(maps.Keys(served)), reask: true, targets: targets})
}

// selectedNames adds to served the names under which src, a source of a state,
// serves tools that a rule naming names selects (as [Named] selects them):
// for a Provider, the names themselves; for a mounted server, under its
// namespace, those of its tools whose lineage has one of the names.
func selectedNames(src source, names []string, prefix string, served map[string]bool) {
	mv, ok := src.(*mountView)
	if !ok {
		for _, name := range names {
			served[prefix+name] = true
		}
		return
	}
	for _, name := range names {
		if strings.HasPrefix(name, prefix+mv.m.prefix) {
			served[name] = true // a rule that names the mounted name
		}
	}
	prefix += mv.m.prefix
	match := Named(names...)
	for n := range mv.child.byName.All() {
		if slices.ContainsFunc(n.versions, func(e *entry) bool { return match(e.tool) }) {
			served[prefix+n.name] = true
		}
	}
	for _, inner := range mv.child.sources {
		selectedNames(inner, names, prefix, served)
	}
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
// brings the records' groups in line, and returns the names whose enabled versions
// changed, sorted: the state needs building again for those alone. The
// Visibility is asked about every tool (its rules are opaque), the rest is
// in proportion to the change. s.mu is held.
func (s *Server) reenable() []string {
	changed := map[string]bool{}
	for _, r := range s.reg {
		for _, t := range r.versions {
			s.reask(t, changed)
		}
	}
	return slices.Sorted(maps.Keys(changed))
}

// reask asks the Visibility again whether what the transforms made of t, a
// registered version, is enabled, brings its group in line, and adds the
// name it is served under to changed when the answer changed. s.mu is held.
func (s *Server) reask(t *Tool, changed map[string]bool) {
	dv := s.derivationOf(t)
	d := dv.tool
	if d == nil {
		return
	}
	on := s.visibility == nil || s.visibility.Enabled(d)
	if on == dv.enabled {
		return
	}
	dv.enabled = on
	s.setDerivation(t, dv)
	r := s.record(d.Name)
	if on {
		r.group = append(r.group, d)
	} else {
		r.group = slices.DeleteFunc(r.group, func(x *Tool) bool { return x == d })
		s.tidy(d.Name, r)
	}
	changed[d.Name] = true
}
