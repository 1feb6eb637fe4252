package mcpkit_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/proxy"
	"github.com/mcpkit/mcpkit/requeststate"
)

// attackChildEnv, set, makes a test run the part that may crash the
// process, as a child of the test that checks its exit.
const attackChildEnv = "MCPKIT_ATTACK36B_CHILD"

// TestAttack36bDrainHookPanics: a function given to RegisterOnDrain that
// panics is its drain's error, as a panicking observer or sink is logged
// and survived: it must not take the process down in the middle of the
// drain, with calls in flight and tasks not handed over.
func TestAttack36bDrainHookPanics(t *testing.T) {
	if os.Getenv(attackChildEnv) == "hook" {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "hooks", Version: "1"}, nil)
		srv.RegisterOnDrain(func(context.Context) error { panic("hook broke") })
		err := srv.Drain(context.Background())
		if err == nil || !strings.Contains(err.Error(), "hook broke") {
			t.Fatalf("Drain: %v, want the panic as its error", err)
		}
		// Registered once the drain has begun: run at once, elsewhere.
		done := make(chan struct{})
		srv.RegisterOnDrain(func(context.Context) error { defer close(done); panic("late hook broke") })
		<-done
		time.Sleep(10 * time.Millisecond) // let a panic on the hook's goroutine end the process, if it does
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAttack36bDrainHookPanics$", "-test.count=1")
	cmd.Env = append(os.Environ(), attackChildEnv+"=hook")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("a panicking drain hook: %v\n%s", err, out)
	}
}

// TestAttack36bDrainHookPastDeadline: a function that blocks past the
// drain's deadline makes Drain report it when ctx ends, without waiting;
// a later Drain, once it returned, reports success.
func TestAttack36bDrainHookPastDeadline(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "slow-hook", Version: "1"}, nil)
	release := make(chan struct{})
	srv.RegisterOnDrain(func(context.Context) error { <-release; return nil })
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := srv.Drain(ctx); err == nil || !strings.Contains(err.Error(), "RegisterOnDrain") || !errors.Is(err, context.Canceled) {
		t.Errorf("Drain with the hook stuck: %v", err)
	}
	close(release)
	if err := srv.Drain(t.Context()); err != nil {
		t.Errorf("Drain again, the hook done: %v", err)
	}
}

// TestAttack36bDrainAgainAfterAdd: a drained server to which tools are
// added still refuses their calls (the readiness check answering 503
// throughout), and drains again at once.
func TestAttack36bDrainAgainAfterAdd(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "again", Version: "1"}, nil)
	ready := srv.ReadinessHandler()
	status := func() int {
		rec := httptest.NewRecorder()
		ready.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/readyz", nil))
		return rec.Code
	}
	if got := status(); got != http.StatusOK {
		t.Errorf("ready before the drain: %d", got)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	if err := srv.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(tool("late", reply("late"))); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != http.StatusServiceUnavailable {
		t.Errorf("ready after the drain and an Add: %d", got)
	}
	res, err := ts.CallTool(t.Context(), "late", map[string]any{})
	if err == nil && (res == nil || !res.IsError) {
		t.Errorf("a tool added after the drain was served: %+v", res)
	}
	if err := srv.Drain(t.Context()); err != nil {
		t.Errorf("second Drain: %v", err)
	}
}

// TestAttack36bDrainedPromptObserved: Observe tells of "the same of each
// prompts/get" as of a tools/call; a 2026-07-28 prompts/get that a
// draining server refuses by its headers must reach the observers too, as
// a tools/call's does.
func TestAttack36bDrainedPromptObserved(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "prompts", Version: "1"}, nil)
	log := &eventLog{}
	srv.Observe(log)
	if err := srv.AddPrompts(&mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "greet"},
		Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
		}),
	}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(tool("own", reply("own"))); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	if err := srv.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greet"}); err == nil {
		t.Fatal("a draining server served a prompt")
	}
	if _, err := ts.CallTool(t.Context(), "own", map[string]any{}); err == nil {
		t.Log("the tools/call was answered with an error result")
	}
	got := log.take()
	var prompt, call bool
	for _, ev := range got {
		prompt = prompt || ev.decision == mcpkit.DecisionDraining && ev.name == "method prompts/get"
		call = call || ev.decision == mcpkit.DecisionDraining && ev.name == "own"
	}
	if !call {
		t.Fatalf("the refused tools/call was not observed: %+v", got)
	}
	if !prompt {
		t.Errorf("a prompts/get refused while draining is not observed: %+v", got)
	}
}

// TestAttack36bConfirmProxiedAndProvided: Confirm asks before a proxied
// tool's call leaves for its upstream and before a provider's tool runs,
// once each; with the upstream down, the confirmed call is observed as
// served, outcome "error" (an *UpstreamError is internal: masked by
// MaskErrors) of class retryable, and the client gets a retryable error
// result.
func TestAttack36bConfirmProxiedAndProvided(t *testing.T) {
	var remoteRuns atomic.Int32
	remote := mcpkit.NewServer(&mcp.Implementation{Name: "db", Version: "1"}, nil)
	if err := remote.Add(tool("drop_table", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		remoteRuns.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "dropped"}}}, nil
	})); err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	var sessions []*mcp.ServerSession
	var mu sync.Mutex
	up, err := proxy.New(t.Context(), func(ctx context.Context) (mcp.Transport, error) {
		if down.Load() {
			return nil, errors.New("connection refused")
		}
		st, ct := mcp.NewInMemoryTransports()
		ss, err := remote.MCPServer().Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		sessions = append(sessions, ss)
		mu.Unlock()
		return ct, nil
	}, &proxy.Options{Prefix: "db_"})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "local", Version: "1"}, nil)
	log := &eventLog{}
	srv.Observe(log)
	srv.Use(mcpkit.ForTools(middleware.Destructive, middleware.Confirm(attackSealer(t), nil)))
	up.AddTo(srv)
	srv.AddProvider(newReports("sales"))
	var asked atomic.Int32
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
	}})
	for _, name := range []string{"db_drop_table", "report_sales"} {
		if res, err := ts.CallTool(t.Context(), name, map[string]any{}); err != nil || res.IsError {
			t.Fatalf("%s: %+v %v", name, res, err)
		}
	}
	if asked.Load() != 2 || remoteRuns.Load() != 1 {
		t.Fatalf("asked %d times, the upstream ran %d times; want 2 and 1", asked.Load(), remoteRuns.Load())
	}
	log.take()

	down.Store(true)
	mu.Lock()
	for _, ss := range sessions {
		ss.Close()
	}
	mu.Unlock()
	res, err := ts.CallTool(t.Context(), "db_drop_table", map[string]any{})
	if err != nil || !res.IsError || res.Meta[mcpkit.MetaKeyErrorClass] != string(mcpkit.Retryable) {
		t.Errorf("a call with the upstream down: %+v, %v; want a retryable error result", res, err)
	}
	got := log.take()
	last := got[len(got)-1]
	if last.decision != mcpkit.DecisionServed || last.tool != "db_drop_table" || last.outcome != mcpkit.OutcomeError || last.class != mcpkit.Retryable {
		t.Errorf("the call with the upstream down was observed as %+v", got)
	}
	if remoteRuns.Load() != 1 {
		t.Errorf("the upstream ran %d times", remoteRuns.Load())
	}
}

// attackSealer returns a sealer with a fresh key.
func attackSealer(t *testing.T) *requeststate.Sealer {
	t.Helper()
	s, err := requeststate.New([][]byte{[]byte(rand.Text() + rand.Text())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAttack36bDrainMountedChild: a mounted child server that drains
// takes no new calls through its parent either (its own drain says it
// "never serves new calls after"), and the parent's drain runs the
// child's RegisterOnDrain functions, since the child's work goes away
// with the parent's process.
func TestAttack36bDrainMountedChild(t *testing.T) {
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent", Version: "1"}, nil)
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child", Version: "1"}, nil)
	if err := child.Add(tool("inner", reply("inner"))); err != nil {
		t.Fatal(err)
	}
	var childHook atomic.Int32
	child.RegisterOnDrain(func(context.Context) error { childHook.Add(1); return nil })
	if _, err := parent.Mount("kid", child); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, parent, nil)
	if err := child.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	res, err := ts.CallTool(t.Context(), "kid_inner", map[string]any{})
	servedAfterChildDrain := err == nil && !res.IsError
	child2 := mcpkit.NewServer(&mcp.Implementation{Name: "child2", Version: "1"}, nil)
	var hook2 atomic.Int32
	child2.RegisterOnDrain(func(context.Context) error { hook2.Add(1); return nil })
	if _, err := parent.Mount("kid2", child2); err != nil {
		t.Fatal(err)
	}
	if err := parent.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if servedAfterChildDrain || hook2.Load() != 1 {
		t.Errorf("a drained child's tool served through its parent: %v; the parent's drain ran the child's functions %d times",
			servedAfterChildDrain, hook2.Load())
	}
	if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || res.Meta[mcpkit.MetaKeyRetryAfter] == nil {
		t.Errorf("the drained child's tool through its parent: %+v, %v; want a retryable refusal with a retry hint", res, err)
	}
}
