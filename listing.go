package mcpkit

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listTools answers one tools/list: the page of what the caller is listed
// (see Server.page), through the list middleware, merged with the tools
// registered on the SDK server directly.
func (s *Server) listTools(ctx context.Context, req *mcp.ListToolsRequest, next mcp.MethodHandler) (mcp.Result, error) {
	var cursor string
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	after, err := decodeCursor(cursor)
	if err != nil {
		return nil, err
	}

	st := s.state.Load()
	lreq := &ListRequest{Call: req, After: after, Limit: s.pageSize + 1, page: &pageState{}}
	var ours []*Tool
	if st.lister != nil {
		ours, err = s.listPage(ctx, st, lreq)
		if err != nil {
			return nil, err
		}
	} else {
		ours = s.basePage(ctx, st, lreq)
	}
	var (
		foreign   []*mcp.Tool
		cacheable mcp.Cacheable
	)
	if s.foreign.Load() {
		if foreign, cacheable, err = s.foreignTools(ctx, req, next); err != nil {
			return nil, err
		}
	} else {
		if s.setCacheable != nil {
			s.setCacheable(ctx, req, &cacheable)
		}
		cacheable.CacheScope = cmp.Or(cacheable.CacheScope, "public")
	}
	if !st.uniform(KindTool) {
		// The list depends on who asks: no shared cache may keep it.
		cacheable.CacheScope = "private"
	}

	objects := wantsObjects(req.ProtocolVersion())
	all := make([]*mcp.Tool, 0, len(ours)+len(foreign))
	for _, t := range ours {
		if objects {
			all = append(all, st.forObjectClients(t))
			continue
		}
		all = append(all, st.wireDef(t))
	}
	byName := func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) }
	more, last := lreq.page.more, lreq.page.last
	if len(foreign) > 0 || !slices.IsSortedFunc(all, byName) {
		// Listers return sorted tools; only a merge (or a list middleware
		// that broke the contract) needs the sort.
		for _, t := range foreign {
			if t.Name > after && (!more || t.Name <= last) {
				all = append(all, t)
			}
		}
		slices.SortStableFunc(all, byName)
		all = slices.CompactFunc(all, func(a, b *mcp.Tool) bool { return a.Name == b.Name })
	}
	res := &mcp.ListToolsResult{Cacheable: cacheable, Tools: all}
	switch {
	case len(all) > s.pageSize:
		res.Tools = all[:s.pageSize]
		res.NextCursor = encodeCursor(all[s.pageSize-1].Name)
	case more:
		// A source stopped before a full page, or list middleware left
		// tools out: the next page starts where the server's own page
		// stopped looking.
		res.NextCursor = encodeCursor(last)
	}
	return res, nil
}

// basePage is the server's own Lister: the page req describes (see
// Server.page), reporting in req how far it got.
func (s *Server) basePage(ctx context.Context, st *state, req *ListRequest) []*Tool {
	pg := s.page(ctx, st, req, KindTool, req.After, req.Limit, false)
	if req.page != nil {
		req.page.more, req.page.last = pg.more, pg.last
	}
	return pg.tools()
}

// listPage asks st's list middleware for the page req describes. When
// they dropped tools and the page came back short while the server's own
// Lister had more to give, it asks again for the tools after the last one
// looked at, until the page is full or there are no more; with sources,
// which are asked for one page per tools/list, it does not ask again.
func (s *Server) listPage(ctx context.Context, st *state, req *ListRequest) ([]*Tool, error) {
	out, err := st.lister.ServeList(ctx, req)
	first := req
	for err == nil && len(out) < req.Limit && req.page.more && len(st.sources) == 0 {
		next := *req
		next.After, next.page = req.page.last, &pageState{}
		var more []*Tool
		more, err = st.lister.ServeList(ctx, &next)
		out = append(slices.Clip(out), more...) // out may be a Lister's own
		req = &next
	}
	*first.page = *req.page
	return out, err
}

// foreignTools returns the tools registered on the SDK server by other code
// than s, reading every page of the SDK's own list, and the cache hints the
// SDK computed for the first page.
func (s *Server) foreignTools(ctx context.Context, req *mcp.ListToolsRequest, next mcp.MethodHandler) ([]*mcp.Tool, mcp.Cacheable, error) {
	var (
		foreign   []*mcp.Tool
		cacheable mcp.Cacheable
		cursor    string
	)
	for page := 0; ; page++ {
		r := &mcp.ListToolsRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.ListToolsParams{Cursor: cursor}}
		if req.Params != nil {
			r.Params.Meta = req.Params.Meta
		}
		res, err := next(ctx, "tools/list", r)
		if err != nil {
			return nil, cacheable, err
		}
		lres, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return nil, cacheable, fmt.Errorf("mcpkit: SDK answered tools/list with %T", res)
		}
		if page == 0 {
			cacheable = lres.Cacheable
		}
		for _, t := range lres.Tools {
			// The dispatch tool is mcpkit's own.
			if _, ours := s.state.Load().byName.Get(t.Name); !ours && t.Name != s.dispatch {
				foreign = append(foreign, t)
			}
		}
		if lres.NextCursor == "" || lres.NextCursor == cursor {
			return foreign, cacheable, nil
		}
		cursor = lres.NextCursor
	}
}

const cursorPrefix = "mcpkit:"

func encodeCursor(after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + after))
}

func decodeCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	after, ok := strings.CutPrefix(string(b), cursorPrefix)
	if err != nil || !ok {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
	}
	return after, nil
}

// wireDef returns t's definition as tools/list sends it: its entry's, with
// the schemas marshalled once, when t is the entry's tool; t's own
// otherwise (a definition made per caller, a list middleware's copy).
func (st *state) wireDef(t *Tool) *mcp.Tool {
	if n, _ := st.byName.Get(t.Name); n != nil {
		for _, e := range n.versions {
			if e.tool == t {
				return e.wireDef()
			}
		}
	}
	return &t.Tool
}

// forObjectClients is the package function of that name, cached for the
// definitions of the served tools (a list middleware that makes a new copy
// on every request gets no cache).
func (st *state) forObjectClients(t *Tool) *mcp.Tool {
	if n, _ := st.byName.Get(t.Name); n != nil {
		for _, e := range n.versions {
			if e.tool == t {
				return e.objectDef()
			}
		}
	}
	return forObjectClients(&t.Tool)
}
