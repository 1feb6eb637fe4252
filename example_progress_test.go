package mcpkit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
)

// A long tool reports its progress with one call; the client hears it when
// it asked with a progress token, and a Timeout with an idle limit lets it
// run as long as it keeps reporting.
func ExampleReportProgress() {
	type in struct {
		Files int `json:"files"`
	}
	index := tools.Must(tools.New("index", func(ctx context.Context, in in) (string, error) {
		for i := 1; i <= in.Files; i++ {
			// ... index file i ...
			mcpkit.ReportProgress(ctx, float64(i), float64(in.Files), "indexing")
		}
		return fmt.Sprintf("indexed %d files", in.Files), nil
	}, nil))

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "indexer"}, nil)
	srv.Use(middleware.Timeout(time.Hour, &middleware.TimeoutOptions{Idle: 30 * time.Second}))
	srv.Add(index)

	cs, _ := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
	defer cs.Close()
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name: "index", Arguments: map[string]any{"files": 3}, Meta: mcp.Meta{"progressToken": "job-1"},
	})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: indexed 3 files
}

// WatchProgress lets a middleware see each report of the calls it wraps.
func ExampleWatchProgress() {
	var reports int
	countReports := func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return next.ServeTool(mcpkit.WatchProgress(ctx, func(done, total float64, _ string) { reports++ }), req)
		})
	}
	h := countReports(mcpkit.HandlerFunc(func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
		mcpkit.ReportProgress(ctx, 1, 2, "")
		mcpkit.ReportProgress(ctx, 2, 2, "")
		return &mcp.CallToolResult{}, nil
	}))
	h.ServeTool(context.Background(), mcpkittest.NewRequest(tool("t", reply("x")), nil))
	fmt.Println(reports)
	// Output: 2
}
