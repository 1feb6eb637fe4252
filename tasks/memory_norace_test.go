//go:build !race

// The race detector's instrumentation allocates on its own and keeps
// shadow memory: the counts below are meaningful only without it.

package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tasks"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bigArguments returns the JSON of arguments of about n bytes.
func bigArguments(n int) json.RawMessage {
	return json.RawMessage(`{"s":"` + strings.Repeat("x", n) + `"}`)
}

// memDelta returns what f allocated in all (TotalAlloc) and what of it is
// still live after a collection (HeapAlloc), in bytes. The test must not
// run in parallel with others.
func memDelta(f func()) (allocated, retained int64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc), int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestTaskArgumentsAllocatedOnce: creating a task whose call has n bytes of
// arguments allocates far less than n: the task record, the store and the
// work share the request's arguments. (They were copied into the store,
// which allocated and kept n more per task.)
func TestTaskArgumentsAllocatedOnce(t *testing.T) {
	const n, tasksMade = 1 << 20, 8
	m := tasks.NewManager(nil)
	defer m.Shutdown(context.Background())
	tool := parked(m)
	meta := mcp.Meta{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}},
	}
	reqs := make([]*mcpkit.Request, tasksMade)
	for i := range reqs {
		reqs[i] = mcpkittest.NewRequest(tool, bigArguments(n), mcpkittest.WithMeta(meta))
	}
	allocated, retained := memDelta(func() {
		for _, req := range reqs {
			if _, err := tool.Handler.ServeTool(t.Context(), req); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Logf("per task of %d bytes of arguments: %d bytes allocated, %d retained", n, allocated/tasksMade, retained/tasksMade)
	if allocated/tasksMade > n/8 || retained/tasksMade > n/8 {
		t.Errorf("per task of %d bytes of arguments: %d bytes allocated, %d retained; want well under %d", n, allocated/tasksMade, retained/tasksMade, n/8)
	}
}

// TestTaskArgumentsRetainedOnce calls a task tool over streamable HTTP,
// statelessly, with n bytes of arguments, and measures what stays on the
// heap while the tasks run: about one copy of the arguments per task, also
// when the call asked for progress. The work kept the call's session,
// which keeps the message the arguments were decoded from, and the store
// kept a copy of its own: three copies; then, with a progress token, the
// progress sender kept the session: two.
func TestTaskArgumentsRetainedOnce(t *testing.T) {
	const n, tasksMade = 1 << 20, 8
	for _, token := range []any{nil, "p-1"} {
		t.Run(fmt.Sprint(token), func(t *testing.T) {
			caps := &mcp.ServerCapabilities{}
			caps.AddExtension(tasks.ExtensionID, map[string]any{})
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "memory"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
			m := tasks.NewManager(nil)
			if err := m.Attach(srv); err != nil {
				t.Fatal(err)
			}
			defer m.Shutdown(context.Background())
			if err := srv.Add(parked(m)); err != nil {
				t.Fatal(err)
			}
			ts := mcpkittest.NewStatelessServer(t, srv, nil)
			c := rpc{url: ts.URL, declared: true}
			params := map[string]any{"name": "parked", "arguments": json.RawMessage(bigArguments(n))}
			if token != nil {
				params["_meta"] = map[string]any{"progressToken": token}
			}
			c.create(t, "parked") // the server's and client's buffers and pools are warm
			_, retained := memDelta(func() {
				for range tasksMade {
					res := c.mustCall(t, "tools/call", params)
					if res["resultType"] != "task" {
						t.Fatalf("not a task: %v", res)
					}
				}
			})
			t.Logf("per running task of %d bytes of arguments: %d bytes retained", n, retained/tasksMade)
			if retained/tasksMade > n*3/2 {
				t.Errorf("per running task of %d bytes of arguments: %d bytes retained, want at most %d", n, retained/tasksMade, n*3/2)
			}
		})
	}
}
