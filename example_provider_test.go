package mcpkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// reports provides one tool per report a database holds; here, a map. A
// real one would pick the caller's rows by its token (c.TokenInfo()).
type reports struct{ tools []*mcpkit.Tool }

func newReports(names ...string) *reports {
	r := &reports{}
	for _, name := range names {
		r.tools = append(r.tools, &mcpkit.Tool{
			Tool: mcp.Tool{Name: "report_" + name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the " + name + " report"}}}, nil
			}),
		})
	}
	sort.Slice(r.tools, func(i, j int) bool { return r.tools[i].Name < r.tools[j].Name })
	return r
}

func (r *reports) ListTools(_ context.Context, _ mcpkit.Caller, after string, limit int) ([]*mcpkit.Tool, error) {
	i := sort.Search(len(r.tools), func(i int) bool { return r.tools[i].Name > after })
	out := r.tools[i:]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (r *reports) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	for _, t := range r.tools {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, nil
}

// A provider's tools are listed and called with the registered ones,
// without being registered.
func ExampleServer_AddProvider() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reports"}, nil)
	srv.Add(tool("help", reply("ask for a report")))
	srv.AddProvider(newReports("sales", "churn"))

	ctx := context.Background()
	cs, _ := mcpkittest.ConnectInMemory(ctx, srv, nil)
	defer cs.Close()
	for t := range cs.Tools(ctx, nil) {
		fmt.Println(t.Name)
	}
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "report_churn"})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	srv.ProviderChanged("") // the database changed: every listening client is told
	// Output:
	// help
	// report_churn
	// report_sales
	// the churn report
}

// Generation tells code that derives something from the served tools (an
// index, a cache) when to make it again.
func ExampleServer_Generation() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "gen"}, nil)
	before := srv.Generation()
	srv.Add(tool("a", reply("a")))
	fmt.Println(srv.Generation() != before)
	// Output: true
}
