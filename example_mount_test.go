package mcpkit_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// A server of another team's tools is mounted under a namespace: its
// tools are listed and called through the parent, its later changes
// included, until it is unmounted.
func ExampleServer_Mount() {
	billing := mcpkit.NewServer(&mcp.Implementation{Name: "billing"}, nil)
	billing.Add(tool("invoice", reply("invoice sent")))

	srv := mcpkit.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
	srv.Add(tool("help", reply("ask about billing")))
	unmount, err := srv.Mount("billing", billing)
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	cs, _ := mcpkittest.ConnectInMemory(ctx, srv, nil)
	defer cs.Close()
	billing.Add(tool("refund", reply("refund issued"))) // the parent's clients hear of it
	for t := range cs.Tools(ctx, nil) {
		fmt.Println(t.Name)
	}
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "billing_refund"})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)

	unmount()
	for t := range cs.Tools(ctx, nil) {
		fmt.Println("after unmount:", t.Name)
	}
	// Output:
	// billing_invoice
	// billing_refund
	// help
	// refund issued
	// after unmount: help
}

// A provider given to AddProvider is taken out with RemoveProvider.
func ExampleServer_RemoveProvider() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reports"}, nil)
	p := newReports("sales")
	srv.AddProvider(p)
	fmt.Println(srv.RemoveProvider(p), srv.RemoveProvider(p))
	// Output:
	// true false
}
