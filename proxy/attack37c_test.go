package proxy_test

import (
	"context"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

// TestAttack37cProxiedTemplateNeverCompletes: severity medium (a
// documented feature absent). The upstream serves notes://{id}, whose
// "id" completes, and declares completions; the proxy serves its
// templates through LookupResourceTemplate. The package doc says:
// "Arguments and template variables are completed by the upstream when
// it declares completions." Expected: completion/complete of
// ref/resource notes://{id} through the local server answers the
// upstream's values. What happens: the local route looks the template's
// text up as a URI read, the provider's template is then matched against
// its own text, and the completion is answered -32602 "Resource not
// found" (only prompts' arguments reach the upstream).
func TestAttack37cProxiedTemplateNeverCompletes(t *testing.T) {
	upstream := mcpkit.NewServer(&mcp.Implementation{Name: "notes"}, nil)
	notes := &mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "notes://{id}", Name: "notes"},
		Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: req.Params["id"]}}}, nil
		}),
		Complete: map[string]mcpkit.CompleteFunc{"id": tools.CompleteFrom("41", "42", "7")},
	}
	if err := upstream.AddResourceTemplates(notes); err != nil {
		t.Fatal(err)
	}
	direct := mcpkittest.NewInMemoryServer(t, upstream, nil).Session
	want, err := direct.Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "notes://{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "4"},
	})
	if err != nil || len(want.Completion.Values) != 2 {
		t.Fatalf("the upstream completes: %v, %v", want, err)
	}
	up := newProxy(t, inMemory(upstream), nil)
	local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
	up.AddTo(local)
	cs := mcpkittest.NewInMemoryServer(t, local, nil).Session
	if res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://42"}); err != nil || res.Contents[0].Text != "42" {
		t.Fatalf("notes://42 through the proxy: %v, %v", res, err)
	}
	got, err := cs.Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "notes://{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "4"},
	})
	if err != nil || !slices.Equal(got.Completion.Values, want.Completion.Values) {
		t.Errorf("completion of notes://{id} through the proxy: %v, %v; want %q", got, err, want.Completion.Values)
	}
}
