package transform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

// recipes provides a tool per recipe, and searches them itself (a
// database's full-text search, in a real one), so that search_tools finds
// them without listing them all.
type recipes struct{ tools []*mcpkit.Tool }

func (r recipes) ListTools(_ context.Context, _ mcpkit.Caller, after string, limit int) ([]*mcpkit.Tool, error) {
	var out []*mcpkit.Tool
	for _, t := range r.tools {
		if t.Name > after && (limit <= 0 || len(out) < limit) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (r recipes) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	for _, t := range r.tools {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, nil
}

func (r recipes) SearchTools(_ context.Context, _ mcpkit.Caller, query string, limit int) ([]*mcpkit.Tool, error) {
	var out []*mcpkit.Tool
	for _, t := range r.tools {
		for _, word := range strings.Fields(query) {
			if strings.Contains(strings.ToLower(t.Description), word) && len(out) < limit {
				out = append(out, t)
				break
			}
		}
	}
	return out, nil
}

// The tools of a provider are found, described and called through the
// meta-tools as the registered ones are.
func ExampleDiscovery_providers() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "kitchen"}, nil)
	timer := echoTool("set_timer", "")
	timer.Description = "Set a kitchen timer for the soup."
	if err := srv.Add(timer); err != nil {
		log.Fatal(err)
	}
	var r recipes
	for _, dish := range []string{"bread", "soup"} {
		r.tools = append(r.tools, &mcpkit.Tool{
			Tool: mcp.Tool{Name: "cook_" + dish, Description: "Cook the " + dish + ".", InputSchema: json.RawMessage(`{"type":"object"}`)},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a " + dish}}}, nil
			}),
		})
	}
	srv.AddProvider(r)
	if err := transform.Discovery(srv, nil); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	cs, err := mcpkittest.ConnectInMemory(ctx, srv, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "cook soup"}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "cook_soup"}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// {"tools":[{"name":"cook_soup","description":"Cook the soup.","score":1.619},{"name":"cook_bread","description":"Cook the bread.","score":0.8094},{"name":"set_timer","description":"Set a kitchen timer for the soup.","score":0.4345}]}
	// a soup
}
