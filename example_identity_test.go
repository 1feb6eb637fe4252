package mcpkit_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// A deprecated alias has the identity of the tool it serves: rules, limits
// and keys about one hold for the other.
func ExampleTool_ID() {
	deleteRepo := tool("delete_repo", reply("deleted"))
	deleteRepo.Version = "2"
	alias, _ := transform.Alias(deleteRepo, "remove_repo", nil)
	fmt.Println(alias.Name, "is", alias.ID())
	for t := range alias.Lineage() {
		fmt.Println(" derives from", t.Name)
	}
	fmt.Println(mcpkit.Named("delete_repo")(alias))
	// Output:
	// remove_repo is delete_repo@2
	//  derives from remove_repo
	//  derives from delete_repo
	// true
}

// Reaches asks whether a caller may still call a tool, by its identity,
// whatever name it is served under: before resuming work for it later.
func ExampleServer_Reaches() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reaches"}, nil)
	report := tool("report", reply("x"))
	srv.Add(report)
	srv.Transform(transform.Namespace("acme", "."))
	stranger := &mcpkit.Request{} // a caller without credentials
	fmt.Println(srv.Reaches(context.Background(), stranger, report.ID()))
	visibility.New(visibility.Disable(mcpkit.Named("report"))).Attach(srv)
	fmt.Println(srv.Reaches(context.Background(), stranger, report.ID()))
	// Output:
	// true
	// false
}
