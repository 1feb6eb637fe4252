package mcpkit_test

import (
	"context"
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

// Tests of the second attack round on the one route and the one commit,
// each through what a user meets.

// TestChangeNeverWaitsOnMountedServersProvider: a server mounts a child
// whose tenant provider's database hangs; a client listens on the parent.
// Removing a tool from the child (or adding one to the parent) hangs with
// it: the parent's review asks the child's provider under both locks.
func TestChangeNeverWaitsOnMountedServersProvider(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, parent, child *mcpkit.Server)
	}{
		{"child.Remove", func(_ *testing.T, _, child *mcpkit.Server) { child.Remove("b") }},
		{"parent.Add", func(t *testing.T, parent, _ *mcpkit.Server) { add(t, parent, okTool("docs_q")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, _ := newListChangeServer(t)
			child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
			add(t, child, okTool("b"))
			p := newStuckProvider()
			child.AddProvider(p)
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
				tc.change(t, parent, child)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second): // a bound, not an assertion of speed
				t.Fatalf("%s waited on the mounted server's hung provider (asked: %q)", tc.name, drain(p.asked))
			}
		})
	}
}

// TestReachesMountedToolsByEveryName: a call reaches a mounted tool by a
// name that is not its identity's name behind one prefix (through two
// mounts; or renamed by the mounted server's own Namespace transform), yet
// Reaches says no caller can reach it: code that checks with Reaches
// whether a caller may still reach a task's or a record's tool refuses a
// tool the caller just called.
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
// tools whatever the cursor. A client paging tools/list (2 a page) gets
// the first page, then an empty page whose cursor leads back to the first:
// it loops for ever, and never lists the provider's later tools.
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
// admin). append_log runs, yet the whole response is replaced by the 403
// challenge: the client never gets append_log's result, nor learns it ran.
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
// change, yet user is told it did (the review compares the provider's
// pointers, not what they define).
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
// parent lists docs_report with _meta versions naming 2 all the same, and a
// client that pins 2, as listed, is told the tool does not exist.
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
// gives up on the provider after its bound (30s) per listener, one after
// the other, and tells nobody until the last has timed out: every client
// hears of the change after 90s, a thousand listeners after eight hours.
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
