package mcpkit_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// passThrough is a middleware layer that does nothing but call next.
func passThrough(next mcpkit.Handler) mcpkit.Handler {
	return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return next.ServeTool(ctx, req)
	})
}

var benchResult = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}

func benchHandler(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	return benchResult, nil
}

func TestPassThroughAddsNoAllocations(t *testing.T) {
	req := mcpkittest.NewRequest(tool("t", nil), map[string]int{"a": 1})
	ctx := context.Background()
	bare := mcpkit.HandlerFunc(benchHandler)
	wrapped := mcpkit.Chain(passThrough, passThrough, passThrough)(bare)
	for name, h := range map[string]mcpkit.Handler{"bare": bare, "three layers": wrapped} {
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := h.ServeTool(ctx, req); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, allocs)
		}
	}
}

// BenchmarkCall compares one tools/call over in-memory transports: a
// handler registered directly on the SDK server, and the same handler
// served by mcpkit with three pass-through middleware.
func BenchmarkCall(b *testing.B) {
	args := map[string]any{"a": 1, "b": 2}
	sdkHandler := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return benchResult, nil
	}
	b.Run("sdk", func(b *testing.B) {
		s := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
		s.AddTool(&mcp.Tool{Name: "t", InputSchema: objectSchema}, sdkHandler)
		benchCalls(b, connectSDK(b, s), args)
	})
	b.Run("mcpkit", func(b *testing.B) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench"}, nil)
		srv.Use(passThrough, passThrough, passThrough)
		if err := srv.Add(tool("t", benchHandler)); err != nil {
			b.Fatal(err)
		}
		benchCalls(b, connectSDK(b, srv.MCPServer()), args)
	})
}

func connectSDK(b *testing.B, s *mcp.Server) *mcp.ClientSession {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
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

func benchCalls(b *testing.B, cs *mcp.ClientSession, args any) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "t", Arguments: args}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
