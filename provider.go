package mcpkit

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
// wins over a provided one.
//
// Return the same *Tool for the same tool, from one call to the next: the
// Server keeps the chain and the compiled schemas of a tool by its pointer
// (a bounded number of them), so a tool seen again costs a map lookup; a
// new *Tool each time costs building its chain on each call. Compiled
// schemas are shared by content whatever the pointers. A Provider must be
// safe for concurrent use.
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
// words a caller typed), best first, at most limit of them. It need not be
// exact: what it returns is scored again, with the words of each tool,
// against the server's other tools; a tool it leaves out is not found.
type ToolSearcher interface {
	SearchTools(ctx context.Context, c Caller, query string, limit int) ([]*Tool, error)
}

// AddProvider makes the tools of p callable and listed, alongside the
// registered tools and those of other providers, merged by name. Open
// sessions receive notifications/tools/list_changed. AddProvider panics if
// p is nil.
func (s *Server) AddProvider(p Provider) {
	if p == nil {
		panic("mcpkit: AddProvider: nil provider")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.providers) == 0 {
		s.sdk.AddTool(&mcp.Tool{Name: s.dispatch, InputSchema: sdkDefinition(mcp.Tool{}).InputSchema}, s.serveProvided)
	}
	s.providers = append(slices.Clone(s.providers), p)
	s.republish()
	s.tellAll()
	s.forceListChanged()
	s.shareChange()
}

// ProviderChanged tells the server that what its providers list changed,
// for the callers whose [Principal] is principal, or for everyone when
// principal is "": their listening clients receive
// notifications/tools/list_changed, and the other replicas' clients hear
// of it too, all of them, when the server shares its changes (see
// [Server.ShareChanges]; an event says only that something changed). It
// also drops the chains kept for provided tools, so that a provider that
// returns a changed tool under the same pointer is served anew.
func (s *Server) ProviderChanged(principal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := *s.state.Load()
	next.provided, next.lister = newProvidedCache(), nil
	s.finish(&next)
	s.state.Store(&next)
	s.gen.Add(1)
	s.tellMounts(principal)
	if principal == "" {
		s.tellAll()
	} else {
		for _, l := range s.listeners {
			if principalOf(l.caller) == principal {
				l.pending = true
			}
		}
	}
	s.forceListChanged()
	s.shareChange()
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
	i := slices.IndexFunc(s.providers, func(q Provider) bool {
		return reflect.TypeOf(q) == reflect.TypeOf(p) && q == p
	})
	if i < 0 {
		return false
	}
	s.setProviders(slices.Delete(slices.Clone(s.providers), i, i+1))
	return true
}

// setProviders makes ps the server's providers, in a new state that
// shares the registered tools with the current one, and tells the
// listeners, the mounts of s and the other replicas. s.mu is held.
func (s *Server) setProviders(ps []Provider) {
	if len(s.providers) == 0 && len(ps) > 0 {
		s.sdk.AddTool(&mcp.Tool{Name: s.dispatch, InputSchema: sdkDefinition(mcp.Tool{}).InputSchema}, s.serveProvided)
	}
	// The dispatch tool stays registered with the SDK when the last
	// provider goes: a call routed to it just before would otherwise get
	// the SDK's answer for an unknown tool, naming it. Without providers
	// no call is routed there, and no list shows it.
	s.providers = ps
	next := *s.state.Load()
	next.provided, next.lister = newProvidedCache(), nil
	s.finish(&next)
	s.state.Store(&next)
	s.gen.Add(1)
	s.tellMounts("")
	s.tellAll()
	s.forceListChanged()
	s.shareChange()
}

// providedCache keeps the entries of provided tools by the provider's
// pointer, for one state: middleware, transforms and visibility are the
// state's. It is bounded: past maxProvided entries it starts again empty.
type providedCache struct {
	mu sync.Mutex
	m  map[*Tool]*provided
}

// provided is what the server made of a tool from a provider: the entry
// serving it, or nil when the transforms left it out, renamed it, or the
// Visibility does not enable it.
type provided struct {
	e   *entry
	err error
}

const maxProvided = 4096

func newProvidedCache() *providedCache { return &providedCache{m: make(map[*Tool]*provided)} }

// provide returns the entry serving t, a tool a provider returned, made
// once per tool and state: t checked, transformed, its schemas compiled and
// its chain built. It is nil, without an error, when t is not served.
func (s *Server) provide(st *state, t *Tool) (*entry, error) {
	c := st.provided
	c.mu.Lock()
	p, ok := c.m[t]
	c.mu.Unlock()
	if ok {
		return p.e, p.err
	}
	p = &provided{}
	p.e, p.err = s.makeProvided(st, t)
	c.mu.Lock()
	if len(c.m) >= maxProvided {
		c.m = make(map[*Tool]*provided)
	}
	c.m[t] = p
	c.mu.Unlock()
	return p.e, p.err
}

func (s *Server) makeProvided(st *state, t *Tool) (*entry, error) {
	if t == nil {
		return nil, fmt.Errorf("mcpkit: a provider returned a nil tool")
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	d := t
	for i, tr := range st.transforms {
		next, err := tr(d)
		if err != nil {
			return nil, fmt.Errorf("mcpkit: transform %d of provided tool %s: %w", i, toolID(t), err)
		}
		if next == nil || next.Name != t.Name {
			return nil, nil
		}
		d = next
	}
	if d != t {
		if err := d.validate(); err != nil {
			return nil, fmt.Errorf("mcpkit: provided tool %s as transformed: %w", toolID(t), err)
		}
		if d.Origin != t {
			d = d.clone()
			d.Origin = t
		}
	}
	if st.visibility != nil && !st.visibility.Enabled(d) {
		return nil, nil
	}
	c, err := compileChecker(d, s.validation, &s.validators)
	if err != nil {
		return nil, err
	}
	h, layers := buildChain(d, st.use, c)
	return &entry{tool: d, derived: d, chain: &chain{handler: h, layers: layers}, handler: h, layers: layers}, nil
}

// providedPage returns, sorted by name, the tools of the providers that c
// sees listed after the name after, at most limit of them when limit is
// positive, and whether more may follow.
func (s *Server) providedPage(ctx context.Context, st *state, c Caller, after string, limit int) ([]*Tool, bool, error) {
	var out []*Tool
	more := false
	for _, p := range st.providers {
		from := after
		for {
			ts, err := p.ListTools(ctx, c, from, limit)
			if err != nil {
				return nil, false, err
			}
			got := 0
			for _, t := range ts {
				if t == nil {
					continue
				}
				from = t.Name
				e, err := s.provide(st, t)
				if err != nil {
					s.logger.Warn("mcpkit: a provided tool is not served", "tool", t.Name, "error", err)
					continue
				}
				if e == nil || e.tool.Unlisted || st.allowed != nil && !st.allowed(ctx, e.tool, c) {
					continue
				}
				out = append(out, e.tool)
				got++
			}
			full := limit > 0 && len(ts) >= limit
			if !full || got >= limit {
				more = more || full
				break
			}
			// Tools were left out, and the provider has more: fill the page.
		}
	}
	// The first provider's tool wins over another's of the same name.
	slices.SortStableFunc(out, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
	out = slices.CompactFunc(out, func(a, b *Tool) bool { return a.Name == b.Name })
	if limit > 0 && len(out) > limit {
		out, more = out[:limit], true
	}
	return out, more, nil
}

// reachesProvided reports whether a provider serves c a tool whose identity
// is id, as [Server.Reaches] asks: the tool the provider gives for id's
// name (under a mount, the mounted name), when no registered tool has that
// name, it has that identity, and c may see it. A provider that serves the
// identity under another name only is not found.
func (s *Server) reachesProvided(ctx context.Context, st *state, c Caller, id ToolID) bool {
	for _, p := range st.providers {
		name := id.Name
		if m, ok := p.(*mount); ok {
			name = m.prefix + id.Name
		}
		if _, registered := st.byName.get(name); registered {
			continue
		}
		t, err := p.LookupTool(ctx, c, name)
		if err != nil || t == nil || t.Name != name || t.ID() != id {
			continue
		}
		if s.servedProvided(ctx, st, c, t) != nil {
			return true
		}
	}
	return false
}

// servedProvided returns the entry serving t, a provided tool, to c: nil
// when the server does not serve it (it fails a check, or a transform
// renamed it; logged) or c may not see it.
func (s *Server) servedProvided(ctx context.Context, st *state, c Caller, t *Tool) *entry {
	e, err := s.provide(st, t)
	if err != nil {
		s.logger.Warn("mcpkit: a provided tool is not served", "tool", t.Name, "error", err)
		return nil
	}
	if e == nil || st.allowed != nil && !st.allowed(ctx, e.tool, c) {
		return nil
	}
	return e
}

// lookupProvided returns the entry of the provided tool called name that a
// call from c reaches, or nil.
func (s *Server) lookupProvided(ctx context.Context, st *state, c Caller, name string, req *Request) *entry {
	for _, p := range st.providers {
		t, err := p.LookupTool(ctx, c, name)
		if err != nil {
			s.logger.Warn("mcpkit: a provider failed to look a tool up", "tool", schema.Clip(name), "error", err)
			continue
		}
		if t == nil || t.Name != name {
			continue
		}
		e := s.servedProvided(ctx, st, c, t)
		if e == nil {
			continue
		}
		if pin, pinned := pinnedVersion(req.Call); pinned && pin != e.tool.Version {
			continue
		}
		return e
	}
	return nil
}

// providedCall is the call of a provided tool, handed to serveProvided
// through the context of the request routeCall passes on to the SDK.
type providedCall struct {
	e    *entry
	name string
}

type providedCallKey struct{}

// serveProvided serves a call of a provided tool. routeCall sends such a
// call to the SDK under the name of this handler, so that the SDK does for
// it what it does for a registered tool's (input_required over a session,
// say), with the tool in ctx.
func (s *Server) serveProvided(ctx context.Context, call *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	pc, ok := ctx.Value(providedCallKey{}).(*providedCall)
	if !ok {
		return nil, NewUnknownToolError(call.Params.Name)
	}
	c := *call
	params := *call.Params
	params.Name = pc.name
	c.Params = &params
	req := &Request{Tool: pc.e.tool, Arguments: params.Arguments, Call: &c}
	if hs := pc.e.paramHeaders(); len(hs) > 0 && c.Extra != nil && c.Extra.Header.Get(protocolVersionHeader) >= statelessVersion {
		if err := checkParamHeaders(c.Extra.Header, params.Arguments, hs); err != nil {
			markHeaderFault(ctx)
			return nil, err
		}
	}
	return s.serve(ctx, pc.e, req)
}
