// Command callers keeps calling the scaleout replicas through their load
// balancer until it is interrupted, then reports what it saw: the calls
// made and those that failed, the tasks created and those lost.
// rolling-restart.sh runs it while it restarts the replicas.
//
//	go run ./callers -url http://127.0.0.1:8090/mcp -callers 6
//
// Half the callers speak protocol 2026-07-28, half 2025-11-25, both through
// the go-sdk client; they call the work tool, which takes a while, so that
// a restart finds calls in flight. Every task caller creates build_report
// tasks (tasks extension, 2026-07-28) and polls each until it ends. No
// call is retried: a failed call is one the deployment failed.
//
// On SIGINT or SIGTERM it stops starting calls, lets those in flight and
// the tasks it watches end (within -finish), prints one line,
//
//	callers: calls=412 failed=0 tasks=38 completed=38 lost=0
//
// and exits 1 if a call failed or a task was lost.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8090/mcp", "the load balancer's MCP endpoint")
	callers := flag.Int("callers", 6, "clients calling the work tool at once")
	taskCallers := flag.Int("task-callers", 2, "clients creating build_report tasks at once")
	millis := flag.Int("millis", 150, "how long each work call takes on the server")
	taskMillis := flag.Int("task-millis", 1500, "how long each task takes on the server")
	finish := flag.Duration("finish", time.Minute, "how long calls and tasks may take to end once interrupted")
	flag.Parse()

	stop, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	// Calls in flight when the interruption comes go on, within finish.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()

	var st stats
	var wg sync.WaitGroup
	for i := range *callers {
		version := "2026-07-28"
		if i%2 == 1 {
			version = "2025-11-25"
		}
		wg.Go(func() { callLoop(stop, base, *url, version, *millis, &st) })
	}
	for range *taskCallers {
		wg.Go(func() { taskLoop(stop, base, *url, *taskMillis, &st) })
	}
	<-stop.Done()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(*finish):
		cancelBase()
		<-done
	}
	fmt.Printf("callers: calls=%d failed=%d tasks=%d completed=%d lost=%d\n",
		st.calls.Load(), st.failed.Load(), st.tasks.Load(), st.completed.Load(), st.lost.Load())
	if st.failed.Load() > 0 || st.lost.Load() > 0 {
		os.Exit(1)
	}
}

// stats are what the callers saw.
type stats struct {
	calls, failed, tasks, completed, lost atomic.Int64
	reported                              atomic.Int64 // failures written to stderr
}

// fail counts a failure and reports the first few.
func (s *stats) fail(counter *atomic.Int64, format string, a ...any) {
	counter.Add(1)
	if s.reported.Add(1) <= 10 {
		fmt.Fprintf(os.Stderr, "callers: "+format+"\n", a...)
	}
}

// callLoop calls the work tool through one client of version until stop
// ends; each call runs on base.
func callLoop(stop, base context.Context, url, version string, millis int, st *stats) {
	client := mcp.NewClient(&mcp.Implementation{Name: "callers", Version: "1"}, nil)
	cs, err := client.Connect(base, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		st.fail(&st.failed, "connect (%s): %v", version, err)
		return
	}
	defer cs.Close()
	for stop.Err() == nil {
		st.calls.Add(1)
		res, err := cs.CallTool(base, &mcp.CallToolParams{Name: "work", Arguments: map[string]any{"millis": millis}})
		switch {
		case err != nil:
			st.fail(&st.failed, "work (%s): %v", version, err)
		case res.IsError:
			st.fail(&st.failed, "work (%s): error result %v", version, res.Content)
		}
	}
}

// taskLoop creates build_report tasks one after the other until stop ends,
// and follows each to its end.
func taskLoop(stop, base context.Context, url string, millis int, st *stats) {
	for stop.Err() == nil {
		st.calls.Add(1)
		var created struct {
			ResultType string `json:"resultType"`
			TaskID     string `json:"taskId"`
		}
		if err := rpc(base, url, "tools/call", map[string]any{"name": "build_report", "arguments": map[string]any{"millis": millis}}, &created); err != nil {
			st.fail(&st.failed, "build_report: %v", err)
			continue
		}
		if created.ResultType != "task" || created.TaskID == "" {
			st.fail(&st.failed, "build_report: not a task: %+v", created)
			continue
		}
		st.tasks.Add(1)
		follow(base, url, created.TaskID, st)
	}
}

// follow polls the task until it ends: completed without isError is a
// task done; anything else, an error of tasks/get included, a task lost.
func follow(ctx context.Context, url, id string, st *stats) {
	for {
		var task struct {
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		st.calls.Add(1)
		if err := rpc(ctx, url, "tasks/get", map[string]any{"taskId": id}, &task); err != nil {
			st.fail(&st.failed, "tasks/get %s: %v", id, err)
			if ctx.Err() != nil {
				st.fail(&st.lost, "task %s: still running when the callers stopped", id)
				return
			}
		}
		switch task.Status {
		case "completed":
			var res mcp.CallToolResult
			if json.Unmarshal(task.Result, &res) != nil || res.IsError {
				st.fail(&st.lost, "task %s: completed with %s", id, task.Result)
				return
			}
			st.completed.Add(1)
			return
		case "failed", "cancelled":
			st.fail(&st.lost, "task %s: %s %s", id, task.Status, task.Error)
			return
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

// rpc sends one 2026-07-28 request that declares the tasks extension, as a
// client of the extension does (the go-sdk client cannot read a
// CreateTaskResult), and decodes its result into out.
func rpc(ctx context.Context, url, method string, params map[string]any, out any) error {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "callers", "version": "1"},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	} else if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %s: %.200s", resp.Status, b)
	}
	// The answer is JSON, or an event stream whose last data line holds it.
	if i := bytes.LastIndex(b, []byte("data: ")); i >= 0 {
		b = bytes.TrimSpace(b[i+len("data: "):])
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		return fmt.Errorf("reading the answer: %v: %.200s", err, b)
	}
	if msg.Error != nil {
		return fmt.Errorf("JSON-RPC error %d: %s", msg.Error.Code, msg.Error.Message)
	}
	if msg.Result == nil {
		return errors.New("no result")
	}
	return json.Unmarshal(msg.Result, out)
}
