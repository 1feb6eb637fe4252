package transform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

type invoiceIn struct {
	Customer string `json:"customer" description:"Who is billed."`
	Cents    int    `json:"cents" minimum:"1"`
}

// discoveryServer has a catalog of many tools behind the meta-tools,
// among them purge_accounts, which only callers with the admin scope see.
func discoveryServer(t *testing.T) *mcpkit.Server {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "big"}, nil)
	invoice := tools.Must(tools.New("create_invoice", func(_ context.Context, in invoiceIn) (string, error) {
		return fmt.Sprintf("invoiced %s %d", in.Customer, in.Cents), nil
	}, &tools.Options{Description: "Create an invoice for a customer and send it."}))
	purge := echoTool("purge_accounts", "", "admin")
	purge.Description = "Delete closed customer accounts and their invoices."
	add := []*mcpkit.Tool{invoice, purge}
	for _, name := range []string{"list_repos", "get_user", "send_email", "search_issues", "close_issue", "get_weather", "translate_text", "resize_image"} {
		tl := echoTool(name, "")
		tl.Description = "Does " + strings.ReplaceAll(name, "_", " ") + "."
		add = append(add, tl)
	}
	if err := srv.Add(add...); err != nil {
		t.Fatal(err)
	}
	visibility.New(visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))).Attach(srv)
	if err := transform.Discovery(srv, nil); err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestDiscovery(t *testing.T) {
	tokens := map[string]*auth.TokenInfo{
		"admin": {UserID: "ann", Scopes: []string{"admin"}},
		"user":  {UserID: "bob"},
	}
	for _, who := range []string{"admin", "user"} {
		t.Run(who, func(t *testing.T) {
			ts := mcpkittest.NewStatelessServer(t, discoveryServer(t), &mcpkittest.Options{Tokens: tokens, Token: who})
			ctx := t.Context()
			if got := listNames(t, ts); got != "call_tool,describe_tool,search_tools" {
				t.Errorf("tools/list = %s; want only the meta-tools", got)
			}

			search := func(query string) []string {
				t.Helper()
				res, err := ts.CallTool(ctx, "search_tools", map[string]any{"query": query})
				if err != nil || res.IsError {
					t.Fatalf("search_tools %q = %v, %v", query, res, err)
				}
				var out transform.SearchOut
				data, _ := json.Marshal(res.StructuredContent)
				json.Unmarshal(data, &out)
				var names []string
				for _, f := range out.Tools {
					names = append(names, f.Name)
				}
				return names
			}
			if got := search("send an invoice to a customer"); len(got) == 0 || got[0] != "create_invoice" {
				t.Errorf("search for invoices = %v, want create_invoice first", got)
			}
			if got := search("repos"); len(got) != 1 || got[0] != "list_repos" {
				t.Errorf("search for repos = %v", got)
			}
			purged := search("delete closed accounts")
			if who == "admin" && (len(purged) == 0 || purged[0] != "purge_accounts") {
				t.Errorf("admin search = %v, want purge_accounts first", purged)
			}
			if who == "user" && strings.Contains(strings.Join(purged, ","), "purge") {
				t.Errorf("a user found the admin tool: %v", purged)
			}

			res, err := ts.CallTool(ctx, "describe_tool", map[string]any{"name": "create_invoice"})
			if err != nil || res.IsError || !strings.Contains(onlyText(res), `"cents"`) {
				t.Errorf("describe_tool = %v, %v", res, err)
			}
			res, err = ts.CallTool(ctx, "call_tool", map[string]any{"name": "create_invoice", "arguments": map[string]any{"customer": "acme", "cents": 500}})
			if err != nil || res.IsError || onlyText(res) != "invoiced acme 500" {
				t.Errorf("call_tool = %v, %v", res, err)
			}
			// The tool's own validation runs behind call_tool.
			res, err = ts.CallTool(ctx, "call_tool", map[string]any{"name": "create_invoice", "arguments": map[string]any{"customer": "acme", "cents": 0}})
			if err != nil || !res.IsError || !strings.Contains(onlyText(res), "cents") {
				t.Errorf("call_tool with cents 0 = %v, %v; want the validation error", res, err)
			}

			// Hidden is unknown, through every meta-tool.
			for _, tool := range []string{"describe_tool", "call_tool"} {
				hidden, _ := ts.CallTool(ctx, tool, map[string]any{"name": "purge_accounts"})
				never, _ := ts.CallTool(ctx, tool, map[string]any{"name": "no_such_tool"})
				if who == "user" && onlyText(hidden) != strings.ReplaceAll(onlyText(never), "no_such_tool", "purge_accounts") {
					t.Errorf("%s of the hidden tool = %q; of a name never registered: %q", tool, onlyText(hidden), onlyText(never))
				}
				if who == "admin" && (hidden == nil || hidden.IsError) {
					t.Errorf("admin: %s of purge_accounts = %v", tool, hidden)
				}
				// The name is echoed clipped, whatever its size.
				long, _ := ts.CallTool(ctx, tool, map[string]any{"name": strings.Repeat("x", 3000)})
				if want := `unknown tool "` + strings.Repeat("x", 40) + `...": search_tools lists the tools there are`; onlyText(long) != want {
					t.Errorf("%s of a 3000-byte name = %q; want %q", tool, onlyText(long), want)
				}
			}
		})
	}
}

func onlyText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	tc, _ := res.Content[0].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}
