package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// serveEnv makes the test binary, started again by run as a server binary,
// serve instead of running the tests.
const serveEnv = "WHOLESERVER_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := dispatch(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString("wholeserver (test server): " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestServersAnswer calls each tool of each implementation in each mode
// through measureCell, in process, which checks the first answer in full
// and the others for errors, and checks the cost it reports.
func TestServersAnswer(t *testing.T) {
	for _, impl := range impls {
		h, err := newHandler(impl)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		for _, m := range modes {
			for _, tool := range toolNames {
				t.Run(impl+"/"+m.name+"/"+tool, func(t *testing.T) {
					s, err := measureCell(t.Context(), hs.URL, m, tool, 3, 1)
					if err != nil {
						t.Fatal(err)
					}
					// In process, the client's allocations count too; the
					// server's own are at least a few per call.
					if s.calls != 3 || s.bytes <= 0 || s.objects < 1 || s.cpuNs < 0 || s.wallNs <= 0 {
						t.Errorf("sample %+v", s)
					}
				})
			}
		}
	}
}

// TestRun runs the whole measurement, with this test binary started again
// as the server processes, for two rounds of a few calls, and checks every
// sample line and the tables.
func TestRun(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no path to the test binary:", err)
	}
	t.Setenv(serveEnv, "1")
	raw := t.TempDir() + "/raw.txt"
	var stdout, stderr bytes.Buffer
	err = run(t.Context(), []string{"-rounds", "2", "-calls", "3", "-warmup", "1", "-raw", raw,
		"-server", "kit=mcpkit@" + exe, "-server", "mgv=mcp-go+validation@" + exe, "-ratio", "mgv/kit"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, stderr.String())
	}
	lines, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^BenchmarkWholeServer/([a-z0-9-]+)/([a-z0-9]+)/(kit|mgv) \t3\t\d+ ns/op\t\d+ cpu-ns/op\t(\d+) B/op\t(\d+) allocs/op\t[0-9.]+ gc/kcall\t\d+ floor-cpu-ns/op\t(\d+) floor-B/op\t\d+ floor-allocs/op$`)
	count := map[string]int{}
	for l := range strings.Lines(string(lines)) {
		m := line.FindStringSubmatch(strings.TrimSuffix(l, "\n"))
		if m == nil {
			t.Errorf("sample line %q", l)
			continue
		}
		for i, what := range map[int]string{4: "over HTTP", 6: "at the floor"} {
			if b, _ := strconv.Atoi(m[i]); b < 1000 {
				t.Errorf("%s: %s bytes per call in the server %s, want more than 1000", l, m[i], what)
			}
		}
		count[m[1]+"/"+m[2]+"/"+m[3]]++
	}
	if len(count) != len(modes)*len(toolNames)*2 {
		t.Errorf("%d cells, want %d: %v", len(count), len(modes)*len(toolNames)*2, count)
	}
	for cell, n := range count {
		if n != 2 {
			t.Errorf("%s: %d samples, want one per round", cell, n)
		}
	}
	out := stdout.String()
	for _, want := range []string{"| stateless-2026 | add | kit |", "| stateful-2025 | obj50 | mgv |", "| stateless-2025 | obj50 | mgv/kit |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestBadArguments checks that bad arguments are refused with an error
// that names them, clipped.
func TestBadArguments(t *testing.T) {
	long := strings.Repeat("x", 10000)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage"},
		{[]string{long}, "unknown command"},
		{[]string{"serve", "-server", long}, "unknown server"},
		{[]string{"run"}, "no -server"},
		{[]string{"run", "-server", "kit"}, "LABEL=IMPL@BINARY"},
		{[]string{"run", "-server", "kit=" + long + "@/bin/true"}, "unknown implementation"},
		{[]string{"run", "-server", "kit=mcpkit@/bin/true", "-modes", "stateful-2026"}, "unknown mode"},
		{[]string{"run", "-server", "kit=mcpkit@/bin/true", "-tools", "sub"}, "unknown tool"},
		{[]string{"run", "-server", "kit=mcpkit@/bin/true", "-ratio", "kit/other"}, `no server labelled "other"`},
		{[]string{"run", "-server", "kit=mcpkit@/bin/true", "-calls", "0"}, "at least 1"},
	} {
		var stderr bytes.Buffer
		err := dispatch(t.Context(), tc.args, strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60q: error %v, want one containing %q", tc.args, err, tc.want)
			continue
		}
		if len(err.Error()) > 512 {
			t.Errorf("%.60q: error of %d bytes", tc.args, len(err.Error()))
		}
	}
}

func TestMedianAndRatios(t *testing.T) {
	if got := median([]float64{5, 1, 3}); got != 3 {
		t.Errorf("median of 5 1 3 = %v", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median of 4 1 3 2 = %v", got)
	}
	a := []sample{{round: 1, cpuNs: 300}, {round: 2, cpuNs: 200}, {round: 3, cpuNs: 900}}
	b := []sample{{round: 1, cpuNs: 100}, {round: 2, cpuNs: 100}}
	lo, hi := perRound(a, b, func(s sample) float64 { return s.cpuNs })
	if lo != 2 || hi != 3 {
		t.Errorf("per-round ratios %v-%v, want 2-3 (round 3 has no B)", lo, hi)
	}
}

// TestFloorBadRequests checks /floor's answers to requests it cannot
// serve: short, and without the replay.
func TestFloorBadRequests(t *testing.T) {
	h, err := newHandler("mcpkit")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query string
		code  int
		want  string
	}{
		{"path=/other&n=1", 400, "path must name"},
		{"path=" + strings.Repeat("x", 5000) + "&n=1", 400, "path must name"},
		{"path=/stateless&n=0", 400, "n must be"},
		{"path=/stateless&n=" + strings.Repeat("9", 5000), 400, "n must be"},
		{"path=/stateless&n=1", 409, "no request recorded"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/floor?"+tc.query, nil))
		if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.want) || w.Body.Len() > 512 {
			t.Errorf("%.40s: HTTP %d %.200q, want %d with %q", tc.query, w.Code, w.Body.String(), tc.code, tc.want)
		}
	}
}
