package tasks_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/mcpkit/mcpkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Once the call that created a task has been answered, the running task
// keeps nothing of the call's session, which on a stateless server holds
// the call's whole message (a copy of the arguments the task store's
// quotas do not count): also when the call asked for progress, whose
// sender held the session for as long as the task ran. Progress has no
// one to go to once the call is answered; the work's reports become the
// task's status message (TestTaskProgress).
func TestTaskDropsCallSession(t *testing.T) {
	for _, token := range []any{nil, "p-1", 7} {
		t.Run(fmt.Sprint(token), func(t *testing.T) {
			f := newFixture(t, nil)
			var (
				mu       sync.Mutex
				captured bool
				session  weak.Pointer[mcp.ServerSession]
			)
			f.srv.Use(func(next mcpkit.Handler) mcpkit.Handler {
				return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
					mu.Lock()
					captured, session = req.Session() != nil, weak.Make(req.Session())
					mu.Unlock()
					return next.ServeTool(ctx, req)
				})
			})
			alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}
			params := map[string]any{"name": "progressing", "arguments": map[string]any{}}
			if token != nil {
				params["_meta"] = map[string]any{"progressToken": token}
			}
			res := alice.mustCall(t, "tools/call", params)
			id, _ := res["taskId"].(string)
			if res["resultType"] != "task" || id == "" {
				t.Fatalf("not a CreateTaskResult: %v", res)
			}
			<-f.started // the work runs, after its progress report
			mu.Lock()
			ok, s := captured, session
			mu.Unlock()
			if !ok {
				t.Fatal("the call had no session")
			}
			// The server's goroutines may still be finishing the answer:
			// a safety net, not a measure.
			collected := false
			for deadline := time.Now().Add(5 * time.Second); !collected && time.Now().Before(deadline); {
				runtime.GC()
				if collected = s.Value() == nil; !collected {
					time.Sleep(10 * time.Millisecond)
				}
			}
			if !collected {
				t.Error("the running task keeps the session of the call that created it")
			}
			close(f.release)
			if got := alice.wait(t, id); got["status"] != "completed" {
				t.Errorf("task: %v", got)
			}
		})
	}
}
