package tasks_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tasks"
	"github.com/mcpkit/mcpkit/visibility"
)

// versions is a server with two versions of a task tool "report" that
// asks for a confirmation before it answers with its version; version 2 is
// for admins only. Alice is an admin, bob is not.
type versions struct {
	srv    *mcpkit.Server
	rules  *visibility.Rules
	alice  rpc
	bob    rpc
	rounds map[string]*atomic.Int32 // rounds run, by version
}

func newVersions(t *testing.T) *versions {
	t.Helper()
	v := &versions{rounds: map[string]*atomic.Int32{"1": {}, "2": {}}}
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	v.srv = mcpkit.NewServer(&mcp.Implementation{Name: "versions"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(nil)
	if err := m.Attach(v.srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	v.rules = visibility.New(visibility.Require(visibility.Key("report", "2"), visibility.Scopes("admin")))
	v.rules.Attach(v.srv)
	// Version 1 is made a task tool first and version 2 last: the manager
	// once resumed every "report" task with the version made last.
	for _, version := range []string{"1", "2"} {
		rounds := v.rounds[version]
		h := mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			rounds.Add(1)
			if _, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "confirm"); !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Build the report?"}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "report v" + version}}}, nil
		})
		tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "report", InputSchema: objectSchema}, Version: version, Handler: h}
		if err := v.srv.Add(tasks.Tool(tool, m, nil)); err != nil {
			t.Fatal(err)
		}
	}
	far := time.Now().Add(time.Hour)
	ts := mcpkittest.NewStatelessServer(t, v.srv, &mcpkittest.Options{Tokens: map[string]*auth.TokenInfo{
		"alice-token": {UserID: "alice", Scopes: []string{"admin"}, Expiration: far},
		"bob-token":   {UserID: "bob", Expiration: far},
	}, Token: "bob-token"})
	v.alice = rpc{url: ts.URL, token: "alice-token", declared: true}
	v.bob = rpc{url: ts.URL, token: "bob-token", declared: true}
	return v
}

// park has c call report and returns the ID of the task, once it waits
// for input.
func (v *versions) park(t *testing.T, c rpc) string {
	t.Helper()
	id := c.create(t, "report")
	if got := c.waitFor(t, id, "input_required"); got["status"] != "input_required" {
		t.Fatalf("task = %v", got)
	}
	return id
}

// confirm answers the task's input request and returns the task once it
// has ended.
func (v *versions) confirm(t *testing.T, c rpc, id string) map[string]any {
	t.Helper()
	c.mustCall(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"confirm": map[string]any{"action": "accept"}}})
	return c.wait(t, id)
}

// resultText returns the text of the only content of a completed task's
// result, or a description of what the task is instead.
func resultText(got map[string]any) string {
	result, _ := got["result"].(map[string]any)
	content, _ := result["content"].([]any)
	if got["status"] != "completed" || len(content) != 1 {
		return fmt.Sprintf("not a completed task with one content: %v", got)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}

// TestTaskResumesItsVersion: the rounds after input run the version of the
// tool the task was created with, the one the caller reached, not
// another version of the same name.
func TestTaskResumesItsVersion(t *testing.T) {
	v := newVersions(t)
	for _, tc := range []struct {
		who  string
		c    rpc
		want string
	}{
		{"bob", v.bob, "report v1"},     // version 2 is hidden from him
		{"alice", v.alice, "report v2"}, // the highest version
	} {
		t.Run(tc.who, func(t *testing.T) {
			id := v.park(t, tc.c)
			if got := resultText(v.confirm(t, tc.c, id)); got != tc.want {
				t.Errorf("resumed task: %s, want %q", got, tc.want)
			}
		})
	}
	if r1, r2 := v.rounds["1"].Load(), v.rounds["2"].Load(); r1 != 2 || r2 != 2 {
		t.Errorf("rounds run: %d of version 1, %d of version 2; want 2 and 2", r1, r2)
	}
}

// TestTaskResumeRechecksVisibility: a task whose tool its caller no longer
// reaches when the last answer arrives (a rule hides it from the caller, or
// the tool is gone) is not resumed; it fails with the error a call to an
// unknown tool gets.
func TestTaskResumeRechecksVisibility(t *testing.T) {
	for _, tc := range []struct {
		name string
		hide func(v *versions)
	}{
		{"hidden", func(v *versions) {
			v.rules.Add(visibility.Require(visibility.Key("report", "1"), visibility.Scopes("admin")))
		}},
		{"removed", func(v *versions) { v.srv.RemoveVersion("report", "1") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVersions(t)
			id := v.park(t, v.bob)
			tc.hide(v)
			_, unknown := v.bob.call(t, "tools/call", map[string]any{"name": "report", "arguments": map[string]any{}})
			if unknown == nil {
				t.Fatal("report still reaches bob")
			}
			got := v.confirm(t, v.bob, id)
			e, _ := got["error"].(map[string]any)
			if got["status"] != "failed" || e["code"] != float64(unknown.Code) || e["message"] != unknown.Message || got["result"] != nil {
				t.Errorf("task = %v; want failed with %+v", got, unknown)
			}
			if e["code"] != float64(-32602) || e["message"] != `unknown tool "report"` {
				t.Errorf("error = %v", e)
			}
			if r := v.rounds["1"].Load(); r != 1 {
				t.Errorf("version 1 ran %d rounds, want 1", r)
			}
		})
	}
}
