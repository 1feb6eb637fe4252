package visibility_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// DisableNames switches tools off by name while serving, a kill switch
// say. The server asks again only about the tools it names, so the change
// costs the same in a catalog of 100,000 tools as in one of three.
func ExampleDisableNames() {
	srv := demoServer()
	rules := visibility.New()
	rules.Attach(srv)
	cs := connect(srv, nil)
	defer cs.Close()

	off := visibility.DisableNames("deploy")
	rules.Add(off)
	listed(cs)
	called(cs, "deploy", nil)

	rules.Remove(off)
	listed(cs)
	// Output:
	// [beta_report search] public
	// deploy -> -32602 unknown tool "deploy"
	// [beta_report deploy search] public
}

// EnableNames serves tools by name in an allowlist.
func ExampleEnableNames() {
	srv := demoServer()
	rules := visibility.NewAllowlist(visibility.EnableNames("search"))
	rules.Attach(srv)
	cs := connect(srv, nil)
	defer cs.Close()
	listed(cs)

	rules.Add(visibility.EnableNames("deploy"))
	listed(cs)
	// Output:
	// [search] public
	// [deploy search] public
}

// RequireNames shows tools, by name, only to the requests for which a
// Predicate holds: here, deploy to tokens with the "deploy" scope.
func ExampleRequireNames() {
	rules := visibility.New(visibility.RequireNames(visibility.Scopes("deploy"), "deploy"))

	deploy := &mcpkit.Tool{Tool: mcp.Tool{Name: "deploy"}}
	search := &mcpkit.Tool{Tool: mcp.Tool{Name: "search"}}
	ada := mcpkittest.NewRequest(deploy, nil, mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada", Scopes: []string{"deploy"}}))
	bob := mcpkittest.NewRequest(deploy, nil, mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "bob"}))

	ctx := context.Background()
	fmt.Println(rules.Allowed(ctx, deploy, ada), rules.Allowed(ctx, deploy, bob), rules.Allowed(ctx, search, bob))
	// Output:
	// true false true
}

// DisableVersion retires one version of a tool: calls reach the next
// version down, and a call pinned to the retired one is answered as for an
// unknown tool.
func ExampleDisableVersion() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "demo"}, nil)
	for _, v := range []string{"1", "2"} {
		err := srv.Add(&mcpkit.Tool{
			Tool: mcp.Tool{Name: "report", InputSchema: map[string]any{"type": "object"}},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "report v" + v}}}, nil
			}),
			Version: v,
		})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	rules := visibility.New()
	rules.Attach(srv)
	cs := connect(srv, nil)
	defer cs.Close()

	rules.Add(visibility.DisableVersion("report", "2"))
	called(cs, "report", nil)
	called(cs, "report", mcp.Meta{mcpkit.MetaKeyVersion: "2"})
	// Output:
	// report -> report v1
	// report -> -32602 unknown tool "report"
}

// A snapshot answers as the rules did when it was taken. A server takes
// one each time it is refreshed, so that requests already running, and its
// review of the clients listening for changes, see the rules as they were.
func ExampleRules_Snapshot() {
	rules := visibility.New()
	deploy := &mcpkit.Tool{Tool: mcp.Tool{Name: "deploy"}}

	before := rules.Snapshot()
	rules.Add(visibility.DisableNames("deploy"))
	fmt.Println(before.Enabled(deploy), rules.Enabled(deploy), rules.Snapshot().Enabled(deploy))
	// Output:
	// true false false
}

// ToolNames lists the tool names the rules were written with, which a
// server checks once it serves: a name that selects no tool is logged,
// with the name it most likely meant.
func ExampleRules_ToolNames() {
	rules := visibility.New(
		visibility.DisableNames("deploy"),
		visibility.Require(mcpkit.Not(mcpkit.Named("search")), visibility.Authenticated()),
		visibility.Disable(mcpkit.Tagged("beta")),
	)
	fmt.Println(rules.ToolNames())
	// Output:
	// [deploy search]
}
