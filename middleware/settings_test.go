package middleware_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
)

// Each middleware with settings shows them in the server's Pipeline.
func TestPipelineSettings(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "settings"}, nil)
	srv.Use(
		middleware.CircuitBreaker(nil),
		middleware.Bulkhead(map[string]int{"report": 3}, nil),
		middleware.ConcurrencyLimit(2, &middleware.ConcurrencyLimitOptions{Wait: time.Second}),
		middleware.RateLimit(middleware.NewTokenBucket(rate.Every(time.Second), 5, nil), nil),
		middleware.Timeout(time.Minute, nil),
		middleware.TokenBudget(1000, nil),
		middleware.ArgumentSizeLimit(4096),
		middleware.ResultSizeLimit(8192, &middleware.ResultSizeLimitOptions{Truncate: true}),
	)
	answer := func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return text1("x"), nil }
	if err := srv.Add(newTool("report", answer)); err != nil {
		t.Fatal(err)
	}
	layers, _ := srv.Pipeline("report")
	var got []string
	for _, l := range layers {
		var s []string
		for _, st := range l.Settings {
			s = append(s, st.Name+"="+st.Value)
		}
		got = append(got, fmt.Sprintf("%s[%s]", l.Name, strings.Join(s, " ")))
	}
	want := []string{
		"middleware.CircuitBreaker[failureRate=0.5 window=20 minCalls=10 cooldown=30s]",
		"middleware.Bulkhead[concurrency=3]",
		"middleware.ConcurrencyLimit[concurrency=2 wait=1s]",
		"middleware.RateLimit[key=verified caller and tool]",
		"middleware.Timeout[timeout=1m0s]",
		"middleware.TokenBudget[tokens=1000]",
		"middleware.ArgumentSizeLimit[argumentBytes=4096]",
		"middleware.ResultSizeLimit[resultBytes=8192 truncate=true]",
		"mcpkit.Validation[]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("layers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
