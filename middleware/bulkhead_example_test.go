package middleware_test

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
)

func ExampleBulkhead() {
	started, release := make(chan struct{}), make(chan struct{})
	srv := newExampleServer([]mcpkit.Middleware{
		// "render" runs one call at a time, in a pool of its own; the
		// other tools share the server-wide limit, which render can take
		// at most one slot of.
		middleware.Bulkhead(map[string]int{"render": 1}, nil),
		middleware.ConcurrencyLimit(64, nil),
	},
		exampleTool("render", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			close(started)
			<-release
			return text1("rendered"), nil
		}),
		exampleTool("status", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return text1("idle"), nil
		}),
	)
	cs := connect(srv)
	defer cs.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		show(cs, "render", nil)
	}()
	<-started
	show(cs, "render", nil) // its pool is full
	show(cs, "status", nil) // the others still answer
	close(release)
	<-done
	// Output:
	// isError (retryable): tool "render" is busy: the limit of 1 concurrent calls is reached; try again later
	// idle
	// rendered
}
