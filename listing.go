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
	page, err := answerList(ctx, s, toolList{req}, cursor, next)
	if err != nil {
		return nil, err
	}
	return &mcp.ListToolsResult{Cacheable: page.cacheable, Tools: page.items, NextCursor: page.next}, nil
}

// A kindList is one kind's list request, as answerList reads it: T is
// an item as the wire carries it.
type kindList[T any] interface {
	// kind is the kind listed.
	kind() Kind
	// request is the request, for the SDK's cache hints.
	request() mcp.Request
	// key is an item's name (URI, template): lists are ordered by it and
	// cursors point at it.
	key(item T) string
	// ours returns the page of what s itself lists the caller after the
	// key after, at most limit items, and where it stopped (see listPage).
	ours(ctx context.Context, s *Server, st *state, after string, limit int) (items []T, more bool, last string, err error)
	// sdkPage asks next, the SDK, for one page of its own list.
	sdkPage(ctx context.Context, next mcp.MethodHandler, cursor string) (items []T, nextCursor string, c mcp.Cacheable, err error)
	// mine reports whether an item of the SDK's list is s's own: one it
	// serves itself, or the dispatch through which it does.
	mine(s *Server, st *state, item T) bool
}

// A wirePage is one page of a list, as answerList makes it.
type wirePage[T any] struct {
	items     []T
	cacheable mcp.Cacheable
	next      string // the cursor of the next page, or ""
}

// answerList answers one list of l's kind, the one path of every kind's
// list: the page of what the caller is listed, merged with what other
// code registered on the SDK server directly, with the cache hints (a
// list that depends on who asks is private), cut to the page size.
func answerList[T any, L kindList[T]](ctx context.Context, s *Server, l L, cursor string, next mcp.MethodHandler) (wirePage[T], error) {
	var pg wirePage[T]
	after, err := decodeCursor(cursor)
	if err != nil {
		return pg, err
	}
	st := s.state.Load()
	all, more, last, err := l.ours(ctx, s, st, after, s.pageSize+1)
	if err != nil {
		return pg, err
	}
	var foreign []T
	if s.foreign.Load() {
		if foreign, pg.cacheable, err = readForeign[T](ctx, s, st, l, next); err != nil {
			return pg, err
		}
	} else {
		if s.setCacheable != nil {
			s.setCacheable(ctx, l.request(), &pg.cacheable)
		}
		pg.cacheable.CacheScope = cmp.Or(pg.cacheable.CacheScope, "public")
	}
	if !st.uniform(l.kind()) {
		// The list depends on who asks: no shared cache may keep it.
		pg.cacheable.CacheScope = "private"
	}
	byKey := func(a, b T) int { return strings.Compare(l.key(a), l.key(b)) }
	if len(foreign) > 0 || !slices.IsSortedFunc(all, byKey) {
		// Pages are sorted; only a merge (or a list middleware that
		// broke the contract) needs the sort.
		for _, it := range foreign {
			if k := l.key(it); k > after && (!more || k <= last) {
				all = append(all, it)
			}
		}
		slices.SortStableFunc(all, byKey)
		all = slices.CompactFunc(all, func(a, b T) bool { return l.key(a) == l.key(b) })
	}
	pg.items = all
	switch {
	case len(all) > s.pageSize:
		pg.items = all[:s.pageSize]
		pg.next = encodeCursor(l.key(all[s.pageSize-1]))
	case more:
		// A source stopped before a full page, or list middleware left
		// items out: the next page starts where the server's own page
		// stopped looking.
		pg.next = encodeCursor(last)
	}
	return pg, nil
}

// readForeign returns the items of l's kind registered on the SDK server
// by other code than s, reading every page of the SDK's own list, and the
// cache hints the SDK computed for the first page.
func readForeign[T any, L kindList[T]](ctx context.Context, s *Server, st *state, l L, next mcp.MethodHandler) ([]T, mcp.Cacheable, error) {
	var (
		foreign   []T
		cacheable mcp.Cacheable
		cursor    string
	)
	for page := 0; ; page++ {
		items, nextCursor, c, err := l.sdkPage(ctx, next, cursor)
		if err != nil {
			return nil, cacheable, err
		}
		if page == 0 {
			cacheable = c
		}
		for _, it := range items {
			if !l.mine(s, st, it) {
				foreign = append(foreign, it)
			}
		}
		if nextCursor == "" || nextCursor == cursor {
			return foreign, cacheable, nil
		}
		cursor = nextCursor
	}
}

// askSDK asks next, the SDK, the method with params, on the session and
// transport of req, and returns its answer as an R.
func askSDK[R mcp.Result, P sdkParams](ctx context.Context, next mcp.MethodHandler, method string, req *mcp.ServerRequest[P], params P) (R, error) {
	var none R
	res, err := next(ctx, method, &mcp.ServerRequest[P]{Session: req.Session, Extra: req.Extra, Params: params})
	if err != nil {
		return none, err
	}
	r, ok := res.(R)
	if !ok {
		return none, fmt.Errorf("mcpkit: SDK answered %s with %T", method, res)
	}
	return r, nil
}

// toolList is a tools/list as answerList reads it.
type toolList struct{ req *mcp.ListToolsRequest }

func (toolList) kind() Kind             { return KindTool }
func (l toolList) request() mcp.Request { return l.req }
func (toolList) key(t *mcp.Tool) string { return t.Name }
func (toolList) mine(s *Server, st *state, t *mcp.Tool) bool {
	_, ours := st.byName.Get(t.Name)
	return ours || t.Name == s.dispatch
}

// ours is the page through the list middleware, as the client's
// protocol needs the definitions.
func (l toolList) ours(ctx context.Context, s *Server, st *state, after string, limit int) ([]*mcp.Tool, bool, string, error) {
	lreq := &ListRequest{Call: l.req, After: after, Limit: limit, page: &pageState{}}
	var ours []*Tool
	if st.lister != nil {
		var err error
		if ours, err = s.listPage(ctx, st, lreq); err != nil {
			return nil, false, "", err
		}
	} else {
		ours = s.basePage(ctx, st, lreq)
	}
	objects := wantsObjects(l.req.ProtocolVersion())
	out := make([]*mcp.Tool, 0, len(ours))
	for _, t := range ours {
		if objects {
			out = append(out, st.forObjectClients(t))
			continue
		}
		out = append(out, st.wireDef(t))
	}
	return out, lreq.page.more, lreq.page.last, nil
}

func (l toolList) sdkPage(ctx context.Context, next mcp.MethodHandler, cursor string) ([]*mcp.Tool, string, mcp.Cacheable, error) {
	res, err := askSDK[*mcp.ListToolsResult](ctx, next, "tools/list", l.req, &mcp.ListToolsParams{Cursor: cursor, Meta: sdkCall[*mcp.ListToolsParams]{l.req}.Meta()})
	if err != nil {
		return nil, "", mcp.Cacheable{}, err
	}
	return res.Tools, res.NextCursor, res.Cacheable, nil
}

// basePage is the server's own Lister: the page req describes (see
// Server.page), reporting in req how far it got.
func (s *Server) basePage(ctx context.Context, st *state, req *ListRequest) []*Tool {
	pg := s.page(ctx, st, req, shelfTools, req.After, req.Limit, false)
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
