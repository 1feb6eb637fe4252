package otelmcp_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/otelmcp"
)

// BenchmarkMiddleware compares a call through the middleware, with the no-op
// providers and with the SDK recording every span and metric, against the
// bare handler.
func BenchmarkMiddleware(b *testing.B) {
	tl := newTool("t", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("x"), nil })
	req := mcpkittest.NewRequest(tl, map[string]int{"a": 1})
	sdk := otelmcp.NewMiddleware(
		otelmcp.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))),
		otelmcp.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))))
	for _, bc := range []struct {
		name string
		h    mcpkit.Handler
	}{
		{"bare", tl.Handler},
		{"noop", otelmcp.NewMiddleware(otelmcp.WithTracerProvider(tracenoop.NewTracerProvider()), otelmcp.WithMeterProvider(noop.NewMeterProvider()))(tl.Handler)},
		{"sdk", sdk(tl.Handler)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.h.ServeTool(context.Background(), req)
			}
		})
	}
}
