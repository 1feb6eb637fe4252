package tasks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/tasks"
)

// post sends one 2026-07-28 request that declares the tasks extension, as
// a client of the extension does, and returns its result.
func post(url, method string, params map[string]any) map[string]any {
	res, _ := postAs(url, method, params, true)
	return res
}

// postAs sends one 2026-07-28 request, which declares the tasks extension
// if declared says so, and returns its result and error.
func postAs(url, method string, params map[string]any, declared bool) (map[string]any, map[string]any) {
	caps := map[string]any{}
	if declared {
		caps["extensions"] = map[string]any{tasks.ExtensionID: map[string]any{}}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	for _, k := range []string{"name", "taskId"} { // the routing header of SEP-2243 and SEP-2663
		if v, ok := params[k].(string); ok {
			req.Header.Set("Mcp-Name", v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var msg struct{ Result, Error map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		log.Fatal(err)
	}
	return msg.Result, msg.Error
}

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

	created := post(hs.URL, "tools/call", map[string]any{"name": "report", "arguments": map[string]any{}})
	fmt.Println(created["resultType"], created["status"])
	id := created["taskId"].(string)
	for {
		task := post(hs.URL, "tasks/get", map[string]any{"taskId": id})
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

	call := map[string]any{"name": "export", "arguments": map[string]any{}}
	res, _ := postAs(hs.URL, "tools/call", call, true)
	fmt.Println("with the extension:", res["resultType"])
	_, rpcErr := postAs(hs.URL, "tools/call", call, false)
	fmt.Println("without:", rpcErr["code"])
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
