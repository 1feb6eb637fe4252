package mcpkit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/visibility"
)

// probe37cNotFound reads uri and returns the error's text, failing the
// test when the read is served.
func probe37cNotFound(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err == nil {
		t.Fatalf("%s was served: %v", uri, res.Contents[0].Text)
	}
	return strings.ReplaceAll(err.Error(), uri, "URI")
}

// TestProbe37cProviderTemplateEdges probes a provider's template at its
// edges: a template that does not match the URI, one with a bad text, a
// lookup that panics, and a new pointer on every lookup (past the
// bound of the cache of provided targets). Each unserved read gets the
// answer of a URI never served, and the server goes on serving.
func TestProbe37cProviderTemplateEdges(t *testing.T) {
	good := atk37cFilesTemplate()
	cases := map[string]func(uri string) *mcpkit.ResourceTemplate{
		"not matching": func(string) *mcpkit.ResourceTemplate {
			return &mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "other://{x}", Name: "o"}, Handler: good.Handler}
		},
		"bad text": func(string) *mcpkit.ResourceTemplate {
			return &mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "files://{dir", Name: "o"}, Handler: good.Handler}
		},
		"panics": func(string) *mcpkit.ResourceTemplate { panic("lookup broke") },
		"no handler": func(string) *mcpkit.ResourceTemplate {
			return &mcpkit.ResourceTemplate{ResourceTemplate: good.ResourceTemplate}
		},
	}
	for name, lookup := range cases {
		t.Run(name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "files"}, nil)
			if err := srv.AddResources(tools.TextResource("memo://a", "a", "text/plain", "a", nil)); err != nil {
				t.Fatal(err)
			}
			srv.AddProvider(&atk37cFiles{tmpl: good, lookup: lookup})
			cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
			if got, want := probe37cNotFound(t, cs, "files://docs/a"), probe37cNotFound(t, cs, "never://x"); got != want {
				t.Errorf("answered %q, want %q", got, want)
			}
			if got, err := readText(cs, t.Context(), "memo://a"); err != nil || !strings.Contains(got, "a") {
				t.Errorf("memo://a after: %q, %v", got, err)
			}
		})
	}
	t.Run("fresh pointers", func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "files"}, nil)
		srv.AddProvider(&atk37cFiles{tmpl: good, lookup: func(string) *mcpkit.ResourceTemplate { return atk37cFilesTemplate() }})
		cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
		for i := range 4200 {
			if got, err := readText(cs, t.Context(), "files://d/n"); err != nil || !strings.Contains(got, "d|n") {
				t.Fatalf("read %d: %q, %v", i, got, err)
			}
		}
	})
}

// TestProbe37cProviderTemplateRules checks that rules keyed on a
// provider template's text hold for the URIs it serves: Disable hides
// them from all, Require from the callers the predicate refuses, with
// the answer of a URI never served; and that a notifying provider's
// template URI is subscribed to and heard.
func TestProbe37cProviderTemplateRules(t *testing.T) {
	isFiles := func(tg mcpkit.Target) bool { return tg.Key() == "files://{dir}/{name}" }
	t.Run("disable", func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "files"}, nil)
		srv.AddProvider(&atk37cFiles{tmpl: atk37cFilesTemplate()})
		visibility.New(visibility.Disable(isFiles)).Attach(srv)
		cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
		if got, want := probe37cNotFound(t, cs, "files://docs/a"), probe37cNotFound(t, cs, "never://x"); got != want {
			t.Errorf("answered %q, want %q", got, want)
		}
	})
	t.Run("require", func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "files"}, nil)
		srv.AddProvider(&atk37cFiles{tmpl: atk37cFilesTemplate()})
		visibility.New(visibility.Require(isFiles, visibility.Users("ada"))).Attach(srv)
		tokens := map[string]*auth.TokenInfo{"ada": {UserID: "ada"}, "bob": {UserID: "bob"}}
		bob := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "bob"}).Session
		ada := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: tokens, Token: "ada"}).Session
		if got, want := probe37cNotFound(t, bob, "files://docs/a"), probe37cNotFound(t, bob, "never://x"); got != want {
			t.Errorf("bob answered %q, want %q", got, want)
		}
		if got, err := readText(ada, t.Context(), "files://docs/a"); err != nil || !strings.Contains(got, "docs|a") {
			t.Errorf("ada reads %q, %v", got, err)
		}
	})
	t.Run("subscribe", func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "files"}, nil)
		if err := srv.AddResources(tools.TextResource("memo://a", "a", "text/plain", "a", nil)); err != nil {
			t.Fatal(err)
		}
		srv.AddProvider(&atk37cFiles{tmpl: atk37cFilesTemplate()})
		cs, heard := updates(t, srv, false)
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "files://docs/a"}); err != nil {
			t.Fatal(err)
		}
		updated(t, srv, "files://docs/a")
		if got := next(t, heard); got != "files://docs/a" {
			t.Errorf("heard %s", got)
		}
	})
}

// TestProbe37cCachePrivateThroughMountAndProvider: a parent caches
// reads under one shared TargetKey. A read made private by the child's
// per-request rule (through a mount), and a read of a provider's
// template, each answer who asks; neither is kept for the next caller.
func TestProbe37cCachePrivateThroughMountAndProvider(t *testing.T) {
	whoami := mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "of " + req.TokenInfo().UserID}}}, nil
	})
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	parent.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{
		Targets:   func(mcpkit.Target) bool { return true },
		TargetKey: func(mcpkit.Target, mcpkit.Caller) string { return "shared" },
	}))
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	err := child.AddResources(
		&mcpkit.Resource{Resource: mcp.Resource{URI: "x://me", Name: "me"}, Handler: whoami},
		tools.TextResource("x://vault", "vault", "text/plain", "gold", &tools.ResourceOptions{Tags: []string{"admin"}}),
	)
	if err != nil {
		t.Fatal(err)
	}
	visibility.New(visibility.Require(func(t mcpkit.Target) bool { return t.HasTag("admin") }, visibility.Scopes("admin"))).Attach(child)
	if _, err := parent.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	tmpl := &mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "files://{dir}/{name}", Name: "files"}, Handler: whoami}
	parent.AddProvider(&atk37cFiles{tmpl: tmpl})
	tokens := map[string]*auth.TokenInfo{"ada": {UserID: "ada"}, "bob": {UserID: "bob"}}
	ada := mcpkittest.NewStatelessServer(t, parent, &mcpkittest.Options{Tokens: tokens, Token: "ada"}).Session
	bob := mcpkittest.NewStatelessServer(t, parent, &mcpkittest.Options{Tokens: tokens, Token: "bob"}).Session
	for _, uri := range []string{"x://docs/me", "files://d/n"} {
		if got, err := readText(ada, t.Context(), uri); err != nil || !strings.HasSuffix(got, "of ada") {
			t.Fatalf("ada reads %s: %q, %v", uri, got, err)
		}
		if got, err := readText(bob, t.Context(), uri); err != nil || !strings.HasSuffix(got, "of bob") {
			t.Errorf("bob reads %s: %q, %v", uri, got, err)
		}
	}
}

// TestProbe37cBothShareUpdateOnce: two replicas each mount their child
// under "docs"; the children share their changes on one topic, the
// parents on another. A child's update reaches the other replica's
// parent's subscriber once: x://docs/r, then the marker x://docs/m, and
// nothing between.
func TestProbe37cBothShareUpdateOnce(t *testing.T) {
	bus := mcpkit.NewMemoryBus()
	replica := func() (parent, child *mcpkit.Server) {
		child = mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
		err := child.AddResources(tools.TextResource("x://r", "r", "text/plain", "r", nil), tools.TextResource("x://m", "m", "text/plain", "m", nil))
		if err != nil {
			t.Fatal(err)
		}
		parent = mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
		if _, err := parent.Mount("docs", child); err != nil {
			t.Fatal(err)
		}
		for srv, topic := range map[*mcpkit.Server]string{child: "child", parent: "parent"} {
			stop, err := srv.ShareChanges(bus, &mcpkit.ShareOptions{Topic: topic, Delay: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
		}
		return parent, child
	}
	parentA, childA := replica()
	parentB, _ := replica()
	for _, p := range []*mcpkit.Server{parentA, parentB} {
		cs, heard := updates(t, p, false)
		for _, uri := range []string{"x://docs/r", "x://docs/m"} {
			if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
		}
		defer func(heard <-chan string) {
			if got := []string{next(t, heard), next(t, heard)}; got[0] != "x://docs/r" || got[1] != "x://docs/m" {
				t.Errorf("heard %v, want x://docs/r then x://docs/m", got)
			}
		}(heard)
	}
	updated(t, childA, "x://r", "x://m")
}

// TestProbe37cProviderTemplateRuleChanges: a rule keyed on a provider
// template's text, attached after its URIs were read (the template made
// and kept), holds at once; taken away, the URIs are served again.
func TestProbe37cProviderTemplateRuleChanges(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "files"}, nil)
	srv.AddProvider(&atk37cFiles{tmpl: atk37cFilesTemplate()})
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	if got, err := readText(cs, t.Context(), "files://docs/a"); err != nil || !strings.Contains(got, "docs|a") {
		t.Fatalf("files://docs/a reads %q, %v", got, err)
	}
	visibility.New(visibility.Disable(func(tg mcpkit.Target) bool { return tg.Key() == "files://{dir}/{name}" })).Attach(srv)
	if got, want := probe37cNotFound(t, cs, "files://docs/a"), probe37cNotFound(t, cs, "never://x"); got != want {
		t.Errorf("answered %q, want %q", got, want)
	}
	srv.SetVisibility(nil)
	if got, err := readText(cs, t.Context(), "files://docs/a"); err != nil || !strings.Contains(got, "docs|a") {
		t.Errorf("files://docs/a reads %q, %v once the rule is gone", got, err)
	}
}

// TestProbe37cProviderPromptCompletionScopes: a provider's prompt whose
// own middleware requires "admin" refuses bob's completion, as its get.
func TestProbe37cProviderPromptCompletionScopes(t *testing.T) {
	p := atk37bFixed("report", "numbers")
	p.Arguments = []*mcp.PromptArgument{{Name: "customer"}}
	p.Middleware = []mcpkit.Middleware{mcpkit.RequireScopes("admin")}
	p.Complete = map[string]mcpkit.CompleteFunc{"customer": tools.CompleteFrom("Acme Corp", "Apex Ltd")}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "crm"}, nil)
	srv.AddProvider(&atk37cPrompts{p: p})
	cs := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: atk37cBob, Token: "bob"}).Session
	res, err := cs.Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "report"},
		Argument: mcp.CompleteParamsArgument{Name: "customer", Value: "A"},
	})
	if err == nil {
		t.Errorf("completion without the scope answered %q", res.Completion.Values)
	}
}
