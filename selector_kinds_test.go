package mcpkit_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

// kindCounts counts the requests a tally layer saw, by kind.
type kindCounts struct{ tools, prompts, resources atomic.Int64 }

// tally returns a middleware that serves every kind and counts what it
// sees in n. (Not inlined, so that its layers are named after it.)
//
//go:noinline
func tally(n *kindCounts) mcpkit.Middleware {
	return func(next mcpkit.Handler) mcpkit.Handler { return tallied{next: next, n: n} }
}

type tallied struct {
	next mcpkit.Handler
	n    *kindCounts
}

func (h tallied) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	h.n.tools.Add(1)
	return h.next.ServeTool(ctx, req)
}

func (h tallied) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	h.n.prompts.Add(1)
	return h.next.(mcpkit.PromptHandler).ServePrompt(ctx, req)
}

func (h tallied) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	h.n.resources.Add(1)
	return h.next.(mcpkit.ResourceHandler).ServeResource(ctx, req)
}

// layerList lists layers as name, with the reason of a skipped one.
func layerList(layers []mcpkit.Layer) string {
	var b []string
	for _, l := range layers {
		s := l.Name
		if l.Skipped {
			s += " (skipped: " + l.Reason + ")"
		}
		b = append(b, s)
	}
	return strings.Join(b, ", ")
}

// TestForSelectsKinds: a layer given with For(OfKind(KindResource)) runs
// on resources/read, of a resource and of a template, and on no prompts/get
// or tools/call; the pipelines list it where it applies and as skipped, with
// the reason, elsewhere. ForTools still selects nothing in a resource's or a
// prompt's chain.
func TestForSelectsKinds(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "kinds"}, nil)
	var reads, toolsOnly kindCounts
	srv.Use(mcpkit.For(mcpkit.OfKind(mcpkit.KindResource), tally(&reads)), mcpkit.ForTools(mcpkit.Named("t"), tally(&toolsOnly)))
	if err := srv.Add(tool("t", reply("t"))); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrompts(say("p")); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResources(tools.TextResource("memo://r", "r", "text/plain", "r", nil)); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResourceTemplates(&mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "memo://t/{id}", Name: "t", MIMEType: "text/plain"},
		Handler: mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: req.Params["id"]}}}, nil
		}),
	}); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	ctx := t.Context()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"memo://r", "memo://t/7"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
	}
	if got := [3]int64{reads.tools.Load(), reads.prompts.Load(), reads.resources.Load()}; got != [3]int64{0, 0, 2} {
		t.Errorf("For(OfKind(KindResource)) saw tools, prompts, reads %v, want [0 0 2]", got)
	}
	if got := [3]int64{toolsOnly.tools.Load(), toolsOnly.prompts.Load(), toolsOnly.resources.Load()}; got != [3]int64{1, 0, 0} {
		t.Errorf("ForTools saw tools, prompts, reads %v, want [1 0 0]", got)
	}

	rl, _ := srv.ResourcePipeline("memo://r")
	tl, _ := srv.ResourcePipeline("memo://t/7")
	want := "mcpkit_test.tally, mcpkit_test.tally (skipped: mcpkit.ForTools selects tools only)"
	if got := layerList(rl); got != want {
		t.Errorf("resource pipeline: %s, want %s", got, want)
	}
	if got := layerList(tl); got != want {
		t.Errorf("template pipeline: %s, want %s", got, want)
	}
	pl, _ := srv.PromptPipeline("p")
	want = "mcpkit_test.tally (skipped: not selected by mcpkit.For), mcpkit_test.tally (skipped: mcpkit.ForTools selects tools only)"
	if got := layerList(pl); got != want {
		t.Errorf("prompt pipeline: %s, want %s", got, want)
	}
	tp, _ := srv.Pipeline("t")
	if len(tp) != 3 || tp[0].Name != "mcpkit_test.tally" || !tp[0].Skipped || tp[1].Skipped {
		t.Errorf("tool pipeline %+v: want For's layer skipped, ForTools' applied", tp)
	}
}

// TestForOutsideServer: a chain built by hand asks For's match on each
// request, with the request's target.
func TestForOutsideServer(t *testing.T) {
	var n kindCounts
	final := struct {
		mcpkit.HandlerFunc
		mcpkit.PromptHandlerFunc
	}{reply("t"), func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}}
	h := mcpkit.For(mcpkit.OfKind(mcpkit.KindPrompt), tally(&n))(final)
	if _, err := h.ServeTool(t.Context(), &mcpkit.Request{Tool: &mcpkit.Tool{Tool: mcp.Tool{Name: "t"}}}); err != nil {
		t.Fatal(err)
	}
	p, ok := h.(mcpkit.PromptHandler)
	if !ok {
		t.Fatal("For's handler does not serve prompts")
	}
	if _, err := p.ServePrompt(t.Context(), &mcpkit.PromptRequest{Prompt: say("p")}); err != nil {
		t.Fatal(err)
	}
	if n.tools.Load() != 0 || n.prompts.Load() != 1 {
		t.Errorf("tools %d, prompts %d: want 0, 1", n.tools.Load(), n.prompts.Load())
	}
}
