package tools_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

func ExampleCompleteFrom() {
	type TripIn struct {
		City string `json:"city" description:"Where to go."`
	}
	plan := func(ctx context.Context, req *mcpkit.PromptRequest, in TripIn) ([]*mcp.PromptMessage, error) {
		return []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Plan a trip to " + in.City}}}, nil
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "trips"}, nil)
	err := srv.AddPrompts(tools.MustPrompt(tools.NewPrompt("plan", plan, &tools.PromptOptions{
		Complete: map[string]mcpkit.CompleteFunc{"city": tools.CompleteFrom("paris", "park city", "rome")},
	})))
	if err != nil {
		log.Fatal(err)
	}
	cs := connect(srv)
	defer cs.Close()
	fmt.Println(cs.InitializeResult().Capabilities.Completions != nil)
	res, err := cs.Complete(context.Background(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "plan"},
		Argument: mcp.CompleteParamsArgument{Name: "city", Value: "par"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", res.Completion.Values)
	// Output:
	// true
	// ["paris" "park city"]
}

// TestTemplateComplete completes a variable of a template NewTemplate
// built with a completer, on both eras, by the variable already chosen.
func TestTemplateComplete(t *testing.T) {
	type DocIn struct {
		Lang string `json:"lang"`
		Page string `json:"page"`
	}
	read := func(ctx context.Context, req *mcpkit.ResourceRequest, in DocIn) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	pages := map[string]mcpkit.CompleteFunc{"go": tools.CompleteFrom("generics", "goroutines"), "rust": tools.CompleteFrom("traits")}
	tmpl := tools.MustTemplate(tools.NewTemplate("docs://{lang}/{page}", read, &tools.TemplateOptions{
		Complete: map[string]mcpkit.CompleteFunc{
			"lang": tools.CompleteFrom("go", "rust"),
			"page": func(ctx context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
				if f := pages[req.Arguments["lang"]]; f != nil {
					return f(ctx, req)
				}
				return nil, nil
			},
		},
	}))
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
			if err := srv.AddResourceTemplates(tmpl); err != nil {
				t.Fatal(err)
			}
			cs := era.Connect(t, srv, nil).Session
			for _, tt := range []struct {
				arg, value, lang string
				want             []string
			}{
				{"lang", "r", "", []string{"rust"}},
				{"page", "g", "go", []string{"generics", "goroutines"}},
				{"page", "g", "rust", []string{}},
				{"page", "", "cobol", []string{}},
			} {
				res, err := cs.Complete(t.Context(), &mcp.CompleteParams{
					Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "docs://{lang}/{page}"},
					Argument: mcp.CompleteParamsArgument{Name: tt.arg, Value: tt.value},
					Context:  &mcp.CompleteContext{Arguments: map[string]string{"lang": tt.lang}},
				})
				if err != nil || res.Completion.Values == nil || !slices.Equal(res.Completion.Values, tt.want) {
					t.Errorf("%s=%q (lang %q): %+v, %v; want %q", tt.arg, tt.value, tt.lang, res, err, tt.want)
				}
			}
		})
	}
}
