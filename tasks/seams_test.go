package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tasks"
)

// Tests found by trying the seams between tasks and the rest of the engine
// as an outsider would, each through a real client. Each failed before the
// fix it came with.

// TestTaskUpdateAckNotReplacedByRoundRefusal: Ada confirms her delete task
// with a token lacking the admin scope. The round (background work) is
// refused, and the refusal is the task's: the client's tasks/update gets
// the acknowledgement every tasks/update gets, never the round's HTTP 403
// challenge, though the round runs on the context of that request.
func TestTaskUpdateAckNotReplacedByRoundRefusal(t *testing.T) {
	srv, m := bindingServer(t)
	refused := make(chan struct{})
	var once sync.Once
	// Outside the requirement: it sees the round's refusal come back.
	seeRefusal := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := next.ServeTool(ctx, req)
			if errors.Is(err, mcpkit.ErrInsufficientScope) {
				once.Do(func() { close(refused) })
			}
			return res, err
		})
	}
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete"), seeRefusal, mcpkit.RequireScopes("admin")))
	if err := srv.Add(confirming(m, "delete", "deleted", nil)); err != nil {
		t.Fatal(err)
	}
	// The SDK answers tasks/update once the round's refusal is recorded:
	// a scheduling that a loaded server may well have.
	srv.MCPServer().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tasks/update" {
				select {
				case <-refused:
				case <-ctx.Done():
				}
			}
			return res, err
		}
	})
	url := serveBinding(t, srv)
	admin := rpc{url: url, token: "ada-admin-token", declared: true}
	id := startTask(t, admin, "delete", map[string]any{"repo": "acme/site"})

	raw := mcpkittest.RawClient{Endpoint: url, Token: "ada-plain-token",
		Capabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
	res, err := raw.Call(t.Context(), "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept"}}})
	var ack struct{ ResultType string }
	if err != nil {
		t.Errorf("tasks/update of a task whose round is refused: %v; want the acknowledgement every tasks/update gets (the round's refusal belongs to the task)", err)
	} else if json.Unmarshal(res, &ack) != nil || ack.ResultType != "complete" {
		t.Errorf("tasks/update = %s, want the acknowledgement", res)
	}
}

// TestTaskCreationNotReplacedByWorkRefusal: a task tool requires the
// admin scope inside the task (ToolOptions.Middleware). Ada calls it with
// a plain token: a task is created and its work, refused at once, runs on
// the call's context; the client gets the CreateTaskResult, and the
// refusal is the task's own outcome, never the call's HTTP 403.
func TestTaskCreationNotReplacedByWorkRefusal(t *testing.T) {
	srv, m := bindingServer(t)
	refused := make(chan struct{})
	var once sync.Once
	seeRefusal := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := next.ServeTool(ctx, req)
			if errors.Is(err, mcpkit.ErrInsufficientScope) {
				once.Do(func() { close(refused) })
			}
			return res, err
		})
	}
	work := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil
	})
	tl := tasks.Tool(&mcpkit.Tool{Tool: mcp.Tool{Name: "delete", InputSchema: objectSchema}, Handler: work}, m,
		&tasks.ToolOptions{Middleware: []mcpkit.Middleware{seeRefusal, mcpkit.RequireScopes("admin")}})
	if err := srv.Add(tl); err != nil {
		t.Fatal(err)
	}
	// The call returns once the work was refused: a scheduling that a
	// loaded server may well have (the work refuses at once).
	srv.Use(func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := next.ServeTool(ctx, req)
			select {
			case <-refused:
			case <-time.After(10 * time.Second): // a bound: the work refuses at once
			}
			return res, err
		})
	})
	url := serveBinding(t, srv)
	raw := mcpkittest.RawClient{Endpoint: url, Token: "ada-plain-token",
		Capabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
	res, err := raw.Call(t.Context(), "tools/call", map[string]any{"name": "delete", "arguments": map[string]any{}})
	var created struct{ ResultType string }
	if err != nil || json.Unmarshal(res, &created) != nil || created.ResultType != "task" {
		t.Errorf("tools/call delete (a task tool whose work requires admin) with a plain token = %s, %v; want the CreateTaskResult: the refusal is the task's outcome", res, err)
	}
}
