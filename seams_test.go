package mcpkit_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// Tests found by trying the seams between routes as an outsider would,
// each through a real client: what it checks is what a user meets. Each
// failed before the fix it came with.

// labelled returns a tool called name whose description and answer are
// label, Unlisted as unlisted says: what a list shows of it and what a
// call reaches can be compared.
func labelled(name, label string, unlisted bool) *mcpkit.Tool {
	tl := tool(name, reply(label))
	tl.Description = label
	tl.Unlisted = unlisted
	return tl
}

// listedAs returns, by name, the descriptions of the tools cs is listed.
func listedAs(t *testing.T, cs *mcp.ClientSession) map[string]string {
	t.Helper()
	out := map[string]string{}
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tl.Name] = tl.Description
	}
	return out
}

// TestListedIsCalledWithUnlistedMountedTools: a mounted server decides a
// name with a tool that it does not list. The parent must list what a call
// of that name reaches, by the route's listing rule: nothing for the
// child's unlisted tool (not another source's tool of that name, which a
// call never reaches), and the version the caller sees first when the
// parent hides the child's unlisted higher version.
func TestListedIsCalledWithUnlistedMountedTools(t *testing.T) {
	t.Run("another source lists the name", func(t *testing.T) {
		// docs mounts a child whose alias is unlisted; a provider added
		// after the mount serves a tool of the same mounted name.
		parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
		child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
		add(t, child, labelled("alias", "child's unlisted alias", true))
		if _, err := parent.Mount("docs", child); err != nil {
			t.Fatal(err)
		}
		parent.AddProvider(oneTool{labelled("docs_alias", "provider's docs_alias", false)})
		cs := mcpkittest.NewInMemoryServer(t, parent, nil).Session
		listed := listedAs(t, cs)
		got, err := callText(t, cs, "docs_alias", "", nil)
		if desc, ok := listed["docs_alias"]; ok && desc != got {
			t.Errorf("docs_alias is listed as %q, but a call of it reaches %q (%v): what is listed is not what is called", desc, got, err)
		}
	})
	t.Run("parent hides the unlisted higher version", func(t *testing.T) {
		// The child's report 2 is an unlisted preview; the parent disables
		// it, so that its callers reach report 1, a listed version.
		child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
		v1 := labelled("report", "report 1", false)
		v1.Version = "1"
		v2 := labelled("report", "report 2 preview", true)
		v2.Version = "2"
		add(t, child, v1)
		add(t, child, v2)
		parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
		if _, err := parent.Mount("docs", child); err != nil {
			t.Fatal(err)
		}
		visibility.New(visibility.DisableVersion("report", "2")).Attach(parent)
		cs := mcpkittest.NewInMemoryServer(t, parent, nil).Session
		listed := listedAs(t, cs)
		got, err := callText(t, cs, "docs_report", "", nil)
		if _, ok := listed["docs_report"]; got != "report 1" || !ok {
			t.Errorf("a call of docs_report reaches %q (%v), listed: %v; want report 1 reached and docs_report listed, as the first version the caller sees",
				got, err, strings.Join(keys(listed), ","))
		}
	})
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// stuckProvider is a provider whose database hangs once armed: a lookup
// then says it was asked, and waits until the test releases it.
type stuckProvider struct {
	armed   atomic.Bool
	asked   chan string
	release chan struct{}
}

func newStuckProvider() *stuckProvider {
	return &stuckProvider{asked: make(chan string, 64), release: make(chan struct{})}
}

func (p *stuckProvider) ListTools(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Tool, error) {
	return nil, nil
}

func (p *stuckProvider) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	if p.armed.Load() {
		p.asked <- name
		<-p.release
	}
	return nil, nil
}

// TestChangeNeverWaitsOnProvider: a server has a tenant provider (or
// mounts a child that has one) and mounts a child; a client listens for
// changes. The provider's database hangs. A tool added to or removed from
// either server, or a visibility rule naming a tool, completes all the
// same, as does every later change: the review of the listeners asks the
// provider afterwards, on its own, never under the servers' locks.
func TestChangeNeverWaitsOnProvider(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mounted bool // the provider is the mounted server's, not the parent's
		change  func(t *testing.T, parent, child *mcpkit.Server, rules *visibility.Rules)
	}{
		{"child.Add", false, func(t *testing.T, _, child *mcpkit.Server, _ *visibility.Rules) { add(t, child, okTool("new")) }},
		{"rule by name", false, func(_ *testing.T, _, _ *mcpkit.Server, rules *visibility.Rules) {
			rules.Add(visibility.DisableNames("a"))
		}},
		{"child.Remove, the mounted server's provider", true, func(_ *testing.T, _, child *mcpkit.Server, _ *visibility.Rules) { child.Remove("b") }},
		{"parent.Add, the mounted server's provider", true, func(t *testing.T, parent, _ *mcpkit.Server, _ *visibility.Rules) {
			add(t, parent, okTool("docs_q"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, rules := newListChangeServer(t)
			p := newStuckProvider()
			child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
			add(t, child, okTool("b"))
			if tc.mounted {
				child.AddProvider(p)
			} else {
				parent.AddProvider(p)
			}
			if _, err := parent.Mount("docs", child); err != nil {
				t.Fatal(err)
			}
			ts := mcpkittest.NewServer(t, parent, &mcpkittest.Options{Tokens: identityTokens, Token: "user"})
			listenAs(t, parent, ts.URL, "user-listener", "user")

			p.armed.Store(true)
			defer close(p.release)
			done := make(chan struct{})
			go func() {
				defer close(done)
				tc.change(t, parent, child, rules)
				add(t, parent, okTool("later"))
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second): // a bound, not an assertion of speed: nothing may wait on the provider
				t.Fatalf("%s and a later Add waited on the hung provider (asked: %q)", tc.name, drain(p.asked))
			}
		})
	}
}

// drain returns the names sent on c so far.
func drain(c chan string) []string {
	var out []string
	for {
		select {
		case n := <-c:
			out = append(out, n)
		default:
			return out
		}
	}
}

// TestPinnedVersionCallableWithListedHeaders: geo 1 mirrors its region
// argument into Mcp-Param-Region, geo 2 (listed) no longer does. A real
// 2026-07-28 client lists geo, then pins version 1, named in its _meta: it
// sends the headers of the definition it was listed, and the call is
// served, not refused for a header it could not know.
func TestPinnedVersionCallableWithListedHeaders(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "geo"}, nil)
	for _, v := range []struct{ version, schema string }{
		{"1", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`},
		{"2", `{"type":"object","properties":{"region":{"type":"string"}}}`},
	} {
		add(t, srv, &mcpkit.Tool{Tool: mcp.Tool{Name: "geo", InputSchema: json.RawMessage(v.schema)},
			Version: v.version, Handler: reply("geo " + v.version)})
	}
	cs := mcpkittest.NewStatelessServer(t, srv, nil).Session
	var versions any
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		versions = tl.Meta[mcpkit.MetaKeyVersions]
	}
	got, err := callText(t, cs, "geo", "1", map[string]any{"region": "us"})
	if err != nil || got != "geo 1" {
		t.Errorf("geo (listed with versions %v) pinned to 1 by the SDK's client: %q, %v; want geo 1's answer", versions, got, err)
	}
}

// TestSearchFindsEachNameOnce: the registered report is for admins; a
// provider (or a mounted server) serves a report of that name to everyone.
// A user's search_tools finds report once, though the index's report
// resolves, for the user, to the provider's, which the search found too.
func TestSearchFindsEachNameOnce(t *testing.T) {
	for _, tc := range []struct {
		route   string
		name    string
		install func(t *testing.T, srv *mcpkit.Server, served *mcpkit.Tool)
	}{
		{"provider", "report", func(_ *testing.T, srv *mcpkit.Server, served *mcpkit.Tool) { srv.AddProvider(oneTool{served}) }},
		{"mount", "docs_report", func(t *testing.T, srv *mcpkit.Server, served *mcpkit.Tool) {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
			add(t, child, served)
			if _, err := srv.Mount("docs", child); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.route, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "reports"}, nil)
			visibility.New(visibility.Require(mcpkit.Tagged("internal"), visibility.Scopes("admin"))).Attach(srv)
			registered := okTool(tc.name)
			registered.Tags = []string{"internal"}
			add(t, srv, registered)
			tc.install(t, srv, tool("report", reply("served report")))
			if err := transform.Discovery(srv, nil); err != nil {
				t.Fatal(err)
			}
			cs := sessionAs(t, srv, "user")
			found, err := callText(t, cs, transform.SearchToolName, "", map[string]any{"query": "report"})
			var out transform.SearchOut
			if err == nil {
				err = json.Unmarshal([]byte(found), &out)
			}
			names := map[string]int{}
			for _, f := range out.Tools {
				names[f.Name]++
			}
			if err != nil || names[tc.name] != 1 {
				t.Errorf("user's search_tools report = %s, %v; want %s found once", found, err, tc.name)
			}
		})
	}
}

// TestListChangedAfterRuleByNameThenRefresh: a server's rules start with
// no per-request rule; a user's client listens. Ops add a rule by name
// requiring admin for report (not yet registered), then a rule by tag that
// hides deploy from non-admins. The user's list loses deploy, and its
// client is told: the listener's digest, not kept while everyone saw the
// same list, is made whole once lists begin to differ per caller.
func TestListChangedAfterRuleByNameThenRefresh(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "ops"}, nil)
	rules := visibility.New()
	rules.Attach(srv)
	deploy := okTool("deploy")
	deploy.Tags = []string{"ops"}
	add(t, srv, deploy)
	ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: identityTokens, Token: "admin"})
	user := listenAs(t, srv, ts.URL, "user-listener", "user")
	admin := listenAs(t, srv, ts.URL, "admin-listener", "admin")
	before := strings.Join(listAll(t, user.cs), ",")

	rules.Add(visibility.RequireNames(visibility.Scopes("admin"), "report"))
	rules.Add(visibility.Require(mcpkit.Tagged("ops"), visibility.Scopes("admin")))
	// A tool only admins see: admin hears of it, in the round that tells
	// user of the rule's change if user is told at all.
	probe := okTool("probe")
	probe.Tags = []string{"ops"}
	add(t, srv, probe)
	admin.await(t, "a tool only admins see")
	user.flush(t)
	after := strings.Join(listAll(t, user.cs), ",")
	if n := user.taken(); n == 0 && after != before {
		t.Errorf("user's list went from [%s] to [%s], and its client heard no notifications/tools/list_changed", before, after)
	}
}

// TestReachesMountedToolsByEveryName: a call reaches a mounted tool by a
// name that is not its identity's name behind one prefix (through two
// mounts; or renamed by the mounted server's own Namespace transform), and
// Reaches says the caller reaches it, as the call just did.
func TestReachesMountedToolsByEveryName(t *testing.T) {
	for _, tc := range []struct {
		name string
		// serve makes top serve leaf's x, and returns the name it serves
		// it under.
		serve func(t *testing.T, top, leaf *mcpkit.Server) string
	}{
		{"nested mounts", func(t *testing.T, top, leaf *mcpkit.Server) string {
			mid := mcpkit.NewServer(&mcp.Implementation{Name: "mid"}, nil)
			if _, err := mid.Mount("leaf", leaf); err != nil {
				t.Fatal(err)
			}
			if _, err := top.Mount("mid", mid); err != nil {
				t.Fatal(err)
			}
			return "mid_leaf_x"
		}},
		{"mounted server's namespace", func(t *testing.T, top, leaf *mcpkit.Server) string {
			if err := leaf.Transform(transform.Namespace("v1", "_")); err != nil {
				t.Fatal(err)
			}
			if _, err := top.Mount("docs", leaf); err != nil {
				t.Fatal(err)
			}
			return "docs_v1_x"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaf := mcpkit.NewServer(&mcp.Implementation{Name: "leaf"}, nil)
			id := add(t, leaf, okTool("x"))
			top := mcpkit.NewServer(&mcp.Implementation{Name: "top"}, nil)
			var called mcpkit.ToolID
			top.Use(func(next mcpkit.Handler) mcpkit.Handler {
				return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
					called = req.Tool.ID()
					return next.ServeTool(ctx, req)
				})
			})
			name := tc.serve(t, top, leaf)
			cs := mcpkittest.NewInMemoryServer(t, top, nil).Session
			got, err := callText(t, cs, name, "", nil)
			if err != nil || got != "x" {
				t.Fatalf("call %s = %q, %v; want x's answer", name, got, err)
			}
			if called != id {
				t.Fatalf("the call reached identity %v, want %v", called, id)
			}
			if !top.Reaches(t.Context(), nil, id) {
				t.Errorf("top.Reaches(%v) = false, though a call of %s just reached it", id, name)
			}
		})
	}
}

// afterBlind is a provider whose ListTools ignores after and limit and
// returns its whole catalog, sorted: what a provider that "just returns
// its tools" does.
type afterBlind struct{ ts []*mcpkit.Tool }

func (p afterBlind) ListTools(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Tool, error) {
	return p.ts, nil
}

func (p afterBlind) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	for _, t := range p.ts {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, nil
}

// pagesOf lists every page of cs by its cursors, at most max pages, and
// returns the names in order and whether the cursors ended.
func pagesOf(t *testing.T, cs *mcp.ClientSession, max int) ([]string, bool) {
	t.Helper()
	var names []string
	cursor := ""
	for range max {
		res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if res.NextCursor == "" {
			return names, true
		}
		cursor = res.NextCursor
	}
	return names, false
}

// TestListPagesEndWithProviderIgnoringAfter: a provider returns all its
// tools whatever the cursor. A client paging tools/list (2 a page) lists
// every tool once and comes to the last page: the cursor never leads back.
func TestListPagesEndWithProviderIgnoringAfter(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "paging"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: 2}})
	var ts []*mcpkit.Tool
	for _, n := range []string{"p1", "p2", "p3", "p4", "p5"} {
		ts = append(ts, okTool(n))
	}
	srv.AddProvider(afterBlind{ts})
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	names, ended := pagesOf(t, cs, 20)
	want := []string{"p1", "p2", "p3", "p4", "p5"}
	if !ended || !slices.Equal(names, want) {
		if len(names) > 12 {
			names = append(names[:12], "...")
		}
		t.Errorf("paging tools/list: cursors ended: %v, names %s; want the pages to end, listing %s once each",
			ended, strings.Join(names, ","), strings.Join(want, ","))
	}
}

// TestBatchRefusalKeepsOtherCallsResults: a 2025-03-26 client sends one
// JSON-RPC batch: append_log (anyone may call it) and delete_repo (needs
// admin). The response holds append_log's result and delete_repo's
// refusal, as a result: one HTTP status cannot answer two calls.
func TestBatchRefusalKeepsOtherCallsResults(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "batch"}, nil)
	refused := make(chan struct{})
	var once sync.Once
	srv.Use(func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			res, err := next.ServeTool(ctx, req)
			if req.Tool.Name == "delete_repo" {
				once.Do(func() { close(refused) })
			}
			return res, err
		})
	}, mcpkit.ForTools(mcpkit.Named("delete_repo"), mcpkit.RequireScopes("admin")))
	var ran atomic.Int64
	add(t, srv, tool("append_log", func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
		select { // answer after delete_repo was refused, whatever order the SDK runs them in
		case <-refused:
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
		ran.Add(1)
		return textResult("appended"), nil
	}))
	add(t, srv, okTool("delete_repo"))
	ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{Tokens: identityTokens, Token: "user"})

	body := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"append_log","arguments":{}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_repo","arguments":{}}}]`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	req.Header.Set("Authorization", "Bearer user")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if ran.Load() != 1 {
		t.Fatalf("append_log ran %d times; the batch answered %s %s", ran.Load(), resp.Status, got)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), "appended") {
		t.Errorf("a batch of append_log (ran) and delete_repo (refused) answered %s, WWW-Authenticate %q, body %q; want 200 with append_log's result and delete_repo's refusal as a result",
			resp.Status, resp.Header.Get("WWW-Authenticate"), strings.TrimSpace(string(got)))
	}
}

// freshProvider serves report to everyone, building its *Tool anew on
// each request, as a provider that reads a row and makes a tool of it
// does (the Provider documentation allows it, at the cost of a chain).
type freshProvider struct{}

func (freshProvider) ListTools(_ context.Context, _ mcpkit.Caller, after string, _ int) ([]*mcpkit.Tool, error) {
	if "report" > after {
		return []*mcpkit.Tool{okTool("report")}, nil
	}
	return nil, nil
}

func (freshProvider) LookupTool(_ context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	if name == "report" {
		return okTool("report"), nil
	}
	return nil, nil
}

// TestListChangedWithFreshProviderToolsOnlyToThoseConcerned: admins see
// the registered report 1; everyone else, a provider's report, which the
// provider builds anew per request. Ops disable report 1: admin's report
// becomes the provider's, and admin hears of it; user's list did not
// change, and user is not told (the review compares what the provider's
// tools define, not their pointers).
func TestListChangedWithFreshProviderToolsOnlyToThoseConcerned(t *testing.T) {
	srv, rules := newListChangeServer(t)
	report := adminTool("report")
	report.Version = "1"
	add(t, srv, report)
	srv.AddProvider(freshProvider{})
	ts := mcpkittest.NewServer(t, srv, &mcpkittest.Options{Tokens: identityTokens, Token: "admin"})
	listChangeSteps(t, srv, ts.URL,
		func() { rules.Add(visibility.DisableVersion("report", "1")) },
		func() { add(t, srv, okTool("c")) },
		"a,c,report", "a,c,report,secret")
}

// TestMountedVersionsMetaNamesOnlyPinnable: a mounted server serves report
// 3, report 2 and an unversioned report; the parent disables report 2. The
// parent lists docs_report with _meta versions that a client may pin: not
// 2.
func TestMountedVersionsMetaNamesOnlyPinnable(t *testing.T) {
	child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	for _, v := range []string{"3", "2", ""} {
		tl := tool("report", reply("report v"+v))
		tl.Version = v
		add(t, child, tl)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "parent"}, nil)
	if _, err := parent.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	visibility.New(visibility.DisableVersion("report", "2")).Attach(parent)
	cs := mcpkittest.NewInMemoryServer(t, parent, nil).Session
	var listed []string
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tl.Name == "docs_report" {
			for _, v := range tl.Meta[mcpkit.MetaKeyVersions].([]any) {
				listed = append(listed, v.(string))
			}
		}
	}
	for _, v := range listed {
		if got, err := callText(t, cs, "docs_report", v, nil); err != nil || got != "report v"+v {
			t.Errorf("docs_report is listed with versions %v; pinned to %s it answers %q, %v", listed, v, got, err)
		}
	}
}

// hangingDB is a tenant provider of report whose database hangs once
// armed: a lookup then waits until its context is done.
type hangingDB struct{ armed chan struct{} }

var hangingReport = okTool("report")

func (p *hangingDB) ListTools(context.Context, mcpkit.Caller, string, int) ([]*mcpkit.Tool, error) {
	return nil, nil
}

func (p *hangingDB) LookupTool(ctx context.Context, _ mcpkit.Caller, name string) (*mcpkit.Tool, error) {
	select {
	case <-p.armed:
		<-ctx.Done()
		return nil, ctx.Err()
	default:
	}
	if name == "report" {
		return hangingReport, nil
	}
	return nil, nil
}

// TestListenersToldWithinOneProviderTimeout: a provider's database hangs,
// and a rule disabling report is added; three clients listen. The review
// waits for the provider at most its one bound (30s), for every listener
// at once, and then tells those it could not judge.
func TestListenersToldWithinOneProviderTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "tenants"}, nil)
		rules := visibility.New(visibility.Require(mcpkit.Named("audit"), func(context.Context, mcpkit.Caller) bool { return true }))
		rules.Attach(srv)
		p := &hangingDB{armed: make(chan struct{})}
		srv.AddProvider(p)
		const listeners = 3
		heard := make(chan struct{}, listeners)
		for range listeners {
			mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{ProtocolVersion: mcpkittest.StatefulVersion, Client: &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { heard <- struct{}{} },
			}})
		}
		synctest.Wait()
		start := time.Now()
		close(p.armed)
		rules.Add(visibility.DisableNames("report"))
		for range listeners {
			<-heard
		}
		if took := time.Since(start); took > 31*time.Second {
			t.Errorf("with the provider hung, %d listeners heard of the change after %v; want each told once the review's bound (30s) has passed", listeners, took)
		}
	})
}
