package mcpkit

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultSessionTimeout is how long [Server.HTTPHandler] keeps an idle
// stateful session when its options do not say: an abandoned session costs a
// goroutine and its buffers until it is closed.
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

	mu       sync.Mutex         // serializes changes to the fields below and to sdk's tools
	versions map[string][]*Tool // every registered version, by name, highest first
	checks   map[*Tool]*checker // compiled schemas, for every registered version
	built    map[*Tool]*entry   // built chains, dropped when the server-wide chain changes
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
	layers  []Layer // for Server.Pipeline

	legacyOnce sync.Once
	legacy     *mcp.Tool // the definition for clients that need objects
}

// NewServer returns a Server on a new SDK server for impl, configured by
// opts.SDKOptions. Unless those options set it, the server advertises the
// tools capability with listChanged from the start, so clients that connect
// before the first tool is added still learn of later changes. Without
// Capabilities in those options, it advertises only that: client logging,
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
	if caps.Tools == nil {
		caps.Tools = &mcp.ToolCapabilities{ListChanged: true}
	}
	sdkOpts.Capabilities = caps
	s := Wrap(mcp.NewServer(impl, &sdkOpts), opts)
	s.pageSize = cmp.Or(sdkOpts.PageSize, mcp.DefaultPageSize)
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
func Wrap(s *mcp.Server, opts *ServerOptions) *Server {
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
		checks:     make(map[*Tool]*checker),
		built:      make(map[*Tool]*entry),
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
// streamable HTTP transport. A nil opts means the SDK's defaults, except that
// idle stateful sessions are closed after [DefaultSessionTimeout] unless
// opts.SessionTimeout says otherwise.
func (s *Server) HTTPHandler(opts *mcp.StreamableHTTPOptions) http.Handler {
	var o mcp.StreamableHTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.sdk }, &o)
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
	clear(s.built)
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
