package mcpkit

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"hash/maphash"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultSessionTimeout is how long [Server.HTTPHandler] keeps an idle
// session (see [HTTPOptions.Sessions]) when its options do not say: an
// abandoned session costs a goroutine and its buffers until it is closed.
const DefaultSessionTimeout = 10 * time.Minute

// ServerOptions configures a [Server]. The zero value, and a nil
// *ServerOptions, are the defaults.
type ServerOptions struct {
	// Logger receives the server's own records (recovered panics). Nil
	// means no logging.
	Logger *slog.Logger

	// ReplaceDuplicates makes [Server.Add] replace a tool registered under
	// the same name and version, in one step. By default Add fails with
	// [ErrDuplicateTool] and changes nothing: a silent replacement is how a
	// tool ends up served by code nobody meant to run.
	ReplaceDuplicates bool

	// Validation is how every tool's arguments are checked against its
	// input schema before its handler runs, unless the tool says otherwise
	// ([Tool.Validation]). The zero value is [Strict].
	Validation ValidationMode

	// SDKOptions configures the SDK server that [NewServer] creates
	// (its PageSize is also the size of mcpkit's tools/list pages); [Wrap]
	// ignores it. Nil means the SDK's defaults.
	SDKOptions *mcp.ServerOptions
}

// A Server is a registry of mcpkit tools served through an SDK [mcp.Server].
//
// Tools are added and removed at any time, also while sessions are open;
// clients are told with notifications/tools/list_changed. Every tools/call
// runs the server-wide middleware (see [Server.Use]), then the tool's own,
// then the validation of its arguments against its input schema, then the
// tool's handler, and the outcome is mapped onto the wire by the error table
// in the package documentation. tools/list runs the list middleware (see
// [Server.UseList]).
//
// A Server is safe for concurrent use.
type Server struct {
	sdk        *mcp.Server
	logger     *slog.Logger
	replace    bool
	validation ValidationMode
	pageSize   int
	validators validators // compiled schemas by their JSON text, shared by tools alike
	dispatch   string     // the SDK tool that calls of provided tools are routed through

	mu       sync.Mutex         // serializes changes to the fields below and to sdk's tools
	versions map[string][]*Tool // every registered version, by name, highest first

	// groups and servedAs are what the registry serves, kept up to date
	// by each change: the tools the transforms made of the registered
	// ones that are enabled, by the name they are served under; and, for
	// every name and version served, the registered tool served so.
	groups     map[string][]*Tool
	servedAs   map[[2]string]*Tool
	checks     map[*Tool]*checker // compiled schemas, for every registered version
	transforms []CatalogTransform
	derived    map[*Tool]derivation // what the transforms made of each registered version
	lineage    map[string][]*Tool   // registered versions by the other names in their derivations' lineage (see RefreshTools)
	built      map[*Tool]*chain     // built chains by served tool, dropped when the server-wide chain changes
	use        []Middleware
	listUse    []ListMiddleware
	visibility Visibility
	frozen     Visibility // a snapshot of visibility, when it takes them, for the states (see VisibilitySnapshotter)
	providers  []Provider
	sharers    []*sharer // see ShareChanges
	mountedIn  []*mount  // the mounts of s into other servers, told of its changes (see Mount)
	resyncs    int       // OnChange hooks running: their changes are not shared
	listeners  map[*mcp.ServerSession]*listener
	revisiting bool // the visibility changed: publish reviews every listener

	// sdkReceive is the receiving handler beneath mcpkit's middleware (the
	// SDK's own, for a server NewServer made), through which
	// foreignDigest reads the SDK's list of tools.
	sdkReceive mcp.MethodHandler
	seed       maphash.Seed // for the digests of what listeners see

	// replica identifies s among the replicas that share changes (see
	// ShareChanges): random, so that it also names no other tool in
	// scratch, the tool that forceListChanged registers and removes when s
	// serves none.
	replica, scratch string
	events           atomic.Uint64 // change events published, for their seq

	state   atomic.Pointer[state] // what calls and lists read, without locking
	gen     atomic.Uint64         // counts the states published (see Generation)
	changes changeLog             // the names each recent generation changed (see ChangedSince)

	// foreign is set once code other than s may have added tools to sdk
	// (the SDK server was given to Wrap, or handed out by MCPServer): only
	// then does tools/list read the SDK's own list.
	foreign atomic.Bool

	// setCacheable is the SDK option of that name, when s created the SDK
	// server, for the lists that s answers without asking the SDK.
	setCacheable func(context.Context, mcp.Request, *mcp.Cacheable)
}

// state is an immutable view of the registry, replaced whole on each change.
//
// Its indexes share their parts with the states before it (see index): a
// change of some tools makes a new state in proportion to the change.
type state struct {
	byName *index[*toolName] // every callable name, with its enabled versions
	listed *index[*toolName] // the names with a version that may be listed (not Unlisted)
	byID   *index[[]*entry]  // the served versions by identity (idKey of Tool.ID)
	lister Lister            // list middleware around the listed tools; nil when there is none

	// What a provided tool is served with (see Provider): the providers,
	// the server's catalog transforms, middleware and Visibility as they
	// were when the state was made, and the entries made of provided
	// tools, kept for this state.
	providers  []Provider
	transforms []CatalogTransform
	use        []Middleware
	visibility Visibility
	provided   *providedCache

	// allowed is the per-request half of the server's Visibility, or nil
	// when what a request sees does not depend on the request.
	allowed func(context.Context, *Tool, Caller) bool
}

// toolName is a name clients can call, with its versions.
type toolName struct {
	name     string
	versions []*entry // enabled versions, highest first; never empty

	// seen caches the definitions listed to callers who may not see every
	// version, by the set of versions they see (see state.seenBy).
	mu   sync.Mutex
	seen map[uint64]*Tool
}

// entry is a served tool version with its middleware chain already built.
type entry struct {
	tool    *Tool // as listed and as Request.Tool: after transforms, with its version's _meta
	derived *Tool // what the transforms made of the registered tool; the chain was built for it
	chain   *chain
	handler Handler
	layers  []Layer  // for Server.Pipeline
	listed  []string // the versions of the name, highest first, when it has versions

	legacyOnce sync.Once
	legacy     *mcp.Tool // the definition for clients that need objects

	wireOnce sync.Once
	wire     *mcp.Tool // the definition as listed, its schemas as JSON text

	paramsOnce sync.Once
	params     []paramHeader // the arguments its input schema mirrors into headers
}

// listable reports whether some version of n may be listed: one that is
// not Unlisted.
func (n *toolName) listable() bool {
	return slices.ContainsFunc(n.versions, func(e *entry) bool { return !e.tool.Unlisted })
}

// paramHeaders returns the arguments e's input schema mirrors into HTTP
// headers, read once.
func (e *entry) paramHeaders() []paramHeader {
	e.paramsOnce.Do(func() { e.params = paramHeadersOf(e.tool.InputSchema) })
	return e.params
}

// chain is a built middleware chain.
type chain struct {
	handler Handler
	layers  []Layer
}

// NewServer returns a Server on a new SDK server for impl, configured by
// opts.SDKOptions. Unless those options set it, the server advertises the
// tools capability with listChanged from the start, so clients that connect
// before the first tool is added still learn of later changes. It
// advertises the prompts and resources capabilities the same way, also
// while it has neither: the SDK server answers prompts/list, resources/list
// and resources/templates/list whether or not any are registered, and
// protocol 2026-07-28 requires a server to declare what it answers. Without
// Capabilities in those options, it advertises only these: client logging,
// which the SDK would advertise by default, is deprecated by protocol
// 2026-07-28 (set Capabilities to advertise it).
func NewServer(impl *mcp.Implementation, opts *ServerOptions) *Server {
	var sdkOpts mcp.ServerOptions
	if opts != nil && opts.SDKOptions != nil {
		sdkOpts = *opts.SDKOptions
	}
	caps := &mcp.ServerCapabilities{}
	if sdkOpts.Capabilities != nil {
		c := *sdkOpts.Capabilities
		caps = &c
	}
	// As the SDK declares each of these once it has one to serve.
	if caps.Tools == nil {
		caps.Tools = &mcp.ToolCapabilities{ListChanged: true}
	}
	if caps.Prompts == nil {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if caps.Resources == nil {
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	}
	sdkOpts.Capabilities = caps
	s := newServer(mcp.NewServer(impl, &sdkOpts), opts)
	s.pageSize = cmp.Or(sdkOpts.PageSize, mcp.DefaultPageSize)
	s.setCacheable = sdkOpts.SetCacheable
	return s
}

// Wrap returns a Server that serves its tools through s, a server the caller
// already has (and may keep using for resources, prompts and the rest).
//
// Tools added to s directly, with s.AddTool or mcp.AddTool, keep working and
// are listed alongside the mcpkit tools, but no mcpkit middleware runs for
// them. Wrap each SDK server once: two Servers on one SDK server would each
// answer tools/list. An SDK server's options cannot be read back, so
// mcpkit's tools/list pages have [mcp.DefaultPageSize] tools.
//
// What s declares is the caller's: s answers prompts/list, resources/list
// and resources/templates/list even with no prompt or resource registered,
// but declares the prompts and resources capabilities only once it has one,
// and protocol 2026-07-28 requires a server to declare what it answers.
// Create s with Capabilities that name prompts and resources, as
// [NewServer] does.
func Wrap(s *mcp.Server, opts *ServerOptions) *Server {
	srv := newServer(s, opts)
	srv.foreign.Store(true)
	return srv
}

func newServer(s *mcp.Server, opts *ServerOptions) *Server {
	if opts == nil {
		opts = &ServerOptions{}
	}
	srv := &Server{
		sdk:        s,
		logger:     opts.Logger,
		replace:    opts.ReplaceDuplicates,
		validation: cmp.Or(opts.Validation, Strict),
		pageSize:   mcp.DefaultPageSize,
		versions:   make(map[string][]*Tool),
		groups:     make(map[string][]*Tool),
		servedAs:   make(map[[2]string]*Tool),
		checks:     make(map[*Tool]*checker),
		derived:    make(map[*Tool]derivation),
		built:      make(map[*Tool]*chain),
		listeners:  make(map[*mcp.ServerSession]*listener),
		replica:    rand.Text(),
		seed:       maphash.MakeSeed(),
	}
	srv.scratch = "mcpkit.scratch." + srv.replica
	srv.dispatch = "mcpkit.provided." + srv.replica
	if srv.logger == nil {
		srv.logger = slog.New(slog.DiscardHandler)
	}
	st, _, _, _ := srv.build(srv.versions) // nothing registered: cannot fail
	srv.state.Store(st)
	// watchListeners first, so that what it passes requests to is the
	// handler the SDK server had, and intercept runs before it.
	s.AddReceivingMiddleware(srv.watchListeners)
	s.AddReceivingMiddleware(srv.intercept)
	s.AddSendingMiddleware(srv.filterListChanged)
	return srv
}

// MCPServer returns the SDK server, to run on any SDK transport
// (s.MCPServer().Run(ctx, &mcp.StdioTransport{}), in-memory transports, ...)
// and to register resources and prompts.
//
// Tools added to the SDK server directly are listed alongside the mcpkit
// tools, without mcpkit middleware; since the SDK cannot say when that
// happens, once MCPServer has been called each tools/list also reads the
// SDK's own list. [Server.Run], [Server.Connect] and [Server.HTTPHandler]
// serve without that cost.
func (s *Server) MCPServer() *mcp.Server {
	s.foreign.Store(true)
	return s.sdk
}

// Sessions returns the server's open sessions, like [mcp.Server.Sessions]:
// stateful HTTP sessions, stdio, in-memory connections.
func (s *Server) Sessions() iter.Seq[*mcp.ServerSession] { return s.sdk.Sessions() }

// Connect connects the server to a client over t, like
// [mcp.Server.Connect], and returns the session.
func (s *Server) Connect(ctx context.Context, t mcp.Transport, opts *mcp.ServerSessionOptions) (*mcp.ServerSession, error) {
	return s.sdk.Connect(ctx, t, opts)
}

// Run runs the server over a single transport, like [mcp.Server.Run].
func (s *Server) Run(ctx context.Context, t mcp.Transport) error { return s.sdk.Run(ctx, t) }

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
	clear(s.built)
	s.republish()
}

// UseList appends list middleware, which filter or rewrite what tools/list
// answers. The first is the outermost. Open sessions receive
// notifications/tools/list_changed. UseList panics if a middleware is
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
	s.republish()
	// What tools/list answers changed, though no tool did, and for
	// anyone: list middleware see every list.
	s.tellAll()
	s.forceListChanged()
	s.shareChange()
}

// Listeners
//
// The SDK sends notifications/tools/list_changed, a little after each change
// of its tools, to every session of a protocol before 2026-07-28 and to
// every 2026-07-28 subscriptions/listen stream that asked for it, whoever
// listens. When a per-request Visibility is in effect, callers see different
// lists; a notification of a change that a caller cannot see would tell it
// that tools hidden from it come and go. So s notes each listener it sees
// open, with the request that opens it, marks the listeners that a change
// concerns, and lets the SDK's notification through to those alone
// (filterListChanged).

// toolsListChanged is the method of the notification that listeners hear.
const toolsListChanged = "notifications/tools/list_changed"

// A listener is a client that hears notifications/tools/list_changed: a
// session of a protocol before 2026-07-28, judged by its initialize
// request, or a 2026-07-28 subscriptions/listen stream, judged by that
// request.
type listener struct {
	// ctx holds the values of the request that opened the listener,
	// without its cancellation: a per-request Visibility may read them.
	ctx    context.Context
	caller Caller // that request, as a tools/list from it would be judged

	// Guarded by Server.mu. digest is what caller sees in the current
	// state (see state.digest), kept while a per-request Visibility is in
	// effect; foreign is what it last heard of the tools that other code
	// registered on the SDK server (see foreignDigest).
	digest       uint64
	pending      bool // the next notification goes through
	foreign      uint64
	foreignKnown bool
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
			if r.Session == nil || r.Params == nil || r.Params.Notifications == nil || !r.Params.Notifications.ToolsListChanged {
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
	if st := s.state.Load(); st.allowed != nil {
		l.digest = st.digest(l.ctx, l.caller, s.seed)
		if s.foreign.Load() {
			l.foreign, l.foreignKnown = s.foreignDigest(ctx, ss)
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
		if method == toolsListChanged {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && !s.hears(ctx, ss) {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// hears reports whether the SDK's notification that the tools changed must
// reach ss: when s did not see ss open (it cannot judge), when no
// per-request Visibility is in effect (everyone sees the same list), when a
// change marked ss's listener since it last heard one, or when the tools
// that other code registered on the SDK server changed since then (they
// are everyone's). With providers, marks are kept even without a
// per-request Visibility, so that a provider's change for one principal
// reaches that principal's listeners alone (see [Server.ProviderChanged]).
func (s *Server) hears(ctx context.Context, ss *mcp.ServerSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.listeners[ss]
	if l == nil {
		return true
	}
	hear := l.pending
	l.pending = false
	if st := s.state.Load(); st.allowed == nil && len(st.providers) == 0 {
		return true
	}
	if s.foreign.Load() {
		d, ok := s.foreignDigest(ctx, ss)
		hear = hear || !ok || !l.foreignKnown || d != l.foreign
		l.foreign, l.foreignKnown = d, ok
	}
	return hear
}

// foreignDigest returns a digest of the tools that code other than s
// registered on the SDK server (see [Server.MCPServer]), read from the
// SDK's own tools/list, and whether it could read them. The SDK only says
// that its tools changed, not who changed them: this tells the changes of
// those tools, which are everyone's, from s's own. s.mu is held, so that
// the SDK's tools and s's registry agree.
func (s *Server) foreignDigest(ctx context.Context, ss *mcp.ServerSession) (uint64, bool) {
	st := s.state.Load()
	var d uint64
	cursor := ""
	for {
		res, err := s.sdkReceive(ctx, "tools/list", &mcp.ListToolsRequest{Session: ss, Params: &mcp.ListToolsParams{Cursor: cursor}})
		if err != nil {
			return 0, false
		}
		lres, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return 0, false
		}
		for _, t := range lres.Tools {
			if _, ours := st.byName.get(t.Name); !ours && t.Name != s.scratch && t.Name != s.dispatch {
				d ^= maphash.Comparable(s.seed, t)
			}
		}
		if lres.NextCursor == "" || lres.NextCursor == cursor {
			return d, true
		}
		cursor = lres.NextCursor
	}
}

// review marks the listeners that must hear of the change from old to st,
// in which the names changed have other versions or definitions, and
// reports whether it marked any; listed says whether the SDK's tools
// changed, as they do when what everyone lists may have. s.mu is held.
//
// Without a per-request Visibility, every listener hears of every change.
// With one, a listener hears when a name's view (see state.view) changed
// for it: the work is in proportion to the listeners and the names that
// changed. A change of the visibility itself (s.revisiting) may change
// any name for anyone, and old's Visibility may already answer as st's
// does (a rule added in place), so each listener's digest of the whole
// list is computed anew and compared with the one kept: the work is in
// proportion to the listeners and the registry.
func (s *Server) review(old, st *state, changed []string, listed bool) bool {
	switch {
	case len(s.listeners) == 0:
		return false
	case old.allowed == nil && st.allowed == nil:
		if !listed {
			return false
		}
		s.tellAll()
		return true
	case s.revisiting && len(st.providers) > 0:
		// Provided tools are not in the digests: anyone's may have changed.
		s.tellAll()
		return true
	case s.revisiting || (old.allowed == nil) != (st.allowed == nil):
		return s.reviewAll(old, st)
	}
	told := false
	for _, l := range s.listeners {
		for _, name := range changed {
			o, _ := old.byName.get(name)
			n, _ := st.byName.get(name)
			before := old.view(l.ctx, o, l.caller, s.seed)
			after := st.view(l.ctx, n, l.caller, s.seed)
			if before != after {
				l.digest ^= before ^ after
				l.pending, told = true, true
			}
		}
	}
	return told
}

// reviewAll marks the listeners whose digest of st differs from the one
// they had in old (kept, or, when old's list was everyone's, old's
// digest), and reports whether it marked any. s.mu is held.
func (s *Server) reviewAll(old, st *state) bool {
	var oldAll, newAll uint64
	if old.allowed == nil {
		oldAll = old.digest(context.Background(), nil, s.seed)
	}
	if st.allowed == nil {
		newAll = st.digest(context.Background(), nil, s.seed)
	}
	told := false
	for _, l := range s.listeners {
		before, after := l.digest, newAll
		if old.allowed == nil {
			before = oldAll
		}
		if st.allowed != nil {
			after = st.digest(l.ctx, l.caller, s.seed)
		}
		l.digest = after
		if before != after {
			l.pending, told = true, true
		}
	}
	return told
}

// tellAll marks every listener: the next notification reaches them all.
// s.mu is held.
func (s *Server) tellAll() {
	for _, l := range s.listeners {
		l.pending = true
	}
}

// view returns a digest of what tools/list shows c of n, the name's state
// in st (nil when st has none): 0 when c is not listed n, else a digest of
// the versions of n that c may see, the first of which is listed, with the
// others in its _meta. A version stands for the definition the transforms
// made of it (entry.derived): what c is listed under n can change only when
// this digest does. Digests of distinct versions are combined with XOR, so
// that a listener's digest of a whole list (state.digest) can be updated by
// one name's change.
func (st *state) view(ctx context.Context, n *toolName, c Caller, seed maphash.Seed) uint64 {
	if n == nil {
		return 0
	}
	var d uint64
	first := true
	for _, e := range n.versions {
		if st.allowed != nil && !st.allowed(ctx, e.tool, c) {
			continue
		}
		if first && e.tool.Unlisted {
			return 0
		}
		first = false
		d ^= maphash.Comparable(seed, e.derived)
	}
	return d
}

// digest returns a digest of the whole list that c sees in st: the views of
// every name, combined with XOR.
func (st *state) digest(ctx context.Context, c Caller, seed maphash.Seed) uint64 {
	var d uint64
	for n := range st.byName.all() {
		d ^= st.view(ctx, n, c, seed)
	}
	return d
}
