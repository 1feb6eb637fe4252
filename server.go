package mcpkit

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/internal/version"
)

// DuplicatePolicy says what [Server.Add] does with a tool whose name and
// version are already registered.
type DuplicatePolicy int

const (
	// DuplicateError makes Add fail with [ErrDuplicateTool] and change
	// nothing. It is the default: a silent replacement is how a tool ends up
	// served by code nobody meant to run.
	DuplicateError DuplicatePolicy = iota
	// DuplicateReplace replaces the registered tool with the new one.
	DuplicateReplace
	// DuplicateWarn replaces the registered tool and logs a warning.
	DuplicateWarn
	// DuplicateIgnore keeps the registered tool and drops the new one.
	DuplicateIgnore
)

// ServerOptions configures a [Server]. The zero value, and a nil
// *ServerOptions, are the defaults.
type ServerOptions struct {
	// Logger receives the server's own records (recovered panics, replaced
	// tools). Nil means no logging.
	Logger *slog.Logger

	// OnDuplicate is the policy for a tool added under a name and version
	// that are already registered. The default is DuplicateError.
	OnDuplicate DuplicatePolicy

	// PageSize is the largest number of tools in one tools/list answer.
	// Zero means mcp.DefaultPageSize.
	PageSize int

	// SDKOptions configures the SDK server that [NewServer] creates; [Wrap]
	// ignores it. Nil means the SDK's defaults.
	SDKOptions *mcp.ServerOptions
}

// A Server is a registry of mcpkit tools served through an SDK [mcp.Server].
//
// Tools are added and removed at any time, also while sessions are open;
// clients are told with notifications/tools/list_changed. Every tools/call
// runs the server-wide middleware (see [Server.Use]), then the tool's own,
// then the tool's handler, and the outcome is mapped onto the wire by the
// error table in the package documentation. tools/list runs the list
// middleware (see [Server.UseList]).
//
// A Server is safe for concurrent use.
type Server struct {
	sdk      *mcp.Server
	logger   *slog.Logger
	policy   DuplicatePolicy
	pageSize int

	mu       sync.Mutex         // serializes changes to the fields below and to sdk's tools
	versions map[string][]*Tool // every registered version, by name, highest first
	handlers map[*Tool]Handler  // built chains, dropped when the server-wide chain changes
	use      []Middleware
	listUse  []ListMiddleware

	state atomic.Pointer[state] // what calls and lists read, without locking
}

// state is an immutable view of the registry, replaced whole on each change.
type state struct {
	byName map[string]*entry // the served (highest) version of each name
	tools  []*Tool           // the served tools, sorted by name
	lister Lister            // list middleware around the served tools
}

// entry is a served tool with its middleware chain already built.
type entry struct {
	tool    *Tool
	handler Handler
}

// NewServer returns a Server on a new SDK server for impl, configured by
// opts.SDKOptions. Unless those options set it, the server advertises the
// tools capability with listChanged from the start, so clients that connect
// before the first tool is added still learn of later changes.
func NewServer(impl *mcp.Implementation, opts *ServerOptions) *Server {
	var sdkOpts mcp.ServerOptions
	if opts != nil && opts.SDKOptions != nil {
		sdkOpts = *opts.SDKOptions
	}
	caps := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}} // the SDK's own default
	if sdkOpts.Capabilities != nil {
		c := *sdkOpts.Capabilities
		caps = &c
	}
	if caps.Tools == nil {
		caps.Tools = &mcp.ToolCapabilities{ListChanged: true}
	}
	sdkOpts.Capabilities = caps
	return Wrap(mcp.NewServer(impl, &sdkOpts), opts)
}

// Wrap returns a Server that serves its tools through s, a server the caller
// already has (and may keep using for resources, prompts and the rest).
//
// Tools added to s directly, with s.AddTool or mcp.AddTool, keep working and
// are listed alongside the mcpkit tools, but no mcpkit middleware runs for
// them. Wrap each SDK server once: two Servers on one SDK server would each
// answer tools/list.
func Wrap(s *mcp.Server, opts *ServerOptions) *Server {
	if opts == nil {
		opts = &ServerOptions{}
	}
	srv := &Server{
		sdk:      s,
		logger:   opts.Logger,
		policy:   opts.OnDuplicate,
		pageSize: cmp.Or(opts.PageSize, mcp.DefaultPageSize),
		versions: make(map[string][]*Tool),
		handlers: make(map[*Tool]Handler),
	}
	if srv.logger == nil {
		srv.logger = slog.New(slog.DiscardHandler)
	}
	srv.publish()
	s.AddReceivingMiddleware(srv.interceptList)
	return srv
}

// MCPServer returns the SDK server, to run on any SDK transport
// (s.MCPServer().Run(ctx, &mcp.StdioTransport{}), in-memory transports, ...)
// and to register resources and prompts.
func (s *Server) MCPServer() *mcp.Server { return s.sdk }

// Run runs the server over a single transport, like [mcp.Server.Run].
func (s *Server) Run(ctx context.Context, t mcp.Transport) error { return s.sdk.Run(ctx, t) }

// HTTPHandler returns an [http.Handler] serving the server over the
// streamable HTTP transport; opts may be nil.
func (s *Server) HTTPHandler(opts *mcp.StreamableHTTPOptions) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.sdk }, opts)
}

// Add registers tools. Each is validated first (name, handler, schemas, as
// [ValidateToolName] and MCP require); if any is invalid, or is a duplicate
// under [DuplicateError], Add returns an error and registers none of them.
//
// Add copies each Tool. Open sessions receive notifications/tools/list_changed.
func (s *Server) Add(tools ...*Tool) error {
	if len(tools) == 0 {
		return nil
	}
	copies := make([]*Tool, len(tools))
	for i, t := range tools {
		if t == nil {
			return fmt.Errorf("mcpkit: Add: tool %d is nil", i)
		}
		if err := t.validate(); err != nil {
			return err
		}
		if err := checkWithSDK(&t.Tool); err != nil {
			return err
		}
		copies[i] = t.clone()
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[[2]string]bool, len(copies))
	for _, t := range copies {
		key := [2]string{t.Name, t.Version}
		if seen[key] {
			return fmt.Errorf("%w: %s appears twice in one Add", ErrDuplicateTool, toolID(t))
		}
		seen[key] = true
		if s.policy == DuplicateError && s.find(t.Name, t.Version) >= 0 {
			return fmt.Errorf("%w: %s is already registered", ErrDuplicateTool, toolID(t))
		}
	}
	changed := make(map[string]bool)
	for _, t := range copies {
		vs := s.versions[t.Name]
		if i := s.find(t.Name, t.Version); i >= 0 {
			switch s.policy {
			case DuplicateIgnore:
				continue
			case DuplicateWarn:
				s.logger.Warn("mcpkit: tool replaced", "tool", t.Name, "version", t.Version)
			}
			delete(s.handlers, vs[i])
			vs = slices.Delete(vs, i, i+1)
		}
		vs = append(vs, t)
		slices.SortStableFunc(vs, func(a, b *Tool) int { return version.Compare(b.Version, a.Version) })
		s.versions[t.Name] = vs
		changed[t.Name] = true
	}
	s.commit(changed, nil)
	return nil
}

// Remove unregisters every version of the named tools. Names that are not
// registered are ignored. Open sessions receive
// notifications/tools/list_changed; a call already running finishes, and
// later calls get the unknown-tool error.
func (s *Server) Remove(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var removed []string
	for _, name := range names {
		for _, t := range s.versions[name] {
			delete(s.handlers, t)
		}
		if _, ok := s.versions[name]; ok {
			delete(s.versions, name)
			removed = append(removed, name)
		}
	}
	if len(removed) > 0 {
		s.commit(nil, removed)
	}
}

// Use appends middleware to the server-wide chain, which runs around every
// tool's own middleware, for tools added before and after Use. The first
// middleware given to the first Use is the outermost. Use panics if a
// middleware is nil.
//
// Chains are rebuilt once per Use, not per call. Calls already running keep
// the chain they started with.
func (s *Server) Use(mw ...Middleware) {
	for i, m := range mw {
		if m == nil {
			panic(fmt.Sprintf("mcpkit: Use: middleware %d is nil", i))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.use = append(s.use, mw...)
	clear(s.handlers)
	s.publish()
}

// UseList appends list middleware, which filter or rewrite what tools/list
// answers. The first is the outermost. UseList panics if a middleware is
// nil.
func (s *Server) UseList(mw ...ListMiddleware) {
	for i, m := range mw {
		if m == nil {
			panic(fmt.Sprintf("mcpkit: UseList: list middleware %d is nil", i))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listUse = append(s.listUse, mw...)
	s.publish()
}

// Tools returns the tools the server serves (the highest version of each
// name), sorted by name. The Tools are shared and must not be modified.
func (s *Server) Tools() []*Tool {
	return slices.Clone(s.state.Load().tools)
}

// Lookup returns the tool served under name, if any. The Tool is shared and
// must not be modified.
func (s *Server) Lookup(name string) (*Tool, bool) {
	e, ok := s.state.Load().byName[name]
	if !ok {
		return nil, false
	}
	return e.tool, true
}

// Handler returns the full chain (server-wide and per-tool middleware around
// the handler) that serves calls to name, and whether name is served. It
// lets tests and adapters call a tool without a transport.
func (s *Server) Handler(name string) (Handler, bool) {
	e, ok := s.state.Load().byName[name]
	if !ok {
		return nil, false
	}
	return e.handler, true
}

// toolID names t in messages: "add", or "add" version "2" when it has one.
func toolID(t *Tool) string {
	if t.Version == "" {
		return fmt.Sprintf("%q", t.Name)
	}
	return fmt.Sprintf("%q version %q", t.Name, t.Version)
}

// find returns the index of name@ver in s.versions[name], or -1.
func (s *Server) find(name, ver string) int {
	return slices.IndexFunc(s.versions[name], func(t *Tool) bool { return t.Version == ver })
}

// commit publishes the registry and brings the SDK's tools in line with it:
// names in changed are (re)registered, names in removed are unregistered.
// The SDK sends notifications/tools/list_changed for both. s.mu is held.
func (s *Server) commit(changed map[string]bool, removed []string) {
	old := s.state.Load()
	st := s.publish()
	if len(removed) > 0 {
		s.sdk.RemoveTools(removed...)
	}
	for name := range changed {
		e := st.byName[name]
		if prev := old.byName[name]; prev != nil && prev.tool == e.tool {
			continue // a lower version changed; the served one did not
		}
		def := e.tool.Tool // the SDK keeps a pointer: give it its own copy
		s.sdk.AddTool(&def, s.sdkHandler(name))
	}
}

// publish builds and stores a new state from the registry. s.mu is held.
func (s *Server) publish() *state {
	st := &state{byName: make(map[string]*entry, len(s.versions))}
	for name, vs := range s.versions {
		t := vs[0] // highest version
		h, ok := s.handlers[t]
		if !ok {
			h = buildChain(t, s.use)
			s.handlers[t] = h
		}
		st.byName[name] = &entry{tool: t, handler: h}
		st.tools = append(st.tools, t)
	}
	slices.SortFunc(st.tools, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
	tools := st.tools
	base := ListerFunc(func(context.Context, *ListRequest) ([]*Tool, error) { return tools, nil })
	st.lister = ChainList(s.listUse...)(base)
	s.state.Store(st)
	return st
}

// sdkHandler returns the SDK handler registered for name. It looks the tool
// up on each call, so that Use and version changes apply without touching
// the SDK's registry.
func (s *Server) sdkHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, call *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		e := s.state.Load().byName[name]
		if e == nil {
			return nil, NewUnknownToolError(name)
		}
		return s.serve(ctx, e, call)
	}
}

// serve runs one call through e's chain and maps the outcome onto the wire.
func (s *Server) serve(ctx context.Context, e *entry, call *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	req := &Request{Tool: e.tool, Arguments: call.Params.Arguments, Call: call}
	defer func() {
		if v := recover(); v != nil {
			// A panic re-raised by middleware (such as a timeout's) carries
			// the stack of the goroutine that first panicked.
			pe, ok := v.(*PanicError)
			if !ok {
				pe = &PanicError{Value: v, Stack: debug.Stack()}
			}
			s.logger.Error("mcpkit: tool panicked", "tool", e.tool.Name, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
			res, err = errorResult(panicText(e.tool.Name), Fatal, nil), nil
		}
	}()
	res, err = e.handler.ServeTool(ctx, req)
	if err != nil {
		return resultForError(e.tool.Name, err)
	}
	if res == nil {
		// The SDK cannot send a nil result; "nothing to report" is an
		// empty success.
		return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
	}
	return res, nil
}

// interceptList answers tools/list from the registry; every other method
// goes to the SDK untouched.
func (s *Server) interceptList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		lreq, ok := req.(*mcp.ListToolsRequest)
		if method != "tools/list" || !ok {
			return next(ctx, method, req)
		}
		return s.listTools(ctx, lreq, next)
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
	ours, err := st.lister.ServeList(ctx, &ListRequest{Call: req})
	if err != nil {
		return nil, err
	}
	foreign, cacheable, err := s.foreignTools(ctx, req, st, next)
	if err != nil {
		return nil, err
	}

	all := make([]*mcp.Tool, 0, len(ours)+len(foreign))
	for _, t := range ours {
		all = append(all, &t.Tool)
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

// foreignTools returns the tools registered on the SDK server by other code
// than s, reading every page of the SDK's own list, and the cache hints the
// SDK computed for the first page.
func (s *Server) foreignTools(ctx context.Context, req *mcp.ListToolsRequest, st *state, next mcp.MethodHandler) ([]*mcp.Tool, mcp.Cacheable, error) {
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
			if _, ours := st.byName[t.Name]; !ours && !s.registered(t.Name) {
				foreign = append(foreign, t)
			}
		}
		if lres.NextCursor == "" || lres.NextCursor == cursor {
			return foreign, cacheable, nil
		}
		cursor = lres.NextCursor
	}
}

// registered reports whether name is one of s's tools in the latest state;
// a tools/list racing with Add or Remove may see a state where the SDK and
// the registry briefly disagree, and must not list such a tool as foreign.
func (s *Server) registered(name string) bool {
	_, ok := s.state.Load().byName[name]
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

// checkWithSDK runs the SDK's own checks of a definition (those that would
// panic in mcp.Server.AddTool, such as parameter header annotations) on a
// scratch server, so that Add reports them as errors instead.
func checkWithSDK(def *mcp.Tool) (err error) {
	scratch := mcp.NewServer(&mcp.Implementation{Name: "mcpkit-check"}, nil)
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: tool %q: %v", ErrInvalidSchema, def.Name, v)
		}
	}()
	d := *def
	scratch.AddTool(&d, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("unreachable")
	})
	return nil
}
