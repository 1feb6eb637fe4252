package mcpkit_test

import (
	"context"
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
