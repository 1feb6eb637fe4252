package otelmcp_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/tasks"
)

func ExampleNewMiddleware() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "traced"}, nil)
	srv.Use(otelmcp.NewMiddleware(otelmcp.WithTracerProvider(tp))) // outermost
	srv.UseList(otelmcp.NewListMiddleware(otelmcp.WithTracerProvider(tp)))
	srv.Add(newTool("greet", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return text("hello"), nil
	}))

	cs, _ := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
	defer cs.Close()
	cs.ListTools(context.Background(), nil)
	cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet"})
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanKind())
	}
	// Output:
	// tools/list server
	// tools/call greet server
}

// Instrument traces every method a server answers, in one call.
func ExampleInstrument() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "traced"}, nil)
	otelmcp.Instrument(srv, otelmcp.WithTracerProvider(tp)) // before the rest of srv.Use
	srv.Add(newTool("greet", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return text("hello"), nil
	}))

	cs, _ := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
	defer cs.Close()
	cs.Ping(context.Background(), nil)
	cs.ListTools(context.Background(), nil)
	cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet"})
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanKind())
	}
	// Output:
	// server/discover server
	// ping server
	// tools/list server
	// tools/call greet server
}

// The work of a task is traced apart from the call that created it, in a
// trace of its own that links to the call's.
func ExampleNewTaskMiddleware() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	m := tasks.NewManager(nil)
	report := tasks.Tool(newTool("report", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return text("42 pages"), nil
	}), m, &tasks.ToolOptions{
		Middleware: []mcpkit.Middleware{otelmcp.NewTaskMiddleware(otelmcp.WithTracerProvider(tp))}, // first
	})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "traced"}, nil)
	srv.Use(otelmcp.NewMiddleware(otelmcp.WithTracerProvider(tp)))
	srv.Add(report)

	// A call from a client with the tasks extension (2026-07-28, through
	// the server's chain without a transport) creates a task.
	h, _ := srv.Handler("report")
	h.ServeTool(context.Background(), &mcpkit.Request{Tool: report, Call: &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
		Name: "report",
		Meta: mcp.Meta{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}},
		},
	}}})
	m.Shutdown(context.Background()) // waits for the work
	for _, s := range spans.Ended() {
		if len(s.Links()) > 0 {
			fmt.Println(s.Name(), s.SpanKind(), "linked to the call:", s.Links()[0].SpanContext.TraceID() != s.SpanContext().TraceID())
		}
	}
	// Output:
	// tools/call report (task) internal linked to the call: true
}
