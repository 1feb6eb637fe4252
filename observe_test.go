package mcpkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// seenEvent is what a test keeps of an Event.
type seenEvent struct {
	decision mcpkit.Decision
	name     string
	tool     string // the reached tool's identity, "" for none
	outcome  mcpkit.Outcome
	class    mcpkit.ErrorClass
	user     string // the caller's verified user
	args     string // the request's arguments, "-" without a request
}

// eventLog is an Observer that keeps what it is told.
type eventLog struct {
	mu     sync.Mutex
	events []seenEvent
}

func (l *eventLog) Observe(_ context.Context, ev *mcpkit.Event) {
	se := seenEvent{decision: ev.Decision, name: ev.Name, outcome: ev.Outcome, class: ev.Class, args: "-"}
	if ev.Tool != nil {
		se.tool = ev.Tool.ID().String()
	}
	if info := ev.Caller.TokenInfo(); info != nil {
		se.user = info.UserID
	}
	if ev.Request != nil {
		se.args = string(ev.Request.Arguments)
	}
	if ev.Method != "tools/call" {
		se.name = "method " + ev.Method
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, se)
}

func (l *eventLog) take() []seenEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := l.events
	l.events = nil
	return ev
}

// observedServer serves, over HTTP behind a bearer-token check, tools
// that end in each way a call can: a result, a refusal by a scope, a
// panic, a tool error; and one hidden from everyone. Every decision goes
// to the log it returns.
func observedServer(t *testing.T, sessions bool) (string, *eventLog) {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "observed", Version: "1"}, nil)
	log := &eventLog{}
	srv.Observe(log)
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("repo:admin")))
	handlers := map[string]mcpkit.HandlerFunc{
		"read_repo": func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "read"}}}, nil
		},
		"delete_repo": func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil
		},
		"boom": func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { panic("boom") },
		"busy": func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, mcpkit.NewToolError(fmt.Errorf("try later"), mcpkit.Retryable)
		},
		"secret": func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "secret"}}}, nil
		},
	}
	for name, h := range handlers {
		if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, Handler: h, Version: "1.0"}); err != nil {
			t.Fatal(err)
		}
	}
	visibility.New(visibility.DisableNames("secret")).Attach(srv)
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if info, ok := stepUpTokens[token]; ok {
			return info, nil
		}
		return nil, auth.ErrInvalidToken
	}
	h := srv.HTTPHandler(&mcpkit.HTTPOptions{Sessions: sessions, ResourceMetadataURL: testResourceMetadata})
	h = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: testResourceMetadata})(h)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL, log
}

// TestObserveEveryDecision: an observer hears of every decision about a
// call, with the caller, the name called, the tool reached and the
// outcome, on both protocol eras: on 2026-07-28 the refusal by a scope is
// made from the headers, before any middleware runs, and is heard of all
// the same, as a refusal of the same tool.
func TestObserveEveryDecision(t *testing.T) {
	for _, tc := range []struct {
		name     string
		version  string
		sessions bool
		early    bool // the refusal is made before the body is read
	}{
		{"2026-07-28", mcpkittest.StatelessVersion, false, true},
		{"2025-11-25 stateless", mcpkittest.StatefulVersion, false, false},
		{"2025-11-25 session", mcpkittest.StatefulVersion, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, log := observedServer(t, tc.sessions)
			h := &stepUp{token: "t-read"}
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, OAuthHandler: h},
				&mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for _, name := range []string{"read_repo", "nosuch", "secret", "boom", "busy", "delete_repo"} {
				_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"n": 1}})
				unknown := name == "nosuch" || name == "secret"
				if (err != nil) != unknown {
					t.Errorf("%s: %v", name, err)
				}
			}
			refused := seenEvent{decision: mcpkit.DecisionRefused, name: "delete_repo", tool: "delete_repo@1.0",
				outcome: mcpkit.OutcomeToolError, class: mcpkit.Fatal, user: "ada", args: `{"n":1}`}
			if tc.early {
				refused.args = "-" // the body was never read
			}
			want := []seenEvent{
				{mcpkit.DecisionServed, "read_repo", "read_repo@1.0", mcpkit.OutcomeOK, "", "ada", `{"n":1}`},
				{mcpkit.DecisionUnknown, "nosuch", "", mcpkit.OutcomeProtocolError, "", "ada", `{"n":1}`},
				// Hidden is heard of as unknown, as the client is answered.
				{mcpkit.DecisionUnknown, "secret", "", mcpkit.OutcomeProtocolError, "", "ada", `{"n":1}`},
				{mcpkit.DecisionServed, "boom", "boom@1.0", mcpkit.OutcomePanic, mcpkit.Fatal, "ada", `{"n":1}`},
				{mcpkit.DecisionServed, "busy", "busy@1.0", mcpkit.OutcomeToolError, mcpkit.Retryable, "ada", `{"n":1}`},
				refused,
				// After the step-up, the same call is served.
				{mcpkit.DecisionServed, "delete_repo", "delete_repo@1.0", mcpkit.OutcomeOK, "", "ada", `{"n":1}`},
			}
			if got := log.take(); !slices.Equal(got, want) {
				t.Errorf("events:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestObserveThroughCallTool: a call through a discovery meta-tool is
// heard of twice: the meta-tool's call, and the call of the tool it
// reached, under the name it named and with that tool's identity; a name
// it cannot reach is the meta-tool's tool error.
func TestObserveThroughCallTool(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "observed", Version: "1"}, nil)
	log := &eventLog{}
	srv.Observe(log)
	echo := mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Arguments)}}}, nil
	})
	if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "deploy", InputSchema: map[string]any{"type": "object"}}, Handler: echo, Version: "2.0"}); err != nil {
		t.Fatal(err)
	}
	if err := transform.Discovery(srv, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcpkittest.ConnectInMemory(t.Context(), srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: transform.CallToolName,
		Arguments: map[string]any{"name": "deploy", "arguments": map[string]any{"env": "prod"}}})
	if err != nil || res.IsError {
		t.Fatalf("call_tool: %v %v", res, err)
	}
	got := log.take()
	if len(got) != 2 {
		t.Fatalf("events: %+v", got)
	}
	if e := got[0]; e.decision != mcpkit.DecisionServed || e.name != "deploy" || e.tool != "deploy@2.0" || e.args != `{"env":"prod"}` || e.outcome != mcpkit.OutcomeOK {
		t.Errorf("the reached tool's event: %+v", e)
	}
	if e := got[1]; e.decision != mcpkit.DecisionServed || e.name != transform.CallToolName || !strings.HasPrefix(e.tool, transform.CallToolName) {
		t.Errorf("the meta-tool's event: %+v", e)
	}
}

// TestObservePrompts: a prompts/get is heard of as a call is: unknown and
// hidden alike, a missing required argument before the chain, a refusal
// by a server-wide requirement, a prompt served.
func TestObservePrompts(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "observed", Version: "1"}, nil)
	log := &eventLog{}
	srv.Observe(log)
	var seen []string
	srv.Observe(mcpkit.ObserverFunc(func(_ context.Context, ev *mcpkit.Event) {
		p := "-"
		if ev.Prompt != nil {
			p = ev.Prompt.Key()
		}
		seen = append(seen, string(ev.Decision)+" "+ev.Method+" "+ev.Name+" "+p+" "+string(ev.Outcome))
	}))
	handler := mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
	})
	if err := srv.AddPrompts(
		&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}}, Handler: handler},
		&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "staff"}, Handler: handler, Middleware: []mcpkit.Middleware{mcpkit.RequireScopes("staff")}},
	); err != nil {
		t.Fatal(err)
	}
	cs, err := mcpkittest.ConnectInMemory(t.Context(), srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, p := range []*mcp.GetPromptParams{
		{Name: "greet", Arguments: map[string]string{"who": "ada"}},
		{Name: "greet"},
		{Name: "nosuch"},
		{Name: "staff"},
	} {
		cs.GetPrompt(t.Context(), p)
	}
	want := []string{
		"served prompts/get greet greet ok",
		"invalid prompts/get greet greet protocol_error",
		"unknown prompts/get nosuch - protocol_error",
		"refused prompts/get staff staff tool_error",
	}
	if !slices.Equal(seen, want) {
		t.Errorf("events:\n got %q\nwant %q", seen, want)
	}
	if got := log.take(); len(got) != 4 || got[0].args != "-" {
		t.Errorf("the log's events: %+v", got)
	}
}
