package mcpkit_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
)

// benchPromptResult is what the prompts of BenchmarkPromptGet answer.
var benchPromptResult = &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "review this"}}}}

// BenchmarkPromptGet compares one prompts/get of a prompt with one
// required argument over in-memory transports: the prompt registered on
// the SDK server, and served by mcpkit through middleware.Recommended
// (logging to a discarded handler, recovery, masking, a time limit), which
// also checks the required argument before the chain.
func BenchmarkPromptGet(b *testing.B) {
	params := &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"code": "x := 1"}}
	args := []*mcp.PromptArgument{{Name: "code", Required: true}}
	b.Run("server=go-sdk", func(b *testing.B) {
		s := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
		s.AddPrompt(&mcp.Prompt{Name: "review", Arguments: args}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return benchPromptResult, nil
		})
		benchPrompts(b, connectSDK(b, s), params)
	})
	b.Run("server=mcpkit", func(b *testing.B) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench"}, nil)
		srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}))
		err := srv.AddPrompts(&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "review", Arguments: args},
			Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
				return benchPromptResult, nil
			})})
		if err != nil {
			b.Fatal(err)
		}
		benchPrompts(b, connectSDK(b, srv.MCPServer()), params)
	})
}

func benchPrompts(b *testing.B, cs *mcp.ClientSession, params *mcp.GetPromptParams) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.GetPrompt(ctx, params)
		if err != nil || len(res.Messages) != 1 {
			b.Fatal(err, res)
		}
	}
}
