package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/skills"
)

// A Dial opens a new transport to the upstream server. The [Upstream]
// calls it to connect, and again to reconnect after the upstream went
// away, so it must return a fresh transport each time (an
// [mcp.CommandTransport] starts its command once). [HTTP] and [Command]
// return one; an in-memory transport or any other [mcp.Transport] fits
// too.
type Dial func(ctx context.Context) (mcp.Transport, error)

// Defaults of [Options].
const (
	// DefaultTimeout is the time limit of a forwarded call.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxResultBytes bounds the JSON of a forwarded call's result
	// that reaches the client.
	DefaultMaxResultBytes = 1 << 20
	// DefaultMaxPages bounds the pages of one tools/list of the upstream,
	// so that an upstream that answers with cursors forever cannot hold a
	// refresh.
	DefaultMaxPages = 1000
)

// Options configures an [Upstream]. A nil *Options means the defaults.
type Options struct {
	// Name names the upstream in errors, logs and its circuit; empty means
	// the name the upstream gives itself, or "upstream".
	Name string

	// Prefix is put before the name of each of the upstream's tools and
	// prompts, as they are served locally ("crm_" makes "search"
	// crm_search). The names it makes must be valid tool names: a tool or
	// prompt whose name is not is left out, and reported (see
	// [Upstream.Problems]). A catalog transform of the local server that
	// renames tools leaves provided tools out, so this is how proxied
	// tools get a namespace. Resource URIs are served as they are.
	Prefix string

	// Timeout limits each forwarded call (middleware.Timeout); zero means
	// DefaultTimeout, negative means no limit.
	Timeout time.Duration

	// MaxConcurrent bounds the calls forwarded at once to this upstream,
	// over all its tools (middleware.ConcurrencyLimit); zero or less means
	// no bound. A call beyond it is refused at once with a retryable tool
	// error and a retry hint.
	MaxConcurrent int

	// Breaker configures the upstream's circuit breaker
	// (middleware.CircuitBreaker), one circuit for all its tools, keyed
	// on Name: failures are unreachable upstreams, upstream protocol
	// errors and timeouts. Nil means the breaker's defaults; its Key is
	// always the upstream's.
	Breaker *middleware.CircuitBreakerOptions

	// NoBreaker turns the circuit breaker off.
	NoBreaker bool

	// MaxResultBytes bounds the JSON of a forwarded result
	// (middleware.ResultSizeLimit): a larger one is refused with a
	// retryable tool error. Zero means DefaultMaxResultBytes, negative no
	// bound. It bounds what the local client gets; [HTTPOptions] bounds
	// what the proxy reads.
	MaxResultBytes int

	// Validation is how calls to the upstream's tools are validated
	// locally, against the input schema the upstream advertises, before
	// they leave; the zero value keeps the local server's mode.
	Validation mcpkit.ValidationMode

	// Unenforceable is the validation of a tool whose schemas the local
	// validator cannot compile (a keyword it does not know how to
	// enforce, a remote $ref). The zero value leaves such a tool out;
	// [mcpkit.NoValidation] serves it unchecked, and the upstream checks
	// its arguments itself. Either way the tool is reported by
	// [Upstream.Problems] and logged.
	Unenforceable mcpkit.ValidationMode

	// DropWhenDown leaves the upstream's tools out of the local catalog
	// while the upstream cannot be reached, instead of listing the last
	// catalog it gave (calls to its tools fail with a retryable error
	// either way).
	DropWhenDown bool

	// Credentials, if set, returns headers for one forwarded call, sent to
	// an upstream reached by [HTTP] in addition to (or instead of) the
	// proxy's own [HTTPOptions.Header]: to exchange the caller's identity
	// for a token the upstream accepts, or to mint one per principal (key
	// it on [mcpkit.VerifiedPrincipal], which a caller cannot choose).
	// The caller's own token is never forwarded: the MCP authorization
	// specification forbids passing a client's token through, and the
	// proxy's requests to the upstream are its own. An error fails the
	// call with a retryable error that does not reach the upstream.
	Credentials func(ctx context.Context, req *mcpkit.Request) (http.Header, error)

	// TargetCredentials is Credentials for what is not a tool call: a
	// forwarded prompts/get, resources/read or completion/complete, and
	// the skills/list of [Upstream.ListSkills]. c is the local request (a
	// *mcpkit.PromptRequest, *mcpkit.ResourceRequest or
	// *mcpkit.CompleteRequest; the caller of a skills/list or skills/get)
	// and t what it reaches (the *mcpkit.Prompt, *mcpkit.Resource or
	// *mcpkit.ResourceTemplate; nil for a skills/list). When Credentials is
	// set and TargetCredentials is not, such requests are refused, with a
	// fatal error that does not reach the upstream, rather than sent with
	// the proxy's own credentials alone.
	TargetCredentials func(ctx context.Context, c mcpkit.Caller, t mcpkit.Target) (http.Header, error)

	// MaxSessions bounds the sessions the proxy keeps open with an
	// upstream that keeps sessions, one per caller: per verified principal
	// ([mcpkit.VerifiedPrincipal]), or per set of [Options.Credentials]
	// headers for a caller without one. A caller keeps its session when
	// its credentials change (an exchanged token renewed): each call
	// carries its own on its own request. Such an upstream binds a session to the user who opened it
	// and refuses any other's calls on it ("session user mismatch"), so a
	// call with credentials of its own goes on a session opened with them
	// (its first call waits for the upstream's initialize). Past the bound
	// the session let go the longest ago is closed; when every one is
	// serving a call, the call is refused with a retryable error
	// ([ErrTooManySessions]). Zero means DefaultMaxSessions. An upstream
	// without sessions (protocol 2026-07-28, or a stateless endpoint)
	// serves every caller on the proxy's one connection.
	MaxSessions int

	// SessionIdle is how long a caller's session (see MaxSessions) stays
	// open with no call; zero means DefaultSessionIdle.
	SessionIdle time.Duration

	// ProtocolVersion is the protocol version the proxy's client asks the
	// upstream for; empty means the newest the SDK speaks (2026-07-28),
	// which falls back to what an older upstream supports.
	ProtocolVersion string

	// Logger receives what the upstream does that the caller of New does
	// not see: tools left out, reconnections, failed refreshes. Nil means
	// no logging.
	Logger *slog.Logger

	// Middleware runs inside the upstream's own limits, around every
	// forwarded call, after the local server's middleware and before
	// local validation.
	Middleware []mcpkit.Middleware
}

// An Upstream is a remote MCP server served through a local
// [mcpkit.Server]: its tools are listed and called as the local server's
// own, through the local pipeline (middleware, visibility, validation,
// tracing, the error table), with the upstream's own limits (timeout,
// concurrency, circuit breaker) inside it.
//
// The tools, prompts, resources and templates come from the upstream's
// catalog, read page by page at connection and each kind again whenever
// the upstream sends its notifications/…/list_changed; lists answer from
// that copy and never wait for the upstream. An Upstream is a
// [mcpkit.Provider], a [mcpkit.PromptProvider] and a
// [mcpkit.ResourceProvider]; [Upstream.AddTo] adds it to a server and
// tells that server of every change of the catalog.
//
// Create one with [New] and end it with [Upstream.Close]. An Upstream is
// safe for concurrent use.
type Upstream struct {
	name   atomic.Pointer[string] // see Name
	dial   Dial
	opts   Options
	client *mcp.Client
	logger *slog.Logger
	mw     []mcpkit.Middleware

	catalog atomic.Pointer[catalog]

	mu        sync.Mutex
	session   *mcp.ClientSession // nil while disconnected
	connected time.Time          // when the last session connected
	down      bool               // the last attempt to reach the upstream failed
	closed    bool
	servers   []*mcpkit.Server

	// connecting is the connection attempt under way, nil when none is.
	connecting *attempt

	refresh    chan struct{}   // a catalog refresh is wanted (buffered, 1)
	stale      atomic.Uint32   // the kinds the refresh reads (kindTools, ...)
	done       chan struct{}   // closed by Close
	ctx        context.Context // the values of New's context; cancelled by Close
	cancel     context.CancelFunc
	loops      sync.WaitGroup
	sessions   *sessions   // per-caller sessions, for an upstream that keeps sessions
	streamable atomic.Bool // the Dial's transport is streamable HTTP
	clock      clock       // the time of the reconnections and retries
}

// A clock tells the time and waits: the real one, or a test's.
type clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// systemClock is the real clock.
type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// catalog is one copy of the upstream's tools, prompts, resources and
// templates, as served locally: each sorted by its key, with an index,
// and what was wrong with them (see Problems). It is never modified once
// stored, but for the cache of resources made for the files of skills.
type catalog struct {
	tools        []*mcpkit.Tool
	byName       map[string]*mcpkit.Tool
	toolProblems []error

	prompts        []*mcpkit.Prompt // sorted by name
	byPrompt       map[string]*mcpkit.Prompt
	promptProblems []error

	resources        []*mcpkit.Resource // sorted by URI
	byURI            map[string]*mcpkit.Resource
	templates        []*mcpkit.ResourceTemplate // sorted by text
	matchers         []*matcher                 // the templates in the order they match
	made             *madeCache                 // the resources made for the files of skills
	resourceProblems []error

	completes bool // the upstream declares completions

	skills     bool            // the upstream declares the Skills extension
	skillRoots map[string]bool // the directories of its SKILL.md resources, each with a final "/"
}

// ErrClosed is returned by the calls of an [Upstream] that was closed.
var ErrClosed = errors.New("proxy: upstream closed")

// New returns the Upstream serving the tools of the server that dial
// reaches. It connects and reads the catalog before it returns, within
// ctx and [Options.Timeout]; an upstream that is down, hangs or fails then
// is not an error: New logs it and returns an Upstream with no tools yet,
// which keeps trying in the background (from one second apart, doubling
// up to a minute) and tells the servers it was added to when its tools
// appear. New fails only on a nil dial or an error of dial itself (a
// command that cannot start). Only the context's values are kept past
// New's return, and the proxy's own connection carries no others.
func New(ctx context.Context, dial Dial, opts *Options) (*Upstream, error) {
	return newUpstream(ctx, dial, opts, systemClock{})
}

// newUpstream is New with the clock the Upstream's background work keeps
// time by.
func newUpstream(ctx context.Context, dial Dial, opts *Options, clk clock) (*Upstream, error) {
	if dial == nil {
		return nil, errors.New("proxy: New: nil dial")
	}
	u := &Upstream{dial: dial, refresh: make(chan struct{}, 1), done: make(chan struct{}), clock: clk}
	u.ctx, u.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if opts != nil {
		u.opts = *opts
	}
	u.logger = u.opts.Logger
	if u.logger == nil {
		u.logger = slog.New(slog.DiscardHandler)
	}
	u.client = mcp.NewClient(&mcp.Implementation{Name: "mcpkit-proxy", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { u.wantRefresh(kindTools) },
		PromptListChangedHandler:    func(context.Context, *mcp.PromptListChangedRequest) { u.wantRefresh(kindPrompts) },
		ResourceListChangedHandler:  func(context.Context, *mcp.ResourceListChangedRequest) { u.wantRefresh(kindResources) },
		ProgressNotificationHandler: u.onProgress,
		// input_required results reach the proxy as they are, to be passed
		// to the local client (see Upstream's documentation).
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		// Advertised so that the upstream's tools may ask for input, which
		// the local client answers; see elicit.
		ElicitationHandler: u.elicit,
	})
	u.client.AddSendingMiddleware(uncachedReads)
	if err := mcp.AddSendingCustomMethod[*skills.ListParams, *skills.ListResult](u.client, skills.MethodList); err != nil {
		u.cancel()
		return nil, fmt.Errorf("proxy: New: %w", err)
	}
	u.sessions = newSessions(u)
	name := u.opts.Name
	if name == "" {
		name = "upstream" // until the upstream says its own
	}
	u.name.Store(&name)
	u.mw = u.middleware()

	// The first attempt is the proxy's own (see current), and New waits for
	// it, and for the catalog, at most Timeout and as long as ctx allows.
	own, cancel := u.ownContext()
	stop := context.AfterFunc(ctx, cancel)
	cs, err := u.current(own)
	var dialErr *dialError
	if errors.As(err, &dialErr) {
		stop()
		cancel()
		u.Close()
		return nil, err
	}
	if err == nil {
		var failed uint32
		failed, err = u.load(own, cs, allKinds)
		if u.catalog.Load() != nil {
			// Served: what failed is read again at the next refresh.
			u.stale.Or(failed)
			if err != nil {
				u.logger.Warn("proxy: could not read all of the upstream's catalog", "upstream", u.Name(), "error", err)
			}
			err = nil
		}
	}
	stop()
	cancel()
	if err != nil {
		u.logger.Warn("proxy: the upstream is not served yet; trying again in the background", "upstream", u.Name(), "error", err)
	}
	u.loops.Add(1)
	go u.refreshLoop(err != nil)
	return u, nil
}

// ownContext returns the context of one of the proxy's own exchanges with
// the upstream (a connection, a catalog read): the values of New's context
// only, cancelled by Close, bounded by [Options.Timeout].
func (u *Upstream) ownContext() (context.Context, context.CancelFunc) {
	if d := u.opts.Timeout; d >= 0 {
		return context.WithTimeout(u.ctx, cmp.Or(d, DefaultTimeout))
	}
	return context.WithCancel(u.ctx)
}

// middleware returns the layers every proxied tool runs, outermost first:
// the circuit breaker, the concurrency limit, the timeout, the result size
// limit, then the user's.
func (u *Upstream) middleware() []mcpkit.Middleware {
	var mw []mcpkit.Middleware
	if !u.opts.NoBreaker {
		var b middleware.CircuitBreakerOptions
		if u.opts.Breaker != nil {
			b = *u.opts.Breaker
		}
		b.Key = func(*mcpkit.Request) string { return u.Name() }
		mw = append(mw, middleware.CircuitBreaker(&b))
	}
	if u.opts.MaxConcurrent > 0 {
		mw = append(mw, middleware.ConcurrencyLimit(u.opts.MaxConcurrent, nil))
	}
	timeout := u.opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout > 0 {
		mw = append(mw, middleware.Timeout(timeout, &middleware.TimeoutOptions{Logger: u.opts.Logger}))
	}
	size := u.opts.MaxResultBytes
	if size == 0 {
		size = DefaultMaxResultBytes
	}
	if size > 0 {
		mw = append(mw, middleware.ResultSizeLimit(size, nil))
	}
	return append(mw, u.opts.Middleware...)
}

// Name returns the upstream's name, as errors and logs give it:
// [Options.Name], or else the name the upstream gives itself once the
// proxy has reached it ("upstream" until then).
func (u *Upstream) Name() string { return *u.name.Load() }

// AddTo adds u to srv as a [mcpkit.Provider] and tells srv of every later
// change of u's catalog (with [mcpkit.Server.ProviderChanged]), so that
// srv's listening clients hear of it. u may be added to several servers.
func (u *Upstream) AddTo(srv *mcpkit.Server) {
	u.mu.Lock()
	u.servers = append(u.servers, srv)
	u.mu.Unlock()
	srv.AddProvider(u)
}

// Problems returns what was wrong with the upstream's catalog when it was
// last read: a tool whose name is not valid once prefixed, whose schema is
// not a valid input schema, or whose schema the local validator cannot
// enforce; a prompt whose name is not valid once prefixed or whose
// arguments are not named once each; a resource whose URI is not absolute;
// a template that does not compile. Each error names what it is about.
func (u *Upstream) Problems() []error {
	c := u.catalog.Load()
	if c == nil {
		return nil
	}
	return slices.Concat(c.toolProblems, c.promptProblems, c.resourceProblems)
}

// ListTools returns the tools of the last catalog read from the upstream,
// sorted by name, after the name after and at most limit of them (see
// [mcpkit.Provider]). It never waits for the upstream, and never fails:
// while the upstream is down it answers from the last catalog, or with
// nothing when [Options.DropWhenDown] is set.
func (u *Upstream) ListTools(_ context.Context, _ mcpkit.Caller, after string, limit int) ([]*mcpkit.Tool, error) {
	c := u.served()
	if c == nil {
		return nil, nil
	}
	i, _ := slices.BinarySearchFunc(c.tools, after, func(t *mcpkit.Tool, name string) int { return strings.Compare(t.Name, name) })
	for i < len(c.tools) && c.tools[i].Name <= after {
		i++
	}
	out := c.tools[i:]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return slices.Clip(out), nil
}

// LookupTool returns the tool called name in the last catalog read from
// the upstream, or nil (see [mcpkit.Provider]).
func (u *Upstream) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	if c := u.served(); c != nil {
		return c.byName[name], nil
	}
	return nil, nil
}

// served returns the catalog to serve, nil when there is none to serve.
func (u *Upstream) served() *catalog {
	if u.opts.DropWhenDown {
		u.mu.Lock()
		down := u.down
		u.mu.Unlock()
		if down {
			return nil
		}
	}
	return u.catalog.Load()
}

// Close ends the connection to the upstream and the Upstream's
// goroutines. Its tools stay listed from the last catalog (or not, with
// [Options.DropWhenDown]), and their calls fail with [ErrClosed].
func (u *Upstream) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	cs := u.session
	u.session = nil
	close(u.done)
	u.mu.Unlock()
	u.cancel()
	var err error
	if cs != nil {
		err = cs.Close()
	}
	u.sessions.close()
	u.loops.Wait()
	return err
}

// A dialError is the failure of the Dial itself, as opposed to the
// upstream's: [New] returns it.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// connect dials the upstream and connects the proxy's client to it, as
// the current session. ctx must be one of the proxy's own (see
// ownContext): the SDK keeps its values for the session's life, and sends
// its requests (initialize, discovery, the event stream) with them.
func (u *Upstream) connect(ctx context.Context) (*mcp.ClientSession, error) {
	cs, err := u.dialSession(ctx, nil)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		cs.Close()
		return nil, ErrClosed
	}
	old := u.session
	u.session = cs
	u.connected = u.clock.Now()
	wasDown := u.down
	u.down = false
	u.mu.Unlock()
	if old != nil {
		go old.Close()
	}
	if u.opts.Name == "" {
		if r := cs.InitializeResult(); r != nil && r.ServerInfo != nil && r.ServerInfo.Name != "" {
			name := r.ServerInfo.Name
			u.name.Store(&name)
		}
	}
	if wasDown {
		u.wantRefresh(allKinds)
		if u.opts.DropWhenDown && u.catalog.Load() != nil {
			// The last catalog is served again. With none yet, nothing
			// changed: the read that wantRefresh asks for tells of the
			// tools once they are there, and an earlier notification
			// would have clients list none.
			u.changed()
		}
	}
	return cs, nil
}

// dialSession dials the upstream and connects a client session to it,
// with the headers h on each of its requests when h is not empty (a
// caller's session, see sessions), and without an event stream of its
// own then.
func (u *Upstream) dialSession(ctx context.Context, h http.Header) (*mcp.ClientSession, error) {
	t, err := u.dial(ctx)
	if err != nil {
		return nil, &dialError{fmt.Errorf("proxy: dial %s: %w", u.label(), err)}
	}
	st, streamable := t.(*mcp.StreamableClientTransport)
	u.streamable.Store(streamable)
	if !streamable {
		t = countingTransport{t}
	}
	if len(h) > 0 {
		ctx = context.WithValue(ctx, credentialsKey{}, h)
		if streamable {
			st.DisableStandaloneSSE = true
		}
	}
	var copts *mcp.ClientSessionOptions
	if u.opts.ProtocolVersion != "" {
		copts = &mcp.ClientSessionOptions{ProtocolVersion: u.opts.ProtocolVersion}
	}
	cs, err := u.client.Connect(ctx, t, copts)
	if err != nil {
		return nil, fmt.Errorf("proxy: connect to %s: %w", u.label(), err)
	}
	return cs, nil
}

// label names the upstream in errors.
func (u *Upstream) label() string {
	return fmt.Sprintf("upstream %q", u.Name())
}

// startWatch watches cs until it ends, unless u is closed.
func (u *Upstream) startWatch(cs *mcp.ClientSession) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	u.loops.Add(1)
	go u.watch(cs)
}

// watch waits for the session to end (the upstream's process exited, its
// stream broke), and marks the upstream down if it is still the current
// session.
func (u *Upstream) watch(cs *mcp.ClientSession) {
	defer u.loops.Done()
	cs.Wait()
	u.lost(cs)
}

// lost forgets cs, when it is the current session, so that the next call
// connects again, and marks the upstream down. It closes cs without
// waiting: closing waits for the calls in flight on it.
func (u *Upstream) lost(cs *mcp.ClientSession) {
	u.mu.Lock()
	if u.session != cs || u.closed {
		u.mu.Unlock()
		return
	}
	u.session = nil
	wasDown := u.down
	u.down = true
	u.mu.Unlock()
	go cs.Close()
	u.logger.Warn("proxy: lost the upstream", "upstream", u.Name())
	if !wasDown && u.opts.DropWhenDown && u.catalog.Load() != nil {
		u.changed()
	}
	u.wantRefresh(allKinds) // reconnect in the background
}

// An attempt is one connection attempt, which callers share.
type attempt struct {
	done chan struct{} // closed when the attempt ends
	cs   *mcp.ClientSession
	err  error
}

// current returns the session to send a call on. When there is none, it
// starts a connection attempt, or joins the one under way, and waits for
// it as long as ctx allows. The attempt is the proxy's own: it runs on
// the proxy's context, with its protocol version and credentials, never
// the caller's, and goes on when the caller stops waiting.
func (u *Upstream) current(ctx context.Context) (*mcp.ClientSession, error) {
	u.mu.Lock()
	switch {
	case u.closed:
		u.mu.Unlock()
		return nil, ErrClosed
	case u.session != nil:
		cs := u.session
		u.mu.Unlock()
		return cs, nil
	}
	a := u.connecting
	if a == nil {
		a = &attempt{done: make(chan struct{})}
		u.connecting = a
		go u.reconnect(a)
	}
	u.mu.Unlock()
	select {
	case <-a.done:
		return a.cs, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// reconnect makes the connection attempt a. Close does not wait for it:
// the SDK may hold a connection attempt to a hung upstream for a while
// after its context ends, and a session it makes after Close is closed.
func (u *Upstream) reconnect(a *attempt) {
	ctx, cancel := u.ownContext()
	defer cancel()
	a.cs, a.err = u.connect(ctx)
	if a.err == nil {
		u.startWatch(a.cs)
	}
	u.mu.Lock()
	u.connecting = nil
	if a.err != nil && !u.closed {
		u.down = true
	}
	u.mu.Unlock()
	close(a.done)
}

// changed tells the servers u was added to that its catalog changed.
func (u *Upstream) changed() {
	u.mu.Lock()
	servers := slices.Clone(u.servers)
	u.mu.Unlock()
	for _, s := range servers {
		s.ProviderChanged("")
	}
}
