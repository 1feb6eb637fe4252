package mcpkittest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// Protocol versions the harness negotiates.
const (
	// StatefulVersion is the protocol version a [NewServer] client uses.
	StatefulVersion = "2025-11-25"
	// StatelessVersion is the protocol version a [NewStatelessServer] client
	// negotiates: the stateless protocol of SEP-2575.
	StatelessVersion = "2026-07-28"
)

// Options configures a test server. A nil *Options means the defaults.
type Options struct {
	// Client configures the SDK client of the harness (handlers for
	// list-changed notifications, logging, progress, ...). Nil means the SDK
	// defaults.
	Client *mcp.ClientOptions

	// ProtocolVersion, if set, replaces the version the client asks for.
	ProtocolVersion string

	// Retries is how often an HTTP client reconnects a broken event stream
	// (to test tools that close it, for instance). Zero means never, so that
	// a failure shows at once.
	Retries int

	// HTTP configures the streamable HTTP handler of [NewServer] and
	// [NewStatelessServer]; Stateless and JSONResponse are set by the
	// constructor. It is ignored by [NewInMemoryServer].
	HTTP *mcp.StreamableHTTPOptions
}

// A Server is an mcpkit server running for one test, with an SDK client
// session connected to it.
type Server struct {
	// URL is the MCP endpoint, of the form http://127.0.0.1:port; it is
	// empty for an in-memory server.
	URL string

	// Session is the connected client session.
	Session *mcp.ClientSession

	http    *httptest.Server
	server  *mcpkit.Server
	client  *mcp.Client
	version string
	retries int
	close   sync.Once
}

// NewServer starts srv on the streamable HTTP transport in stateful mode on a
// loopback port and connects a client that negotiates [StatefulVersion]. It
// stops the test on failure and closes the server when the test ends.
func NewServer(tb testing.TB, srv *mcpkit.Server, opts *Options) *Server {
	tb.Helper()
	return newHTTP(tb, srv, opts, false, StatefulVersion)
}

// NewStatelessServer starts srv on the streamable HTTP transport in stateless
// mode with JSON responses (no SSE) and connects a client that negotiates
// [StatelessVersion]. Stateless servers cannot send notifications outside a
// request, so list-changed notifications do not arrive here.
func NewStatelessServer(tb testing.TB, srv *mcpkit.Server, opts *Options) *Server {
	tb.Helper()
	return newHTTP(tb, srv, opts, true, StatelessVersion)
}

// NewInMemoryServer connects srv and a client over the SDK's in-memory
// transports: no network, no HTTP headers. The client asks for the newest
// protocol version the SDK supports unless opts say otherwise.
func NewInMemoryServer(tb testing.TB, srv *mcpkit.Server, opts *Options) *Server {
	tb.Helper()
	if opts == nil {
		opts = &Options{}
	}
	ts := &Server{server: srv, client: newClient(opts), version: opts.ProtocolVersion}
	cs, err := connectInMemory(context.Background(), srv, ts.client, ts.version)
	if err != nil {
		tb.Fatalf("mcpkittest: %v", err)
	}
	ts.Session = cs
	tb.Cleanup(ts.Close)
	return ts
}

// ConnectInMemory connects a new client to srv over the SDK's in-memory
// transports and returns its session, for code that has no testing.TB
// (Example functions, benchmarks' setup, programs). Closing the session
// ends the server's side too. Opts may be nil; its HTTP and Retries fields
// do not apply.
func ConnectInMemory(ctx context.Context, srv *mcpkit.Server, opts *Options) (*mcp.ClientSession, error) {
	if opts == nil {
		opts = &Options{}
	}
	return connectInMemory(ctx, srv, newClient(opts), opts.ProtocolVersion)
}

func connectInMemory(ctx context.Context, srv *mcpkit.Server, client *mcp.Client, version string) (*mcp.ClientSession, error) {
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.MCPServer().Connect(ctx, serverT, nil)
	if err != nil {
		return nil, fmt.Errorf("server connect: %w", err)
	}
	cs, err := client.Connect(ctx, clientT, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		ss.Close()
		return nil, fmt.Errorf("client connect: %w", err)
	}
	return cs, nil
}

func newHTTP(tb testing.TB, srv *mcpkit.Server, opts *Options, stateless bool, version string) *Server {
	tb.Helper()
	if opts == nil {
		opts = &Options{}
	}
	var hopts mcp.StreamableHTTPOptions
	if opts.HTTP != nil {
		hopts = *opts.HTTP
	}
	hopts.Stateless = stateless
	hopts.JSONResponse = stateless
	if opts.ProtocolVersion != "" {
		version = opts.ProtocolVersion
	}
	ts := &Server{server: srv, client: newClient(opts), version: version, retries: -1}
	if opts.Retries > 0 {
		ts.retries = opts.Retries
	}
	ts.http = httptest.NewServer(srv.HTTPHandler(&hopts))
	ts.URL = ts.http.URL
	cs, err := ts.Connect(context.Background())
	if err != nil {
		ts.http.Close()
		tb.Fatalf("mcpkittest: %v", err)
	}
	ts.Session = cs
	tb.Cleanup(ts.Close)
	return ts
}

func newClient(opts *Options) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcpkittest", Version: "1"}, opts.Client)
}

// Connect opens one more client session to an HTTP test server, with the
// same client options and protocol version as the first. The caller closes
// it. It fails for an in-memory server, whose transport carries one session.
func (s *Server) Connect(ctx context.Context) (*mcp.ClientSession, error) {
	if s.http == nil {
		return nil, fmt.Errorf("mcpkittest: Connect: an in-memory server has one session")
	}
	t := &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: s.http.Client(), MaxRetries: s.retries}
	cs, err := s.client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: s.version})
	if err != nil {
		return nil, fmt.Errorf("client connect: %w", err)
	}
	return cs, nil
}

// Server returns the mcpkit server under test.
func (s *Server) Server() *mcpkit.Server { return s.server }

// CallTool calls the named tool with args (any value that marshals to a JSON
// object, or nil) on the harness session.
func (s *Server) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	return s.Session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// Close closes the client session and stops the server. It is safe to call
// more than once; the test's cleanup calls it too.
func (s *Server) Close() {
	s.close.Do(func() {
		if s.Session != nil {
			s.Session.Close()
		}
		if s.http != nil {
			s.http.CloseClientConnections()
			s.http.Close()
		}
	})
}

// NewRequest returns a Request for tool with args marshalled as its arguments,
// for calling a Handler or Middleware directly in a unit test. Its Call has
// no session and no transport extras. NewRequest panics if args cannot be
// marshalled, which is a bug in the test.
func NewRequest(tool *mcpkit.Tool, args any) *mcpkit.Request {
	var raw json.RawMessage
	switch a := args.(type) {
	case nil:
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	default:
		b, err := json.Marshal(args)
		if err != nil {
			panic(fmt.Sprintf("mcpkittest: NewRequest: %v", err))
		}
		raw = b
	}
	name := ""
	if tool != nil {
		name = tool.Name
	}
	return &mcpkit.Request{
		Tool:      tool,
		Arguments: raw,
		Call:      &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name, Arguments: raw}},
	}
}
