package mcpkit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/visibility"
)

// targetLog keeps, of each prompts/get and resources/read event, a line:
// decision, method, name, what it reached ("-": nothing), outcome, and
// whether the event carries the request ("request") or was decided by the
// headers alone ("headers").
type targetLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *targetLog) Observe(_ context.Context, ev *mcpkit.Event) {
	reached, req := "-", "request"
	switch ev.Method {
	case "prompts/get":
		if ev.Prompt != nil {
			reached = ev.Prompt.Key()
		}
		if ev.PromptRequest == nil {
			req = "headers"
		}
	case "resources/read":
		switch {
		case ev.Resource != nil:
			reached = ev.Resource.Key()
		case ev.Template != nil:
			reached = ev.Template.Key()
		}
		if ev.ResourceRequest == nil {
			req = "headers"
		}
	case "completion/complete":
		switch {
		case ev.Prompt != nil:
			reached = ev.Prompt.Key()
		case ev.Template != nil:
			reached = ev.Template.Key()
		}
		if ev.CompleteRequest == nil {
			req = "none"
		}
	default:
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("%s %s %s %s %s %s", ev.Decision, ev.Method, ev.Name, reached, ev.Outcome, req))
}

func (l *targetLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// rootOnly holds for the caller whose verified user is "root".
func rootOnly(_ context.Context, c mcpkit.Caller) bool {
	info := c.TokenInfo()
	return info != nil && info.UserID == "root"
}

// readServer returns a server of resources whose reads end in each way a
// read can: docs://open and the template docs://user/{id} served,
// docs://admin refused without repo:admin, docs://root hidden from all but
// root (and requiring repo:admin too), and the template vault://{key}
// requiring repo:admin; and a prompt deploy requiring repo:admin. runs
// counts the handlers' runs.
func readServer(t *testing.T, runs *atomic.Int32) *mcpkit.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reads", Version: "1"}, nil)
	admin := []mcpkit.Middleware{mcpkit.RequireScopes("repo:admin")}
	text := func(uri string, mw []mcpkit.Middleware, tags ...string) *mcpkit.Resource {
		return &mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: uri}, Tags: tags, Middleware: mw,
			Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
				runs.Add(1)
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "text of " + req.URI}}}, nil
			})}
	}
	if err := srv.AddResources(text("docs://open", nil), text("docs://admin", admin), text("docs://root", admin, "root")); err != nil {
		t.Fatal(err)
	}
	type key struct {
		ID string `json:"id"`
	}
	user := tools.MustTemplate(tools.NewTemplate("docs://user/{id}", func(_ context.Context, req *mcpkit.ResourceRequest, p key) (*mcp.ReadResourceResult, error) {
		runs.Add(1)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "user " + p.ID}}}, nil
	}, nil))
	vault := tools.MustTemplate(tools.NewTemplate("vault://{id}", func(_ context.Context, req *mcpkit.ResourceRequest, p key) (*mcp.ReadResourceResult, error) {
		runs.Add(1)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "vault"}}}, nil
	}, nil))
	vault.Middleware = admin
	if err := srv.AddResourceTemplates(user, vault); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrompts(&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "deploy"}, Middleware: admin,
		Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			runs.Add(1)
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "deploy"}}}}, nil
		})}); err != nil {
		t.Fatal(err)
	}
	visibility.New(visibility.Require(func(r *mcpkit.Resource) bool { return r.HasTag("root") }, rootOnly)).Attach(srv)
	return srv
}

// TestObserveResourceReads: every decision about a resources/read reaches
// the observers, as a prompts/get's does, on both eras: served (with the
// resource or the template reached and the URI read), unknown and hidden
// alike, refused. On 2026-07-28 over HTTP the refusal is made from the
// headers, before the body is read.
func TestObserveResourceReads(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			var runs atomic.Int32
			srv := readServer(t, &runs)
			log := &targetLog{}
			srv.Observe(log)
			cs := era.Connect(t, srv, &mcpkittest.Options{Tokens: stepUpTokens, Token: "t-read"}).Session
			for _, uri := range []string{"docs://open", "docs://user/42", "docs://nosuch", "docs://root", "docs://admin"} {
				cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			}
			refusedBy := "request"
			if era.Name == mcpkittest.StatelessVersion {
				refusedBy = "headers"
			}
			want := []string{
				"served resources/read docs://open docs://open ok request",
				"served resources/read docs://user/42 docs://user/{id} ok request",
				"unknown resources/read docs://nosuch - protocol_error request",
				"unknown resources/read docs://root - protocol_error request",
				"refused resources/read docs://admin docs://admin tool_error " + refusedBy,
			}
			if got := log.take(); !slices.Equal(got, want) {
				t.Errorf("events:\n got %q\nwant %q", got, want)
			}
			if n := runs.Load(); n != 2 {
				t.Errorf("handlers ran %d times, want 2", n)
			}
		})
	}
}

// TestEarlyRefusalPromptsAndResources: on 2026-07-28 a prompts/get and a
// resources/read whose target requires a scope the token lacks are
// answered 403 with the challenge from their headers, before the body is
// read, and observed as refusals; the step-up client then gets a token
// with the scope and is served. A resource hidden from the caller is not
// refused early, whatever it requires: it is answered as unknown, with no
// challenge that would tell it exists.
func TestEarlyRefusalPromptsAndResources(t *testing.T) {
	var runs atomic.Int32
	srv := readServer(t, &runs)
	log := &targetLog{}
	srv.Observe(log)
	var refusal string
	srv.Observe(mcpkit.ObserverFunc(func(_ context.Context, ev *mcpkit.Event) {
		if ev.Decision == mcpkit.DecisionRefused && ev.Name == "vault://s3cr3t" {
			refusal = ev.Err.Error()
		}
	}))
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if info, ok := stepUpTokens[token]; ok {
			return info, nil
		}
		return nil, auth.ErrInvalidToken
	}
	h := srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: testResourceMetadata})
	h = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: testResourceMetadata})(h)
	ts := httptest.NewServer(h)
	defer ts.Close()
	connect := func(up *stepUp) *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL, OAuthHandler: up},
			&mcp.ClientSessionOptions{ProtocolVersion: mcpkittest.StatelessVersion})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	challenged := []seenChallenge{{status: http.StatusForbidden, err: "insufficient_scope", scope: "repo:admin", resourceMeta: testResourceMetadata}}

	hidden := &stepUp{token: "t-read"}
	if _, err := connect(hidden).ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://root"}); err == nil || !strings.Contains(err.Error(), "Resource not found") {
		t.Errorf("hidden resource: %v, want Resource not found", err)
	}
	if got := hidden.seen(); len(got) != 0 {
		t.Errorf("a hidden resource was challenged: %+v", got)
	}

	forPrompt := &stepUp{token: "t-read"}
	if res, err := connect(forPrompt).GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "deploy"}); err != nil || len(res.Messages) != 1 {
		t.Errorf("prompt after step-up: %v %v", res, err)
	}
	if got := forPrompt.seen(); !slices.Equal(got, challenged) {
		t.Errorf("prompt challenges %+v, want %+v", got, challenged)
	}

	forResource := &stepUp{token: "t-read"}
	cs := connect(forResource)
	if res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://admin"}); err != nil || len(res.Contents) != 1 {
		t.Errorf("resource after step-up: %v %v", res, err)
	}
	if got := forResource.seen(); !slices.Equal(got, challenged) {
		t.Errorf("resource challenges %+v, want %+v", got, challenged)
	}

	forTemplate := &stepUp{token: "t-read"}
	if res, err := connect(forTemplate).ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "vault://s3cr3t"}); err != nil || len(res.Contents) != 1 {
		t.Errorf("template after step-up: %v %v", res, err)
	}
	if got := forTemplate.seen(); !slices.Equal(got, challenged) {
		t.Errorf("template challenges %+v, want %+v", got, challenged)
	}

	want := []string{
		"unknown resources/read docs://root - protocol_error request",
		"refused prompts/get deploy deploy tool_error headers",
		"served prompts/get deploy deploy ok request",
		"refused resources/read docs://admin docs://admin tool_error headers",
		"served resources/read docs://admin docs://admin ok request",
		"refused resources/read vault://s3cr3t vault://{id} tool_error headers",
		"served resources/read vault://s3cr3t vault://{id} ok request",
	}
	if got := log.take(); !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("handlers ran %d times, want 3 (once each, after the step-up)", n)
	}
	// The refusal names the template, not the URI read: its variables
	// may be secret.
	if want := `insufficient scope: resource "vault://{id}" requires scope "repo:admin"`; refusal != want {
		t.Errorf("refusal %q, want %q", refusal, want)
	}
}

// TestObserveDrainedRead: a 2026-07-28 resources/read that a draining
// server refuses from its headers is observed, as a prompts/get's is.
func TestObserveDrainedRead(t *testing.T) {
	var runs atomic.Int32
	srv := readServer(t, &runs)
	log := &targetLog{}
	srv.Observe(log)
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	if err := srv.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://user/7"}); err == nil {
		t.Fatal("a draining server served a read")
	}
	want := []string{"draining resources/read docs://user/7 - tool_error headers"}
	if got := log.take(); !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("handlers ran %d times", n)
	}
}

// TestDrainRefusesSessionReads: on a session (2025-11-25, in memory), a
// draining server refuses a resources/read and a prompts/get as it
// refuses a call, with an error another replica's answer can replace (its
// class, retryable, in the error's data), observed, and no handler runs.
func TestDrainRefusesSessionReads(t *testing.T) {
	var runs atomic.Int32
	srv := readServer(t, &runs)
	if err := srv.AddPrompts(&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "p"}, Handler: mcpkit.PromptHandlerFunc(
		func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			runs.Add(1)
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "p"}}}}, nil
		})}); err != nil {
		t.Fatal(err)
	}
	log := &targetLog{}
	srv.Observe(log)
	ts := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
	if err := srv.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, readErr := ts.Session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://user/7"})
	_, promptErr := ts.Session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "p"})
	for what, err := range map[string]error{"read": readErr, "prompt": promptErr} {
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInternalError || !strings.Contains(string(werr.Data), `"retryable"`) {
			t.Errorf("%s while draining: %v (data %s)", what, err, func() []byte {
				if werr != nil {
					return werr.Data
				}
				return nil
			}())
		}
	}
	if got := log.take(); len(got) != 2 || !strings.HasPrefix(got[0], "draining resources/read docs://user/7") || !strings.HasPrefix(got[1], "draining prompts/get p") {
		t.Errorf("events: %q", got)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("handlers ran %d times", n)
	}
}
