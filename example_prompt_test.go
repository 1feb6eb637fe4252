package mcpkit_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
)

func ExampleServer_AddPrompts() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "prompts"}, nil)
	// Recover and Timeout serve prompts too; a layer that serves tools
	// only is left out of a prompt's chain.
	srv.Use(middleware.Recover(nil), middleware.Timeout(10*time.Second, nil))
	err := srv.AddPrompts(&mcpkit.Prompt{
		Prompt: mcp.Prompt{
			Name:        "summarize",
			Description: "Summarize a text.",
			Arguments:   []*mcp.PromptArgument{{Name: "text", Required: true}},
		},
		Handler: mcpkit.PromptHandlerFunc(func(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Summarize: " + req.Arguments["text"]}},
			}}, nil
		}),
	})
	if err != nil {
		log.Fatal(err)
	}

	cs := connect(srv)
	defer cs.Close()
	list, _ := cs.ListPrompts(context.Background(), nil)
	fmt.Println(list.Prompts[0].Name, "-", list.Prompts[0].Description)
	res, _ := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "summarize", Arguments: map[string]string{"text": "a long story"}})
	fmt.Println(res.Messages[0].Content.(*mcp.TextContent).Text)
	layers, _ := srv.PromptPipeline("summarize")
	for _, l := range layers {
		fmt.Println(l.Name)
		for _, st := range l.Settings {
			fmt.Printf("  %s=%s\n", st.Name, st.Value)
		}
	}
	// Output:
	// summarize - Summarize a text.
	// Summarize: a long story
	// middleware.Recover
	// middleware.Timeout
	//   timeout=10s
}

// staffOnly serves prompts tagged "staff" only to requests that carry
// the header X-Staff: yes; tools are everyone's.
type staffOnly struct{}

func (staffOnly) Enabled(*mcpkit.Tool) bool                                 { return true }
func (staffOnly) PerRequest() bool                                          { return true }
func (staffOnly) Allowed(context.Context, *mcpkit.Tool, mcpkit.Caller) bool { return true }
func (staffOnly) EnabledTarget(mcpkit.Target) bool                          { return true }
func (staffOnly) AllowedTarget(_ context.Context, t mcpkit.Target, c mcpkit.Caller) bool {
	return !t.HasTag("staff") || c.Header().Get("X-Staff") == "yes"
}

func ExampleTargetVisibility() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "desk"}, nil)
	srv.SetVisibility(staffOnly{})
	reply := func(text string) mcpkit.PromptHandler {
		return mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		})
	}
	srv.AddPrompts(
		&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "faq"}, Handler: reply("Answer from the FAQ.")},
		&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "escalate"}, Handler: reply("Escalate."), Tags: []string{"staff"}},
	)
	cs := connect(srv) // in memory: no headers, so not staff
	defer cs.Close()
	list, _ := cs.ListPrompts(context.Background(), nil)
	for _, p := range list.Prompts {
		fmt.Println(p.Name)
	}
	_, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "escalate"})
	fmt.Println(err)
	// Output:
	// faq
	// calling "prompts/get": unknown prompt "escalate"
}
