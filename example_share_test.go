package mcpkit_test

import (
	"context"
	"fmt"
	"log"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// ExampleServer_ShareChanges runs two replicas of one server in one
// process, on a MemoryBus (across processes, a bus on Redis). Both build
// their tools from configuration they share, here a feature flag; when an
// operator turns it on through replica A, replica B hears of it, catches up
// in OnChange, and tells its own clients that the list changed.
func ExampleServer_ShareChanges() {
	var betaOn atomic.Bool // stands for a flag service or a database
	beta := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "beta", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "beta"}}}, nil
		}),
	}
	// syncTools brings a replica in line with the configuration.
	syncTools := func(srv *mcpkit.Server) error {
		_, served := srv.Lookup("beta")
		switch {
		case betaOn.Load() && !served:
			return srv.Add(beta)
		case !betaOn.Load() && served:
			srv.Remove("beta")
		}
		return nil
	}

	bus := mcpkit.NewMemoryBus()
	a := mcpkit.NewServer(&mcp.Implementation{Name: "replica-a"}, nil)
	b := mcpkit.NewServer(&mcp.Implementation{Name: "replica-b"}, nil)
	stopA, err := a.ShareChanges(bus, &mcpkit.ShareOptions{
		OnChange: func(ctx context.Context) error { return syncTools(a) },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer stopA()
	caughtUp := make(chan struct{})
	stopB, err := b.ShareChanges(bus, &mcpkit.ShareOptions{
		OnChange: func(ctx context.Context) error {
			defer close(caughtUp) // for the example's output only
			return syncTools(b)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer stopB()

	betaOn.Store(true)
	if err := syncTools(a); err != nil { // A serves beta, and says so on the bus
		log.Fatal(err)
	}
	<-caughtUp
	_, served := b.Lookup("beta")
	fmt.Println("replica B serves beta:", served)
	// Output: replica B serves beta: true
}
