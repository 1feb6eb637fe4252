// Command mainlayers prints the names Server.Pipeline gives the layers of
// a command's own middleware, one a line, for TestPipelineNamesCommand,
// which also runs its test, built with -trimpath.
package main

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// audit is a constructor small enough to be inlined into main.
func audit() mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return next.ServeTool(ctx, req)
		})
	}
}

// tenant is a middleware written as a function.
func tenant(next mcpkit.Handler) mcpkit.Handler { return next }

func main() {
	for _, name := range layers() {
		fmt.Println(name)
	}
}

// layers returns the names of the layers of a tool served with audit and
// tenant.
func layers() []string {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "mainlayers"}, nil)
	srv.Use(audit(), tenant)
	h := mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}}, Handler: h}); err != nil {
		panic(err)
	}
	ls, _ := srv.Pipeline("t")
	var names []string
	for _, l := range ls {
		names = append(names, l.Name)
	}
	return names
}
