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
