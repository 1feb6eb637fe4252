package mcpkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// atk37dTokens: bob has "read" only; ada has "read" and "admin".
var atk37dTokens = map[string]*auth.TokenInfo{
	"bob": {UserID: "bob", Scopes: []string{"read"}},
	"ada": {UserID: "ada", Scopes: []string{"read", "admin"}},
}

// atk37dTree returns a grandchild "g" (prompt "q", resource ledger://q3,
// each guarded by its server's RequireScopes("admin")), a child mounting
// it under "g" and a parent mounting the child under "c": the parent
// serves the prompt as "c_g_q" and the resource as ledger://c/g/q3.
func atk37dTree(t *testing.T) (grand, parent *mcpkit.Server) {
	t.Helper()
	grand = mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
	grand.Use(mcpkit.RequireScopes("admin"))
	if err := grand.AddPrompts(say("q")); err != nil {
		t.Fatal(err)
	}
	if err := grand.AddResources(tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)); err != nil {
		t.Fatal(err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if _, err := child.Mount("g", grand); err != nil {
		t.Fatal(err)
	}
	parent = mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	return grand, parent
}

// atk37dHTTP serves srv over stateless HTTP behind bearer tokens, with a
// resource metadata URL that challenges name.
func atk37dHTTP(t *testing.T, srv *mcpkit.Server) string {
	t.Helper()
	h := srv.HTTPHandler(&mcpkit.HTTPOptions{ResourceMetadataURL: "https://rs.example/.well-known/oauth-protected-resource"})
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if info, ok := atk37dTokens[token]; ok {
			return info, nil
		}
		return nil, auth.ErrInvalidToken
	}
	ts := httptest.NewServer(auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h))
	t.Cleanup(ts.Close)
	return ts.URL
}

// atk37dPost sends one 2026-07-28 request as a conforming client does and
// returns the status, the challenge and the body.
func atk37dPost(t *testing.T, url, token, method, name string, params map[string]any) (int, string, string) {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcpkittest.StatelessVersion,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "atk", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcpkittest.StatelessVersion)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

// TestAttack37dEarlyAndLateChallengesAgree: severity low (the challenge
// itself is right; the refusal's text names what the caller never
// called). The grandchild's own answer to bob (no "admin") and the
// parent's, two mounts up, are the same HTTP challenge, whether the
// parent has a requirement of its own (which bob meets) or none: that
// part holds. Expected: the refusal names the prompt (resource) as it was
// called, "c_g_q" (ledger://c/g/q3), as InsufficientScopeError.Tool's doc
// says ("the name the tool ... was called by"). What happens: the refusal
// made before the chain names the grandchild's own name, "q"
// (ledger://q3), which the caller never saw: requirementRefusal passes
// each origin's servedName, not the name of the request.
func TestAttack37dEarlyAndLateChallengesAgree(t *testing.T) {
	for _, own := range []bool{false, true} {
		grand, parent := atk37dTree(t)
		if own {
			parent.Use(mcpkit.RequireScopes("read"))
		}
		gURL, pURL := atk37dHTTP(t, grand), atk37dHTTP(t, parent)
		for _, c := range []struct{ method, gName, pName, key string }{
			{"prompts/get", "q", "c_g_q", "name"},
			{"resources/read", "ledger://q3", "ledger://c/g/q3", "uri"},
		} {
			gs, gc, gb := atk37dPost(t, gURL, "bob", c.method, c.gName, map[string]any{c.key: c.gName})
			ps, pc, pb := atk37dPost(t, pURL, "bob", c.method, c.pName, map[string]any{c.key: c.pName})
			if gs != http.StatusForbidden || gc == "" {
				t.Fatalf("own=%v %s at the grandchild: %d %q %s", own, c.method, gs, gc, gb)
			}
			if ps != gs || pc != gc {
				t.Errorf("own=%v %s: grandchild %d %q, parent %d %q (%s)", own, c.method, gs, gc, ps, pc, pb)
			}
			if ps == http.StatusForbidden && !strings.Contains(pb, c.pName) {
				t.Errorf("own=%v %s: parent's refusal body does not name %q: %s", own, c.method, c.pName, pb)
			}
			t.Logf("own=%v %s: parent %d %q %s", own, c.method, ps, pc, strings.TrimSpace(pb))
		}
	}
}

// TestAttack37dTwoDeepRefusedAndObserved: the grandchild requires
// "admin"; bob (no admin) asks the parent, two mounts up, over HTTP with
// his token, for its prompt, its resource and a completion of the
// prompt's argument, on both eras (2025-11-25 over a session, 2026-07-28
// stateless; a fresh connection for each, since the SDK client closes
// after a 403). Each is refused, and the parent's observers (an audit
// among them) are told of each as a refusal (DecisionRefused) naming
// what was asked.
func TestAttack37dTwoDeepRefusedAndObserved(t *testing.T) {
	eras := []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{{"2025-11-25", mcpkittest.NewServer}, {"2026-07-28", mcpkittest.NewStatelessServer}}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
			grand.Use(mcpkit.RequireScopes("admin"))
			q := say("q", &mcp.PromptArgument{Name: "who"})
			q.Complete = map[string]mcpkit.CompleteFunc{"who": tools.CompleteFrom("ann", "bob")}
			if err := grand.AddPrompts(q); err != nil {
				t.Fatal(err)
			}
			if err := grand.AddResources(tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)); err != nil {
				t.Fatal(err)
			}
			child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
			if _, err := child.Mount("g", grand); err != nil {
				t.Fatal(err)
			}
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
			if _, err := parent.Mount("c", child); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var events []string
			parent.Observe(mcpkit.ObserverFunc(func(_ context.Context, ev *mcpkit.Event) {
				mu.Lock()
				defer mu.Unlock()
				events = append(events, ev.Method+" "+ev.Name+" "+string(ev.Decision))
			}))
			session := func() *mcp.ClientSession {
				return era.connect(t, parent, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
			}
			ctx := t.Context()
			if _, err := session().GetPrompt(ctx, &mcp.GetPromptParams{Name: "c_g_q", Arguments: map[string]string{"who": "x"}}); err == nil {
				t.Error("bob got c_g_q")
			}
			if _, err := session().ReadResource(ctx, &mcp.ReadResourceParams{URI: "ledger://c/g/q3"}); err == nil {
				t.Error("bob read ledger://c/g/q3")
			}
			if res, err := session().Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "c_g_q"}, Argument: mcp.CompleteParamsArgument{Name: "who", Value: ""}}); err == nil {
				t.Errorf("bob completed c_g_q: %v", res.Completion.Values)
			}
			mu.Lock()
			got := strings.Join(events, "\n")
			mu.Unlock()
			for _, want := range []string{
				"prompts/get c_g_q refused",
				"resources/read ledger://c/g/q3 refused",
				"completion/complete c_g_q refused",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("no event %q; events:\n%s", want, got)
				}
			}
		})
	}
}

// atk37dNotes is a ResourceProvider of one template, tmpl, looked up by
// its exact text (as a completion asks) or by a URI under its fixed
// prefix.
type atk37dNotes struct {
	atk37cSilent
	tmpl   *mcpkit.ResourceTemplate
	prefix string
}

func (p *atk37dNotes) ListResourceTemplates(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.ResourceTemplate, error) {
	if after >= p.tmpl.URITemplate {
		return nil, nil
	}
	return []*mcpkit.ResourceTemplate{p.tmpl}, nil
}

func (p *atk37dNotes) LookupResourceTemplate(_ context.Context, _ mcpkit.Caller, uri string) (*mcpkit.ResourceTemplate, error) {
	if uri == p.tmpl.URITemplate || strings.HasPrefix(uri, p.prefix) {
		return p.tmpl, nil
	}
	return nil, nil
}

// TestAttack37dProviderTemplateEscapedText: a provider's template whose
// text holds a percent-escape, a reserved expansion and a query
// expansion completes by that text, served directly and two mounts up
// (where the text has the namespaces inserted after "://").
func TestAttack37dProviderTemplateEscapedText(t *testing.T) {
	for _, text := range []string{
		"notes://caf%C3%A9/{name}",
		"notes://box/{+path}",
		"notes://box/{name}{?lang}",
		"notes://box/a%20b/{name}",
	} {
		t.Run(text, func(t *testing.T) {
			tmpl := &mcpkit.ResourceTemplate{
				ResourceTemplate: mcp.ResourceTemplate{URITemplate: text, Name: "notes"},
				Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "note"}}}, nil
				}),
			}
			v := text[strings.Index(text, "{")+1 : strings.Index(text, "}")]
			v = strings.TrimLeft(v, "+?")
			tmpl.Complete = map[string]mcpkit.CompleteFunc{v: tools.CompleteFrom("alpha", "beta")}
			grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
			grand.AddProvider(&atk37dNotes{tmpl: tmpl, prefix: text[:strings.Index(text, "{")]})
			child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
			if _, err := child.Mount("g", grand); err != nil {
				t.Fatal(err)
			}
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
			if _, err := parent.Mount("c", child); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				srv *mcpkit.Server
				ref string
			}{{grand, text}, {parent, strings.Replace(text, "://", "://c/g/", 1)}} {
				for _, era := range mcpkittest.Eras() {
					cs := era.Connect(t, c.srv, nil).Session
					list, err := cs.ListResourceTemplates(t.Context(), nil)
					if err != nil || len(list.ResourceTemplates) != 1 || list.ResourceTemplates[0].URITemplate != c.ref {
						t.Errorf("%s: listed %v, %v; want %q", era.Name, list, err, c.ref)
						continue
					}
					res, err := cs.Complete(t.Context(), &mcp.CompleteParams{
						Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: c.ref},
						Argument: mcp.CompleteParamsArgument{Name: v, Value: ""},
					})
					if err != nil || len(res.Completion.Values) != 2 {
						t.Errorf("%s: completion of %q: %v, %v; want alpha, beta", era.Name, c.ref, res, err)
					}
				}
			}
		})
	}
}

// atk37dHeard subscribes to uris at srv over a 2025-11-25 session with
// token's bearer token and returns the channel of the updates heard.
func atk37dHeard(t *testing.T, srv *mcpkit.Server, token string, uris ...string) <-chan string {
	t.Helper()
	heard := make(chan string, 8)
	cs := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: atk37dTokens, Token: token, Client: &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			heard <- req.Params.URI
		},
	}}).Session
	for _, uri := range uris {
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("%s subscribes to %s: %v", token, uri, err)
		}
	}
	return heard
}

// TestAttack37dUpdateStopsForNobody: the parent mounts the child under
// "c" and shows the mounted ledger://c/q3 to bob only (a per-request
// rule, visibility.Require with Users("bob")). Bob reads it and
// subscribes to it at the parent over a 2025-11-25 session; when the
// child's ledger://q3 changes, he hears of ledger://c/q3 (the check for
// a shadowing resource, made for no caller, does not stop it).
func TestAttack37dUpdateStopsForNobody(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "books"}, nil)
	if err := child.AddResources(tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	visibility.New(visibility.Require(func(tg mcpkit.Target) bool { return tg.Key() == "ledger://c/q3" }, visibility.Users("bob"))).Attach(parent)
	bob := mcpkittest.NewServer(t, parent, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
	if got, err := readText(bob, t.Context(), "ledger://c/q3"); err != nil || !strings.Contains(got, "numbers") {
		t.Fatalf("bob reads ledger://c/q3: %q, %v", got, err)
	}
	heard := atk37dHeard(t, parent, "bob", "ledger://c/q3")
	updated(t, child, "ledger://q3")
	if got := next(t, heard); got != "ledger://c/q3" {
		t.Errorf("bob heard %s", got)
	}
}

// TestAttack37dShadowForSomeStopsAll: severity medium (a subscriber who
// reads the mounted resource never hears of its changes). The parent
// mounts the child under "c" and has its own ledger://c/q3, shown to ada
// only (visibility.Require with Users("ada")): for ada it shadows the
// child's, for bob it does not, and bob reads the child's numbers. Bob
// subscribes at the parent over a 2025-11-25 session. Expected: when the
// child's ledger://q3 changes, bob, who reaches it, hears of
// ledger://c/q3. What happens, if it fails: the check that the parent's
// own resource shadows the mounted one (subscribe.go updated) is made
// once for no caller (reachResource with a nil caller), finds the
// parent's own, and stops the update for every subscriber, bob too.
func TestAttack37dShadowForSomeStopsAll(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "books"}, nil)
	if err := child.AddResources(tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	tick := tools.TextResource("memo://tick", "tick", "text/plain", "tick", nil)
	if err := parent.AddResources(tick, tools.TextResource("ledger://c/q3", "own", "text/plain", "own words", &tools.ResourceOptions{Tags: []string{"own"}})); err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	own := func(r *mcpkit.Resource) bool { return slices.Contains(r.Tags, "own") }
	visibility.New(visibility.Require(own, visibility.Users("ada"))).Attach(parent)
	bob := mcpkittest.NewServer(t, parent, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
	if got, err := readText(bob, t.Context(), "ledger://c/q3"); err != nil || !strings.Contains(got, "numbers") {
		t.Fatalf("bob reads ledger://c/q3: %q, %v; want the child's numbers", got, err)
	}
	ada := mcpkittest.NewServer(t, parent, &mcpkittest.Options{Tokens: atk37dTokens, Token: "ada"}).Session
	if got, err := readText(ada, t.Context(), "ledger://c/q3"); err != nil || !strings.Contains(got, "own words") {
		t.Fatalf("ada reads ledger://c/q3: %q, %v; want the parent's own", got, err)
	}
	heard := atk37dHeard(t, parent, "bob", "ledger://c/q3", "memo://tick")
	adaHeard := atk37dHeard(t, parent, "ada", "ledger://c/q3", "memo://tick")
	// memo://tick's update, sent after, marks the end: a session's
	// notifications arrive in order.
	updated(t, child, "ledger://q3")
	updated(t, parent, "memo://tick")
	if got := next(t, heard); got != "ledger://c/q3" {
		t.Errorf("bob, who reads the child's ledger://c/q3, heard %s first, not that it changed", got)
	}
	if got := next(t, adaHeard); got != "memo://tick" {
		t.Errorf("ada, whom the parent's own resource shadows the child's, heard %s", got)
	}
}

// TestAttack37dDerivedPromptCompletesForCaller: a derived prompt
// (transform.Prompt) hides its parent's "tenant" argument, filled in per
// request by a ValueFunc from the caller's token; the parent's completer
// of "month" completes within the tenant. Registered in the grandchild
// and asked two mounts up over HTTP with bob's token, on both eras, the
// completion of "month" completes within bob's tenant, as a prompts/get
// of it would be served, and the hidden argument does not complete.
func TestAttack37dDerivedPromptCompletesForCaller(t *testing.T) {
	report := say("report", &mcp.PromptArgument{Name: "tenant", Required: true}, &mcp.PromptArgument{Name: "month"})
	report.Handler = mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "tenant " + req.Arguments["tenant"]}}}}, nil
	})
	report.Complete = map[string]mcpkit.CompleteFunc{
		"month": func(_ context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
			return []string{req.Arguments["tenant"] + "-jan"}, nil
		},
		"tenant": tools.CompleteFrom("ada", "bob"),
	}
	mine, err := transform.Prompt(report, transform.PromptSpec{Name: "mine", Arguments: map[string]transform.PromptArg{
		"tenant": {Hide: true, ValueFunc: func(_ context.Context, req *mcpkit.PromptRequest) (string, bool, error) {
			if info := req.TokenInfo(); info != nil {
				return info.UserID, true, nil
			}
			return "", false, nil
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
	if err := grand.AddPrompts(mine); err != nil {
		t.Fatal(err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if _, err := child.Mount("g", grand); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	for _, connect := range []func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server{mcpkittest.NewServer, mcpkittest.NewStatelessServer} {
		for _, c := range []struct {
			srv  *mcpkit.Server
			name string
		}{{grand, "mine"}, {parent, "c_g_mine"}} {
			cs := connect(t, c.srv, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
			get, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: c.name})
			if err != nil || !strings.Contains(get.Messages[0].Content.(*mcp.TextContent).Text, "tenant bob") {
				t.Errorf("%s %s: get: %v, %v", cs.InitializeResult().ProtocolVersion, c.name, get, err)
			}
			ref := &mcp.CompleteReference{Type: "ref/prompt", Name: c.name}
			res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "month"}})
			if err != nil || len(res.Completion.Values) != 1 || res.Completion.Values[0] != "bob-jan" {
				t.Errorf("%s: month completes to %v, %v; want bob-jan", c.name, res, err)
			}
			res, err = cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "tenant"}})
			if err == nil && len(res.Completion.Values) > 0 {
				t.Errorf("%s: the hidden tenant completes to %v", c.name, res.Completion.Values)
			}
		}
	}
}

// TestAttack37dRequirementPlaces: a requirement placed on the parent
// only, on the grandchild's prompt and resource themselves (their own
// Middleware), or as a RequireToken naming no scope, refuses bob's
// completion of the prompt's argument and his subscription to the
// resource two mounts up (2025-11-25), and his prompts/get and read on
// 2026-07-28 with the challenge the grandchild itself would send.
func TestAttack37dRequirementPlaces(t *testing.T) {
	notBob := mcpkit.RequireToken(func(_ context.Context, info *auth.TokenInfo) bool { return info.UserID != "bob" })
	for name, place := range map[string]func(parent, grand *mcpkit.Server, q *mcpkit.Prompt, r *mcpkit.Resource){
		"parent only": func(parent, _ *mcpkit.Server, _ *mcpkit.Prompt, _ *mcpkit.Resource) {
			parent.Use(mcpkit.RequireScopes("admin"))
		},
		"own middleware": func(_, _ *mcpkit.Server, q *mcpkit.Prompt, r *mcpkit.Resource) {
			q.Middleware = []mcpkit.Middleware{mcpkit.RequireScopes("admin")}
			r.Middleware = []mcpkit.Middleware{mcpkit.RequireScopes("admin")}
		},
		"token, no scope": func(_, grand *mcpkit.Server, _ *mcpkit.Prompt, _ *mcpkit.Resource) {
			grand.Use(notBob)
		},
	} {
		t.Run(name, func(t *testing.T) {
			grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
			child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
			q := say("q", &mcp.PromptArgument{Name: "who"})
			q.Complete = map[string]mcpkit.CompleteFunc{"who": tools.CompleteFrom("ann", "bob")}
			r := tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)
			place(parent, grand, q, r)
			if err := grand.AddPrompts(q); err != nil {
				t.Fatal(err)
			}
			if err := grand.AddResources(r); err != nil {
				t.Fatal(err)
			}
			if _, err := child.Mount("g", grand); err != nil {
				t.Fatal(err)
			}
			if _, err := parent.Mount("c", child); err != nil {
				t.Fatal(err)
			}
			cs := mcpkittest.NewServer(t, parent, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
			if res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "c_g_q"}, Argument: mcp.CompleteParamsArgument{Name: "who"}}); err == nil {
				t.Errorf("bob completed c_g_q: %v", res.Completion.Values)
			}
			if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "ledger://c/g/q3"}); err == nil {
				t.Error("bob subscribed to ledger://c/g/q3")
			}
			gURL, pURL := atk37dHTTP(t, grand), atk37dHTTP(t, parent)
			for _, c := range []struct{ method, gName, pName, key string }{
				{"prompts/get", "q", "c_g_q", "name"},
				{"resources/read", "ledger://q3", "ledger://c/g/q3", "uri"},
			} {
				ps, pc, pb := atk37dPost(t, pURL, "bob", c.method, c.pName, map[string]any{c.key: c.pName})
				if ps != http.StatusForbidden {
					t.Errorf("%s at the parent: %d %q %s", c.method, ps, pc, pb)
					continue
				}
				if name == "parent only" {
					continue
				}
				gs, gc, _ := atk37dPost(t, gURL, "bob", c.method, c.gName, map[string]any{c.key: c.gName})
				if gs != ps || gc != pc {
					t.Errorf("%s: grandchild %d %q, parent %d %q", c.method, gs, gc, ps, pc)
				}
			}
		})
	}
}

// TestAttack37dInputRequiredSecondRound: the grandchild requires "read"
// (bob has it) and decides a prompt per request (so that what a caller
// gets depends on who asks); its prompt greet asks the client for input
// (an input_required result) before it answers. Bob gets c_g_greet two
// mounts up over a 2025-11-25 session, where the SDK asks him over the
// session and then serves the same prompts/get again with his answer.
// Both rounds pass the requirement check with bob's token, and both are
// Private() in the parent's chain and in the grandchild's handler.
func TestAttack37dInputRequiredSecondRound(t *testing.T) {
	var mu sync.Mutex
	var rounds []string
	note := func(where string, req *mcpkit.PromptRequest) {
		who := "nobody"
		if info := req.TokenInfo(); info != nil {
			who = info.UserID
		}
		mu.Lock()
		defer mu.Unlock()
		rounds = append(rounds, fmt.Sprintf("%s:%s:private=%v", where, who, req.Private()))
	}
	grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
	grand.Use(mcpkit.RequireScopes("read"))
	visibility.New(visibility.Require(func(p *mcpkit.Prompt) bool { return p.Name == "staff" }, visibility.Users("ada"))).Attach(grand)
	greet := &mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "greet"},
		Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			note("handler", req)
			resp, ok := req.Call.Params.InputResponses["name"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.GetPromptResult{
					InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
						Message:         "Who is there?",
						RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}},
					}},
					RequestState: "step-1",
				}, nil
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("hello %v", resp.Content["name"])}}}}, nil
		}),
	}
	if err := grand.AddPrompts(greet, say("staff")); err != nil {
		t.Fatal(err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if _, err := child.Mount("g", grand); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	parent.Use(func(next mcpkit.Handler) mcpkit.Handler {
		return atk37dPromptSpy{Handler: next, note: note}
	})
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		srv  *mcpkit.Server
		name string
	}{{grand, "greet"}, {parent, "c_g_greet"}} {
		mu.Lock()
		rounds = nil
		mu.Unlock()
		cs := mcpkittest.NewServer(t, c.srv, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob", Client: &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Bob"}}, nil
			},
		}}).Session
		res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: c.name})
		if err != nil || promptText(res) != "hello Bob" {
			t.Errorf("%s: %s, %v", c.name, promptText(res), err)
		}
		mu.Lock()
		got := strings.Join(rounds, " ")
		mu.Unlock()
		want := "handler:bob:private=true handler:bob:private=true"
		if c.srv == parent {
			want = "parent:bob:private=true handler:bob:private=true parent:bob:private=true handler:bob:private=true"
		}
		if got != want {
			t.Errorf("%s: rounds %s\nwant %s", c.name, got, want)
		}
	}
}

// atk37dPromptSpy is a layer that notes each prompt request it serves.
type atk37dPromptSpy struct {
	mcpkit.Handler
	note func(string, *mcpkit.PromptRequest)
}

func (s atk37dPromptSpy) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	s.note("parent", req)
	return s.Handler.(mcpkit.PromptHandler).ServePrompt(ctx, req)
}

// TestAttack37dTwoDeepCompletionChallenge: over 2026-07-28 HTTP, bob's
// completion of the grandchild's prompt argument, which "admin" guards,
// is answered two mounts up as the grandchild itself answers it.
func TestAttack37dTwoDeepCompletionChallenge(t *testing.T) {
	grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
	grand.Use(mcpkit.RequireScopes("admin"))
	q := say("q", &mcp.PromptArgument{Name: "who"})
	q.Complete = map[string]mcpkit.CompleteFunc{"who": tools.CompleteFrom("ann", "bob")}
	if err := grand.AddPrompts(q); err != nil {
		t.Fatal(err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if _, err := child.Mount("g", grand); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	complete := func(url, name string) (int, string, string) {
		return atk37dPost(t, url, "bob", "completion/complete", "", map[string]any{
			"ref": map[string]any{"type": "ref/prompt", "name": name}, "argument": map[string]any{"name": "who", "value": ""}})
	}
	gs, gc, gb := complete(atk37dHTTP(t, grand), "q")
	ps, pc, pb := complete(atk37dHTTP(t, parent), "c_g_q")
	if gs != http.StatusForbidden || gc == "" {
		t.Fatalf("at the grandchild: %d %q %s", gs, gc, gb)
	}
	if ps != gs || pc != gc {
		t.Errorf("grandchild %d %q, parent %d %q %s", gs, gc, ps, pc, pb)
	}
}

// TestAttack37dTwoDeepSilentAndGuardedListen: two mounts up over
// 2026-07-28, a subscriptions/listen stream is not agreed the URI of a
// grandchild's silent provider (no one announces its changes), nor, for
// bob, a URI the grandchild's "admin" guards; it is agreed an open one.
func TestAttack37dTwoDeepSilentAndGuardedListen(t *testing.T) {
	grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
	grand.AddProvider(atk37cSilent{})
	guarded := tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)
	guarded.Middleware = []mcpkit.Middleware{mcpkit.RequireScopes("admin")}
	if err := grand.AddResources(guarded, tools.TextResource("ledger://open", "open", "text/plain", "o", nil)); err != nil {
		t.Fatal(err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if _, err := child.Mount("g", grand); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		srv    *mcpkit.Server
		prefix string
	}{{grand, ""}, {parent, "c/g/"}} {
		ts := mcpkittest.NewStatelessServer(t, c.srv, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"})
		raw := mcpkittest.RawClient{Endpoint: ts.URL, Token: "bob"}
		blob, q3, open := "blob://"+c.prefix+"1", "ledger://"+c.prefix+"q3", "ledger://"+c.prefix+"open"
		st, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{blob, q3, open}}})
		if err != nil {
			t.Fatalf("listen: %v", err)
		}
		b, err := st.Next()
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		if strings.Contains(got, blob) || strings.Contains(got, q3) || !strings.Contains(got, open) {
			t.Errorf("prefix %q: agreed %s; want %s only", c.prefix, got, open)
		}
	}
}

// atk37dSink keeps the audit records written to it.
type atk37dSink struct {
	mu   sync.Mutex
	recs []middleware.AuditRecord
}

func (s *atk37dSink) WriteAudit(_ context.Context, rec *middleware.AuditRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, *rec)
	return nil
}

// TestAttack37dAuditEarlyAndLateAgree: severity low (an audit trail
// and a client's error text that disagree for one refusal, depending
// only on where the requirement sits). Over 2026-07-28 HTTP, bob's
// prompts/get of c_g_q and read of ledger://c/g/q3, two mounts above the
// grandchild that requires "admin", are refused from the headers when
// the parent requires "admin" too, and before the chain when it does
// not. Expected: an audit at the parent records both alike. What
// happens: decision, name, prompt and class agree, but the Reason (the
// refusal's text, also the HTTP body) names "c_g_q" when refused early
// and the grandchild's own "q" (ledger://q3) when refused before the
// chain: the same root as TestAttack37dEarlyAndLateChallengesAgree.
func TestAttack37dAuditEarlyAndLateAgree(t *testing.T) {
	recs := map[bool][]middleware.AuditRecord{}
	for _, own := range []bool{false, true} {
		_, parent := atk37dTree(t)
		if own {
			parent.Use(mcpkit.RequireScopes("admin"))
		}
		sink := &atk37dSink{}
		audit := middleware.NewAudit(sink, nil)
		parent.Observe(audit)
		url := atk37dHTTP(t, parent)
		if s, _, b := atk37dPost(t, url, "bob", "prompts/get", "c_g_q", map[string]any{"name": "c_g_q"}); s != http.StatusForbidden {
			t.Fatalf("own=%v: prompts/get %d %s", own, s, b)
		}
		if s, _, b := atk37dPost(t, url, "bob", "resources/read", "ledger://c/g/q3", map[string]any{"uri": "ledger://c/g/q3"}); s != http.StatusForbidden {
			t.Fatalf("own=%v: read %d %s", own, s, b)
		}
		if err := audit.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, r := range sink.recs {
			r.Seq, r.Time, r.DurationMS, r.TraceID = 0, time.Time{}, 0, ""
			recs[own] = append(recs[own], r)
		}
	}
	late, early := recs[false], recs[true]
	if len(late) != 2 || len(early) != 2 {
		t.Fatalf("records: late %+v, early %+v", late, early)
	}
	for i := range late {
		if fmt.Sprintf("%+v", late[i]) != fmt.Sprintf("%+v", early[i]) || late[i].Decision != "refused" {
			t.Errorf("record %d:\nlate  %+v\nearly %+v", i, late[i], early[i])
		}
	}
}

// TestAttack37dRequirementAddedAfterUse: the grandchild gains its
// RequireScopes("admin") after bob has already got its prompt, read its
// resource and completed the prompt's argument two mounts up. From then
// on each is refused to bob, on both eras.
func TestAttack37dRequirementAddedAfterUse(t *testing.T) {
	eras := []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{{"2025-11-25", mcpkittest.NewServer}, {"2026-07-28", mcpkittest.NewStatelessServer}}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
			q := say("q", &mcp.PromptArgument{Name: "who"})
			q.Complete = map[string]mcpkit.CompleteFunc{"who": tools.CompleteFrom("ann", "bob")}
			if err := grand.AddPrompts(q); err != nil {
				t.Fatal(err)
			}
			if err := grand.AddResources(tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)); err != nil {
				t.Fatal(err)
			}
			child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
			if _, err := child.Mount("g", grand); err != nil {
				t.Fatal(err)
			}
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
			if _, err := parent.Mount("c", child); err != nil {
				t.Fatal(err)
			}
			ask := func() (get, read, complete error) {
				cs := era.connect(t, parent, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
				_, get = cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "c_g_q", Arguments: map[string]string{"who": "x"}})
				cs = era.connect(t, parent, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
				_, read = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ledger://c/g/q3"})
				cs = era.connect(t, parent, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
				_, complete = cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "c_g_q"}, Argument: mcp.CompleteParamsArgument{Name: "who"}})
				return
			}
			if g, r, c := ask(); g != nil || r != nil || c != nil {
				t.Fatalf("before the requirement: %v, %v, %v", g, r, c)
			}
			grand.Use(mcpkit.RequireScopes("admin"))
			if g, r, c := ask(); g == nil || r == nil || c == nil {
				t.Errorf("after the requirement, bob is still served: get err %v, read err %v, complete err %v", g, r, c)
			}
		})
	}
}

// TestAttack37dProviderTemplateGuardedTwoDeep: the grandchild serves
// files://{dir}/{name} from a notifying provider and requires "admin" of
// everything. Two mounts up, bob is refused the read of a URI it
// serves, the completion of its "dir" by its text and the subscription
// (2025-11-25); over 2026-07-28 HTTP the read gets the grandchild's
// challenge.
func TestAttack37dProviderTemplateGuardedTwoDeep(t *testing.T) {
	grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
	grand.Use(mcpkit.RequireScopes("admin"))
	grand.AddProvider(&atk37cFiles{tmpl: atk37cFilesTemplate()})
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if _, err := child.Mount("g", grand); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	session := func() *mcp.ClientSession {
		return mcpkittest.NewServer(t, parent, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
	}
	if got, err := readText(session(), t.Context(), "files://c/g/docs/a"); err == nil {
		t.Errorf("bob read files://c/g/docs/a: %q", got)
	}
	if res, err := session().Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "files://c/g/{dir}/{name}"},
		Argument: mcp.CompleteParamsArgument{Name: "dir"},
	}); err == nil {
		t.Errorf("bob completed files://c/g/{dir}/{name}: %v", res.Completion.Values)
	}
	if err := session().Subscribe(t.Context(), &mcp.SubscribeParams{URI: "files://c/g/docs/a"}); err == nil {
		t.Error("bob subscribed to files://c/g/docs/a")
	}
	gs, gc, _ := atk37dPost(t, atk37dHTTP(t, grand), "bob", "resources/read", "files://docs/a", map[string]any{"uri": "files://docs/a"})
	ps, pc, pb := atk37dPost(t, atk37dHTTP(t, parent), "bob", "resources/read", "files://c/g/docs/a", map[string]any{"uri": "files://c/g/docs/a"})
	if gs != http.StatusForbidden || ps != gs || pc != gc {
		t.Errorf("grandchild %d %q, parent %d %q %s", gs, gc, ps, pc, pb)
	}
}

// TestAttack37dTwoDeepSilentSubscribe: over a 2025-11-25 session, a
// subscription two mounts up to a URI of the grandchild's silent
// provider is refused, as at the grandchild itself.
func TestAttack37dTwoDeepSilentSubscribe(t *testing.T) {
	grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
	grand.AddProvider(atk37cSilent{})
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if _, err := child.Mount("g", grand); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		srv *mcpkit.Server
		uri string
	}{{grand, "blob://1"}, {child, "blob://g/1"}, {parent, "blob://c/g/1"}} {
		cs := mcpkittest.NewServer(t, c.srv, nil).Session
		if got, err := readText(cs, t.Context(), c.uri); err != nil || !strings.Contains(got, "one") {
			t.Fatalf("%s reads %q, %v", c.uri, got, err)
		}
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: c.uri}); err == nil {
			t.Errorf("subscribed to %s, which no one announces", c.uri)
		}
	}
}

// TestAttack37dRequirementDeeperThanOrigins: severity low (only a
// stack of mounts deeper than any real deployment reaches it, but the
// check fails open). The bottom server requires "admin" and serves a
// template, notes://{id}, whose "id" completes; 70 servers are mounted
// one into the next, each under "a". Expected: at the top, bob (no
// admin) is refused the completion of notes://a/.../{id} and the
// subscription to a URI of it, as at every level below. What happens,
// if it fails: requirementRefusal walks at most maxOrigins (64) mounts
// down and lets through what it has not reached, and a completion or a
// subscription runs no chain that would refuse it later.
func TestAttack37dRequirementDeeperThanOrigins(t *testing.T) {
	bottom := mcpkit.NewServer(&mcp.Implementation{Name: "bottom"}, nil)
	bottom.Use(mcpkit.RequireScopes("admin"))
	tmpl := tools.MustTemplate(tools.NewTemplate("notes://{id}", func(_ context.Context, _ *mcpkit.ResourceRequest, p struct {
		ID string `json:"id"`
	}) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: p.ID}}}, nil
	}, nil))
	tmpl.Complete = map[string]mcpkit.CompleteFunc{"id": tools.CompleteFrom("1", "2")}
	if err := bottom.AddResourceTemplates(tmpl); err != nil {
		t.Fatal(err)
	}
	top, prefix := bottom, ""
	for i := range 70 {
		up := mcpkit.NewServer(&mcp.Implementation{Name: fmt.Sprint("level", i)}, nil)
		if _, err := up.Mount("a", top); err != nil {
			t.Fatal(err)
		}
		top, prefix = up, prefix+"a/"
	}
	session := func() *mcp.ClientSession {
		return mcpkittest.NewServer(t, top, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
	}
	if got, err := readText(session(), t.Context(), "notes://"+prefix+"7"); err == nil {
		t.Errorf("bob read notes://%s7: %q", prefix, got)
	}
	if res, err := session().Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "notes://" + prefix + "{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id"},
	}); err == nil {
		t.Errorf("bob completed the template 70 mounts down: %v", res.Completion.Values)
	}
	if err := session().Subscribe(t.Context(), &mcp.SubscribeParams{URI: "notes://" + prefix + "7"}); err == nil {
		t.Error("bob subscribed to a URI 70 mounts down")
	}
}

// TestAttack37dMiddleRequirement: the middle server (the child) requires
// "admin" of what it serves, the grandchild and the parent nothing. Two
// mounts up, bob is refused the grandchild's prompt, its completion and
// the subscription to its resource (2025-11-25), and the prompts/get
// over 2026-07-28 HTTP gets the child's own challenge.
func TestAttack37dMiddleRequirement(t *testing.T) {
	grand := mcpkit.NewServer(&mcp.Implementation{Name: "grand"}, nil)
	q := say("q", &mcp.PromptArgument{Name: "who"})
	q.Complete = map[string]mcpkit.CompleteFunc{"who": tools.CompleteFrom("ann", "bob")}
	if err := grand.AddPrompts(q); err != nil {
		t.Fatal(err)
	}
	if err := grand.AddResources(tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)); err != nil {
		t.Fatal(err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	child.Use(mcpkit.RequireScopes("admin"))
	if _, err := child.Mount("g", grand); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	session := func() *mcp.ClientSession {
		return mcpkittest.NewServer(t, parent, &mcpkittest.Options{Tokens: atk37dTokens, Token: "bob"}).Session
	}
	if _, err := session().GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "c_g_q", Arguments: map[string]string{"who": "x"}}); err == nil {
		t.Error("bob got c_g_q")
	}
	if res, err := session().Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "c_g_q"}, Argument: mcp.CompleteParamsArgument{Name: "who"}}); err == nil {
		t.Errorf("bob completed c_g_q: %v", res.Completion.Values)
	}
	if err := session().Subscribe(t.Context(), &mcp.SubscribeParams{URI: "ledger://c/g/q3"}); err == nil {
		t.Error("bob subscribed to ledger://c/g/q3")
	}
	cs, cc, _ := atk37dPost(t, atk37dHTTP(t, child), "bob", "prompts/get", "g_q", map[string]any{"name": "g_q"})
	ps, pc, pb := atk37dPost(t, atk37dHTTP(t, parent), "bob", "prompts/get", "c_g_q", map[string]any{"name": "c_g_q"})
	if cs != http.StatusForbidden || ps != cs || pc != cc {
		t.Errorf("child %d %q, parent %d %q %s", cs, cc, ps, pc, pb)
	}
}
