package mcpkit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/spell"
	"github.com/mcpkit/mcpkit/internal/version"
)

// The report of names that select no tool.
//
// A tool name a user writes in a rule (Named in a ForTools selection, a
// Bulkhead pool, a visibility rule, transform.Select, a list middleware
// such as middleware.Deref's Skip) that is misspelt
// selects nothing and protects nothing, silently. A Server reports each
// such name once, as a warning naming the tool it most likely meant. It
// judges when it first serves (its first request, or the first time its
// tools are reached through a mount), since tools come from providers
// and mounts as well as from Add, and again when what it serves changes:
// the names of chains built since, those of its Visibility, catalog
// transforms and list middleware after they change, and the names whose
// tools went away. A
// name is known when a registered tool, or a tool derived from one, has
// it in its lineage, when a mounted server serves a tool by it (with the
// mount's prefix or without it), or when a Provider looks it up for a
// caller without credentials; the providers are asked in the background,
// with a deadline of their own. A report is a log record, never an
// error: a catalog that changes may well serve the name later.

// nameCheck is what a Server keeps for the report. Its fields but first
// are guarded by the Server's mu.
type nameCheck struct {
	first sync.Once // the judgement at the first serve

	serving  bool                 // the first judgement was made
	written  map[string][]nameUse // the names judged (as written, name@version too) by tool name, each with where it was first written
	reported map[string]bool      // the names (and name@version) reported, or being looked up in providers
	pending  []namedUse           // written in the chains built since the last judgement
}

// providerLookupTimeout bounds the lookups in providers of the names that
// select no registered or mounted tool.
const providerLookupTimeout = 30 * time.Second

// firstServe makes, once, the first judgement of the names written in s's
// rules, then has each server mounted in s make its own. It is called on
// every request, and costs an atomic load after the first.
func (s *Server) firstServe() {
	s.names.first.Do(func() {
		s.mu.Lock()
		s.names.serving = true
		s.judgeNames(s.state.Load(), s.writtenNames())
		var children []*Server
		for _, src := range s.sources {
			if mv, ok := src.(*mountView); ok {
				children = append(children, mv.m.child)
			}
		}
		s.mu.Unlock()
		// Without s.mu: a child's lock comes before its parents'.
		for _, c := range children {
			c.firstServe()
		}
	})
}

// writtenNames returns where tool names were written in s's chains,
// Visibility and catalog transforms. s.mu is held.
func (s *Server) writtenNames() []namedUse {
	var uses []namedUse
	for _, r := range s.reg {
		for _, bc := range r.chains {
			uses = append(uses, bc.chain.named...)
		}
	}
	if !s.anyChain() {
		// No registered tool has a chain to read them from.
		uses = append(uses, s.serverWideNames()...)
	}
	return append(uses, s.ruleNames()...)
}

// serverWideNames returns the tool names written in the server-wide
// middleware, read from its chain built around no tool. s.mu is held.
func (s *Server) serverWideNames() []namedUse {
	if len(s.use) == 0 {
		return nil
	}
	rec := &pipeline{from: FromServer}
	b := boundHandler{tool: &Tool{probe: &nameProbe{}}, rec: rec, next: probe{}}
	func() {
		defer func() { _ = recover() }()
		for i := len(s.use) - 1; i >= 0; i-- {
			b = apply(s.use[i], b)
		}
	}()
	return rec.named
}

// ruleNames returns the names written in s's Visibility (one with a method
// ToolNames), catalog transforms and list middleware. s.mu is held.
func (s *Server) ruleNames() []namedUse {
	var uses []namedUse
	if v, ok := s.visibility.(toolNamer); ok {
		if names := v.ToolNames(); len(names) > 0 {
			uses = append(uses, namedUse{names: names, in: fmt.Sprintf("%T", s.visibility)})
		}
	}
	for _, tr := range s.transforms {
		if names := probeNames(func(t *Tool) { _, _ = tr(t) }); len(names) > 0 {
			uses = append(uses, namedUse{names: names, in: "mcpkit.CatalogTransform(" + funcName(tr) + ")"})
		}
	}
	return append(uses, listNames(s.listUse)...)
}

// A toolNamer says the tool names it was written with: a Visibility, the
// Lister of a list middleware.
type toolNamer interface{ ToolNames() []string }

// listNames returns the names written in the list middleware mw: those
// the Lister each returns says it selects by, through a method ToolNames.
// A middleware is applied to a Lister that lists nothing, to learn them;
// one that panics there selects by no name.
func listNames(mw []ListMiddleware) []namedUse {
	var uses []namedUse
	none := ListerFunc(func(context.Context, *ListRequest) ([]*Tool, error) { return nil, nil })
	for _, m := range mw {
		var names []string
		func() {
			defer func() { _ = recover() }()
			if l, ok := m(none).(toolNamer); ok {
				names = l.ToolNames()
			}
		}()
		if len(names) > 0 {
			uses = append(uses, namedUse{names: names, in: "mcpkit.ListMiddleware(" + funcName(m) + ")"})
		}
	}
	return uses
}

// judgeChange judges again, once s serves, what the change c that made st
// may have made a name select no more, or written anew. s.mu is held.
func (s *Server) judgeChange(st *state, c change) {
	if !s.names.serving {
		return
	}
	uses := s.names.pending
	s.names.pending = nil
	if c.whole || c.reask {
		uses = append(uses, s.ruleNames()...)
	}
	for _, name := range c.names {
		for _, w := range s.names.written[name] {
			uses = append(uses, namedUse{names: []string{w.name}, in: w.in})
		}
	}
	if len(uses) > 0 {
		s.judgeNames(st, uses)
	}
}

// noteChain keeps the names of a chain built once s serves, for the
// judgement of the change that built it. s.mu is held.
func (s *Server) noteChain(c *chain) {
	if s.names.serving && len(c.named) > 0 {
		s.names.pending = append(s.names.pending, c.named...)
	}
}

// A nameUse is one name written in one place.
type nameUse struct{ name, in string }

// judgeNames reports the names of uses that select no tool of st and
// were not reported before: at once when no provider could serve them,
// else once the providers were asked. A name with a version
// ("name@version", see SelectorNames) whose name selects a registered or
// mounted tool is reported at once when none of them has that version; a
// provider's tool is judged by its name alone. s.mu is held.
func (s *Server) judgeNames(st *state, uses []namedUse) {
	var unknown, noVersion []nameUse
	for _, u := range uses {
		for _, w := range u.names {
			name, ver, versioned := strings.Cut(w, "@")
			if !slices.ContainsFunc(s.names.written[name], func(x nameUse) bool { return x.name == w }) {
				if s.names.written == nil {
					s.names.written = make(map[string][]nameUse)
				}
				s.names.written[name] = append(s.names.written[name], nameUse{w, u.in})
			}
			switch {
			case s.names.reported[name]:
			case !s.knows(st, name):
				s.report(name)
				unknown = append(unknown, nameUse{name, u.in})
			case versioned && !s.names.reported[w] && !s.versionsOf(st, name)[ver]:
				s.report(w)
				noVersion = append(noVersion, nameUse{w, u.in})
			}
		}
	}
	if len(noVersion) > 0 {
		s.reportVersions(st, noVersion)
	}
	if len(unknown) == 0 {
		return
	}
	known := s.knownNames(st)
	providers := providersOf(st.sources, "")
	if len(providers) == 0 {
		s.reportNames(unknown, known)
		return
	}
	go s.lookUpNames(providers, unknown, known)
}

// report marks name (or name@version) as reported. s.mu is held.
func (s *Server) report(name string) {
	if s.names.reported == nil {
		s.names.reported = make(map[string]bool)
	}
	s.names.reported[name] = true
}

// versionsOf returns the versions of the tools of s that name selects (as
// NamedVersion selects): registered ones, those derived from them, and
// those of mounted servers. s.mu is held.
func (s *Server) versionsOf(st *state, name string) map[string]bool {
	set := map[string]bool{}
	for _, ts := range [2][]*Tool{s.registeredVersions(name), s.lineage[name]} {
		for _, t := range ts {
			if t.Name == name {
				set[t.Version] = true
			}
			for o, i := s.derived[t].tool, 0; o != nil && i <= maxOrigins; o, i = o.Origin, i+1 {
				if o.Name == name {
					set[o.Version] = true
				}
			}
		}
	}
	mountedVersions(st.sources, nil, name, set)
	return set
}

// mountedVersions adds to set the versions of the tools of the mounted
// servers among srcs that name selects: served under name, behind the
// prefixes of the mounts it is reached through (outermost first), or
// with name in its lineage.
func mountedVersions(srcs []source, prefixes []string, name string, set map[string]bool) {
	for _, src := range srcs {
		mv, ok := src.(*mountView)
		if !ok {
			continue
		}
		ps := append(slices.Clone(prefixes), mv.m.prefix)
		for n := range mv.child.byName.All() {
			for _, e := range n.versions {
				for i := range ps {
					if strings.Join(ps[i:], "")+e.tool.Name == name {
						set[e.tool.Version] = true
					}
				}
				for o, i := e.tool, 0; o != nil && i <= maxOrigins; o, i = o.Origin, i+1 {
					if o.Name == name {
						set[o.Version] = true
					}
				}
			}
		}
		mountedVersions(mv.child.sources, ps, name, set)
	}
}

// knows reports whether name selects a tool of s (as Named selects): a
// registered one, a tool derived from one, or a tool of a mounted server.
// s.mu is held.
func (s *Server) knows(st *state, name string) bool {
	return len(s.registeredVersions(name)) > 0 || len(s.lineage[name]) > 0 || mountsKnow(st.sources, name)
}

// mountsKnow reports whether a mounted server among srcs serves a tool
// under name, or one with name in its lineage: its own name, behind the
// mount's prefix or not.
func mountsKnow(srcs []source, name string) bool {
	for _, src := range srcs {
		mv, ok := src.(*mountView)
		if !ok {
			continue
		}
		if stateKnows(mv.child, name) {
			return true
		}
		if cname, ok := mv.m.childName(name); ok && stateKnows(mv.child, cname) {
			return true
		}
	}
	return false
}

// stateKnows reports whether st serves a tool called name, or one whose
// identity has that name, or a mounted server of it does.
func stateKnows(st *state, name string) bool {
	if _, ok := st.byName.Get(name); ok {
		return true
	}
	key := idKey(ToolID{Name: name})
	if _, ok := st.byID.Get(key); ok {
		return true
	}
	for k := range st.byID.After(key) {
		if strings.HasPrefix(k, key) {
			return true
		}
		break
	}
	return mountsKnow(st.sources, name)
}

// knownNames returns the names a misspelt name may have meant: those of
// the registered tools and their lineages, and those mounted servers
// serve, sorted. s.mu is held.
func (s *Server) knownNames(st *state) []string {
	set := make(map[string]bool, len(s.reg)+len(s.lineage))
	for name, r := range s.reg {
		if len(r.versions) > 0 {
			set[name] = true
		}
	}
	for name := range s.lineage {
		set[name] = true
	}
	mountedNames(st.sources, set)
	return slices.Sorted(maps.Keys(set))
}

// mountedNames adds to set the names the mounted servers among srcs serve
// tools under, with their prefixes and without.
func mountedNames(srcs []source, set map[string]bool) {
	for _, src := range srcs {
		mv, ok := src.(*mountView)
		if !ok {
			continue
		}
		inner := map[string]bool{}
		for n := range mv.child.byName.All() {
			inner[n.name] = true
			for _, e := range n.versions {
				for o, i := e.tool, 0; o != nil && i <= maxOrigins; o, i = o.Origin, i+1 {
					inner[o.Name] = true
				}
			}
		}
		mountedNames(mv.child.sources, inner)
		for name := range inner {
			set[name] = true
			set[mv.m.prefix+name] = true
		}
	}
}

// A prefixedProvider is a Provider among a state's sources, with the
// prefix of the mounts it is reached through.
type prefixedProvider struct {
	ps     *providerSource
	prefix string
}

// providersOf returns the Providers among srcs and among the sources of
// the mounted servers among them.
func providersOf(srcs []source, prefix string) []prefixedProvider {
	var out []prefixedProvider
	for _, src := range srcs {
		switch src := src.(type) {
		case *providerSource:
			out = append(out, prefixedProvider{src, prefix})
		case *mountView:
			out = append(out, providersOf(src.child.sources, prefix+src.m.prefix)...)
		}
	}
	return out
}

// lookUpNames asks the providers about the names that select no other
// tool, as a caller without credentials, and reports those that none of
// them serves. It runs in the background, on a context of its own.
func (s *Server) lookUpNames(providers []prefixedProvider, unknown []nameUse, known []string) {
	ctx, cancel := context.WithTimeout(context.Background(), providerLookupTimeout)
	defer cancel()
	var anonymous headerCaller
	var left []nameUse
	for _, u := range unknown {
		found := false
		for _, p := range providers {
			if name, ok := strings.CutPrefix(u.name, p.prefix); ok && name != "" && p.ps.lookup(ctx, anonymous, name) != nil {
				found = true
				break
			}
		}
		if !found {
			left = append(left, u)
		}
	}
	if len(left) == 0 {
		return
	}
	// What the providers list, for the names they may have meant.
	for _, p := range providers {
		for _, t := range p.ps.list(ctx, anonymous, "", s.pageSize) {
			if t != nil {
				known = append(known, p.prefix+t.Name)
			}
		}
	}
	slices.Sort(known)
	s.reportNames(left, slices.Compact(known))
}

// reportVersions logs a warning for each name@version of unknown whose
// tool has no such version, with the versions it has, and the one it
// most likely meant: one that ranks alike ("1" for "1.0"). s.mu is held.
func (s *Server) reportVersions(st *state, unknown []nameUse) {
	for _, u := range unknown {
		name, ver, _ := strings.Cut(u.name, "@")
		has := slices.SortedFunc(maps.Keys(s.versionsOf(st, name)), version.Compare)
		msg := fmt.Sprintf("mcpkit: tool %q has no version %q", name, ver)
		if ver == "" {
			msg = fmt.Sprintf("mcpkit: tool %q is not served unversioned", name)
		}
		args := []any{"name", name, "version", ver, "in", u.in, "versions", has}
		if i := slices.IndexFunc(has, func(v string) bool { return version.Rank(v, ver) == 0 }); i >= 0 {
			msg += fmt.Sprintf(": did you mean %q?", has[i])
			args = append(args, "didYouMean", has[i])
		} else {
			msg += ": it has " + quoteVersions(has)
		}
		s.logger.Warn(msg, args...)
	}
}

// quoteVersions says the versions vs, quoted, "" as "no version".
func quoteVersions(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strconv.Quote(v)
		if v == "" {
			out[i] = "no version"
		}
	}
	return strings.Join(out, ", ")
}

// reportNames logs a warning for each name that selects no tool, with the
// known name it most likely meant.
func (s *Server) reportNames(unknown []nameUse, known []string) {
	for _, u := range unknown {
		msg := fmt.Sprintf("mcpkit: tool name %q selects no tool", u.name)
		args := []any{"name", u.name, "in", u.in}
		if want, ok := spell.Suggest(u.name, known); ok {
			msg += fmt.Sprintf(": did you mean %q?", want)
			args = append(args, "didYouMean", want)
		}
		s.logger.Warn(msg, args...)
	}
}
