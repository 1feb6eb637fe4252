package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

func TestRecommended(t *testing.T) {
	secret := errors.New("dial tcp 10.0.0.7:5432: password=hunter2")
	tools := []*mcpkit.Tool{
		newTool("echo", func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return textResult(string(req.Arguments)), nil
		}),
		newTool("internal", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, secret }),
		newTool("panics", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { panic("boom") }),
	}
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		logs := &logBuffer{}
		ts := connect(newServer(t, []mcpkit.Middleware{middleware.Recommended(&middleware.RecommendedOptions{Logger: logs.logger()})}, tools...))
		tests := []struct {
			tool  string
			args  any
			text  string
			class mcpkit.ErrorClass
		}{
			{"echo", map[string]any{"n": 2}, `{"n":2}`, ""},
			{"internal", nil, `error calling tool "internal"`, mcpkit.Fatal},
			{"panics", nil, `internal error in tool "panics"`, mcpkit.Fatal},
		}
		for _, tt := range tests {
			res, err := ts.CallTool(t.Context(), tt.tool, tt.args)
			if err != nil {
				t.Fatalf("%s: %v", tt.tool, err)
			}
			got := resultText(t, res)
			if tt.class == "" {
				got = canonicalJSON(got)
			}
			if got != tt.text || mcpkit.ErrorClassOf(res) != tt.class {
				t.Errorf("%s: got %q (class %q), want %q (class %q)", tt.tool, got, mcpkit.ErrorClassOf(res), tt.text, tt.class)
			}
			mustNotContain(t, "hunter2", map[string]string{tt.tool + "'s result": mustMarshal(res)})
		}
		records := logs.records(t)
		calls := 0
		for _, r := range records {
			if r["msg"] == "tool call" {
				calls++
			}
		}
		if calls != len(tests) {
			t.Errorf("%d call records, want %d", calls, len(tests))
		}
		// Each outcome is logged once: the real error with its text, the
		// panic with its stack, both in the call's one record.
		if n := strings.Count(logs.String(), "hunter2"); n != 1 {
			t.Errorf("the real error was logged %d times, want once:\n%s", n, logs.String())
		}
		var panics []map[string]any
		for _, r := range records {
			if strings.Contains(mustMarshal(r), "boom") {
				panics = append(panics, r)
			}
		}
		if len(panics) != 1 {
			t.Fatalf("the panic was logged %d times, want once:\n%s", len(panics), logs.String())
		}
		if stack, _ := panics[0]["stack"].(string); panics[0]["tool"] != "panics" || !strings.Contains(stack, "recommended_test.go") {
			t.Errorf("panic record without the panicking stack: %v", panics[0])
		}
	})
}

// TestRecommendedLogsLatePanics checks that a handler panicking after its
// time limit, when nobody waits for it any more, is still logged (D4).
func TestRecommendedLogsLatePanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logBuffer{}
		late := newTool("late", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			time.Sleep(2 * time.Second) // ignores its context
			panic("too late")
		})
		h := middleware.Recommended(&middleware.RecommendedOptions{Logger: logs.logger(), Timeout: time.Second})(late.Handler)
		if _, err := call(t, h, late, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want a timeout", err)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if strings.Count(logs.String(), "too late") != 1 || !strings.Contains(logs.String(), "after its timeout") {
			t.Errorf("late panic not logged once:\n%s", logs.String())
		}
	})
}

// canonicalJSON re-encodes a JSON text with sorted keys.
func canonicalJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	return mustMarshal(v)
}

func TestRecommendedTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := newTool("slow", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		h := middleware.Recommended(&middleware.RecommendedOptions{Logger: nil, Timeout: 2 * time.Second})(slow.Handler)
		start := time.Now()
		_, err := call(t, h, slow, nil)
		var te *middleware.TimeoutError
		if !errors.As(err, &te) || time.Since(start) != 2*time.Second || !strings.Contains(err.Error(), `"slow"`) {
			t.Errorf("got %v after %v", err, time.Since(start))
		}
	})
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
