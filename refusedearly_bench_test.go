package mcpkit

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkRefusedEarlyRead measures what the early refusal costs a
// 2026-07-28 resources/read of a template's URI, among 100 resources and
// 100 templates: when no resource has a requirement (none), when another
// one has (route: the read is routed once more, and let through), and
// when the template the URI reaches has one and the caller has no token
// (refused).
func BenchmarkRefusedEarlyRead(b *testing.B) {
	read := ResourceHandlerFunc(func(context.Context, *ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	build := func(require string) *Server {
		srv := NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		for i := range 100 {
			r := &Resource{Resource: mcp.Resource{URI: fmt.Sprintf("docs://r%d", i), Name: "r"}, Handler: read}
			t := &ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: fmt.Sprintf("t%d://{id}", i), Name: "t"}, Handler: read}
			if r.URI == require {
				r.Middleware = []Middleware{RequireScopes("admin")}
			}
			if t.URITemplate == require {
				t.Middleware = []Middleware{RequireScopes("admin")}
			}
			if err := srv.AddResources(r); err != nil {
				b.Fatal(err)
			}
			if err := srv.AddResourceTemplates(t); err != nil {
				b.Fatal(err)
			}
		}
		return srv
	}
	r := httptest.NewRequest("POST", "/", nil)
	r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "resources/read")
	r.Header.Set("Mcp-Name", "t50://42")
	for _, bc := range []struct {
		name, require string
		refused       bool
	}{
		{"none", "", false},
		{"route", "docs://r7", false},
		{"refused", "t50://{id}", true},
	} {
		srv := build(bc.require)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := srv.refusedEarly(r); (err != nil) != bc.refused {
					b.Fatalf("refusal %v", err)
				}
			}
		})
	}
}
