package mcpkit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// atk37cBob is a verified caller without the "admin" scope.
var atk37cBob = map[string]*auth.TokenInfo{"bob": {UserID: "bob", Scopes: []string{"read"}}}

// atk37cSilent is a ResourceProvider of blob://1 that is no
// ResourceNotifier: no one announces its changes.
type atk37cSilent struct{}

func (atk37cSilent) ListTools(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Tool, error) {
	return nil, nil
}

func (atk37cSilent) LookupTool(context.Context, mcpkit.Caller, string) (*mcpkit.Tool, error) {
	return nil, nil
}

func (atk37cSilent) ListResources(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Resource, error) {
	return nil, nil
}

func (atk37cSilent) ListResourceTemplates(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.ResourceTemplate, error) {
	return nil, nil
}

func (atk37cSilent) LookupResourceTemplate(context.Context, mcpkit.Caller, string) (*mcpkit.ResourceTemplate, error) {
	return nil, nil
}

var atk37cBlob = tools.TextResource("blob://1", "1", "text/plain", "one", nil)

func (atk37cSilent) LookupResource(_ context.Context, _ mcpkit.Caller, uri string) (*mcpkit.Resource, error) {
	if uri == "blob://1" {
		return atk37cBlob, nil
	}
	return nil, nil
}

// TestAttack37cMountedSubscribeSkipsChildScopes: severity high (what a
// scope guards is watched without it, through a mount). The child
// requires "admin" of everything it serves (child.Use(RequireScopes));
// the parent mounts it under "books". Bob (scope "read") is refused a
// read of ledger://books/q3 at the parent. Expected: as at the child
// itself, his subscription is refused too, and he hears of no update.
// What happens: the parent judges the subscription by its own chain's
// requirements only (the mounted entry's), agrees to it, and tells Bob
// each time the child's ledger changes.
func TestAttack37cMountedSubscribeSkipsChildScopes(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "books"}, nil)
	child.Use(mcpkit.RequireScopes("admin"))
	if err := child.AddResources(tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("books", child); err != nil {
		t.Fatal(err)
	}
	reader := mcpkittest.NewServer(t, parent, &mcpkittest.Options{Tokens: atk37cBob, Token: "bob"}).Session
	if _, err := reader.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ledger://books/q3"}); err == nil {
		t.Fatal("bob read ledger://books/q3 without the scope")
	}
	heard := make(chan string, 4)
	cs := mcpkittest.NewServer(t, parent, &mcpkittest.Options{Tokens: atk37cBob, Token: "bob", Client: &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { heard <- req.Params.URI },
	}}).Session
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "ledger://books/q3"}); err != nil {
		return // refused: as expected
	}
	updated(t, child, "ledger://q3")
	select {
	case uri := <-heard:
		t.Errorf("subscribed at the parent without the child's scope, and heard %s changed", uri)
	case <-time.After(2 * time.Second):
		t.Error("subscribed at the parent without the scope a read of it requires")
	}
}

// TestAttack37cMountedCompletionSkipsChildScopes: severity medium (data
// the scope guards is handed out, through a mount). The child requires
// "admin" of everything it serves; its prompt customer_report completes
// "customer" from the customer list. The parent mounts it under "crm".
// Expected: at the parent, as at the child, Bob (no "admin") gets a
// refusal from completion/complete of crm_customer_report. What happens:
// the parent meets only its own chain's requirements (none) and runs the
// child's completer: the customer names are answered.
func TestAttack37cMountedCompletionSkipsChildScopes(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "crm"}, nil)
	child.Use(mcpkit.RequireScopes("admin"))
	report := say("customer_report", &mcp.PromptArgument{Name: "customer", Required: true})
	report.Complete = map[string]mcpkit.CompleteFunc{"customer": tools.CompleteFrom("Acme Corp", "Acme Widgets", "Apex Ltd")}
	if err := child.AddPrompts(report); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("crm", child); err != nil {
		t.Fatal(err)
	}
	complete := func(srv *mcpkit.Server, name string) ([]string, error) {
		cs := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: atk37cBob, Token: "bob"}).Session
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: name},
			Argument: mcp.CompleteParamsArgument{Name: "customer", Value: "A"},
		})
		if err != nil {
			return nil, err
		}
		return res.Completion.Values, nil
	}
	if got, err := complete(child, "customer_report"); err == nil {
		t.Fatalf("the child itself completed %q without the scope", got)
	}
	if got, err := complete(parent, "crm_customer_report"); err == nil && len(got) > 0 {
		t.Errorf("completion/complete of crm_customer_report at the parent without the scope answered %q", got)
	}
}

// TestAttack37cMountedSilentProviderSubscribed: severity medium (a
// promise never kept). The child serves blob://1 from a provider that is
// no ResourceNotifier, so the child answers a subscription to it as one
// to a URI never served. The parent mounts the child under "m".
// Expected: the parent answers a subscription to blob://m/1 the same way
// (it is the same resource, and no one announces its changes). What
// happens: the parent's entry of a mounted target is never silent, so
// the parent agrees to the subscription, a promise nothing keeps.
func TestAttack37cMountedSilentProviderSubscribed(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "store"}, nil)
	if err := child.AddResources(tools.TextResource("memo://a", "a", "text/plain", "a", nil)); err != nil {
		t.Fatal(err)
	}
	child.AddProvider(atk37cSilent{})
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("m", child); err != nil {
		t.Fatal(err)
	}
	onChild, _ := updates(t, child, false)
	if got, err := readText(onChild, t.Context(), "blob://1"); err != nil || !strings.Contains(got, "one") {
		t.Fatalf("blob://1 at the child reads %q, %v", got, err)
	}
	if err := onChild.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "blob://1"}); err == nil {
		t.Fatal("the child agreed to a subscription to a silent provider's URI")
	}
	onParent, _ := updates(t, parent, false)
	if got, err := readText(onParent, t.Context(), "blob://m/1"); err != nil || !strings.Contains(got, "one") {
		t.Fatalf("blob://m/1 at the parent reads %q, %v", got, err)
	}
	if err := onParent.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "blob://m/1"}); err == nil {
		t.Error("the parent agreed to a subscription to blob://m/1, which a silent provider serves")
	}
}

// atk37cFiles is a notifying ResourceProvider whose template
// files://{dir}/{name} (tmpl) serves every files:// URI; lookup, when
// set, replaces LookupResourceTemplate.
type atk37cFiles struct {
	atk37cSilent
	tmpl   *mcpkit.ResourceTemplate
	lookup func(uri string) *mcpkit.ResourceTemplate
}

func (p *atk37cFiles) NotifiesResourceUpdates() bool { return true }

func (p *atk37cFiles) ListResourceTemplates(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.ResourceTemplate, error) {
	if after >= p.tmpl.URITemplate {
		return nil, nil
	}
	return []*mcpkit.ResourceTemplate{p.tmpl}, nil
}

func (p *atk37cFiles) LookupResourceTemplate(_ context.Context, _ mcpkit.Caller, uri string) (*mcpkit.ResourceTemplate, error) {
	if p.lookup != nil {
		return p.lookup(uri), nil
	}
	if strings.HasPrefix(uri, "files://") {
		return p.tmpl, nil
	}
	return nil, nil
}

// atk37cFilesTemplate is files://{dir}/{name}, which answers its
// variables, and completes dir.
func atk37cFilesTemplate() *mcpkit.ResourceTemplate {
	return &mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "files://{dir}/{name}", Name: "files"},
		Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: req.Params["dir"] + "|" + req.Params["name"]}}}, nil
		}),
		Complete: map[string]mcpkit.CompleteFunc{"dir": tools.CompleteFrom("docs", "drafts")},
	}
}

// TestAttack37cProviderTemplateCompletes: severity medium (a documented
// feature absent). A provider lists files://{dir}/{name}, whose "dir"
// completes, and serves its URIs through LookupResourceTemplate, as
// docs/resources.md shows. Expected: completion/complete of ref/resource
// files://{dir}/{name} answers the template's completions, as for a
// registered template (the docs: a template's Complete completes its
// variables). What happens: the completion gets -32602 "Resource not
// found": the route by text (reachTemplate) finds registered templates
// only, and a provider is asked to look the text up as a URI, which its
// own template does not match.
func TestAttack37cProviderTemplateCompletes(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "files"}, nil)
	srv.AddProvider(&atk37cFiles{tmpl: atk37cFilesTemplate()})
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	if got, err := readText(cs, t.Context(), "files://docs/a"); err != nil || !strings.Contains(got, "docs|a") {
		t.Fatalf("files://docs/a reads %q, %v", got, err)
	}
	res, err := cs.Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "files://{dir}/{name}"},
		Argument: mcp.CompleteParamsArgument{Name: "dir", Value: "d"},
	})
	if err != nil || len(res.Completion.Values) != 2 {
		t.Errorf("completion of the provider's template: %v, %v; want docs, drafts", res, err)
	}
}

// atk37cPrompts is a PromptProvider serving one prompt, p, to everyone.
type atk37cPrompts struct {
	atk37cSilent
	p *mcpkit.Prompt
}

func (a *atk37cPrompts) ListPrompts(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.Prompt, error) {
	if after >= a.p.Name {
		return nil, nil
	}
	return []*mcpkit.Prompt{a.p}, nil
}

func (a *atk37cPrompts) LookupPrompt(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Prompt, error) {
	if name == a.p.Name {
		return a.p, nil
	}
	return nil, nil
}

// TestAttack37cCacheHiddenPromptShared: severity high (a hidden prompt's
// messages reach a caller it is hidden from). The server caches
// prompts under a TargetKey its tenant's principals share. Its own
// prompt "plan" (tag admin) is for ada alone (a per-request rule); a
// provider serves everyone else a "plan" of its own, as the docs allow (a
// registered prompt wins for the callers who see it). Expected: bob, who
// never sees the registered plan, gets the provider's; a per-request
// decision makes the answer depend on who asks, and TargetKey's doc
// says such a result is not kept under a shared key (as resources/read
// now does, with ResourceRequest.Private). What happens: both plans have
// the Key "plan" and the served name "plan", the prompt path of the
// cache never asks whether the answer is private, and bob is answered
// ada's cached messages of the hidden prompt.
func TestAttack37cCacheHiddenPromptShared(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "plans"}, nil)
	srv.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{
		Targets:   func(mcpkit.Target) bool { return true },
		TargetKey: func(mcpkit.Target, mcpkit.Caller) string { return "tenant-acme" },
	}))
	secret := atk37bFixed("plan", "the board's secret plan")
	secret.Tags = []string{"admin"}
	if err := srv.AddPrompts(secret); err != nil {
		t.Fatal(err)
	}
	srv.AddProvider(&atk37cPrompts{p: atk37bFixed("plan", "the public plan")})
	visibility.New(visibility.Require(func(t mcpkit.Target) bool { return t.HasTag("admin") }, visibility.Users("ada"))).Attach(srv)
	tokens := map[string]*auth.TokenInfo{"ada": {UserID: "ada"}, "bob": {UserID: "bob"}}
	ada := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "ada"}).Session
	bob := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "bob"}).Session
	// Each on a key of its own first: the route gives each its plan.
	if got := atk37bText(t, ada, "plan", map[string]string{"x": "ada"}); got != "the board's secret plan" {
		t.Fatalf("ada's plan: %q", got)
	}
	if got := atk37bText(t, bob, "plan", map[string]string{"x": "bob"}); got != "the public plan" {
		t.Fatalf("bob's plan: %q", got)
	}
	if got := atk37bText(t, ada, "plan", nil); got != "the board's secret plan" {
		t.Fatalf("ada's plan: %q", got)
	}
	if got := atk37bText(t, bob, "plan", nil); got != "the public plan" {
		t.Errorf("bob's plan: %q, want the public plan", got)
	}
}

// TestAttack37cDerivedResourceNeverHears: severity low, kept as
// documented. transform.Resource serves docs://intro again as
// docs://latest, and a client subscribes to docs://latest. Updates go by
// the URI a client reads (see Server.ResourceUpdated): the code announces
// docs://latest for its subscribers, and announcing docs://intro alone
// does not reach them.
func TestAttack37cDerivedResourceNeverHears(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	intro := tools.TextResource("docs://intro", "intro", "text/plain", "hello", nil)
	latest, err := transform.Resource(intro, transform.ResourceSpec{URI: "docs://latest"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResources(intro, latest); err != nil {
		t.Fatal(err)
	}
	cs, heard := updates(t, srv, false)
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://latest"}); err != nil {
		return // not agreed to: no promise
	}
	updated(t, srv, "docs://intro", "docs://latest")
	select {
	case uri := <-heard:
		if uri != "docs://latest" {
			t.Errorf("heard %s", uri)
		}
	case <-time.After(10 * time.Second): // a safety net: the update is sent before ResourceUpdated returns
		t.Error("docs://latest's subscriber never heard that its resource changed")
	}
}

// TestAttack37cMountedListenSkipsChildScopes: severity high, the 2026-07-28
// form of TestAttack37cMountedSubscribeSkipsChildScopes. Bob's
// subscriptions/listen asks for ledger://q3 at the child and for
// ledger://books/q3 at the parent that mounts it; the child requires
// "admin" of everything it serves. Expected: neither acknowledgement
// agrees to the ledger. What happens: the child leaves it out, the parent
// agrees to it.
func TestAttack37cMountedListenSkipsChildScopes(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "books"}, nil)
	child.Use(mcpkit.RequireScopes("admin"))
	if err := child.AddResources(tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("books", child); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		srv *mcpkit.Server
		uri string
	}{{child, "ledger://q3"}, {parent, "ledger://books/q3"}} {
		ts := mcpkittest.NewStatelessServer(t, c.srv, &mcpkittest.Options{Tokens: atk37cBob, Token: "bob"})
		raw := mcpkittest.RawClient{Endpoint: ts.URL, Token: "bob"}
		st, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{c.uri}}})
		if err != nil {
			t.Fatalf("listen for %s: %v", c.uri, err)
		}
		b, err := st.Next()
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), c.uri) {
			t.Errorf("bob, without the scope, was agreed %s: %s", c.uri, b)
		}
	}
}

// TestAttack37cMountedScopeBypassedByParentCache: severity medium to high
// (what a scope guards is read without it; CacheOptions.Key's doc does
// ask for keys as narrow as "a token's scopes", but nothing at the
// parent says the child needs one). The child requires "admin" of
// everything it serves; the parent, which mounts it under "books",
// caches reads under a TargetKey its tenant's principals share. The
// requirement cannot be put before the parent's cache, as RequireScopes'
// doc asks: it is in the child's chain, which the parent's wraps. Ada
// (admin) reads ledger://books/q3. Expected: bob (no admin) is refused,
// as at the child, over 2026-07-28 HTTP too. What happens: nothing tells
// the parent's chain (or its early refusal from the headers, or
// Private) of the child's requirement, so the parent's cache answers bob
// ada's copy of the ledger.
func TestAttack37cMountedScopeBypassedByParentCache(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "books"}, nil)
	child.Use(mcpkit.RequireScopes("admin"))
	if err := child.AddResources(tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	parent.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{
		Targets:   func(mcpkit.Target) bool { return true },
		TargetKey: func(mcpkit.Target, mcpkit.Caller) string { return "tenant-acme" },
	}))
	if _, err := parent.Mount("books", child); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]*auth.TokenInfo{"ada": {UserID: "ada", Scopes: []string{"admin"}}, "bob": {UserID: "bob", Scopes: []string{"read"}}}
	ada := mcpkittest.NewStatelessServer(t, parent, &mcpkittest.Options{Tokens: tokens, Token: "ada"}).Session
	if got, err := readText(ada, t.Context(), "ledger://books/q3"); err != nil || !strings.Contains(got, "numbers") {
		t.Fatalf("ada reads %q, %v", got, err)
	}
	bob := mcpkittest.NewStatelessServer(t, parent, &mcpkittest.Options{Tokens: tokens, Token: "bob"}).Session
	if got, err := readText(bob, t.Context(), "ledger://books/q3"); err == nil {
		t.Errorf("bob, without the scope, read %q", got)
	}
}

// TestAttack37cOwnScopeBypassedBySharedCache: severity medium (what a
// scope guards is read without it, on one protocol era; CacheOptions.Key's
// doc asks for keys as narrow as "a token's scopes", so this may be
// deemed configuration, but the eras disagree). The resource
// ledger://q3 requires "admin" in its own Middleware, which RequireToken's
// doc names as a way to guard a resource; the server caches reads under a
// TargetKey its tenant's principals share, a layer of Server.Use and so
// outside every target's own middleware. Ada (admin) reads the ledger,
// then bob (no admin), each over streamable HTTP. Expected: bob is
// refused on both eras. What happens: on 2026-07-28 bob gets the 403
// from the headers, before any layer; on 2025-11-25 nothing judges him
// before the cache, and he is answered ada's copy (a hit). Nothing marks
// such a read private, or keeps a cache under a shared key behind the
// target's requirements.
func TestAttack37cOwnScopeBypassedBySharedCache(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "books"}, nil)
	srv.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{
		Targets:   func(mcpkit.Target) bool { return true },
		TargetKey: func(mcpkit.Target, mcpkit.Caller) string { return "tenant-acme" },
	}))
	ledger := tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)
	ledger.Middleware = []mcpkit.Middleware{mcpkit.RequireScopes("admin")}
	if err := srv.AddResources(ledger); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]*auth.TokenInfo{"ada": {UserID: "ada", Scopes: []string{"admin"}}, "bob": {UserID: "bob", Scopes: []string{"read"}}}
	ada := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "ada"}).Session
	if got, err := readText(ada, t.Context(), "ledger://q3"); err != nil || !strings.Contains(got, "numbers") {
		t.Fatalf("ada reads %q, %v", got, err)
	}
	bob := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "bob"}).Session
	if got, err := readText(bob, t.Context(), "ledger://q3"); err == nil {
		t.Errorf("bob, without the scope, read %q on 2025-11-25", got)
	}
	bob26 := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "bob"}).Session
	if got, err := readText(bob26, t.Context(), "ledger://q3"); err == nil {
		t.Errorf("bob, without the scope, read %q on 2026-07-28", got)
	}
}

// TestAttack37cShadowedTwoMountsDeep: severity low (a wrong
// notification), TestAttack37bShadowedMountedUpdate one mount deeper.
// The grandchild serves file:///shadow; the child mounts it under "g",
// and serves a resource of its own at file://g//shadow, which wins over
// the grandchild's there; the parent mounts the child under "c", so
// file://c/g//shadow is the child's own resource. A client of the parent
// subscribes to it and to file://c/g//readme (the grandchild's, through
// both mounts). The grandchild says its file:///shadow changed, then
// file:///readme. Expected: the parent's subscriber hears of readme
// alone: the child's own resource did not change. What happens: the
// child does not tell its own subscribers (the shadow check), but passes
// the update on to the parent regardless, where the resource reached is
// the child's (a mount of the right child), and the subscriber is told.
func TestAttack37cShadowedTwoMountsDeep(t *testing.T) {
	res := func(uri, text string) *mcpkit.Resource { return tools.TextResource(uri, uri, "text/plain", text, nil) }
	grandchild := mcpkit.NewServer(&mcp.Implementation{Name: "grandchild"}, nil)
	if err := grandchild.AddResources(res("file:///shadow", "the grandchild's"), res("file:///readme", "readme")); err != nil {
		t.Fatal(err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if err := child.AddResources(res("file://g//shadow", "the child's")); err != nil {
		t.Fatal(err)
	}
	if _, err := child.Mount("g", grandchild); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	cs, heard := updates(t, parent, false)
	if got, err := readText(cs, t.Context(), "file://c/g//shadow"); err != nil || !strings.Contains(got, "the child's") {
		t.Fatalf("file://c/g//shadow reads %q, %v", got, err)
	}
	for _, uri := range []string{"file://c/g//shadow", "file://c/g//readme"} {
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	updated(t, grandchild, "file:///shadow", "file:///readme")
	if got := next(t, heard); got != "file://c/g//readme" {
		t.Errorf("heard %s first, want file://c/g//readme: the child's own shadow did not change", got)
	}
}
