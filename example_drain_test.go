package mcpkit_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// A replica about to stop drains: its readiness check fails at once, new
// calls are refused retryably (another replica serves them), and the
// functions registered with RegisterOnDrain hand over what outlives a call.
func ExampleServer_Drain() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "replica"}, nil)
	srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "greet", InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
		}),
	})
	srv.RegisterOnDrain(func(ctx context.Context) error {
		fmt.Println("handing background work over")
		return nil
	})
	ready := srv.ReadinessHandler() // mount it on /readyz, say
	probe := func() int {
		rec := httptest.NewRecorder()
		ready.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code
	}
	cs := connect(srv)
	defer cs.Close()
	fmt.Println("readiness:", probe())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Drain(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("readiness:", probe())
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(mcpkit.ErrorClassOf(res), res.Meta[mcpkit.MetaKeyRetryAfter])
	// Output:
	// readiness: 200
	// handing background work over
	// readiness: 503
	// retryable 1000
}
