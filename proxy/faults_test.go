package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
)

// A site is an upstream's address, where a server can be stopped (the
// port refuses connections) and started again (a restart: a new server,
// which knows none of the old one's sessions). It records each request's
// JSON-RPC method (or HTTP method when it carries none) and headers.
type site struct {
	t    *testing.T
	addr string

	mu   sync.Mutex
	srv  *http.Server
	seen []seenRequest
}

type seenRequest struct {
	method  string // the JSON-RPC method, or "GET", "DELETE", "response"
	auth    string // the Authorization header
	version string // the Mcp-Protocol-Version header
	session string // the Mcp-Session-Id header
}

// newSite reserves a loopback address and serves h there, unless h is nil
// (the upstream is down at start).
func newSite(t *testing.T, h http.Handler) *site {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &site{t: t, addr: ln.Addr().String()}
	ln.Close()
	if h != nil {
		s.start(h)
	}
	t.Cleanup(s.stop)
	return s
}

func (s *site) url() string { return "http://" + s.addr }

// start serves h at the site's address.
func (s *site) start(h http.Handler) {
	s.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the old listener's port may take a moment to free
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	srv := &http.Server{Handler: s.record(h)}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go srv.Serve(ln)
}

// stop ends the server and its connections: the port refuses.
func (s *site) stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

func (s *site) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Method
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct{ Method string }
			json.Unmarshal(body, &msg)
			method = cmpOr(msg.Method, "response")
		}
		s.mu.Lock()
		s.seen = append(s.seen, seenRequest{method, r.Header.Get("Authorization"), r.Header.Get("Mcp-Protocol-Version"), r.Header.Get("Mcp-Session-Id")})
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *site) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// sdkUpstream is a plain go-sdk server with its defaults (sessions), behind
// the SDK's bearer-token check: "proxy-own" is the proxy's user, and
// "minted-for-X" the user X. Its echo tool says which user called it; wait
// holds until released; huge answers n bytes.
func sdkUpstream(release <-chan struct{}, started chan<- string) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "crm", Version: "1"}, nil)
	user := func(req *mcp.CallToolRequest) string {
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			return req.Extra.TokenInfo.UserID
		}
		return "nobody"
	}
	type echoIn struct {
		Say string `json:"say"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprintf("echo: %s (%s)", in.Say, user(req))), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- user(req)
		select {
		case <-release:
			return text("released"), nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	type hugeIn struct {
		N int `json:"n"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "huge"}, func(_ context.Context, _ *mcp.CallToolRequest, in hugeIn) (*mcp.CallToolResult, any, error) {
		return text(strings.Repeat("x", in.N)), nil, nil
	})
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		switch {
		case token == "proxy-own":
			return &auth.TokenInfo{UserID: "proxy", Expiration: time.Now().Add(time.Hour)}, nil
		case strings.HasPrefix(token, "minted-for-"):
			return &auth.TokenInfo{UserID: strings.TrimPrefix(token, "minted-for-"), Expiration: time.Now().Add(time.Hour)}, nil
		}
		return nil, auth.ErrInvalidToken
	}
	return auth.RequireBearerToken(verify, nil)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

// gatewayOptions are the proxy's options of these tests: its own token,
// one minted per verified caller, the older protocol (so that the
// upstream keeps sessions), no breaker (so that a failure is the
// upstream's, not the circuit's).
func gatewayOptions() *proxy.Options {
	return &proxy.Options{
		Prefix:          "crm_",
		ProtocolVersion: "2025-11-25",
		NoBreaker:       true,
		Credentials: func(_ context.Context, req *mcpkit.Request) (http.Header, error) {
			if p := mcpkit.VerifiedPrincipal(req); p != "" {
				return http.Header{"Authorization": {"Bearer minted-for-" + strings.TrimPrefix(p, "sub:")}}, nil
			}
			return nil, nil
		},
	}
}

var gatewayTokens = map[string]*auth.TokenInfo{
	"ada-secret":   {UserID: "ada", Expiration: time.Now().Add(24 * time.Hour)},
	"bob-secret":   {UserID: "bob", Expiration: time.Now().Add(24 * time.Hour)},
	"carol-secret": {UserID: "carol", Expiration: time.Now().Add(24 * time.Hour)},
}

// gatewayClient serves local to a 2026-07-28 client sending token.
func gatewayClient(t *testing.T, local *mcpkit.Server, token string) *mcpkittest.Server {
	return mcpkittest.NewStatelessServer(t, local, &mcpkittest.Options{Tokens: gatewayTokens, Token: token})
}

// TestProxyReconnectIsItsOwn restarts an upstream under a 2026-07-28
// client. The proxy reconnects on its own context: its initialize carries
// the protocol version it speaks with the upstream (the SDK's default
// upstream refuses a header that disagrees with the body), and its
// catalog reads, initialize and event stream carry its own credentials,
// never a caller's. The first call after the upstream is back is served.
func TestProxyReconnectIsItsOwn(t *testing.T) {
	for _, minted := range []bool{false, true} {
		t.Run(fmt.Sprintf("minted=%v", minted), func(t *testing.T) {
			release, started := make(chan struct{}), make(chan string, 4)
			s := newSite(t, sdkUpstream(release, started))
			opts, caller := gatewayOptions(), "ada"
			if !minted {
				opts.Credentials, caller = nil, "proxy"
			}
			up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), opts)
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			ts := gatewayClient(t, local, "ada-secret")
			ctx := t.Context()

			if res, err := ts.CallTool(ctx, "crm_echo", map[string]any{"say": "hi"}); err != nil || resultText(res) != "echo: hi ("+caller+")" {
				t.Fatalf("before the restart: %v, %v (%s)", res, err, resultText(res))
			}
			s.stop()
			res, err := ts.CallTool(ctx, "crm_echo", map[string]any{"say": "down"})
			if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
				t.Fatalf("while down: %v, %v (%s); want a retryable error", res, err, resultText(res))
			}
			s.start(sdkUpstream(release, started))
			// A call the upstream refuses for the forgotten session is sent
			// again on a new one; a call that finds the proxy's connection
			// failed a moment before (its event stream broke while the
			// upstream was away) gets a retryable error, and the next is
			// served.
			for try := 1; ; try++ {
				res, err := ts.CallTool(ctx, "crm_echo", map[string]any{"say": "again"})
				if err == nil && resultText(res) == "echo: again ("+caller+")" {
					break
				}
				if try == 2 || err != nil || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
					t.Fatalf("call %d after the restart: %v, %v (%s)", try, res, err, resultText(res))
				}
			}

			// The proxy's own session is reconnected by the call, or in the
			// background once the proxy sees the old one end.
			for deadline := time.Now().Add(15 * time.Second); ownInits(s) < 2 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			inits := 0
			for _, r := range s.requests() {
				if r.version != "" && r.version != "2025-11-25" {
					t.Errorf("%s carried Mcp-Protocol-Version %q; want the proxy's own, 2025-11-25", r.method, r.version)
				}
				switch r.method {
				case "tools/list", "GET":
					if r.auth != "Bearer proxy-own" {
						t.Errorf("%s carried %q; want the proxy's own credentials", r.method, r.auth)
					}
				case "tools/call":
					if r.auth != "Bearer minted-for-ada" && minted {
						t.Errorf("a call carried %q; want the caller's minted credentials", r.auth)
					}
				case "initialize":
					if r.auth == "Bearer proxy-own" {
						inits++
					}
				}
				if strings.Contains(r.auth, "secret") {
					t.Errorf("%s carried the caller's own token %q", r.method, r.auth)
				}
			}
			if inits < 2 {
				t.Errorf("the proxy initialized %d sessions of its own; want one before and one after the restart", inits)
			}
		})
	}
}

// TestProxySessionPerCaller serves several callers through an upstream
// that binds each session to its user: each caller's calls go on a
// session opened with its own credentials, within the bound, the least
// recent idle one closed past it, and a caller beyond the bound while all
// are busy gets a retryable error at once.
func TestProxySessionPerCaller(t *testing.T) {
	release, started := make(chan struct{}), make(chan string, 4)
	s := newSite(t, sdkUpstream(release, started))
	opts := gatewayOptions()
	opts.MaxSessions = 2
	up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), opts)
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ctx := t.Context()
	clients := map[string]*mcpkittest.Server{}
	for _, who := range []string{"ada", "bob", "carol"} {
		clients[who] = gatewayClient(t, local, who+"-secret")
	}
	call := func(who string) {
		t.Helper()
		res, err := clients[who].CallTool(ctx, "crm_echo", map[string]any{"say": "hi"})
		if want := "echo: hi (" + who + ")"; err != nil || resultText(res) != want {
			t.Fatalf("%s: %v, %v (%s); want %q", who, res, err, resultText(res), want)
		}
	}
	call("ada")
	call("bob")
	call("ada")
	call("carol") // over the bound: bob's session, the least recent, is closed
	call("bob")

	opened := map[string]int{}
	for _, r := range s.requests() {
		if r.method == "initialize" {
			opened[r.auth]++
		}
	}
	if want := map[string]int{"Bearer proxy-own": 1, "Bearer minted-for-ada": 1, "Bearer minted-for-bob": 2, "Bearer minted-for-carol": 1}; !equalCounts(opened, want) {
		t.Errorf("sessions opened per credentials: %v; want %v", opened, want)
	}
	deleted := func() map[string]int {
		out := map[string]int{}
		for _, r := range s.requests() {
			if r.method == "DELETE" {
				out[r.auth]++
			}
		}
		return out
	}
	for deadline := time.Now().Add(10 * time.Second); deleted()["Bearer minted-for-bob"] == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := deleted(); got["Bearer minted-for-bob"] != 1 || got["Bearer minted-for-ada"] != 1 {
		t.Errorf("sessions ended per credentials: %v; want bob's first session and then ada's, the least recent each time", got)
	}

	// Both sessions busy: a third caller is refused at once, retryably.
	done := make(chan *mcp.CallToolResult, 2)
	for _, who := range []string{"carol", "bob"} {
		go func() {
			res, _ := clients[who].CallTool(ctx, "crm_wait", nil)
			done <- res
		}()
		<-started
	}
	res, err := clients["ada"].CallTool(ctx, "crm_echo", map[string]any{"say": "busy"})
	if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), "too many upstream sessions") {
		t.Errorf("a third caller while both sessions are busy: %v, %v (%s); want a retryable refusal", res, err, resultText(res))
	}
	close(release)
	for range 2 {
		if res := <-done; resultText(res) != "released" {
			t.Errorf("a held call: %s", resultText(res))
		}
	}
}

// ownInits counts the sessions the proxy opened with its own credentials.
func ownInits(s *site) int {
	n := 0
	for _, r := range s.requests() {
		if r.method == "initialize" && r.auth == "Bearer proxy-own" {
			n++
		}
	}
	return n
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestProxyOversizeAnswerAlone answers one call with more than the proxy
// reads while another is in flight on the same connection: the big one
// fails at once with the size and the limit, the other is served.
func TestProxyOversizeAnswerAlone(t *testing.T) {
	for _, ue := range upstreamEras {
		t.Run(ue.version, func(t *testing.T) {
			release, started := make(chan struct{}), make(chan string, 4)
			s := newSite(t, sdkUpstream(release, started))
			opts := gatewayOptions()
			opts.ProtocolVersion = ue.version
			opts.Credentials = nil
			up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxResponseBytes: 64 << 10, MaxRetries: -1}), opts)
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			ts := gatewayClient(t, local, "ada-secret")
			ctx := t.Context()

			held := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, _ := ts.CallTool(ctx, "crm_wait", nil)
				held <- res
			}()
			<-started
			big := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, _ := ts.CallTool(ctx, "crm_huge", map[string]any{"n": 200_000})
				big <- res
			}()
			select {
			case res := <-big:
				if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), "over the proxy's limit of 65536 bytes") {
					t.Errorf("the oversize answer: %s (class %q); want a retryable error naming the limit", resultText(res), mcpkit.ErrorClassOf(res))
				}
			case <-time.After(20 * time.Second): // a safety net: it comes at once
				t.Fatal("the oversize answer's error waits for the call in flight")
			}
			close(release)
			if res := <-held; resultText(res) != "released" {
				t.Errorf("the call in flight: %s; want it served", resultText(res))
			}
			if res, err := ts.CallTool(ctx, "crm_huge", map[string]any{"n": 100}); err != nil || res.IsError {
				t.Errorf("a small answer after: %v, %v (%s)", res, err, resultText(res))
			}
		})
	}
}

// TestProxyDownAtStart starts a gateway while its upstream is down: New
// succeeds, the gateway serves its own tools, and the upstream's appear
// (with list_changed to a listening client) once it comes up, with or
// without DropWhenDown.
func TestProxyDownAtStart(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("DropWhenDown=%v", drop), func(t *testing.T) {
			release, started := make(chan struct{}), make(chan string, 4)
			s := newSite(t, nil)
			opts := gatewayOptions()
			opts.DropWhenDown = drop
			opts.Name = "crm"
			up, err := proxy.New(t.Context(), proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), opts)
			if err != nil {
				t.Fatalf("New with the upstream down: %v", err)
			}
			t.Cleanup(func() { up.Close() })
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			local.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "local_help", InputSchema: objectSchema("")},
				Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("help"), nil })})
			up.AddTo(local)
			changed := make(chan struct{}, 8)
			listening := &streamWatch{next: http.DefaultTransport, open: make(chan struct{})}
			ts := mcpkittest.NewServer(t, local, &mcpkittest.Options{Tokens: gatewayTokens, Token: "ada-secret", HTTPClient: &http.Client{Transport: listening}, Client: &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			}})
			ctx := t.Context()
			// The server drops a notification sent before the client's
			// event stream is open.
			select {
			case <-listening.open:
			case <-time.After(30 * time.Second): // a safety net only
				t.Fatal("the client opened no event stream")
			}
			if got := listed(t, ts); !slices.Equal(got, []string{"local_help"}) {
				t.Errorf("listed %v while the upstream is down; want the local tools", got)
			}
			if res, err := ts.CallTool(ctx, "local_help", nil); err != nil || resultText(res) != "help" {
				t.Errorf("a local tool while the upstream is down: %v, %v", res, err)
			}
			s.start(sdkUpstream(release, started))
			select {
			case <-changed:
			case <-time.After(30 * time.Second): // the first retry is a second after New
				t.Fatal("no list_changed once the upstream came up")
			}
			if got := listed(t, ts); !slices.Equal(got, []string{"crm_echo", "crm_huge", "crm_wait", "local_help"}) {
				t.Errorf("listed %v once the upstream is up", got)
			}
			if res, err := ts.CallTool(ctx, "crm_echo", map[string]any{"say": "up"}); err != nil || resultText(res) != "echo: up (ada)" {
				t.Errorf("the upstream's tool: %v, %v (%s)", res, err, resultText(res))
			}
		})
	}
}

// TestProxyNoChangeBeforeCatalog brings up an upstream that was down when
// New ran and holds its first tools/list: no list_changed reaches a
// listening client before the catalog is read (a client told earlier
// would list none of the upstream's tools, and hear of them no more), and
// one does after. The clock is synctest's.
func TestProxyNoChangeBeforeCatalog(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("DropWhenDown=%v", drop), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				remote := mcpkit.NewServer(&mcp.Implementation{Name: "remote"}, nil)
				addTools(remote, newProbe())
				listing, release := make(chan struct{}, 1), make(chan struct{})
				remote.MCPServer().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						if method == "tools/list" {
							select {
							case listing <- struct{}{}:
							default:
							}
							<-release
						}
						return next(ctx, method, req)
					}
				})
				var down atomic.Bool
				down.Store(true)
				dial := inMemory(remote)
				up, err := proxy.New(t.Context(), func(ctx context.Context) (mcp.Transport, error) {
					if down.Load() {
						return refusing{}, nil
					}
					return dial(ctx)
				}, &proxy.Options{Prefix: "crm_", DropWhenDown: drop})
				if err != nil {
					t.Fatal(err)
				}
				defer up.Close()
				local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
				up.AddTo(local)
				changed := make(chan struct{}, 8)
				ts := mcpkittest.NewInMemoryServer(t, local, &mcpkittest.Options{ProtocolVersion: "2025-11-25", Client: &mcp.ClientOptions{
					ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
				}})
				defer ts.Close()

				down.Store(false)
				time.Sleep(2 * time.Second) // past the first retry, a second after New
				synctest.Wait()
				select {
				case <-listing:
				default:
					t.Fatal("the proxy did not read the catalog once the upstream was up")
				}
				select {
				case <-changed:
					t.Errorf("list_changed before the catalog was read; the client lists %v", listed(t, ts))
				default:
				}
				close(release)
				<-changed
				if got := listed(t, ts); !slices.Contains(got, "crm_echo") {
					t.Errorf("listed %v once the catalog was read", got)
				}
			})
		})
	}
}

// streamWatch closes open when the server has answered the client's
// standalone event stream (a GET): from then on, the server's
// notifications reach the client.
type streamWatch struct {
	next http.RoundTripper
	open chan struct{}
	once sync.Once
}

func (w *streamWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		w.once.Do(func() { close(w.open) })
	}
	return resp, err
}

// refusing is a transport to an upstream that is down.
type refusing struct{}

func (refusing) Connect(context.Context) (mcp.Connection, error) {
	return nil, errors.New("connection refused")
}

func listed(t *testing.T, ts *mcpkittest.Server) []string {
	t.Helper()
	var names []string
	for tl, err := range ts.Session.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	return names
}

// TestProxyDialFailsNew keeps New failing when the Dial itself fails: a
// command that cannot start is a mistake to report, not an upstream that
// is down.
func TestProxyDialFailsNew(t *testing.T) {
	_, err := proxy.New(t.Context(), func(context.Context) (mcp.Transport, error) {
		return nil, errors.New("no such command")
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "no such command") {
		t.Errorf("New: %v; want the dial's error", err)
	}
}

// TestProxyOversizeLineAlone answers a call of a command on stdio with a
// line longer than the proxy reads: that call fails at once saying the
// size and the limit, and the same process serves the next call.
func TestProxyOversizeLineAlone(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var starts atomic.Int32
	dial := proxy.Command(func() *exec.Cmd {
		starts.Add(1)
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), upstreamEnv+"=1")
		return cmd
	}, &proxy.CommandOptions{MaxMessageBytes: 64 << 10})
	up := newProxy(t, dial, &proxy.Options{Prefix: "cmd_"})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ts := mcpkittest.NewStatelessServer(t, local, nil)
	res, err := ts.CallTool(t.Context(), "cmd_huge", map[string]any{"n": 200_000})
	if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), "over the proxy's limit of 65536 bytes (CommandOptions.MaxMessageBytes)") {
		t.Fatalf("the oversize line: %v, %v (%s)", res, err, resultText(res))
	}
	if res, err := ts.CallTool(t.Context(), "cmd_echo", map[string]any{"say": "after"}); err != nil || resultText(res) != "echo: after" {
		t.Errorf("the next call: %v, %v (%s)", res, err, resultText(res))
	}
	if n := starts.Load(); n != 1 {
		t.Errorf("the command started %d times; want once: the oversize line left the connection whole", n)
	}
}

// TestProxySessionIdle closes a caller's session that served no call for
// SessionIdle, on the clock the test moves.
func TestProxySessionIdle(t *testing.T) {
	release, started := make(chan struct{}), make(chan string, 4)
	s := newSite(t, sdkUpstream(release, started))
	opts := gatewayOptions()
	opts.SessionIdle = time.Minute
	up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), opts)
	var mu sync.Mutex
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	proxy.SetSessionClock(up, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ada, bob := gatewayClient(t, local, "ada-secret"), gatewayClient(t, local, "bob-secret")
	if res, err := ada.CallTool(t.Context(), "crm_echo", map[string]any{"say": "hi"}); err != nil || res.IsError {
		t.Fatalf("ada: %v, %v", res, err)
	}
	advance(59 * time.Second)
	if res, err := bob.CallTool(t.Context(), "crm_echo", map[string]any{"say": "hi"}); err != nil || res.IsError {
		t.Fatalf("bob: %v, %v", res, err)
	}
	if n := proxy.Sessions(up); n != 2 {
		t.Errorf("%d sessions within the idle time; want ada's and bob's", n)
	}
	advance(2 * time.Second) // ada's is idle past a minute, bob's is not
	if res, err := bob.CallTool(t.Context(), "crm_echo", map[string]any{"say": "again"}); err != nil || res.IsError {
		t.Fatalf("bob again: %v, %v", res, err)
	}
	if n := proxy.Sessions(up); n != 1 {
		t.Errorf("%d sessions after ada's was idle past SessionIdle; want bob's only", n)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, r := range s.requests() {
			if r.method == "DELETE" && r.auth == "Bearer minted-for-ada" {
				return
			}
		}
	}
	t.Error("ada's idle session was not ended at the upstream")
}
