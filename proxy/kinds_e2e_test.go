package proxy_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/proxy"
)

// TestKindsEndToEnd serves an upstream's prompts, resources and
// templates through a local server, to local clients of each protocol
// version, through real SDK clients at each hop: they are listed beside
// the local ones (prompts under the prefix), prompts/get and
// resources/read reach the upstream and answer what it answers, byte for
// byte, completion/complete is forwarded, a URI nothing serves is the
// local not-found, and a change upstream reaches the listening client.
func TestKindsEndToEnd(t *testing.T) {
	for _, ue := range upstreamEras {
		for era, connect := range eras {
			t.Run("upstream "+ue.version+"/client "+era, func(t *testing.T) {
				k := newKindsUpstream(t, ue.sessions, true)
				up := newProxy(t, proxy.HTTP(k.url, nil), &proxy.Options{Prefix: "crm_", ProtocolVersion: ue.version})
				local := mcpkit.NewServer(&mcp.Implementation{Name: "local"}, nil)
				if err := local.AddPrompts(&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "local_help"},
					Handler: mcpkit.PromptHandlerFunc(func(context.Context, *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
						return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "help"}}}}, nil
					})}); err != nil {
					t.Fatal(err)
				}
				up.AddTo(local)
				changed := make(chan struct{}, 16)
				ts := connect(t, local, &mcpkittest.Options{Client: &mcp.ClientOptions{
					PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { changed <- struct{}{} },
				}})
				direct := directClient(t, k.url, ue.version)
				ctx := t.Context()

				var names []string
				for p, err := range ts.Session.Prompts(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					names = append(names, p.Name)
				}
				if want := []string{"crm_ask", "crm_boom", "crm_greet", "crm_review", "crm_zeta", "local_help"}; !slices.Equal(names, want) {
					t.Errorf("prompts/list: %v, want %v", names, want)
				}
				var uris []string
				for r, err := range ts.Session.Resources(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					uris = append(uris, r.URI)
				}
				if want := []string{"docs://a", "docs://b", "mine://inbox"}; !slices.Equal(uris, want) {
					t.Errorf("resources/list: %v, want %v", uris, want)
				}
				var texts []string
				for tp, err := range ts.Session.ResourceTemplates(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					texts = append(texts, tp.URITemplate)
				}
				if want := []string{"docs://{name}", "users://{id}/profile"}; !slices.Equal(texts, want) {
					t.Errorf("resources/templates/list: %v, want %v", texts, want)
				}

				args := map[string]string{"name": "Ada", "tone": "warmly"}
				got, err := ts.Session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "crm_greet", Arguments: args})
				if err != nil {
					t.Fatal(err)
				}
				want, _ := direct.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: args})
				if g, w := marshal(t, got.Messages), marshal(t, want.Messages); !bytes.Equal(g, w) {
					t.Errorf("crm_greet:\n%s\nwant\n%s", g, w)
				}
				for _, uri := range []string{"docs://a", "docs://b", "users://42/profile"} {
					got, err := ts.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
					if err != nil {
						t.Fatalf("read %s: %v", uri, err)
					}
					want, _ := direct.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
					if g, w := marshal(t, got.Contents), marshal(t, want.Contents); !bytes.Equal(g, w) {
						t.Errorf("read %s:\n%s\nwant\n%s", uri, g, w)
					}
				}
				_, err = ts.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "nope://x"})
				var wire *jsonrpc.Error
				var nf *jsonrpc.Error
				if errors.As(mcpkit.NewResourceNotFoundError("nope://x"), &nf); !errors.As(err, &wire) || wire.Code != nf.Code || wire.Message != nf.Message || string(wire.Data) != string(nf.Data) {
					t.Errorf("read nope://x: %v; want %v", err, nf)
				}
				_, err = ts.Session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "crm_boom"})
				if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInternalError {
					t.Errorf("crm_boom: %v; want -32603 with the upstream's error as text", err)
				}

				res, err := ts.Session.Complete(ctx, &mcp.CompleteParams{
					Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "crm_greet"},
					Argument: mcp.CompleteParamsArgument{Name: "name", Value: "G"},
					Context:  &mcp.CompleteContext{Arguments: map[string]string{"tone": "dry"}},
				})
				if err != nil || !slices.Equal(res.Completion.Values, []string{"Grace/dry"}) {
					t.Errorf("completion/complete: %v, %v", res, err)
				}

				k.srv.RemovePrompts("zeta")
				for {
					<-changed
					if p, _ := up.LookupPrompt(ctx, nil, "crm_zeta"); p == nil {
						break
					}
				}
				_, err = ts.Session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "crm_zeta"})
				if unknown := mcpkit.NewUnknownPromptError("crm_zeta"); !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || wire.Message != unknown.Error() {
					t.Errorf("a prompt gone: %v; want %v", err, unknown)
				}
			})
		}
	}
}
