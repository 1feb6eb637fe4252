package mcpkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tasks"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/visibility"
)

// The probes of this file attack, a second time, the dispatch of every call
// under one SDK tool name and the index that marks removed names instead of
// copying: tasks bound to a removed tool, list_changed after a Remove, a
// cursor across a compaction, the change log across one, mounts and
// providers, and a Wrap server's SDK table.

// atk45bTokens are the callers of these probes: alice has the admin scope,
// bob has not.
var atk45bTokens = func() map[string]*auth.TokenInfo {
	far := time.Now().Add(time.Hour)
	return map[string]*auth.TokenInfo{
		"alice": {UserID: "alice", Scopes: []string{"admin"}, Expiration: far},
		"bob":   {UserID: "bob", Expiration: far},
	}
}()

// atk45bTasks returns a server that advertises the tasks extension, with a
// Manager attached.
func atk45bTasks(t *testing.T) (*mcpkit.Server, *tasks.Manager) {
	t.Helper()
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk45b"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
	m := tasks.NewManager(nil)
	if err := m.Attach(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	return srv, m
}

// atk45bAsker is a task tool that asks for a confirmation, then answers
// label; runs counts its rounds.
func atk45bAsker(m *tasks.Manager, name, label string, runs *atomic.Int64) *mcpkit.Tool {
	h := mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		runs.Add(1)
		if _, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "confirm"); !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Go on?"}}}, nil
		}
		return textResult(label), nil
	})
	return tasks.Tool(tool(name, h), m, nil)
}

// atk45bBlocker is a task tool that reports its task's ID on started, waits
// for release, then answers label.
func atk45bBlocker(m *tasks.Manager, name, label string, started chan<- string, release <-chan struct{}) *mcpkit.Tool {
	h := mcpkit.HandlerFunc(func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
		info, _ := tasks.InfoFromContext(ctx)
		started <- info.ID
		select {
		case <-release:
			return textResult(label), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return tasks.Tool(tool(name, h), m, nil)
}

// atk45bRPC sends one 2026-07-28 request that declares the tasks extension.
func atk45bRPC(t *testing.T, url, token, method string, params map[string]any) (map[string]any, *jsonrpc.Error) {
	t.Helper()
	raw := mcpkittest.RawClient{Endpoint: url, Token: token,
		Capabilities: map[string]any{"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}}
	res, err := raw.Call(t.Context(), method, params)
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		return nil, jerr
	}
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	var out map[string]any
	if err := json.Unmarshal(res, &out); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return out, nil
}

// atk45bAwait polls tasks/get until the task's status is want or terminal.
func atk45bAwait(t *testing.T, get func() map[string]any, want string) map[string]any {
	t.Helper()
	for {
		res := get()
		switch res["status"] {
		case want, "completed", "failed", "cancelled":
			return res
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("task never became %s: %v", want, res)
		case <-time.After(time.Millisecond): // pacing, not an assertion
		}
	}
}

// atk45bTaskText returns the text of a completed task's result.
func atk45bTaskText(got map[string]any) string {
	result, _ := got["result"].(map[string]any)
	content, _ := result["content"].([]any)
	var texts []string
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			texts = append(texts, fmt.Sprint(m["text"]))
		}
	}
	return strings.Join(texts, "|")
}

// TestAttack45bTaskBoundAcrossRemove drives tasks end to end on the
// 2026-07-28 wire, while their tool is removed and another tool is added
// under its name. A task waiting for input is not resumed on the new tool
// (it fails as a call of an unknown tool would); a task whose work runs
// finishes with its own tool's answer; tasks/cancel cancels; tasks/result
// is not a method of the extension.
func TestAttack45bTaskBoundAcrossRemove(t *testing.T) {
	srv, m := atk45bTasks(t)
	var oldRuns, newRuns atomic.Int64
	started := make(chan string, 4)
	release := make(chan struct{})
	if err := srv.Add(atk45bAsker(m, "ask", "old ask", &oldRuns), atk45bBlocker(m, "block", "old block", started, release)); err != nil {
		t.Fatal(err)
	}
	url := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: atk45bTokens, Token: "alice"}).URL
	call := atk45bCaller(t, url)
	get := func(id string) func() map[string]any {
		return func() map[string]any { return call("tasks/get", map[string]any{"taskId": id}) }
	}
	create := func(name string) string {
		res := call("tools/call", map[string]any{"name": name, "arguments": map[string]any{}})
		id, _ := res["taskId"].(string)
		if res["resultType"] != "task" || id == "" {
			t.Fatalf("tools/call %s: %v", name, res)
		}
		return id
	}

	asked := create("ask")
	if got := atk45bAwait(t, get(asked), "input_required"); got["status"] != "input_required" {
		t.Fatalf("ask: %v", got)
	}
	blocked := create("block")
	<-started
	cancelled := create("block")
	<-started

	srv.Remove("ask", "block")
	newBlockRan := make(chan string, 4)
	if err := srv.Add(atk45bAsker(m, "ask", "new ask", &newRuns), atk45bBlocker(m, "block", "new block", newBlockRan, release)); err != nil {
		t.Fatal(err)
	}

	// The parked task: its tool is gone, the one of its name is another.
	call("tasks/update", map[string]any{"taskId": asked, "inputResponses": map[string]any{"confirm": map[string]any{"action": "accept"}}})
	got := atk45bAwait(t, get(asked), "")
	e, _ := got["error"].(map[string]any)
	if got["status"] != "failed" || e["code"] != float64(-32602) || e["message"] != unknownAnswer("ask") {
		t.Errorf("parked task after Remove and a new ask: %v; want failed, -32602 %q", got, unknownAnswer("ask"))
	}
	if n := newRuns.Load(); n != 0 {
		t.Errorf("the new ask ran %d rounds of the old task", n)
	}
	if n := oldRuns.Load(); n != 1 {
		t.Errorf("the removed ask ran %d rounds, want 1", n)
	}

	// tasks/cancel cancels a running task whose tool was removed.
	if res := call("tasks/cancel", map[string]any{"taskId": cancelled}); res == nil {
		t.Error("tasks/cancel: no answer")
	}
	if got := call("tasks/get", map[string]any{"taskId": cancelled}); got["status"] != "cancelled" {
		t.Errorf("cancelled task: %v", got)
	}

	// The running task ends with its own tool's answer.
	close(release)
	got = atk45bAwait(t, get(blocked), "")
	if got["status"] != "completed" || atk45bTaskText(got) != "old block" {
		t.Errorf("running task after Remove: %v; want completed with %q", got, "old block")
	}
	select {
	case id := <-newBlockRan:
		t.Errorf("the new block ran for task %s", id)
	default:
	}

	// A new call reaches the new tools.
	fresh := create("block")
	if id := <-newBlockRan; id != fresh {
		t.Errorf("the new block ran for %s, want %s", id, fresh)
	}
	if got := atk45bAwait(t, get(fresh), ""); atk45bTaskText(got) != "new block" {
		t.Errorf("task of the new block: %v", got)
	}

	if _, err := atk45bRPC(t, url, "alice", "tasks/result", map[string]any{"taskId": blocked}); err == nil || err.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("tasks/result: %v; want -32601", err)
	}
}

// Custom methods of the tasks extension, for an SDK client of 2025-11-25.
type atk45bTaskParams struct {
	mcp.ParamsBase
	TaskID         string         `json:"taskId"`
	InputResponses map[string]any `json:"inputResponses,omitempty"`
}

type atk45bTaskResult struct {
	mcp.ResultBase
	TaskID string          `json:"taskId"`
	Status string          `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// TestAttack45bTaskSessionEra: the same over a 2025-11-25 session (an SDK
// client that declared the extension at initialize): a task whose tool is
// removed and replaced while it runs finishes with its own answer, and one
// waiting for input fails on tasks/update instead of running the new tool.
func TestAttack45bTaskSessionEra(t *testing.T) {
	srv, m := atk45bTasks(t)
	var oldRuns, newRuns atomic.Int64
	started := make(chan string, 4)
	release := make(chan struct{})
	if err := srv.Add(atk45bAsker(m, "ask", "old ask", &oldRuns), atk45bBlocker(m, "block", "old block", started, release)); err != nil {
		t.Fatal(err)
	}
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: atk45bTokens, Token: "alice",
		Client: &mcp.ClientOptions{Capabilities: caps},
		ClientSetup: func(c *mcp.Client) {
			for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
				if err := mcp.AddSendingCustomMethod[*atk45bTaskParams, *atk45bTaskResult](c, method); err != nil {
					t.Fatal(err)
				}
			}
		}})
	taskCall := func(method string, p *atk45bTaskParams) *atk45bTaskResult {
		t.Helper()
		res, err := mcp.CallCustomMethod[*atk45bTaskParams, *atk45bTaskResult](t.Context(), ts.Session, method, p)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return res
	}
	await := func(id, want string) *atk45bTaskResult {
		t.Helper()
		for {
			res := taskCall("tasks/get", &atk45bTaskParams{TaskID: id})
			switch res.Status {
			case want, "completed", "failed", "cancelled":
				return res
			}
			select {
			case <-t.Context().Done():
				t.Fatalf("task %s never became %s", id, want)
			case <-time.After(time.Millisecond): // pacing, not an assertion
			}
		}
	}
	// The SDK client cannot read a CreateTaskResult: the work reports its
	// task's ID (block), or the task is found by its tool's first round.
	go ts.Session.CallTool(t.Context(), &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
	blocked := <-started

	srv.Remove("block", "ask")
	newStarted := make(chan string, 4)
	if err := srv.Add(atk45bAsker(m, "ask", "new ask", &newRuns), atk45bBlocker(m, "block", "new block", newStarted, release)); err != nil {
		t.Fatal(err)
	}
	close(release)
	if got := await(blocked, ""); got.Status != "completed" || !strings.Contains(string(got.Result), "old block") {
		t.Errorf("running task after Remove: %+v (%s); want completed with old block", got, got.Result)
	}
	select {
	case id := <-newStarted:
		t.Errorf("the new block ran for %s", id)
	default:
	}
	if n := newRuns.Load(); n != 0 {
		t.Errorf("new ask ran %d times", n)
	}
}

// atk45bListen opens a 2026-07-28 listen stream, as token, for the tools'
// and the resources' list changes, and returns a channel of the methods
// of the notifications it hears after the acknowledgement.
func atk45bListen(t *testing.T, url, token string) <-chan string {
	t.Helper()
	raw := mcpkittest.RawClient{Endpoint: url, Token: token}
	st, err := raw.Stream(t.Context(), "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true, "resourcesListChanged": true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b, err := st.Next()
	if err != nil || !strings.Contains(string(b), "notifications/subscriptions/acknowledged") {
		t.Fatalf("listen: %s, %v", b, err)
	}
	heard := make(chan string, 16)
	go func() {
		defer close(heard)
		for {
			b, err := st.Next()
			if err != nil {
				return
			}
			var m struct {
				Method string `json:"method"`
			}
			json.Unmarshal(b, &m)
			heard <- m.Method
		}
	}()
	return heard
}

// atk45bUntil reads methods from heard until want arrives, and returns
// those read before it.
func atk45bUntil(t *testing.T, who string, heard <-chan string, want string) []string {
	t.Helper()
	var before []string
	for {
		select {
		case m, ok := <-heard:
			if !ok {
				t.Fatalf("%s: the stream ended before %s; heard %v", who, want, before)
			}
			if m == want {
				return before
			}
			before = append(before, m)
		case <-time.After(30 * time.Second): // a safety net, not a measure
			t.Fatalf("%s never heard %s; heard %v", who, want, before)
		}
	}
}

// atk45bVisible is a server whose tool "secret" only admins see, beside
// "pub", which all see.
func atk45bVisible(t *testing.T) *mcpkit.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk45b-visible"}, nil)
	visibility.New(visibility.RequireNames(visibility.Scopes("admin"), "secret")).Attach(srv)
	if err := srv.Add(tool("secret", reply("s")), tool("pub", reply("p"))); err != nil {
		t.Fatal(err)
	}
	// A resource from the start, so that the listeners hear of the
	// resources: adding the marker later is then a change of them.
	if err := srv.AddResources(tools.TextResource("note://first", "first", "text/plain", "f", nil)); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestAttack45bListenHearsRemoveByViewer: a Remove of a tool only alice
// sees is heard on alice's 2026-07-28 listen stream, not on bob's. A
// resource added next is the marker: bob's first notification is its.
func TestAttack45bListenHearsRemoveByViewer(t *testing.T) {
	srv := atk45bVisible(t)
	url := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: atk45bTokens, Token: "alice"}).URL
	atk45bHearRemoves(t, srv, atk45bListen(t, url, "alice"), atk45bListen(t, url, "bob"))
}

// TestAttack45bSessionHearsRemoveByViewer: the same over 2025-11-25
// sessions.
func TestAttack45bSessionHearsRemoveByViewer(t *testing.T) {
	srv := atk45bVisible(t)
	connect := func(token string) <-chan string {
		heard := make(chan string, 16)
		mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: atk45bTokens, Token: token, Client: &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				heard <- "notifications/tools/list_changed"
			},
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
				heard <- "notifications/resources/list_changed"
			},
		}})
		return heard
	}
	atk45bHearRemoves(t, srv, connect("alice"), connect("bob"))
}

// atk45bHearRemoves removes secret, which alice alone sees, then pub,
// which both see, from srv: alice hears both, bob the second alone (a
// resource added in between is what he hears first).
func atk45bHearRemoves(t *testing.T, srv *mcpkit.Server, alice, bob <-chan string) {
	t.Helper()
	srv.Remove("secret")
	atk45bUntil(t, "alice", alice, "notifications/tools/list_changed")
	if err := srv.AddResources(tools.TextResource("note://marker", "marker", "text/plain", "m", nil)); err != nil {
		t.Fatal(err)
	}
	if before := atk45bUntil(t, "bob", bob, "notifications/resources/list_changed"); len(before) > 0 {
		t.Errorf("bob, who never saw secret, heard %v of its Remove", before)
	}
	srv.Remove("pub")
	atk45bUntil(t, "alice", alice, "notifications/tools/list_changed")
	atk45bUntil(t, "bob", bob, "notifications/tools/list_changed")
}

// atk45bName is the name of the i-th tool of a large server.
func atk45bName(i int) string { return fmt.Sprintf("t%04d", i) }

// atk45bPage lists one page of tools from cursor.
func atk45bPage(t *testing.T, cs *mcp.ClientSession, cursor string) ([]string, string) {
	t.Helper()
	res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names, res.NextCursor
}

// TestAttack45bCursorAcrossCompaction takes a tools/list cursor on a
// server of 2,000 tools, removes 400 (every fifth, the tool the cursor
// names included: more than an eighth, so the index is compacted), and
// follows the cursor: the rest is every
// tool after the cursor that was never removed, once each, in order. The
// change log names exactly the removed tools across the compaction, and a
// removal after it (marked in the compacted index) is seen too.
func TestAttack45bCursorAcrossCompaction(t *testing.T) {
	const total = 2000
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk45b-cursor"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 500}})
	all := make([]*mcpkit.Tool, total)
	for i := range all {
		all[i] = tool(atk45bName(i), reply(atk45bName(i)))
	}
	if err := srv.Add(all...); err != nil {
		t.Fatal(err)
	}
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			// Each era starts from the full set.
			for i := range total {
				if _, ok := srv.Lookup(atk45bName(i)); !ok {
					if err := srv.Add(all[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			cs := era.Connect(t, srv, nil).Session
			first, cursor := atk45bPage(t, cs, "")
			if len(first) != 500 || cursor == "" {
				t.Fatalf("first page: %d tools, cursor %q", len(first), cursor)
			}
			gen := srv.Generation()
			removed, removedNames := atk45bRemoveAndFollow(t, cs, cursor, total, "", srv.Remove)
			names, now, ok := srv.ChangedSince(gen)
			if !ok || now != srv.Generation() || !slices.Equal(names, removedNames) {
				t.Errorf("ChangedSince across the compaction: %d names, ok %v, now %d (gen %d); want the %d removed", len(names), ok, now, srv.Generation(), len(removedNames))
			}
			for i := range total {
				if _, ok := srv.Lookup(atk45bName(i)); ok == removed[atk45bName(i)] {
					t.Fatalf("Lookup(%s) = %v after the removals", atk45bName(i), ok)
				}
			}
			// A removal after the compaction, then the name again.
			gen = srv.Generation()
			srv.Remove(atk45bName(1)) // marked in the compacted index's line
			if err := srv.Add(tool(atk45bName(2000), reply("late"))); err != nil {
				t.Fatal(err)
			}
			names, _, ok = srv.ChangedSince(gen)
			if !ok || !slices.Equal(names, []string{atk45bName(1), atk45bName(2000)}) {
				t.Errorf("ChangedSince after the compaction: %v, %v", names, ok)
			}
			if got := listAll(t, cs); len(got) != total-len(removed)-1+1 || slices.Contains(got, atk45bName(1)) || !slices.IsSorted(got) {
				t.Errorf("list after: %d tools (t0001 listed: %v, sorted: %v)", len(got), slices.Contains(got, atk45bName(1)), slices.IsSorted(got))
			}
			srv.Remove(atk45bName(2000))
		})
	}
}

// atk45bRemoveAndFollow removes every fifth of total tools from t0004 (one
// at a time: each marks, until the compaction; t0499, where cursor points,
// too), then follows cursor on cs: the pages after the first 500 must
// hold every tool never removed, named with prefix, once, in order. It
// returns the names removed, as a set and in order.
func atk45bRemoveAndFollow(t *testing.T, cs *mcp.ClientSession, cursor string, total int, prefix string, remove func(...string)) (map[string]bool, []string) {
	t.Helper()
	removed := map[string]bool{}
	var names []string
	for i := 4; i < total; i += 5 {
		removed[atk45bName(i)] = true
		names = append(names, atk45bName(i))
		remove(atk45bName(i))
	}
	var rest []string
	for cursor != "" {
		var page []string
		page, cursor = atk45bPage(t, cs, cursor)
		rest = append(rest, page...)
	}
	var want []string
	for i := 500; i < total; i++ {
		if !removed[atk45bName(i)] {
			want = append(want, prefix+atk45bName(i))
		}
	}
	if !slices.Equal(rest, want) {
		t.Errorf("after the cursor: %d tools, want %d (first diff at %d)", len(rest), len(want), firstDiff(rest, want))
	}
	return removed, names
}

// firstDiff returns the first index where a and b differ.
func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// atk45bProvider provides one tool, "x", that answers "provided".
type atk45bProvider struct{}

func (atk45bProvider) ListTools(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.Tool, error) {
	if after >= "x" {
		return nil, nil
	}
	return []*mcpkit.Tool{tool("x", reply("provided"))}, nil
}

func (atk45bProvider) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	if name != "x" {
		return nil, nil
	}
	return tool("x", reply("provided")), nil
}

// TestAttack45bMountAndProviderAfterRemove: a child removes tools while the
// parent lists and calls them through the mount; a provided tool of the
// name of a removed registered tool is reached after the Remove, both on
// the parent and through a mount.
func TestAttack45bMountAndProviderAfterRemove(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "child"}, nil)
	if err := child.Add(tool("a", reply("child a")), tool("b", reply("child b")), tool("x", reply("child x"))); err != nil {
		t.Fatal(err)
	}
	child.AddProvider(atk45bProvider{})
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("kid", child); err != nil {
		t.Fatal(err)
	}
	if err := parent.Add(tool("x", reply("parent x"))); err != nil {
		t.Fatal(err)
	}
	parent.AddProvider(atk45bProvider{})
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			ts := era.Connect(t, parent, nil)
			text := atk45bText(t, ts)
			if got := text("kid_a"); got != "child a" {
				t.Fatalf("kid_a = %q", got)
			}
			if got := text("x"); got != "parent x" {
				t.Errorf("x before the Remove = %q", got)
			}
			if got := text("kid_x"); got != "child x" {
				t.Errorf("kid_x before the Remove = %q", got)
			}
			child.Remove("a", "x")
			parent.Remove("x")
			listed := listAll(t, ts.Session)
			if slices.Contains(listed, "kid_a") || !slices.Contains(listed, "kid_b") || !slices.Contains(listed, "x") || !slices.Contains(listed, "kid_x") {
				t.Errorf("listed after the Removes: %v", listed)
			}
			if got := text("kid_a"); !strings.Contains(got, unknownAnswer("kid_a")) {
				t.Errorf("kid_a after the child removed a = %q", got)
			}
			if got := text("x"); got != "provided" {
				t.Errorf("x after the parent removed its own = %q, want the provided one", got)
			}
			if got := text("kid_x"); got != "provided" {
				t.Errorf("kid_x after the child removed its own = %q, want the child's provided one", got)
			}
			if got := text("kid_b"); got != "child b" {
				t.Errorf("kid_b = %q", got)
			}
			// Back for the next era.
			if err := child.Add(tool("a", reply("child a")), tool("x", reply("child x"))); err != nil {
				t.Fatal(err)
			}
			if err := parent.Add(tool("x", reply("parent x"))); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAttack45bWrapRemove: a Wrap server keeps registered names in the
// SDK's table. Add, RemoveVersion and Remove are followed by calls and
// lists; a foreign tool the caller registers on the SDK server under the
// name after mcpkit removed its own is listed and called; and one the
// caller registered before mcpkit's tool of the same name is replaced by
// it and gone with it, as Wrap documents, until registered again.
func TestAttack45bWrapRemove(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			sdk := mcp.NewServer(&mcp.Implementation{Name: "wrapped"}, nil)
			foreign := func(text string) mcp.ToolHandler {
				return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult(text), nil }
			}
			sdk.AddTool(&mcp.Tool{Name: "before", InputSchema: objectSchema}, foreign("foreign before"))
			srv := mcpkit.Wrap(sdk, nil)
			v := func(name, version, text string) *mcpkit.Tool {
				tl := tool(name, reply(text))
				tl.Version = version
				return tl
			}
			if err := srv.Add(v("w", "1", "w1"), v("w", "2", "w2"), tool("before", reply("kit before"))); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, srv, nil)
			text := atk45bText(t, ts)
			if got := text("w"); got != "w2" {
				t.Errorf("w = %q", got)
			}
			if !srv.RemoveVersion("w", "2") {
				t.Fatal("RemoveVersion w 2")
			}
			if got := text("w"); got != "w1" {
				t.Errorf("w after RemoveVersion 2 = %q, want w1", got)
			}
			srv.Remove("w")
			if got := text("w"); !strings.Contains(got, unknownAnswer("w")) {
				t.Errorf("w after Remove = %q", got)
			}
			if listed := listAll(t, ts.Session); slices.Contains(listed, "w") {
				t.Errorf("w listed after Remove: %v", listed)
			}
			sdk.AddTool(&mcp.Tool{Name: "w", InputSchema: objectSchema}, foreign("foreign w"))
			if got := text("w"); got != "foreign w" {
				t.Errorf("foreign w after mcpkit removed its own = %q", got)
			}
			if listed := listAll(t, ts.Session); !slices.Contains(listed, "w") {
				t.Errorf("foreign w not listed: %v", listed)
			}
			if got := text("before"); got != "kit before" {
				t.Errorf("before, shadowed by mcpkit = %q", got)
			}
			// As Wrap documents: the caller's tool was replaced in the SDK's
			// table by mcpkit's, and is gone with it, until registered again.
			srv.Remove("before")
			if got := text("before"); !strings.Contains(got, unknownAnswer("before")) {
				t.Errorf("before, after mcpkit removed its own = %q; want the unknown-tool answer", got)
			}
			sdk.AddTool(&mcp.Tool{Name: "before", InputSchema: objectSchema}, foreign("foreign before"))
			if got := text("before"); got != "foreign before" {
				t.Errorf("before, registered again = %q; want the caller's tool", got)
			}
			if listed := listAll(t, ts.Session); !slices.Contains(listed, "before") {
				t.Errorf("the caller's before not listed once registered again: %v", listed)
			}
			// mcpkit adds w again over the foreign one, then removes it.
			if err := srv.Add(tool("w", reply("kit w"))); err != nil {
				t.Fatal(err)
			}
			if got := text("w"); got != "kit w" {
				t.Errorf("w added again = %q", got)
			}
		})
	}
}

// TestAttack45bMountedCursorAcrossCompaction: the same cursor probe on a
// parent that mounts the server of 2,000 tools, while the child removes
// 400 of them one at a time (its index compacted): the parent's pages
// after the cursor hold every mounted tool never removed, once, in order.
func TestAttack45bMountedCursorAcrossCompaction(t *testing.T) {
	const total = 2000
	child := mcpkit.NewServer(&mcp.Implementation{Name: "atk45b-child"}, nil)
	for i := range total {
		if err := child.Add(tool(atk45bName(i), reply(atk45bName(i)))); err != nil {
			t.Fatal(err)
		}
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "atk45b-parent"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 500}})
	if _, err := parent.Mount("m", child); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewStatelessServer(t, parent, nil).Session
	first, cursor := atk45bPage(t, cs, "")
	if len(first) != 500 || first[499] != "m_"+atk45bName(499) || cursor == "" {
		t.Fatalf("first page: %d tools, last %q, cursor %q", len(first), first[len(first)-1], cursor)
	}
	atk45bRemoveAndFollow(t, cs, cursor, total, "m_", child.Remove)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "m_" + atk45bName(4)})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Message != unknownAnswer("m_"+atk45bName(4)) {
		t.Errorf("call of a removed mounted tool: %v, %v", res, err)
	}
	if got, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "m_" + atk45bName(1998)}); err != nil || resultText(t, got) != atk45bName(1998) {
		t.Errorf("call of a kept mounted tool: %v, %v", got, err)
	}
}

// TestAttack45bNewServerForeignBack: on a server made by NewServer, whose
// SDK table holds no registered name, a tool the caller registered on the
// SDK server before mcpkit's tool of the same name is shadowed while
// mcpkit's is registered, and is the caller's tool again (listed and
// called) once mcpkit removes its own.
func TestAttack45bNewServerForeignBack(t *testing.T) {
	for _, era := range mcpkittest.Eras() {
		t.Run(era.Name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "atk45b-foreign"}, nil)
			srv.MCPServer().AddTool(&mcp.Tool{Name: "y", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("foreign y"), nil
			})
			if err := srv.Add(tool("y", reply("kit y"))); err != nil {
				t.Fatal(err)
			}
			ts := era.Connect(t, srv, nil)
			text := func() string {
				res, err := ts.CallTool(t.Context(), "y", nil)
				if err != nil {
					return "error: " + err.Error()
				}
				return resultText(t, res)
			}
			if got := text(); got != "kit y" {
				t.Errorf("y while mcpkit's is registered = %q", got)
			}
			if listed := listAll(t, ts.Session); len(listed) != 1 || listed[0] != "y" {
				t.Errorf("listed while both exist: %v", listed)
			}
			srv.Remove("y")
			if got := text(); got != "foreign y" {
				t.Errorf("y after mcpkit removed its own = %q; want the caller's", got)
			}
			if listed := listAll(t, ts.Session); !slices.Equal(listed, []string{"y"}) {
				t.Errorf("listed after the Remove: %v", listed)
			}
		})
	}
}

// atk45bText returns a function that calls a tool of ts by name, without
// arguments, and gives its text, or "error: " and the error.
func atk45bText(t *testing.T, ts *mcpkittest.Server) func(name string) string {
	return func(name string) string {
		res, err := ts.CallTool(t.Context(), name, nil)
		if err != nil {
			return "error: " + err.Error()
		}
		return resultText(t, res)
	}
}

// atk45bCaller returns a function that sends a request as alice to the
// stateless server at url and fails the test on an error.
func atk45bCaller(t *testing.T, url string) func(method string, params map[string]any) map[string]any {
	return func(method string, params map[string]any) map[string]any {
		t.Helper()
		res, err := atk45bRPC(t, url, "alice", method, params)
		if err != nil {
			t.Fatalf("%s: %+v", method, err)
		}
		return res
	}
}
