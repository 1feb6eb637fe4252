package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// demo is run.sh started by a test, with what it printed.
type demo struct {
	cmd      *exec.Cmd
	exited   chan error
	stderr   lockedBuffer
	lb       int
	replicas map[string]int // name -> pid
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startRun starts run.sh on free ports with the extra environment env and,
// unless it exits first, waits until it serves. The test's cleanup stops it.
func startRun(t *testing.T, env ...string) (*demo, error) {
	t.Helper()
	ports := freePorts(t, 5)
	r := &demo{exited: make(chan error, 1), lb: ports[0], replicas: map[string]int{}}
	r.cmd = exec.Command("bash", "run.sh")
	r.cmd.Env = append(append(os.Environ(),
		"LB_PORT="+strconv.Itoa(ports[0]),
		fmt.Sprintf("REPLICA_PORTS=%d %d %d", ports[1], ports[2], ports[3]),
		"REDIS_PORT="+strconv.Itoa(ports[4]),
	), env...)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r.cmd.Stderr = &r.stderr
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		served := false
		for sc.Scan() {
			var name string
			var pid, port int
			if n, _ := fmt.Sscanf(sc.Text(), "scaleout: replica %s pid %d port %d", &name, &pid, &port); n == 3 {
				r.replicas[name] = pid
			}
			if strings.HasPrefix(sc.Text(), "scaleout: serving MCP") {
				served = true
				ready <- nil
			}
		}
		if !served {
			ready <- errors.New("exited before serving")
		}
		r.exited <- r.cmd.Wait()
	}()
	t.Cleanup(func() {
		r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
			t.Error("run.sh did not stop within 30s of SIGTERM")
		}
	})
	select {
	case err := <-ready:
		return r, err
	case <-time.After(3 * time.Minute):
		return r, errors.New("not serving after 3 minutes")
	}
}

// wait returns run.sh's exit code, waiting at most limit.
func (r *demo) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case err := <-r.exited:
		r.exited <- err // for the cleanup
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		t.Fatalf("run.sh still running after %v; stderr:\n%s", limit, r.stderr.String())
		return -1
	}
}

// A port in use stops run.sh before it starts anything, with a message
// that names the port, and a non-zero exit.
func TestRunRefusesBusyPort(t *testing.T) {
	need(t, "redis-server", "nginx", "bash")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	cmd := exec.Command("bash", "run.sh")
	cmd.Env = append(os.Environ(), "LB_PORT="+strconv.Itoa(port))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("run.sh on a busy port: %v, want exit status 1; output:\n%s", err, out)
	}
	if want := fmt.Sprintf("run.sh: port %d is in use by another process", port); !strings.Contains(string(out), want) {
		t.Errorf("output %q does not say %q", out, want)
	}
	if strings.Contains(string(out), "serving") {
		t.Errorf("run.sh said it serves: %s", out)
	}
}

// By default a replica that dies stops the demonstration with a non-zero
// exit, and the logs are kept, each named after its process.
func TestRunFailsWhenAReplicaDies(t *testing.T) {
	need(t, "redis-server", "nginx", "bash")
	logs := t.TempDir()
	r, err := startRun(t, "LOG_DIR="+logs)
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, r.stderr.String())
	}
	if err := syscall.Kill(r.replicas["r2"], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(t, time.Minute); code != 1 {
		t.Errorf("exit status %d after a replica died, want 1; stderr:\n%s", code, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "the logs are kept in "+logs) {
		t.Errorf("stderr does not say where the logs are:\n%s", r.stderr.String())
	}
	for _, name := range []string{"redis.log", "r1.log", "r2.log", "r3.log", "nginx.log"} {
		if _, err := os.Stat(filepath.Join(logs, name)); err != nil {
			t.Errorf("log not kept: %v", err)
		}
	}
}

// With KEEP_SERVING=1, nginx fails over when a replica dies: every call
// through it is still answered, by the two others, and run.sh says which
// replica died, then stops cleanly when asked.
func TestRunKeepsServing(t *testing.T) {
	need(t, "redis-server", "nginx", "bash")
	r, err := startRun(t, "KEEP_SERVING=1")
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, r.stderr.String())
	}
	pid := r.replicas["r1"]
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, fmt.Sprintf("http://127.0.0.1:%d/mcp", r.lb))
	servedBy := map[string]bool{}
	for i := range 6 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow_lookup", Arguments: map[string]any{"city": "city-" + strconv.Itoa(i)}})
		if err != nil || res.IsError {
			t.Fatalf("call %d after r1 died: %v %+v", i, err, res)
		}
		servedBy[fmt.Sprint(res.Meta[MetaKeyServedBy])] = true
	}
	if servedBy["r1"] || len(servedBy) != 2 {
		t.Errorf("calls served by %v, want r2 and r3 only", servedBy)
	}
	want := fmt.Sprintf("scaleout: replica r1 (pid %d) exited; serving through the others", pid)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(r.stderr.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("run.sh did not report r1's death; stderr:\n%s", r.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(t, 30*time.Second); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0; stderr:\n%s", code, r.stderr.String())
	}
}
