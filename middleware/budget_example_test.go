package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
)

func ExampleTokenBudget() {
	srv := newExampleServer([]mcpkit.Middleware{
		middleware.TokenBudget(40, &middleware.TokenBudgetOptions{
			Hint: func(req *mcpkit.Request, t *middleware.Truncation) string {
				return "[more lines: call again with after=<the last number shown>]"
			},
		}),
	}, exampleTool("access_log", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		var b strings.Builder
		for i := range 500 {
			fmt.Fprintf(&b, "%03d GET /index.html 200\n", i)
		}
		return text1(b.String()), nil
	}))
	cs := connect(srv)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "access_log"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	t := middleware.TruncationOf(res)
	fmt.Printf("about %d of %d tokens kept\n", t.KeptTextTokens, t.TextTokens)
	// Output:
	// 000 GET /index.html 200
	// 001 GET /index.html 200
	// 002 GET /index.html 200
	// 003 GET /index.html 200
	// [more lines: call again with after=<the last number shown>]
	// about 24 of 3000 tokens kept
}

// A typed tool's structured content loses rows, never its validity: the
// text that repeats it follows, and the hint says where the next page
// starts.
func ExampleTokenBudget_structured() {
	type Page struct {
		Rows  []string `json:"rows"`
		Total int      `json:"total"`
	}
	list := tools.Must(tools.New("list", func(ctx context.Context, in struct{}) (Page, error) {
		p := Page{Total: 1000}
		for i := range p.Total {
			p.Rows = append(p.Rows, fmt.Sprintf("row-%d", i))
		}
		return p, nil
	}, nil))
	srv := newExampleServer([]mcpkit.Middleware{
		middleware.TokenBudget(50, &middleware.TokenBudgetOptions{
			Hint: func(req *mcpkit.Request, t *middleware.Truncation) string {
				a := t.Arrays[0]
				return fmt.Sprintf("%d more rows: call again with offset=%d", a.Length-a.Kept, a.Kept)
			},
		}),
	}, list)
	cs := connect(srv)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list"})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range res.Content {
		fmt.Println(c.(*mcp.TextContent).Text)
	}
	structured, _ := json.Marshal(res.StructuredContent)
	fmt.Println(string(structured))
	// Output:
	// {"rows":["row-0","row-1","row-2","row-3","row-4","row-5","row-6","row-7","row-8","row-9","row-10","row-11","row-12","row-13","row-14","row-15"],"total":1000}
	// 984 more rows: call again with offset=16
	// {"rows":["row-0","row-1","row-2","row-3","row-4","row-5","row-6","row-7","row-8","row-9","row-10","row-11","row-12","row-13","row-14","row-15"],"total":1000}
}
