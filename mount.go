package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
// name ("docs" and "search" make "docs_search"), and keeps them live: a
// tool added to or removed from child, a change of its middleware or its
// [Visibility], reaches the clients of s as
// notifications/tools/list_changed (those of other replicas of s too,
// when s shares its changes: see [Server.ShareChanges]). The unmount
// function it returns takes child's tools out of s and tells the clients
// again; it may be called more than once.
//
// A mounted tool is what child serves to the caller, renamed: its
// definition, tags, version (a call may pin another of child's versions)
// and annotations are child's, and its [Tool.Origin] is child's tool, so
// that it keeps that tool's identity ([Tool.ID]): a visibility rule,
// [ForTools] selection, rate limit or cache of s keyed on child's tool by
// its own name holds for the mounted name too, on every prefix it is
// mounted under. A rule that names the mounted name ("docs_search")
// concerns that mount alone.
//
// A call of a mounted tool runs the middleware of s (server-wide), then
// child's whole chain: its server-wide middleware, the tool's own, child's
// validation of the arguments and of the structured output (s does not
// validate them again), and the handler; the error table applies once, in
// s. Child's middleware sees the Request as s serves it: Request.Tool is
// the mounted tool. Both servers' visibility applies: a tool that child
// hides from the caller (disabled, or not allowed per request) or that s
// hides is absent from tools/list, and a call to it gets the answer of a
// name never registered.
//
// The mount is a [Provider] of s, so what holds for providers holds here:
// a tool registered in s wins over a mounted one of the same name, a
// catalog transform of s that renames tools leaves mounted ones out, and
// child's list middleware and the tools registered on child's SDK server
// directly are not seen (s's list middleware applies). A mounted name
// longer than 128 characters is not served (s logs it). A change in child
// costs s as much as [Server.ProviderChanged]: nothing is rebuilt, and
// mounted tools are made again as callers come to them, in proportion to
// the page or the call.
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
	s.mu.Lock()
	taken := slices.ContainsFunc(s.providers, func(p Provider) bool {
		other, ok := p.(*mount)
		return ok && other.prefix == m.prefix
	})
	s.mu.Unlock()
	if taken {
		return nil, fmt.Errorf("mcpkit: Mount: a server is already mounted under %q", namespace)
	}
	// child tells m of its changes from before s serves m, so that none is
	// missed in between (one heard too early costs a spare notification).
	child.mu.Lock()
	child.mountedIn = append(slices.Clone(child.mountedIn), m)
	child.mu.Unlock()
	s.mu.Lock()
	s.setProviders(append(slices.Clone(s.providers), m))
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(m.unmount) }, nil
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
	for _, p := range from.state.Load().providers {
		if m, ok := p.(*mount); ok && reaches(m.child, to, seen) {
			return true
		}
	}
	return false
}

// tellMounts tells the servers that s is mounted into that what s serves
// changed, for the callers whose principal is principal ("" for all).
// s.mu is held: the parents' locks are taken inside the child's, never
// the other way round, and Mount refuses cycles, so this cannot deadlock.
func (s *Server) tellMounts(principal string) {
	for _, m := range s.mountedIn {
		m.parent.ProviderChanged(principal)
	}
}

// A mount is the Provider that [Server.Mount] adds to parent: the tools of
// child, each under prefix and its name, as child serves them to the
// caller.
type mount struct {
	parent, child *Server
	prefix        string // the namespace and mountSeparator

	// made keeps the mounted tools by the child's tool they were made of,
	// for the child's state st, so that a Provider returns the same *Tool
	// for the same tool (the parent keeps its chains by that pointer). A
	// state of child's, once replaced, is never made current again: a
	// change of child's replaces made whole. Bounded by maxProvided.
	mu   sync.Mutex
	st   *state
	made map[*Tool]*Tool
}

// unmount takes m's tools out of its parent and stops m hearing of its
// child's changes.
func (m *mount) unmount() {
	mountMu.Lock()
	defer mountMu.Unlock()
	m.parent.RemoveProvider(m)
	c := m.child
	c.mu.Lock()
	c.mountedIn = slices.DeleteFunc(slices.Clone(c.mountedIn), func(x *mount) bool { return x == m })
	c.mu.Unlock()
}

// ListTools returns the page of the child's tools that c sees listed
// whose mounted names come after the name after. Mounted names are the
// child's behind one prefix, so they sort as the child's do, and the
// child's pages are the parent's.
func (m *mount) ListTools(ctx context.Context, c Caller, after string, limit int) ([]*Tool, error) {
	from, ok := m.childAfter(after)
	if !ok {
		return nil, nil
	}
	st := m.child.state.Load()
	page, err := m.child.mountPage(ctx, st, c, from, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*Tool, len(page))
	for i, p := range page {
		out[i] = m.tool(st, p.tool, p.e)
	}
	return out, nil
}

// LookupTool returns the mounted tool that a call of name from c reaches
// in the child, or nil: the version of the child's tool that the call
// pins, or else the highest that c may see.
func (m *mount) LookupTool(ctx context.Context, c Caller, name string) (*Tool, error) {
	cname, ok := strings.CutPrefix(name, m.prefix)
	if !ok || cname == "" {
		return nil, nil
	}
	var call *mcp.CallToolRequest
	if r, ok := c.(*Request); ok {
		call = r.Call
	}
	st := m.child.state.Load()
	e := m.child.reach(ctx, st, c, cname, call)
	if e == nil {
		return nil, nil
	}
	return m.tool(st, e.tool, e), nil
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

// tool returns the mounted tool made of t, the child's tool as listed or
// called in st, served by e's chain.
func (m *mount) tool(st *state, t *Tool, e *entry) *Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.st != st || len(m.made) >= maxProvided {
		m.st, m.made = st, make(map[*Tool]*Tool)
	}
	if d := m.made[t]; d != nil {
		return d
	}
	d := t.clone()
	d.Name = m.prefix + t.Name
	d.Origin = t
	d.Handler = e.handler
	// The child's chain holds the tool's own middleware and validates
	// with the child's mode: the parent adds neither again.
	d.Middleware = nil
	d.Validation = NoValidation
	m.made[t] = d
	return d
}

// mounted is a tool of a mounted server as listed, with the entry that
// serves it.
type mounted struct {
	tool *Tool
	e    *entry
}

// mountPage returns, sorted by name, the tools of s that c sees listed in
// st whose names come after the name after, at most limit of them when
// limit is positive: the registered tools as tools/list shows them, and
// the providers' tools whose names no registered tool has (a call of such
// a name goes to the registered tool, see routeCall).
func (s *Server) mountPage(ctx context.Context, st *state, c Caller, after string, limit int) ([]mounted, error) {
	var out []mounted
	for _, n := range st.listed.after(after) {
		if limit > 0 && len(out) == limit {
			break
		}
		if t, e := st.listedAs(ctx, n, c); t != nil {
			out = append(out, mounted{t, e})
		}
	}
	if len(st.providers) == 0 {
		return out, nil
	}
	provided, _, err := s.providedPage(ctx, st, c, after, max(limit, 0))
	if err != nil {
		return nil, err
	}
	for _, t := range provided {
		if _, registered := st.byName.get(t.Name); registered {
			continue
		}
		if e := s.lookupProvided(ctx, st, c, t.Name, &Request{}); e != nil {
			out = append(out, mounted{e.tool, e})
		}
	}
	slices.SortStableFunc(out, func(a, b mounted) int { return strings.Compare(a.tool.Name, b.tool.Name) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// listedAs returns the definition of n that c is listed (as state.served
// makes it) with the entry that serves it, or nil when c is listed none.
func (st *state) listedAs(ctx context.Context, n *toolName, c Caller) (*Tool, *entry) {
	for i, e := range n.versions {
		if st.allowed != nil && !st.allowed(ctx, e.tool, c) {
			continue
		}
		if e.tool.Unlisted {
			return nil, nil
		}
		if st.allowed != nil && e.listed != nil {
			return st.seenBy(ctx, n, i, c), e
		}
		return e.tool, e
	}
	return nil, nil
}

// reach returns the entry that a call of name from c reaches in st, as s
// would serve it (see routeCall and sdkHandler), or nil: the version that
// call pins, or else the highest that c may see, of a registered tool or,
// when no tool of that name is registered, of a provider's.
func (s *Server) reach(ctx context.Context, st *state, c Caller, name string, call *mcp.CallToolRequest) *entry {
	n, registered := st.byName.get(name)
	if !registered {
		if len(st.providers) == 0 {
			return nil
		}
		return s.lookupProvided(ctx, st, c, name, &Request{Call: call})
	}
	pin, pinned := pinnedVersion(call)
	for _, e := range n.versions {
		if pinned && e.tool.Version != pin {
			continue
		}
		if st.allowed != nil && !st.allowed(ctx, e.tool, c) {
			if pinned {
				return nil
			}
			continue
		}
		return e
	}
	return nil
}
