package mcpkit_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestProbe37bPrivateThroughMount: a per-request rule of the child alone
// makes a read through the parent private, and its lists too, whatever
// the parent's SetCacheable says.
func TestProbe37bPrivateThroughMount(t *testing.T) {
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs, c.CacheScope = 60000, "public" },
	}})
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if err := parent.AddResources(tools.TextResource("p://own", "own", "text/plain", "own", nil)); err != nil {
		t.Fatal(err)
	}
	if err := child.AddResources(
		tools.TextResource("x://r", "r", "text/plain", "r", nil),
		tools.TextResource("x://vault", "vault", "text/plain", "gold", &tools.ResourceOptions{Tags: []string{"admin"}}),
	); err != nil {
		t.Fatal(err)
	}
	visibility.New(visibility.Require(func(t mcpkit.Target) bool { return t.HasTag("admin") }, visibility.Scopes("admin"))).Attach(child)
	if _, err := parent.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewStatelessServer(t, parent, &mcpkittest.Options{Tokens: atk37bTokens, Token: "ada"}).Session
	for _, uri := range []string{"x://docs/r", "p://own"} {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		if res.CacheScope != "private" {
			t.Errorf("%s: cacheScope %q", uri, res.CacheScope)
		}
	}
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if list.CacheScope != "private" || len(list.Resources) != 2 {
		t.Errorf("list: %q, %d resources", list.CacheScope, len(list.Resources))
	}
}

// TestProbe37bCacheMountedResource: the cache keeps apart the
// parent's own x://r and the child's x://r mounted as x://docs/r.
func TestProbe37bCacheMountedResource(t *testing.T) {
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	parent.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{Targets: func(mcpkit.Target) bool { return true }}))
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if err := parent.AddResources(tools.TextResource("x://r", "r", "text/plain", "parent", nil)); err != nil {
		t.Fatal(err)
	}
	if err := child.AddResources(tools.TextResource("x://r", "r", "text/plain", "child", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewStatelessServer(t, parent, &mcpkittest.Options{Tokens: atk37bTokens, Token: "ada"}).Session
	for range 2 {
		for uri, want := range map[string]string{"x://r": "x://r text/plain parent", "x://docs/r": "x://docs/r text/plain child"} {
			if got, err := readText(cs, t.Context(), uri); err != nil || got != want {
				t.Errorf("%s: %q, %v; want %q", uri, got, err, want)
			}
		}
	}
}

// TestProbe37bParentRuleByServedName: a parent's rule keyed on the name
// (URI) it serves a mounted prompt (resource, template) under hides it
// as never registered: get, read, completion and subscribe answer as for
// a name never served, and lists leave it out.
func TestProbe37bParentRuleByServedName(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
			vault := say("vault", &mcp.PromptArgument{Name: "who"})
			vault.Complete = map[string]mcpkit.CompleteFunc{"who": tools.CompleteFrom("ann", "bob")}
			if err := child.AddPrompts(vault, say("open")); err != nil {
				t.Fatal(err)
			}
			if err := child.AddResources(tools.TextResource("x://secret", "s", "text/plain", "gold", nil), tools.TextResource("x://open", "o", "text/plain", "o", nil)); err != nil {
				t.Fatal(err)
			}
			tmpl := &mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "y://{id}", Name: "y"}, Handler: readNote,
				Complete: map[string]mcpkit.CompleteFunc{"id": tools.CompleteFrom("1", "2")}}
			if err := child.AddResourceTemplates(tmpl); err != nil {
				t.Fatal(err)
			}
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
			if err := parent.AddResources(tools.TextResource("p://own", "own", "text/plain", "own", nil)); err != nil {
				t.Fatal(err)
			}
			visibility.New(
				visibility.Disable(func(p *mcpkit.Prompt) bool { return p.Name == "docs_vault" }),
				visibility.Disable(func(r *mcpkit.Resource) bool { return r.URI == "x://docs/secret" }),
				visibility.Disable(func(r *mcpkit.ResourceTemplate) bool { return r.URITemplate == "y://docs/{id}" }),
			).Attach(parent)
			if _, err := parent.Mount("docs", child); err != nil {
				t.Fatal(err)
			}
			cs := era.Connect(t, parent, nil).Session
			ctx := t.Context()
			same := func(what string, hidden, never error) {
				t.Helper()
				if hidden == nil || never == nil {
					t.Errorf("%s: hidden %v, never registered %v", what, hidden, never)
					return
				}
				if h, n := wireError(t, hidden), wireError(t, never); h != strings.ReplaceAll(n, "nope", "secret") && h != strings.ReplaceAll(n, "nope", "vault") && h != strings.ReplaceAll(n, "nope", "{id}") {
					t.Errorf("%s: hidden %s, never registered %s", what, h, n)
				}
			}
			_, e1 := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "docs_vault"})
			_, e2 := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "docs_nope"})
			same("get", e1, e2)
			_, e1 = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "x://docs/secret"})
			_, e2 = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "x://docs/nope"})
			same("read", e1, e2)
			_, e1 = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "y://docs/secret"})
			_, e2 = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "y://dacs/nope"})
			if e1 == nil || e2 == nil {
				t.Errorf("template read: %v %v", e1, e2)
			}
			_, e1 = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "docs_vault"}, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "a"}})
			_, e2 = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "docs_nope"}, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "a"}})
			same("complete prompt", e1, e2)
			_, e1 = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "y://docs/{id}"}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: ""}})
			_, e2 = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "y://docs/nope"}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: ""}})
			same("complete template", e1, e2)
			if era.Name == mcpkittest.StatefulVersion {
				e1 = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "x://docs/secret"})
				e2 = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "x://docs/nope"})
				same("subscribe", e1, e2)
			}
			var names []string
			for p, err := range cs.Prompts(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, p.Name)
			}
			for r, err := range cs.Resources(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, r.URI)
			}
			for r, err := range cs.ResourceTemplates(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, r.URITemplate)
			}
			if got := strings.Join(names, ","); got != "docs_open,p://own,x://docs/open" {
				t.Errorf("listed %s", got)
			}
		})
	}
}

// TestProbe37bListenThroughMountAcrossReplicas: a 2026-07-28 listen
// stream on replica B's parent subscribes to a mounted URI; once B's child
// hides it, updates published by replica A's parent no longer reach the
// stream, while those of a URI it still sees do.
func TestProbe37bListenThroughMountAcrossReplicas(t *testing.T) {
	bus := mcpkit.NewMemoryBus()
	replica := func() (parent, child *mcpkit.Server) {
		child = subscribable(t)
		parent = mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
		if _, err := parent.Mount("docs", child); err != nil {
			t.Fatal(err)
		}
		stop, err := parent.ShareChanges(bus, &mcpkit.ShareOptions{Delay: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		return parent, child
	}
	parentA, _ := replica()
	parentB, childB := replica()
	hs := httptest.NewServer(parentB.HTTPHandler(nil))
	t.Cleanup(hs.Close)
	guest, agreed := listenFor(t, hs.URL, false, "memo://docs/gated", "memo://docs/vault", "note://docs/7")
	if want := []string{"memo://docs/gated", "note://docs/7"}; !slices.Equal(agreed, want) {
		t.Fatalf("agreed to %q, want %q", agreed, want)
	}
	updated(t, parentA, "memo://docs/gated")
	if got := nextUpdate(t, guest); got != "memo://docs/gated" {
		t.Errorf("heard %s", got)
	}
	childB.SetVisibility(lockdown{})
	updated(t, parentA, "memo://docs/gated", "memo://docs/vault", "note://docs/7")
	if got := nextUpdate(t, guest); got != "note://docs/7" {
		t.Errorf("heard %s first, want note://docs/7: memo://docs/gated is hidden since", got)
	}
}

// TestProbe37bCompleterAddedAfterMount: a child that gets its first
// completer after it was mounted makes the parent complete too.
func TestProbe37bCompleterAddedAfterMount(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
			if err := parent.AddPrompts(say("own")); err != nil {
				t.Fatal(err)
			}
			child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
			if _, err := parent.Mount("docs", child); err != nil {
				t.Fatal(err)
			}
			cs := era.Connect(t, parent, nil).Session
			greet := say("greet", &mcp.PromptArgument{Name: "who"})
			greet.Complete = map[string]mcpkit.CompleteFunc{"who": tools.CompleteFrom("ann", "bob")}
			if err := child.AddPrompts(greet); err != nil {
				t.Fatal(err)
			}
			res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "docs_greet"}, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "a"}})
			if err != nil || !slices.Equal(res.Completion.Values, []string{"ann"}) {
				t.Errorf("complete: %v, %v", res, err)
			}
		})
	}
}
