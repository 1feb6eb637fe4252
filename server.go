package mcpkit

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"hash/maphash"
	"iter"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
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

	mu  sync.Mutex          // serializes changes to the fields below and to sdk's tools
	reg map[string]*regName // what the registry holds under each name (see regName)

	// servedAs is, for every name and version served, the registered tool
	// served so, when there are transforms (see servedBy).
	servedAs     map[[2]string]*Tool
	transforms   []CatalogTransform
	derived      map[*Tool]derivation           // what the transforms made of each registered version
	lineage      map[string][]*Tool             // registered versions by the other names in their derivations' lineage (see RefreshTools)
	registry     [numFamilies]map[string]Target // every registered prompt by name, resource by URI, template by its text
	builtTargets map[Target]*chain              // built chains by prompt, resource or template, dropped when the server-wide chain changes
	use          []Middleware
	listUse      []ListMiddleware
	visibility   Visibility
	frozen       Visibility // a snapshot of visibility, when it takes them, for the states (see VisibilitySnapshotter)
	sources      []source   // the providers and mounts, in order (a state holds each mount with its child's state)
	sharers      []*sharer  // see ShareChanges
	mountedIn    []*mount   // the mounts of s into other servers, told of its changes (see Mount)
	resyncs      int        // OnChange hooks running: their changes are not shared
	listeners    map[*mcp.ServerSession]*listener
	verdicts     sync.Map // *verdict of the HTTP requests within a session, by verdictHeader
	observers    atomic.Pointer[[]Observer]

	// sdkReceive is the receiving handler beneath mcpkit's middleware (the
	// SDK's own, for a server NewServer made), through which
	// foreignDigest reads the SDK's list of tools.
	sdkReceive mcp.MethodHandler
	seed       maphash.Seed // for the digests of what listeners see

	// sdkSend is the sending handler beneath mcpkit's middleware, through
	// which ResourceUpdated tells sessions; subs are the subscriptions it
	// tells (see subscribe).
	sdkSend mcp.MethodHandler
	subs    subscriptions

	// tableSchema is the input schema of every tool s registers with the
	// SDK (see commit): the SDK only routes calls by name, and one schema,
	// never modified, serves them all.
	tableSchema *jsonschema.Schema

	// oneLayer is the list of layers shared by the chains of one layer
	// alike (see shareLayers), never modified.
	oneLayer []Layer

	// replica identifies s among the replicas that share changes (see
	// ShareChanges): random, so that it also names no other tool in
	// dispatch, the one tool s registers with the SDK, through which every
	// call of s's tools passes (see serveRouted).
	replica, dispatch string

	// tableNames says that calls of registered tools reach the SDK under
	// their own names, which its table then holds, as receiving
	// middleware inside s's (one the SDK server had before Wrap) expects;
	// otherwise every call passes through dispatch, and the SDK's table
	// does not follow the registry. Set by Wrap, never changed.
	tableNames bool

	// wrapped says that sdk was made by the caller (see Wrap): it may
	// have sessions s did not see open. Set by Wrap, never changed.
	wrapped bool

	// probe and probeYield ask the SDK whether a session is open (see
	// anySession); guarded by mu.
	probe            sessionProbe
	probeYield       func(*mcp.ServerSession) bool
	promptDispatch   string // the one prompt s registers with the SDK (see getPrompt)
	resourceDispatch string // the one resource s registers with the SDK (see readResource)

	// served says, by kind, that the dispatch of the kind is registered:
	// the SDK declares the kind's capability. declares says that the SDK
	// options declare it (see answers).
	served   [numKinds]atomic.Bool
	declares [numKinds]bool

	// completes is set once a prompt or template with a completer is
	// added: s declares completions (see declareServed).
	// sdkCompletes says that the SDK options have a CompletionHandler.
	completes    atomic.Bool
	sdkCompletes bool

	events atomic.Uint64 // change events published, for their seq

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

	names nameCheck // the report of names that select no tool (see judgeNames)

	drain drainer // see Drain

	// extensions are the extensions declared with DeclareExtension,
	// replaced whole on each declaration; nil until the first.
	extensions atomic.Pointer[map[string]any]
}

// NewServer returns a Server on a new SDK server for impl, configured by
// opts.SDKOptions. Unless those options set it, the server advertises the
// tools capability with listChanged from the start, so clients that connect
// before the first tool is added still learn of later changes. The prompts
// and resources capabilities, with listChanged, are advertised once a
// prompt ([Server.AddPrompts]) or a resource or template
// ([Server.AddResources], [Server.AddResourceTemplates]) is added; until
// then the methods of that kind are answered -32601, as methods the server
// does not have. The completions capability is advertised once a prompt
// or template with a completer ([Prompt.Complete],
// [ResourceTemplate.Complete]) is added. Without Capabilities in those options, it
// advertises only these: client logging, which the SDK would advertise by
// default, is deprecated by protocol 2026-07-28 (set Capabilities to
// advertise it).
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
	sdkOpts.Capabilities = caps
	s := newServer(mcp.NewServer(impl, &sdkOpts), opts)
	s.pageSize = cmp.Or(sdkOpts.PageSize, mcp.DefaultPageSize)
	s.setCacheable = sdkOpts.SetCacheable
	s.sdkCompletes = sdkOpts.CompletionHandler != nil
	//lint:ignore SA1019 a server told to declare prompts the old way answers them too
	s.declares[KindPrompt] = caps.Prompts != nil || sdkOpts.HasPrompts
	//lint:ignore SA1019 as for prompts
	s.declares[KindResource] = caps.Resources != nil || sdkOpts.HasResources
	return s
}

// Wrap returns a Server that serves its tools through s, a server the caller
// already has (and may keep using for resources, prompts and the rest).
//
// Tools added to s directly, with s.AddTool or mcp.AddTool, keep working and
// are listed alongside the mcpkit tools, but no mcpkit middleware runs for
// them. Calls of mcpkit's tools reach s under their own names, so that
// receiving middleware s already had (which runs inside mcpkit's) sees
// them: a tool added to s directly under a name mcpkit registers is
// replaced by mcpkit's, and is gone when mcpkit removes its own, until
// added to s again. Wrap each SDK server once: two Servers on one SDK server would each
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
	srv.tableNames = true
	srv.wrapped = true
	return srv
}

func newServer(s *mcp.Server, opts *ServerOptions) *Server {
	if opts == nil {
		opts = &ServerOptions{}
	}
	srv := &Server{
		sdk:          s,
		logger:       opts.Logger,
		replace:      opts.ReplaceDuplicates,
		validation:   cmp.Or(opts.Validation, Strict),
		pageSize:     mcp.DefaultPageSize,
		reg:          make(map[string]*regName),
		servedAs:     make(map[[2]string]*Tool),
		derived:      make(map[*Tool]derivation),
		builtTargets: make(map[Target]*chain),
		listeners:    make(map[*mcp.ServerSession]*listener),
		replica:      rand.Text(),
		seed:         maphash.MakeSeed(),

		tableSchema: &jsonschema.Schema{Type: "object"},
	}
	srv.dispatch = "mcpkit.call." + srv.replica
	srv.probeYield = srv.probe.yield
	srv.promptDispatch = "mcpkit.prompt." + srv.replica
	srv.resourceDispatch = "mcpkit://dispatch/" + srv.replica
	for f := range srv.registry {
		srv.registry[f] = make(map[string]Target)
	}
	if srv.logger == nil {
		srv.logger = slog.New(slog.DiscardHandler)
	}
	empty := &state{}
	for f := range empty.targets {
		empty.targets[f] = &targetIndex{}
	}
	srv.finish(empty)
	srv.state.Store(empty)
	// watchListeners first, so that what it passes requests to is the
	// handler the SDK server had, and intercept runs before it.
	s.AddReceivingMiddleware(srv.watchListeners)
	s.AddReceivingMiddleware(srv.intercept)
	s.AddReceivingMiddleware(srv.declareServed)
	s.AddReceivingMiddleware(srv.gate) // outermost: see Drain
	s.AddSendingMiddleware(srv.keepSender)
	s.AddSendingMiddleware(srv.filterListChanged)
	srv.registerDispatch()
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
	for _, r := range s.reg {
		r.chains = nil
	}
	clear(s.builtTargets)
	s.republish()
	if s.names.serving && !s.anyChain() {
		// No chain was built to judge the names of mw through (see
		// noteChain): the server serves no registered tool.
		if uses := s.serverWideNames(); len(uses) > 0 {
			s.judgeNames(s.state.Load(), uses)
		}
	}
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
	if s.names.serving {
		s.names.pending = append(s.names.pending, listNames(mw)...)
	}
	// What tools/list answers changed, though no tool did, and for
	// anyone: list middleware see every list.
	s.commit(s.refreshed(), change{everyone: true})
}
