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

// Tests of the second attack round, each through a real client.

// TestTaskCreationNotReplacedByWorkRefusal: a task tool requires the
// admin scope inside the task (ToolOptions.Middleware). Ada calls it with
// a plain token: a task is created and its work, refused at once, runs on
// the call's context; the client gets HTTP 403 instead of the
// CreateTaskResult, though the task exists and fails on its own.
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
