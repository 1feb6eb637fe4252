package tasks_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tasks"
	"github.com/mcpkit/mcpkit/visibility"
)

// A task tool of a mounted server runs as a task of the server the client
// talks to, and its rounds after input resume through the mount; a rule of
// that server that hides the tool since stops the resumption.
func TestTaskThroughMount(t *testing.T) {
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(nil)
	if err := m.Attach(parent); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	h := mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		if _, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "confirm"); !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Build the report?"}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "report built"}}}, nil
	})
	if err := child.Add(tasks.Tool(&mcpkit.Tool{Tool: mcp.Tool{Name: "report", InputSchema: objectSchema}, Handler: h}, m, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Mount("team", child); err != nil {
		t.Fatal(err)
	}
	rules := visibility.New()
	rules.Attach(parent)
	far := time.Now().Add(time.Hour)
	ts := mcpkittest.NewStatelessServer(t, parent, &mcpkittest.Options{Tokens: map[string]*auth.TokenInfo{
		"alice-token": {UserID: "alice", Expiration: far},
	}, Token: "alice-token"})
	alice := rpc{url: ts.URL, token: "alice-token", declared: true}
	confirm := func(id string) map[string]any {
		alice.mustCall(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"confirm": map[string]any{"action": "accept"}}})
		return alice.wait(t, id)
	}

	id := alice.create(t, "team_report")
	if got := alice.waitFor(t, id, "input_required"); got["status"] != "input_required" {
		t.Fatalf("task = %v", got)
	}
	if got := confirm(id); resultText(got) != "report built" {
		t.Errorf("the task resumed through the mount: %s", resultText(got))
	}

	// Hidden by the parent since the task began: it does not resume.
	id = alice.create(t, "team_report")
	alice.waitFor(t, id, "input_required")
	disable := visibility.DisableNames("report")
	rules.Add(disable)
	got := confirm(id)
	if jerr, _ := got["error"].(map[string]any); got["status"] != "failed" || jerr["message"] != `unknown tool "team_report"` {
		t.Errorf("resumed after the parent hid the tool: %v", got)
	}
}
