package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
)

// stdioUpstream returns a Dial that starts this test binary as an
// upstream server over stdio (see TestMain), a new process each time.
func stdioUpstream(t *testing.T) proxy.Dial {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return proxy.Command(func() *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), upstreamEnv+"=1")
		return cmd
	}, nil)
}

// TestProxyCommandDiesMidCall proxies a command over stdio whose process
// exits during a call: the call ends at once with a retryable error (no
// hang), the local server keeps serving its own tools, the upstream's
// tools stay listed from the last catalog (or are dropped, by option)
// while the proxy cannot start the command again, and once it can, the
// tools are back and served by a new process.
func TestProxyCommandDiesMidCall(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("DropWhenDown=%v", drop), func(t *testing.T) {
			dial := stdioUpstream(t)
			dials := 0
			allow := make(chan struct{}) // closed: the command may start again
			gated := func(ctx context.Context) (mcp.Transport, error) {
				if dials++; dials > 1 {
					select {
					case <-allow:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return dial(ctx)
			}
			up := newProxy(t, gated, &proxy.Options{Prefix: "cmd_", DropWhenDown: drop})
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			local.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "local_help", InputSchema: objectSchema("")},
				Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("help"), nil })})
			up.AddTo(local)
			changed := make(chan struct{}, 16)
			ts := mcpkittest.NewServer(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			}})
			ctx := t.Context()

			if res, err := ts.CallTool(ctx, "cmd_echo", map[string]any{"say": "before"}); err != nil || resultText(res) != "echo: before" {
				t.Fatalf("before: %v, %v", res, err)
			}
			res, err := ts.CallTool(ctx, "cmd_die", nil)
			if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), "unavailable") {
				t.Fatalf("die: %v, %v (%s); want a retryable error", res, err, resultText(res))
			}
			if res, err := ts.CallTool(ctx, "local_help", nil); err != nil || resultText(res) != "help" {
				t.Errorf("a local tool while the upstream is down: %v, %v", res, err)
			}
			listed, err := ts.Session.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(listed.Tools), map[bool]int{false: 10, true: 1}[drop]; got != want {
				t.Errorf("%d tools listed while the upstream is down, want %d", got, want)
			}
			close(allow)
			if drop {
				for {
					<-changed
					if tl, _ := up.LookupTool(ctx, nil, "cmd_echo"); tl != nil {
						break
					}
				}
			}
			if res, err := ts.CallTool(ctx, "cmd_echo", map[string]any{"say": "after"}); err != nil || resultText(res) != "echo: after" {
				t.Errorf("after a restart: %v, %v", res, err)
			}
		})
	}
}

// TestProxyHTTPUpstreamDiesMidCall breaks the connection of a call in
// flight, as an upstream that crashes does: the call ends with a
// retryable error, and the next one is served.
func TestProxyHTTPUpstreamDiesMidCall(t *testing.T) {
	us := newUpstream(t, false, 0)
	var crash atomic.Bool // the next call's connection breaks
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if crash.Load() && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"tools/call"`) {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		forwardTo(us.url, w, r)
	}))
	t.Cleanup(front.Close)
	up := newProxy(t, proxy.HTTP(front.URL, &proxy.HTTPOptions{MaxRetries: -1}), nil)
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ts := mcpkittest.NewStatelessServer(t, local, nil)
	crash.Store(true)
	res, err := ts.CallTool(t.Context(), "echo", map[string]any{"say": "x"})
	if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
		t.Fatalf("got %v, %v (%s); want a retryable error", res, err, resultText(res))
	}
	crash.Store(false)
	if res, err := ts.CallTool(t.Context(), "echo", map[string]any{"say": "again"}); err != nil || resultText(res) != "echo: again" {
		t.Errorf("after the crash: %v, %v", res, err)
	}
}

// forwardTo sends r on to target and copies the answer to w, flushing as
// it goes, for event streams.
func forwardTo(target string, w http.ResponseWriter, r *http.Request) {
	u, err := url.Parse(target)
	if err != nil {
		panic(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ServeHTTP(w, r)
}

// TestProxyMisbehavingHTTP answers calls with what no MCP server should
// send: invalid JSON, and a body larger than the proxy reads. Each call
// ends with a retryable error, bounded, and the proxy serves the next.
func TestProxyMisbehavingHTTP(t *testing.T) {
	for name, answer := range map[string]string{
		"invalid JSON":          `{"jsonrpc":"2.0","id":`,
		"invalid JSON in event": "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\n\n",
		"huge":                  `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]},"id":1}`,
		"not JSON-RPC":          `[1,2,3]`,
	} {
		t.Run(name, func(t *testing.T) {
			us := newUpstream(t, false, 0)
			var misbehave atomic.Bool
			misbehave.Store(true)
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if misbehave.Load() && strings.Contains(string(body), `"tools/call"`) {
					w.Header().Set("Content-Type", "application/json")
					if strings.HasPrefix(answer, "event:") {
						w.Header().Set("Content-Type", "text/event-stream")
					}
					io.WriteString(w, answer)
					return
				}
				r.Body = io.NopCloser(strings.NewReader(string(body)))
				forwardTo(us.url, w, r)
			}))
			t.Cleanup(front.Close)
			up := newProxy(t, proxy.HTTP(front.URL, &proxy.HTTPOptions{MaxResponseBytes: 64 << 10, MaxRetries: -1}), nil)
			local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
			up.AddTo(local)
			ts := mcpkittest.NewStatelessServer(t, local, nil)
			res, err := ts.CallTool(t.Context(), "echo", map[string]any{"say": "x"})
			if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
				t.Fatalf("got %v, %v (%s); want a retryable error", res, err, resultText(res))
			}
			if n := len(resultText(res)); n > 2048 {
				t.Errorf("the error is %d bytes; want it bounded", n)
			}
			misbehave.Store(false)
			if res, err := ts.CallTool(t.Context(), "echo", map[string]any{"say": "again"}); err != nil || resultText(res) != "echo: again" {
				t.Errorf("next call: %v, %v", res, err)
			}
		})
	}
}

// TestProxyHugeResult bounds a valid result larger than MaxResultBytes:
// a retryable tool error saying so, not the result.
func TestProxyHugeResult(t *testing.T) {
	us := newUpstream(t, false, 0)
	up := newProxy(t, proxy.HTTP(us.url, nil), &proxy.Options{MaxResultBytes: 4096})
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	ts := mcpkittest.NewStatelessServer(t, local, nil)
	res, err := ts.CallTool(t.Context(), "huge", map[string]any{"n": 100000})
	if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), "the limit is 4096") {
		t.Fatalf("got %v, %v (%.200s)", res, err, resultText(res))
	}
	if res, err := ts.CallTool(t.Context(), "huge", map[string]any{"n": 100}); err != nil || res.IsError {
		t.Errorf("a small result: %v, %v", res, err)
	}
}

// TestProxyTimeout forwards a call the upstream never answers: at the
// proxy's time limit the client gets a retryable timeout naming the tool,
// and the upstream's handler is cancelled. The clock is synctest's.
func TestProxyTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		upstreamSrv := mcpkit.NewServer(&mcp.Implementation{Name: "slow"}, nil)
		addTools(upstreamSrv, p)
		up, err := proxy.New(t.Context(), inMemory(upstreamSrv), &proxy.Options{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer up.Close()
		local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
		up.AddTo(local)
		cs, err := mcpkittest.ConnectInMemory(t.Context(), local, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		start := time.Now()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wait"})
		if err != nil || !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(resultText(res), `tool "wait" timed out after 5s`) {
			t.Fatalf("got %v, %v (%s)", res, err, resultText(res))
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("answered after %v, want 5s", d)
		}
		if err := <-p.ended; !errors.Is(err, context.Canceled) {
			t.Errorf("the upstream's handler ended with %v; want it cancelled", err)
		}
	})
}
