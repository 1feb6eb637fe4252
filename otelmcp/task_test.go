package otelmcp_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/tasks"
)

// TestTaskMiddleware: the work of a task has a span of its own, the root
// of a new trace, linked to the span of the tools/call that created the
// task; a call served synchronously has only the call's span.
func TestTaskMiddleware(t *testing.T) {
	tel := newTelemetry()
	m := tasks.NewManager(nil)
	ids := make(chan string, 1)
	tool := tasks.Tool(newTool("report", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		if info, ok := tasks.InfoFromContext(ctx); ok {
			ids <- info.ID
		}
		return nil, mcpkit.ToolErrorf("no data for %s", "2026-01")
	}), m, &tasks.ToolOptions{Middleware: []mcpkit.Middleware{otelmcp.NewTaskMiddleware(otelmcp.WithTracerProvider(tel.tp))}})
	// The server's chain, without a transport.
	h := mcpkit.Chain(tel.middleware())(tool.Handler)
	call := func(declared bool) error {
		caps := map[string]any{}
		if declared {
			caps["extensions"] = map[string]any{tasks.ExtensionID: map[string]any{}}
		}
		req := &mcpkit.Request{Tool: tool, Call: &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "report", Meta: mcp.Meta{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": caps,
		}}}}
		_, err := h.ServeTool(t.Context(), req)
		return err
	}

	if err := call(true); err != nil {
		t.Fatal(err)
	}
	id := <-ids
	if err := m.Shutdown(t.Context()); err != nil { // the work has returned, its span ended
		t.Fatal(err)
	}
	spans := tel.spans.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the call's and the task's", len(spans))
	}
	created, work := spans[0], spans[1] // the work may end before the call's span
	if created.Name() != "tools/call report" {
		created, work = work, created
	}
	if created.Name() != "tools/call report" || work.Name() != "tools/call report (task)" {
		t.Fatalf("spans %q, %q", created.Name(), work.Name())
	}
	if work.Parent().IsValid() || work.SpanContext().TraceID() == created.SpanContext().TraceID() {
		t.Errorf("the task's span is not the root of a trace of its own: parent %v", work.Parent())
	}
	if links := work.Links(); len(links) != 1 || !links[0].SpanContext.Equal(created.SpanContext()) {
		t.Errorf("the task's span links %+v, want the creating call's span %v", links, created.SpanContext())
	}
	a := attrs(work.Attributes())
	if work.SpanKind() != trace.SpanKindInternal || a["mcpkit.task.id"] != id || a["gen_ai.tool.name"] != "report" || a["error.type"] != "tool_error" {
		t.Errorf("the task's span: kind %v, attributes %v", work.SpanKind(), a)
	}
	if a := attrs(created.Attributes()); a["error.type"] != "" {
		t.Errorf("the creating call failed: %v", a)
	}

	// After Shutdown, the tool serves calls synchronously: not a task.
	tel.spans.Reset()
	call(true) // the tool error of the work, now the call's
	call(false)
	if n := len(tel.spans.Ended()); n != 2 {
		t.Errorf("%d spans for two synchronous calls", n)
	}
	for _, s := range tel.spans.Ended() {
		if s.Name() != "tools/call report" {
			t.Errorf("a synchronous call has the span %q", s.Name())
		}
	}
}

// With no trace around the creating call, the task's span has no link.
func TestTaskMiddlewareUntracedCall(t *testing.T) {
	spans := newTelemetry()
	m := tasks.NewManager(nil)
	tool := tasks.Tool(newTool("report", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return text("done"), nil
	}), m, &tasks.ToolOptions{Middleware: []mcpkit.Middleware{otelmcp.NewTaskMiddleware(otelmcp.WithTracerProvider(spans.tp))}})
	req := &mcpkit.Request{Tool: tool, Call: &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "report", Meta: mcp.Meta{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}},
	}}}}
	if _, err := tool.Handler.ServeTool(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if err := m.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	ended := spans.spans.Ended()
	if len(ended) != 1 || len(ended[0].Links()) != 0 || ended[0].Status().Code != 0 {
		t.Errorf("spans %v", ended)
	}
}
