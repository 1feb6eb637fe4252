package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

var errPanicValue = errors.New("panic value error")

func TestRecover(t *testing.T) {
	tests := []struct {
		name      string
		panic     func()
		wantValue func(v any) bool
	}{
		{"string", func() { panic("boom") }, func(v any) bool { return v == "boom" }},
		{"error", func() { panic(fmt.Errorf("wrapped: %w", errPanicValue)) }, func(v any) bool {
			err, ok := v.(error)
			return ok && errors.Is(err, errPanicValue)
		}},
		{"protocol error", func() { panic(mcpkit.NewProtocolError(-32050, "secret protocol text")) }, func(v any) bool {
			var wire *jsonrpc.Error
			err, ok := v.(error)
			return ok && errors.As(err, &wire) && wire.Code == -32050
		}},
		{"runtime error", func() {
			var m map[string]int
			m["x"] = 1 //lint:ignore SA5000 the panic under test
		}, func(v any) bool {
			_, ok := v.(runtime.Error)
			return ok
		}},
		{"nil", func() { panic(nil) }, func(v any) bool {
			_, ok := v.(*runtime.PanicNilError)
			return ok
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			var seen *mcpkit.PanicError
			mw := middleware.Recover(&middleware.RecoverOptions{Logger: logs.logger(),
				OnPanic: func(ctx context.Context, req *mcpkit.Request, p *mcpkit.PanicError) { seen = p },
			})
			h := mw(mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				tt.panic()
				return textResult("unreachable"), nil
			}))
			res, err := call(t, h, newTool("crashy", nil), nil)
			if res != nil {
				t.Errorf("result = %+v, want nil", res)
			}
			if got, want := fmt.Sprint(err), `internal error in tool "crashy"`; got != want {
				t.Errorf("error text = %q, want %q", got, want)
			}
			var te *mcpkit.ToolError
			if !errors.As(err, &te) || te.ErrorClass() != mcpkit.Fatal {
				t.Errorf("error %#v is not a fatal *mcpkit.ToolError", err)
			}
			var p *mcpkit.PanicError
			if !errors.As(err, &p) {
				t.Fatalf("errors.As(%v, *PanicError) = false", err)
			}
			if !tt.wantValue(p.Value) {
				t.Errorf("panic value = %#v", p.Value)
			}
			if !strings.Contains(string(p.Stack), "recover_test.go") {
				t.Errorf("stack does not show the panicking function:\n%s", p.Stack)
			}
			if seen != p {
				t.Errorf("OnPanic saw %v, want the same *PanicError", seen)
			}
			recs := logs.records(t)
			if len(recs) != 1 {
				t.Fatalf("got %d log records, want 1: %s", len(recs), logs.String())
			}
			if recs[0]["tool"] != "crashy" || recs[0]["panic"] != fmt.Sprint(p.Value) ||
				!strings.Contains(fmt.Sprint(recs[0]["stack"]), "recover_test.go") {
				t.Errorf("log record = %v", recs[0])
			}
		})
	}
}

func TestRecoverPassThrough(t *testing.T) {
	want := textResult("fine")
	wantErr := mcpkit.ToolErrorf("no")
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		err  error
	}{
		{"result", want, nil},
		{"error", nil, wantErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := middleware.Recover(nil)(mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				return tt.res, tt.err
			}))
			res, err := call(t, h, newTool("t", nil), nil)
			if res != tt.res || err != tt.err {
				t.Errorf("got %v, %v; want %v, %v", res, err, tt.res, tt.err)
			}
		})
	}
}

// TestRecoverKeepsPanicError checks that a *PanicError raised again (as
// Timeout does) keeps its value and original stack.
func TestRecoverKeepsPanicError(t *testing.T) {
	orig := &mcpkit.PanicError{Value: "first", Stack: []byte("original stack")}
	h := middleware.Recover(nil)(mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		panic(orig)
	}))
	_, err := call(t, h, newTool("t", nil), nil)
	var p *mcpkit.PanicError
	if !errors.As(err, &p) || p != orig {
		t.Fatalf("got %#v, want the original *PanicError", p)
	}
}

func TestRecoverEndToEnd(t *testing.T) {
	const secret = "panic-secret-1234"
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		var logs logBuffer
		var (
			mu    sync.Mutex
			outer error
		)
		observe := func(next mcpkit.Handler) mcpkit.Handler {
			return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				res, err := next.ServeTool(ctx, req)
				mu.Lock()
				outer = err
				mu.Unlock()
				return res, err
			})
		}
		srv := newServer(t, []mcpkit.Middleware{observe, middleware.Recover(&middleware.RecoverOptions{Logger: logs.logger()})},
			newTool("crashy", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				panic(secret)
			}),
			newTool("fine", ok),
		)
		ts := connect(srv)
		res, err := ts.CallTool(t.Context(), "crashy", nil)
		if err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		if !res.IsError || resultText(t, res) != `internal error in tool "crashy"` || mcpkit.ErrorClassOf(res) != mcpkit.Fatal {
			t.Errorf("got %+v (class %q)", res, mcpkit.ErrorClassOf(res))
		}
		data, _ := json.Marshal(res)
		mustNotContain(t, secret, map[string]string{"result": string(data)})

		mu.Lock()
		var p *mcpkit.PanicError
		if !errors.As(outer, &p) || p.Value != secret {
			t.Errorf("outer middleware saw %v, want a *PanicError with the value", outer)
		}
		mu.Unlock()
		if !strings.Contains(logs.String(), secret) {
			t.Errorf("the panic value was not logged: %s", logs.String())
		}
		// The server keeps serving.
		if res, err := ts.CallTool(t.Context(), "fine", nil); err != nil || resultText(t, res) != "ok" {
			t.Errorf("after the panic: %v, %v", res, err)
		}
	})
}
