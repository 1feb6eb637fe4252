package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

var objectSchema = &jsonschema.Schema{Type: "object"}

// tool returns a tool named name with an empty object schema.
func tool(name string, h mcpkit.HandlerFunc) *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: objectSchema}, Handler: h}
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// resultText returns the text of the single text content of res.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("got %d content blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

// onlyText returns the text of res's single text block, or "" when res has
// some other content.
func onlyText(res *mcp.CallToolResult) string {
	if len(res.Content) != 1 {
		return ""
	}
	tc, _ := res.Content[0].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

// transports runs f once per harness variant.
func transports(t *testing.T, f func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server)) {
	variants := []struct {
		name    string
		connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{
		{"stateful", mcpkittest.NewServer},
		{"stateless", mcpkittest.NewStatelessServer},
		{"inmemory", mcpkittest.NewInMemoryServer},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f(t, func(s *mcpkit.Server) *mcpkittest.Server { return v.connect(t, s, nil) })
		})
	}
}

var errSecretDB = errors.New("db: connection refused")

// errorTableServer has one tool per row of the error table.
func errorTableServer(t *testing.T, logger *slog.Logger) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "errors"}, &mcpkit.ServerOptions{Logger: logger})
	err := srv.Add(
		tool("ok", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return textResult("fine"), nil
		}),
		tool("tool_error", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, mcpkit.ToolErrorf("file %q exists", "a.txt")
		}),
		tool("fatal_error", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, mcpkit.NewToolError(errors.New("disk is read-only"), mcpkit.Fatal)
		}),
		tool("wrapped_tool_error", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("writing: %w", mcpkit.NewToolError(errors.New("quota exceeded"), mcpkit.Retryable))
		}),
		tool("protocol_error", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("layer: %w", mcpkit.NewProtocolError(-32041, "resource busy"))
		}),
		tool("zero_code_protocol_error", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: 0, Message: "no code"}
		}),
		tool("other_error", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("loading user: %w", errSecretDB)
		}),
		tool("panics", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			panic("boom")
		}),
		tool("panic_error_value", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			// As a recovering middleware returns it: the value must not show.
			return nil, fmt.Errorf("wrapped: %w", &mcpkit.PanicError{Value: mcpkit.NewProtocolError(-32042, "secret")})
		}),
		tool("meta_error", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, metaError{}
		}),
		tool("nil_nil", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return nil, nil
		}),
		tool("own_error_result", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res := textResult("handled here")
			res.IsError = true
			return res, nil
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestErrorTable(t *testing.T) {
	type want struct {
		rpcCode  int64  // non-zero: a JSON-RPC error with this code
		text     string // the text content or the JSON-RPC message
		isError  bool
		class    mcpkit.ErrorClass
		noResult bool
	}
	tests := []struct {
		tool string
		want want
	}{
		{"ok", want{text: "fine"}},
		{"tool_error", want{text: `file "a.txt" exists`, isError: true, class: mcpkit.Retryable}},
		{"fatal_error", want{text: "disk is read-only", isError: true, class: mcpkit.Fatal}},
		{"wrapped_tool_error", want{text: "quota exceeded", isError: true, class: mcpkit.Retryable}},
		{"panic_error_value", want{text: `internal error in tool "panic_error_value"`, isError: true, class: mcpkit.Fatal}},
		{"meta_error", want{text: "slow down", isError: true, class: mcpkit.Retryable}},
		{"protocol_error", want{rpcCode: -32041, text: "resource busy"}},
		{"zero_code_protocol_error", want{text: "no code", isError: true, class: mcpkit.Fatal}},
		{"other_error", want{text: "loading user: db: connection refused", isError: true, class: mcpkit.Fatal}},
		{"panics", want{text: `internal error in tool "panics"`, isError: true, class: mcpkit.Fatal}},
		{"nil_nil", want{noResult: true}},
		{"own_error_result", want{text: "handled here", isError: true}},
		{"no_such_tool", want{rpcCode: jsonrpc.CodeInvalidParams, text: `unknown tool "no_such_tool"`}},
	}
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		var logs strings.Builder
		ts := connect(errorTableServer(t, slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))))
		for _, tt := range tests {
			t.Run(tt.tool, func(t *testing.T) {
				res, err := ts.CallTool(t.Context(), tt.tool, map[string]any{})
				if tt.want.rpcCode != 0 {
					var werr *jsonrpc.Error
					if !errors.As(err, &werr) {
						t.Fatalf("got result %+v, error %v; want JSON-RPC error %d", res, err, tt.want.rpcCode)
					}
					if werr.Code != tt.want.rpcCode || werr.Message != tt.want.text {
						t.Fatalf("got JSON-RPC error %d %q, want %d %q", werr.Code, werr.Message, tt.want.rpcCode, tt.want.text)
					}
					return
				}
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if res.IsError != tt.want.isError {
					t.Errorf("isError = %v, want %v", res.IsError, tt.want.isError)
				}
				if got := mcpkit.ErrorClassOf(res); got != tt.want.class {
					t.Errorf("ErrorClassOf = %q, want %q", got, tt.want.class)
				}
				if tt.want.noResult {
					if len(res.Content) != 0 || res.StructuredContent != nil {
						t.Errorf("got %+v, want an empty result", res)
					}
					return
				}
				if got := resultText(t, res); got != tt.want.text {
					t.Errorf("text = %q, want %q", got, tt.want.text)
				}
			})
		}
		// The server survived the panic and logged its stack.
		if res, err := ts.CallTool(t.Context(), "ok", nil); err != nil || resultText(t, res) != "fine" {
			t.Fatalf("after panic: %v, %v", res, err)
		}
		if l := logs.String(); !strings.Contains(l, "boom") || !strings.Contains(l, "server_test.go") {
			t.Errorf("panic log lacks value or stack: %s", l)
		}
	})
}

// metaError is a retryable tool error that adds a retry delay to the
// result's _meta.
type metaError struct{}

func (metaError) Error() string                 { return "slow down" }
func (metaError) ErrorClass() mcpkit.ErrorClass { return mcpkit.Retryable }
func (metaError) ResultMeta() mcp.Meta          { return mcp.Meta{"com.example/retryAfterMs": 1500} }

func TestResultMetaError(t *testing.T) {
	ts := mcpkittest.NewServer(t, errorTableServer(t, nil), nil)
	res, err := ts.CallTool(t.Context(), "meta_error", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta["com.example/retryAfterMs"] != 1500.0 || res.Meta[mcpkit.MetaKeyErrorClass] != "retryable" {
		t.Errorf("_meta = %v", res.Meta)
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func TestErrorClassOf(t *testing.T) {
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want mcpkit.ErrorClass
	}{
		{"nil", nil, ""},
		{"success with class", &mcp.CallToolResult{Meta: mcp.Meta{mcpkit.MetaKeyErrorClass: "fatal"}}, ""},
		{"error without meta", &mcp.CallToolResult{IsError: true}, ""},
		{"unknown class", &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{mcpkit.MetaKeyErrorClass: "maybe"}}, ""},
		{"non-string class", &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{mcpkit.MetaKeyErrorClass: 1}}, ""},
		{"retryable", &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{mcpkit.MetaKeyErrorClass: "retryable"}}, mcpkit.Retryable},
		{"fatal", &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{mcpkit.MetaKeyErrorClass: "fatal"}}, mcpkit.Fatal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mcpkit.ErrorClassOf(tt.res); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// classified is an error type that picks its own class.
type classified struct{ class mcpkit.ErrorClass }

func (e classified) Error() string                 { return "classified" }
func (e classified) ErrorClass() mcpkit.ErrorClass { return e.class }

func TestCustomErrorClass(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "t"}, nil)
	srv.Add(tool("flaky", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("upstream: %w", classified{mcpkit.Retryable})
	}))
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res, err := ts.CallTool(t.Context(), "flaky", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || resultText(t, res) != "upstream: classified" {
		t.Fatalf("got %+v (class %q)", res, mcpkit.ErrorClassOf(res))
	}
}

// tagger returns a middleware that appends "<tag" before and ">tag" after
// the call to the log.
func tagger(tag string, mu *sync.Mutex, log *[]string) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			mu.Lock()
			*log = append(*log, "<"+tag)
			mu.Unlock()
			res, err := next.ServeTool(ctx, req)
			mu.Lock()
			*log = append(*log, ">"+tag)
			mu.Unlock()
			return res, err
		})
	}
}

func TestChainOrder(t *testing.T) {
	var (
		mu  sync.Mutex
		log []string
	)
	h := mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		log = append(log, "handler")
		return textResult("x"), nil
	})
	chained := mcpkit.Chain(tagger("a", &mu, &log), tagger("b", &mu, &log), tagger("c", &mu, &log))(h)
	if _, err := chained.ServeTool(t.Context(), mcpkittest.NewRequest(nil, nil)); err != nil {
		t.Fatal(err)
	}
	want := "<a <b <c handler >c >b >a"
	if got := strings.Join(log, " "); got != want {
		t.Errorf("order = %q, want %q", got, want)
	}
}

func TestChainPanicsOnNil(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "mcpkit: Chain: middleware 1 is nil") {
			t.Errorf("recover() = %v", v)
		}
	}()
	mcpkit.Chain(func(h mcpkit.Handler) mcpkit.Handler { return h }, nil)
}

// TestServerOrder checks the order end to end: server-wide middleware from
// two Use calls (one made after the tool was added) around per-tool
// middleware around the handler.
func TestServerOrder(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		var (
			mu  sync.Mutex
			log []string
		)
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "order"}, nil)
		srv.Use(tagger("s1", &mu, &log), tagger("s2", &mu, &log))
		tl := tool("t", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			mu.Lock()
			log = append(log, "handler")
			mu.Unlock()
			return textResult("x"), nil
		})
		tl.Middleware = []mcpkit.Middleware{tagger("t1", &mu, &log), tagger("t2", &mu, &log)}
		if err := srv.Add(tl); err != nil {
			t.Fatal(err)
		}
		srv.Use(tagger("s3", &mu, &log)) // after Add: still applies
		ts := connect(srv)
		if _, err := ts.CallTool(t.Context(), "t", nil); err != nil {
			t.Fatal(err)
		}
		want := "<s1 <s2 <s3 <t1 <t2 handler >t2 >t1 >s3 >s2 >s1"
		if got := strings.Join(log, " "); got != want {
			t.Errorf("order = %q, want %q", got, want)
		}
	})
}

func TestMiddlewareSeesRequest(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "req"}, nil)
	var got struct {
		tool, version, header string
		args                  string
		session               bool
		tags                  bool
	}
	srv.Use(func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			got.tool, got.version = req.Tool.Name, req.Tool.Version
			got.args = string(req.Arguments)
			got.session = req.Session() != nil
			got.tags = req.Tool.HasTag("math")
			got.header = req.Header().Get("Content-Type")
			return next.ServeTool(ctx, req)
		})
	})
	tl := tool("add", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult("3"), nil
	})
	tl.Version, tl.Tags = "2", []string{"math"}
	srv.Add(tl)
	ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{HTTP: &mcp.StreamableHTTPOptions{}})
	if _, err := ts.CallTool(t.Context(), "add", map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if got.tool != "add" || got.version != "2" || got.args != `{"a":1}` || !got.session || !got.tags ||
		!strings.HasPrefix(got.header, "application/json") {
		t.Errorf("middleware saw %+v", got)
	}
	// In memory there is no HTTP request, hence no headers.
	mem := mcpkittest.NewInMemoryServer(t, srv, nil)
	got.header = "unset"
	if _, err := mem.CallTool(t.Context(), "add", map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if got.header != "" {
		t.Errorf("in-memory call has header %q", got.header)
	}
}

func TestWithArgumentsReachesSDKHandler(t *testing.T) {
	sdkHandler := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult(string(req.Params.Arguments)), nil
	}
	rewrite := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			r2 := req.WithArguments(json.RawMessage(`{"x":2}`))
			if string(req.Arguments) != `{"x":1}` || string(req.Call.Params.Arguments) != `{"x":1}` {
				t.Errorf("WithArguments changed the original request")
			}
			return next.ServeTool(ctx, r2)
		})
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "rw"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool:       mcp.Tool{Name: "echo", InputSchema: objectSchema},
		Handler:    mcpkit.SDKHandler(sdkHandler),
		Middleware: []mcpkit.Middleware{rewrite},
	})
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res, err := ts.CallTool(t.Context(), "echo", map[string]int{"x": 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != `{"x":2}` {
		t.Errorf("SDK handler saw %s, want the rewritten arguments", got)
	}
}

func TestSDKHandlerWithoutCall(t *testing.T) {
	h := mcpkit.SDKHandler(func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult(req.Params.Name + " " + string(req.Params.Arguments)), nil
	})
	res, err := h.ServeTool(t.Context(), &mcpkit.Request{Tool: tool("n", nil), Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "n {}" {
		t.Errorf("got %q", got)
	}
}

// TestListChanged checks that Add and Remove reach connected clients as
// notifications/tools/list_changed. The in-memory client (2026-07-28) hears
// of changes on a subscriptions/listen stream that it opens while it
// connects; it runs in a synctest bubble, so that the test waits until the
// server has taken the subscription instead of guessing how long that takes.
func TestListChanged(t *testing.T) {
	t.Run("stateful", func(t *testing.T) {
		testListChanged(t, mcpkittest.NewServer, func() {})
	})
	t.Run("inmemory", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			testListChanged(t, mcpkittest.NewInMemoryServer, synctest.Wait)
		})
	})
}

func testListChanged(t *testing.T, connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server, settle func()) {
	changed := make(chan struct{}, 16)
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "lc"}, nil)
	srv.Add(tool("first", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult("1"), nil
	}))
	ts := connect(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}})
	settle()
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("no notifications/tools/list_changed after %s", what)
		}
	}
	names := func() []string {
		t.Helper()
		res, err := ts.Session.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, tl := range res.Tools {
			n = append(n, tl.Name)
		}
		return n
	}

	if err := srv.Add(tool("second", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult("2"), nil
	})); err != nil {
		t.Fatal(err)
	}
	wait("Add")
	if got := strings.Join(names(), ","); got != "first,second" {
		t.Errorf("after Add: tools = %s", got)
	}

	srv.Remove("first")
	wait("Remove")
	if got := strings.Join(names(), ","); got != "second" {
		t.Errorf("after Remove: tools = %s", got)
	}
	_, err := ts.CallTool(t.Context(), "first", nil)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || werr.Message != `unknown tool "first"` {
		t.Errorf("calling a removed tool: %v, want -32602 unknown tool", err)
	}
	ts.Close()
}

func TestConcurrentCalls(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "conc"}, nil)
		var mu sync.Mutex
		var log []string
		srv.Use(tagger("s", &mu, &log))
		srv.Add(&mcpkit.Tool{
			Tool: mcp.Tool{Name: "echo", InputSchema: objectSchema},
			Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				var in struct{ N int }
				if err := json.Unmarshal(req.Arguments, &in); err != nil {
					return nil, err
				}
				if in.N%7 == 0 {
					return nil, mcpkit.ToolErrorf("seven divides %d", in.N)
				}
				return textResult(fmt.Sprint(in.N)), nil
			}),
		})
		ts := connect(srv)
		const workers, perWorker = 16, 63 // 1008 calls
		var wg sync.WaitGroup
		errs := make(chan error, workers*perWorker)
		for w := range workers {
			wg.Go(func() {
				for i := range perWorker {
					n := w*perWorker + i
					res, err := ts.CallTool(t.Context(), "echo", map[string]int{"N": n})
					switch {
					case err != nil:
						errs <- err
					// Not resultText: t.Fatal must not be called off the
					// test's goroutine.
					case n%7 == 0 && (!res.IsError || onlyText(res) != fmt.Sprintf("seven divides %d", n)):
						errs <- fmt.Errorf("call %d: want tool error, got %+v", n, res)
					case n%7 != 0 && (res.IsError || onlyText(res) != fmt.Sprint(n)):
						errs <- fmt.Errorf("call %d: got %+v", n, res)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if len(log) != 2*workers*perWorker {
			t.Errorf("middleware ran %d times, want %d", len(log)/2, workers*perWorker)
		}
	})
}
