package transform_test

import (
	"context"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

// TestAttack37cDerivedPromptCompletesOtherTenants: severity medium (a
// derived prompt's completion answers values its fixed argument rules
// out: another tenant's). The parent prompt review(project, tenant)
// completes "project" from the projects of the tenant in the completion
// context, or of every tenant when none is given. transform.Prompt
// derives acme_review, hiding "tenant" and filling it with "acme" on the
// server, so that its clients work on acme's projects alone. Expected:
// completion of acme_review's "project" sees the tenant the derived
// prompt fixes, as its prompts/get does, and answers acme's projects.
// What happens: the completer gets the client's context arguments only,
// renamed, never the hidden ones' server values, so it completes every
// tenant's projects (globex's included).
func TestAttack37cDerivedPromptCompletesOtherTenants(t *testing.T) {
	projects := map[string][]string{"acme": {"apollo"}, "globex": {"artemis"}}
	review := &mcpkit.Prompt{
		Prompt: mcp.Prompt{Name: "review", Arguments: []*mcp.PromptArgument{{Name: "project", Required: true}, {Name: "tenant", Required: true}}},
		Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			text := req.Arguments["tenant"] + "/" + req.Arguments["project"]
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		}),
		Complete: map[string]mcpkit.CompleteFunc{"project": func(_ context.Context, req *mcpkit.CompleteRequest) ([]string, error) {
			if tenant, ok := req.Arguments["tenant"]; ok {
				return projects[tenant], nil
			}
			return slices.Concat(projects["acme"], projects["globex"]), nil
		}},
	}
	derived, err := transform.Prompt(review, transform.PromptSpec{
		Name:      "acme_review",
		Arguments: map[string]transform.PromptArg{"tenant": {Hide: true, Value: "acme"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reviews"}, nil)
	if err := srv.AddPrompts(derived); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "acme_review", Arguments: map[string]string{"project": "apollo"}})
	if err != nil || res.Messages[0].Content.(*mcp.TextContent).Text != "acme/apollo" {
		t.Fatalf("prompts/get acme_review: %v, %v", res, err)
	}
	cr, err := cs.Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "acme_review"},
		Argument: mcp.CompleteParamsArgument{Name: "project", Value: ""},
	})
	if err != nil || !slices.Equal(cr.Completion.Values, []string{"apollo"}) {
		t.Errorf("completion of acme_review's project: %v, %v; want [apollo], acme's alone", cr, err)
	}
}
