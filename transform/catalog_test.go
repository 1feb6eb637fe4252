package transform_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

// echoTool returns a tool that answers with its name as registered, the
// name the request carries and version.
func echoTool(name, ver string, tags ...string) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{Name: name, InputSchema: &jsonschema.Schema{Type: "object"}},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + "@" + ver + " as " + req.Tool.Name}}}, nil
		}),
		Tags:    tags,
		Version: ver,
	}
}

func listNames(t *testing.T, ts *mcpkittest.Server) string {
	t.Helper()
	var names []string
	for tl, err := range ts.Session.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	return strings.Join(names, ",")
}

func callText(t *testing.T, ts *mcpkittest.Server, name string) string {
	t.Helper()
	res, err := ts.CallTool(t.Context(), name, nil)
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return "error " + werr.Message
	}
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestNamespace(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "ns"}, nil)
	if err := srv.Add(echoTool("search", ""), echoTool("issues", "", "gh"), echoTool("repos", "", "gh")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Transform(transform.Select(mcpkit.Tagged("gh"), transform.Namespace("github", "_"))); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	if got := listNames(t, ts); got != "github_issues,github_repos,search" {
		t.Errorf("tools/list = %s", got)
	}
	if got := callText(t, ts, "github_issues"); got != "issues@ as github_issues" {
		t.Errorf("namespaced call reached %q", got)
	}
	if got := callText(t, ts, "issues"); got != `error unknown tool "issues"` {
		t.Errorf("the original name still answers: %q", got)
	}
	// Tools added later get the namespace too.
	if err := srv.Add(echoTool("pulls", "", "gh")); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, ts, "github_pulls"); got != "pulls@ as github_pulls" {
		t.Errorf("later tool: %q", got)
	}
}

func TestNamespaceErrors(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "ns"}, nil)
	if err := srv.Add(echoTool(strings.Repeat("x", 126), ""), echoTool("a_b", "")); err != nil {
		t.Fatal(err)
	}
	err := srv.Transform(transform.Namespace("gh", "_"))
	if !errors.Is(err, mcpkit.ErrInvalidToolName) {
		t.Errorf("namespacing a 126-character name: err = %v, want ErrInvalidToolName", err)
	}
	if _, ok := srv.Lookup("a_b"); !ok {
		t.Error("a failed Transform changed the catalog")
	}

	// Two tools that a transform would serve under one name.
	srv2 := mcpkit.NewServer(&mcp.Implementation{Name: "ns"}, nil)
	if err := srv2.Add(echoTool("b", ""), echoTool("a_b", "")); err != nil {
		t.Fatal(err)
	}
	err = srv2.Transform(transform.Select(mcpkit.Named("b"), transform.Namespace("a", "_")))
	if !errors.Is(err, mcpkit.ErrDuplicateTool) {
		t.Errorf("collision: err = %v, want ErrDuplicateTool", err)
	}
	if err := srv2.Add(echoTool("c", "")); err != nil {
		t.Errorf("Add after a refused Transform: %v", err)
	}

	for _, bad := range [][2]string{{"gh", "/"}, {"", ""}, {"g h", "_"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Namespace(%q, %q) did not panic", bad[0], bad[1])
				}
			}()
			transform.Namespace(bad[0], bad[1])
		}()
	}
}

func TestVersions(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, nil)
	if err := srv.Add(echoTool("calc", "1.0"), echoTool("calc", "1.9"), echoTool("calc", "2.0"), echoTool("calc", "2.0.0-rc.1"), echoTool("plain", "")); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	if got := callText(t, ts, "calc"); got != "calc@2.0 as calc" {
		t.Fatalf("before the filter: %q", got)
	}
	if err := srv.Transform(transform.Versions("1", "2")); err != nil {
		t.Fatal(err)
	}
	// 2.0.0-rc.1 ranks below 2, so it is in the range, and above 1.9.
	if got := callText(t, ts, "calc"); got != "calc@2.0.0-rc.1 as calc" {
		t.Errorf("with [1, 2): %q, want 2.0.0-rc.1", got)
	}
	if err := srv.Transform(transform.Versions("", "2.0.0-rc.1")); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, ts, "calc"); got != "calc@1.9 as calc" {
		t.Errorf("with [1, 2.0.0-rc.1): %q, want 1.9", got)
	}
	res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "calc", Meta: mcp.Meta{mcpkit.MetaKeyVersion: "2.0"}})
	if err == nil {
		t.Errorf("pinning a filtered-out version: %v, want the unknown-tool error", res)
	}
	if got := callText(t, ts, "plain"); got != "plain@ as plain" {
		t.Errorf("unversioned tool: %q", got)
	}
}

func TestVersionsBounds(t *testing.T) {
	tests := []struct {
		gte, lt, ver string
		kept         bool
	}{
		{"", "", "0.1", true},
		{"1", "", "1.0", true}, // ranks alike with the bound
		{"1", "", "0.9", false},
		{"", "2", "2.0", false},
		{"", "2", "2.0.0-rc.1", true},
		{"", "2", "1.99", true},
		{"1", "2", "", true},
		{"1", "2", "beta", false}, // non-semver versions rank above every semver one
	}
	for _, tt := range tests {
		got, err := transform.Versions(tt.gte, tt.lt)(echoTool("t", tt.ver))
		if err != nil {
			t.Fatal(err)
		}
		if (got != nil) != tt.kept {
			t.Errorf("Versions(%q, %q) on %q: kept = %v, want %v", tt.gte, tt.lt, tt.ver, got != nil, tt.kept)
		}
	}
}

// TestNamespacedRenamedComposition composes a tool transform (argument
// renamed) with a catalog transform (namespace): the client lists and
// calls the namespaced name with the new argument name, validated as such,
// and the parent's handler gets its own name for it.
func TestNamespacedRenamedComposition(t *testing.T) {
	parent := &mcpkit.Tool{
		Tool: mcp.Tool{Name: "search", InputSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"q": {Type: "string"}}, Required: []string{"q"},
		}},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Arguments)}}}, nil
		}),
	}
	find, err := transform.Tool(parent, transform.Spec{Name: "find", Arguments: map[string]transform.Arg{"q": {Name: "query"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "compose"}, nil)
	if err := srv.Add(find); err != nil {
		t.Fatal(err)
	}
	if err := srv.Transform(transform.Namespace("docs", "_")); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	if got := listNames(t, ts); got != "docs_find" {
		t.Errorf("tools/list = %s", got)
	}
	res, err := ts.CallTool(t.Context(), "docs_find", map[string]any{"query": "go"})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != `{"q":"go"}` {
		t.Errorf("call = %+v, %v; want the parent to get q", res, err)
	}
	res, err = ts.CallTool(t.Context(), "docs_find", map[string]any{})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "query") {
		t.Errorf("call without query = %+v, %v; want a validation error naming query", res, err)
	}
}
