package mcpkit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/tools"
)

// A time limit for resources/read alone: For selects the layer for the
// resources, and the pipelines show where it applies and where not.
func ExampleFor() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	srv.Use(middleware.Recover(nil), mcpkit.For(mcpkit.OfKind(mcpkit.KindResource), middleware.Timeout(5*time.Second, nil)))
	srv.AddResources(tools.TextResource("memo://readme", "readme", "text/plain", "Read me.", nil))
	srv.AddPrompts(&mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "greet"},
		Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		}),
	})
	show := func(kind string, layers []mcpkit.Layer) {
		for _, l := range layers {
			if l.Skipped {
				fmt.Printf("%s: %s skipped (%s)\n", kind, l.Name, l.Reason)
				continue
			}
			fmt.Printf("%s: %s\n", kind, l.Name)
		}
	}
	rl, _ := srv.ResourcePipeline("memo://readme")
	show("resource", rl)
	pl, _ := srv.PromptPipeline("greet")
	show("prompt", pl)
	// Output:
	// resource: middleware.Recover
	// resource: middleware.Timeout
	// prompt: middleware.Recover
	// prompt: middleware.Timeout skipped (not selected by mcpkit.For)
}
