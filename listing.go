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

// intercept is the SDK server's receiving middleware: it answers tools/list
// from the registry and sees each tools/call first (see routeCall); every
// other method goes to the SDK untouched.
func (s *Server) intercept(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ListToolsRequest:
			if method == "tools/list" {
				return s.listTools(ctx, r, next)
			}
		case *mcp.CallToolRequest:
			if method == "tools/call" {
				return s.routeCall(ctx, r, next)
			}
		}
		return next(ctx, method, req)
	}
}

// listTools answers one tools/list: the mcpkit tools through the list
// middleware, merged with tools registered on the SDK server directly,
// sorted by name and cut into pages.
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
	switch {
	case st.lister != nil:
		ours, err = s.listPage(ctx, st.lister, lreq)
	case len(st.providers) > 0:
		ours, err = s.basePage(ctx, st, lreq)
	default:
		// Without list middleware, only the page is looked at.
		ours = st.visible(ctx, lreq, after, lreq.Limit)
	}
	if err != nil {
		return nil, err
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
	if st.allowed != nil || len(st.providers) > 0 {
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
	if len(foreign) > 0 || !slices.IsSortedFunc(all, byName) {
		// Listers return sorted tools; only a merge (or a list middleware
		// that broke the contract) needs the sort.
		all = append(all, foreign...)
		slices.SortStableFunc(all, byName)
		all = slices.CompactFunc(all, func(a, b *mcp.Tool) bool { return a.Name == b.Name })
	}

	start, _ := slices.BinarySearchFunc(all, after, func(t *mcp.Tool, name string) int { return strings.Compare(t.Name, name) })
	if after != "" && start < len(all) && all[start].Name == after {
		start++
	}
	page := all[start:]
	res := &mcp.ListToolsResult{Cacheable: cacheable, Tools: page}
	if len(page) > s.pageSize {
		res.Tools = page[:s.pageSize]
		res.NextCursor = encodeCursor(page[s.pageSize-1].Name)
	}
	return res, nil
}

// basePage is the server's own Lister: the page req describes of the
// registered tools merged with the providers' (a registered tool wins over
// a provided one of the same name), reporting in req how far it got.
func (s *Server) basePage(ctx context.Context, st *state, req *ListRequest) ([]*Tool, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = -1
	}
	out, more := st.page(ctx, req, req.After, limit)
	if len(st.providers) > 0 {
		provided, pmore, err := s.providedPage(ctx, st, req, req.After, max(limit, 0))
		if err != nil {
			return nil, err
		}
		out = append(slices.Clip(out), provided...)
		slices.SortStableFunc(out, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
		out = slices.CompactFunc(out, func(a, b *Tool) bool { return a.Name == b.Name })
		more = more || pmore
		if limit > 0 && len(out) > limit {
			out, more = out[:limit], true
		}
	}
	if req.page != nil {
		req.page.more = more
		if len(out) > 0 {
			req.page.last = out[len(out)-1].Name
		}
	}
	return out, nil
}

// listPage asks l for the page req describes. When list middleware dropped
// tools and the page came back short while the server's own Lister had more
// to give, it asks again for the tools after the last one given, until the
// page is full or there are no more.
func (s *Server) listPage(ctx context.Context, l Lister, req *ListRequest) ([]*Tool, error) {
	out, err := l.ServeList(ctx, req)
	for err == nil && len(out) < req.Limit && req.page.more {
		next := *req
		next.After, next.page = req.page.last, &pageState{}
		var more []*Tool
		more, err = l.ServeList(ctx, &next)
		out = append(slices.Clip(out), more...) // out may be a Lister's own
		req = &next
	}
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
			// The scratch tool of forceListChanged lives only for an instant;
			// the dispatch tool serves provided tools.
			if !s.registered(t.Name) && t.Name != s.scratch && t.Name != s.dispatch {
				foreign = append(foreign, t)
			}
		}
		if lres.NextCursor == "" || lres.NextCursor == cursor {
			return foreign, cacheable, nil
		}
		cursor = lres.NextCursor
	}
}

// registered reports whether name is one of s's tools in the latest state
// (also when hidden from the caller or unlisted); a tools/list racing with
// Add or Remove may see a state where the SDK and the registry briefly
// disagree, and must not list such a tool as foreign.
func (s *Server) registered(name string) bool {
	_, ok := s.state.Load().byName.get(name)
	return ok
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

// forObjectClients is the package function of that name, cached for the
// definitions of the served tools (a list middleware that makes a new copy
// on every request gets no cache).
// wireDef returns t's definition as tools/list sends it: its entry's, with
// the schemas marshalled once, when t is the entry's tool; t's own
// otherwise (a definition made per caller, a list middleware's copy).
func (st *state) wireDef(t *Tool) *mcp.Tool {
	if n, _ := st.byName.get(t.Name); n != nil {
		for _, e := range n.versions {
			if e.tool == t {
				return e.wireDef()
			}
		}
	}
	return &t.Tool
}

func (st *state) forObjectClients(t *Tool) *mcp.Tool {
	if n, _ := st.byName.get(t.Name); n != nil {
		for _, e := range n.versions {
			if e.tool == t {
				return e.objectDef()
			}
		}
	}
	return forObjectClients(&t.Tool)
}
