package mcpkit

import (
	"context"
)

// SearchProvided returns the tools of the server's providers (see
// [Provider]) that a search for query on c's behalf may find: each as a
// call from c by its name would reach it, transformed, enabled and allowed
// for c, with none of a name some registered tool has (a call of that name
// goes to the registered tool). It is for code that searches the served
// tools for a caller, as [Server.Callable] is for the registered ones, and
// ranks what both return ([transform.Discovery], say).
//
// A provider that implements [ToolSearcher] is asked for its best limit
// tools for query. Another is asked for the first scan tools it lists for
// c, whatever the query, when scan is positive, and skipped otherwise: a
// search then costs a listing of up to scan tools from it. With more than
// one provider, each tool found is looked up again by its name, since a
// call of that name reaches the first provider's tool of that name.
//
// A provider that fails is left out of the answer, and its error logged:
// the others' tools are still found.
//
// [transform.Discovery]: https://pkg.go.dev/github.com/mcpkit/mcpkit/transform#Discovery
func (s *Server) SearchProvided(ctx context.Context, c Caller, query string, limit, scan int) []*Tool {
	st := s.state.Load()
	if len(st.providers) == 0 || limit <= 0 {
		return nil
	}
	var out []*Tool
	seen := map[string]bool{}
	for _, p := range st.providers {
		var hits []*Tool
		var err error
		if ts, ok := p.(ToolSearcher); ok {
			hits, err = ts.SearchTools(ctx, c, query, limit)
			hits = hits[:min(len(hits), limit)]
		} else if scan > 0 {
			hits, err = p.ListTools(ctx, c, "", scan)
			hits = hits[:min(len(hits), scan)]
		}
		if err != nil {
			s.logger.Warn("mcpkit: a provider failed to search its tools", "error", err)
			continue
		}
		for _, t := range hits {
			if t == nil || seen[t.Name] {
				continue
			}
			if _, registered := st.byName.get(t.Name); registered {
				continue
			}
			e := s.servedProvided(ctx, st, c, t)
			if e == nil {
				continue
			}
			if len(st.providers) > 1 {
				if e = s.lookupProvided(ctx, st, c, t.Name, &Request{}); e == nil {
					continue
				}
			}
			seen[t.Name] = true
			out = append(out, e.tool)
		}
	}
	return out
}

// ResolveProvided is [Server.Resolve] for the tools of the server's
// providers: it returns the provided tool that a call to name from c
// reaches, and the Handler of its whole chain, or false when a registered
// tool has that name (a call of it goes to that tool, whether c may see
// it or not) or no provider gives c a tool of that name that c may call.
// It costs a [Provider.LookupTool] per provider until one has the tool.
func (s *Server) ResolveProvided(ctx context.Context, c Caller, name string) (*Tool, Handler, bool) {
	st := s.state.Load()
	if len(st.providers) == 0 {
		return nil, nil, false
	}
	if _, registered := st.byName.get(name); registered {
		return nil, nil, false
	}
	e := s.lookupProvided(ctx, st, c, name, &Request{})
	if e == nil {
		return nil, nil, false
	}
	return e.tool, e.handler, true
}
