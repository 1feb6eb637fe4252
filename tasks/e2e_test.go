package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tasks"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var objectSchema = map[string]any{"type": "object"}

// fixture is a server with task tools, served statelessly over HTTP
// behind bearer tokens for two principals, alice and bob.
type fixture struct {
	srv     *mcpkit.Server
	ts      *mcpkittest.Server
	started chan struct{} // one value per start of slow
	release chan struct{} // closed to let slow return
	stopped chan error    // slow's context error when it was stopped
}

func newFixture(t *testing.T, opts *mcpkittest.Options) *fixture {
	t.Helper()
	f := &fixture{started: make(chan struct{}, 16), release: make(chan struct{}), stopped: make(chan error, 16)}
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "tasks-test", Version: "1"},
		&mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(nil)
	if err := m.Attach(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	slow := func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		f.started <- struct{}{}
		select {
		case <-f.release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		case <-ctx.Done():
			f.stopped <- ctx.Err()
			return nil, ctx.Err()
		}
	}
	add := func(name string, h mcpkit.HandlerFunc, o *tasks.ToolOptions) {
		tool := &mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: objectSchema}, Handler: h}
		if err := srv.Add(tasks.Tool(tool, m, o)); err != nil {
			t.Fatal(err)
		}
	}
	add("slow", slow, nil)
	// Reports how far it got, then waits like slow.
	add("progressing", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		mcpkit.ReportProgress(ctx, 1, 3, "indexing")
		return slow(ctx, req)
	}, nil)
	add("slow_required", slow, &tasks.ToolOptions{Policy: tasks.Required})
	add("failing", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return nil, mcpkit.ToolErrorf("the job failed")
	}, nil)
	add("internal", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("disk on fire")
	}, nil)
	add("protocol", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return nil, mcpkit.NewProtocolError(-32603, "backend unavailable")
	}, nil)
	add("panics", func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
		panic("boom")
	}, nil)
	add("timed", func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}, &tasks.ToolOptions{Timeout: time.Millisecond})
	// Asks for input (SEP-2322) for each key it is given that has no
	// answer yet; then reports the answers.
	ask := func(keys ...string) mcpkit.HandlerFunc {
		return func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			pending := mcp.InputRequestMap{}
			var got []string
			for _, k := range keys {
				answer, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, k)
				if !ok {
					pending[k] = &mcp.ElicitParams{Message: "Confirm " + k + "?",
						RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}}}
					continue
				}
				got = append(got, fmt.Sprintf("%s=%s", k, answer.Action))
			}
			if len(pending) > 0 && len(got) == 0 {
				return &mcp.CallToolResult{InputRequests: pending, RequestState: "round-1"}, nil
			}
			if caps := req.ClientCapabilities(); caps == nil || caps.Extensions[tasks.ExtensionID] == nil {
				return nil, mcpkit.ToolErrorf("lost the client's capabilities: %+v", caps)
			}
			if req.Call.Params.RequestState != "round-1" {
				return nil, mcpkit.ToolErrorf("lost the request state: %q", req.Call.Params.RequestState)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(got, ",")}}}, nil
		}
	}
	add("confirm", ask("delete"), nil)
	// Gathers its input synchronously, then becomes a task.
	add("confirm_then_task", ask("delete"), &tasks.ToolOptions{Synchronous: func(req *mcpkit.Request) bool {
		return req.Call.Params.InputResponses == nil
	}})
	add("multi", ask("a", "b"), nil)
	if opts == nil {
		opts = &mcpkittest.Options{}
	}
	far := time.Now().Add(time.Hour)
	opts.Tokens = map[string]*auth.TokenInfo{
		"alice-token": {UserID: "alice", Expiration: far},
		"bob-token":   {UserID: "bob", Expiration: far},
	}
	opts.Token = "alice-token"
	f.srv = srv
	f.ts = mcpkittest.NewStatelessServer(t, srv, opts)
	return f
}

// rpc is a 2026-07-28 client of one principal, on mcpkittest.RawClient:
// the SDK's client cannot read a CreateTaskResult.
type rpc struct {
	url      string
	token    string
	declared bool        // the requests declare the tasks extension
	header   http.Header // replaces the client's headers: a mismatched Mcp-Name
}

func (c rpc) call(t *testing.T, method string, params map[string]any) (map[string]any, *jsonrpc.Error) {
	t.Helper()
	raw := mcpkittest.RawClient{Endpoint: c.url, Token: c.token, Header: c.header}
	if c.declared {
		raw.Capabilities = map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}
	}
	res, err := raw.Call(t.Context(), method, params)
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		return nil, jerr
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(res, &m); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return m, nil
}

func (c rpc) mustCall(t *testing.T, method string, params map[string]any) map[string]any {
	t.Helper()
	res, err := c.call(t, method, params)
	if err != nil {
		t.Fatalf("%s: error %+v", method, err)
	}
	return res
}

// create calls tool and returns the ID of the task it created.
func (c rpc) create(t *testing.T, tool string) string {
	t.Helper()
	res := c.mustCall(t, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call %s: not a CreateTaskResult: %v", tool, res)
	}
	return id
}

// wait polls tasks/get until the task is terminal.
func (c rpc) wait(t *testing.T, id string) map[string]any {
	t.Helper()
	for {
		res := c.mustCall(t, "tasks/get", map[string]any{"taskId": id})
		switch res["status"] {
		case "completed", "failed", "cancelled":
			return res
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("task %s never ended", id)
		case <-time.After(time.Millisecond): // pacing, not an assertion
		}
	}
}

func TestTaskLifecycle(t *testing.T) {
	f := newFixture(t, nil)
	alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}

	res := alice.mustCall(t, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}})
	id, _ := res["taskId"].(string)
	<-f.started
	// The flat CreateTaskResult of SEP-2663: no nested task, no result.
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
		if _, ok := res[k]; !ok {
			t.Errorf("CreateTaskResult lacks %s: %v", k, res)
		}
	}
	for _, k := range []string{"task", "result", "error", "content", "ttl", "pollInterval", "requestState"} {
		if _, ok := res[k]; ok {
			t.Errorf("CreateTaskResult has %s: %v", k, res)
		}
	}
	if res["resultType"] != "task" || res["status"] != "working" || id == "" {
		t.Fatalf("CreateTaskResult = %v", res)
	}

	// Durable before the answer: tasks/get resolves at once.
	got := alice.mustCall(t, "tasks/get", map[string]any{"taskId": id})
	if got["resultType"] != "complete" || got["taskId"] != id || got["status"] != "working" || got["result"] != nil {
		t.Fatalf("tasks/get while working = %v", got)
	}

	close(f.release)
	got = alice.wait(t, id)
	if got["status"] != "completed" {
		t.Fatalf("tasks/get after release = %v", got)
	}
	result, _ := got["result"].(map[string]any)
	content, _ := result["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["text"] != "done" || result["isError"] == true {
		t.Errorf("inlined result = %v", got["result"])
	}

	// Cancelling a finished task is acknowledged and changes nothing.
	ack := alice.mustCall(t, "tasks/cancel", map[string]any{"taskId": id})
	if !isAck(ack) {
		t.Errorf("tasks/cancel ack = %v", ack)
	}
	if got := alice.mustCall(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "completed" {
		t.Errorf("after cancelling a completed task: %v", got)
	}
}

func TestTaskCancel(t *testing.T) {
	f := newFixture(t, nil)
	alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}
	id := alice.create(t, "slow")
	<-f.started

	ack := alice.mustCall(t, "tasks/cancel", map[string]any{"taskId": id})
	if !isAck(ack) {
		t.Errorf("tasks/cancel ack = %v", ack)
	}
	if err := <-f.stopped; err != context.Canceled {
		t.Errorf("the handler's context ended with %v, want context.Canceled", err)
	}
	// Cancelled at once, and for good: terminal transitions are idempotent.
	for range 2 {
		got := alice.mustCall(t, "tasks/get", map[string]any{"taskId": id})
		if got["status"] != "cancelled" || got["result"] != nil || got["error"] != nil {
			t.Errorf("tasks/get after cancel = %v", got)
		}
		alice.mustCall(t, "tasks/cancel", map[string]any{"taskId": id})
	}
}

func TestTaskOutcomes(t *testing.T) {
	f := newFixture(t, nil)
	alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}
	for _, tc := range []struct {
		tool, status, text string
		code               float64
	}{
		{tool: "failing", status: "completed", text: "the job failed"},
		{tool: "internal", status: "completed", text: "disk on fire"},
		{tool: "panics", status: "completed", text: `internal error in tool "panics"`},
		{tool: "timed", status: "completed", text: `tool "timed" timed out after 1ms`},
		{tool: "protocol", status: "failed", code: -32603, text: "backend unavailable"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			got := alice.wait(t, alice.create(t, tc.tool))
			if got["status"] != tc.status {
				t.Fatalf("status = %v, want %s: %v", got["status"], tc.status, got)
			}
			if tc.status == "failed" {
				e, _ := got["error"].(map[string]any)
				if e["code"] != tc.code || e["message"] != tc.text || got["result"] != nil {
					t.Errorf("failed task = %v", got)
				}
				return
			}
			// A tool error is a completed task whose result has isError
			// (SEP-2663), through the server's error table.
			result, _ := got["result"].(map[string]any)
			content, _ := result["content"].([]any)
			if result["isError"] != true || len(content) != 1 || content[0].(map[string]any)["text"] != tc.text {
				t.Errorf("result = %v", got["result"])
			}
			if meta, _ := result["_meta"].(map[string]any); meta[mcpkit.MetaKeyErrorClass] == nil {
				t.Errorf("result has no error class: %v", result)
			}
		})
	}
}

func TestTaskOtherPrincipal(t *testing.T) {
	f := newFixture(t, nil)
	alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}
	bob := rpc{url: f.ts.URL, token: "bob-token", declared: true}
	id := alice.create(t, "slow")
	<-f.started

	_, unknownErr := bob.call(t, "tasks/get", map[string]any{"taskId": "no-such-task"})
	_, err := bob.call(t, "tasks/get", map[string]any{"taskId": id})
	if err == nil || unknownErr == nil || err.Code != -32602 ||
		err.Code != unknownErr.Code || err.Message != unknownErr.Message || string(err.Data) != string(unknownErr.Data) {
		t.Errorf("bob's tasks/get = %+v, for an unknown task %+v", err, unknownErr)
	}
	// The routing header must name the task of the body (SEP-2243, SEP-2663).
	mismatched := alice
	mismatched.header = http.Header{"Mcp-Name": {"another-task"}}
	if _, err := mismatched.call(t, "tasks/get", map[string]any{"taskId": id}); err == nil || err.Code != -32020 {
		t.Errorf("tasks/get with a mismatched Mcp-Name: %+v", err)
	}
	ack := bob.mustCall(t, "tasks/cancel", map[string]any{"taskId": id})
	if !isAck(ack) {
		t.Errorf("bob's tasks/cancel = %v", ack)
	}
	if got := alice.mustCall(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "working" {
		t.Errorf("bob cancelled alice's task: %v", got)
	}
	close(f.release)
	alice.wait(t, id)
}

func TestTaskNotDeclared(t *testing.T) {
	f := newFixture(t, nil)
	plain := rpc{url: f.ts.URL, token: "alice-token"}

	// The methods need the extension (SEP-2575 missing capability).
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		_, err := plain.call(t, method, map[string]any{"taskId": "x", "inputResponses": map[string]any{}})
		if err == nil || err.Code != -32021 || !strings.Contains(string(err.Data), tasks.ExtensionID) {
			t.Errorf("%s without the extension: %+v", method, err)
		}
	}
	// An optional task tool runs synchronously.
	close(f.release)
	res := plain.mustCall(t, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}})
	if res["resultType"] != "complete" || res["taskId"] != nil || res["isError"] == true {
		t.Errorf("synchronous call = %v", res)
	}
	// A task-only tool is refused.
	_, err := plain.call(t, "tools/call", map[string]any{"name": "slow_required", "arguments": map[string]any{}})
	var data struct {
		RequiredCapabilities struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"requiredCapabilities"`
	}
	if err == nil || err.Code != -32021 || json.Unmarshal(err.Data, &data) != nil || data.RequiredCapabilities.Extensions[tasks.ExtensionID] == nil {
		t.Errorf("task-only tool without the extension: %+v", err)
	}
}

// TestTaskSDKClients calls a task tool through real SDK clients that do not
// declare the extension: a 2025-11-25 client over a session and a
// 2026-07-28 client, statelessly. Both get the tool's result synchronously.
func TestTaskSDKClients(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			f := newFixture(t, &mcpkittest.Options{ProtocolVersion: version})
			close(f.release)
			res, err := f.ts.CallTool(t.Context(), "slow", nil)
			if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "done" {
				t.Fatalf("CallTool = %+v, %v", res, err)
			}
			if _, err := f.ts.CallTool(t.Context(), "slow_required", nil); err == nil || !strings.Contains(err.Error(), "-32021") && !strings.Contains(err.Error(), tasks.ExtensionID) {
				t.Errorf("task-only tool: %v", err)
			}
		})
	}
}

// TestTaskSDKCustomMethod polls a task with the SDK client's custom
// methods, from a 2026-07-28 client that declares the extension in its
// capabilities, which the SDK then sends in each request's _meta.
func TestTaskSDKCustomMethod(t *testing.T) {
	f := newFixture(t, nil)
	alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}
	id := alice.create(t, "slow")
	<-f.started

	type getParams struct {
		mcp.ParamsBase
		TaskID string `json:"taskId"`
	}
	type getResult struct {
		mcp.ResultBase
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	}
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	if err := mcp.AddSendingCustomMethod[*getParams, *getResult](client, "tasks/get"); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: bearer("alice-token")}
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.ts.URL, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got, err := mcp.CallCustomMethod[*getParams, *getResult](t.Context(), cs, "tasks/get", &getParams{TaskID: id})
	if err != nil || got.TaskID != id || got.Status != "working" {
		t.Fatalf("tasks/get through the SDK client = %+v, %v", got, err)
	}
	close(f.release)
	alice.wait(t, id)
}

// bearer is a transport that sends a bearer token.
type bearer string

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(req)
}

// isAck reports whether res is the empty acknowledgement of tasks/cancel
// and tasks/update: resultType "complete" and nothing of a task (the SDK
// adds its server info to _meta).
func isAck(res map[string]any) bool {
	for k := range res {
		if k != "resultType" && k != "_meta" {
			return false
		}
	}
	return res["resultType"] == "complete"
}

// TestTaskAfterValidation: arguments that fail the input schema are
// answered on the request, before the task boundary: no task.
func TestTaskAfterValidation(t *testing.T) {
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "v"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(nil)
	if err := m.Attach(srv); err != nil {
		t.Fatal(err)
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "typed", InputSchema: schema}, Handler: mcpkit.HandlerFunc(
		func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
		})}
	if err := srv.Add(tasks.Tool(tool, m, nil)); err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewStatelessServer(t, srv, nil)
	c := rpc{url: ts.URL, declared: true}
	res := c.mustCall(t, "tools/call", map[string]any{"name": "typed", "arguments": map[string]any{"n": "x"}})
	if res["resultType"] != "complete" || res["taskId"] != nil || res["isError"] != true {
		t.Errorf("invalid arguments: %v", res)
	}
	res = c.mustCall(t, "tools/call", map[string]any{"name": "typed", "arguments": map[string]any{"n": 1}})
	if res["resultType"] != "task" {
		t.Fatalf("valid arguments: %v", res)
	}
	if got := c.wait(t, res["taskId"].(string)); got["status"] != "completed" {
		t.Errorf("task: %v", got)
	}
	if err := m.Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
}

// waitFor polls tasks/get until the task has the given status or is
// terminal.
func (c rpc) waitFor(t *testing.T, id, status string) map[string]any {
	t.Helper()
	for {
		res := c.mustCall(t, "tasks/get", map[string]any{"taskId": id})
		switch res["status"] {
		case status, "completed", "failed", "cancelled":
			return res
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("task %s never became %s", id, status)
		case <-time.After(time.Millisecond): // pacing, not an assertion
		}
	}
}

// TestTaskInput: a task whose work asks for input (an input_required
// result) waits with its requests in tasks/get; tasks/update answers them,
// one at a time if the client likes, and the work resumes with the answers
// and its request state when none is left.
func TestTaskInput(t *testing.T) {
	f := newFixture(t, nil)
	alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}
	bob := rpc{url: f.ts.URL, token: "bob-token", declared: true}
	accept := map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}

	t.Run("one", func(t *testing.T) {
		id := alice.create(t, "confirm")
		got := alice.waitFor(t, id, "input_required")
		reqs, _ := got["inputRequests"].(map[string]any)
		if got["status"] != "input_required" || len(reqs) != 1 || reqs["delete"].(map[string]any)["method"] != "elicitation/create" {
			t.Fatalf("waiting task = %v", got)
		}
		if _, ok := got["requestState"]; ok {
			t.Errorf("the work's request state leaked to the wire: %v", got)
		}
		// Another principal's answer, and an unknown key, change nothing.
		for _, c := range []rpc{bob, alice} {
			answers := map[string]any{"delete": accept}
			if c.token == alice.token {
				answers = map[string]any{"unknown-key": accept}
			}
			if ack := c.mustCall(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": answers}); !isAck(ack) {
				t.Errorf("tasks/update ack = %v", ack)
			}
			if got := alice.mustCall(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "input_required" {
				t.Errorf("after an answer that does not count: %v", got)
			}
		}
		ack := alice.mustCall(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"delete": accept}})
		if !isAck(ack) {
			t.Errorf("tasks/update ack = %v", ack)
		}
		got = alice.wait(t, id)
		result, _ := got["result"].(map[string]any)
		content, _ := result["content"].([]any)
		if got["status"] != "completed" || result["isError"] == true || len(content) != 1 || content[0].(map[string]any)["text"] != "delete=accept" {
			t.Errorf("resumed task = %v", got)
		}
	})

	t.Run("partial", func(t *testing.T) {
		id := alice.create(t, "multi")
		got := alice.waitFor(t, id, "input_required")
		if reqs, _ := got["inputRequests"].(map[string]any); len(reqs) != 2 {
			t.Fatalf("waiting task = %v", got)
		}
		alice.mustCall(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"a": accept}})
		got = alice.mustCall(t, "tasks/get", map[string]any{"taskId": id})
		reqs, _ := got["inputRequests"].(map[string]any)
		if got["status"] != "input_required" || len(reqs) != 1 || reqs["b"] == nil {
			t.Fatalf("after answering a: %v", got)
		}
		alice.mustCall(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"b": map[string]any{"action": "decline"}}})
		got = alice.wait(t, id)
		result, _ := got["result"].(map[string]any)
		content, _ := result["content"].([]any)
		if got["status"] != "completed" || len(content) != 1 || content[0].(map[string]any)["text"] != "a=accept,b=decline" {
			t.Errorf("resumed task = %v", got)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		id := alice.create(t, "confirm")
		alice.waitFor(t, id, "input_required")
		alice.mustCall(t, "tasks/cancel", map[string]any{"taskId": id})
		alice.mustCall(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"delete": accept}})
		if got := alice.mustCall(t, "tasks/get", map[string]any{"taskId": id}); got["status"] != "cancelled" || got["inputRequests"] != nil {
			t.Errorf("cancelled waiting task = %v", got)
		}
	})
}

// TestTaskAfterInput: a tool that asks for its input synchronously
// (ToolOptions.Synchronous) answers the first round with input_required and
// no task, and the round with the answers with a task that has them.
func TestTaskAfterInput(t *testing.T) {
	f := newFixture(t, nil)
	alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}
	res := alice.mustCall(t, "tools/call", map[string]any{"name": "confirm_then_task", "arguments": map[string]any{}})
	reqs, _ := res["inputRequests"].(map[string]any)
	if res["resultType"] != "input_required" || res["taskId"] != nil || reqs["delete"] == nil {
		t.Fatalf("round 1 = %v", res)
	}
	res = alice.mustCall(t, "tools/call", map[string]any{"name": "confirm_then_task", "arguments": map[string]any{},
		"inputResponses": map[string]any{"delete": map[string]any{"action": "accept"}}, "requestState": res["requestState"]})
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" || res["requestState"] != nil {
		t.Fatalf("round 2 = %v", res)
	}
	got := alice.wait(t, id)
	result, _ := got["result"].(map[string]any)
	content, _ := result["content"].([]any)
	if got["status"] != "completed" || len(content) != 1 || content[0].(map[string]any)["text"] != "delete=accept" {
		t.Errorf("task = %v", got)
	}
}

// parked is a task tool whose work waits until its task ends.
func parked(m *tasks.Manager) *mcpkit.Tool {
	return tasks.Tool(&mcpkit.Tool{Tool: mcp.Tool{Name: "parked", InputSchema: objectSchema}, Handler: mcpkit.HandlerFunc(
		func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})}, m, nil)
}

// TestTaskQuota: a principal that has used up its share of the task store
// with running tasks gets a retryable tool error, with a retry hint, and no
// task; another principal still gets tasks.
func TestTaskQuota(t *testing.T) {
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "quota"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(&tasks.Options{Store: tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxTasksPerOwner: 1})})
	if err := m.Attach(srv); err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := srv.Add(parked(m)); err != nil {
		t.Fatal(err)
	}
	far := time.Now().Add(time.Hour)
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Token: "alice-token", Tokens: map[string]*auth.TokenInfo{
		"alice-token": {UserID: "alice", Expiration: far},
		"bob-token":   {UserID: "bob", Expiration: far},
	}})
	alice := rpc{url: ts.URL, token: "alice-token", declared: true}
	bob := rpc{url: ts.URL, token: "bob-token", declared: true}

	alice.create(t, "parked")
	res := alice.mustCall(t, "tools/call", map[string]any{"name": "parked", "arguments": map[string]any{}})
	meta, _ := res["_meta"].(map[string]any)
	content, _ := res["content"].([]any)
	if res["resultType"] != "complete" || res["taskId"] != nil || res["isError"] != true || len(content) != 1 ||
		meta[mcpkit.MetaKeyErrorClass] != string(mcpkit.Retryable) || meta["io.github.mcpkit/retryAfterMs"] != float64(1000) {
		t.Errorf("alice over her quota: %v", res)
	}
	if text, _ := content[0].(map[string]any)["text"].(string); text != "no room for another task; try again later" {
		t.Errorf("alice over her quota: %q", text)
	}
	bob.create(t, "parked")
}

// The progress a task's work reports becomes its status message, which
// tasks/get shows (from the store, so on any replica) while it works.
func TestTaskProgress(t *testing.T) {
	f := newFixture(t, nil)
	alice := rpc{url: f.ts.URL, token: "alice-token", declared: true}
	id := alice.create(t, "progressing")
	<-f.started
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := alice.mustCall(t, "tasks/get", map[string]any{"taskId": id})
		if got["statusMessage"] == "indexing (1/3)" && got["status"] == "working" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks/get never showed the progress: %v", got)
		}
		time.Sleep(time.Millisecond) // pacing, not an assertion
	}
	close(f.release)
	if got := alice.wait(t, id); got["status"] != "completed" {
		t.Errorf("the task ended %v", got)
	}
}
