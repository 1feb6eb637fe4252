package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mode is a way a client talks to a server: the endpoint it uses and the
// protocol version it asks for.
type mode struct {
	name    string
	path    string
	version string
	session bool // whether the server gives the client a session
}

var modes = []mode{
	{"stateless-2026", "/stateless", "2026-07-28", false},
	{"stateless-2025", "/stateless", "2025-11-25", false},
	{"stateful-2025", "/stateful", "2025-11-25", true},
}

// serverSpec is a server to measure: a label for the tables, the
// implementation serve runs, and the binary that runs it.
type serverSpec struct {
	label, impl, binary string
}

func parseServerSpec(s string) (serverSpec, error) {
	label, rest, ok1 := strings.Cut(s, "=")
	impl, binary, ok2 := strings.Cut(rest, "@")
	if !ok1 || !ok2 || label == "" || impl == "" || binary == "" {
		return serverSpec{}, fmt.Errorf("server %q: want LABEL=IMPL@BINARY", clip(s))
	}
	if !slices.Contains(impls, impl) {
		return serverSpec{}, fmt.Errorf("server %q: unknown implementation %q (want one of %s)", clip(s), clip(impl), strings.Join(impls, ", "))
	}
	return serverSpec{label, impl, binary}, nil
}

// sample is what one server process spent on the calls of one cell
// (mode, tool) in one round, per call.
type sample struct {
	round            int
	mode, tool       string
	server           string
	calls            int
	cpuNs, wallNs    float64
	bytes, objects   float64
	gcCyclesPerKCall float64
	// The handler's floor: the last call replayed calls times in the
	// server process, without the network (serveFloor).
	floorCPUNs, floorBytes, floorObjects float64
}

// benchLine returns s in the Go benchmark format, so that benchstat can
// compare two files of them.
func (s sample) benchLine() string {
	return fmt.Sprintf("BenchmarkWholeServer/%s/%s/%s \t%d\t%.0f ns/op\t%.0f cpu-ns/op\t%.0f B/op\t%.0f allocs/op\t%.2f gc/kcall\t%.0f floor-cpu-ns/op\t%.0f floor-B/op\t%.0f floor-allocs/op",
		s.mode, s.tool, s.server, s.calls, s.wallNs, s.cpuNs, s.bytes, s.objects, s.gcCyclesPerKCall, s.floorCPUNs, s.floorBytes, s.floorObjects)
}

// flagSet is a command's flags; parse prints their usage for -h only, and
// returns errors clipped, since the flag package's quote the whole value.
type flagSet struct {
	*flag.FlagSet
	stderr io.Writer
}

func newFlagSet(name string, stderr io.Writer) flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return flagSet{fs, stderr}
}

func (fs flagSet) parse(args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(fs.stderr)
		fmt.Fprintf(fs.stderr, "Usage of wholeserver %s:\n", fs.Name())
		fs.PrintDefaults()
		return err
	}
	if err != nil {
		return errors.New(clipLong(err.Error()))
	}
	return nil
}

// run measures every server given, round after round; each round starts
// with the next server, so that none is always measured first. It prints
// each sample as a benchmark line as it is taken (also to -raw), then the
// medians and the ratios asked for.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stderr)
	var specs []serverSpec
	fs.Func("server", "a server to measure, `LABEL=IMPL@BINARY` (repeat the flag; IMPL is mcpkit, mcp-go or mcp-go+validation)", func(s string) error {
		spec, err := parseServerSpec(s)
		if err != nil {
			return err
		}
		specs = append(specs, spec)
		return nil
	})
	var ratios [][2]string
	fs.Func("ratio", "print `A/B`, server A's cost over server B's, per cell (repeat the flag)", func(s string) error {
		a, b, ok := strings.Cut(s, "/")
		if !ok || a == "" || b == "" {
			return fmt.Errorf("ratio %q: want A/B", clip(s))
		}
		ratios = append(ratios, [2]string{a, b})
		return nil
	})
	rounds := fs.Int("rounds", 5, "rounds: in each, every server process is started, measured and stopped")
	calls := fs.Int("calls", 2000, "calls measured per server, mode and tool in each round")
	warmup := fs.Int("warmup", 200, "calls before measuring, per server, mode and tool")
	modeList := fs.String("modes", "stateless-2026,stateless-2025,stateful-2025", "the modes to measure")
	toolList := fs.String("tools", "add,obj50", "the tools to call")
	raw := fs.String("raw", "", "append each sample, as a benchmark line, to this file")
	if err := fs.parse(args); err != nil {
		return err
	}
	if len(specs) == 0 {
		return errors.New("no -server given")
	}
	if *rounds < 1 || *calls < 1 || *warmup < 0 {
		return errors.New("-rounds and -calls must be at least 1, -warmup at least 0")
	}
	var ms []mode
	for name := range strings.SplitSeq(*modeList, ",") {
		i := slices.IndexFunc(modes, func(m mode) bool { return m.name == name })
		if i < 0 {
			return fmt.Errorf("unknown mode %q", clip(name))
		}
		ms = append(ms, modes[i])
	}
	ts := strings.Split(*toolList, ",")
	for _, t := range ts {
		if !slices.Contains(toolNames, t) {
			return fmt.Errorf("unknown tool %q", clip(t))
		}
	}
	for _, r := range ratios {
		for _, label := range r {
			if !slices.ContainsFunc(specs, func(s serverSpec) bool { return s.label == label }) {
				return fmt.Errorf("ratio %s/%s: no server labelled %q", clip(r[0]), clip(r[1]), clip(label))
			}
		}
	}
	out := stdout
	if *raw != "" {
		f, err := os.OpenFile(*raw, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		out = io.MultiWriter(stdout, f)
	}

	var samples []sample
	for round := 1; round <= *rounds; round++ {
		for i := range specs {
			spec := specs[(i+round-1)%len(specs)]
			got, err := measureServer(ctx, spec, ms, ts, round, *calls, *warmup, stderr)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, spec.label, err)
			}
			for _, s := range got {
				fmt.Fprintln(out, s.benchLine())
			}
			samples = append(samples, got...)
		}
	}
	var labels []string
	for _, s := range specs {
		labels = append(labels, s.label)
	}
	fmt.Fprintln(stdout)
	printSummary(stdout, samples, ms, ts, labels, ratios)
	return nil
}

// measureServer starts spec's binary, measures every mode and tool against
// it, and stops it.
func measureServer(ctx context.Context, spec serverSpec, ms []mode, ts []string, round, calls, warmup int, stderr io.Writer) ([]sample, error) {
	cmd := exec.CommandContext(ctx, spec.binary, "serve", "-server", spec.impl)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		stdin.Close() // serve returns when its input ends
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			return <-done
		}
	}
	defer stop()
	base, err := readListening(bufio.NewReader(stdout))
	if err != nil {
		return nil, err
	}
	go io.Copy(io.Discard, stdout)

	var got []sample
	for _, m := range ms {
		for _, tool := range ts {
			s, err := measureCell(ctx, base, m, tool, calls, warmup)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", m.name, tool, err)
			}
			s.round, s.server = round, spec.label
			got = append(got, s)
		}
	}
	if err := stop(); err != nil {
		return nil, fmt.Errorf("the server exited: %w", err)
	}
	return got, nil
}

// measureCell connects a go-sdk client to the server at base in mode m,
// calls tool warmup times, then calls times, and returns what the server
// process spent on the latter, per call. Every answer is checked: the
// first in full, the others for an error. Then it has one more call
// recorded and replayed calls times in the server process, for the
// handler's floor.
func measureCell(ctx context.Context, base string, m mode, tool string, calls, warmup int) (sample, error) {
	want, err := wantResult(tool)
	if err != nil {
		return sample{}, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "wholeserver", Version: "0.1.0"}, nil)
	marker := &marking{base: http.DefaultTransport}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + m.path, MaxRetries: -1, HTTPClient: &http.Client{Transport: marker}},
		&mcp.ClientSessionOptions{ProtocolVersion: m.version})
	if err != nil {
		return sample{}, err
	}
	defer cs.Close()
	if hasSession := cs.ID() != ""; hasSession != m.session {
		return sample{}, fmt.Errorf("session %q, want one: %t", cs.ID(), m.session)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != m.version {
		return sample{}, fmt.Errorf("protocol version %s, want %s", got, m.version)
	}
	params := &mcp.CallToolParams{Name: tool, Arguments: toolArgs[tool]}
	call := func(check bool) error {
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			return err
		}
		if res.IsError || res.StructuredContent == nil {
			return fmt.Errorf("not a result: %+v", res)
		}
		if !check {
			return nil
		}
		got, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return err
		}
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			return err
		}
		if err := json.Unmarshal(want, &b); err != nil {
			return err
		}
		if !jsonEqual(a, b) {
			return fmt.Errorf("structured result %.300s, want %.300s", got, want)
		}
		return nil
	}
	if err := call(true); err != nil {
		return sample{}, err
	}
	for range warmup {
		if err := call(false); err != nil {
			return sample{}, err
		}
	}
	c0, err := fetchCost(ctx, base)
	if err != nil {
		return sample{}, err
	}
	t0 := time.Now()
	for range calls {
		if err := call(false); err != nil {
			return sample{}, err
		}
	}
	wall := time.Since(t0)
	c1, err := fetchCost(ctx, base)
	if err != nil {
		return sample{}, err
	}
	marker.next.Store(true)
	if err := call(true); err != nil {
		return sample{}, err
	}
	floor, err := fetchFloor(ctx, base, m.path, calls)
	if err != nil {
		return sample{}, err
	}
	n := float64(calls)
	return sample{
		floorCPUNs:       float64(floor.CPUNanos) / n,
		floorBytes:       float64(floor.AllocBytes) / n,
		floorObjects:     float64(floor.AllocObjects) / n,
		mode:             m.name,
		tool:             tool,
		calls:            calls,
		cpuNs:            float64(c1.CPUNanos-c0.CPUNanos) / n,
		wallNs:           float64(wall.Nanoseconds()) / n,
		bytes:            float64(c1.AllocBytes-c0.AllocBytes) / n,
		objects:          float64(c1.AllocObjects-c0.AllocObjects) / n,
		gcCyclesPerKCall: float64(c1.GCCycles-c0.GCCycles) * 1000 / n,
	}, nil
}

// jsonEqual reports whether two decoded JSON values are equal.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// marking is an HTTP transport that marks the next POST, once asked to,
// with recordHeader.
type marking struct {
	base http.RoundTripper
	next atomic.Bool
}

func (m *marking) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && m.next.CompareAndSwap(true, false) {
		req = req.Clone(req.Context())
		req.Header.Set(recordHeader, "1")
	}
	return m.base.RoundTrip(req)
}

// fetchCost asks the server at base what it has spent so far.
func fetchCost(ctx context.Context, base string) (cost, error) {
	var c cost
	err := getJSON(ctx, base+"/cost", &c)
	return c, err
}

// fetchFloor has the server at base replay the request recorded on its
// endpoint path n times, and returns what that cost.
func fetchFloor(ctx context.Context, base, path string, n int) (cost, error) {
	var f floorCost
	if err := getJSON(ctx, base+"/floor?path="+url.QueryEscape(path)+"&n="+strconv.Itoa(n), &f); err != nil {
		return cost{}, err
	}
	if f.Calls != n {
		return cost{}, fmt.Errorf("/floor replayed %d calls, want %d", f.Calls, n)
	}
	return f.Cost, nil
}

// getJSON GETs u and decodes its JSON answer into v.
func getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %.300s", clip(u), resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w", clip(u), err)
	}
	return nil
}
