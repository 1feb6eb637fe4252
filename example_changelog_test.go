package mcpkit_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// Code that derives something from the served tools (here, a map of
// descriptions by name) brings it up to date with the names changed since
// the generation it was made for, and reads every tool again only when the
// server no longer knows what changed.
func ExampleServer_ChangedSince() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "example"}, nil)
	tool := func(name, desc string) *mcpkit.Tool {
		return &mcpkit.Tool{
			Tool: mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)},
			Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			}),
		}
	}
	if err := srv.Add(tool("greet", "Say hello."), tool("add", "Add numbers.")); err != nil {
		panic(err)
	}

	descriptions := map[string]string{}
	gen := srv.Generation()
	for _, t := range srv.Callable(context.Background(), nil) {
		descriptions[t.Name] = t.Description
	}

	srv.Remove("add")
	if err := srv.Add(tool("echo", "Echo the input.")); err != nil {
		panic(err)
	}

	names, now, ok := srv.ChangedSince(gen)
	if !ok {
		return // read every tool again, with Callable
	}
	for _, name := range names {
		if t, ok := srv.Lookup(name); ok {
			descriptions[name] = t.Description
		} else {
			delete(descriptions, name)
		}
	}
	fmt.Println(names, now == srv.Generation()) // the next update starts from now
	fmt.Println(descriptions)
	// Output:
	// [add echo] true
	// map[echo:Echo the input. greet:Say hello.]
}
