package proxy_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
)

// TestProbe37bHungUpstreamReadEndsWithCaller: a proxied read whose
// upstream handler hangs ends when the client gives up, and the
// upstream's handler sees its context end (nothing is left running).
func TestProbe37bHungUpstreamReadEndsWithCaller(t *testing.T) {
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	upstream := mcpkit.NewServer(&mcp.Implementation{Name: "crm"}, nil)
	hang := &mcpkit.Resource{Resource: mcp.Resource{URI: "slow://x", Name: "x"}, Handler: mcpkit.ResourceHandlerFunc(
		func(ctx context.Context, _ *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			started <- struct{}{}
			<-ctx.Done()
			ended <- ctx.Err()
			return nil, ctx.Err()
		})}
	if err := upstream.AddResources(hang); err != nil {
		t.Fatal(err)
	}
	up := newProxy(t, inMemory(upstream), &proxy.Options{Prefix: "crm_"})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			cs := era.Connect(t, local, nil).Session
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "slow://x"})
				done <- err
			}()
			<-started
			cancel()
			select {
			case err := <-done:
				if err == nil {
					t.Error("a cancelled read succeeded")
				}
			case <-time.After(10 * time.Second): // a safety net
				t.Fatal("the read did not end with its caller")
			}
			select {
			case <-ended:
			case <-time.After(10 * time.Second): // a safety net
				t.Error("the upstream's handler still runs after the caller left")
			}
		})
	}
}
