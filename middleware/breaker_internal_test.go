package middleware

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// TestCircuitBreakerBoundsKeys checks that a breaker with more keys than
// maxCircuits forgets closed circuits, those without failures first, and
// keeps open ones.
func TestCircuitBreakerBoundsKeys(t *testing.T) {
	b := &breaker{opts: CircuitBreakerOptions{Window: 1, MinCalls: 1, FailureRate: 1, Cooldown: 1 << 62}, circuits: map[string]*circuit{}}
	h := &breakerHandler{b: b, next: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		if string(req.Arguments) == "fail" {
			return nil, errors.New("down")
		}
		return &mcp.CallToolResult{}, nil
	})}
	b.opts.Key = func(req *mcpkit.Request) string { return req.Tool.Name }
	serve := func(key, args string) {
		h.ServeTool(context.Background(), &mcpkit.Request{Tool: &mcpkit.Tool{Tool: mcp.Tool{Name: key}}, Arguments: []byte(args)})
	}
	serve("open", "fail") // opens
	for i := range maxCircuits - 1 {
		serve(fmt.Sprint("quiet", i), "ok")
	}
	if len(b.circuits) != maxCircuits {
		t.Fatalf("%d circuits, want %d", len(b.circuits), maxCircuits)
	}
	serve("new", "ok")
	if len(b.circuits) != 2 || b.circuits["open"] == nil || b.circuits["new"] == nil {
		t.Errorf("%d circuits after forgetting; want the open one and the new one", len(b.circuits))
	}
}
