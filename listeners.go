package mcpkit

import (
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Listeners
//
// The SDK sends notifications/tools/list_changed, a little after each
// change of its tools, to every session of a protocol before 2026-07-28
// and to every 2026-07-28 subscriptions/listen stream that asked for it,
// whoever listens. Callers see different lists (a per-request Visibility,
// providers, mounted servers); a notification of a change that a caller
// cannot see would tell it that tools hidden from it come and go. So s
// notes each listener it sees open, with the request that opens it; commit
// marks the listeners whose list a change concerns (review), and only
// those hear the SDK's notification (filterListChanged).

// toolsListChanged, promptsListChanged and resourcesListChanged are the
// methods of the notifications that listeners hear; the same rules hold
// for each, of its own kind.
const (
	toolsListChanged     = "notifications/tools/list_changed"
	promptsListChanged   = "notifications/prompts/list_changed"
	resourcesListChanged = "notifications/resources/list_changed"
)

// A listener is a client that hears notifications/tools/list_changed: a
// session of a protocol before 2026-07-28, judged by its initialize
// request, or a 2026-07-28 subscriptions/listen stream, judged by that
// request.
type listener struct {
	// ctx holds the values of the request that opened the listener,
	// without its cancellation: a per-request Visibility may read them.
	ctx    context.Context
	caller Caller // that request, as a tools/list from it would be judged

	// Guarded by Server.mu, by kind. digest is what caller sees in the
	// current state (see Server.digest), kept while callers are not all
	// listed the same (see state.uniform); foreign is what it last heard
	// of the tools (prompts) that other code registered on the SDK server
	// (see foreignDigest).
	digest       [numKinds]uint64
	pending      [numKinds]bool // the next notification of the kind goes through
	foreign      [numKinds]uint64
	foreignKnown [numKinds]bool
}

// watchListeners notes the listeners that open, and forgets them when they
// close: a session from its initialize request until it ends, a
// subscriptions/listen stream that asked for the tools' changes until its
// request returns.
func (s *Server) watchListeners(next mcp.MethodHandler) mcp.MethodHandler {
	s.sdkReceive = next
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ServerRequest[*mcp.InitializeParams]:
			res, err := next(ctx, method, req)
			if err == nil && r.Session != nil && r.Params != nil {
				l := s.listen(ctx, r.Session, r.Extra, r.Params.Meta)
				go func() {
					r.Session.Wait()
					s.unlisten(r.Session, l)
				}()
			}
			return res, err
		case *mcp.SubscriptionsListenRequest:
			if r.Session == nil || r.Params == nil || r.Params.Notifications == nil ||
				!r.Params.Notifications.ToolsListChanged && !r.Params.Notifications.PromptsListChanged &&
					!r.Params.Notifications.ResourcesListChanged {
				break
			}
			l := s.listen(ctx, r.Session, r.Extra, r.Params.Meta)
			defer s.unlisten(r.Session, l)
		}
		return next(ctx, method, req)
	}
}

// listen notes a listener on ss, opened by the request with extra and meta
// whose context is ctx, and returns it.
func (s *Server) listen(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra, meta mcp.Meta) *listener {
	l := &listener{
		ctx: context.WithoutCancel(ctx),
		caller: &ListRequest{Call: &mcp.ListToolsRequest{
			Session: ss,
			Extra:   extra,
			Params:  &mcp.ListToolsParams{Meta: meta},
		}},
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state.Load()
	for _, k := range listenedKinds {
		if !st.uniform(k) {
			l.digest[k], _ = s.digest(l.ctx, st, l.caller, k)
		}
	}
	if s.foreign.Load() {
		for _, k := range listenedKinds {
			l.foreign[k], l.foreignKnown[k] = s.foreignDigest(ctx, ss, k)
		}
	}
	s.listeners[ss] = l
	return l
}

// unlisten forgets l, the listener on ss, unless another replaced it.
func (s *Server) unlisten(ss *mcp.ServerSession, l *listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listeners[ss] == l {
		delete(s.listeners, ss)
	}
}

// filterListChanged is the SDK sending middleware that drops the
// notifications/tools/list_changed that a listener must not hear (see
// hears).
func (s *Server) filterListChanged(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		k := KindTool
		switch method {
		case toolsListChanged:
		case promptsListChanged:
			k = KindPrompt
		case resourcesListChanged:
			k = KindResource
		default:
			return next(ctx, method, req)
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && !s.hears(ctx, ss, k) {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// listenedKinds are the kinds whose list_changed listeners hear.
var listenedKinds = [...]Kind{KindTool, KindPrompt, KindResource}

// hears reports whether the SDK's notification that the tools (the
// prompts, for k) changed must reach ss: when a change marked ss's
// listener since it last heard one, or when those that other code
// registered on the SDK server changed since then (they are everyone's).
// A session with no listener is one that does not listen (a request of
// protocol 2026-07-28 other than subscriptions/listen), or one that does
// not yet (a listen stream before its acknowledgement, a session before
// it is initialized): it hears nothing. A server Wrap made may have
// sessions s did not see open, and cannot judge: they hear every change.
func (s *Server) hears(ctx context.Context, ss *mcp.ServerSession, k Kind) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.listeners[ss]
	if l == nil {
		return s.wrapped
	}
	hear := l.pending[k]
	l.pending[k] = false
	if s.foreign.Load() {
		d, ok := s.foreignDigest(ctx, ss, k)
		hear = hear || !ok || !l.foreignKnown[k] || d != l.foreign[k]
		l.foreign[k], l.foreignKnown[k] = d, ok
	}
	return hear
}

// foreignDigest returns a digest of the tools (the prompts, the resources
// and templates, for k) that code other than s registered on the SDK
// server (see [Server.MCPServer]), read from the SDK's own list, and
// whether it could read them. The SDK only says that its list changed,
// not who changed it: this tells the changes of those, which are
// everyone's, from s's own. s.mu is held.
func (s *Server) foreignDigest(ctx context.Context, ss *mcp.ServerSession, k Kind) (uint64, bool) {
	st := s.state.Load()
	switch k {
	case KindPrompt:
		return digestForeign(ctx, s, st, promptList{&mcp.ListPromptsRequest{Session: ss}})
	case KindResource:
		d, ok := digestForeign(ctx, s, st, resourceList{&mcp.ListResourcesRequest{Session: ss}})
		dt, okt := digestForeign(ctx, s, st, templateList{&mcp.ListResourceTemplatesRequest{Session: ss}})
		return d ^ dt, ok && okt
	}
	return digestForeign(ctx, s, st, toolList{&mcp.ListToolsRequest{Session: ss}})
}

// digestForeign is foreignDigest for the list l.
func digestForeign[T comparable, L kindList[T]](ctx context.Context, s *Server, st *state, l L) (uint64, bool) {
	items, _, err := readForeign[T](ctx, s, st, l, s.sdkReceive)
	if err != nil {
		return 0, false
	}
	var d uint64
	for _, it := range items {
		d ^= maphash.Comparable(s.seed, it)
	}
	return d, true
}

// review marks the listeners that must hear of the change c from old to
// st, which changed the names of kind k given (sorted), and reports
// whether it marked any. s.mu is held.
//
// A listener hears when what its caller is listed changed: the names, and
// the definitions (the versions it may see, which the listed one names in
// its _meta). For a change of some names, each listener is asked about
// those names, in both states: the work is in proportion to the
// listeners and the names. For a change that may concern any name (the
// Visibility asked again, a source added or removed), each listener's
// digest of its whole list is made anew and compared with the one it
// kept (old's Visibility may already answer as st's does: a rule changed
// in place): the work is in proportion to the listeners and the registry.
// A Provider is never asked while the server's lock is held: a name a
// Provider may decide for a caller counts as changed when the registry's
// answer about it changed for that caller; when the Visibility's answers
// about it may have changed (c.reask), the Providers are asked afterwards,
// on their own (see askProviders); and a change of the Provider's own is
// told as ProviderChanged says. A change that may concern any name tells
// every listener when a Provider serves tools. Mounted servers are asked
// like the registry, from the child's states of old and st. A name of a
// prompt or resource that a Provider may decide counts as changed; they
// are not told by list middleware or replicas.
func (s *Server) review(old, st *state, c change, k Kind, names []string) bool {
	if len(s.listeners) == 0 {
		return false
	}
	tools := k == KindTool
	switch {
	case c.everyone && tools:
		return s.tellAll(k)
	case c.principal != nil && (tools || !st.uniform(k) || !old.uniform(k)):
		told := false
		for _, l := range s.listeners {
			if *c.principal == "" || principalOf(l.caller) == *c.principal {
				l.pending[k], told = true, true
			}
		}
		return told
	case c.remote:
		if !tools {
			return false
		}
		// Another replica's change: one that caught up serves what the
		// fleet serves, and its listeners are judged as for a change of
		// every name; one that could not catch up cannot judge.
		if c.caughtUp && !st.uniform(k) {
			if told, ok := s.reviewAll(st, st, k); ok {
				return told
			}
		}
		return s.tellAll(k)
	case c.whole || old.uniform(k) != st.uniform(k):
		// Listeners keep a digest only while callers are not all listed
		// the same: one that begins to be kept is made whole.
		if told, ok := s.reviewAll(old, st, k); ok {
			return told
		}
		return s.tellAll(k)
	}
	if old.uniform(k) && st.uniform(k) {
		// Everyone sees the same list.
		for _, name := range names {
			before, _ := s.view(context.Background(), old, nil, k, name, true)
			after, _ := s.view(context.Background(), st, nil, k, name, true)
			if before != after {
				return s.tellAll(k)
			}
		}
		return false
	}
	told := false
	var ask []asked
	for ss, l := range s.listeners {
		for _, name := range names {
			before, bOpaque := s.view(l.ctx, old, l.caller, k, name, true)
			after, aOpaque := s.view(l.ctx, st, l.caller, k, name, true)
			switch {
			case bOpaque && aOpaque && tools:
				// A Provider may decide the name for the caller in both
				// states: its answer changes only when the Visibility's
				// may have.
				if c.reask {
					ask = append(ask, asked{ss, l, name})
				}
			case before != after || bOpaque || aOpaque:
				l.digest[k] ^= before ^ after
				l.pending[k], told = true, true
			}
		}
	}
	if len(ask) > 0 {
		go s.askProviders(old, st, ask)
	}
	return told
}

// asked is a name a listener's review must ask a Provider about.
type asked struct {
	ss   *mcp.ServerSession
	l    *listener
	name string
}

// providerReviewTimeout bounds what a review waits for the Providers'
// answers about the names a change concerns: past it, the listeners not
// judged yet are told, as when nothing can be judged.
const providerReviewTimeout = 30 * time.Second

// askProviders finishes the review of a change from old to st for the
// names in ask, which a Provider may decide for their listeners' callers:
// it asks the Providers outside the server's lock, on contexts of its own
// that end together at one deadline, so that a Provider that is slow or
// down never holds up a change, nor the listeners longer than the bound;
// then it tells the listeners whose view changed or was not judged in
// time.
func (s *Server) askProviders(old, st *state, ask []asked) {
	deadline := time.Now().Add(providerReviewTimeout)
	var mu sync.Mutex
	judged := make([]bool, len(ask))  // by the deadline
	changed := make([]bool, len(ask)) // and found changed
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, a := range ask {
			ctx, cancel := context.WithDeadline(a.l.ctx, deadline)
			before, _ := s.view(ctx, old, a.l.caller, KindTool, a.name, false)
			after, _ := s.view(ctx, st, a.l.caller, KindTool, a.name, false)
			late := ctx.Err() != nil
			cancel()
			mu.Lock()
			judged[i], changed[i] = !late, before != after
			mu.Unlock()
		}
	}()
	timer := time.NewTimer(time.Until(deadline))
	select {
	case <-done:
		timer.Stop()
	case <-timer.C:
	}
	mu.Lock()
	var tell []asked
	for i, a := range ask {
		if !judged[i] || changed[i] {
			tell = append(tell, a)
		}
	}
	mu.Unlock()
	if len(tell) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	told := false
	for _, a := range tell {
		if s.listeners[a.ss] == a.l {
			a.l.pending[KindTool], told = true, true
		}
	}
	if told {
		s.poke()
	}
}

// reviewAll marks the listeners whose digest of st's names of kind k
// differs from the one they had in old (kept, or, when everyone saw the
// same list in old, old's digest), and reports whether it marked any; ok
// is false when a Provider serves tools in either state, whose tools no
// digest covers. s.mu is held.
func (s *Server) reviewAll(old, st *state, k Kind) (told, ok bool) {
	var oldAll, newAll uint64
	if old.uniform(k) {
		if oldAll, ok = s.digest(context.Background(), old, nil, k); !ok {
			return false, false
		}
	}
	if st.uniform(k) {
		if newAll, ok = s.digest(context.Background(), st, nil, k); !ok {
			return false, false
		}
	}
	for _, l := range s.listeners {
		before, after := l.digest[k], newAll
		if old.uniform(k) {
			before = oldAll
		}
		if !st.uniform(k) {
			if after, ok = s.digest(l.ctx, st, l.caller, k); !ok {
				return false, false
			}
		}
		l.digest[k] = after
		if before != after {
			l.pending[k], told = true, true
		}
	}
	return told, true
}

// uniform reports whether everyone is listed the same names of kind k in
// st: no per-request Visibility (for prompts and resources, none that
// decides them), and, for tools, no source; for prompts and resources, no
// source that serves them per request (a Provider, a mounted server
// whose own are not uniform).
func (st *state) uniform(k Kind) bool {
	if k == KindTool {
		return st.allowed == nil && len(st.sources) == 0
	}
	if st.allowedTarget != nil {
		return false
	}
	for _, src := range st.sources {
		if !src.uniform(k) {
			return false
		}
	}
	return true
}

// tellAll marks every listener for kind k: the next notification of k
// reaches them all. It reports whether there was one. s.mu is held.
func (s *Server) tellAll(k Kind) bool {
	for _, l := range s.listeners {
		l.pending[k] = true
	}
	return len(s.listeners) > 0
}

// view returns a digest of what tools/list (prompts/list, for k) shows c
// under name in st: 0
// when c is listed nothing under it, else a digest of the versions c sees,
// the first of which is listed, with the others in its _meta. A version
// stands for its definition (entry.fingerprint): what c is listed
// under name can change only when this digest does. Digests of distinct
// versions are combined with XOR, so that a listener's digest of a whole
// list can be updated by one name's change. With blind set, no Provider
// is asked: opaque then reports that one may decide the name for c, whose
// tools the digest does not cover.
func (s *Server) view(ctx context.Context, st *state, c Caller, k Kind, name string, blind bool) (d uint64, opaque bool) {
	if k != KindTool {
		// A name of a prompt, a resource's URI or a template's text: one
		// entry each, in its family.
		for _, f := range familiesOf(k) {
			e, blocked := s.targetAt(ctx, st, c, f, name, blind)
			if blocked {
				return 0, true
			}
			if e != nil && !e.unlisted() {
				d ^= e.fingerprint(s.seed)
			}
		}
		return d, false
	}
	var es []*entry
	if _, _, blocked := s.walk(ctx, st, c, k, name, pin{}, &es, blind); blocked {
		return 0, true
	}
	if len(es) == 0 || es[0].unlisted() {
		return 0, false
	}
	for _, e := range es {
		d ^= e.fingerprint(s.seed)
	}
	return d, false
}

// digest returns a digest of the whole list of kind k c sees in st: the
// views of every name, combined with XOR; ok is false when a Provider
// serves tools in st, whose names only a listing would tell.
func (s *Server) digest(ctx context.Context, st *state, c Caller, k Kind) (d uint64, ok bool) {
	if k != KindTool {
		for _, f := range familiesOf(k) {
			keys, ok := targetKeys(st, f)
			if !ok {
				return 0, false
			}
			for _, key := range keys {
				if e, _ := s.targetAt(ctx, st, c, f, key, true); e != nil && !e.unlisted() {
					d ^= e.fingerprint(s.seed)
				}
			}
		}
		return d, true
	}
	names, ok := servedNames(st, "", nil)
	if !ok {
		return 0, false
	}
	for name := range names {
		v, _ := s.view(ctx, st, c, k, name, true)
		d ^= v
	}
	return d, true
}

// targetKeys returns, sorted, each once, the keys of family f that st
// serves without asking a Provider: its registered ones, and those of
// mounted servers under their namespaces. It reports false when a
// Provider may serve targets of f's kind in st or in a mounted server.
func targetKeys(st *state, f family) ([]string, bool) {
	keys := make([]string, 0, st.targets[f].Len())
	for n := range st.targets[f].All() {
		keys = append(keys, n.name)
	}
	for _, src := range st.sources {
		mv, ok := src.(*mountView)
		if !ok {
			if src.serves(f.kind()) {
				return nil, false
			}
			continue
		}
		ck, ok := targetKeys(mv.child, f)
		if !ok {
			return nil, false
		}
		for _, key := range ck {
			if mk, ok := mv.m.mountedKey(f, key); ok {
				keys = append(keys, mk)
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys), true
}

// servedNames adds to names (made when nil) every name st serves under
// prefix without asking a Provider: the registered names, and those of
// mounted servers under their namespaces. It reports false when a Provider
// is among the sources of st or of a mounted server.
func servedNames(st *state, prefix string, names map[string]bool) (map[string]bool, bool) {
	if names == nil {
		names = make(map[string]bool, st.byName.Len())
	}
	for n := range st.byName.All() {
		names[prefix+n.name] = true
	}
	for _, src := range st.sources {
		mv, ok := src.(*mountView)
		if !ok {
			return nil, false
		}
		if _, ok := servedNames(mv.child, prefix+mv.m.prefix, names); !ok {
			return nil, false
		}
	}
	return names, true
}
