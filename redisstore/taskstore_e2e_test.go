package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
	"github.com/mcpkit/mcpkit/tasks"
)

// taskLease is the replicas' lease: short, so that a lost replica's task
// fails quickly, and long enough for a renewal (every third of it) to
// reach a loaded machine's Redis in time.
const taskLease = 300 * time.Millisecond

// taskReplica is one replica of a server whose tool "slow" runs as a task,
// with its own manager and Redis client, on a store shared through Redis.
type taskReplica struct {
	srv     *mcpkit.Server
	url     string
	client  *redis.Client
	started chan struct{} // one value per start of slow here
	release chan struct{} // closed to let slow return here
	stopped chan error    // slow's context error when it was stopped here
}

func newTaskReplica(t *testing.T, s *redistest.Server, prefix string) *taskReplica {
	t.Helper()
	r := &taskReplica{client: s.Client(t), started: make(chan struct{}, 4), release: make(chan struct{}), stopped: make(chan error, 4)}
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "replica", Version: "1"},
		&mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(&tasks.Options{
		Store:        redisstore.NewTaskStore(r.client, &redisstore.TaskStoreOptions{Prefix: prefix}),
		Lease:        taskLease,
		PollInterval: 10 * time.Millisecond,
	})
	if err := m.Attach(srv); err != nil {
		t.Fatal(err)
	}
	slow := mcpkit.HandlerFunc(func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
		r.started <- struct{}{}
		select {
		case <-r.release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		case <-ctx.Done():
			r.stopped <- ctx.Err()
			return nil, ctx.Err()
		}
	})
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}}, Handler: slow}
	if err := srv.Add(tasks.Tool(tool, m, nil)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.HTTPHandler(&mcpkit.HTTPOptions{SDK: &mcp.StreamableHTTPOptions{JSONResponse: true}}))
	r.url, r.srv = ts.URL, srv
	t.Cleanup(func() {
		ts.Close()
		select {
		case <-r.release:
		default:
			close(r.release)
		}
		if err := m.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return r
}

// TestTasksAcrossReplicas runs two replicas on one Redis, as a load
// balancer would see them: what one replica runs, the other answers for.
func TestTasksAcrossReplicas(t *testing.T) {
	s := redistest.Shared(t)

	t.Run("PolledElsewhere", func(t *testing.T) {
		prefix := s.Prefix(t)
		a, b := newTaskReplica(t, s, prefix), newTaskReplica(t, s, prefix)
		alice := func(r *taskReplica) taskRPC { return taskRPC{url: r.url, token: "alice"} }
		id := alice(a).create(t, "slow")
		<-a.started
		if got := alice(b).mustCall(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
			t.Fatalf("tasks/get on B while A works: %v", got)
		}
		close(a.release)
		got := alice(b).wait(t, id)
		result, _ := got["result"].(map[string]any)
		content, _ := result["content"].([]any)
		if got["status"] != "completed" || len(content) != 1 || content[0].(map[string]any)["text"] != "done" {
			t.Errorf("tasks/get on B after A finished: %v", got)
		}
	})

	// A replica that drains hands its task over through Redis; a tasks/get
	// on the other takes it up and runs it to the end: no task is lost.
	t.Run("HandedOverOnDrain", func(t *testing.T) {
		prefix := s.Prefix(t)
		a, b := newTaskReplica(t, s, prefix), newTaskReplica(t, s, prefix)
		id := taskRPC{url: a.url, token: "alice"}.create(t, "slow")
		<-a.started
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a safety net only
		defer cancel()
		if err := a.srv.Drain(ctx); err != nil {
			t.Fatalf("Drain = %v", err)
		}
		if err := <-a.stopped; err != context.Canceled {
			t.Errorf("A's work stopped with %v", err)
		}
		onB := taskRPC{url: b.url, token: "alice"}
		if got := onB.mustCall(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
			t.Fatalf("tasks/get on B after A drained: %v", got)
		}
		<-b.started
		// Past A's lease: B renews the task it took up.
		time.Sleep(2 * taskLease)
		close(b.release)
		got := onB.wait(t, id)
		result, _ := got["result"].(map[string]any)
		content, _ := result["content"].([]any)
		if got["status"] != "completed" || len(content) != 1 || content[0].(map[string]any)["text"] != "done" {
			t.Errorf("tasks/get on B after B finished: %v", got)
		}
	})

	t.Run("CancelledElsewhere", func(t *testing.T) {
		prefix := s.Prefix(t)
		a, b := newTaskReplica(t, s, prefix), newTaskReplica(t, s, prefix)
		id := taskRPC{url: a.url, token: "alice"}.create(t, "slow")
		<-a.started
		onB := taskRPC{url: b.url, token: "alice"}
		onB.mustCall(t, "tasks/cancel", map[string]any{"taskId": id})
		if got := onB.mustCall(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "cancelled" {
			t.Errorf("tasks/get on B after its tasks/cancel: %v", got)
		}
		// A learns of it at its next renewal, a third of the lease later.
		select {
		case err := <-a.stopped:
			if err != context.Canceled {
				t.Errorf("A's work stopped with %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("A's work still runs 10s after the task was cancelled on B")
		}
		if got := (taskRPC{url: a.url, token: "alice"}).mustCall(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "cancelled" {
			t.Errorf("tasks/get on A after its work stopped: %v", got)
		}
	})

	t.Run("OtherPrincipal", func(t *testing.T) {
		prefix := s.Prefix(t)
		a, b := newTaskReplica(t, s, prefix), newTaskReplica(t, s, prefix)
		id := taskRPC{url: a.url, token: "alice"}.create(t, "slow")
		<-a.started
		bob := taskRPC{url: b.url, token: "bob"}
		_, unknown := bob.call(t, "tasks/get", map[string]any{"taskId": "no-such-task"})
		_, err := bob.call(t, "tasks/get", map[string]any{"taskId": id})
		if err == nil || unknown == nil || err.Code != -32602 || err.Message != unknown.Message {
			t.Errorf("bob's tasks/get on B = %+v; for an unknown task %+v", err, unknown)
		}
		bob.mustCall(t, "tasks/cancel", map[string]any{"taskId": id})
		onB := taskRPC{url: b.url, token: "alice"}
		if got := onB.mustCall(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
			t.Errorf("bob cancelled alice's task: %v", got)
		}
		close(a.release)
		if got := onB.wait(t, id); got["status"] != "completed" {
			t.Errorf("alice's task: %v", got)
		}
	})

	// A replica that dies without Shutdown stops renewing its lease (here,
	// its Redis client is closed under it); the task is failed when polled
	// on another replica after the lease.
	t.Run("ReplicaLost", func(t *testing.T) {
		prefix := s.Prefix(t)
		a, b := newTaskReplica(t, s, prefix), newTaskReplica(t, s, prefix)
		id := taskRPC{url: a.url, token: "alice"}.create(t, "slow")
		<-a.started
		a.client.Close()
		got := taskRPC{url: b.url, token: "alice"}.wait(t, id)
		e, _ := got["error"].(map[string]any)
		if got["status"] != "failed" || e["code"] != float64(-32603) || got["result"] != nil {
			t.Errorf("tasks/get on B after A was lost: %v", got)
		}
	})
}

// taskRPC is a 2026-07-28 client that declares the tasks extension, on
// mcpkittest.RawClient: the SDK's client cannot read a CreateTaskResult.
// Its bearer token is not verified: the principal is its digest.
type taskRPC struct {
	url, token string
}

func (c taskRPC) call(t *testing.T, method string, params map[string]any) (map[string]any, *jsonrpc.Error) {
	t.Helper()
	raw := mcpkittest.RawClient{
		Endpoint:     c.url,
		Token:        c.token,
		Capabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}},
	}
	res, err := raw.Call(t.Context(), method, params)
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		return nil, jerr
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(res, &m); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return m, nil
}

func (c taskRPC) mustCall(t *testing.T, method string, params map[string]any) map[string]any {
	t.Helper()
	res, err := c.call(t, method, params)
	if err != nil {
		t.Fatalf("%s: error %+v", method, err)
	}
	return res
}

// create calls tool and returns the ID of the task it created.
func (c taskRPC) create(t *testing.T, tool string) string {
	t.Helper()
	res := c.mustCall(t, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call %s: not a CreateTaskResult: %v", tool, res)
	}
	return id
}

// wait polls tasks/get until the task is terminal, for 10s at most.
func (c taskRPC) wait(t *testing.T, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := c.mustCall(t, "tasks/get", map[string]any{"taskId": id})
		switch res["status"] {
		case "completed", "failed", "cancelled":
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %v after 10s", id, res["status"])
		}
		time.Sleep(5 * time.Millisecond) // pacing, not an assertion
	}
}
