package mcpkit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
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
