package tasks

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/mcpkit/mcpkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// TestInfo: the work of a task finds the task's ID and the span context of
// the call that created it in its context; a call served synchronously
// finds no Info.
func TestInfo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewManager(nil)
		infos := make(chan Info, 2)
		tt := Tool(&mcpkit.Tool{Tool: mcp.Tool{Name: "probe"}, Handler: mcpkit.HandlerFunc(
			func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
				info, ok := InfoFromContext(ctx)
				if !ok {
					info.ID = "none"
				}
				infos <- info
				return &mcp.CallToolResult{}, nil
			})}, m, nil)
		caller := trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
		ctx := trace.ContextWithSpanContext(t.Context(), caller)

		res, err := tt.Handler.ServeTool(ctx, declaredRequest(tt))
		if err != nil {
			t.Fatal(err)
		}
		if got := <-infos; got.ID != createdTask(res).TaskID || !got.Origin.Equal(caller) {
			t.Errorf("the task's work got %+v, want ID %s and origin %v", got, createdTask(res).TaskID, caller)
		}

		plain := declaredRequest(tt)
		plain.Call.Params.Meta = nil // no extension declared: served synchronously
		if _, err := tt.Handler.ServeTool(ctx, plain); err != nil {
			t.Fatal(err)
		}
		if got := <-infos; got.ID != "none" {
			t.Errorf("a synchronous call got %+v", got)
		}
		if _, ok := InfoFromContext(ContextWithInfo(t.Context(), Info{ID: "x"})); !ok {
			t.Error("ContextWithInfo: no Info")
		}
		m.Shutdown(t.Context())
	})
}
