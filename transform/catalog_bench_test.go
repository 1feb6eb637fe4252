package transform_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/transform"
)

// BenchmarkCatalogTransforms compares tools/call and tools/list (200
// tools, one page) over in-memory transports with no catalog transform and
// with five: transforms run when the registry changes, so both should cost
// the same.
func BenchmarkCatalogTransforms(b *testing.B) {
	five := []mcpkit.CatalogTransform{
		transform.Namespace("app", "_"),
		transform.Select(mcpkit.Tagged("even"), transform.Namespace("even", ".")),
		transform.Versions("1", "9"),
		func(t *mcpkit.Tool) (*mcpkit.Tool, error) {
			t2 := t.Clone()
			t2.Description = "transformed: " + t.Description
			return t2, nil
		},
		transform.Select(mcpkit.Not(mcpkit.Tagged("even")), transform.Namespace("odd", ".")),
	}
	for _, bc := range []struct {
		name       string
		transforms []mcpkit.CatalogTransform
		call       string
	}{
		{"none", nil, "t0"},
		{"five", five, "even.app_t0"},
	} {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench"}, nil)
		for i := range 200 {
			tl := &mcpkit.Tool{
				Tool:    mcp.Tool{Name: fmt.Sprintf("t%d", i), Description: "a tool", InputSchema: &jsonschema.Schema{Type: "object"}},
				Handler: mcpkit.HandlerFunc(okHandler),
				Version: "1.0",
			}
			if i%2 == 0 {
				tl.Tags = []string{"even"}
			}
			if err := srv.Add(tl); err != nil {
				b.Fatal(err)
			}
		}
		if err := srv.Transform(bc.transforms...); err != nil {
			b.Fatal(err)
		}
		cs := connect(b, srv)
		ctx := context.Background()
		b.Run("call/"+bc.name, func(b *testing.B) {
			params := &mcp.CallToolParams{Name: bc.call, Arguments: map[string]any{}}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
		b.Run("list/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res, err := cs.ListTools(ctx, nil); err != nil || len(res.Tools) != 200 {
					b.Fatal(err)
				}
			}
		})
	}
}

var okResult = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}

func okHandler(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return okResult, nil }

func connect(b *testing.B, srv *mcpkit.Server) *mcp.ClientSession {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close(); ss.Close() })
	return cs
}
