package transform_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

func ExampleNamespace() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
	if err := srv.Add(echoTool("search", ""), echoTool("issues", "")); err != nil {
		log.Fatal(err)
	}
	if err := srv.Transform(transform.Namespace("github", "_")); err != nil {
		log.Fatal(err)
	}
	for _, t := range srv.Tools() {
		fmt.Println(t.Name)
	}
	// Output:
	// github_issues
	// github_search
}

func ExampleSelect() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
	if err := srv.Add(echoTool("search", ""), echoTool("issues", "", "github")); err != nil {
		log.Fatal(err)
	}
	err := srv.Transform(transform.Select(mcpkit.Tagged("github"), transform.Namespace("gh", ".")))
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range srv.Tools() {
		fmt.Println(t.Name)
	}
	// Output:
	// gh.issues
	// search
}

func ExampleVersions() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "api"}, nil)
	if err := srv.Add(echoTool("calc", "1.4"), echoTool("calc", "2.0"), echoTool("calc", "3.0-beta")); err != nil {
		log.Fatal(err)
	}
	// Serve the 2.x line: 3.0-beta stays out, 2.0 is the highest left.
	if err := srv.Transform(transform.Versions("2", "3.0-beta")); err != nil {
		log.Fatal(err)
	}
	t, _ := srv.Lookup("calc")
	fmt.Println(t.Version, t.Meta[mcpkit.MetaKeyVersions])
	// Output: 2.0 [2.0]
}

func ExampleDiscovery() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "big"}, nil)
	for _, name := range []string{"create_invoice", "list_repos", "get_weather"} {
		t := echoTool(name, "")
		t.Description = "Does " + name + "."
		if err := srv.Add(t); err != nil {
			log.Fatal(err)
		}
	}
	if err := transform.Discovery(srv, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	ctx := context.Background()
	list, _ := cs.ListTools(ctx, nil)
	for _, t := range list.Tools {
		fmt.Println("listed:", t.Name)
	}
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "weather"}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "get_weather", "arguments": map[string]any{}}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// listed: call_tool
	// listed: describe_tool
	// listed: search_tools
	// {"tools":[{"name":"get_weather","description":"Does get_weather.","score":0.4868}]}
	// get_weather@ as get_weather
}
