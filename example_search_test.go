package mcpkit_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// Code that searches the catalog for a caller asks the providers for their
// tools with SearchProvided, and reaches one by its name with Resolve, as
// a call of it from that caller would.
func ExampleServer_SearchProvided() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reports"}, nil)
	srv.Add(tool("report_help", reply("ask for a report")))
	srv.AddProvider(newReports("sales", "churn", "help"))

	ctx := context.Background()
	caller := mcpkittest.NewRequest(nil, nil)
	// reports searches nothing itself: its first 100 tools are read, and
	// report_help is left out, a registered tool's name.
	for _, t := range srv.SearchProvided(ctx, caller, "sales report", 10, 100) {
		fmt.Println("found:", t.Name)
	}
	t, h, ok := srv.Resolve(ctx, caller, "report_sales", nil)
	res, _ := h.ServeTool(ctx, mcpkittest.NewRequest(t, nil))
	fmt.Println(ok, res.Content[0].(*mcp.TextContent).Text)
	t, h, _ = srv.Resolve(ctx, caller, "report_help", nil) // registered: it wins
	res, _ = h.ServeTool(ctx, mcpkittest.NewRequest(t, nil))
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// found: report_churn
	// found: report_sales
	// true the sales report
	// ask for a report
}
