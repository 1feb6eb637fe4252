package mcpkit_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// TestAttack36RoutesObserved: a call of a registered tool, of a mounted
// server's tool, and of a provider's tool is each observed once by the
// server it came in through, with the name it named and the identity of
// the tool it reached, on both eras.
func TestAttack36RoutesObserved(t *testing.T) {
	for _, era := range []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{
		{"2026-07-28", mcpkittest.NewStatelessServer},
		{"2025-11-25 session", mcpkittest.NewServer},
	} {
		t.Run(era.name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "parent", Version: "1"}, nil)
			log := &eventLog{}
			srv.Observe(log)
			if err := srv.Add(tool("own", reply("own"))); err != nil {
				t.Fatal(err)
			}
			child := mcpkit.NewServer(&mcp.Implementation{Name: "child", Version: "1"}, nil)
			if err := child.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "inner", InputSchema: objectSchema}, Handler: reply("inner"), Version: "3.0"}); err != nil {
				t.Fatal(err)
			}
			if _, err := srv.Mount("kid", child); err != nil {
				t.Fatal(err)
			}
			srv.AddProvider(newReports("sales"))
			ts := era.connect(t, srv, nil)
			for _, name := range []string{"own", "kid_inner", "report_sales"} {
				if res, err := ts.CallTool(t.Context(), name, map[string]any{}); err != nil || res.IsError {
					t.Fatalf("%s: %v %v", name, res, err)
				}
			}
			got := log.take()
			want := []struct{ name, tool string }{{"own", "own"}, {"kid_inner", "inner@3.0"}, {"report_sales", "report_sales"}}
			if len(got) != len(want) {
				t.Fatalf("events: %+v", got)
			}
			for i, w := range want {
				if got[i].decision != mcpkit.DecisionServed || got[i].name != w.name || got[i].tool != w.tool || got[i].outcome != mcpkit.OutcomeOK {
					t.Errorf("event %d: %+v, want %s reaching %s", i, got[i], w.name, w.tool)
				}
			}
		})
	}
}

// TestAttack36PanickingObserver: an observer that panics must not take
// the server down, nor lose the call's answer.
func TestAttack36PanickingObserver(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "observed", Version: "1"}, nil)
	srv.Observe(mcpkit.ObserverFunc(func(context.Context, *mcpkit.Event) { panic("observer exploded") }))
	if err := srv.Add(tool("ok", reply("fine"))); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	res, err := ts.CallTool(t.Context(), "ok", map[string]any{})
	if err != nil {
		t.Fatalf("a panicking observer failed the call it observes: %v", err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Errorf("result: %+v", res)
	}
}

// TestAttack36PromptsObserved: a prompts/get that a token requirement
// refuses is a decision too; is it observed?
func TestAttack36PromptsObserved(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "observed", Version: "1"}, nil)
	log := &eventLog{}
	srv.Observe(log)
	srv.Use(mcpkit.RequireScopes("vault:read"))
	if err := srv.AddPrompts(&mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "vault"},
		Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "x"}}}}, nil
		}),
	}); err != nil {
		t.Fatal(err)
	}
	cs, err := mcpkittest.ConnectInMemory(t.Context(), srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "vault"}); err == nil {
		t.Fatal("a prompt that needs a scope was served without a token")
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "nosuch"}); err == nil {
		t.Fatal("an unknown prompt was served")
	}
	got := log.take()
	if len(got) != 2 || got[0].decision != mcpkit.DecisionRefused || got[0].name != "method prompts/get" ||
		got[1].decision != mcpkit.DecisionUnknown {
		t.Errorf("prompts/get events: %+v", got)
	}
}

// TestAttack36DrainExpiredContext: with no call in flight and nothing
// registered to run, there is nothing left when ctx ends: Drain reports
// success, whether or not ctx has ended already, every time.
func TestAttack36DrainExpiredContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	fails := 0
	for range 200 {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "idle", Version: "1"}, nil)
		if err := srv.Drain(ctx); err != nil {
			fails++
		}
	}
	if fails > 0 {
		t.Errorf("Drain of an idle server with an ended context failed %d times of 200", fails)
	}
}

// TestAttack36DrainRace: calls arriving while Drain begins are each
// either served to the end or refused retryably before they run; none
// runs after Drain returned, and Drain returns nil.
func TestAttack36DrainRace(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "racy", Version: "1"}, nil)
	var drained atomic.Bool
	var late atomic.Int32
	first := make(chan struct{})
	var once sync.Once
	if err := srv.Add(tool("work", func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
		if drained.Load() {
			late.Add(1)
		}
		once.Do(func() { close(first) })
		time.Sleep(time.Millisecond) // work in flight as the drain begins
		return textResult("done"), nil
	})); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(nil))
	defer hs.Close()
	rc := &mcpkittest.RawClient{Endpoint: hs.URL}
	var served, refused, other atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 40 {
		wg.Go(func() {
			<-start
			for range 5 {
				_, err := rc.Call(t.Context(), "tools/call", map[string]any{"name": "work", "arguments": map[string]any{}})
				switch {
				case err == nil:
					served.Add(1)
				case strings.Contains(err.Error(), "503"):
					refused.Add(1)
				default:
					other.Add(1)
					t.Errorf("a call neither served nor refused: %v", err)
				}
			}
		})
	}
	close(start)
	<-first
	if err := srv.Drain(t.Context()); err != nil {
		t.Errorf("Drain: %v", err)
	}
	drained.Store(true)
	wg.Wait()
	if late.Load() > 0 {
		t.Errorf("%d calls ran after Drain returned", late.Load())
	}
	if served.Load() == 0 {
		t.Error("no call was in flight as the drain began")
	}
	t.Logf("served %d, refused %d, other %d", served.Load(), refused.Load(), other.Load())
}

// TestAttack36EarlyRefusalPinnedVersion: a 2026-07-28 call pinned to
// version 1.0 that the headers refuse is observed as a refusal of 1.0,
// the version it named, not of another.
func TestAttack36EarlyRefusalPinnedVersion(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pinned", Version: "1"}, nil)
	log := &eventLog{}
	srv.Observe(log)
	srv.Use(mcpkit.ForTools(mcpkit.Named("deploy"), mcpkit.RequireScopes("deploy:admin")))
	for _, v := range []string{"1.0", "2.0"} {
		if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "deploy", InputSchema: objectSchema}, Handler: reply(v), Version: v}); err != nil {
			t.Fatal(err)
		}
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: "ada", Scopes: []string{"deploy:read"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	hs := httptest.NewServer(auth.RequireBearerToken(verify, nil)(srv.HTTPHandler(nil)))
	defer hs.Close()
	rc := &mcpkittest.RawClient{Endpoint: hs.URL, Token: "t"}
	_, err := rc.Call(t.Context(), "tools/call", map[string]any{"name": "deploy", "arguments": map[string]any{},
		"_meta": map[string]any{mcpkit.MetaKeyVersion: "1.0"}})
	if err == nil {
		t.Fatal("a call without deploy:admin was served")
	}
	got := log.take()
	if len(got) != 1 || got[0].decision != mcpkit.DecisionRefused || got[0].user != "ada" {
		t.Fatalf("events: %+v", got)
	}
	// Every version the caller sees is refused, so the call is refused
	// whatever it pins; the pin is in the body, which the early refusal
	// never reads: the event names the version an unpinned call reaches,
	// as Event.Tool says.
	if got[0].tool != "deploy@2.0" {
		t.Errorf("the early refusal names %s, want the unpinned version, deploy@2.0", got[0].tool)
	}
}

// TestAttack36DrainSlowBody: a 2026-07-28 call whose headers arrived
// before the drain began, and whose body comes after, is served, and
// Drain returns only once it has been.
func TestAttack36DrainSlowBody(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	var toolDone atomic.Bool
	if err := srv.Add(tool("work", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		toolDone.Store(true)
		return textResult("done"), nil
	})); err != nil {
		t.Fatal(err)
	}
	begun := drainBegun(srv)
	arrived := make(chan struct{})
	inner := srv.HTTPHandler(nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server admits a request before it reads the body: the first
		// read says the request was admitted.
		r.Body = &firstRead{ReadCloser: r.Body, read: func() { close(arrived) }}
		inner.ServeHTTP(w, r)
	}))
	defer hs.Close()
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, hs.URL, pr)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": mcpkittest.StatelessVersion, "Mcp-Method": "tools/call", "Mcp-Name": "work"} {
		req.Header.Set(k, v)
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- answer{status: resp.StatusCode, body: string(b)}
	}()
	<-arrived
	drained := make(chan error, 1)
	go func() {
		err := srv.Drain(t.Context())
		if !toolDone.Load() {
			err = errors.New("Drain returned before the admitted call ran")
		}
		drained <- err
	}()
	<-begun
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"` + mcpkittest.StatelessVersion + `","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	if _, err := io.WriteString(pw, body); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	a := <-got
	if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, "done") {
		t.Errorf("the admitted call: %d %q %v", a.status, a.body, a.err)
	}
	if err := <-drained; err != nil {
		t.Errorf("Drain: %v", err)
	}
}

// TestAttack36DrainTwiceAtOnce: two Drains at once both wait for the call
// in flight and for the functions registered, which run once.
func TestAttack36DrainTwiceAtOnce(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "twice", Version: "1"}, nil)
	var hooks atomic.Int32
	release := make(chan struct{})
	srv.RegisterOnDrain(func(context.Context) error { hooks.Add(1); <-release; return nil })
	cs, err := mcpkittest.ConnectInMemory(t.Context(), srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- srv.Drain(t.Context()) }()
	}
	select {
	case err := <-errs:
		t.Fatalf("a Drain returned before the registered function did: %v", err)
	case <-time.After(20 * time.Millisecond): // a safety net: nothing should arrive
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("Drain: %v", err)
		}
	}
	if hooks.Load() != 1 {
		t.Errorf("the registered function ran %d times", hooks.Load())
	}
}

// firstRead is a request body that calls read once, at its first Read.
type firstRead struct {
	io.ReadCloser
	once sync.Once
	read func()
}

func (b *firstRead) Read(p []byte) (int, error) {
	b.once.Do(b.read)
	return b.ReadCloser.Read(p)
}
