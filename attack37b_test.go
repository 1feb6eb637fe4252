package mcpkit_test

import (
	"context"
	"strings"
	"sync/atomic"
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

// atk37bTokens are the tokens of the verified callers of these probes.
var atk37bTokens = map[string]*auth.TokenInfo{
	"ada": {UserID: "ada", Scopes: []string{"read"}},
}

// atk37bText returns the text of the first message of prompt name.
func atk37bText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]string) string {
	t.Helper()
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("prompts/get %s: %v", name, err)
	}
	return res.Messages[0].Content.(*mcp.TextContent).Text
}

// atk37bFixed is a prompt named name whose one message is text.
func atk37bFixed(name, text string) *mcpkit.Prompt {
	return &mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: name},
		Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		}),
	}
}

// TestAttack37bCacheMountedPromptCollides: severity medium (wrong answer).
// The parent caches prompts (CacheResults, per verified principal). It
// serves its own prompt "greet" and, through Mount("docs"), the child's
// "greet" as docs_greet: two prompts. Expected: each answers its own
// text. What happens: the target cache key is the principal, the kind,
// Target.Key() and the arguments; a mounted prompt's Key is the child's
// name, "greet", the parent's own prompt's too, so after greet is cached
// docs_greet is answered greet's cached messages (and the other way
// round). Tools' cache keys add the served name; prompts' do not.
func TestAttack37bCacheMountedPromptCollides(t *testing.T) {
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	parent.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{Targets: func(mcpkit.Target) bool { return true }}))
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if err := parent.AddPrompts(atk37bFixed("greet", "parent's greeting")); err != nil {
		t.Fatal(err)
	}
	if err := child.AddPrompts(atk37bFixed("greet", "child's greeting")); err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewStatelessServer(t, parent, &mcpkittest.Options{Tokens: atk37bTokens, Token: "ada"}).Session
	if got := atk37bText(t, cs, "greet", nil); got != "parent's greeting" {
		t.Fatalf("greet: %q", got)
	}
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greet"})
	if err != nil || res.Meta[middleware.MetaKeyCache] != "hit" {
		t.Fatalf("greet again: not a cache hit: %v %v", res, err)
	}
	if got := atk37bText(t, cs, "docs_greet", nil); got != "child's greeting" {
		t.Errorf("docs_greet answered %q, want the child's greeting", got)
	}
}

var _ = tools.CompleteFrom

// TestAttack37bCacheDerivedPromptCollides: severity medium (wrong
// answer; a server-filled value crosses routes). transform.Prompt derives
// code_review from review, hiding review's "tenant" and filling it with
// "acme" on the server. Both are served, prompts cached per principal.
// Expected: as CacheResults promises for tools, two routes to one target
// never share an entry: review {code: x} answers tenant= and code_review
// {code: x} answers tenant=acme. What happens: the derived prompt keeps
// the parent's Key and the arguments are the same, so the second answer
// is the first's cached messages.
func TestAttack37bCacheDerivedPromptCollides(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "derive"}, nil)
	srv.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{Targets: func(mcpkit.Target) bool { return true }}))
	review := &mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "review", Arguments: []*mcp.PromptArgument{{Name: "code", Required: true}, {Name: "tenant"}}},
		Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			text := "code=" + req.Arguments["code"] + " tenant=" + req.Arguments["tenant"]
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		}),
	}
	derived, err := transform.Prompt(review, transform.PromptSpec{
		Name:      "code_review",
		Arguments: map[string]transform.PromptArg{"tenant": {Hide: true, Value: "acme"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrompts(review, derived); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: atk37bTokens, Token: "ada"}).Session
	args := map[string]string{"code": "x"}
	if got := atk37bText(t, cs, "code_review", args); got != "code=x tenant=acme" {
		t.Fatalf("code_review: %q", got)
	}
	if got := atk37bText(t, cs, "review", args); got != "code=x tenant=" {
		t.Errorf("review answered %q, want code=x tenant= (the parent's own answer)", got)
	}
}

// atk37bGate is a ResourceProvider of blob://1 whose LookupResource
// waits, while held is set, until its context ends (a well-behaved slow
// catalog).
type atk37bGate struct {
	held    atomic.Bool
	waiting chan struct{}
}

func (*atk37bGate) ListTools(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Tool, error) {
	return nil, nil
}

func (*atk37bGate) LookupTool(context.Context, mcpkit.Caller, string) (*mcpkit.Tool, error) {
	return nil, nil
}

func (*atk37bGate) ListResources(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Resource, error) {
	return nil, nil
}

func (*atk37bGate) ListResourceTemplates(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.ResourceTemplate, error) {
	return nil, nil
}

func (*atk37bGate) NotifiesResourceUpdates() bool { return true }

func (*atk37bGate) LookupResourceTemplate(context.Context, mcpkit.Caller, string) (*mcpkit.ResourceTemplate, error) {
	return nil, nil
}

func (g *atk37bGate) LookupResource(ctx context.Context, _ mcpkit.Caller, uri string) (*mcpkit.Resource, error) {
	if uri != "blob://1" {
		return nil, nil
	}
	if g.held.Load() {
		select {
		case g.waiting <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return tools.TextResource(uri, "1", "text/plain", "one", nil), nil
}

// TestAttack37bResourceUpdatedIgnoresContext: severity medium (a hang
// and a goroutine leak). A 2025-11-25 client subscribes to blob://1,
// which a Provider serves. Then the provider's catalog is slow: its
// LookupResource waits until its context ends, as a well-behaved lookup
// does. Expected: ResourceUpdated(ctx) returns once ctx ends (it judges
// each subscriber again, a read of the URI, and a read is bounded by its
// caller's context). What happens: each subscriber is judged under the
// subscribe request's context with its cancellation removed, so the
// lookup never ends and ResourceUpdated never returns, whatever ctx says.
func TestAttack37bResourceUpdatedIgnoresContext(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "gate"}, nil)
	if err := srv.AddResources(tools.TextResource("memo://a", "a", "text/plain", "a", nil)); err != nil {
		t.Fatal(err)
	}
	g := &atk37bGate{waiting: make(chan struct{}, 1)}
	srv.AddProvider(g)
	cs := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion}).Session
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "blob://1"}); err != nil {
		t.Fatal(err)
	}
	g.held.Store(true)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.ResourceUpdated(ctx, "blob://1") }()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a safety net: ctx ends after 50ms
		t.Error("ResourceUpdated still runs 10s after its context ended")
	}
}

// TestAttack37bCachePrivateReadShared: severity high (one principal's
// read answered to another). CacheOptions.TargetKey keys resources by
// tenant, a key several principals share; its doc promises that a result
// whose cacheScope is "private" is then not kept. The server has a
// per-request rule, so every read it answers is marked private (the
// client sees cacheScope "private"), and the handler answers who asks.
// Expected: bob reads his own text. What happens: the cache layer sees
// the handler's result before the server marks it private, keeps ada's,
// and answers it to bob.
func TestAttack37bCachePrivateReadShared(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "tenant"}, nil)
	srv.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{
		Targets:   func(mcpkit.Target) bool { return true },
		TargetKey: func(mcpkit.Target, mcpkit.Caller) string { return "tenant-acme" },
	}))
	whoami := &mcpkit.Resource{
		Resource: mcp.Resource{URI: "me://profile", Name: "profile", MIMEType: "text/plain"},
		Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "profile of " + req.TokenInfo().UserID}}}, nil
		}),
	}
	if err := srv.AddResources(whoami, tools.TextResource("me://admin", "admin", "text/plain", "x", &tools.ResourceOptions{Tags: []string{"admin"}})); err != nil {
		t.Fatal(err)
	}
	visibility.New(visibility.Require(func(t mcpkit.Target) bool { return t.HasTag("admin") }, visibility.Scopes("admin"))).Attach(srv)
	tokens := map[string]*auth.TokenInfo{"ada": {UserID: "ada"}, "bob": {UserID: "bob"}}
	ada := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "ada"}).Session
	bob := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "bob"}).Session
	res, err := ada.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "me://profile"})
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "private" || res.Contents[0].Text != "profile of ada" {
		t.Fatalf("ada's read: %q, %q", res.CacheScope, res.Contents[0].Text)
	}
	if got, err := readText(bob, t.Context(), "me://profile"); err != nil || got != "me://profile text/plain profile of bob" {
		t.Errorf("bob reads %q, %v; want his own profile", got, err)
	}
}

// TestAttack37bSharedChildUpdateStopsAtChild: severity medium (a
// subscriber never told). Two replicas each mount their child under
// "docs"; the children share their changes on one bus (the data is the
// child's), the parents share nothing. A client of replica B's parent
// subscribes to x://docs/r. Replica A's child says x://r changed.
// Expected: as ResourceUpdated promises, the other replicas tell their
// subscribers, and the servers a child is mounted into tell theirs of the
// URI they serve it under: B's parent's subscriber hears x://docs/r.
// What happens: B's child tells only its own subscribers; the update
// received from the bus never reaches the server it is mounted into.
func TestAttack37bSharedChildUpdateStopsAtChild(t *testing.T) {
	bus := mcpkit.NewMemoryBus()
	replica := func() (parent, child *mcpkit.Server) {
		child = mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
		if err := child.AddResources(tools.TextResource("x://r", "r", "text/plain", "r", nil)); err != nil {
			t.Fatal(err)
		}
		stop, err := child.ShareChanges(bus, &mcpkit.ShareOptions{Delay: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		parent = mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
		if _, err := parent.Mount("docs", child); err != nil {
			t.Fatal(err)
		}
		return parent, child
	}
	_, childA := replica()
	parentB, childB := replica()
	onChildB, heardChildB := updates(t, childB, false)
	onParentB, heardParentB := updates(t, parentB, false)
	if err := onChildB.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "x://r"}); err != nil {
		t.Fatal(err)
	}
	if err := onParentB.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "x://docs/r"}); err != nil {
		t.Fatal(err)
	}
	updated(t, childA, "x://r")
	if got := next(t, heardChildB); got != "x://r" {
		t.Fatalf("B's child's subscriber heard %s", got)
	}
	select {
	case got := <-heardParentB:
		if got != "x://docs/r" {
			t.Errorf("B's parent's subscriber heard %s", got)
		}
	case <-time.After(5 * time.Second): // a safety net: B's child was told already
		t.Error("B's parent's subscriber to x://docs/r never heard of the update")
	}
}

// TestAttack37bCompletionSkipsRequiredScopes: severity medium (data the
// scope guards is handed out). The server requires the "admin" scope of
// everything it serves (srv.Use(RequireScopes("admin"))); the docs say a
// server-wide scope covers prompts too. The prompt customer_report is
// listed (challenge rather than hide) and its "customer" argument
// completes from the customer list. Expected: a caller without the scope
// gets no more from completion/complete than from prompts/get: a refusal.
// What happens: prompts/get is refused, but completion/complete answers
// the customer names, since completers run outside the chain and nothing
// else applies the prompt's requirements to them.
func TestAttack37bCompletionSkipsRequiredScopes(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "crm"}, nil)
	srv.Use(mcpkit.RequireScopes("admin"))
	report := say("customer_report", &mcp.PromptArgument{Name: "customer", Required: true})
	report.Complete = map[string]mcpkit.CompleteFunc{"customer": tools.CompleteFrom("Acme Corp", "Acme Widgets", "Apex Ltd")}
	if err := srv.AddPrompts(report); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]*auth.TokenInfo{"bob": {UserID: "bob", Scopes: []string{"read"}}}
	cs := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "bob"}).Session
	res, err := cs.Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "customer_report"},
		Argument: mcp.CompleteParamsArgument{Name: "customer", Value: "A"},
	})
	if err == nil && len(res.Completion.Values) > 0 {
		t.Errorf("completion/complete without the scope answered %q", res.Completion.Values)
	}
	// The same caller, on a session of its own (a refusal over HTTP ends
	// the client's session), is refused the prompt.
	other := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "bob"}).Session
	if _, err := other.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "customer_report", Arguments: map[string]string{"customer": "Acme Corp"}}); err == nil {
		t.Error("prompts/get without the scope was served")
	}
}

// TestAttack37bSubscribeSkipsRequiredScopes: severity low (what a scope
// guards is watched without it). The server requires the "admin" scope
// of everything it serves (srv.Use(RequireScopes("admin"))), resources
// included. Expected: a caller refused a read of ledger://q3 for want of
// the scope is refused its subscription too (or at least never told of
// its changes). What happens: resources/subscribe succeeds, and the
// caller hears each update of a resource it may not read: when the
// ledger changes.
func TestAttack37bSubscribeSkipsRequiredScopes(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "books"}, nil)
	srv.Use(mcpkit.RequireScopes("admin"))
	if err := srv.AddResources(tools.TextResource("ledger://q3", "q3", "text/plain", "numbers", nil)); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]*auth.TokenInfo{"bob": {UserID: "bob", Scopes: []string{"read"}}}
	heard := make(chan string, 4)
	cs := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "bob", Client: &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { heard <- req.Params.URI },
	}}).Session
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "ledger://q3"}); err != nil {
		return // refused: as expected
	}
	updated(t, srv, "ledger://q3")
	select {
	case uri := <-heard:
		t.Errorf("subscribed without the scope, and heard %s changed", uri)
	case <-time.After(time.Second):
		t.Error("subscribed without the scope a read requires")
	}
	// Bob's read, on a session of its own (a refusal over HTTP ends the
	// client's session), is refused.
	other := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "bob"}).Session
	if _, err := other.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ledger://q3"}); err == nil {
		t.Error("read without the scope was served")
	}
}

// TestAttack37bShadowedMountedUpdate: severity low (a wrong
// notification). The parent serves its own file://docs//shadow, which
// wins over the child's file:///shadow mounted under "docs" at the same
// URI. A client of the parent subscribes to file://docs//shadow (the
// parent's) and file://docs//readme (the child's). The child says its
// file:///shadow changed, then file:///readme. Expected: the parent does
// not serve the child's shadow, so its subscriber hears of readme alone.
// What happens: the update is forwarded by URI alone, and the subscriber
// is told the parent's own resource changed.
func TestAttack37bShadowedMountedUpdate(t *testing.T) {
	parent, child := mountedKinds(t)
	cs, heard := updates(t, parent, false)
	for _, uri := range []string{"file://docs//shadow", "file://docs//readme"} {
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := readText(cs, t.Context(), "file://docs//shadow"); err != nil || !strings.Contains(got, "the parent's") {
		t.Fatalf("file://docs//shadow reads %q, %v", got, err)
	}
	updated(t, child, "file:///shadow", "file:///readme")
	if got := next(t, heard); got != "file://docs//readme" {
		t.Errorf("heard %s first, want file://docs//readme: the parent's own shadow did not change", got)
	}
}
