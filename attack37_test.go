package mcpkit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// attackEcho is a resource handler that answers the variables it got.
func attackEcho(label string) mcpkit.ResourceHandler {
	return mcpkit.ResourceHandlerFunc(func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: fmt.Sprintf("%s %v", label, req.Params)}}}, nil
	})
}

// TestAttack37SimpleVariableTraversal shows what a simple expansion
// ({name}, not {+name}) hands a handler when the URI percent-encodes "/"
// or NUL, or is "..": the docs warned only about reserved expansions.
func TestAttack37SimpleVariableTraversal(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk"}, nil)
	if err := srv.AddResourceTemplates(&mcpkit.ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{URITemplate: "docs://{name}", Name: "doc"}, Handler: attackEcho("doc"),
	}); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	for uri, want := range map[string]string{
		"docs://..":                     "docs://..  doc map[name:..]",
		"docs://..%2F..%2Fetc%2Fpasswd": "docs://..%2F..%2Fetc%2Fpasswd  doc map[name:../../etc/passwd]",
		"docs://a%00b":                  "docs://a%00b  doc map[name:a\x00b]",
	} {
		// What the docs now say: a simple variable is decoded, so it is no
		// safer as a path than a reserved one.
		if got, err := readText(cs, t.Context(), uri); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", uri, got, err, want)
		}
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://%ZZ"}); !strings.Contains(wireError(t, err), `"code":-32602`) {
		t.Errorf("a malformed escape: %v", err)
	}
}
