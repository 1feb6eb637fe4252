package mcpkittest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
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

	// ClientSetup, if set, is called with the harness's client before it
	// connects: to register the custom methods it may send with
	// mcp.AddSendingCustomMethod, say.
	ClientSetup func(*mcp.Client)

	// ProtocolVersion, if set, replaces the version the client asks for.
	ProtocolVersion string

	// Retries is how often an HTTP client reconnects a broken event stream
	// (to test tools that close it, for instance). Zero means never, so that
	// a failure shows at once.
	Retries int

	// HTTP configures the SDK's streamable HTTP handler behind
	// [mcpkit.Server.HTTPHandler] for [NewServer] and [NewStatelessServer]
	// (as [mcpkit.HTTPOptions].SDK): answers stream as event streams, as
	// srv.HTTPHandler(nil) serves them, so that the client hears a call's
	// progress, unless JSONResponse is set. It is ignored by
	// [NewInMemoryServer].
	HTTP *mcp.StreamableHTTPOptions

	// Header is sent with every HTTP request of the harness's client, for
	// middleware that reads req.Header(). In-memory transports carry no
	// headers: there, the Request's Header is nil.
	Header http.Header

	// HTTPClient, if set, is the client the harness connects with (for a
	// transport of your own); Header is added to its requests. Nil means
	// the test server's own client.
	HTTPClient *http.Client

	// Tokens, if set, puts the HTTP server behind the SDK's bearer-token
	// check (auth.RequireBearerToken): a request whose bearer token is a
	// key of Tokens is served with that TokenInfo, which handlers read with
	// req.TokenInfo(); any other, and one whose TokenInfo has a past
	// Expiration, gets HTTP 401 (a zero Expiration never expires). Token
	// says which token the harness's client sends.
	Tokens map[string]*auth.TokenInfo

	// Token is the bearer token the harness's client sends, as
	// "Authorization: Bearer <Token>". Empty means none.
	Token string
}

// A Server is an mcpkit server running for one test, with an SDK client
// session connected to it.
type Server struct {
	// URL is the MCP endpoint, of the form http://127.0.0.1:port; it is
	// empty for an in-memory server.
	URL string

	// Session is the connected client session.
	Session *mcp.ClientSession

	http       *httptest.Server
	httpClient *http.Client
	server     *mcpkit.Server
	client     *mcp.Client
	version    string
	retries    int
	close      sync.Once

	// The server's sides of the sessions this harness opened, which Close
	// ends: the in-memory one, or the IDs of the stateful HTTP ones.
	memSession *mcp.ServerSession
	mu         sync.Mutex
	sessionIDs map[string]bool
}

// NewServer starts srv on the streamable HTTP transport with sessions for
// older clients ([mcpkit.HTTPOptions].Sessions) on a loopback port and
// connects a client that negotiates [StatefulVersion], so it gets one. It
// stops the test on failure (with tb.Fatalf, so like that it must be called
// from the test's goroutine), and closes the server when the test ends. The
// constructors below do the same.
func NewServer(tb testing.TB, srv *mcpkit.Server, opts *Options) *Server {
	tb.Helper()
	return newHTTP(tb, srv, opts, false, StatefulVersion)
}

// NewStatelessServer starts srv on the streamable HTTP transport as
// [mcpkit.Server.HTTPHandler] serves it by default, statelessly, with JSON
// responses (no SSE), and connects a client that negotiates
// [StatelessVersion]. Stateless servers cannot send notifications outside a
// request, so list-changed notifications do not arrive here.
func NewStatelessServer(tb testing.TB, srv *mcpkit.Server, opts *Options) *Server {
	tb.Helper()
	return newHTTP(tb, srv, opts, true, StatelessVersion)
}

// NewInMemoryServer connects srv and a client over the SDK's in-memory
// transports: no network, no HTTP headers. The client asks for the newest
// protocol version the SDK supports unless opts say otherwise. The options
// that concern HTTP (HTTP, Retries, Header, HTTPClient, Tokens, Token) do
// not apply: handlers see a nil req.Header() and req.TokenInfo().
func NewInMemoryServer(tb testing.TB, srv *mcpkit.Server, opts *Options) *Server {
	tb.Helper()
	if opts == nil {
		opts = &Options{}
	}
	ts := &Server{server: srv, client: newClient(opts), version: opts.ProtocolVersion}
	ss, cs, err := connectInMemory(context.Background(), srv, ts.client, ts.version)
	if err != nil {
		tb.Fatalf("mcpkittest: %v", err)
	}
	ts.memSession, ts.Session = ss, cs
	tb.Cleanup(ts.Close)
	return ts
}

// ConnectInMemory connects a new client to srv over the SDK's in-memory
// transports and returns its session, for code that has no testing.TB
// (Example functions, benchmarks' setup, programs). Closing the session
// ends the server's side too. Opts may be nil; as for [NewInMemoryServer],
// its HTTP fields do not apply.
func ConnectInMemory(ctx context.Context, srv *mcpkit.Server, opts *Options) (*mcp.ClientSession, error) {
	if opts == nil {
		opts = &Options{}
	}
	_, cs, err := connectInMemory(ctx, srv, newClient(opts), opts.ProtocolVersion)
	return cs, err
}

func connectInMemory(ctx context.Context, srv *mcpkit.Server, client *mcp.Client, version string) (*mcp.ServerSession, *mcp.ClientSession, error) {
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("server connect: %w", err)
	}
	cs, err := client.Connect(ctx, clientT, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		ss.Close()
		return nil, nil, fmt.Errorf("client connect: %w", err)
	}
	return ss, cs, nil
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
	if opts.ProtocolVersion != "" {
		version = opts.ProtocolVersion
	}
	ts := &Server{server: srv, client: newClient(opts), version: version, retries: -1, sessionIDs: map[string]bool{}}
	if opts.Retries > 0 {
		ts.retries = opts.Retries
	}
	handler := ts.recordSessions(srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: !stateless, SDK: &hopts}))
	if opts.Tokens != nil {
		tokens := maps.Clone(opts.Tokens)
		verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
			if info, ok := tokens[token]; ok {
				return info, nil
			}
			return nil, auth.ErrInvalidToken
		}
		handler = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(handler)
	}
	ts.http = httptest.NewServer(handler)
	ts.URL = ts.http.URL
	ts.httpClient = clientFor(ts.http.Client(), opts)
	cs, err := ts.Connect(context.Background())
	if err != nil {
		ts.Close()
		tb.Fatalf("mcpkittest: %v", err)
	}
	ts.Session = cs
	tb.Cleanup(ts.Close)
	return ts
}

// recordSessions returns h, noting the ID of each stateful session a request
// names, so that Close can end the sessions this harness opened and no
// other: the SDK server may be serving other transports too. A client names
// its session on every request after initialize.
func (s *Server) recordSessions(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			s.mu.Lock()
			s.sessionIDs[id] = true
			s.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// clientFor returns the HTTP client the harness connects with: opts's, or
// base, sending opts's headers and token.
func clientFor(base *http.Client, opts *Options) *http.Client {
	c := base
	if opts.HTTPClient != nil {
		c = opts.HTTPClient
	}
	h := opts.Header.Clone()
	if opts.Token != "" {
		if h == nil {
			h = http.Header{}
		}
		h.Set("Authorization", "Bearer "+opts.Token)
	}
	if len(h) == 0 {
		return c
	}
	c2 := *c
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c2.Transport = &withHeader{header: h, next: next}
	return &c2
}

// withHeader adds its headers to every request.
type withHeader struct {
	header http.Header
	next   http.RoundTripper
}

func (t *withHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper must not modify the request
	for k, vs := range t.header {
		req.Header[k] = append(req.Header[k], vs...)
	}
	return t.next.RoundTrip(req)
}

// CloseIdleConnections lets [http.Client.CloseIdleConnections] reach the
// wrapped transport.
func (t *withHeader) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func newClient(opts *Options) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpkittest", Version: "1"}, opts.Client)
	if opts.ClientSetup != nil {
		opts.ClientSetup(c)
	}
	return c
}

// Connect opens one more client session to an HTTP test server, with the
// same client options and protocol version as the first. The caller closes
// it. It fails for an in-memory server, whose transport carries one session.
func (s *Server) Connect(ctx context.Context) (*mcp.ClientSession, error) {
	if s.http == nil {
		return nil, fmt.Errorf("mcpkittest: Connect: an in-memory server has one session")
	}
	t := &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: s.httpClient, MaxRetries: s.retries}
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

// Close closes the client session, stops the HTTP server, and ends the
// server's side of every session the harness opened (also those of
// [Server.Connect] that the caller left open), in that order. When it
// returns, no request of the harness is being served and no goroutine of
// those sessions runs, so a test may inspect what the tools recorded
// without racing them. A tool call still running when Close is called has
// its context cancelled and is waited for. Close is safe to call more than
// once; the test's cleanup calls it too.
func (s *Server) Close() {
	s.close.Do(func() {
		if s.Session != nil {
			s.Session.Close()
		}
		if s.http != nil {
			s.http.CloseClientConnections()
			s.http.Close() // waits for every handler to return
			s.httpClient.CloseIdleConnections()
		}
		if s.memSession != nil {
			s.memSession.Close()
			s.memSession.Wait()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for ss := range s.server.Sessions() {
			if ss.ID() != "" && s.sessionIDs[ss.ID()] {
				ss.Close()
				ss.Wait()
			}
		}
	})
}

// A RequestOption sets something a transport would carry on a Request that
// [NewRequest] or [ServeTool] builds. Options apply in order; a later one of
// the same kind replaces an earlier one.
type RequestOption interface {
	apply(*mcp.CallToolRequest)
}

type requestOptionFunc func(*mcp.CallToolRequest)

func (f requestOptionFunc) apply(c *mcp.CallToolRequest) { f(c) }

// WithHeader gives the request a copy of the HTTP headers h, as the
// streamable HTTP transport would.
func WithHeader(h http.Header) RequestOption {
	h = h.Clone()
	return requestOptionFunc(func(c *mcp.CallToolRequest) { extra(c).Header = h.Clone() })
}

// WithTokenInfo gives the request the verified bearer token info, as the
// SDK's bearer-token middleware would.
func WithTokenInfo(info *auth.TokenInfo) RequestOption {
	return requestOptionFunc(func(c *mcp.CallToolRequest) { extra(c).TokenInfo = info })
}

// WithMeta gives the request a copy of the _meta object m (a progress
// token, say).
func WithMeta(m mcp.Meta) RequestOption {
	m = maps.Clone(m)
	return requestOptionFunc(func(c *mcp.CallToolRequest) { c.Params.Meta = maps.Clone(m) })
}

func extra(c *mcp.CallToolRequest) *mcp.RequestExtra {
	if c.Extra == nil {
		c.Extra = &mcp.RequestExtra{}
	}
	return c.Extra
}

// placeholder is the tool of a Request built without one.
var placeholder = &mcpkit.Tool{Tool: mcp.Tool{Name: "test", InputSchema: map[string]any{"type": "object"}}}

// NewRequest returns a Request for tool with args marshalled as its
// arguments, for calling a Handler or Middleware directly in a unit test.
// A nil tool is replaced by a placeholder tool named "test", since a
// Request always has a Tool. Its Call has no session and, unless opts say
// otherwise, no headers, token or _meta. NewRequest panics if args cannot be
// marshalled, which is a bug in the test.
func NewRequest(tool *mcpkit.Tool, args any, opts ...RequestOption) *mcpkit.Request {
	raw := marshalArgs(args)
	if tool == nil {
		tool = placeholder
	}
	call := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool.Name, Arguments: raw}}
	for _, o := range opts {
		o.apply(call)
	}
	return &mcpkit.Request{Tool: tool, Arguments: raw, Call: call}
}

func marshalArgs(args any) json.RawMessage {
	switch a := args.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return a
	case []byte:
		return a
	}
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("mcpkittest: %v", err))
	}
	return b
}

// ServeTool runs the full chain of the tool called name on srv (the
// server-wide middleware, the tool's own, validation and the handler) with
// args, without a transport, and returns what the chain returned: the Go
// error a middleware or handler produced, before the server maps it onto
// the wire (see [mcpkit.Classify] for what the client would get). An unknown
// name gives the server's unknown-tool error.
func ServeTool(ctx context.Context, srv *mcpkit.Server, name string, args any, opts ...RequestOption) (*mcp.CallToolResult, error) {
	for {
		// The chain and the tool are read separately: read the tool on
		// both sides of the chain, so that a tool replaced meanwhile
		// does not pair one version's chain with another's definition.
		tool, ok := srv.Lookup(name)
		if !ok {
			return nil, mcpkit.NewUnknownToolError(name)
		}
		h, ok := srv.Handler(name)
		if again, _ := srv.Lookup(name); ok && again == tool {
			return h.ServeTool(ctx, NewRequest(tool, args, opts...))
		}
	}
}

// ForEachTransport runs f as a subtest once per transport the harness has:
// "inmemory", "stateful" (streamable HTTP, [StatefulVersion]) and
// "stateless" (streamable HTTP, [StatelessVersion]), in that order and one
// after the other. Each subtest gets a new server from newServer, so that
// what one transport did (its sessions, their notifications, registry
// changes and state the tools keep) cannot show in another's results. Opts,
// which may be nil, apply to each; those about HTTP do nothing in memory.
func ForEachTransport(t *testing.T, newServer func(t *testing.T) *mcpkit.Server, f func(t *testing.T, ts *Server), opts *Options) {
	t.Helper()
	for _, tr := range []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *Options) *Server
	}{
		{"inmemory", NewInMemoryServer},
		{"stateful", NewServer},
		{"stateless", NewStatelessServer},
	} {
		t.Run(tr.name, func(t *testing.T) {
			f(t, tr.connect(t, newServer(t), opts))
		})
	}
}

// An Era is a way to connect a client of one protocol era to a server, for
// tests that connect several clients (a guest and an admin, a client with a
// capability and one without) to one server on each era: see [Eras].
type Era struct {
	// Name is the protocol version the era's clients negotiate.
	Name string
	// Connect connects a new client to srv, as the constructors do; opts
	// may be nil, and its ProtocolVersion is the era's whatever it says.
	Connect func(tb testing.TB, srv *mcpkit.Server, opts *Options) *Server
}

// Eras returns the two protocol eras a server serves on one endpoint:
// [StatefulVersion] over the in-memory transports (a session; no HTTP) and
// [StatelessVersion] over streamable HTTP, statelessly.
//
//	for _, era := range mcpkittest.Eras() {
//		t.Run(era.Name, func(t *testing.T) {
//			guest := era.Connect(t, srv, nil)
//			admin := era.Connect(t, srv, adminOptions)
//			...
//		})
//	}
func Eras() []Era {
	with := func(opts *Options, version string) *Options {
		o := Options{}
		if opts != nil {
			o = *opts
		}
		o.ProtocolVersion = version
		return &o
	}
	return []Era{
		{StatefulVersion, func(tb testing.TB, srv *mcpkit.Server, opts *Options) *Server {
			tb.Helper()
			return NewInMemoryServer(tb, srv, with(opts, StatefulVersion))
		}},
		{StatelessVersion, func(tb testing.TB, srv *mcpkit.Server, opts *Options) *Server {
			tb.Helper()
			return NewStatelessServer(tb, srv, with(opts, StatelessVersion))
		}},
	}
}
