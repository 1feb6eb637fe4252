package middleware

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// TestCircuitBreakerBoundsKeys checks that a breaker with more keys than
// maxCircuits forgets closed circuits, those without failures first, and
// keeps open ones.
func TestCircuitBreakerBoundsKeys(t *testing.T) {
	b := &breaker{opts: CircuitBreakerOptions{Window: 1, MinCalls: 1, FailureRate: 1, Cooldown: 1 << 62}}
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
	if b.n != maxCircuits {
		t.Fatalf("%d circuits, want %d", b.n, maxCircuits)
	}
	serve("new", "ok")
	var keys []string
	b.circuits.Range(func(k, _ any) bool {
		keys = append(keys, k.(string))
		return true
	})
	slices.Sort(keys)
	if b.n != 2 || !slices.Equal(keys, []string{"new", "open"}) {
		t.Errorf("circuits %v (counted %d) after forgetting; want the open one and the new one", keys, b.n)
	}
}
