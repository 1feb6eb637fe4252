package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
)

func ExampleCircuitBreaker() {
	srv := newExampleServer([]mcpkit.Middleware{
		middleware.Recover(nil),
		middleware.MaskErrors(nil),
		middleware.CircuitBreaker(&middleware.CircuitBreakerOptions{
			Window:   4, // the last 4 calls,
			MinCalls: 4, // once there are 4,
			// half of them failing (the default rate) opens the circuit
			// for 30 seconds (the default cooldown).
			OnStateChange: func(key string, from, to middleware.CircuitState) {
				fmt.Printf("circuit %s: %v -> %v\n", key, from, to)
			},
		}),
		middleware.Timeout(10*time.Second, nil),
	}, exampleTool("search", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return nil, errors.New("search backend: connection refused")
	}))
	cs := connect(srv)
	defer cs.Close()
	for range 4 {
		show(cs, "search", nil)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search"})
	if err != nil {
		log.Fatal(err)
	}
	text, _, _ := strings.Cut(res.Content[0].(*mcp.TextContent).Text, ": try again")
	retry := time.Duration(res.Meta[middleware.MetaKeyRetryAfter].(float64)) * time.Millisecond
	fmt.Printf("isError (%s): %s; retry after about %v\n", mcpkit.ErrorClassOf(res), text, retry.Round(time.Second))
	// Output:
	// isError (fatal): error calling tool "search"
	// isError (fatal): error calling tool "search"
	// isError (fatal): error calling tool "search"
	// circuit search: closed -> open
	// isError (fatal): error calling tool "search"
	// isError (retryable): tool "search" is unavailable after repeated failures; retry after about 30s
}
