package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tasks"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// message is a JSON-RPC message of a listen stream, as far as these tests
// read it.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta          map[string]any `json:"_meta"`
		Notifications struct {
			TaskIDs          []string `json:"taskIds"`
			ToolsListChanged bool     `json:"toolsListChanged"`
		} `json:"notifications"`
		TaskID        string          `json:"taskId"`
		Status        string          `json:"status"`
		StatusMessage string          `json:"statusMessage"`
		ResultType    *string         `json:"resultType"`
		Result        json.RawMessage `json:"result"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
}

// listen opens a subscriptions/listen stream for alice (the tasks
// extension declared) asking for notifs.
func listen(t *testing.T, url string, notifs map[string]any) *mcpkittest.RawStream {
	t.Helper()
	raw := mcpkittest.RawClient{Endpoint: url, Token: "alice-token",
		Capabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
	st, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": notifs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// next reads the stream's next message.
func next(t *testing.T, st *mcpkittest.RawStream) message {
	t.Helper()
	raw, err := st.Next()
	if err != nil {
		t.Fatalf("listen stream: %v", err)
	}
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("listen stream: %v in %s", err, raw)
	}
	return m
}

// nextTask reads the stream up to the next notifications/tasks, checking
// that it is one, for the listen request's ID.
func nextTask(t *testing.T, st *mcpkittest.RawStream) message {
	t.Helper()
	m := next(t, st)
	if m.Method != "notifications/tasks" {
		t.Fatalf("got %s, want notifications/tasks", m.Method)
	}
	if sub := m.Params.Meta[mcp.MetaKeySubscriptionID]; sub != float64(1) {
		t.Errorf("notification's subscription ID = %v, want the listen request's, 1", sub)
	}
	if m.Params.ResultType != nil {
		t.Errorf("a notification carries resultType %q", *m.Params.ResultType)
	}
	return m
}

// A client that listens for its task's notifications gets the task's state
// at once, each status message its work reports, and its end with the
// result inlined; then the stream ends. Other principals' tasks and unknown
// IDs are not acknowledged, and nothing is sent about them.
func TestTaskNotifications(t *testing.T) {
	f := newFixture(t, nil)
	alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}
	bob := rpc{url: f.ts.URL, token: "bob-token", declared: true}
	id := alice.create(t, "progressing")
	<-f.started
	bobs := bob.create(t, "slow")
	<-f.started

	st := listen(t, f.ts.URL, map[string]any{"taskIds": []string{bobs, id, "no-such-task", id}})
	ack := next(t, st)
	if ack.Method != "notifications/subscriptions/acknowledged" || !slices.Equal(ack.Params.Notifications.TaskIDs, []string{id}) {
		t.Fatalf("acknowledgement = %s %v, want taskIds [%s]", ack.Method, ack.Params.Notifications.TaskIDs, id)
	}
	m := nextTask(t, st)
	if m.Params.TaskID != id || m.Params.Status != "working" {
		t.Fatalf("first notification = %+v, want task %s working", m.Params, id)
	}
	for m.Params.StatusMessage != "indexing (1/3)" {
		if m = nextTask(t, st); m.Params.TaskID != id || m.Params.Status != "working" {
			t.Fatalf("notification = %+v, want task %s working", m.Params, id)
		}
	}
	close(f.release)
	for m.Params.Status == "working" {
		m = nextTask(t, st)
	}
	var res mcp.CallToolResult
	if m.Params.TaskID != id || m.Params.Status != "completed" || json.Unmarshal(m.Params.Result, &res) != nil ||
		len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "done" {
		t.Fatalf("last notification = %+v %s, want task %s completed with its result", m.Params, m.Params.Result, id)
	}
	// Every task it listens to ended: the listen request is answered.
	if end := next(t, st); string(end.ID) != "1" || end.Result == nil {
		t.Errorf("after the last task ended: %+v, want the listen request's result", end)
	}
	if _, err := st.Next(); err != io.EOF {
		t.Errorf("after the result: %v, want the end of the stream", err)
	}
}

// Asking for task notifications needs the extension declared (SEP-2663):
// -32021 otherwise.
func TestTaskNotificationsNotDeclared(t *testing.T) {
	f := newFixture(t, nil)
	raw := mcpkittest.RawClient{Endpoint: f.ts.URL, Token: "alice-token"}
	_, err := raw.Call(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{"x"}}})
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) || jerr.Code != mcp.CodeMissingRequiredClientCapabilities {
		t.Errorf("listen for tasks without the extension: %v, want error %d", err, mcp.CodeMissingRequiredClientCapabilities)
	}
}

// Task notifications share the stream with the SDK's list_changed: the
// stream stays open for those after the tasks end.
func TestTaskNotificationsWithListChanged(t *testing.T) {
	f := newFixture(t, nil)
	alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}
	id := alice.create(t, "failing")
	st := listen(t, f.ts.URL, map[string]any{"taskIds": []string{id}, "toolsListChanged": true})
	ack := next(t, st)
	if !ack.Params.Notifications.ToolsListChanged || !slices.Equal(ack.Params.Notifications.TaskIDs, []string{id}) {
		t.Fatalf("acknowledgement = %+v", ack.Params.Notifications)
	}
	m := nextTask(t, st)
	for m.Params.Status == "working" {
		m = nextTask(t, st)
	}
	if m.Params.Status != "completed" {
		t.Fatalf("the failing tool's task: %+v", m.Params)
	}
	if err := f.srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "late", InputSchema: objectSchema}, Handler: mcpkit.HandlerFunc(
		func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return &mcp.CallToolResult{}, nil })}); err != nil {
		t.Fatal(err)
	}
	if m := next(t, st); m.Method != "notifications/tools/list_changed" {
		t.Errorf("after a tool was added: %s, want notifications/tools/list_changed", m.Method)
	}
}

// A task that runs on one replica is watched from another through the
// shared store, at each poll interval.
func TestTaskNotificationsOnAnotherReplica(t *testing.T) {
	store := tasks.NewMemoryStore(nil)
	release := make(chan struct{})
	replica := func() string {
		caps := &mcp.ServerCapabilities{}
		caps.AddExtension(tasks.ExtensionID, map[string]any{})
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "replica", Version: "1"},
			&mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
		m := tasks.NewManager(&tasks.Options{Store: store, PollInterval: 5 * time.Millisecond})
		if err := m.Attach(srv); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Shutdown(context.Background()) })
		tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "wait", InputSchema: objectSchema}, Handler: mcpkit.HandlerFunc(
			func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
				select {
				case <-release:
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "waited"}}}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})}
		if err := srv.Add(tasks.Tool(tool, m, nil)); err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv.HTTPHandler(nil))
		t.Cleanup(hs.Close)
		return hs.URL
	}
	a, b := replica(), replica()
	id := rpc{url: a, declared: true}.create(t, "wait")
	raw := mcpkittest.RawClient{Endpoint: b,
		Capabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
	st, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ack := next(t, st); !slices.Equal(ack.Params.Notifications.TaskIDs, []string{id}) {
		t.Fatalf("replica b acknowledged %v", ack.Params.Notifications.TaskIDs)
	}
	if m := nextTask(t, st); m.Params.Status != "working" {
		t.Fatalf("first notification: %+v", m.Params)
	}
	close(release)
	if m := nextTask(t, st); m.Params.Status != "completed" {
		t.Errorf("after the work on replica a ended: %+v", m.Params)
	}
}

// countingStore is a Store that counts its Gets, by task ID.
type countingStore struct {
	tasks.Store

	mu   sync.Mutex
	gets map[string]int
}

func (s *countingStore) Get(ctx context.Context, id string) (*tasks.Task, error) {
	s.mu.Lock()
	s.gets[id]++
	s.mu.Unlock()
	return s.Store.Get(ctx, id)
}

// counts returns the number of Gets of the IDs for which which is true.
func (s *countingStore) counts(which func(id string) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, c := range s.gets {
		if which(id) {
			n += c
		}
	}
	return n
}

// countedServer serves a task tool, wait, that runs until its context
// ends, over a store that counts its Gets, behind the tokens of
// newFixture's server (alice and bob).
func countedServer(t *testing.T) (string, *countingStore) {
	t.Helper()
	store := &countingStore{Store: tasks.NewMemoryStore(nil), gets: map[string]int{}}
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "counted", Version: "1"},
		&mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(&tasks.Options{Store: store})
	if err := m.Attach(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	wait := &mcpkit.Tool{Tool: mcp.Tool{Name: "wait", InputSchema: objectSchema}, Handler: mcpkit.HandlerFunc(
		func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})}
	if err := srv.Add(tasks.Tool(wait, m, nil)); err != nil {
		t.Fatal(err)
	}
	far := time.Now().Add(time.Hour)
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: map[string]*auth.TokenInfo{
		"alice-token": {UserID: "alice", Expiration: far},
		"bob-token":   {UserID: "bob", Expiration: far},
	}, Token: "alice-token"})
	return ts.URL, store
}

// manyIDs returns n task IDs, each unknown one named twice in a row, with
// the given IDs placed at the given positions.
func manyIDs(n int, at map[int]string) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("unknown-%d", i/2)
		if id, ok := at[i]; ok {
			ids[i] = id
		}
	}
	return ids
}

// A listen for 25,000 task IDs from a client that did not declare the
// extension is refused (-32021) before any ID is read: the store is not
// asked about any.
func TestTaskNotificationsNotDeclaredManyIDs(t *testing.T) {
	url, store := countedServer(t)
	raw := mcpkittest.RawClient{Endpoint: url, Token: "alice-token"}
	_, err := raw.Call(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": manyIDs(25_000, nil)}})
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) || jerr.Code != mcp.CodeMissingRequiredClientCapabilities {
		t.Errorf("listen for 25,000 tasks without the extension: %v, want error %d", err, mcp.CodeMissingRequiredClientCapabilities)
	}
	if n := store.counts(func(string) bool { return true }); n != 0 {
		t.Errorf("the refused listen got %d tasks from the store; want none", n)
	}
}

// A listen for 25,000 task IDs, duplicates among them, considers the first
// MaxListenTasks distinct ones alone: the store is asked about each of
// those once, and the acknowledgement names the caller's own tasks among
// them, not one named later.
func TestTaskNotificationsManyIDs(t *testing.T) {
	url, store := countedServer(t)
	alice := rpc{url: url, token: "alice-token", declared: true}
	mine, late := alice.create(t, "wait"), alice.create(t, "wait")
	st := listen(t, url, map[string]any{"taskIds": manyIDs(25_000, map[int]string{3: mine, 50: mine, 20_000: late})})
	ack := next(t, st)
	if !slices.Equal(ack.Params.Notifications.TaskIDs, []string{mine}) {
		t.Fatalf("acknowledgement = %s %v, want taskIds [%s]", ack.Method, ack.Params.Notifications.TaskIDs, mine)
	}
	unknown := store.counts(func(id string) bool { return strings.HasPrefix(id, "unknown-") })
	if want := tasks.MaxListenTasks - 1; unknown != want {
		t.Errorf("the store was asked %d times about unknown IDs; want %d, once for each considered", unknown, want)
	}
	if n := store.counts(func(id string) bool { return id == late }); n != 0 {
		t.Errorf("the store was asked %d times about a task named after the first %d distinct IDs", n, tasks.MaxListenTasks)
	}
	if m := nextTask(t, st); m.Params.TaskID != mine || m.Params.Status != "working" {
		t.Errorf("first notification = %+v, want task %s working", m.Params, mine)
	}
}
