package tasks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tasks"
)

// replica is one of several servers sharing a task store, each with a
// manager of its own, serving a task tool "job" that waits for release and
// says which replica ran it.
type replica struct {
	name    string
	srv     *mcpkit.Server
	m       *tasks.Manager
	url     string
	started chan struct{}
}

func newReplica(t *testing.T, name string, store tasks.Store, release <-chan struct{}) *replica {
	t.Helper()
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	r := &replica{name: name, started: make(chan struct{}, 4)}
	r.srv = mcpkit.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	r.m = tasks.NewManager(&tasks.Options{Store: store})
	if err := r.m.Attach(r.srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.m.Shutdown(context.Background()) })
	job := &mcpkit.Tool{Tool: mcp.Tool{Name: "job", InputSchema: objectSchema}, Handler: mcpkit.HandlerFunc(
		func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			r.started <- struct{}{}
			select {
			case <-release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done by " + r.name}}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})}
	if err := r.srv.Add(tasks.Tool(job, r.m, nil)); err != nil {
		t.Fatal(err)
	}
	r.url = mcpkittest.NewStatelessServer(t, r.srv, nil).URL
	return r
}

// A task running on a replica that drains is handed over: its work there
// stops, Drain returns, and the task stays working until a tasks/get on
// another replica takes it up and runs its work again there, to the end.
// The draining replica creates no task: the call is refused (503 over
// HTTP, for a proxy to send it elsewhere).
func TestDrainHandsTasksOver(t *testing.T) {
	store := tasks.NewMemoryStore(nil)
	release := make(chan struct{})
	a, b := newReplica(t, "a", store, release), newReplica(t, "b", store, release)
	alice := rpc{url: a.url, declared: true}
	id := alice.create(t, "job")
	<-a.started

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a safety net only
	defer cancel()
	if err := a.srv.Drain(ctx); err != nil {
		t.Fatalf("Drain = %v", err)
	}
	raw := mcpkittest.RawClient{Endpoint: a.url, Capabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
	if _, err := raw.Call(t.Context(), "tools/call", map[string]any{"name": "job", "arguments": map[string]any{}}); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a task created on a draining replica: %v, want a 503", err)
	}
	onB := rpc{url: b.url, declared: true} // the same principal: no token
	got := onB.mustCall(t, "tasks/get", map[string]any{"taskId": id})
	if got["status"] != "working" {
		t.Fatalf("the task on the other replica: %v", got)
	}
	<-b.started // taken up there
	close(release)
	res := onB.wait(t, id)
	result, _ := res["result"].(map[string]any)
	content, _ := result["content"].([]any)
	if res["status"] != "completed" || len(content) != 1 || content[0].(map[string]any)["text"] != "done by b" {
		t.Errorf("the task taken up: %v", res)
	}
	select {
	case <-a.started:
		t.Error("the draining replica ran the work again")
	default:
	}
}

// A call of a task tool that reaches a draining manager (one admitted
// before the drain began: the server refuses those that come after)
// creates its task handed over: no work runs on the draining replica, and
// a tasks/get on another takes the task up and runs it to the end.
func TestDrainCreatesTasksHandedOver(t *testing.T) {
	store := tasks.NewMemoryStore(nil)
	release := make(chan struct{})
	a, b := newReplica(t, "a", store, release), newReplica(t, "b", store, release)
	if err := a.srv.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	tool, h, ok := a.srv.Resolve(t.Context(), nil, "job", nil)
	if !ok {
		t.Fatal("job not found")
	}
	req := &mcpkit.Request{Tool: tool, Arguments: []byte(`{}`), Call: &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "job", Meta: mcp.Meta{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}},
	}}}}
	res, err := h.ServeTool(t.Context(), req)
	if err != nil || res.IsError {
		t.Fatalf("task creation while draining: %+v, %v", res, err)
	}
	if store.Len() != 1 {
		t.Fatalf("%d tasks created, want 1", store.Len())
	}
	b2, _ := json.Marshal(res.Meta)
	var created map[string]struct {
		TaskID string `json:"taskId"`
	}
	json.Unmarshal(b2, &created)
	var id string
	for _, c := range created {
		id = c.TaskID
	}
	onB := rpc{url: b.url, declared: true}
	if got := onB.mustCall(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
		t.Fatalf("the task on the other replica: %v", got)
	}
	<-b.started
	close(release)
	if res := onB.wait(t, id); res["status"] != "completed" {
		t.Errorf("the task taken up: %v", res)
	}
	select {
	case <-a.started:
		t.Error("the draining replica ran the work")
	default:
	}
}

// A client that listens for its task instead of polling: the watcher of
// its listen stream on another replica takes the handed-over task up, and
// the stream tells it the task completed. The draining replica's listen
// stream for the task ends, answered, once the hand-over is done.
func TestDrainTaskTakenUpByListener(t *testing.T) {
	store := tasks.NewMemoryStore(nil)
	release := make(chan struct{})
	a, b := newReplica(t, "a", store, release), newReplica(t, "b", store, release)
	id := rpc{url: a.url, declared: true}.create(t, "job")
	<-a.started
	listenOn := func(url string) *mcpkittest.RawStream {
		raw := mcpkittest.RawClient{Endpoint: url, Capabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
		st, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	onA, onB := listenOn(a.url), listenOn(b.url)
	for _, st := range []*mcpkittest.RawStream{onA, onB} {
		next(t, st) // the acknowledgement
		if m := next(t, st); m.Method != "notifications/tasks" {
			t.Fatalf("first notification: %+v", m)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a safety net only
	defer cancel()
	if err := a.srv.Drain(ctx); err != nil {
		t.Fatalf("Drain = %v", err)
	}
	// A's stream ends with the listen request's result.
	for {
		m, err := onA.Next()
		if err != nil {
			t.Fatalf("A's listen stream ended without its result: %v", err)
		}
		if strings.Contains(string(m), `"result"`) {
			break
		}
	}
	<-b.started // taken up by B's watcher
	close(release)
	for {
		m := next(t, onB)
		if m.Method != "notifications/tasks" {
			continue
		}
		if m.Params.Status == "completed" {
			break
		}
	}
}
