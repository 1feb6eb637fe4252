package transform_test

import (
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
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
