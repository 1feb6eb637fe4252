package proxy_test

// Tests written by an outsider attacking the proxy under faults. Each
// TestAttack... test states what should hold; a failing one is a defect
// of the library, reported, not fixed here.

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
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
	"github.com/mcpkit/mcpkit/transform"
)

// TestAttackSessionKeyNonCanonicalHeader: Options.Credentials returning a
// header under a lower-case key (a map literal, which http.Header allows
// and the proxy's round tripper canonicalizes when it sends it) must still
// give each caller a session of its own. sessionKey reads the values with
// h.Values(canonical key), which finds nothing under "authorization", so
// every caller's key is the same digest and bob's calls go on ada's
// session, which the upstream refuses.
func TestAttackSessionKeyNonCanonicalHeader(t *testing.T) {
	release, started := make(chan struct{}), make(chan string, 4)
	s := newSite(t, sdkUpstream(release, started))
	opts := gatewayOptions()
	opts.Credentials = func(_ context.Context, req *mcpkit.Request) (http.Header, error) {
		if p := mcpkit.VerifiedPrincipal(req); p != "" {
			return http.Header{"authorization": {"Bearer minted-for-" + strings.TrimPrefix(p, "sub:")}}, nil
		}
		return nil, nil
	}
	up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), opts)
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	for _, who := range []string{"ada", "bob"} {
		ts := gatewayClient(t, local, who+"-secret")
		res, err := ts.CallTool(t.Context(), "crm_echo", map[string]any{"say": "hi"})
		if want := "echo: hi (" + who + ")"; err != nil || resultText(res) != want {
			t.Errorf("%s: %v (%s); want %q", who, err, resultText(res), want)
		}
	}
	if n := proxy.Sessions(up); n != 2 {
		t.Errorf("%d caller sessions for two callers; want 2", n)
	}
}

// TestAttackCredentialsErrorOpensBreakerForEveryone: a caller whose
// credentials cannot be minted gets an error that "does not reach the
// upstream"; it must not count as a failure of the upstream. Today it is
// an *UpstreamError wrapping ErrUnavailable, so the breaker (default
// options) opens after ten such calls, and every other caller is refused.
func TestAttackCredentialsErrorOpensBreakerForEveryone(t *testing.T) {
	us := newUpstream(t, false, 0)
	up := newProxy(t, proxy.HTTP(us.url, nil), &proxy.Options{
		Prefix: "crm_",
		Credentials: func(_ context.Context, req *mcpkit.Request) (http.Header, error) {
			if mcpkit.VerifiedPrincipal(req) == "sub:carol" {
				return nil, errors.New("no mapping for carol")
			}
			return nil, nil
		},
	})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	carol := gatewayClient(t, local, "carol-secret")
	ada := gatewayClient(t, local, "ada-secret")
	for range 12 {
		res, err := carol.CallTool(t.Context(), "crm_echo", map[string]any{"say": "x"})
		if err != nil || !res.IsError {
			t.Fatalf("carol: %v, %v; want an error", res, err)
		}
	}
	res, err := ada.CallTool(t.Context(), "crm_echo", map[string]any{"say": "hi"})
	if err != nil || resultText(res) != "echo: hi" {
		t.Errorf("ada after carol's credential failures: %v (%s); want served: one caller's missing credentials opened the upstream's circuit for all", err, resultText(res))
	}
}

// TestAttackTooManySessionsOpensBreaker: ErrTooManySessions is a local
// bound, like MaxConcurrent's refusal, which the breaker does not count;
// it counts today, so a burst of callers over MaxSessions opens the
// circuit of a healthy upstream.
func TestAttackTooManySessionsOpensBreaker(t *testing.T) {
	release, started := make(chan struct{}), make(chan string, 8)
	s := newSite(t, sdkUpstream(release, started))
	opts := gatewayOptions()
	opts.NoBreaker = false
	opts.Breaker = nil
	opts.MaxSessions = 1
	up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), opts)
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ada, bob := gatewayClient(t, local, "ada-secret"), gatewayClient(t, local, "bob-secret")
	done := make(chan struct{})
	go func() {
		defer close(done)
		ada.CallTool(t.Context(), "crm_wait", nil)
	}()
	<-started
	for range 12 {
		res, err := bob.CallTool(t.Context(), "crm_echo", map[string]any{"say": "x"})
		if err != nil || !res.IsError {
			t.Fatalf("bob while ada's session is busy: %v, %v; want refused", res, err)
		}
	}
	close(release)
	<-done
	res, err := ada.CallTool(t.Context(), "crm_echo", map[string]any{"say": "hi"})
	if err != nil || resultText(res) != "echo: hi (ada)" {
		t.Errorf("ada after bob was refused for the session bound: %v (%s); want served: the session bound opened the circuit", err, resultText(res))
	}
}

// progressUpstream is an in-memory mcpkit upstream whose "burst" tool
// reports progress 1/3, 2/3, 3/3 in a tight loop and returns.
func progressUpstream() *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "steps"}, nil)
	srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "burst", InputSchema: objectSchema("")},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				mcpkit.ReportProgress(ctx, float64(i), 3, fmt.Sprintf("step %d", i))
			}
			return text("done"), nil
		})})
	return srv
}

// TestAttackProgressLastReportThroughProxy: the upstream sends its last
// report (3/3) before its result (issue 34 item 11, which holds for a
// direct client). Through the proxy, the local client must hear 3/3
// before the result too.
func TestAttackProgressLastReportThroughProxy(t *testing.T) {
	for _, via := range []string{"direct", "proxy"} {
		t.Run(via, func(t *testing.T) {
			upstream := progressUpstream()
			srv, name := upstream, "burst"
			if via == "proxy" {
				up := newProxy(t, inMemory(upstream), &proxy.Options{Prefix: "p_"})
				srv = mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
				up.AddTo(srv)
				name = "p_burst"
			}
			var mu sync.Mutex
			var last float64
			ts := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, n *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					last = n.Params.Progress
					mu.Unlock()
				},
			}})
			lost := 0
			const runs = 20
			for i := range runs {
				mu.Lock()
				last = 0
				mu.Unlock()
				res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Meta: mcp.Meta{"progressToken": fmt.Sprintf("t%d", i)}})
				if err != nil || resultText(res) != "done" {
					t.Fatalf("call: %v, %v", res, err)
				}
				// The client's handler runs on its own goroutine: give it a
				// moment (a safety net; the report was sent before the result).
				deadline := time.Now().Add(2 * time.Second)
				for {
					mu.Lock()
					l := last
					mu.Unlock()
					if l == 3 {
						break
					}
					if time.Now().After(deadline) {
						lost++
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			if lost > 0 {
				t.Errorf("%s: the last report (3/3) never arrived in %d of %d calls", via, lost, runs)
			}
		})
	}
}

// attackUpstreamEnv, when set, makes the test binary one of the attack
// upstreams below over stdio (see init).
const attackUpstreamEnv = "MCPKIT_PROXY_ATTACK_UPSTREAM"

func init() {
	if os.Getenv(attackUpstreamEnv) == "elicit" {
		runElicitUpstream()
		os.Exit(0)
	}
}

// runElicitUpstream serves, on stdio, a go-sdk server of protocol
// 2025-11-25 whose "bigask" tool asks its client for input twice with a
// small request, then once with a request larger than the proxy reads;
// "wait" holds until "release" is called.
func runElicitUpstream() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "elicit"}, nil)
	release := make(chan struct{})
	var once sync.Once
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		select {
		case <-release:
			return text("released"), nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "release"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		once.Do(func() { close(release) })
		return text("ok"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "bigask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "string"}}}
		for _, size := range []int{10, 10, 200_000} {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: strings.Repeat("q", size), RequestedSchema: schema})
			if err != nil {
				return nil, nil, err
			}
			_ = res
		}
		return text("asked"), nil, nil
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}

// TestAttackStdioOversizeServerRequest: the upstream (a stdio command on
// 2025-11-25) sends the proxy a request (elicitation/create) longer than
// CommandOptions.MaxMessageBytes. lineLimiter finds its ID at the start of
// the line and puts an error *response* with that ID in its place: the
// proxy's client takes it as the answer to its own request of the same
// number, which is another caller's call in flight. That call must not
// fail, and the call whose upstream asked must end at once, not at the
// time limit.
func TestAttackStdioOversizeServerRequest(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dial := proxy.Command(func() *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), attackUpstreamEnv+"=elicit")
		return cmd
	}, &proxy.CommandOptions{MaxMessageBytes: 64 << 10})
	up := newProxy(t, dial, &proxy.Options{Prefix: "cmd_", ProtocolVersion: "2025-11-25", NoBreaker: true, Timeout: 5 * time.Second})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ts := mcpkittest.NewInMemoryServer(t, local, nil)
	ctx := t.Context()

	// The proxy's requests so far: initialize (1), tools/list (2); the
	// held call is its request 3, and the upstream's third elicitation is
	// its request 3.
	held := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := ts.CallTool(ctx, "cmd_wait", nil)
		held <- res
	}()
	time.Sleep(200 * time.Millisecond) // let cmd_wait go first, so that it takes number 3
	start := time.Now()
	big, err := ts.CallTool(ctx, "cmd_bigask", nil)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	heldDone := false
	select {
	case res := <-held:
		heldDone = true
		t.Errorf("another caller's call in flight ended before it was released: %q", resultText(res))
	default:
	}
	if !big.IsError || strings.Contains(resultText(big), "time limit") || took > 4*time.Second {
		t.Errorf("the call whose upstream sent an oversize request: %q after %v; want an error at once", resultText(big), took.Round(time.Millisecond))
	}
	if res, err := ts.CallTool(ctx, "cmd_release", nil); err != nil || res.IsError {
		t.Fatalf("release: %v, %v", res, err)
	}
	if heldDone {
		return
	}
	select {
	case res := <-held:
		if resultText(res) != "released" {
			t.Errorf("the held call: %q; want released", resultText(res))
		}
	case <-time.After(10 * time.Second):
		t.Error("the held call never ended")
	}
}

// TestAttackOversizeNotificationFailsCall: over HTTP, an upstream's
// progress notification larger than HTTPOptions.MaxResponseBytes, sent on
// the stream of a call whose answer is small, replaces the answer: the
// call fails saying the "answer" was too large. A notification is not the
// answer: it should be dropped, as on the GET stream, and the call served.
func TestAttackOversizeNotificationFailsCall(t *testing.T) {
	for _, ue := range upstreamEras {
		t.Run(ue.version, func(t *testing.T) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "noisy"}, nil)
			mcp.AddTool(srv, &mcp.Tool{Name: "noisy"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				if tok := req.Params.GetProgressToken(); tok != nil {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: strings.Repeat("m", 100_000)})
				}
				return text("small answer"), nil, nil
			})
			s := newSite(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{MaxResponseBytes: 64 << 10, MaxRetries: -1}),
				&proxy.Options{Prefix: "n_", ProtocolVersion: ue.version, NoBreaker: true})
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			ts := mcpkittest.NewInMemoryServer(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {},
			}})
			res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "n_noisy", Meta: mcp.Meta{"progressToken": "p"}})
			if err != nil || resultText(res) != "small answer" {
				t.Errorf("a small answer after an oversize notification: %v (%s); want served", err, resultText(res))
			}
		})
	}
}

// plainUpstream is a go-sdk server with sessions and an "echo" tool, no
// authentication.
func plainUpstream() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "plain"}, nil)
	type echoIn struct {
		Say string `json:"say"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text("echo: " + in.Say), nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// TestAttackReconnectLoopWithoutBackoff: an upstream whose sessions break
// as they begin (its event stream ends at once, which ends the SDK's
// session) must not make the proxy reconnect in a loop. The refresh loop
// reconnects no sooner than a second after the last connection, and a read
// that fails is tried again from 1 s doubling up to a minute. The loop runs
// on a fake clock that moves only when the proxy waits, to its earliest
// timer: two connections at the same time of the clock are a reconnection
// that did not wait. With DropWhenDown each connection tells listening
// clients of a change at most twice (the tools go, and come back).
func TestAttackReconnectLoopWithoutBackoff(t *testing.T) {
	inner := plainUpstream()
	clk := newFakeClock()
	var mu sync.Mutex
	var inits []time.Time // the clock's time at each initialize request
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// The stream opens, then ends at once: with no retries the
			// SDK ends the session.
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" {
			mu.Lock()
			inits = append(inits, clk.Now())
			mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	}))
	up, err := proxy.NewWithClock(t.Context(), proxy.HTTP(s.url(), &proxy.HTTPOptions{MaxRetries: -1}), &proxy.Options{Prefix: "p_", ProtocolVersion: "2025-11-25", DropWhenDown: true}, clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	changed := 0
	mcpkittest.NewServer(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { mu.Lock(); changed++; mu.Unlock() },
	}})

	start := clk.Now()
	for range 10 {
		if !clk.waitTimer() {
			mu.Lock()
			n := len(inits)
			mu.Unlock()
			t.Fatalf("the proxy waits for no timer after %v of the clock and %d initialize requests", clk.Now().Sub(start), n)
		}
		clk.fire(t)
	}
	clk.waitTimer() // the last connection is made
	mu.Lock()
	defer mu.Unlock()
	short := 0
	for i := 1; i < len(inits); i++ {
		if inits[i].Sub(inits[i-1]) < time.Second {
			short++
		}
	}
	if short > 0 {
		t.Errorf("%d of %d initialize requests came less than 1s of the clock after the one before", short, len(inits))
	}
	if elapsed := clk.Now().Sub(start); len(inits) > 1+int(elapsed/time.Second) {
		t.Errorf("%d initialize requests in %v of the clock; want at most one a second", len(inits), elapsed)
	}
	if delays := clk.delays(); slices.ContainsFunc(delays, func(d time.Duration) bool { return d <= 0 || d > time.Minute }) {
		t.Errorf("the proxy waited %v; want each wait up to 1m", delays)
	}
	// The notifications reach the client on its own goroutines: the count
	// is a lower bound of those sent.
	if changed > 2*len(inits) {
		t.Errorf("%d list_changed notifications in %d connections; want at most two a connection", changed, len(inits))
	}
}

// TestAttackReconnectLoopRetrySchedule: an upstream that is down (it
// answers every request with 500) is tried again after 1 s, then 2 s, 4 s,
// doubling up to a minute, as New's documentation says; on a fake clock,
// once in New and once per timer fired, never without the clock moving.
func TestAttackReconnectLoopRetrySchedule(t *testing.T) {
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	clk := newFakeClock()
	up, err := proxy.NewWithClock(t.Context(), proxy.HTTP(s.url(), &proxy.HTTPOptions{MaxRetries: -1}), &proxy.Options{Prefix: "p_"}, clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	inits := func() int {
		n := 0
		for _, r := range s.requests() {
			if r.method == "initialize" {
				n++
			}
		}
		return n
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60}
	for i := range want {
		want[i] *= time.Second
	}
	for fired := 0; ; fired++ {
		if !clk.waitTimer() {
			t.Fatalf("after %d timers fired the proxy waits for none; %d initialize requests", fired, inits())
		}
		if n := inits(); n != fired+1 {
			t.Fatalf("%d initialize requests after %d timers fired; want %d: one in New, one per timer", n, fired, fired+1)
		}
		if fired == len(want)-1 {
			break
		}
		clk.fire(t)
	}
	if got := clk.delays(); !slices.Equal(got, want) {
		t.Errorf("the proxy waited %v; want %v", got, want)
	}
}

// hungListener accepts connections on a loopback port and never answers;
// it returns the URL, and a func that reports how many connections it
// accepted. The connections are closed when the test ends.
func hungListener(t *testing.T) (string, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	accepted := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(conns)
	}
	return "http://" + ln.Addr().String(), accepted
}

// settleGoroutines waits (a safety net of a few seconds) for the number of
// goroutines to come back to at most want, and returns the last count.
func settleGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

// TestAttackHungUpstreamNewAndClose: New against an upstream that accepts
// and never answers returns within Options.Timeout (the docs: "New waits
// for it at most Options.Timeout"); the background retry then hangs, and
// Close, while it is in flight, returns at once and leaves no goroutine
// behind. Today New takes Timeout plus the SDK's five seconds of
// notifications/cancelled to the hung upstream (Client.Connect closes the
// session, which waits for that notification), and Close waits the same
// five seconds for the retry in flight; the wait is a race in the SDK, so
// the test tries four times.
func TestAttackHungUpstreamNewAndClose(t *testing.T) {
	url, accepted := hungListener(t)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	before := runtime.NumGoroutine()
	var slowNew, slowClose time.Duration
	for range 4 {
		clk := newFakeClock()
		start := time.Now()
		up, err := proxy.NewWithClock(t.Context(), proxy.HTTP(url, &proxy.HTTPOptions{Client: client, MaxRetries: -1}), &proxy.Options{Prefix: "h_", Timeout: 500 * time.Millisecond}, clk)
		if err != nil {
			t.Fatal(err)
		}
		slowNew = max(slowNew, time.Since(start))
		// The background retry starts now, and is in flight once the
		// upstream has its connection.
		if !clk.waitTimer() {
			t.Fatal("no retry after New failed")
		}
		n := accepted()
		clk.fire(t)
		for deadline := time.Now().Add(5 * time.Second); accepted() == n && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		start = time.Now()
		up.Close()
		slowClose = max(slowClose, time.Since(start))
	}
	if slowNew > 3*time.Second {
		t.Errorf("New took up to %v with Timeout 500ms", slowNew.Round(time.Millisecond))
	}
	if slowClose > 2*time.Second {
		t.Errorf("Close took up to %v with a reconnection in flight", slowClose.Round(time.Millisecond))
	}
	client.CloseIdleConnections()
	if n := settleGoroutines(before); n > before {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("%d goroutines after Close, %d before New:\n%s", n, before, buf)
	}
}

// TestAttackSessionsRestartEvictionRace: three callers call at once through
// two sessions (MaxSessions 2, so they evict each other) while the
// upstream restarts twice. No caller is ever answered as another, every
// failure is retryable, and once the upstream is back every caller is
// served. Run it with -race.
func TestAttackSessionsRestartEvictionRace(t *testing.T) {
	release, started := make(chan struct{}), make(chan string, 64)
	s := newSite(t, sdkUpstream(release, started))
	opts := gatewayOptions()
	opts.MaxSessions = 2
	up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), opts)
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	who := []string{"ada", "bob", "carol"}
	clients := map[string]*mcpkittest.Server{}
	for _, w := range who {
		clients[w] = gatewayClient(t, local, w+"-secret")
	}
	ctx := t.Context()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	served := map[string]int{}
	for _, w := range who {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					say := fmt.Sprintf("%s-%d", w, i)
					res, err := clients[w].CallTool(ctx, "crm_echo", map[string]any{"say": say})
					if err != nil {
						t.Errorf("%s: %v", w, err)
						return
					}
					switch got := resultText(res); {
					case !res.IsError:
						if want := "echo: " + say + " (" + w + ")"; got != want {
							t.Errorf("%s was answered %q; want %q", w, got, want)
						}
						mu.Lock()
						served[w]++
						mu.Unlock()
					case mcpkit.ErrorClassOf(res) != mcpkit.Retryable:
						t.Errorf("%s: a %q error: %s", w, mcpkit.ErrorClassOf(res), got)
					}
				}
			}()
		}
	}
	for range 2 {
		time.Sleep(300 * time.Millisecond)
		s.stop()
		time.Sleep(100 * time.Millisecond)
		s.start(sdkUpstream(release, started))
	}
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	before := map[string]int{}
	for k, v := range served {
		before[k] = v
	}
	mu.Unlock()
	// Once back, every caller is served again (a safety net of seconds).
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		ok := true
		for _, w := range who {
			if served[w] <= before[w] {
				ok = false
			}
		}
		mu.Unlock()
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	for _, w := range who {
		if served[w] <= before[w] {
			t.Errorf("%s was not served after the restarts (%d calls served before)", w, before[w])
		}
	}
	if n := proxy.Sessions(up); n > 2 {
		t.Errorf("%d caller sessions; the bound is 2", n)
	}
	for _, r := range s.requests() {
		if strings.Contains(r.auth, "secret") {
			t.Errorf("%s carried a caller's own token", r.method)
		}
		if (r.method == "tools/list" || r.method == "GET") && r.auth != "Bearer proxy-own" {
			t.Errorf("%s carried %q; want the proxy's own", r.method, r.auth)
		}
	}
}

// TestAttackCredentialsThroughRoutes: a proxied tool reached through
// transform.Discovery's call_tool, and through a mounted server, is still
// called with the credentials minted for the verified caller, never
// the proxy's own (which would let a caller act as the gateway).
func TestAttackCredentialsThroughRoutes(t *testing.T) {
	release, started := make(chan struct{}), make(chan string, 4)
	s := newSite(t, sdkUpstream(release, started))
	for _, ue := range upstreamEras {
		t.Run(ue.version, func(t *testing.T) {
			opts := gatewayOptions()
			opts.ProtocolVersion = ue.version
			up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), opts)

			// call_tool.
			disc := mcpkit.NewServer(&mcp.Implementation{Name: "disc"}, nil)
			up.AddTo(disc)
			if err := transform.Discovery(disc, nil); err != nil {
				t.Fatal(err)
			}
			ts := gatewayClient(t, disc, "ada-secret")
			res, err := ts.CallTool(t.Context(), transform.CallToolName, map[string]any{"name": "crm_echo", "arguments": map[string]any{"say": "via"}})
			if err != nil || resultText(res) != "echo: via (ada)" {
				t.Errorf("through call_tool: %v (%s); want ada's credentials", err, resultText(res))
			}

			// A mount.
			child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
			up.AddTo(child)
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
			if _, err := parent.Mount("ns", child); err != nil {
				t.Fatal(err)
			}
			pts := gatewayClient(t, parent, "bob-secret")
			var names []string
			for tl, err := range pts.Session.Tools(t.Context(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tl.Name)
			}
			name := ""
			for _, n := range names {
				if strings.HasSuffix(n, "crm_echo") {
					name = n
				}
			}
			if name == "" {
				t.Fatalf("the mounted proxied tool is not listed: %v", names)
			}
			res, err = pts.CallTool(t.Context(), name, map[string]any{"say": "mounted"})
			if err != nil || resultText(res) != "echo: mounted (bob)" {
				t.Errorf("through the mount (%s): %v (%s); want bob's credentials", name, err, resultText(res))
			}
		})
	}
}

// TestAttackMountedProxyDownAtStart: a proxied upstream inside a mounted
// server, down at start: when it comes up, the parent's listening client
// hears list_changed and lists its tools under the mount.
func TestAttackMountedProxyDownAtStart(t *testing.T) {
	release, started := make(chan struct{}), make(chan string, 4)
	s := newSite(t, nil)
	opts := gatewayOptions()
	opts.Name = "crm"
	up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), opts)
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	up.AddTo(child)
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("ns", child); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 8)
	ts := mcpkittest.NewServer(t, parent, &mcpkittest.Options{Tokens: gatewayTokens, Token: "ada-secret", Client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}})
	if got := listed(t, ts); len(got) != 0 {
		t.Errorf("listed %v while the upstream is down", got)
	}
	s.start(sdkUpstream(release, started))
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no list_changed through the mount once the upstream came up")
	}
	got := listed(t, ts)
	if len(got) != 3 {
		t.Errorf("listed %v through the mount once the upstream is up", got)
	}
	for _, n := range got {
		if strings.HasSuffix(n, "crm_echo") {
			res, err := ts.CallTool(t.Context(), n, map[string]any{"say": "up"})
			if err != nil || resultText(res) != "echo: up (ada)" {
				t.Errorf("%s: %v (%s)", n, err, resultText(res))
			}
		}
	}
}

// describedUpstream is a go-sdk server with sessions whose echo tool has
// the description desc.
func describedUpstream(desc string) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "crm"}, nil)
	type echoIn struct {
		Say string `json:"say"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: desc}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text("echo: " + in.Say), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "open", Description: desc}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text("open: " + in.Say), nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// TestAttackScopesAcrossUpstreamRestart: a scope required of a proxied tool
// by its local name (ForTools(Named), RequireScopes) holds before and
// after the upstream restarts with a changed definition of the tool
// (the proxy then serves a new *Tool), directly and through call_tool.
func TestAttackScopesAcrossUpstreamRestart(t *testing.T) {
	s := newSite(t, describedUpstream("v1"))
	up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{MaxRetries: -1}), &proxy.Options{Prefix: "crm_", ProtocolVersion: "2025-11-25", NoBreaker: true})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	local.Use(mcpkit.ForTools(mcpkit.Named("crm_echo"), mcpkit.RequireScopes("crm:write")))
	up.AddTo(local)
	if err := transform.Discovery(local, &transform.DiscoveryOptions{Match: func(t *mcpkit.Tool) bool { return t.Name == "crm_open" }}); err != nil {
		t.Fatal(err)
	}
	// A refusal for scope is an HTTP 403, which ends the SDK client's
	// connection: each call has a client of its own.
	client := func() *mcpkittest.Server { return gatewayClient(t, local, "ada-secret") }
	ts := client()
	check := func(when string) {
		t.Helper()
		res, err := client().CallTool(t.Context(), "crm_echo", map[string]any{"say": "x"})
		if err == nil && !res.IsError {
			t.Errorf("%s: ada without crm:write called crm_echo: %s", when, resultText(res))
		}
		res, err = client().CallTool(t.Context(), transform.CallToolName, map[string]any{"name": "crm_echo", "arguments": map[string]any{"say": "x"}})
		if err == nil && !res.IsError {
			t.Errorf("%s: ada without crm:write called crm_echo through call_tool: %s", when, resultText(res))
		}
		res, err = client().CallTool(t.Context(), transform.CallToolName, map[string]any{"name": "crm_open", "arguments": map[string]any{"say": "x"}})
		if err != nil || resultText(res) != "open: x" {
			t.Errorf("%s: crm_open through call_tool: %v (%s)", when, err, resultText(res))
		}
	}
	check("before the restart")
	s.stop()
	s.start(describedUpstream("v2"))
	// The next call reconnects; the catalog is read again.
	ts.CallTool(t.Context(), transform.CallToolName, map[string]any{"name": "crm_open", "arguments": map[string]any{"say": "x"}})
	deadline := time.Now().Add(15 * time.Second)
	for {
		tl, _ := up.LookupTool(t.Context(), nil, "crm_echo")
		if tl != nil && tl.Description == "v2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the proxy never read the restarted upstream's catalog")
		}
		time.Sleep(20 * time.Millisecond)
	}
	check("after the restart")
}

// scriptedUpstream is a hand-written streamable HTTP upstream of protocol
// 2025-11-25 with one tool, "t", whose calls answer with call(w, id): the
// test writes the response (an event stream, JSON, a broken stream).
func scriptedUpstream(call func(w http.ResponseWriter, id json.RawMessage)) http.Handler {
	return scriptedUpstreamGET(call, nil)
}

// scriptedUpstreamGET is scriptedUpstream whose event stream (GET) is
// served by get, when not nil.
func scriptedUpstreamGET(call func(w http.ResponseWriter, id json.RawMessage), get http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && get != nil {
			get(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		answer := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
		}
		switch msg.Method {
		case "initialize":
			answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}`)
		case "tools/list":
			answer(`{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			call(w, msg.ID)
		case "ping":
			answer(`{}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
}

// sseAnswer writes one tools/call answer with text as an event stream,
// with the line ending eol.
func sseAnswer(w http.ResponseWriter, id json.RawMessage, text, eol string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Mcp-Session-Id", "s1")
	fmt.Fprintf(w, "event: message%sdata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}%s%s", eol, id, text, eol, eol)
}

// TestAttackSSEShapes: answers in event streams of the shapes servers
// send: CRLF line endings (small and over the limit), an event cut off by
// the end of the stream, and a stream that ends with no answer. Each call
// ends at once, served or with a retryable error; the size error names the
// limit; and the connection survives for the next call.
func TestAttackSSEShapes(t *testing.T) {
	cases := []struct {
		name string
		call func(w http.ResponseWriter, id json.RawMessage)
		want string // the answer's text, or a part of the error's
		ok   bool
	}{
		{"crlf small", func(w http.ResponseWriter, id json.RawMessage) { sseAnswer(w, id, "hello", "\r\n") }, "hello", true},
		{"crlf over", func(w http.ResponseWriter, id json.RawMessage) {
			sseAnswer(w, id, strings.Repeat("x", 100_000), "\r\n")
		}, "over the proxy's limit of 65536 bytes", false},
		{"cut mid-event", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"res", id)
		}, "", false},
		{"ends without answer", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": nothing\n\n")
		}, "", false},
		{"over, cut before its blank line", func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n", id, strings.Repeat("y", 100_000))
		}, "over the proxy's limit of 65536 bytes", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var calls sync.Mutex
			n := 0
			s := newSite(t, scriptedUpstream(func(w http.ResponseWriter, id json.RawMessage) {
				calls.Lock()
				n++
				first := n == 1
				calls.Unlock()
				if first {
					c.call(w, id)
					return
				}
				sseAnswer(w, id, "next", "\n")
			}))
			up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{MaxResponseBytes: 64 << 10, MaxRetries: -1}),
				&proxy.Options{Prefix: "s_", ProtocolVersion: "2025-11-25", NoBreaker: true, Timeout: 10 * time.Second})
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			ts := mcpkittest.NewInMemoryServer(t, local, nil)
			start := time.Now()
			res, err := ts.CallTool(t.Context(), "s_t", nil)
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case took > 5*time.Second:
				t.Errorf("the call took %v (%s)", took, resultText(res))
			case c.ok && resultText(res) != c.want:
				t.Errorf("answered %q (error %v); want %q", resultText(res), res.IsError, c.want)
			case !c.ok && (!res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), c.want)):
				t.Errorf("answered %q (class %q); want a retryable error containing %q", resultText(res), mcpkit.ErrorClassOf(res), c.want)
			}
			if res, err := ts.CallTool(t.Context(), "s_t", nil); err != nil || resultText(res) != "next" {
				t.Errorf("the next call: %v (%s)", err, resultText(res))
			}
		})
	}
}

// TestAttackOversizeGETEventThenListChanged: on the proxy's own event
// stream (GET), an event over HTTPOptions.MaxResponseBytes is dropped, and
// the list_changed after it still makes the proxy read the catalog again;
// the same with CRLF line endings.
func TestAttackOversizeGETEventThenListChanged(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n"} {
		t.Run(fmt.Sprintf("%q", eol), func(t *testing.T) {
			var once sync.Once
			s := newSite(t, scriptedUpstreamGET(func(w http.ResponseWriter, id json.RawMessage) { sseAnswer(w, id, "ok", "\n") },
				func(w http.ResponseWriter, r *http.Request) {
					first := false
					once.Do(func() { first = true })
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(http.StatusOK)
					if first {
						fmt.Fprintf(w, "event: message%sdata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%q}}%s%s", eol, strings.Repeat("z", 100_000), eol, eol)
						fmt.Fprintf(w, "event: message%sdata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}%s%s", eol, eol, eol)
						w.(http.Flusher).Flush()
					}
					<-r.Context().Done()
				}))
			newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{MaxResponseBytes: 64 << 10, MaxRetries: -1}),
				&proxy.Options{Prefix: "s_", ProtocolVersion: "2025-11-25", NoBreaker: true})
			deadline := time.Now().Add(10 * time.Second)
			for {
				lists := 0
				for _, r := range s.requests() {
					if r.method == "tools/list" {
						lists++
					}
				}
				if lists >= 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the catalog was read %d times; want again after the list_changed that follows the oversize event", lists)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestAttackOneCallsHTTPErrorFailsOthers: the upstream (or a gateway in
// front of it) answers one call with HTTP 500 while another call is in
// flight on the same connection. The 500 is that call's answer; the call
// in flight beside it must be served, as beside an oversize answer.
func TestAttackOneCallsHTTPErrorFailsOthers(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	var mu sync.Mutex
	n := 0
	s := newSite(t, scriptedUpstream(func(w http.ResponseWriter, id json.RawMessage) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		switch k {
		case 1: // held
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			started <- struct{}{}
			<-release
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"released\"}]}}\n\n", id)
		case 2:
			http.Error(w, "internal error", http.StatusInternalServerError)
		default:
			sseAnswer(w, id, "next", "\n")
		}
	}))
	up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{MaxRetries: -1}), &proxy.Options{Prefix: "s_", ProtocolVersion: "2025-11-25", NoBreaker: true, Timeout: 15 * time.Second})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ts := mcpkittest.NewInMemoryServer(t, local, nil)
	held := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := ts.CallTool(t.Context(), "s_t", nil)
		held <- res
	}()
	<-started
	start := time.Now()
	res, err := ts.CallTool(t.Context(), "s_t", nil)
	if err != nil || !res.IsError {
		t.Fatalf("the call answered 500: %v, %v", res, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the call answered 500 ended after %v (%s); want at once", took.Round(time.Millisecond), resultText(res))
	}
	close(release)
	select {
	case res := <-held:
		if resultText(res) != "released" {
			t.Errorf("the call in flight beside the 500: %q; want served", resultText(res))
		}
	case <-time.After(10 * time.Second):
		t.Error("the call in flight never ended")
	}
}

// TestAttackCloseDuringSessionOpen: a caller's session is being opened
// with an upstream that never answers that caller's initialize; Close
// returns at once, the caller's call ends, and no goroutine of the proxy
// is left.
func TestAttackCloseDuringSessionOpen(t *testing.T) {
	release, started := make(chan struct{}), make(chan string, 4)
	inner := sdkUpstream(release, started)
	opening := make(chan struct{}, 1)
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Authorization"), "Bearer minted-for-") && r.Header.Get("Mcp-Session-Id") == "" {
			select {
			case opening <- struct{}{}:
			default:
			}
			<-r.Context().Done() // a caller's initialize hangs
			return
		}
		inner.ServeHTTP(w, r)
	}))
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	before := runtime.NumGoroutine()
	up, err := proxy.New(t.Context(), proxy.HTTP(s.url(), &proxy.HTTPOptions{Client: client, Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), gatewayOptions())
	if err != nil {
		t.Fatal(err)
	}
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ts := gatewayClient(t, local, "ada-secret")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := ts.CallTool(t.Context(), "crm_echo", map[string]any{"say": "hi"})
		done <- res
	}()
	<-opening
	start := time.Now()
	up.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %v with a caller's session opening", took.Round(time.Millisecond))
	}
	select {
	case res := <-done:
		if !res.IsError {
			t.Errorf("the caller's call: %s; want an error", resultText(res))
		}
	case <-time.After(10 * time.Second):
		t.Error("the caller's call did not end after Close")
	}
	ts.Close()
	client.CloseIdleConnections()
	if n := settleGoroutines(before); n > before {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("%d goroutines after Close, %d before New:\n%s", n, before, buf)
	}
}

// TestAttackStdioOversizeIsResponseTooLarge: ErrResponseTooLarge is "the
// error of a read past HTTPOptions.MaxResponseBytes or
// CommandOptions.MaxMessageBytes", and middleware tells it apart with
// errors.Is / errors.As (*ResponseTooLargeError, with Size and Limit). On
// stdio the oversize answer reaches middleware as a JSON-RPC error -32603
// with text only: neither matches.
func TestAttackStdioOversizeIsResponseTooLarge(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dial := proxy.Command(func() *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), upstreamEnv+"=1")
		return cmd
	}, &proxy.CommandOptions{MaxMessageBytes: 64 << 10})
	var mu sync.Mutex
	var seen error
	watch := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := next.ServeTool(ctx, req)
			mu.Lock()
			seen = err
			mu.Unlock()
			return res, err
		})
	}
	up := newProxy(t, dial, &proxy.Options{Prefix: "cmd_", NoBreaker: true, Middleware: []mcpkit.Middleware{watch}})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ts := mcpkittest.NewInMemoryServer(t, local, nil)
	if _, err := ts.CallTool(t.Context(), "cmd_huge", map[string]any{"n": 200_000}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var tooLarge *proxy.ResponseTooLargeError
	if !errors.Is(seen, proxy.ErrResponseTooLarge) || !errors.As(seen, &tooLarge) || tooLarge.Limit != 64<<10 {
		t.Errorf("the error middleware sees: %v (%T); want one matching ErrResponseTooLarge, a *ResponseTooLargeError with Limit 65536", seen, seen)
	}
}

// TestAttackNameWhenDownAtStart: Options.Name empty "means the name the
// upstream gives itself". An upstream down at start is named "upstream"
// for good, in errors, logs and its circuit, even once it is up.
func TestAttackNameWhenDownAtStart(t *testing.T) {
	release, started := make(chan struct{}), make(chan string, 4)
	s := newSite(t, nil)
	opts := gatewayOptions()
	clk := newFakeClock()
	up, err := proxy.NewWithClock(t.Context(), proxy.HTTP(s.url(), &proxy.HTTPOptions{Header: http.Header{"Authorization": {"Bearer proxy-own"}}, MaxRetries: -1}), opts, clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	s.start(sdkUpstream(release, started))
	if !clk.waitTimer() {
		t.Fatal("no retry after New failed")
	}
	clk.fire(t) // the retry that finds the upstream up
	deadline := time.Now().Add(15 * time.Second)
	for {
		if tl, _ := up.LookupTool(t.Context(), nil, "crm_echo"); tl != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the upstream's tools never appeared")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if up.Name() != "crm" {
		t.Errorf("Name() = %q once the upstream is up; want the name it gives itself, %q", up.Name(), "crm")
	}
}

// TestAttackProgressStopsAtCancelThroughProxy: the local client cancels a
// proxied call whose upstream handler ignores its context and goes on
// reporting progress; the local client hears nothing after the cancel.
func TestAttackProgressStopsAtCancelThroughProxy(t *testing.T) {
	upstream := mcpkit.NewServer(&mcp.Implementation{Name: "chatty"}, nil)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	upstream.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "chatty", InputSchema: objectSchema("")},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			for i := 1; i <= 100; i++ {
				mcpkit.ReportProgress(ctx, float64(i), 100, "")
				select {
				case <-stop:
					return nil, nil
				case <-time.After(20 * time.Millisecond):
				}
			}
			return text("done"), nil
		})})
	up := newProxy(t, inMemory(upstream), &proxy.Options{Prefix: "p_"})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	var mu sync.Mutex
	var cancelled bool
	after := 0
	first := make(chan struct{}, 1)
	ts := mcpkittest.NewInMemoryServer(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			if cancelled {
				after++
			}
			mu.Unlock()
			select {
			case first <- struct{}{}:
			default:
			}
		},
	}})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := ts.Session.CallTool(ctx, &mcp.CallToolParams{Name: "p_chatty", Meta: mcp.Meta{"progressToken": "c"}})
		done <- err
	}()
	<-first
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	cancelled = true
	mu.Unlock()
	cancel()
	<-done
	time.Sleep(800 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if after > 1 { // one may have been on its way
		t.Errorf("%d progress notifications after the cancel", after)
	}
}

// TestAttackProgressTokenOfAnotherCall: the proxy's progress tokens are a
// counter ("mcpkit-proxy-1", -2, ...) and onProgress accepts a token from
// any stream or session. An upstream answering bob's call can thus put a
// progress message into ada's call in flight: a notification should reach
// only the call whose request stream (or session) it came on.
func TestAttackProgressTokenOfAnotherCall(t *testing.T) {
	var mu sync.Mutex
	var adaToken string
	adaStarted, release := make(chan struct{}), make(chan struct{})
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The calls carry the token in params._meta; peek at it.
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string
			Params struct {
				Name      string
				Arguments map[string]string
				Meta      map[string]any `json:"_meta"`
			}
		}
		json.Unmarshal(body, &msg)
		if msg.Method != "tools/call" {
			scriptedUpstream(nil).ServeHTTP(w, r)
			return
		}
		scriptedUpstream(func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			if msg.Params.Arguments["who"] == "ada" {
				mu.Lock()
				adaToken, _ = msg.Params.Meta["progressToken"].(string)
				mu.Unlock()
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				close(adaStarted)
				<-release
				sseAnswer(w, id, "ada done", "\n")
				return
			}
			mu.Lock()
			tok := adaToken
			mu.Unlock()
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%q,\"progress\":1,\"message\":\"bob's data\"}}\n\n", tok)
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"bob done\"}]}}\n\n", id)
		}).ServeHTTP(w, r)
	}))
	up := newProxy(t, proxy.HTTP(s.url(), &proxy.HTTPOptions{MaxRetries: -1}), &proxy.Options{Prefix: "s_", ProtocolVersion: "2025-11-25", NoBreaker: true})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	var heard []string
	ada := mcpkittest.NewInMemoryServer(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, n *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			heard = append(heard, n.Params.Message)
			mu.Unlock()
		},
	}})
	bob := mcpkittest.NewInMemoryServer(t, local, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ada.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "s_t", Arguments: map[string]any{"who": "ada"}, Meta: mcp.Meta{"progressToken": "ada-1"}})
	}()
	<-adaStarted
	if _, err := bob.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "s_t", Arguments: map[string]any{"who": "bob"}, Meta: mcp.Meta{"progressToken": "bob-1"}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // ada's client hears a notification on its own goroutine
	close(release)
	<-done
	mu.Lock()
	defer mu.Unlock()
	for _, m := range heard {
		if m == "bob's data" {
			t.Errorf("ada's call heard a progress notification sent on bob's call: %q", m)
		}
	}
}
