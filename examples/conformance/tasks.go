package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tasks"
)

// The fixtures of the suite's tasks scenarios (SEP-2663, extension
// io.modelcontextprotocol/tasks).
const (
	greetSchema         = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	slowComputeSchema   = `{"type":"object","properties":{"seconds":{"type":"number","minimum":0},"label":{"type":"string"}}}`
	confirmDeleteSchema = `{"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]}`
	confirmDeleteAnswer = `{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`
	nameConfirmSchema   = `{"type":"object","properties":{"name":{"type":"string"},"confirm":{"type":"boolean"}}}`
)

// taskTools returns the fixtures, the task-supporting ones running as
// tasks of m. Their work is masked like any other call's: masking outside
// the task boundary does not see the work's outcome.
func taskTools(m *tasks.Manager) []*mcpkit.Tool {
	inTask := []mcpkit.Middleware{middleware.MaskErrors(nil)}
	tool := func(name, description, schema string, h mcpkit.HandlerFunc) *mcpkit.Tool {
		return &mcpkit.Tool{Tool: mcp.Tool{Name: name, Description: description, InputSchema: json.RawMessage(schema)}, Handler: h}
	}
	return []*mcpkit.Tool{
		tool("greet", "Greets by name, synchronously.", greetSchema, greet),
		tasks.Tool(tool("slow_compute", "Waits the given seconds, as a task for clients of the tasks extension, then reports it.", slowComputeSchema, slowCompute),
			m, &tasks.ToolOptions{Middleware: inTask}),
		// Task-only: a client without the extension gets -32021
		// (tasks-required-task-error).
		tasks.Tool(tool("failing_job", "A job that fails with a tool error after a second.", noArgsSchema, failingJob),
			m, &tasks.ToolOptions{Middleware: inTask, Policy: tasks.Required}),
		tasks.Tool(tool("protocol_error_job", "A job that fails with a JSON-RPC error, so its task fails.", noArgsSchema, protocolErrorJob),
			m, &tasks.ToolOptions{Middleware: inTask}),
		// Tasks that wait for input (tasks/update).
		tasks.Tool(tool("confirm_delete", "Asks to confirm the deletion of a file, as a task that waits for the answer.", confirmDeleteSchema, confirmDelete),
			m, &tasks.ToolOptions{Middleware: inTask}),
		tasks.Tool(tool("multi_input", "Asks two questions at once, as a task that waits for both answers.", noArgsSchema, multiInput),
			m, &tasks.ToolOptions{Middleware: inTask}),
		// Input gathered synchronously (SEP-2322), then a task.
		tasks.Tool(tool("test_tool_with_task", "Asks for the caller's name synchronously, then greets them in a task.", noArgsSchema, greetAsked),
			m, &tasks.ToolOptions{Middleware: inTask, Synchronous: func(req *mcpkit.Request) bool {
				return req.Call == nil || req.Call.Params.InputResponses == nil
			}}),
	}
}

func confirmDelete(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	var in struct{ Filename string }
	if err := json.Unmarshal(req.Arguments, &in); err != nil {
		return nil, err
	}
	answer, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "confirm")
	if !ok {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			"confirm": &mcp.ElicitParams{Message: fmt.Sprintf("Delete %s?", in.Filename), RequestedSchema: json.RawMessage(confirmDeleteAnswer)},
		}}, nil
	}
	if confirmed, _ := answer.Content["confirm"].(bool); answer.Action != "accept" || !confirmed {
		return textResult(fmt.Sprintf("Kept %s.", in.Filename)), nil
	}
	return textResult(fmt.Sprintf("Deleted %s.", in.Filename)), nil
}

func multiInput(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	first, ok1 := mcpkit.InputResponse[*mcp.ElicitResult](req, "first")
	second, ok2 := mcpkit.InputResponse[*mcp.ElicitResult](req, "second")
	if !ok1 || !ok2 {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			"first":  &mcp.ElicitParams{Message: "First question?", RequestedSchema: json.RawMessage(nameConfirmSchema)},
			"second": &mcp.ElicitParams{Message: "Second question?", RequestedSchema: json.RawMessage(nameConfirmSchema)},
		}}, nil
	}
	return textResult(fmt.Sprintf("first: %s, second: %s", first.Action, second.Action)), nil
}

func greetAsked(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if name, ok := formString(req, "user_name", "name"); ok {
		return textResult(fmt.Sprintf("Hello, %s!", name)), nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"user_name": askName("What is your name?")}}, nil
}

func greet(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	var in struct{ Name string }
	if err := json.Unmarshal(req.Arguments, &in); err != nil {
		return nil, err
	}
	return textResult(fmt.Sprintf("Hello, %s!", in.Name)), nil
}

func slowCompute(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	var in struct {
		Seconds float64
		Label   string
	}
	if err := json.Unmarshal(req.Arguments, &in); err != nil {
		return nil, err
	}
	if err := sleep(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
		return nil, err
	}
	return textResult(fmt.Sprintf("computed %q in %gs", in.Label, in.Seconds)), nil
}

func failingJob(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
	if err := sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	return nil, mcpkit.ToolErrorf("the job failed")
}

func protocolErrorJob(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
	return nil, mcpkit.NewProtocolError(-32603, "the job's backend is unavailable")
}
