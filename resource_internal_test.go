package mcpkit

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzReachResource reads arbitrary URIs through the route of a server
// with templates of every shape a client can meet: the route never
// panics, a template that serves a URI has it as its literal prefix and
// gives every variable it decoded a value (none empty, none it does not
// have), and an exact URI is always served by its resource.
func FuzzReachResource(f *testing.F) {
	srv := NewServer(&mcp.Implementation{Name: "fuzz"}, nil)
	none := ResourceHandlerFunc(func(context.Context, *ResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil })
	var templates []*ResourceTemplate
	for _, text := range []string{
		"docs://{path}", "docs://api/{name}", "files://{+rest}", "search://q{?q,lang}",
		"pair://{a}-{b}", "frag://x{#f}", "list://{items*}", "dot://host{.ext}", "seg://root{/seg}",
	} {
		templates = append(templates, &ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: text, Name: text}, Handler: none})
	}
	if err := srv.AddResourceTemplates(templates...); err != nil {
		f.Fatal(err)
	}
	if err := srv.AddResources(&Resource{Resource: mcp.Resource{URI: "docs://api/index", Name: "index"}, Handler: none}); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		"docs://intro", "docs://api/x", "docs://api/index", "files://a/../b", "search://q?q=go&lang=en",
		"search://q?lang=en&q=go", "pair://x-y-z", "docs://", "docs://%zz", "docs://a%2Fb", "frag://x#top",
		"list://a,b", "dot://host.tar", "seg://root/a", "\x00", strings.Repeat("docs://", 100),
	} {
		f.Add(seed)
	}
	st := srv.state.Load()
	f.Fuzz(func(t *testing.T, uri string) {
		e, params := srv.reachResource(context.Background(), st, nil, uri)
		if e == nil {
			return
		}
		if e.resource != nil {
			if e.resource.URI != uri || params != nil {
				t.Fatalf("%q reached the resource %q with %v", uri, e.resource.URI, params)
			}
			return
		}
		if !strings.HasPrefix(uri, e.template.literal) {
			t.Fatalf("%q reached %q, whose literal prefix it lacks", uri, e.template.URITemplate)
		}
		vars := e.template.compiled.Varnames()
		for name, v := range params {
			if v == "" || !slices.Contains(vars, name) {
				t.Fatalf("%q through %q: variable %q = %q", uri, e.template.URITemplate, name, v)
			}
		}
	})
}
