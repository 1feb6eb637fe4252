package proxy_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
	"github.com/mcpkit/mcpkit/tools"
)

// TestAttack37bProxiedSubscriptionNeverHears: severity medium (wrong
// answer: a subscription agreed to and never honored). The local server
// serves an upstream's resource docs://a through proxy.Upstream, declares
// resources.subscribe, and accepts a 2025-11-25 client's
// resources/subscribe of docs://a. Expected: when the upstream says
// docs://a changed (its ResourceUpdated), the subscriber hears
// notifications/resources/updated, or the subscription is refused. What
// happens: the subscribe succeeds, but nothing subscribes upstream and
// nothing relays the upstream's updates: the client never hears.
func TestAttack37bProxiedSubscriptionNeverHears(t *testing.T) {
	upstream := mcpkit.NewServer(&mcp.Implementation{Name: "crm"}, nil)
	if err := upstream.AddResources(tools.TextResource("docs://a", "a", "text/plain", "a", nil)); err != nil {
		t.Fatal(err)
	}
	up := newProxy(t, inMemory(upstream), &proxy.Options{Prefix: "crm_"})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	if err := local.AddResources(tools.TextResource("memo://own", "own", "text/plain", "own", nil)); err != nil {
		t.Fatal(err)
	}
	up.AddTo(local)
	heard := make(chan string, 4)
	cs := mcpkittest.NewInMemoryServer(t, local, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion, Client: &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { heard <- req.Params.URI },
	}}).Session
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://a"}); err != nil {
		t.Fatalf("the proxied resource is not served: %v", err)
	}
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://a"}); err != nil {
		return // refusing is an honest answer
	}
	if err := upstream.ResourceUpdated(t.Context(), "docs://a"); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-heard:
		if uri != "docs://a" {
			t.Errorf("heard %q", uri)
		}
	case <-time.After(5 * time.Second): // a safety net: the update is sent before
		t.Error("subscribed to docs://a, the upstream updated it, and the client never heard")
	}
}
