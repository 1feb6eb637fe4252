package apps_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/apps"
	"github.com/mcpkit/mcpkit/visibility"
)

// A dashboard: the view ui://weather/dashboard; weather, which the model
// calls and whose results the host shows in that view; and refresh, which
// only the view calls. The rule hides refresh from clients that show no
// views.
func ExampleRule() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "weather"}, nil)
	text := func(s string) mcpkit.HandlerFunc {
		return func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
		}
	}
	weather := &mcpkit.Tool{Tool: mcp.Tool{Name: "weather", InputSchema: map[string]any{"type": "object"}}, Handler: text("sunny")}
	refresh := &mcpkit.Tool{Tool: mcp.Tool{Name: "refresh", InputSchema: map[string]any{"type": "object"}}, Handler: text("refreshed")}
	if err := apps.SetTool(weather, apps.ToolUI{ResourceURI: "ui://weather/dashboard"}); err != nil {
		panic(err)
	}
	if err := apps.SetTool(refresh, apps.ToolUI{ResourceURI: "ui://weather/dashboard", Visibility: []string{apps.App}}); err != nil {
		panic(err)
	}
	view, err := (&apps.View{URI: "ui://weather/dashboard", Name: "dashboard", HTML: "<!DOCTYPE html><html>...</html>"}).Resource()
	if err != nil {
		panic(err)
	}
	if err := srv.AddResources(view); err != nil {
		panic(err)
	}
	if err := srv.Add(weather, refresh); err != nil {
		panic(err)
	}
	visibility.New(apps.Rule()).Attach(srv)
	fmt.Println(apps.AppOnly(weather), apps.AppOnly(refresh))
	// Output: false true
}
