package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// config is what run measures and how.
type config struct {
	rounds           int
	warmup, duration time.Duration
	vus              int
	think            time.Duration // each virtual user's pause after an iteration
	list             bool          // a tools/list session in each iteration
	modes            []mode
	servers          []string
	binary           string // runs "serve"
	redisServer      string
	apiDelay         time.Duration
	gomaxprocs       string
	memlimit         string
	cpus             string // taskset's CPU list; empty for no taskset
	raw              string
}

// run measures every server in every mode, round after round, servers in
// the same order in every round (A B C, A B C), printing each sample as it
// is taken and then the medians and ratios.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.rounds, "rounds", 3, "rounds; in each, every server is started, measured in one mode and stopped, for every mode")
	fs.DurationVar(&c.warmup, "warmup", 5*time.Second, "load before measuring, per sample")
	fs.DurationVar(&c.duration, "duration", 20*time.Second, "measured load, per sample")
	fs.IntVar(&c.vus, "vus", 50, "virtual users")
	fs.DurationVar(&c.think, "think", 50*time.Millisecond, "each virtual user's pause after an iteration (the published benchmark's)")
	fs.BoolVar(&c.list, "list", true, "end each iteration with a tools/list in a session of its own, as the published benchmark does")
	modeList := fs.String("modes", "session-2025,stateless-2025,stateless-2026", "the modes to measure")
	serverList := fs.String("servers", strings.Join(impls, ","), "the servers to measure, in this order")
	fs.StringVar(&c.binary, "binary", "", "the binary that serves (iobound serve); empty for this one")
	fs.StringVar(&c.redisServer, "redis-server", "redis-server", "the redis-server to start")
	fs.DurationVar(&c.apiDelay, "api-delay", 0, "a fixed delay before each answer of the HTTP API")
	fs.StringVar(&c.gomaxprocs, "gomaxprocs", "2", "GOMAXPROCS of the servers")
	fs.StringVar(&c.memlimit, "memlimit", "2GiB", "GOMEMLIMIT of the servers")
	fs.StringVar(&c.cpus, "cpus", "0-1", "the CPUs the servers may run on (taskset -c), if taskset is installed; empty for any")
	fs.StringVar(&c.raw, "raw", "", "append each sample, as a benchmark line, to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.rounds < 1 || c.vus < 1 || c.duration <= 0 || c.warmup < 0 {
		return errors.New("run: -rounds and -vus must be at least 1, -duration positive")
	}
	for name := range strings.SplitSeq(*modeList, ",") {
		m, ok := modeNamed(name)
		if !ok {
			return fmt.Errorf("run: unknown mode %q", clip(name))
		}
		c.modes = append(c.modes, m)
	}
	for name := range strings.SplitSeq(*serverList, ",") {
		if !slices.Contains(impls, name) {
			return fmt.Errorf("run: unknown server %q (want one of %s)", clip(name), strings.Join(impls, ", "))
		}
		c.servers = append(c.servers, name)
	}
	if c.binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		c.binary = exe
	}
	if c.cpus != "" {
		if _, err := exec.LookPath("taskset"); err != nil {
			fmt.Fprintln(stderr, "iobound: no taskset; the servers may run on any CPU")
			c.cpus = ""
		}
	}

	redisAddr, stopRedis, err := startRedis(ctx, c.redisServer)
	if err != nil {
		return err
	}
	defer stopRedis()
	apiURL, stopAPI, err := startAPI(c.apiDelay)
	if err != nil {
		return err
	}
	defer stopAPI()
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer rdb.Close()

	var raw io.Writer = io.Discard
	if c.raw != "" {
		f, err := os.OpenFile(c.raw, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		raw = f
	}
	fmt.Fprintf(stdout, "machine: %d CPUs (%s), %s, load average %s\n", runtime.NumCPU(), cpuModel(), runtime.Version(), loadAverage())
	fmt.Fprintf(stdout, "servers: GOMAXPROCS=%s GOMEMLIMIT=%s, CPUs %s; %d virtual users, %s warm-up, %s measured, pause %s, API delay %s\n",
		c.gomaxprocs, c.memlimit, cmpOr(c.cpus, "any"), c.vus, c.warmup, c.duration, c.think, c.apiDelay)

	cat := newCatalog()
	var samples []sample
	for round := 1; round <= c.rounds; round++ {
		for _, m := range c.modes {
			for _, impl := range c.servers {
				if err := seed(ctx, rdb); err != nil {
					return fmt.Errorf("seeding Redis: %w", err)
				}
				s, err := measure(ctx, c, impl, m, redisAddr, apiURL, cat)
				if err != nil {
					return fmt.Errorf("round %d, %s, %s: %w", round, m.name, impl, err)
				}
				s.round = round
				samples = append(samples, s)
				fmt.Fprintln(stdout, s.benchLine())
				fmt.Fprintln(raw, s.benchLine())
				if s.errors > 0 {
					fmt.Fprintf(stderr, "iobound: %s/%s: %d answers failed their checks; the first: %v\n", m.name, impl, s.errors, s.firstErr)
				}
			}
		}
	}
	fmt.Fprintf(stdout, "\nload average at the end: %s\n", loadAverage())
	summarize(stdout, c, samples)
	return nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// sample is one server's measurement in one mode and round.
type sample struct {
	round                   int
	mode, server            string
	seconds                 float64
	calls, requests, errors int
	firstErr                error
	p50, p99, sessionP50    time.Duration // of tools/call, and of a call's whole session
	cpuNs                   int64         // the server process's, over the measured time
	peakRSS                 int64         // bytes, over the process's life
	load1                   float64       // load average at the end
}

func (s sample) requestsPerSec() float64 { return float64(s.requests) / s.seconds }
func (s sample) callsPerSec() float64    { return float64(s.calls) / s.seconds }
func (s sample) cpuPerCall() float64     { return float64(s.cpuNs) / float64(max(s.calls, 1)) }

// benchLine returns s in the Go benchmark format.
func (s sample) benchLine() string {
	return fmt.Sprintf("BenchmarkIOBound/%s/%s \t%d\t%.0f req/s\t%.0f calls/s\t%.0f p50-us\t%.0f p99-us\t%.0f session-p50-us\t%.0f cpu-us/call\t%.1f peak-MB\t%d errors\t%.2f load1",
		s.mode, s.server, s.calls, s.requestsPerSec(), s.callsPerSec(), us(s.p50), us(s.p99), us(s.sessionP50),
		s.cpuPerCall()/1e3, float64(s.peakRSS)/(1<<20), s.errors, s.load1)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// measure starts server impl, puts the load on it in mode m for the warm-up
// and the measured time, and stops it.
func measure(ctx context.Context, c config, impl string, m mode, redisAddr, apiURL string, cat *catalog) (sample, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base, pid, stop, err := startServer(ctx, c, impl, redisAddr, apiURL)
	if err != nil {
		return sample{}, err
	}
	defer stop()

	var recording atomic.Bool
	client := newLoadClient(c.vus)
	defer client.CloseIdleConnections()
	users := make([]*vu, c.vus)
	var list []byte
	if c.list {
		list = listBody(m)
	}
	for i := range users {
		users[i] = &vu{client: client, url: base + m.path, mode: m, calls: vuCalls(i+1, cat, m), list: list, recording: &recording}
	}
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, u := range users {
		wg.Go(func() {
			for load.Err() == nil {
				u.iteration(load)
				t := time.NewTimer(c.think)
				select {
				case <-t.C:
				case <-load.Done():
					t.Stop()
				}
			}
		})
	}
	sleep(ctx, c.warmup)
	cpu0, err := processCPU(pid)
	if err != nil {
		stopLoad()
		wg.Wait()
		return sample{}, err
	}
	recording.Store(true)
	start := time.Now()
	sleep(ctx, c.duration)
	recording.Store(false)
	elapsed := time.Since(start)
	cpu1, err1 := processCPU(pid)
	rss, err2 := peakRSS(pid)
	stopLoad()
	wg.Wait()
	if err := errors.Join(ctx.Err(), err1, err2); err != nil {
		return sample{}, err
	}

	s := sample{mode: m.name, server: impl, seconds: elapsed.Seconds(), cpuNs: cpu1 - cpu0, peakRSS: rss, load1: load1()}
	var calls, sessions []time.Duration
	for _, u := range users {
		s.calls += u.toolCalls
		s.requests += u.requests
		s.errors += u.errors
		if s.firstErr == nil {
			s.firstErr = u.firstErr
		}
		calls = append(calls, u.callLatency...)
		sessions = append(sessions, u.sessionLatency...)
	}
	if s.calls == 0 {
		return s, fmt.Errorf("no call completed in %s (%d errors, first: %v)", c.duration, s.errors, s.firstErr)
	}
	s.p50, s.p99 = percentile(calls, 0.50), percentile(calls, 0.99)
	s.sessionP50 = percentile(sessions, 0.50)
	return s, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// percentile returns the p-quantile of ds (nearest rank), sorting ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(p*float64(len(ds))+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

// startServer starts `binary serve` for impl with the servers' limits, and
// returns its base URL, its process ID and how to stop it.
func startServer(ctx context.Context, c config, impl, redisAddr, apiURL string) (string, int, func(), error) {
	argv := []string{c.binary, "serve", "-server", impl, "-redis", redisAddr, "-api", apiURL}
	if c.cpus != "" {
		// taskset executes the server in its own process: the PID stays.
		argv = append([]string{"taskset", "-c", c.cpus}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+c.gomaxprocs, "GOMEMLIMIT="+c.memlimit)
	var errBuf limitedBuffer
	cmd.Stderr = &errBuf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", 0, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop := func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	base, err := readListening(bufio.NewReader(out))
	if err != nil {
		stop()
		return "", 0, nil, fmt.Errorf("%s: %w; stderr: %s", impl, err, errBuf.String())
	}
	go io.Copy(io.Discard, out)
	return base, cmd.Process.Pid, stop, nil
}

// limitedBuffer keeps the first 4 KiB written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := 4096 - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startRedis starts redis-server on a free loopback port, without
// persistence, and returns its address and how to stop it.
func startRedis(ctx context.Context, path string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", os.TempDir())
	var errBuf limitedBuffer
	cmd.Stdout, cmd.Stderr = &errBuf, &errBuf
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if rdb.Ping(ctx).Err() == nil {
			return addr, stop, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			stop()
			return "", nil, fmt.Errorf("redis-server did not answer on %s: %s", addr, clip(errBuf.String()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startAPI serves the HTTP API on a free loopback port.
func startAPI(delay time.Duration) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: apiHandler(delay), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String(), func() { hs.Close() }, nil
}

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// processCPU returns the user and system CPU time process pid has used,
// every thread included, in nanoseconds.
func processCPU(pid int) (int64, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces; fields follow it.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("/proc stat: too few fields")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (utime + stime) * int64(clockTick), nil
}

// peakRSS returns the most memory process pid has held resident (VmHWM).
func peakRSS(pid int) (int64, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("/proc status: no VmHWM")
}

// loadAverage returns the machine's load averages over 1, 5 and 15 minutes.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func load1() float64 {
	v, _ := strconv.ParseFloat(strings.Fields(loadAverage() + " 0")[0], 64)
	return v
}

// cpuModel returns the CPU's model name from /proc/cpuinfo.
func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(raw)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
