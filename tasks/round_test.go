package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tasks"
)

// The tests of this file check how a task is bound to its tool: each round
// after input runs the very tool the task was created on (route included),
// through that tool's whole chain, the server's middleware too, as a first
// call would. Each reproduced a defect of the manager's table of task
// tools by name.

// bindingTokens are the callers of these tests: two tenants, and one
// principal (ada) with a token that has the admin scope and one that has not.
var bindingTokens = func() map[string]*auth.TokenInfo {
	far := time.Now().Add(time.Hour)
	return map[string]*auth.TokenInfo{
		"alice-token":     {UserID: "alice", Extra: map[string]any{"tenant": "acme"}, Expiration: far},
		"bob-token":       {UserID: "bob", Extra: map[string]any{"tenant": "globex"}, Expiration: far},
		"ada-admin-token": {UserID: "ada", Scopes: []string{"admin"}, Expiration: far},
		"ada-plain-token": {UserID: "ada", Expiration: far},
	}
}()

// bindingServer returns a server that advertises the tasks extension, with
// a Manager attached.
func bindingServer(t *testing.T) (*mcpkit.Server, *tasks.Manager) {
	t.Helper()
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "binding"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(nil)
	if err := m.Attach(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	return srv, m
}

// serveBinding serves srv statelessly over HTTP behind bindingTokens.
func serveBinding(t *testing.T, srv *mcpkit.Server) string {
	t.Helper()
	return mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: bindingTokens, Token: "alice-token"}).URL
}

// confirming returns a task tool called name whose work asks for a
// confirmation first, then answers label and its arguments; second counts
// the rounds run with the confirmation.
func confirming(m *tasks.Manager, name, label string, second *atomic.Int64) *mcpkit.Tool {
	h := mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		if _, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "confirm"); !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Go on?"}}}, nil
		}
		if second != nil {
			second.Add(1)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: label + " " + string(req.Arguments)}}}, nil
	})
	return tasks.Tool(&mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: objectSchema}, Handler: h}, m, nil)
}

// startTask has c call tool with args and returns the ID of the task it
// created, once the task waits for input.
func startTask(t *testing.T, c rpc, tool string, args map[string]any) string {
	t.Helper()
	res := c.mustCall(t, "tools/call", map[string]any{"name": tool, "arguments": args})
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call %s: not a CreateTaskResult: %v", tool, res)
	}
	if got := awaitTask(t, c, id, "input_required"); got["status"] != "input_required" {
		t.Fatalf("task of %s did not ask for input: %v", tool, got)
	}
	return id
}

// confirmTask answers, as c, the input the task waits for, and returns the
// task (as tasks/get shows it) once it has ended.
func confirmTask(t *testing.T, c rpc, id string) map[string]any {
	t.Helper()
	ack := c.mustCall(t, "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept"}}})
	if !isAck(ack) {
		t.Fatalf("tasks/update = %v", ack)
	}
	awaitTask(t, c, id, "")
	return c.mustCall(t, "tasks/get", map[string]any{"taskId": id})
}

// awaitTask reads the task's notifications, on a subscriptions/listen
// stream of c, until its status is want or terminal, and returns the
// last one's params: pushed by the server, so nothing polls or sleeps.
func awaitTask(t *testing.T, c rpc, id, want string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	raw := mcpkittest.RawClient{Endpoint: c.url, Token: c.token,
		Capabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
	st, err := raw.Stream(ctx, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for {
		msg, err := st.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("the listen stream of task %s ended before it was %s", id, want)
		}
		if err != nil {
			t.Fatalf("listen stream of task %s: %v", id, err)
		}
		var m struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatalf("listen stream: %v in %s", err, msg)
		}
		if m.Method != "notifications/tasks" || m.Params["taskId"] != id {
			continue
		}
		switch m.Params["status"] {
		case want, "completed", "failed", "cancelled":
			return m.Params
		}
	}
}

// taskOutcome describes how a task ended, for failure messages: its
// status, and its result's text or its error.
func taskOutcome(got map[string]any) string {
	if e, ok := got["error"].(map[string]any); ok {
		return fmt.Sprintf("%v with error %v %q", got["status"], e["code"], e["message"])
	}
	result, _ := got["result"].(map[string]any)
	var texts []string
	content, _ := result["content"].([]any)
	for _, c := range content {
		if text, ok := c.(map[string]any)["text"].(string); ok {
			texts = append(texts, text)
		}
	}
	return fmt.Sprintf("%v, isError=%v, text %q", got["status"], result["isError"] == true, strings.Join(texts, " | "))
}

// TestRoundResumesItsOwnMount: Bob starts a deploy on staging and
// confirms it: staging's deploy runs, not production's, though both are
// mounted task tools of one name under one manager.
func TestRoundResumesItsOwnMount(t *testing.T) {
	srv, m := bindingServer(t)
	for _, env := range []string{"staging", "production"} {
		child := mcpkit.NewServer(&mcp.Implementation{Name: env}, nil)
		if err := child.Add(confirming(m, "deploy", env+" deployed", nil)); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Mount(env, child); err != nil {
			t.Fatal(err)
		}
	}
	bob := rpc{url: serveBinding(t, srv), token: "bob-token", declared: true}
	for _, env := range []string{"staging", "production"} {
		t.Run(env, func(t *testing.T) {
			id := startTask(t, bob, env+"_deploy", map[string]any{"build": 42})
			got := confirmTask(t, bob, id)
			if want := env + ` deployed {"build":42}`; got["status"] != "completed" || resultText(got) != want {
				t.Errorf("%s_deploy's task resumed as %s; want completed with %q", env, taskOutcome(got), want)
			}
		})
	}
}

// tenantExports is a Provider that serves each tenant (the "tenant" claim
// of the caller's token) its own task tool export, made once per tenant.
type tenantExports struct {
	m     *tasks.Manager
	tools map[string]*mcpkit.Tool
}

func newTenantExports(m *tasks.Manager, tenants ...string) *tenantExports {
	p := &tenantExports{m: m, tools: map[string]*mcpkit.Tool{}}
	for _, tenant := range tenants {
		p.tools[tenant] = confirming(m, "export", tenant+" export of", nil)
	}
	return p
}

func (p *tenantExports) of(c mcpkit.Caller) *mcpkit.Tool {
	if info := c.TokenInfo(); info != nil {
		tenant, _ := info.Extra["tenant"].(string)
		return p.tools[tenant]
	}
	return nil
}

func (p *tenantExports) ListTools(_ context.Context, c mcpkit.Caller, after string, _ int) ([]*mcpkit.Tool, error) {
	if t := p.of(c); t != nil && t.Name > after {
		return []*mcpkit.Tool{t}, nil
	}
	return nil, nil
}

func (p *tenantExports) LookupTool(_ context.Context, c mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	if t := p.of(c); t != nil && t.Name == name {
		return t, nil
	}
	return nil, nil
}

// TestRoundResumesItsOwnTenant: a tenant's export task, once confirmed,
// runs that tenant's export, never the other tenant's of the same name.
func TestRoundResumesItsOwnTenant(t *testing.T) {
	srv, m := bindingServer(t)
	srv.AddProvider(newTenantExports(m, "acme", "globex"))
	url := serveBinding(t, srv)
	for _, tc := range []struct{ token, tenant string }{{"alice-token", "acme"}, {"bob-token", "globex"}} {
		t.Run(tc.tenant, func(t *testing.T) {
			c := rpc{url: url, token: tc.token, declared: true}
			id := startTask(t, c, "export", map[string]any{"table": tc.tenant + "_customers"})
			got := confirmTask(t, c, id)
			want := fmt.Sprintf(`%s export of {"table":"%s_customers"}`, tc.tenant, tc.tenant)
			if got["status"] != "completed" || resultText(got) != want {
				t.Errorf("%s's export task resumed as %s; want completed with %q", tc.tenant, taskOutcome(got), want)
			}
		})
	}
}

// TestRoundRunsServerMiddleware: Ada starts a delete with her admin token
// and confirms it with a token of hers without the admin scope that the
// server requires for delete: the round is refused as a first call would
// be, and the delete does not run.
func TestRoundRunsServerMiddleware(t *testing.T) {
	srv, m := bindingServer(t)
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete"), mcpkit.RequireScopes("admin")))
	var deleted atomic.Int64
	if err := srv.Add(confirming(m, "delete", "deleted", &deleted)); err != nil {
		t.Fatal(err)
	}
	url := serveBinding(t, srv)
	admin := rpc{url: url, token: "ada-admin-token", declared: true}
	for _, tc := range []struct {
		confirmer string // the token of the tasks/update
		runs      bool
	}{
		{"ada-admin-token", true},
		{"ada-plain-token", false},
	} {
		t.Run(tc.confirmer, func(t *testing.T) {
			before := deleted.Load()
			id := startTask(t, admin, "delete", map[string]any{"repo": "acme/site"})
			got := confirmTask(t, rpc{url: url, token: tc.confirmer, declared: true}, id)
			ran := deleted.Load() - before
			if tc.runs {
				if want := `deleted {"repo":"acme/site"}`; ran != 1 || got["status"] != "completed" || resultText(got) != want {
					t.Errorf("confirmed with the admin scope: delete's second round ran %d times, the task ended %s; want once, completed with %q", ran, taskOutcome(got), want)
				}
				return
			}
			refused := got["status"] == "failed" || got["status"] == "completed" && strings.Contains(taskOutcome(got), "isError=true")
			if ran != 0 || !refused {
				t.Errorf("confirmed without the admin scope: delete's second round ran %d times, the task ended %s; want it refused (failed, or completed with isError) without running",
					ran, taskOutcome(got))
			}
		})
	}
}

// TestRoundTwoMountsDown: a task of a tool mounted two levels down asks
// for input, is confirmed, and resumes through both mounts.
func TestRoundTwoMountsDown(t *testing.T) {
	parent, m := bindingServer(t)
	grandchild := mcpkit.NewServer(&mcp.Implementation{Name: "grandchild"}, nil)
	if err := grandchild.Add(confirming(m, "build", "built", nil)); err != nil {
		t.Fatal(err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if _, err := child.Mount("gc", grandchild); err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Mount("c", child); err != nil {
		t.Fatal(err)
	}
	alice := rpc{url: serveBinding(t, parent), token: "alice-token", declared: true}
	id := startTask(t, alice, "c_gc_build", map[string]any{"target": "site"})
	got := confirmTask(t, alice, id)
	if want := `built {"target":"site"}`; got["status"] != "completed" || resultText(got) != want {
		t.Errorf("the task of c_gc_build resumed as %s; want completed with %q", taskOutcome(got), want)
	}
}

// TestRoundChecksParamHeaders: a task of geo created with region "us" is
// answered by a tasks/update with Mcp-Param-Region: eu: the round is
// refused as a header mismatch, never reading "eu" from req.ParamHeader.
func TestRoundChecksParamHeaders(t *testing.T) {
	srv, m := bindingServer(t)
	var (
		mu   sync.Mutex
		read []string // what each round read from req.ParamHeader("Region"), when sent
	)
	h := mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		if v, ok := req.ParamHeader("Region"); ok {
			mu.Lock()
			read = append(read, v)
			mu.Unlock()
		}
		if _, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "confirm"); !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Go on?"}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "geo done"}}}, nil
	})
	geo := &mcpkit.Tool{Tool: mcp.Tool{Name: "geo", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)}, Handler: h}
	if err := srv.Add(tasks.Tool(geo, m, nil)); err != nil {
		t.Fatal(err)
	}
	url := serveBinding(t, srv)
	creator := rpc{url: url, token: "alice-token", declared: true, header: http.Header{"Mcp-Param-Region": {"us"}}}
	id := startTask(t, creator, "geo", map[string]any{"region": "us"})

	updater := rpc{url: url, token: "alice-token", declared: true, header: http.Header{"Mcp-Param-Region": {"eu"}}}
	ack, jerr := updater.call(t, "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept"}}})
	var outcome string
	if jerr != nil {
		outcome = fmt.Sprintf("tasks/update refused: %d %q", jerr.Code, jerr.Message)
	} else {
		if !isAck(ack) {
			t.Fatalf("tasks/update = %v", ack)
		}
		awaitTask(t, creator, id, "")
		outcome = "the task ended " + taskOutcome(creator.mustCall(t, "tasks/get", map[string]any{"taskId": id}))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, v := range read {
		if v != "us" {
			t.Errorf("a round of geo's task read req.ParamHeader(\"Region\") = %q, the argument region is \"us\" (rounds read %q; %s)", v, read, outcome)
			break
		}
	}
}
