package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRollingRestart runs rolling-restart.sh: three replicas behind nginx
// are restarted one by one, each drained first, while clients of both
// protocol eras call through nginx and others create tasks and follow them.
// No call may fail and no task may be lost: a draining replica's new
// requests are passed by nginx to another (503), its calls in flight
// finish, and its tasks are taken up by another replica through Redis.
func TestRollingRestart(t *testing.T) {
	need(t, "redis-server", "nginx", "bash")
	ports := freePorts(t, 5)
	cmd := exec.Command("bash", "rolling-restart.sh")
	cmd.Env = append(os.Environ(),
		"LB_PORT="+strconv.Itoa(ports[0]),
		fmt.Sprintf("REPLICA_PORTS=%d %d %d", ports[1], ports[2], ports[3]),
		"REDIS_PORT="+strconv.Itoa(ports[4]),
	)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("rolling-restart.sh:\n%s%s", stderr.String(), out)
	m := regexp.MustCompile(`callers: calls=(\d+) failed=(\d+) tasks=(\d+) completed=(\d+) lost=(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no report from rolling-restart.sh (%v)", err)
	}
	n := func(i int) int { v, _ := strconv.Atoi(string(m[i])); return v }
	calls, failed, tasks, completed, lost := n(1), n(2), n(3), n(4), n(5)
	if failed != 0 || lost != 0 {
		t.Errorf("%d of %d calls failed, %d of %d tasks lost", failed, calls, lost, tasks)
	}
	if calls == 0 || tasks == 0 || completed != tasks {
		t.Errorf("calls=%d tasks=%d completed=%d: the clients did not run", calls, tasks, completed)
	}
	if err != nil {
		t.Errorf("rolling-restart.sh: %v", err)
	}
	if !strings.Contains(stderr.String(), "scaleout: replica r3 restarted") {
		t.Errorf("the replicas were not all restarted")
	}
}
