package mcpkit

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The one commit.
//
// Every mutation of a Server (Add, Remove, AddPrompts, RemovePrompts,
// Transform, Use, UseList, SetVisibility, Refresh, RefreshTools, the
// providers', a mounted server's change, another replica's) ends in
// commit, with the state it made and a change that says what changed.
// commit is the only writer of the state, the generation and the change
// log, and the only place that reviews the listeners per caller, for each
// kind, has the SDK tell them, tells the servers s is mounted into and
// shares the change with the other replicas (of tools: prompts and
// resources are not shared yet).

// A change is what a mutation changed, for commit.
type change struct {
	// names are the registered names (as served) whose versions or
	// definitions may have changed: those that did are logged for
	// ChangedSince, and every listener is reviewed for them.
	names []string

	// changed, when compared is set, are those of names whose versions
	// changed: the maker of the state compared it with the current one
	// (see update), and commit need not.
	changed  []string
	compared bool

	// reviewed are other names (as served) whose answers may have
	// changed for some callers (the per-request answers of a rule by
	// name, a mounted server's names): every listener is reviewed for
	// them too.
	reviewed []string

	// reask says that the Visibility's answers about the names may have
	// changed: the reviews ask the providers about them.
	reask bool

	// whole says that any name may have changed for anyone (the
	// Visibility was asked again about every tool, a source was added or
	// removed): every listener is reviewed whole.
	whole bool

	// everyone says that every listener must hear of it (list middleware
	// see every list).
	everyone bool

	// principal, when not nil, says that the sources' tools changed for
	// the callers of that principal ("" for everyone), as
	// ProviderChanged says: their listeners hear of it.
	principal *string

	// targets are, by kind, the names of the prompts, the URIs of the
	// resources and the texts of the templates whose definitions as
	// served changed: every listener is reviewed for them.
	targets [numKinds][]string

	// remote says that another replica's tools changed; caughtUp, that
	// OnChange ran and succeeded. No state is made.
	remote, caughtUp bool
}

// commit makes st (nil for none: a remote change) the state that calls and
// lists read, and does what follows c. s.mu is held.
func (s *Server) commit(st *state, c change) {
	old := s.state.Load()
	if st == nil {
		st = old
	} else if c.whole || c.reask || c.principal != nil || len(c.reviewed) > 0 {
		// The entries of provided tools hold what the sources and the
		// Visibility answered when they were made: such a change drops
		// them (st is not published yet).
		st.provided = newProvidedCache()
	}
	// Calls reach the SDK under the name of the dispatch (see call), and
	// the SDK's table does not follow the registry; unless s holds
	// registered names in it (tableNames): a name is then added to it
	// before the state that serves it is in place, and taken out after,
	// so that a call the state routes always finds its name.
	changed := c.changed
	if !c.compared {
		changed = changedNames(old, st, c.names)
	}
	var gone []string
	if s.tableNames {
		for _, name := range changed {
			o, _ := old.byName.Get(name)
			n, _ := st.byName.Get(name)
			switch {
			case o == nil && n != nil:
				s.sdk.AddTool(&mcp.Tool{Name: name, InputSchema: s.tableSchema}, s.serveRouted)
			case o != nil && n == nil:
				gone = append(gone, name)
			}
		}
	}
	s.state.Store(st)
	if len(gone) > 0 {
		s.sdk.RemoveTools(gone...)
	}
	// A rule's name may select nothing any more, or be new.
	s.judgeChange(st, c)
	local := st != old
	if local {
		// The generation moves on once the state is in place, with the
		// names it changed logged for ChangedSince.
		s.changes.record(&s.gen, changed)
	}
	// The listeners are marked before the SDK is told, so that its
	// notification finds them marked.
	reviewed := changed
	if len(c.reviewed) > 0 {
		reviewed = slices.Compact(slices.Sorted(slices.Values(append(slices.Clip(changed), c.reviewed...))))
	}
	told := s.review(old, st, c, KindTool, reviewed)
	if told || len(reviewed) > 0 || c.whole || c.everyone || c.principal != nil {
		// Listeners the server did not see open hear of every change.
		s.poke()
	}
	for _, k := range [...]Kind{KindPrompt, KindResource} {
		told := s.review(old, st, c, k, c.targets[k])
		switch {
		case st.serves(k) && !s.served[k].Load():
			// The SDK declares the kind's capability once it has one of
			// it: the one through which every request of the kind passes
			// (see getPrompt, readResource).
			s.served[k].Store(true)
			s.registerTargetDispatch(k)
		case told || len(c.targets[k]) > 0 || c.whole && st.serves(k):
			s.pokeKind(k)
		}
	}
	if !local {
		return
	}
	for _, m := range s.mountedIn {
		m.parent.mountChanged(m, st, c, reviewed)
	}
	perRequest := old.allowed != nil || st.allowed != nil || len(st.sources) > 0
	if len(changed) > 0 || len(c.reviewed) > 0 && perRequest || c.whole && perRequest || c.everyone || c.principal != nil {
		s.shareChange()
	}
}

// sameVersions reports whether a name's versions are served alike in two
// states: the same definitions, listing the same versions (a change of
// chains alone is not a change of what clients see).
func sameVersions(a, b *toolName) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.EqualFunc(a.versions, b.versions, func(x, y *entry) bool {
		return x.derived == y.derived && slices.Equal(x.listed, y.listed)
	})
}

// mountChanged makes a new state of s, in which the mount m serves child,
// the state its child made with the change c, which changed the child's
// names reviewed. s.mu is not held: a child commits first, then its
// parents, never the other way round, and Mount refuses cycles.
func (s *Server) mountChanged(m *mount, child *state, c change, reviewed []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.state.Load()
	i := slices.IndexFunc(cur.sources, func(src source) bool { mv, ok := src.(*mountView); return ok && mv.m == m })
	if i < 0 {
		return // unmounted meanwhile
	}
	srcs := slices.Clone(cur.sources)
	srcs[i] = &mountView{m: m, child: child}
	next := *cur
	next.sources = srcs
	s.finish(&next)
	pc := change{whole: c.whole, principal: c.principal, reask: true}
	for _, name := range reviewed {
		pc.reviewed = append(pc.reviewed, m.prefix+name)
	}
	for f := range family(numFamilies) {
		k := f.kind()
		for _, key := range c.targets[k] {
			// The child's targets of k under key: a prompt's name, or a
			// resource's URI or a template's text (both families).
			if mk, ok := m.mountedKey(f, key); ok && !slices.Contains(pc.targets[k], mk) {
				pc.targets[k] = append(pc.targets[k], mk)
			}
		}
	}
	s.commit(&next, pc)
}

// refreshed returns a copy of the current state completed anew with the
// server's sources, transforms, middleware, Visibility and list
// middleware. s.mu is held.
func (s *Server) refreshed() *state {
	next := *s.state.Load()
	s.finish(&next)
	return &next
}

// finish completes st with what depends on the server's sources,
// Visibility and list middleware. s.mu is held.
func (s *Server) finish(st *state) {
	v := s.visibility
	if s.frozen != nil {
		// The answers as of the last refresh: a state made by a change of
		// the registry while the rules are being changed answers as the
		// states before it, until the refresh that follows.
		v = s.frozen
	}
	st.transforms, st.use, st.visibility = s.transforms, s.use, v
	st.sources = s.currentSources(st.sources)
	if st.provided == nil {
		st.provided = newProvidedCache()
	}
	st.allowed, st.allowedTarget = nil, nil
	if v != nil && v.PerRequest() {
		st.allowed = v.Allowed
		if tv, ok := v.(TargetVisibility); ok {
			st.allowedTarget = tv.AllowedTarget
		}
	}
	st.lister = nil
	if len(s.listUse) > 0 {
		base := ListerFunc(func(ctx context.Context, req *ListRequest) ([]*Tool, error) {
			return s.basePage(ctx, st, req), nil
		})
		st.lister = ChainList(s.listUse...)(base)
	}
}

// currentSources returns s.sources, each mount with the child's state that
// prev (a state's sources) serves it with, or the child's current state
// for a new mount. s.mu is held.
func (s *Server) currentSources(prev []source) []source {
	out := slices.Clone(s.sources)
	for i, src := range out {
		mv, ok := src.(*mountView)
		if !ok {
			continue
		}
		for _, p := range prev {
			if pv, ok := p.(*mountView); ok && pv.m == mv.m {
				out[i] = pv
				break
			}
		}
	}
	return out
}

// poke has the SDK send notifications/tools/list_changed to the clients
// listening on s (filterListChanged lets it through to those a change
// concerns). The SDK sends it after a change of its tools, and counts
// every AddTool as one: s registers again the tool through which calls
// pass (see call), unchanged. With no session open, the SDK has no one to
// tell, and s spares it the AddTool. s.mu is held.
func (s *Server) poke() {
	if s.anySession() {
		s.registerDispatch()
	}
}

// anySession reports whether the SDK server has a session open that may
// hear of a change. Every session of a server NewServer made opened
// through s's middleware, and one that listens is in s.listeners
// (watchListeners); a server Wrap made asks the SDK, with a yield made
// once (see sessionProbe), since its sessions may be older than s. s.mu
// is held.
func (s *Server) anySession() bool {
	if !s.wrapped {
		return len(s.listeners) > 0
	}
	s.probe.found = false
	s.sdk.Sessions()(s.probeYield)
	return s.probe.found
}

// A sessionProbe notes that a sequence of sessions yielded one.
type sessionProbe struct{ found bool }

func (p *sessionProbe) yield(*mcp.ServerSession) bool {
	p.found = true
	return false
}

// pokeKind is poke for notifications/prompts/list_changed (of k,
// KindPrompt) and notifications/resources/list_changed: the SDK sends it
// after a change of its prompts (resources), and s registers again the
// prompt (resource) through which every request of k passes. s.mu is
// held.
func (s *Server) pokeKind(k Kind) {
	if s.anySession() {
		s.registerTargetDispatch(k)
	}
}

// registerTargetDispatch registers with the SDK the prompt through which
// every prompts/get of s's prompts passes (see getPrompt), or, for
// KindResource, the resource through which every resources/read of s's
// resources passes (see readResource).
func (s *Server) registerTargetDispatch(k Kind) {
	switch k {
	case KindPrompt:
		s.sdk.AddPrompt(&mcp.Prompt{Name: s.promptDispatch}, s.servePromptRouted)
	case KindResource:
		s.sdk.AddResource(&mcp.Resource{URI: s.resourceDispatch, Name: s.resourceDispatch}, s.serveResourceRouted)
	}
}

// registerDispatch registers with the SDK the tool through which calls of
// provided tools pass (see call).
func (s *Server) registerDispatch() {
	s.sdk.AddTool(&mcp.Tool{Name: s.dispatch, InputSchema: s.tableSchema}, s.serveRouted)
}
