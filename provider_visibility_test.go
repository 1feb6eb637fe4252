package mcpkit_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// A rule added after a provided tool was served holds for it at once: the
// server keeps what it made of provided tools (their chains, what the
// rules answered) only until the visibility changes, by a rule by name or
// by a match function, and then asks again. Server.Reaches follows.
func TestProvidedToolFollowsRuleChanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule *visibility.Rule
	}{
		{"by name", visibility.DisableNames("lookup")},
		{"by match function", visibility.Disable(mcpkit.Named("lookup"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "p", Version: "1"}, nil)
			rules := visibility.New()
			rules.Attach(srv)
			tl := &mcpkit.Tool{Tool: mcp.Tool{Name: "lookup", InputSchema: map[string]any{"type": "object"}},
				Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found"}}}, nil
				})}
			srv.AddProvider(oneTool{tl})
			cs, err := mcpkittest.ConnectInMemory(t.Context(), srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			call := func() (*mcp.CallToolResult, error) {
				return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{}})
			}
			if res, err := call(); err != nil || res.IsError {
				t.Fatalf("before the rule: %v %v", res, err)
			}
			if !srv.Reaches(t.Context(), nil, tl.ID()) {
				t.Error("Reaches: the provided tool is not reached before the rule")
			}
			rules.Add(tc.rule)
			if res, err := call(); err == nil && !res.IsError {
				t.Errorf("after the rule: the provided tool answered %v", res.Content)
			}
			if srv.Reaches(t.Context(), nil, tl.ID()) {
				t.Error("Reaches: the provided tool is reached after the rule")
			}
			rules.Remove(tc.rule)
			if res, err := call(); err != nil || res.IsError {
				t.Errorf("after the rule was removed: %v %v", res, err)
			}
		})
	}
}
