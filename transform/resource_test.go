package transform_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// echoRead answers the URI its handler was given, and its params.
func echoRead(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	text := req.URI
	if req.Params != nil {
		text += " page=" + req.Params["page"]
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, MIMEType: "text/plain", Text: text}}}, nil
}

// TestResourceTransform serves a derived resource and a derived template
// through SDK clients on both eras: the parent's handler sees the read as
// one of its own URI (the template's variables decoded as before), the
// client gets the contents under the URI it read, the template's
// completers serve the derived text, and a rule keyed on the parents'
// identity hides both derived ones, as never served.
func TestResourceTransform(t *testing.T) {
	readme := &mcpkit.Resource{Resource: mcp.Resource{URI: "memo://readme", Name: "readme"}, Handler: mcpkit.ResourceHandlerFunc(echoRead)}
	docs := &mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://{page}", Name: "docs"},
		Handler:          mcpkit.ResourceHandlerFunc(echoRead),
		Complete: map[string]mcpkit.CompleteFunc{"page": func(context.Context, *mcpkit.CompleteRequest) ([]string, error) {
			return []string{"intro"}, nil
		}},
	}
	dr, err := transform.Resource(readme, transform.ResourceSpec{URI: "memo://v2/readme", Description: "the readme, v2"})
	if err != nil {
		t.Fatal(err)
	}
	dt, err := transform.Template(docs, transform.TemplateSpec{URITemplate: "docs://v2/{page}"})
	if err != nil {
		t.Fatal(err)
	}
	if dr.Key() != "memo://readme" || dt.Key() != "docs://{page}" {
		t.Errorf("keys %q, %q: want the parents'", dr.Key(), dt.Key())
	}
	newServer := func(hide bool) *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "r"}, nil)
		if hide {
			visibility.New(visibility.Disable(func(t mcpkit.Target) bool { return t.Key() == "memo://readme" || t.Key() == "docs://{page}" })).Attach(srv)
		}
		if err := srv.AddResources(dr); err != nil {
			t.Fatal(err)
		}
		if err := srv.AddResourceTemplates(dt); err != nil {
			t.Fatal(err)
		}
		return srv
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			cs := era.Connect(t, newServer(false), nil).Session
			for uri, want := range map[string]string{
				"memo://v2/readme": "memo://readme",
				"docs://v2/intro":  "docs://intro page=intro",
				"docs://v2/a%20b":  "docs://a%20b page=a b",
			} {
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Errorf("read %s: %v", uri, err)
					continue
				}
				if c := res.Contents[0]; c.Text != want || c.URI != uri {
					t.Errorf("read %s: %q under %s; want %q under the URI read", uri, c.Text, c.URI, want)
				}
			}
			cr, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "docs://v2/{page}"}, Argument: mcp.CompleteParamsArgument{Name: "page"}})
			if err != nil || !slices.Equal(cr.Completion.Values, []string{"intro"}) {
				t.Errorf("complete: %v, %v", cr, err)
			}
			hidden := era.Connect(t, newServer(true), nil).Session
			for _, uri := range []string{"memo://v2/readme", "docs://v2/intro"} {
				if _, err := hidden.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}); err == nil {
					t.Errorf("read %s: a rule on the parent's identity does not hide it", uri)
				}
			}
		})
	}
}

// TestResourceTransformErrors checks what Resource and Template refuse.
func TestResourceTransformErrors(t *testing.T) {
	h := mcpkit.ResourceHandlerFunc(echoRead)
	docs := &mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://{lang}/{page}"}, Handler: h}
	for _, text := range []string{"docs://{page}", "docs://{lang}/{page}/{x}", "docs://{"} {
		if _, err := transform.Template(docs, transform.TemplateSpec{URITemplate: text}); !errors.Is(err, transform.ErrInvalidTool) {
			t.Errorf("template %q: %v; want ErrInvalidTool", text, err)
		}
	}
	if _, err := transform.Template(docs, transform.TemplateSpec{URITemplate: "v2+docs://{page}/{lang}"}); err != nil {
		t.Errorf("the same variables in another order: %v", err)
	}
	r := &mcpkit.Resource{Resource: mcp.Resource{URI: "memo://a"}, Handler: h}
	for _, uri := range []string{"no-scheme", "/a:b"} {
		if _, err := transform.Resource(r, transform.ResourceSpec{URI: uri}); !errors.Is(err, transform.ErrInvalidTool) {
			t.Errorf("URI %q: %v; want ErrInvalidTool", uri, err)
		}
	}
	if _, err := transform.Resource(nil, transform.ResourceSpec{}); !errors.Is(err, transform.ErrInvalidTool) {
		t.Errorf("nil resource: %v", err)
	}
	if _, err := transform.Resource(r, transform.ResourceSpec{Middleware: []mcpkit.Middleware{nil}}); !errors.Is(err, transform.ErrInvalidSpec) {
		t.Errorf("nil middleware: %v", err)
	}
}
