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
		orderTool(),
		newTool("internal", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, secret }),
		newTool("panics", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { panic("boom") }),
	}
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		logs := &logBuffer{}
		ts := connect(newServer(t, []mcpkit.Middleware{middleware.Recommended(logs.logger(), nil)}, tools...))
		tests := []struct {
			tool  string
			args  any
			text  string
			class mcpkit.ErrorClass
		}{
			{"order", map[string]any{"lines": []any{map[string]any{"sku": "abc", "qty": "2"}}},
				`{"lines":[{"gift":false,"qty":2,"sku":"abc"}],"priority":"low"}`, ""},
			{"order", map[string]any{"lines": []any{}}, "invalid arguments: lines: ", mcpkit.Retryable},
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
			if !strings.HasPrefix(got, tt.text) || mcpkit.ErrorClassOf(res) != tt.class {
				t.Errorf("%s: got %q (class %q), want prefix %q (class %q)", tt.tool, got, mcpkit.ErrorClassOf(res), tt.text, tt.class)
			}
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
		if !strings.Contains(logs.String(), "hunter2") {
			t.Error("the real error was not logged on the server")
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
		h := middleware.Recommended(nil, &middleware.RecommendedOptions{Timeout: 2 * time.Second})(slow.Handler)
		start := time.Now()
		_, err := call(t, h, slow, nil)
		var te *middleware.TimeoutError
		if !errors.As(err, &te) || time.Since(start) != 2*time.Second || !strings.Contains(err.Error(), `"slow"`) {
			t.Errorf("got %v after %v", err, time.Since(start))
		}
	})
}
