package otelmcp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/tools"
)

// telemetry is an OTel SDK setup whose spans and metrics a test reads.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry() *telemetry {
	t := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	t.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(t.spans))
	t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(t.reader))
	return t
}

func (tel *telemetry) middleware(opts ...otelmcp.Option) mcpkit.Middleware {
	return otelmcp.NewMiddleware(append([]otelmcp.Option{
		otelmcp.WithTracerProvider(tel.tp),
		otelmcp.WithMeterProvider(tel.mp),
		otelmcp.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
	}, opts...)...)
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

var errDB = errors.New("dial tcp 10.0.0.7:5432: connection refused")

func newTool(name string, h mcpkit.HandlerFunc) *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: &jsonschema.Schema{Type: "object"}}, Handler: h}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// server has one tool per outcome, behind the recommended chain, with the
// instrumentation outermost.
func server(tel *telemetry, opts ...otelmcp.Option) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "traced"}, nil)
	srv.Use(tel.middleware(opts...), middleware.Recommended(&middleware.RecommendedOptions{Timeout: time.Second}))
	srv.Add(
		newTool("ok", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			trace.SpanFromContext(ctx).SetAttributes(attribute.String("app.city", "Oslo"))
			l, _ := otelmcp.LabelerFromContext(ctx)
			l.Add(attribute.String("app.tier", "gold"))
			return text("fine"), nil
		}),
		newTool("tool_error", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, mcpkit.ToolErrorf("no city named %q", "Atlantis")
		}),
		newTool("fatal", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, mcpkit.NewToolError(errors.New("read-only"), mcpkit.Fatal)
		}),
		newTool("internal", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, errDB }),
		newTool("panics", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { panic("boom") }),
		newTool("slow", func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}),
		newTool("invalid_params", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, mcpkit.NewProtocolError(-32602, "bad cursor")
		}),
		newTool("server_fault", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, mcpkit.NewProtocolError(-32603, "internal")
		}),
	)
	return srv
}

func TestSpans(t *testing.T) {
	tests := []struct {
		tool    string
		attrs   map[string]string // besides the common ones
		status  codes.Code
		absent  []string
		desc    string
		wireErr bool
	}{
		{"ok", map[string]string{"app.city": "Oslo"}, codes.Unset, []string{"error.type", "mcpkit.error.class"}, "", false},
		{"tool_error", map[string]string{"error.type": "tool_error", "mcpkit.error.class": "retryable", "mcpkit.outcome": "tool_error"}, codes.Error, nil, "tool_error", false},
		{"fatal", map[string]string{"error.type": "tool_error", "mcpkit.error.class": "fatal"}, codes.Error, nil, "tool_error", false},
		{"internal", map[string]string{"error.type": "tool_error", "mcpkit.error.class": "fatal", "mcpkit.outcome": "error"}, codes.Error, nil, "error", false},
		{"panics", map[string]string{"error.type": "tool_error", "mcpkit.error.class": "fatal", "mcpkit.outcome": "panic"}, codes.Error, nil, "panic", false},
		{"slow", map[string]string{"error.type": "tool_error", "mcpkit.error.class": "retryable", "mcpkit.outcome": "timeout"}, codes.Error, nil, "timeout", false},
		{"invalid_params", map[string]string{"error.type": "-32602", "rpc.response.status_code": "-32602"}, codes.Unset, nil, "", true},
		{"server_fault", map[string]string{"error.type": "-32603", "rpc.response.status_code": "-32603"}, codes.Error, nil, "internal", true},
	}
	synctest.Test(t, func(t *testing.T) {
		tel := newTelemetry()
		ts := mcpkittest.NewInMemoryServer(t, server(tel), nil)
		for _, tt := range tests {
			tel.spans.Reset()
			_, err := ts.CallTool(t.Context(), tt.tool, nil)
			if (err != nil) != tt.wireErr {
				t.Fatalf("%s: JSON-RPC error %v, want one: %v", tt.tool, err, tt.wireErr)
			}
			ended := tel.spans.Ended()
			if len(ended) != 1 {
				t.Fatalf("%s: %d spans, want exactly 1", tt.tool, len(ended))
			}
			s := ended[0]
			got := attrs(s.Attributes())
			want := map[string]string{
				"mcp.method.name": "tools/call", "gen_ai.tool.name": tt.tool, "gen_ai.operation.name": "execute_tool",
				"mcp.protocol.version": "2026-07-28", "network.transport": "pipe",
			}
			for k, v := range tt.attrs {
				want[k] = v
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %s = %q, want %q (all: %v)", tt.tool, k, got[k], v, got)
				}
			}
			for _, k := range append(tt.absent, "mcp.session.id", "gen_ai.tool.call.arguments") {
				if _, ok := got[k]; ok {
					t.Errorf("%s: has %s", tt.tool, k)
				}
			}
			if s.Name() != "tools/call "+tt.tool || s.SpanKind() != trace.SpanKindServer {
				t.Errorf("%s: span %q of kind %v", tt.tool, s.Name(), s.SpanKind())
			}
			if s.Status().Code != tt.status || tt.desc != "" && s.Status().Description != tt.desc {
				t.Errorf("%s: status %v %q, want %v %q", tt.tool, s.Status().Code, s.Status().Description, tt.status, tt.desc)
			}
			if tt.tool == "internal" && strings.Contains(s.Status().Description+got["error.type"], "10.0.0.7") {
				t.Error("the masked error's text is on the span")
			}
		}
		time.Sleep(2 * time.Second) // let the abandoned slow handler end
	})
}

func TestMetric(t *testing.T) {
	tel := newTelemetry()
	ts := mcpkittest.NewInMemoryServer(t, server(tel), nil)
	for _, name := range []string{"ok", "ok", "tool_error"} {
		ts.CallTool(t.Context(), name, nil)
	}
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	var hist metricdata.Histogram[float64]
	found := false
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelmcp.ScopeName || sm.Scope.Version != otelmcp.Version {
			continue
		}
		for _, m := range sm.Metrics {
			if m.Name == "mcp.server.operation.duration" && m.Unit == "s" {
				hist, found = m.Data.(metricdata.Histogram[float64])
			}
		}
	}
	if !found {
		t.Fatalf("no mcp.server.operation.duration histogram in %+v", rm.ScopeMetrics)
	}
	counts := map[string]uint64{}
	for _, dp := range hist.DataPoints {
		a := attrs(dp.Attributes.ToSlice())
		counts[a["gen_ai.tool.name"]+"/"+a["error.type"]+"/"+a["app.tier"]] += dp.Count
		if _, ok := a["mcp.session.id"]; ok {
			t.Error("the session id is a metric attribute")
		}
		if len(dp.Bounds) != 14 || dp.Bounds[0] != 0.01 || dp.Bounds[13] != 300 {
			t.Errorf("bucket boundaries %v", dp.Bounds)
		}
	}
	if counts["ok//gold"] != 2 || counts["tool_error/tool_error/"] != 1 {
		t.Errorf("data points: %v", counts)
	}
}

// TestParentFromMeta checks that the trace context in params._meta is the
// span's parent, and that the HTTP server span around the SDK handler (as
// otelhttp would start) is linked.
func TestParentFromMeta(t *testing.T) {
	tel := newTelemetry()
	srv := server(tel)
	httpTracer := tel.tp.Tracer("http")
	handler := srv.HTTPHandler(&mcpkit.HTTPOptions{SDK: &mcp.StreamableHTTPOptions{JSONResponse: true}})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, span := httpTracer.Start(r.Context(), "POST /mcp", trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		handler.ServeHTTP(w, r.WithContext(ctx))
	}))
	defer hs.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tel.spans.Reset()
	params := &mcp.CallToolParams{Name: "ok", Meta: mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01", "baggage": "user=ada"}}
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	var mcpSpan, httpSpan sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		switch s.Name() {
		case "tools/call ok":
			mcpSpan = s
		case "POST /mcp":
			httpSpan = s // the last POST is the call's
		}
	}
	if mcpSpan == nil || httpSpan == nil {
		t.Fatalf("spans: %v", tel.spans.Ended())
	}
	if mcpSpan.Parent().TraceID().String() != traceID || mcpSpan.Parent().SpanID().String() != parentID || !mcpSpan.Parent().IsRemote() {
		t.Errorf("parent = %v, want the traceparent of _meta", mcpSpan.Parent())
	}
	links := mcpSpan.Links()
	if len(links) != 1 || links[0].SpanContext.SpanID() != httpSpan.SpanContext().SpanID() {
		t.Errorf("links = %+v, want the HTTP span %v", links, httpSpan.SpanContext().SpanID())
	}
	if got := attrs(mcpSpan.Attributes()); got["network.transport"] != "tcp" {
		t.Errorf("network.transport = %q over HTTP", got["network.transport"])
	}

	// Without _meta, the HTTP span is the parent and nothing is linked.
	tel.spans.Reset()
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ok"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range tel.spans.Ended() {
		if s.Name() == "tools/call ok" && (len(s.Links()) != 0 || s.Parent().IsRemote() || !s.Parent().IsValid()) {
			t.Errorf("without _meta: parent %v, links %v", s.Parent(), s.Links())
		}
	}
}

func TestSessionAndContentOptions(t *testing.T) {
	tel := newTelemetry()
	ts := mcpkittest.NewServer(t, server(tel, otelmcp.WithToolCallContent(true, true)), nil) // stateful: a session
	tel.spans.Reset()
	if _, err := ts.CallTool(t.Context(), "ok", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	got := attrs(tel.spans.Ended()[0].Attributes())
	if got["mcp.session.id"] != ts.Session.ID() || got["mcp.session.id"] == "" || got["mcp.protocol.version"] != "2025-11-25" {
		t.Errorf("session %q (want %q), version %q", got["mcp.session.id"], ts.Session.ID(), got["mcp.protocol.version"])
	}
	if got["gen_ai.tool.call.arguments"] != `{"n":1}` || !strings.Contains(got["gen_ai.tool.call.result"], "fine") {
		t.Errorf("arguments %q, result %q", got["gen_ai.tool.call.arguments"], got["gen_ai.tool.call.result"])
	}
}

func TestFilterAndSpanName(t *testing.T) {
	tel := newTelemetry()
	srv := server(tel,
		otelmcp.WithFilter(func(r *mcpkit.Request) bool { return r.Tool.Name != "tool_error" }),
		otelmcp.WithSpanNameFormatter(func(r *mcpkit.Request) string { return "call " + r.Tool.Name }))
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	ts.CallTool(t.Context(), "tool_error", nil)
	ts.CallTool(t.Context(), "ok", nil)
	ended := tel.spans.Ended()
	if len(ended) != 1 || ended[0].Name() != "call ok" {
		t.Errorf("spans %v, want one named %q", ended, "call ok")
	}
}

// TestNoopAllocations checks that with the no-op providers the middleware
// costs no allocation on a call.
func TestNoopAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocations")
	}
	tl := newTool("t", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("x"), nil })
	bare := tl.Handler
	wrapped := otelmcp.NewMiddleware(otelmcp.WithTracerProvider(tracenoop.NewTracerProvider()), otelmcp.WithMeterProvider(noopMeter()))(bare)
	req := mcpkittest.NewRequest(tl, nil)
	base := testing.AllocsPerRun(100, func() { bare.ServeTool(context.Background(), req) })
	got := testing.AllocsPerRun(100, func() { wrapped.ServeTool(context.Background(), req) })
	// The no-op tracer's own: it puts its span in the context.
	noopOwn := testing.AllocsPerRun(100, func() { tracenoop.NewTracerProvider().Tracer("x").Start(context.Background(), "x") })
	if got != base+noopOwn {
		t.Errorf("%v allocations per call with no-op providers; %v without the middleware, %v of them the no-op tracer's", got, base, noopOwn)
	}
}

// TestListSpans checks that tools/list is traced too, in the trace the
// client gives in _meta, so that a trace shows a list and a call.
func TestListSpans(t *testing.T) {
	tel := newTelemetry()
	srv := server(tel)
	srv.UseList(otelmcp.NewListMiddleware(otelmcp.WithTracerProvider(tel.tp), otelmcp.WithMeterProvider(tel.mp),
		otelmcp.WithPropagators(propagation.TraceContext{})))
	ts := mcpkittest.NewServer(t, srv, nil)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	meta := mcp.Meta{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}
	tel.spans.Reset()
	if _, err := ts.Session.ListTools(t.Context(), &mcp.ListToolsParams{Meta: meta}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "ok", Meta: meta}); err != nil {
		t.Fatal(err)
	}
	names := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range tel.spans.Ended() {
		names[s.Name()] = s
	}
	list, call := names["tools/list"], names["tools/call ok"]
	if list == nil || call == nil {
		t.Fatalf("spans %v", tel.spans.Ended())
	}
	for _, s := range []sdktrace.ReadOnlySpan{list, call} {
		if s.SpanContext().TraceID().String() != traceID || s.SpanKind() != trace.SpanKindServer {
			t.Errorf("%s: trace %v kind %v", s.Name(), s.SpanContext().TraceID(), s.SpanKind())
		}
	}
	got := attrs(list.Attributes())
	if got["mcp.method.name"] != "tools/list" || got["mcp.protocol.version"] != "2025-11-25" || got["network.transport"] != "tcp" || got["mcp.session.id"] == "" {
		t.Errorf("list attributes %v", got)
	}
	if list.Status().Code != codes.Unset {
		t.Errorf("list status %v", list.Status())
	}
}

// TestReceivingMiddleware checks that the other methods a client sends are
// traced, and that tools/call is traced once when both are installed.
func TestReceivingMiddleware(t *testing.T) {
	tel := newTelemetry()
	srv := server(tel)
	srv.MCPServer().AddPrompt(&mcp.Prompt{Name: "greeting"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
	})
	srv.MCPServer().AddReceivingMiddleware(otelmcp.NewReceivingMiddleware(otelmcp.WithTracerProvider(tel.tp), otelmcp.WithMeterProvider(tel.mp)))
	ts := mcpkittest.NewServer(t, srv, nil)
	tel.spans.Reset()
	if _, err := ts.Session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greeting"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "missing"}); err == nil {
		t.Fatal("a missing prompt was found")
	}
	if err := ts.Session.Ping(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	ts.CallTool(t.Context(), "ok", nil)
	count := map[string]int{}
	for _, s := range tel.spans.Ended() {
		count[s.Name()]++
		a := attrs(s.Attributes())
		switch s.Name() {
		case "prompts/get greeting":
			if a["gen_ai.prompt.name"] != "greeting" || a["mcp.method.name"] != "prompts/get" || a["mcp.session.id"] == "" || s.Status().Code != codes.Unset {
				t.Errorf("prompt span %v %v", a, s.Status())
			}
		case "prompts/get missing":
			if a["error.type"] == "" || a["rpc.response.status_code"] != a["error.type"] {
				t.Errorf("failed prompt span %v", a)
			}
		}
	}
	if count["prompts/get greeting"] != 1 || count["prompts/get missing"] != 1 || count["ping"] != 1 || count["tools/call ok"] != 1 {
		t.Errorf("spans by name: %v", count)
	}
}

// An initialize span carries the protocol version the session negotiated.
func TestInitializeSpanVersion(t *testing.T) {
	tel := newTelemetry()
	srv := server(tel)
	srv.MCPServer().AddReceivingMiddleware(otelmcp.NewReceivingMiddleware(otelmcp.WithTracerProvider(tel.tp), otelmcp.WithMeterProvider(tel.mp)))
	mcpkittest.NewServer(t, srv, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion})
	found := false
	for _, s := range tel.spans.Ended() {
		if s.Name() != "initialize" {
			continue
		}
		found = true
		if v := attrs(s.Attributes())["mcp.protocol.version"]; v != mcpkittest.StatefulVersion {
			t.Errorf("initialize span: mcp.protocol.version = %q, want %q", v, mcpkittest.StatefulVersion)
		}
	}
	if !found {
		t.Fatal("no initialize span")
	}
}

// Instrument traces tools/call, tools/list and the other methods in one
// call, with the tools/call span outermost.
func TestInstrument(t *testing.T) {
	tel := newTelemetry()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "traced"}, nil)
	otelmcp.Instrument(srv, otelmcp.WithTracerProvider(tel.tp), otelmcp.WithMeterProvider(tel.mp))
	var inner trace.SpanContext
	srv.Use(func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			inner = trace.SpanContextFromContext(ctx)
			return next.ServeTool(ctx, req)
		})
	})
	srv.Add(newTool("ok", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("fine"), nil }))
	ts := mcpkittest.NewServer(t, srv, nil)
	tel.spans.Reset()
	if err := ts.Session.Ping(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Session.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.CallTool(t.Context(), "ok", nil); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, s := range tel.spans.Ended() {
		count[s.Name()]++
		if s.Name() == "tools/call ok" && s.SpanContext().SpanID() != inner.SpanID() {
			t.Errorf("the middleware after Instrument ran outside the tools/call span")
		}
	}
	// The session's notifications/initialized may end after Reset or not.
	delete(count, "notifications/initialized")
	if count["ping"] != 1 || count["tools/list"] != 1 || count["tools/call ok"] != 1 || len(count) != 3 {
		t.Errorf("spans by name: %v; want one each of ping, tools/list, tools/call ok", count)
	}
}

// Progress reports become events of the tools/call span, at most
// MaxProgressEvents of them, with the count of all in an attribute.
func TestProgressEvents(t *testing.T) {
	tel := newTelemetry()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "traced"}, nil)
	srv.Use(tel.middleware())
	srv.Add(newTool("long", func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
		for i := 1; i <= 100; i++ {
			mcpkit.ReportProgress(ctx, float64(i), 100, "step")
		}
		return text("done"), nil
	}))
	if _, err := mcpkittest.ServeTool(t.Context(), srv, "long", nil); err != nil {
		t.Fatal(err)
	}
	spans := tel.spans.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	events := spans[0].Events()
	if len(events) != otelmcp.MaxProgressEvents {
		t.Fatalf("%d events, want %d", len(events), otelmcp.MaxProgressEvents)
	}
	first := attrs(events[0].Attributes)
	if events[0].Name != "progress" || first["mcp.progress"] != "1" || first["mcp.progress.total"] != "100" || first["mcp.progress.message"] != "step" {
		t.Errorf("first event %s %v", events[0].Name, first)
	}
	if got := attrs(spans[0].Attributes())["mcpkit.progress.reports"]; got != "100" {
		t.Errorf("mcpkit.progress.reports = %q, want 100", got)
	}
}

// With Instrument, the tools/call span starts before the server routes
// the call: a call of an unknown tool has its span too (a client's fault,
// so not an error status), a served call has one span, named by its tool,
// and the server's observers see every call, served or refused, in its
// trace. A filter puts the span back in the chain, where the tool is known.
func TestInstrumentSpanBeforeRoute(t *testing.T) {
	for _, filtered := range []bool{false, true} {
		t.Run(fmt.Sprintf("filtered=%v", filtered), func(t *testing.T) {
			tel := newTelemetry()
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "traced"}, nil)
			opts := []otelmcp.Option{otelmcp.WithTracerProvider(tel.tp), otelmcp.WithMeterProvider(tel.mp)}
			if filtered {
				opts = append(opts, otelmcp.WithFilter(func(*mcpkit.Request) bool { return true }))
			}
			otelmcp.Instrument(srv, opts...)
			observed := map[string]trace.TraceID{}
			srv.Observe(mcpkit.ObserverFunc(func(ctx context.Context, ev *mcpkit.Event) {
				observed[ev.Name] = trace.SpanContextFromContext(ctx).TraceID()
			}))
			srv.Add(newTool("ok", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text("fine"), nil }))
			ts := mcpkittest.NewServer(t, srv, nil)
			tel.spans.Reset()
			if _, err := ts.CallTool(t.Context(), "ok", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := ts.CallTool(t.Context(), "nosuch", nil); err == nil {
				t.Fatal("an unknown tool answered")
			}
			byName := map[string]sdktrace.ReadOnlySpan{}
			for _, s := range tel.spans.Ended() {
				if strings.HasPrefix(s.Name(), "tools/call") {
					if _, dup := byName[s.Name()]; dup {
						t.Errorf("two spans named %q", s.Name())
					}
					byName[s.Name()] = s
				}
			}
			ok := byName["tools/call ok"]
			if ok == nil || attrs(ok.Attributes())["gen_ai.tool.name"] != "ok" {
				t.Fatalf("tools/call spans: %v", byName)
			}
			if observed["ok"] != ok.SpanContext().TraceID() && !filtered {
				t.Errorf("the observer saw the served call in trace %v, its span is in %v", observed["ok"], ok.SpanContext().TraceID())
			}
			unknown := byName["tools/call nosuch"]
			switch {
			case filtered && unknown != nil:
				t.Errorf("with a filter, an unknown tool has a span")
			case !filtered && unknown == nil:
				t.Errorf("no span for a call of an unknown tool")
			case !filtered:
				a := attrs(unknown.Attributes())
				if a["error.type"] != "-32602" || unknown.Status().Code == codes.Error || observed["nosuch"] != unknown.SpanContext().TraceID() {
					t.Errorf("the unknown tool's span: %v, status %v; observed in %v", a, unknown.Status(), observed["nosuch"])
				}
			}
		})
	}
}

// TestResourceSpans: on both eras, a resources/read of an mcpkit resource
// (a template's URI here) has a span named "resources/read", without the
// URI, that carries it as mcp.resource.uri; the metric does not (the
// conventions make it opt-in there). A prompts/get has its name.
func TestResourceSpans(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			tel := newTelemetry()
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "traced"}, nil)
			otelmcp.Instrument(srv, otelmcp.WithTracerProvider(tel.tp), otelmcp.WithMeterProvider(tel.mp))
			tpl, err := tools.NewTemplate("notes://{id}", func(_ context.Context, req *mcpkit.ResourceRequest, p struct {
				ID string `json:"id"`
			}) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: p.ID}}}, nil
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.AddResourceTemplates(tpl); err != nil {
				t.Fatal(err)
			}
			if err := srv.AddPrompts(&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "greeting"},
				Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
				})}); err != nil {
				t.Fatal(err)
			}
			cs := era.Connect(t, srv, nil).Session
			tel.spans.Reset()
			if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://42"}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greeting"}); err != nil {
				t.Fatal(err)
			}
			got := map[string]map[string]string{}
			for _, s := range tel.spans.Ended() {
				got[s.Name()] = attrs(s.Attributes())
			}
			if a := got["resources/read"]; a == nil || a["mcp.resource.uri"] != "notes://42" || a["mcp.method.name"] != "resources/read" {
				t.Errorf("resources/read span: %v (spans %v)", a, got)
			}
			if a := got["prompts/get greeting"]; a == nil || a["gen_ai.prompt.name"] != "greeting" || a["mcp.resource.uri"] != "" {
				t.Errorf("prompts/get span: %v", a)
			}
			var rm metricdata.ResourceMetrics
			if err := tel.reader.Collect(t.Context(), &rm); err != nil {
				t.Fatal(err)
			}
			reads := 0
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					hist, ok := m.Data.(metricdata.Histogram[float64])
					if !ok {
						continue
					}
					for _, dp := range hist.DataPoints {
						a := attrs(dp.Attributes.ToSlice())
						if a["mcp.method.name"] == "resources/read" {
							reads++
						}
						if _, ok := a["mcp.resource.uri"]; ok {
							t.Errorf("the URI is a metric attribute: %v", a)
						}
					}
				}
			}
			if reads != 1 {
				t.Errorf("%d data points of resources/read, want 1", reads)
			}
		})
	}
}
