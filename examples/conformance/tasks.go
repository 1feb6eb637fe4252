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
// io.modelcontextprotocol/tasks). confirm_delete and multi_input, which
// park a task for input (input_required inside a task), are not here: the
// tasks package does not support that yet.
const (
	greetSchema       = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	slowComputeSchema = `{"type":"object","properties":{"seconds":{"type":"number","minimum":0},"label":{"type":"string"}}}`
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
		// The suite wants failing_job task-only (tasks-required-task-error)
		// and also calls the first listed tool, which mcpkit's sorted list
		// makes failing_job, without the extension, expecting an answer
		// (http-header-validation). The second passed before tasks, so
		// failing_job runs synchronously for clients without the extension.
		tasks.Tool(tool("failing_job", "A job that fails with a tool error after a second.", noArgsSchema, failingJob),
			m, &tasks.ToolOptions{Middleware: inTask}),
		tasks.Tool(tool("protocol_error_job", "A job that fails with a JSON-RPC error, so its task fails.", noArgsSchema, protocolErrorJob),
			m, &tasks.ToolOptions{Middleware: inTask}),
	}
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
