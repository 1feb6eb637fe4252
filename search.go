package mcpkit

import (
	"context"
)

// SearchProvided returns the tools of the server's providers (see
// [Provider]) and mounted servers that a search for query on c's behalf
// may find: each as a call from c by its name would reach it, transformed,
// enabled and allowed for c, with none of a name under which c sees a
// registered tool (a call of that name goes to the registered tool). It is for code that searches the served
// tools for a caller, as [Server.Callable] is for the registered ones, and
// ranks what both return ([transform.Discovery], say).
//
// A provider that implements [ToolSearcher] is asked for its best limit
// tools for query. Another, and a mounted server, is asked for the first
// scan tools it lists for c, whatever the query, when scan is positive,
// and skipped otherwise: a search then costs a listing of up to scan tools
// from it. With more than one of them, each tool found is looked up again
// by its name, since a call of that name reaches the first one's tool of
// that name.
//
// A provider that fails is left out of the answer, and its error logged:
// the others' tools are still found.
//
// [transform.Discovery]: https://pkg.go.dev/github.com/mcpkit/mcpkit/transform#Discovery
func (s *Server) SearchProvided(ctx context.Context, c Caller, query string, limit, scan int) []*Tool {
	st := s.state.Load()
	if len(st.sources) == 0 || limit <= 0 {
		return nil
	}
	var out []*Tool
	seen := map[string]bool{}
	for _, src := range st.sources {
		for _, it := range s.search(ctx, st, src, c, query, limit, scan) {
			if seen[it.name] || len(it.group) == 0 || st.registeredSeen(ctx, c, shelfTools, it.name) {
				continue
			}
			e := it.group[0]
			if len(st.sources) > 1 {
				// A call of the name reaches the first source that serves
				// it to c: the route says which.
				if e = s.reach(ctx, st, c, KindTool, it.name, pin{}); e == nil {
					continue
				}
			}
			seen[it.name] = true
			out = append(out, e.tool)
		}
	}
	return out
}

// search returns what src finds for query on c's behalf, each name with
// the versions c sees: a [ToolSearcher]'s best limit tools, or the first
// scan names src lists for c when scan is positive. A provider that fails
// finds nothing, and is logged.
func (s *Server) search(ctx context.Context, st *state, src source, c Caller, query string, limit, scan int) []listItem {
	ps, ok := src.(*providerSource)
	if !ok || !isSearcher(ps.p) {
		if scan <= 0 {
			return nil
		}
		return src.page(ctx, st, c, shelfTools, "", scan).items
	}
	var items []listItem
	for _, t := range ps.searchTools(ctx, c, query, limit) {
		if t == nil {
			continue
		}
		if e := s.provide(st, t, nil); e != nil && st.sees(ctx, c, e) {
			items = append(items, listItem{name: t.Name, group: []*entry{e}})
		}
	}
	return items
}

func isSearcher(p Provider) bool {
	_, ok := p.(ToolSearcher)
	return ok
}

// searchTools asks a ToolSearcher, as lookup asks for a tool.
func (ps *providerSource) searchTools(ctx context.Context, c Caller, query string, limit int) (ts []*Tool) {
	defer ps.s.recoverProvider("SearchTools", nil)
	ts, err := ps.p.(ToolSearcher).SearchTools(ctx, c, query, limit)
	if err != nil {
		ps.s.logger.Warn("mcpkit: a provider failed to search its tools", "error", err)
		return nil
	}
	return ts[:min(len(ts), limit)]
}
