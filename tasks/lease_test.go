package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// declaredRequest is a 2026-07-28 call of tool from a client that declared
// the extension, without a transport.
func declaredRequest(tool *mcpkit.Tool) *mcpkit.Request {
	return &mcpkit.Request{Tool: tool, Call: &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool.Name, Meta: mcp.Meta{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{ExtensionID: map[string]any{}}},
	}}}}
}

// blocking is a tool that blocks until release is closed or its context
// ends, reporting its context's cause on stopped.
type blocking struct {
	release chan struct{}
	stopped chan error
}

func newBlocking() *blocking {
	return &blocking{release: make(chan struct{}), stopped: make(chan error, 1)}
}

func (b *blocking) tool() *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: "block"}, Handler: mcpkit.HandlerFunc(
		func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			select {
			case <-b.release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			case <-ctx.Done():
				b.stopped <- context.Cause(ctx)
				return nil, ctx.Err()
			}
		})}
}

// served returns a server that serves tools, for the rounds after input
// that a manager resumes on it; a tool without an input schema gets an
// empty one.
func served(t *testing.T, tools ...*mcpkit.Tool) *mcpkit.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "tasks"}, nil)
	for _, tool := range tools {
		if tool.InputSchema == nil {
			c := *tool
			c.InputSchema = map[string]any{"type": "object"}
			tool = &c
		}
		if err := srv.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	return srv
}

// start runs one call of tool on m as a task and returns the task's ID.
func start(t *testing.T, m *Manager, tool *mcpkit.Tool) string {
	t.Helper()
	tt := Tool(tool, m, nil)
	res, err := tt.Handler.ServeTool(t.Context(), declaredRequest(tt))
	if err != nil {
		t.Fatal(err)
	}
	w := createdTask(res)
	if w == nil {
		t.Fatalf("no task created: %+v", res)
	}
	return w.TaskID
}

func status(t *testing.T, m *Manager, id string) *wireTask {
	t.Helper()
	res, err := m.get(t.Context(), nil, "", nil, id)
	if err != nil {
		t.Fatalf("tasks/get %s: %v", id, err)
	}
	return res.(*wireTask)
}

// TestLeaseLost: a task whose replica stopped renewing its lease ends as
// failed at the first tasks/get after the lease, on any replica.
func TestLeaseLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := NewMemoryStore(nil)
		now := time.Now()
		// What a replica that died while running the task left behind.
		store.Create(t.Context(), &Task{ID: "orphan", Tool: "block", Status: Working, CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(time.Hour), LeaseUntil: now.Add(30 * time.Second)})
		m := NewManager(&Options{Store: store, Lease: 30 * time.Second})

		time.Sleep(29 * time.Second)
		if w := status(t, m, "orphan"); w.Status != Working {
			t.Fatalf("within the lease: %s", w.Status)
		}
		time.Sleep(time.Second)
		w := status(t, m, "orphan")
		if w.Status != Failed || w.Error == nil || w.Error.Code != jsonrpc.CodeInternalError || w.Result != nil {
			t.Fatalf("after the lease: %+v", w)
		}
		if w2 := status(t, m, "orphan"); w2.Status != Failed || w2.LastUpdatedAt != w.LastUpdatedAt {
			t.Errorf("a failed task changed: %+v", w2)
		}
	})
}

// TestLeaseRenewedAndRemoteCancel: the replica running a task keeps its
// lease, so another replica sharing the store reports it working however
// long it runs; a tasks/cancel on that other replica stops the work within
// a third of the lease.
func TestLeaseRenewedAndRemoteCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := NewMemoryStore(nil)
		a := NewManager(&Options{Store: store, Lease: 30 * time.Second})
		b := NewManager(&Options{Store: store, Lease: 30 * time.Second})
		tool := newBlocking()
		id := start(t, a, tool.tool())

		time.Sleep(10 * time.Minute)
		if w := status(t, b, id); w.Status != Working {
			t.Fatalf("a running task, seen from another replica: %s", w.Status)
		}
		if _, err := b.cancel(t.Context(), "", id); err != nil {
			t.Fatal(err)
		}
		if w := status(t, b, id); w.Status != Cancelled {
			t.Errorf("after tasks/cancel: %s", w.Status)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		select {
		case cause := <-tool.stopped:
			if !errors.Is(cause, errCancelled) {
				t.Errorf("work stopped by %v", cause)
			}
		default:
			t.Fatal("the work still runs a third of the lease after the cancel")
		}
		if err := a.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		if w := status(t, a, id); w.Status != Cancelled {
			t.Errorf("after the work returned: %s", w.Status)
		}
	})
}

// TestTTL: a task is kept for the TTL from its creation, then forgotten
// (tasks/get answers as for an unknown task); a task still running then is
// stopped.
func TestTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewManager(&Options{TTL: time.Hour})
		done := newBlocking()
		close(done.release)
		finished := start(t, m, done.tool())
		running := newBlocking()
		id := start(t, m, running.tool())
		synctest.Wait()
		if w := status(t, m, finished); w.Status != Completed || w.TTLMs == nil || *w.TTLMs != time.Hour.Milliseconds() {
			t.Fatalf("finished task: %+v", w)
		}

		time.Sleep(time.Hour - time.Second)
		status(t, m, finished)
		time.Sleep(time.Second)
		for _, id := range []string{finished, id} {
			if _, err := m.get(t.Context(), nil, "", nil, id); err != errUnknownTask {
				t.Errorf("tasks/get of expired task: %v", err)
			}
		}
		time.Sleep(10 * time.Second) // a renewal finds the task gone
		if cause := <-running.stopped; !errors.Is(cause, errVanished) {
			t.Errorf("expired task's work stopped by %v", cause)
		}
		m.Shutdown(t.Context())
	})
}

// TestShutdown: the tasks a manager runs when it shuts down end as failed;
// calls after it run synchronously.
func TestShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewManager(nil)
		tool := newBlocking()
		id := start(t, m, tool.tool())
		if err := m.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		if cause := <-tool.stopped; !errors.Is(cause, errShutdown) {
			t.Errorf("work stopped by %v", cause)
		}
		if w := status(t, m, id); w.Status != Failed || w.Error == nil {
			t.Errorf("after shutdown: %+v", w)
		}
		close(tool.release)
		tt := Tool(tool.tool(), m, nil)
		res, err := tt.Handler.ServeTool(t.Context(), declaredRequest(tt))
		if err != nil || createdTask(res) != nil {
			t.Errorf("after shutdown: %+v, %v", res, err)
		}
	})
}

// TestStoreFull: a call that finds the store full gets a retryable tool
// error, and no task.
func TestStoreFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewManager(&Options{Store: NewMemoryStore(&MemoryStoreOptions{MaxTasks: 1})})
		tool := newBlocking()
		start(t, m, tool.tool())
		tt := Tool(tool.tool(), m, nil)
		_, err := tt.Handler.ServeTool(t.Context(), declaredRequest(tt))
		if outcome, class := mcpkit.Classify(nil, err); outcome != mcpkit.OutcomeToolError || class != mcpkit.Retryable {
			t.Errorf("full store: %v (%s, %s)", err, outcome, class)
		}
		close(tool.release)
		m.Shutdown(t.Context())
	})
}

// TestCreatedTaskThroughJSON: the task-created result of a call still
// answers the task after a cache or an idempotency store kept it as JSON.
func TestCreatedTaskThroughJSON(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewManager(nil)
		tool := newBlocking()
		tt := Tool(tool.tool(), m, nil)
		res, err := tt.Handler.ServeTool(t.Context(), declaredRequest(tt))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var replayed mcp.CallToolResult
		if err := json.Unmarshal(b, &replayed); err != nil {
			t.Fatal(err)
		}
		w, w2 := createdTask(res), createdTask(&replayed)
		if w2 == nil || w2.TaskID != w.TaskID || w2.ResultType != "task" || w2.Status != Working {
			t.Errorf("replayed: %+v, want %+v", w2, w)
		}
		if createdTask(&mcp.CallToolResult{Meta: mcp.Meta{metaKeyCreated: "junk"}}) != nil {
			t.Error("a junk marker made a task")
		}
		close(tool.release)
		m.Shutdown(t.Context())
	})
}

// TestResumeOnAnotherReplica: a task waiting for input is resumed by the
// replica that receives the tasks/update that completes its answers, with
// the call's arguments.
func TestResumeOnAnotherReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := NewMemoryStore(nil)
		a := NewManager(&Options{Store: store})
		b := NewManager(&Options{Store: store})
		ran := map[*Manager]int{}
		tool := func(m *Manager) *mcpkit.Tool {
			return Tool(&mcpkit.Tool{Tool: mcp.Tool{Name: "ask"}, Handler: mcpkit.HandlerFunc(
				func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
					ran[m]++
					if _, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "ok"); !ok {
						return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Message: "ok?"}}}, nil
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Arguments)}}}, nil
				})}, m, nil)
		}
		ta := tool(a)
		srvB := served(t, tool(b))
		req := declaredRequest(ta)
		req.Arguments = json.RawMessage(`{"x":1}`)
		res, err := ta.Handler.ServeTool(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		id := createdTask(res).TaskID
		synctest.Wait()
		if w := status(t, b, id); w.Status != InputRequired || w.InputRequests == nil {
			t.Fatalf("waiting task: %+v", w)
		}
		b.update(t.Context(), srvB, "", nil, &taskParams{TaskID: id, InputResponses: json.RawMessage(`{"ok":{"action":"accept"}}`)})
		synctest.Wait()
		w := status(t, a, id)
		if w.Status != Completed || !strings.Contains(string(w.Result), `{\"x\":1}`) {
			t.Errorf("resumed task: %+v, result %s", w, w.Result)
		}
		if ran[a] != 1 || ran[b] != 1 {
			t.Errorf("rounds run: on a %d, on b %d; want 1 and 1", ran[a], ran[b])
		}
	})
}

// TestResultTooLargeForStore: work whose result does not fit in the store
// ends its task as failed, rather than leave it working until its lease
// runs out; the store keeps nothing of the result.
func TestResultTooLargeForStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := NewMemoryStore(&MemoryStoreOptions{MaxBytes: 20_000, MaxBytesPerOwner: 20_000})
		m := NewManager(&Options{Store: store})
		big := strings.Repeat("r", 30_000)
		id := start(t, m, &mcpkit.Tool{Tool: mcp.Tool{Name: "big"}, Handler: mcpkit.HandlerFunc(
			func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil
			})})
		synctest.Wait()
		w := status(t, m, id)
		if w.Status != Failed || w.Error == nil || w.Error.Code != jsonrpc.CodeInternalError ||
			w.Error.Message != "task result too large for the task store" || w.Result != nil {
			t.Errorf("task = %+v", w)
		}
		if store.Bytes() > 2*taskOverhead {
			t.Errorf("the store holds %d bytes for the task", store.Bytes())
		}
		m.Shutdown(t.Context())
	})
}

// The progress a task's work reports on one replica is its status message
// on another, read from the shared store, and moves as the work goes on,
// at most once per StatusInterval.
func TestProgressOnAnotherReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := NewMemoryStore(nil)
		a := NewManager(&Options{Store: store})
		b := NewManager(&Options{Store: store})
		step := make(chan struct{})
		ta := Tool(&mcpkit.Tool{Tool: mcp.Tool{Name: "index"}, Handler: mcpkit.HandlerFunc(
			func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
				for i := 1; i <= 3; i++ {
					<-step
					mcpkit.ReportProgress(ctx, float64(i), 3, "indexing")
				}
				<-step
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "indexed"}}}, nil
			})}, a, nil)
		res, err := ta.Handler.ServeTool(t.Context(), declaredRequest(ta))
		if err != nil {
			t.Fatal(err)
		}
		id := createdTask(res).TaskID
		for i := 1; i <= 3; i++ {
			step <- struct{}{}
			time.Sleep(StatusInterval)
			synctest.Wait()
			want := fmt.Sprintf("indexing (%d/3)", i)
			if w := status(t, b, id); w.Status != Working || w.StatusMessage != want {
				t.Errorf("on the other replica after report %d: %s %q, want working %q", i, w.Status, w.StatusMessage, want)
			}
		}
		step <- struct{}{}
		synctest.Wait()
		if w := status(t, b, id); w.Status != Completed {
			t.Errorf("the task ended %s", w.Status)
		}
	})
}
