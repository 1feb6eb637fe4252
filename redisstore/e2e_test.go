package redisstore_test

import (
	"context"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// replica returns a stateless server with one tool, "t", behind
// RateLimit(l), connected to an SDK client.
func replica(t *testing.T, l middleware.Limiter) *mcpkittest.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "replica"}, nil)
	srv.Use(middleware.MaskErrors(nil), middleware.RateLimit(l, nil))
	err := srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "t", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return mcpkittest.NewStatelessServer(t, srv, nil)
}

// TestRateLimitAcrossReplicas runs two replicas, as a load balancer would
// see them, on one Redis: they share the budget; with Redis down, the one
// that fails closed answers an error and the one that fails open serves.
func TestRateLimitAcrossReplicas(t *testing.T) {
	s := redistest.Start(t)
	prefix := s.Prefix(t)
	closed := replica(t, redisstore.NewLimiter(s.Client(t), 1.0/3600, 3, &redisstore.LimiterOptions{Prefix: prefix}))
	open := replica(t, redisstore.NewLimiter(s.Client(t), 1.0/3600, 3, &redisstore.LimiterOptions{
		Prefix:   prefix,
		FailOpen: middleware.NewTokenBucket(rate.Inf, 0, nil),
	}))
	call := func(ts *mcpkittest.Server) *mcp.CallToolResult {
		t.Helper()
		res, err := ts.CallTool(t.Context(), "t", nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	for i, ts := range []*mcpkittest.Server{closed, open, closed} {
		if res := call(ts); res.IsError {
			t.Fatalf("call %d of the burst of 3: %+v", i+1, res)
		}
	}
	for _, ts := range []*mcpkittest.Server{open, closed} {
		res := call(ts)
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || res.Meta[middleware.MetaKeyRetryAfter] == nil {
			t.Fatalf("call over the shared burst: %+v (class %q); want a retryable error with a retry delay", res, mcpkit.ErrorClassOf(res))
		}
	}

	s.Stop(t)
	res := call(closed)
	// An internal error (masked: the client does not learn where Redis
	// is), retryable since Redis may be back, without a retry delay since
	// nobody knows when.
	if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || res.Meta[middleware.MetaKeyRetryAfter] != nil ||
		res.Content[0].(*mcp.TextContent).Text != `error calling tool "t"` {
		t.Errorf("fail-closed replica with Redis down: %+v (class %q); want a masked, retryable internal error", res, mcpkit.ErrorClassOf(res))
	}
	if res := call(open); res.IsError {
		t.Errorf("fail-open replica with Redis down: %+v; want served", res)
	}
}
