package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// serveEnv makes the test binary, started again by run as a server, serve
// instead of running the tests.
const serveEnv = "IOBOUND_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := dispatch(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString("iobound (test server): " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// redisServer returns the path of redis-server, or skips the test if there
// is none (fails it under MCPKIT_REQUIRE_REDIS=1, as CI sets).
func redisServer(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("MCPKIT_REQUIRE_REDIS") == "1" {
			t.Fatal("MCPKIT_REQUIRE_REDIS=1 and no redis-server:", err)
		}
		t.Skip("no redis-server:", err)
	}
	return path
}

// world starts a seeded Redis and the API, and returns a backend on them
// and a client to Redis.
func world(t *testing.T) (*backend, *redis.Client) {
	t.Helper()
	addr, stop, err := startRedis(t.Context(), redisServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	api := httptest.NewServer(apiHandler(0))
	t.Cleanup(api.Close)
	b := newBackend(addr, api.URL)
	t.Cleanup(b.close)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	if err := seed(t.Context(), rdb); err != nil {
		t.Fatal(err)
	}
	return b, rdb
}

// newVU returns virtual user n on the endpoint of mode m at base, recording.
func newVU(base string, n int, m mode) *vu {
	var on atomic.Bool
	on.Store(true)
	return &vu{client: newLoadClient(1), url: base + m.path, mode: m, calls: vuCalls(n, newCatalog(), m), list: listBody(m), recording: &on}
}

// TestServersAnswer runs two iterations of a virtual user against each
// server in each mode, in process, with the load run's checks on every
// answer, and counts what the load run counts.
func TestServersAnswer(t *testing.T) {
	b, _ := world(t)
	for _, impl := range impls {
		h, err := newHandler(impl, b)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		for _, m := range modes {
			t.Run(impl+"/"+m.name, func(t *testing.T) {
				u := newVU(hs.URL, 7, m)
				u.iteration(t.Context())
				u.iteration(t.Context())
				// Each iteration: three calls and a list, each one request,
				// and one more (initialize) where the mode opens sessions.
				wantRequests := 2 * 4
				if m.initialize {
					wantRequests *= 2
				}
				if u.errors != 0 || u.toolCalls != 6 || u.requests != wantRequests || len(u.callLatency) != 6 || len(u.sessionLatency) != 6 {
					t.Errorf("errors %d (first: %v), calls %d, requests %d (want %d), latencies %d/%d",
						u.errors, u.firstErr, u.toolCalls, u.requests, wantRequests, len(u.callLatency), len(u.sessionLatency))
				}
			})
		}
	}
}

// TestChecksFailWrongAnswers checks that the load run would count an answer
// that does not hold the seeded data as an error: with Redis emptied, the
// search finds no popular products and the cart is empty.
func TestChecksFailWrongAnswers(t *testing.T) {
	b, rdb := world(t)
	h, err := newHandler("mcpkit", b)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	if err := rdb.FlushDB(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	u := newVU(hs.URL, 3, modes[0])
	u.iteration(t.Context())
	if u.errors != 2 || u.toolCalls != 1 || u.firstErr == nil || !strings.Contains(u.firstErr.Error(), "0 popular") {
		t.Errorf("errors %d (first: %v), calls %d; want 2 errors, search first, and checkout passing", u.errors, u.firstErr, u.toolCalls)
	}
}

// TestRun runs the whole measurement for one short round, with this test
// binary started again as the servers, and checks every sample line and
// the tables.
func TestRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("run reads the servers' CPU time and memory from Linux's /proc")
	}
	redisServer(t)
	t.Setenv(serveEnv, "1")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"-rounds", "1", "-warmup", "100ms", "-duration", "400ms", "-vus", "2", "-think", "10ms"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, stderr.String())
	}
	out := stdout.String()
	line := regexp.MustCompile(`(?m)^BenchmarkIOBound/([a-z0-9-]+)/([a-z-]+) \t([0-9]+)\t[0-9]+ req/s\t[0-9]+ calls/s\t[0-9]+ p50-us\t[0-9]+ p99-us\t[0-9]+ session-p50-us\t[0-9]+ cpu-us/call\t[0-9.]+ peak-MB\t0 errors\t[0-9.]+ load1$`)
	samples := line.FindAllStringSubmatch(out, -1)
	if len(samples) != len(modes)*len(impls) {
		t.Errorf("%d sample lines, want %d:\n%s", len(samples), len(modes)*len(impls), out)
	}
	for _, s := range samples {
		if s[3] == "0" {
			t.Errorf("%s/%s: no call measured", s[1], s[2])
		}
	}
	for _, want := range []string{"\nsession-2025\n", "\nstateless-2026\n", "| go-sdk |", "| mcp-go |", "| mcpkit |", "machine: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestBadArguments checks that run refuses what it cannot measure, naming it.
func TestBadArguments(t *testing.T) {
	long := strings.Repeat("x", 10000)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage"},
		{[]string{long}, "unknown command"},
		{[]string{"run", "-modes", "stateful-2026"}, "unknown mode"},
		{[]string{"run", "-servers", "mcpkit," + long}, "unknown server"},
		{[]string{"run", "-rounds", "0"}, "at least 1"},
		{[]string{"serve", "-server", "mcpkit"}, "-api is required"},
		{[]string{"serve", "-server", long, "-api", "http://127.0.0.1:1"}, "unknown server"},
	} {
		err := dispatch(t.Context(), tc.args, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 512 {
			t.Errorf("%.60q: error %.200v, want a short one containing %q", tc.args, err, tc.want)
		}
	}
}

// TestCatalogSearch checks the API's search against a scan of the catalog.
func TestCatalogSearch(t *testing.T) {
	c := newCatalog()
	for _, tc := range []struct {
		category string
		lo, hi   float64
	}{{"Electronics", 50, 500}, {"Books", 0, 10}, {"Toys", 998, 2000}, {"Home", 300, 300}, {"None", 0, 1000}} {
		want := 0
		for id := 1; id <= catalogSize; id++ {
			if p := productByID(id); p.Category == tc.category && p.Price >= tc.lo && p.Price <= tc.hi {
				want++
			}
		}
		got, page := c.search(tc.category, tc.lo, tc.hi, 10)
		if got != want || len(page) != min(want, 10) {
			t.Errorf("%s %v-%v: %d found, page of %d; want %d", tc.category, tc.lo, tc.hi, got, len(page), want)
		}
		for i := 1; i < len(page); i++ {
			if page[i].Price < page[i-1].Price || page[i].Price < tc.lo || page[i].Price > tc.hi {
				t.Errorf("%s: page out of order or range at %d: %+v", tc.category, i, page[i])
			}
		}
	}
}

func TestPercentileAndMedian(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 6, 7, 8, 9}
	if p50, p99 := percentile(ds, 0.5), percentile(ds, 0.99); p50 != 5 || p99 != 10 {
		t.Errorf("p50 %v, p99 %v; want 5 and 10", p50, p99)
	}
	if m := medianOf([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4 1 3 2 = %v", m)
	}
	a := []sample{{round: 1, calls: 300, seconds: 1}, {round: 2, calls: 200, seconds: 1}, {round: 3, calls: 900, seconds: 1}}
	b := []sample{{round: 1, calls: 100, seconds: 1}, {round: 2, calls: 100, seconds: 1}}
	if got := ratio(a, b, sample.callsPerSec); got != "2.50 (2.00-3.00)" {
		t.Errorf("ratio %q, want 2.50 (2.00-3.00): round 3 has no B", got)
	}
}
