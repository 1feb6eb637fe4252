package transform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

// findDocuments is the new tool that replaced "search": its argument is
// called query, and it takes no user.
func findDocuments() *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{
			Name: "find_documents",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},
				"required":["query"],"additionalProperties":false}`),
		},
		Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found with " + string(req.Arguments)}}}, nil
		}),
	}
}

func TestAlias(t *testing.T) {
	var (
		mu   sync.Mutex
		uses []string
	)
	alias, err := transform.Alias(findDocuments(), "search", &transform.AliasOptions{
		Arguments: map[string]string{"query": "q"},
		OnUse: func(_ context.Context, use transform.AliasUse) {
			mu.Lock()
			defer mu.Unlock()
			uses = append(uses, use.Alias+"->"+use.Target+" "+string(use.Request.Arguments))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "alias"}, nil)
	if err := srv.Add(findDocuments(), alias); err != nil {
		t.Fatal(err)
	}
	mcpkittest.ForEachTransport(t, func(t *testing.T) *mcpkit.Server { return srv }, func(t *testing.T, ts *mcpkittest.Server) {
		if got := listNames(t, ts); got != "find_documents" {
			t.Errorf("tools/list = %s; the alias must not be listed", got)
		}
		res, err := ts.CallTool(t.Context(), "search", map[string]any{"q": "go"})
		if err != nil || res.IsError {
			t.Fatalf("call through the alias = %v, %v", res, err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != `found with {"query":"go"}` {
			t.Errorf("the target got %s", got)
		}
		// The alias takes the old names only.
		res, err = ts.CallTool(t.Context(), "search", map[string]any{"query": "go"})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "q") {
			t.Errorf("new argument name through the alias = %v, %v; want a validation error naming q", res, err)
		}
	}, nil)
	mu.Lock()
	defer mu.Unlock()
	if len(uses) != 6 || uses[0] != `search->find_documents {"q":"go"}` {
		t.Errorf("OnUse saw %q, want 6 uses (2 per transport) of search->find_documents", uses)
	}
}

func TestAliasErrors(t *testing.T) {
	if _, err := transform.Alias(findDocuments(), "search", &transform.AliasOptions{Arguments: map[string]string{"nope": "n"}}); err == nil {
		t.Error("an alias of an unknown argument was built")
	}
	if _, err := transform.Alias(findDocuments(), "bad name", nil); err == nil {
		t.Error("an alias with an invalid name was built")
	}
	if _, err := transform.Alias(nil, "search", nil); err == nil {
		t.Error("an alias of nil was built")
	}
}

func ExampleAlias() {
	alias, err := transform.Alias(findDocuments(), "search", &transform.AliasOptions{
		Arguments: map[string]string{"query": "q"},
		OnUse: func(_ context.Context, use transform.AliasUse) {
			fmt.Printf("deprecated %s called; use %s\n", use.Alias, use.Target)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	if err := srv.Add(findDocuments(), alias); err != nil {
		log.Fatal(err)
	}
	cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "mcp"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// deprecated search called; use find_documents
	// found with {"query":"mcp"}
}
