package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/middleware"
)

// TestScaleOut starts the whole demonstration with run.sh (Redis, three
// replicas, nginx round-robin in front) and drives it with real SDK
// clients: the rate limit holds across the replicas, a cached result is
// served by another replica than the one that computed it, an idempotent
// call re-issued to another replica runs once, and a tool turned on through
// one replica is announced to a client listening on another. Stopping the
// script leaves no process behind.
func TestScaleOut(t *testing.T) {
	need(t, "redis-server", "nginx", "bash")
	ports := freePorts(t, 5)
	lb, r1, r2, r3, redisPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	const perMinute = 5

	cmd := exec.Command("bash", "run.sh")
	cmd.Env = append(os.Environ(),
		"LB_PORT="+strconv.Itoa(lb),
		fmt.Sprintf("REPLICA_PORTS=%d %d %d", r1, r2, r3),
		"REDIS_PORT="+strconv.Itoa(redisPort),
		"PER_MINUTE="+strconv.Itoa(perMinute),
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	pids, err := waitReady(out, 3*time.Minute)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			t.Error("run.sh did not stop within 30s of SIGTERM")
		}
	}
	t.Cleanup(stop)
	if err != nil {
		stop()
		t.Fatalf("run.sh: %v\nstderr:\n%s", err, stderr.String())
	}
	if len(pids) != 5 {
		t.Fatalf("run.sh reported pids %v, want 5 (redis, three replicas, nginx)", pids)
	}
	url := func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", port) }

	t.Run("rate limit holds across replicas", func(t *testing.T) {
		cs := connect(t, url(lb))
		ok, limited := 0, 0
		servedBy := map[string]bool{}
		for i := range 3 * perMinute {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "limited_echo", Arguments: map[string]any{"text": strconv.Itoa(i)}})
			if err != nil {
				t.Fatal(err)
			}
			servedBy[fmt.Sprint(res.Meta[MetaKeyServedBy])] = true
			if !res.IsError {
				ok++
				continue
			}
			limited++
			if _, has := res.Meta[middleware.MetaKeyRetryAfter]; !has {
				t.Errorf("a refused call has no %s in _meta: %+v", middleware.MetaKeyRetryAfter, res.Meta)
			}
		}
		// With a per-process limit, three replicas would have allowed
		// three times the budget.
		if ok != perMinute || limited != 2*perMinute {
			t.Errorf("%d calls allowed and %d refused, want %d and %d", ok, limited, perMinute, 2*perMinute)
		}
		if len(servedBy) < 3 {
			t.Errorf("calls were served by %v, want all three replicas (round-robin)", servedBy)
		}
	})

	t.Run("a cached result is served by another replica", func(t *testing.T) {
		cs := connect(t, url(lb))
		var computedBy string
		servedBy := map[string]bool{}
		for i := range 4 {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow_lookup", Arguments: map[string]any{"city": "Paris"}})
			if err != nil || res.IsError {
				t.Fatalf("call %d: %v %+v", i, err, res)
			}
			var got lookupOut
			structured(t, res, &got)
			if got.Runs != 1 {
				t.Errorf("call %d: the lookup ran %d times, want once, then answers from the cache", i, got.Runs)
			}
			if i == 0 {
				computedBy = got.ComputedBy
				continue
			}
			if got.ComputedBy != computedBy {
				t.Errorf("call %d: computed by %s, want %s's cached result", i, got.ComputedBy, computedBy)
			}
			if res.Meta[middleware.MetaKeyCache] != "hit" {
				t.Errorf("call %d: _meta %v, want a cache hit", i, res.Meta)
			}
			servedBy[fmt.Sprint(res.Meta[MetaKeyServedBy])] = true
		}
		delete(servedBy, computedBy)
		if len(servedBy) == 0 {
			t.Errorf("every cached answer came from %s, which computed it; want another replica too", computedBy)
		}
	})

	t.Run("an idempotent call re-issued to another replica runs once", func(t *testing.T) {
		call := func(port int) chargeOut {
			cs := connect(t, url(port))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{
				Name:      "charge",
				Arguments: map[string]any{"account": "acct-7", "cents": 1250},
				Meta:      mcp.Meta{middleware.MetaKeyIdempotencyKey: "order-7-attempt"},
			})
			if err != nil || res.IsError {
				t.Fatalf("charge on port %d: %v %+v", port, err, res)
			}
			var got chargeOut
			structured(t, res, &got)
			return got
		}
		first := call(r1)
		again := call(r2) // the client lost the answer and retries elsewhere
		if first.Executions != 1 || again != first {
			t.Errorf("first %+v, retry %+v: want one execution, and the retry answering the first's result", first, again)
		}
		if first.ChargedBy != "r1" {
			t.Errorf("charged by %s, want r1", first.ChargedBy)
		}
	})

	t.Run("a tool turned on through one replica is announced on another", func(t *testing.T) {
		l := listen(t, url(r2))
		if names := toolNames(t, l.cs); contains(names, "beta_report") {
			t.Fatalf("beta_report listed before it was turned on: %v", names)
		}
		resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/admin/beta?on=true", r1), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("turning beta on: %s", resp.Status)
		}
		select {
		case <-l.changed:
		case <-time.After(20 * time.Second):
			t.Fatal("the client listening on r2 got no notifications/tools/list_changed")
		}
		// Every replica serves it now, whichever the balancer picks.
		cs := connect(t, url(lb))
		for i := range 3 {
			if names := toolNames(t, cs); !contains(names, "beta_report") {
				t.Errorf("list %d through nginx: %v, want beta_report", i, names)
			}
		}
	})

	stop()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after the script stopped (kill 0: %v)", pid, err)
		}
	}
	for _, port := range ports {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
			c.Close()
			t.Errorf("port %d still accepts connections after the script stopped", port)
		}
	}
}

// need skips the test when a command it needs is missing, unless CI=true or
// MCPKIT_REQUIRE_REDIS=1 says it must run.
func need(t *testing.T, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if _, err := exec.LookPath(c); err != nil {
			if os.Getenv("CI") == "true" || os.Getenv("MCPKIT_REQUIRE_REDIS") == "1" {
				t.Fatalf("%s is not installed, and CI needs this test to run", c)
			}
			t.Skipf("%s is not installed (Debian: apt-get install redis-server nginx)", c)
		}
	}
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// waitReady reads the script's output until it says it serves, and returns
// the pids it reports.
func waitReady(out io.Reader, limit time.Duration) ([]int, error) {
	type ready struct {
		pids []int
		err  error
	}
	done := make(chan ready, 1)
	go func() {
		var pids []int
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "scaleout: pids "); ok {
				for _, f := range strings.Fields(rest) {
					pid, err := strconv.Atoi(f)
					if err != nil {
						done <- ready{err: fmt.Errorf("bad pid line %q", line)}
						return
					}
					pids = append(pids, pid)
				}
			}
			if strings.HasPrefix(line, "scaleout: serving MCP") {
				done <- ready{pids: pids}
				io.Copy(io.Discard, out)
				return
			}
		}
		done <- ready{err: errors.New("exited before serving")}
	}()
	select {
	case r := <-done:
		return r.pids, r.err
	case <-time.After(limit):
		return nil, fmt.Errorf("not serving after %v", limit)
	}
}

// clientToken is the bearer token of the test's clients. No replica
// verifies it, so it buys no rate budget of its own, but it separates the
// client's cached results and idempotency keys from everyone else's: a
// server keeps none for anonymous callers, who cannot be told apart.
const clientToken = "scaleout-test-client"

// connect connects a client that sends clientToken to endpoint.
func connect(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "scaleout-test"}, nil)
	httpClient := &http.Client{Transport: bearer{clientToken}}
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// listener is a 2026-07-28 client with an open subscriptions/listen stream.
type listener struct {
	cs      *mcp.ClientSession
	changed chan struct{}
}

// listen connects to endpoint and waits until the server has acknowledged
// the client's listen stream, so that no notification can come before it.
func listen(t *testing.T, endpoint string) *listener {
	t.Helper()
	l := &listener{changed: make(chan struct{}, 16)}
	acked := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "scaleout-listener"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case l.changed <- struct{}{}:
			default:
			}
		},
	})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				select {
				case acked <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	select {
	case <-acked:
	case <-time.After(20 * time.Second):
		t.Fatal("subscriptions/listen not acknowledged")
	}
	l.cs = cs
	return l
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// bearer sends its token in the Authorization header of every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper must not modify the request
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}

func TestHelpExitsCleanly(t *testing.T) {
	var stderr strings.Builder
	if err := run(t.Context(), []string{"-h"}, &stderr); err != nil {
		t.Fatalf("run -h = %v, want nil (exit 0)", err)
	}
	if !strings.Contains(stderr.String(), "-addr") {
		t.Errorf("usage not printed: %s", stderr.String())
	}
}
