package mcpkit_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestDeclareExtension checks, through a client of each era, that a
// declared extension is in the capabilities the client learns (initialize
// before 2026-07-28, server/discover from it), next to those of the SDK
// options, with its settings; a later declaration of the same id replaces
// them.
func TestDeclareExtension(t *testing.T) {
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension("example.com/own", nil)
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "ext", Version: "1"},
		&mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	srv.DeclareExtension("example.com/ext", map[string]any{"v": 1.0})
	srv.DeclareExtension("example.com/ext", map[string]any{"v": 2.0})
	srv.DeclareExtension("example.com/bare", nil)
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			got := era.Connect(t, srv, nil).Session.InitializeResult().Capabilities.Extensions
			if len(got) != 3 || got["example.com/own"] == nil || got["example.com/bare"] == nil {
				t.Fatalf("extensions %v; want own, ext and bare", got)
			}
			if ext, _ := got["example.com/ext"].(map[string]any); ext["v"] != 2.0 {
				t.Errorf("example.com/ext = %v; want the second declaration's settings", got["example.com/ext"])
			}
		})
	}
	if len(caps.Extensions) != 1 {
		t.Errorf("the SDK options' capabilities were modified: %v", caps.Extensions)
	}
}

type readsParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type readsResult struct {
	mcp.ResultBase
	Reads   bool `json:"reads"`
	Private bool `json:"private"`
}

// TestReadsResource asks ReadsResource from a custom method, as an
// extension does, through a client of each era: it answers as
// resources/read does for the same caller (a resource hidden from a client
// by a per-request rule, a template, an unknown URI), and reports the
// answer private once a per-request rule decides resources.
func TestReadsResource(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "reads", Version: "1"}, nil)
	staffOnly := tools.TextResource("docs://staff", "staff", "text/plain", "s", nil)
	staffOnly.Tags = []string{"staff"}
	tmpl, err := tools.NewTemplate("docs://page/{id}", func(ctx context.Context, _ *mcpkit.ResourceRequest, p struct {
		ID string `json:"id"`
	}) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: p.ID}}}, nil
	}, &tools.TemplateOptions{Name: "page"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResources(tools.TextResource("docs://open", "open", "text/plain", "o", nil), staffOnly); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResourceTemplates(tmpl); err != nil {
		t.Fatal(err)
	}
	sdk := srv.MCPServer()
	err = mcp.AddReceivingCustomMethod(sdk, "x/reads", func(context.Context, *mcp.ServerSession, *readsParams) (*readsResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "unreachable"}
	})
	if err != nil {
		t.Fatal(err)
	}
	sdk.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "x/reads" {
				return next(ctx, method, req)
			}
			reads, private := srv.ReadsResource(ctx, req, req.GetParams().(*readsParams).URI)
			return &readsResult{Reads: reads, Private: private}, nil
		}
	})

	staff := &mcp.ClientCapabilities{}
	staff.AddExtension("example.com/staff", nil)
	setup := func(c *mcp.Client) {
		if err := mcp.AddSendingCustomMethod[*readsParams, *readsResult](c, "x/reads"); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(t *testing.T, cs *mcp.ClientSession, uri string) *readsResult {
		t.Helper()
		res, err := mcp.CallCustomMethod[*readsParams, *readsResult](t.Context(), cs, "x/reads", &readsParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		_, readErr := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if res.Reads != (readErr == nil) {
			t.Errorf("ReadsResource(%s) = %v; resources/read answered %v", uri, res.Reads, readErr)
		}
		return res
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			guest := era.Connect(t, srv, &mcpkittest.Options{ClientSetup: setup}).Session
			member := era.Connect(t, srv, &mcpkittest.Options{ClientSetup: setup, Client: &mcp.ClientOptions{Capabilities: staff}}).Session
			for uri, want := range map[string]bool{"docs://open": true, "docs://staff": true, "docs://page/7": true, "docs://nope": false} {
				if got := ask(t, guest, uri); got.Reads != want || got.Private {
					t.Errorf("no rules: %s = %+v; want reads %v, public", uri, got, want)
				}
			}
			rules := visibility.New(visibility.Require(func(r *mcpkit.Resource) bool { return r.HasTag("staff") },
				visibility.Predicate(func(_ context.Context, c mcpkit.Caller) bool {
					_, ok := c.ClientCapabilities().Extensions["example.com/staff"]
					return ok
				})))
			rules.Attach(srv)
			defer srv.SetVisibility(nil)
			if got := ask(t, guest, "docs://staff"); got.Reads || !got.Private {
				t.Errorf("guest: docs://staff = %+v; want hidden, private", got)
			}
			if got := ask(t, member, "docs://staff"); !got.Reads || !got.Private {
				t.Errorf("member: docs://staff = %+v; want read, private", got)
			}
			if got := ask(t, guest, "docs://open"); !got.Reads {
				t.Errorf("guest: docs://open = %+v; want read", got)
			}
		})
	}
}
