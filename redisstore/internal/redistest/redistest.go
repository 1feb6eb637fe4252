package redistest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startTimeout bounds the wait for a new redis-server to answer PING.
const startTimeout = 10 * time.Second

// A Server is a Redis for tests: a redis-server process of the test's own,
// or the external server named by MCPKIT_REDIS_ADDR.
type Server struct {
	// Addr is the server's host:port.
	Addr string

	external bool
	port     int
	dir      string

	mu     sync.Mutex
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{} // closed when cmd has exited
}

// lockedBuffer collects a process's output, which os/exec copies from
// another goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Start returns a Redis for t alone (or the external one), stopped when t
// ends. It skips or fails t when there is no redis-server (see the package
// documentation).
func Start(t testing.TB) *Server {
	t.Helper()
	if addr := os.Getenv("MCPKIT_REDIS_ADDR"); addr != "" {
		return &Server{Addr: addr, external: true}
	}
	bin := lookPath(t)
	s, err := start(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.kill)
	return s
}

var shared struct {
	mu  sync.Mutex
	s   *Server
	dir string
}

// Shared returns the test binary's shared Redis, starting it on first use
// (or the external one). [Main] stops it. It skips or fails t when there is
// no redis-server.
func Shared(t testing.TB) *Server {
	t.Helper()
	if addr := os.Getenv("MCPKIT_REDIS_ADDR"); addr != "" {
		return &Server{Addr: addr, external: true}
	}
	bin := lookPath(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.s == nil {
		dir, err := os.MkdirTemp("", "redistest")
		if err != nil {
			t.Fatal(err)
		}
		s, err := start(bin, dir)
		if err != nil {
			os.RemoveAll(dir)
			t.Fatal(err)
		}
		shared.s, shared.dir = s, dir
	}
	return shared.s
}

// Main runs the tests and stops the shared server, if one was started.
// Call it from TestMain: os.Exit(redistest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.s != nil {
		shared.s.kill()
		os.RemoveAll(shared.dir)
		shared.s = nil
	}
	return code
}

// lookPath returns the path of redis-server, or ends t.
func lookPath(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err == nil {
		return bin
	}
	if os.Getenv("CI") == "true" || os.Getenv("MCPKIT_REQUIRE_REDIS") == "1" {
		t.Fatalf("redis-server is required (CI=true or MCPKIT_REQUIRE_REDIS=1) but not installed: %v", err)
	}
	t.Skipf("redis-server not installed (%v): skipping; install it (apt-get install redis-server) or set MCPKIT_REDIS_ADDR", err)
	return ""
}

// start starts redis-server on a free loopback port, trying another port if
// the one picked was taken in between.
func start(bin, dir string) (*Server, error) {
	var err error
	for range 3 {
		var port int
		port, err = freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), port: port, dir: dir}
		if err = s.run(bin); err == nil {
			return s, nil
		}
	}
	return nil, err
}

// freePort returns a loopback port that nothing listens on, below the
// kernel's range of ephemeral ports: the port of a server that a test stops
// and restarts must not become, in between, the local end of some client's
// connection, which would keep the server from binding it again.
func freePort() (int, error) {
	lo, hi := 10000, 32767
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if first, err := strconv.Atoi(f[0]); err == nil && first-1 > lo {
				hi = first - 1
			}
		}
	}
	var err error
	for range 100 {
		port := lo + mathrand.IntN(hi-lo+1)
		var l net.Listener
		l, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("redistest: finding a free port: %w", err)
}

// run starts the process on s.port and waits until it answers PING.
func (s *Server) run(bin string) error {
	out := new(lockedBuffer)
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir)
	cmd.Stdout, cmd.Stderr = out, out
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: starting redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		select {
		case <-exited:
			return fmt.Errorf("redistest: redis-server exited before answering PING on %s; its output:\n%s", s.Addr, out)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("redistest: redis-server did not answer PING on %s within %v (%v); its output:\n%s", s.Addr, startTimeout, err, out)
		}
	}
	s.mu.Lock()
	s.cmd, s.out, s.exited = cmd, out, exited
	s.mu.Unlock()
	return nil
}

// Stop kills the server, as a crash would, and waits until it has exited.
// It skips t for an external server.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.external {
		t.Skip("redistest: cannot stop the external server MCPKIT_REDIS_ADDR")
	}
	s.kill()
}

func (s *Server) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Restart starts the server again, on the same port, after [Server.Stop].
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if s.external {
		t.Skip("redistest: cannot restart the external server MCPKIT_REDIS_ADDR")
	}
	bin := lookPath(t)
	var err error
	// The old process's port may take a moment to be free again.
	for range 50 {
		if err = s.run(bin); err == nil || !strings.Contains(err.Error(), "in use") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Output returns what the server process wrote so far.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out == nil {
		return ""
	}
	return s.out.String()
}

// Client returns a client of s, closed when t ends. It does not retry
// failed commands, so that tests of failures are quick.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	return c
}

// Prefix returns a key prefix for t alone: tests that share a server keep
// apart by it. On an external server, the keys under it are deleted when t
// ends.
func (s *Server) Prefix(t testing.TB) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	p := "mcpkittest:" + strings.ReplaceAll(t.Name(), "/", ".") + ":" + hex.EncodeToString(b[:]) + ":"
	if s.external {
		t.Cleanup(func() { s.deleteKeys(p) })
	}
	return p
}

func (s *Server) deleteKeys(prefix string) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}
