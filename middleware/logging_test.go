package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// TestClassifyMiddlewareErrors checks that the root's Classify, which
// Logging and MaskErrors rely on, sees the errors the middleware make as
// what they are.
func TestClassifyMiddlewareErrors(t *testing.T) {
	run := func(mw mcpkit.Middleware, h mcpkit.HandlerFunc) error {
		_, err := mw(h).ServeTool(t.Context(), mcpkittest.NewRequest(newTool("t", nil), map[string]int{"a": 1}))
		return err
	}
	deny := middleware.LimiterFunc(func(context.Context, string) (bool, time.Duration, error) { return false, time.Second, nil })
	failing := func(err error) mcpkit.HandlerFunc {
		return func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, err }
	}
	panicking := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { panic("boom") })
	tests := []struct {
		name  string
		err   error
		want  mcpkit.Outcome
		class mcpkit.ErrorClass
	}{
		{"timeout", &mcpkit.ToolError{Err: &middleware.TimeoutError{Tool: "t", Limit: time.Second}}, mcpkit.OutcomeTimeout, mcpkit.Retryable},
		{"rate limited", run(middleware.RateLimit(deny, nil), failing(nil)), mcpkit.OutcomeToolError, mcpkit.Retryable},
		{"masked", run(middleware.MaskErrors(nil), failing(errDB)), mcpkit.OutcomeError, mcpkit.Fatal},
		{"recovered", run(middleware.Recover(nil), panicking), mcpkit.OutcomePanic, mcpkit.Fatal},
		{"arguments too large", run(middleware.ArgumentSizeLimit(1), failing(nil)), mcpkit.OutcomeToolError, mcpkit.Retryable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if o, c := mcpkit.Classify(nil, tt.err); o != tt.want || c != tt.class {
				t.Errorf("Classify(%v) = %s, %q; want %s, %q", tt.err, o, c, tt.want, tt.class)
			}
		})
	}
}

func TestLogging(t *testing.T) {
	returns := func(res *mcp.CallToolResult, err error) mcpkit.HandlerFunc {
		return func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) { return res, err }
	}
	tests := []struct {
		name    string
		inner   []mcpkit.Middleware // between Logging and the handler
		handler mcpkit.HandlerFunc
		want    map[string]any // attributes the record must have
		absent  []string       // attributes it must not have
	}{
		{"ok", nil, returns(textResult("fine"), nil),
			map[string]any{"level": "INFO", "outcome": "ok"}, []string{"error", "class", "arguments", "result"}},
		{"tool error", nil, returns(nil, mcpkit.ToolErrorf("bad %s", "input")),
			map[string]any{"level": "WARN", "outcome": "tool_error", "class": "retryable", "error": "bad input"}, nil},
		{"error result", nil, returns(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "own"}}}, nil),
			map[string]any{"level": "WARN", "outcome": "tool_error", "error": "own"}, []string{"class"}},
		{"protocol error", nil, returns(nil, mcpkit.NewProtocolError(-32041, "busy")),
			map[string]any{"level": "ERROR", "outcome": "protocol_error", "error": "busy"}, []string{"class"}},
		{"other error", nil, returns(nil, errDB),
			map[string]any{"level": "ERROR", "outcome": "error", "class": "fatal", "error": errDB.Error()}, nil},
		{"masked error", []mcpkit.Middleware{middleware.MaskErrors(nil)}, returns(nil, errDB),
			map[string]any{"level": "ERROR", "outcome": "error", "class": "fatal", "error": errDB.Error()}, nil},
		{"panic", []mcpkit.Middleware{middleware.Recover(nil)}, func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			panic("kaput")
		}, map[string]any{"level": "ERROR", "outcome": "panic", "class": "fatal", "error": "panic: kaput"}, nil},
		{"timeout", []mcpkit.Middleware{middleware.Timeout(time.Second, nil)}, waitCtx(time.Hour),
			map[string]any{"level": "ERROR", "outcome": "timeout", "class": "retryable", "error": `tool "calc" timed out after 1s`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs logBuffer
				mw := append([]mcpkit.Middleware{middleware.Logging(&middleware.LoggingOptions{Logger: logs.logger()})}, tt.inner...)
				h := mcpkit.Chain(mw...)(tt.handler)
				tool := newTool("calc", nil)
				tool.Version = "2"
				h.ServeTool(t.Context(), mcpkittest.NewRequest(tool, map[string]string{"password": "x"}))
				recs := logs.records(t)
				if len(recs) != 1 {
					t.Fatalf("got %d records, want 1: %s", len(recs), logs.String())
				}
				rec := recs[0]
				want := map[string]any{"msg": "tool call", "tool": "calc", "version": "2"}
				for k, v := range tt.want {
					want[k] = v
				}
				for k, v := range want {
					if rec[k] != v {
						t.Errorf("%s = %v, want %v", k, rec[k], v)
					}
				}
				if _, ok := rec["duration"]; !ok {
					t.Error("no duration")
				}
				for _, k := range tt.absent {
					if v, ok := rec[k]; ok {
						t.Errorf("%s = %v, want none", k, v)
					}
				}
			})
		})
	}
}

func TestLoggingDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		h := middleware.Logging(&middleware.LoggingOptions{Logger: logs.logger()})(waitCtx(1500 * time.Millisecond))
		call(t, h, newTool("t", nil), nil)
		if d := logs.records(t)[0]["duration"]; d != float64(1500*time.Millisecond) {
			t.Errorf("duration = %v, want 1.5s in ns", d)
		}
	})
}

func TestLoggingArgumentsAndResults(t *testing.T) {
	handler := mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult("result text"), nil
	})
	args := map[string]string{"user": "ann", "password": "pw-123"}
	tests := []struct {
		name       string
		opts       *middleware.LoggingOptions
		wantArgs   string // JSON of the "arguments" attribute, "" for none
		wantResult string // substring of the "result" attribute, "" for none
	}{
		{"default", nil, "", ""},
		{"arguments", &middleware.LoggingOptions{LogArguments: true}, `{"password":"pw-123","user":"ann"}`, ""},
		{"redacted arguments", &middleware.LoggingOptions{LogArguments: true,
			Redact: func(tool *mcpkit.Tool, args json.RawMessage) any {
				var m map[string]any
				json.Unmarshal(args, &m)
				m["password"] = "[redacted]"
				return m
			}}, `{"password":"[redacted]","user":"ann"}`, ""},
		{"results", &middleware.LoggingOptions{LogResults: true}, "", `"text":"result text"`},
		{"redacted results", &middleware.LoggingOptions{LogResults: true,
			RedactResult: func(tool *mcpkit.Tool, res *mcp.CallToolResult) any { return len(res.Content) }}, "", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			var opts middleware.LoggingOptions
			if tt.opts != nil {
				opts = *tt.opts
			}
			opts.Logger = logs.logger()
			h := middleware.Logging(&opts)(handler)
			call(t, h, newTool("t", nil), args)
			rec := logs.records(t)[0]
			gotArgs, hasArgs := rec["arguments"]
			if tt.wantArgs == "" {
				if hasArgs || strings.Contains(logs.String(), "pw-123") {
					t.Errorf("arguments logged: %s", logs.String())
				}
			} else if b, _ := json.Marshal(gotArgs); string(b) != tt.wantArgs {
				t.Errorf("arguments = %s, want %s", b, tt.wantArgs)
			}
			gotRes, hasRes := rec["result"]
			if tt.wantResult == "" {
				if hasRes {
					t.Errorf("result logged: %v", gotRes)
				}
			} else if b, _ := json.Marshal(gotRes); !strings.Contains(string(b), tt.wantResult) {
				t.Errorf("result = %s, want it to contain %s", b, tt.wantResult)
			}
		})
	}
}

func TestLoggingLevelOption(t *testing.T) {
	var logs logBuffer
	h := middleware.Logging(&middleware.LoggingOptions{Logger: logs.logger(),
		Level: func(o mcpkit.Outcome) slog.Level {
			if o == mcpkit.OutcomeOK {
				return slog.LevelDebug
			}
			return slog.LevelError
		},
	})(mcpkit.HandlerFunc(ok))
	call(t, h, newTool("t", nil), nil)
	if got := logs.records(t)[0]["level"]; got != "DEBUG" {
		t.Errorf("level = %v, want DEBUG", got)
	}
}

// TestLoggingHandlerLevel checks that a handler's level filters records by
// outcome.
func TestLoggingHandlerLevel(t *testing.T) {
	var logs logBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fail := false
	h := middleware.Logging(&middleware.LoggingOptions{Logger: logger})(mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		if fail {
			return nil, mcpkit.ToolErrorf("no")
		}
		return textResult("yes"), nil
	}))
	call(t, h, newTool("t", nil), nil)
	if n := len(logs.records(t)); n != 0 {
		t.Fatalf("an ok call below the handler's level wrote %d records", n)
	}
	fail = true
	call(t, h, newTool("t", nil), nil)
	if recs := logs.records(t); len(recs) != 1 || recs[0]["outcome"] != "tool_error" {
		t.Errorf("log = %s", logs.String())
	}
}

// TestLoggingPanicPassesThrough checks that a panic that no Recover stops is
// logged once and keeps going.
func TestLoggingPanicPassesThrough(t *testing.T) {
	var logs logBuffer
	h := middleware.Logging(&middleware.LoggingOptions{Logger: logs.logger()})(mcpkit.HandlerFunc(panickingHandler))
	func() {
		defer func() {
			if v := recover(); v != "handler boom" {
				t.Errorf("recovered %v, want the handler's panic", v)
			}
		}()
		call(t, h, newTool("t", nil), nil)
	}()
	recs := logs.records(t)
	if len(recs) != 1 || recs[0]["outcome"] != "panic" || recs[0]["level"] != "ERROR" {
		t.Errorf("log = %s", logs.String())
	}
}

func TestLoggingNilLogger(t *testing.T) {
	h := mcpkit.HandlerFunc(ok)
	wrapped := middleware.Logging(&middleware.LoggingOptions{Logger: nil})(h)
	if _, isFunc := wrapped.(mcpkit.HandlerFunc); !isFunc {
		t.Errorf("Logging(nil) wrapped the handler in %T", wrapped)
	}
}

func TestLoggingEndToEnd(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		var logs logBuffer
		srv := newServer(t, []mcpkit.Middleware{middleware.Logging(&middleware.LoggingOptions{Logger: logs.logger()}), middleware.Recover(nil)},
			newTool("fine", ok),
			newTool("refuses", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				return nil, mcpkit.ToolErrorf("refused")
			}),
			newTool("crashes", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				panic("crash")
			}),
		)
		ts := connect(srv)
		for _, name := range []string{"fine", "refuses", "crashes", "fine"} {
			if _, err := ts.CallTool(t.Context(), name, map[string]int{"n": 1}); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		for _, r := range logs.records(t) {
			got = append(got, fmt.Sprintf("%v:%v", r["tool"], r["outcome"]))
		}
		if want := "fine:ok refuses:tool_error crashes:panic fine:ok"; strings.Join(got, " ") != want {
			t.Errorf("records = %v, want %s", got, want)
		}
	})
}

// Empty attributes are left out, and a call by another name says which
// tool it reaches.
func TestLoggingAttributes(t *testing.T) {
	var logs logBuffer
	h := middleware.Logging(&middleware.LoggingOptions{Logger: logs.logger()})(mcpkit.HandlerFunc(
		func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil }))
	plain := newTool("calc", nil)
	alias := newTool("old_calc", nil)
	alias.Origin = &mcpkit.Tool{Tool: mcp.Tool{Name: "calc"}, Version: "2"}
	alias.Version = "2"
	h.ServeTool(t.Context(), mcpkittest.NewRequest(plain, nil))
	h.ServeTool(t.Context(), mcpkittest.NewRequest(alias, nil))
	recs := logs.records(t)
	if len(recs) != 2 {
		t.Fatalf("got %d records: %s", len(recs), logs.String())
	}
	if _, ok := recs[0]["version"]; ok {
		t.Errorf("an unversioned tool logs version=%v", recs[0]["version"])
	}
	if _, ok := recs[0]["reaches"]; ok {
		t.Errorf("a tool called by its own name logs reaches=%v", recs[0]["reaches"])
	}
	if recs[1]["tool"] != "old_calc" || recs[1]["version"] != "2" || recs[1]["reaches"] != "calc@2" {
		t.Errorf("alias record: %v", recs[1])
	}
}
