package proxy_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/proxy"
)

// TestProxyProgress reports progress upstream: the local client hears it
// on its own call, under its own token, and the upstream tool finishes
// only once it has (so nothing here waits on a clock).
func TestProxyProgress(t *testing.T) {
	for name, connect := range map[string]func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server{
		"in-memory 2026-07-28": mcpkittest.NewInMemoryServer,
		"HTTP 2025-11-25":      mcpkittest.NewServer,
	} {
		t.Run(name, func(t *testing.T) {
			us := newUpstream(t, false, 0)
			up := newProxy(t, proxy.HTTP(us.url, nil), nil)
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			heard := make(chan *mcp.ProgressNotificationParams, 4)
			ts := connect(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					heard <- r.Params
					us.probe.proceed <- struct{}{}
				},
			}})
			res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "steps", Meta: mcp.Meta{"progressToken": "mine"}})
			if err != nil || resultText(res) != "done" {
				t.Fatalf("steps: %v, %v", res, err)
			}
			p := <-heard
			if p.ProgressToken != "mine" || p.Progress != 1 || p.Total != 2 || p.Message != "half way" {
				t.Errorf("heard %+v; want the upstream's report under the client's token", p)
			}
		})
	}
}

// TestProxyCancel cancels a call in flight: the upstream's handler is
// cancelled too, on both eras of the local client.
func TestProxyCancel(t *testing.T) {
	for era, connect := range eras {
		t.Run(era, func(t *testing.T) {
			us := newUpstream(t, false, 0)
			up := newProxy(t, proxy.HTTP(us.url, nil), nil)
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			ts := connect(t, local, nil)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := ts.CallTool(ctx, "wait", nil)
				done <- err
			}()
			<-us.probe.started
			cancel()
			if err := <-us.probe.ended; !errors.Is(err, context.Canceled) {
				t.Errorf("the upstream's handler ended with %v; want it cancelled", err)
			}
			<-done
		})
	}
}

// TestProxyInputRequired passes an upstream tool's input_required round
// (2026-07-28, SEP-2322) through to the local client and its answer and
// request state back: a 2026-07-28 client answers by calling again, and
// for a 2025-11-25 client the SDK asks over its session; the upstream
// tool is written once and sees its state come back either way.
func TestProxyInputRequired(t *testing.T) {
	for era, connect := range eras {
		t.Run(era, func(t *testing.T) {
			us := newUpstream(t, false, 0)
			up := newProxy(t, proxy.HTTP(us.url, nil), nil)
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			ts := connect(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if r.Params.Message != "Your name?" {
						return nil, errors.New("unexpected question " + r.Params.Message)
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
			}})
			res, err := ts.CallTool(t.Context(), "ask", nil)
			if err != nil || res.IsError || resultText(res) != "hello Ada" {
				t.Fatalf("got %v, %v (%s)", res, err, resultText(res))
			}
		})
	}
}

// TestProxyContainment checks the upstream's own limits: past
// MaxConcurrent calls in flight the next is refused at once, and once the
// upstream is gone the circuit opens after the breaker's window, so that
// calls are refused without trying the upstream again.
func TestProxyContainment(t *testing.T) {
	us := newUpstream(t, false, 0)
	up := newProxy(t, proxy.HTTP(us.url, &proxy.HTTPOptions{MaxRetries: -1}), &proxy.Options{
		MaxConcurrent: 1,
		Breaker:       &middleware.CircuitBreakerOptions{Window: 2, MinCalls: 2},
	})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ts := mcpkittest.NewStatelessServer(t, local, nil)
	ctx := t.Context()

	done := make(chan struct{})
	go func() {
		defer close(done)
		ts.CallTool(ctx, "wait", nil)
	}()
	<-us.probe.started
	res, err := ts.CallTool(ctx, "echo", nil)
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "busy") {
		t.Errorf("a second call in flight: %v, %v (%s); want it refused as busy", res, err, resultText(res))
	}
	us.probe.release <- struct{}{}
	<-done

	closeUpstream(t, us)
	for i := range 2 {
		res, err := ts.CallTool(ctx, "echo", nil)
		if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), "unavailable") {
			t.Fatalf("call %d to a dead upstream: %v, %v (%s)", i, res, err, resultText(res))
		}
	}
	res, err = ts.CallTool(ctx, "echo", nil)
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "after repeated failures") {
		t.Errorf("after the window: %v, %v (%s); want the open circuit's answer", res, err, resultText(res))
	}
}
