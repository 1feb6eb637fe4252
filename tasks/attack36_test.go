package tasks_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/requeststate"
	"github.com/mcpkit/mcpkit/tasks"
)

// eventNames is an observer that keeps each event's decision and name.
type eventNames struct {
	mu  sync.Mutex
	got []string
}

func (e *eventNames) Observe(_ context.Context, ev *mcpkit.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, string(ev.Decision)+" "+ev.Name+" "+string(ev.Outcome))
}

func (e *eventNames) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	g := e.got
	e.got = nil
	return g
}

// confirmTaskServer serves, behind Confirm for destructive tools, the
// task tool wipe, whose work asks for a label of its own when ask is set,
// and counts its runs to the end.
func confirmTaskServer(t *testing.T, ask bool) (mcpkittest.RawClient, rpc, *atomic.Int64, *eventNames) {
	t.Helper()
	srv, m := bindingServer(t)
	log := &eventNames{}
	srv.Observe(log)
	key := make([]byte, 32)
	rand.Read(key)
	sealer, err := requeststate.New([][]byte{key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Use(mcpkit.ForTools(middleware.Destructive, middleware.Confirm(sealer, nil)))
	runs := new(atomic.Int64)
	wipe := tasks.Tool(&mcpkit.Tool{Tool: mcp.Tool{Name: "wipe", InputSchema: objectSchema},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			if ask {
				if _, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "label"); !ok {
					return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"label": &mcp.ElicitParams{Message: "Label?"}}, RequestState: "tool-own-state"}, nil
				}
			}
			runs.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wiped"}}}, nil
		})}, m, nil)
	if err := srv.Add(wipe); err != nil {
		t.Fatal(err)
	}
	url := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: bindingTokens, Token: "alice-token"}).URL
	raw := mcpkittest.RawClient{Endpoint: url, Token: "alice-token", Capabilities: map[string]any{
		"elicitation": map[string]any{"form": map[string]any{}},
		"extensions":  map[string]any{tasks.ExtensionID: map[string]any{}},
	}}
	return raw, rpc{url: url, token: "alice-token", declared: true}, runs, log
}

// rawCall calls method on raw and decodes the result; a JSON-RPC error
// is returned.
func rawCall(t *testing.T, raw mcpkittest.RawClient, method string, params map[string]any) (map[string]any, error) {
	t.Helper()
	b, err := raw.Call(t.Context(), method, params)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

// TestAttack36ConfirmInTask: a destructive task tool behind Confirm asks
// the user before its task is created; the answer, sent with the state on
// the retried call, creates the task and runs the tool once when it is
// yes, and nothing when it is no or the model's own "confirm": true; the
// answer replayed is refused.
func TestAttack36ConfirmInTask(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer map[string]any
		runs   int64
	}{
		{"yes", map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}, 1},
		{"no", map[string]any{"action": "decline"}, 0},
		{"unticked", map[string]any{"action": "accept", "content": map[string]any{}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, c, runs, log := confirmTaskServer(t, false)
			args := map[string]any{"confirm": true}
			res, err := rawCall(t, raw, "tools/call", map[string]any{"name": "wipe", "arguments": args})
			if err != nil || res["resultType"] != "input_required" {
				t.Fatalf("first call: %v %v", res, err)
			}
			state, _ := res["requestState"].(string)
			retry := map[string]any{"name": "wipe", "arguments": args, "requestState": state,
				"inputResponses": map[string]any{"mcpkit.confirm": tc.answer}}
			res, err = rawCall(t, raw, "tools/call", retry)
			if err != nil {
				t.Fatalf("the retried call: %v", err)
			}
			if tc.runs == 0 {
				if res["isError"] != true || res["taskId"] != nil {
					t.Errorf("a refused confirmation: %v", res)
				}
			} else {
				id, _ := res["taskId"].(string)
				if id == "" {
					t.Fatalf("no task: %v", res)
				}
				awaitTask(t, c, id, "")
				if end, _ := rawCall(t, raw, "tasks/get", map[string]any{"taskId": id}); end["status"] != "completed" {
					t.Errorf("the task: %v", end)
				}
			}
			if _, err := rawCall(t, raw, "tools/call", retry); err == nil || !strings.Contains(err.Error(), "invalid request state") {
				t.Errorf("the answer replayed: %v", err)
			}
			if runs.Load() != tc.runs {
				t.Errorf("%d runs, want %d", runs.Load(), tc.runs)
			}
			t.Logf("events: %q", log.take())
		})
	}
}

// TestAttack36ConfirmedTaskAsksAgain: a confirmed task whose work asks for
// input of its own gets it with tasks/update, and the round after runs
// the tool's whole chain, Confirm included: that round must neither ask
// for the confirmation again nor refuse the work's own request state.
func TestAttack36ConfirmedTaskAsksAgain(t *testing.T) {
	raw, c, runs, log := confirmTaskServer(t, true)
	args := map[string]any{}
	res, err := rawCall(t, raw, "tools/call", map[string]any{"name": "wipe", "arguments": args})
	if err != nil || res["resultType"] != "input_required" {
		t.Fatalf("first call: %v %v", res, err)
	}
	res, err = rawCall(t, raw, "tools/call", map[string]any{"name": "wipe", "arguments": args, "requestState": res["requestState"],
		"inputResponses": map[string]any{"mcpkit.confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
	id, _ := res["taskId"].(string)
	if err != nil || id == "" {
		t.Fatalf("the confirmed call: %v %v", res, err)
	}
	if got := awaitTask(t, c, id, "input_required"); got["status"] != "input_required" {
		t.Fatalf("the task did not ask for its label: %v", got)
	}
	if _, err := rawCall(t, raw, "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"label": map[string]any{"action": "accept", "content": map[string]any{"v": "x"}}}}); err != nil {
		t.Fatal(err)
	}
	got := awaitTask(t, c, id, "")
	end, _ := rawCall(t, raw, "tasks/get", map[string]any{"taskId": id})
	t.Logf("events: %q; last notification %v", log.take(), got)
	if end["status"] != "completed" || runs.Load() != 1 {
		t.Errorf("the task after its label: %v, %d runs; want completed after 1", end, runs.Load())
	}
}

// TestAttack36DrainAlone: one replica with a store of its own (the
// default MemoryStore) has nobody to hand its tasks to: a drain must not
// stop a running task's work and leave it "working" in a store that goes
// away with the process; it lets the work finish within the drain's
// deadline (as it does calls in flight), or ends the task so its client
// learns.
func TestAttack36DrainAlone(t *testing.T) {
	store := tasks.NewMemoryStore(nil)
	release := make(chan struct{})
	a := newReplica(t, "a", store, release)
	id := rpc{url: a.url, declared: true}.create(t, "job")
	<-a.started
	// The drain's deadline is long; the work would finish within it.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- a.srv.Drain(ctx) }()
	for ready := a.srv.ReadinessHandler(); ; {
		rec := httptest.NewRecorder()
		ready.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ready", nil))
		if rec.Code == http.StatusServiceUnavailable {
			break // the drain has begun
		}
		runtime.Gosched()
	}
	// The work goes on while the drain waits for it; it finishes now.
	close(release)
	if err := <-drained; err != nil {
		t.Errorf("Drain: %v", err)
	}
	task, err := store.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != tasks.Completed {
		t.Errorf("after the drain: %s %q, want completed", task.Status, task.StatusMessage)
	}
}
