package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tasks"
)

// call sends one request with c and returns its result.
func call(c *mcpkittest.RawClient, method string, params map[string]any) map[string]any {
	raw, err := c.Call(context.Background(), method, params)
	if err != nil {
		log.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(raw, &res); err != nil {
		log.Fatal(err)
	}
	return res
}

// declaresTasks are the capabilities of a client of the extension.
var declaresTasks = map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}

func Example() {
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reports"},
		&mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(&tasks.Options{PollInterval: 10 * time.Millisecond})
	if err := m.Attach(srv); err != nil {
		log.Fatal(err)
	}
	defer m.Shutdown(context.Background())

	report := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "report", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "42 pages"}}}, nil
		}),
	}
	if err := srv.Add(tasks.Tool(report, m, &tasks.ToolOptions{Timeout: time.Minute})); err != nil {
		log.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(&mcpkit.HTTPOptions{SDK: &mcp.StreamableHTTPOptions{JSONResponse: true}}))
	defer hs.Close()

	// A 2026-07-28 client that declares the extension: the SDK's client
	// does not, and cannot read a task.
	c := &mcpkittest.RawClient{Endpoint: hs.URL, Capabilities: declaresTasks}
	created := call(c, "tools/call", map[string]any{"name": "report", "arguments": map[string]any{}})
	fmt.Println(created["resultType"], created["status"])
	id := created["taskId"].(string)
	for {
		task := call(c, "tasks/get", map[string]any{"taskId": id})
		if task["status"] == "working" {
			time.Sleep(time.Duration(task["pollIntervalMs"].(float64)) * time.Millisecond)
			continue
		}
		result := task["result"].(map[string]any)
		fmt.Println(task["status"], result["content"].([]any)[0].(map[string]any)["text"])
		break
	}
	// Output:
	// task working
	// completed 42 pages
}

// A task-only tool, with a bounded store: a client that declares the
// extension gets a task, one that does not gets JSON-RPC error -32021.
func ExampleTool_required() {
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "exports"},
		&mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(&tasks.Options{
		Store: tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxTasks: 1000}),
		TTL:   24 * time.Hour,
	})
	if err := m.Attach(srv); err != nil {
		log.Fatal(err)
	}
	defer m.Shutdown(context.Background())

	export := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "export", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "exported"}}}, nil
		}),
	}
	if err := srv.Add(tasks.Tool(export, m, &tasks.ToolOptions{Policy: tasks.Required})); err != nil {
		log.Fatal(err)
	}
	hs := httptest.NewServer(srv.HTTPHandler(&mcpkit.HTTPOptions{SDK: &mcp.StreamableHTTPOptions{JSONResponse: true}}))
	defer hs.Close()

	params := map[string]any{"name": "export", "arguments": map[string]any{}}
	res := call(&mcpkittest.RawClient{Endpoint: hs.URL, Capabilities: declaresTasks}, "tools/call", params)
	fmt.Println("with the extension:", res["resultType"])
	_, err := (&mcpkittest.RawClient{Endpoint: hs.URL}).Call(context.Background(), "tools/call", params)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		fmt.Println("without:", rpcErr.Code)
	}
	// Output:
	// with the extension: task
	// without: -32021
}

// Middleware in ToolOptions.Middleware runs with the work, whether it runs
// as a task or, for a client without the extension, synchronously;
// InfoFromContext tells which, and names the task.
func ExampleInfoFromContext() {
	m := tasks.NewManager(nil)
	defer m.Shutdown(context.Background())

	logTasks := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			if info, ok := tasks.InfoFromContext(ctx); ok {
				slog.InfoContext(ctx, "task started", "task", info.ID, "tool", req.Tool.Name)
			}
			return next.ServeTool(ctx, req)
		})
	}
	report := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "report", InputSchema: map[string]any{"type": "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "42 pages"}}}, nil
		}),
	}
	_ = tasks.Tool(report, m, &tasks.ToolOptions{Middleware: []mcpkit.Middleware{logTasks}})
}
