package mcpkit_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// Tests found by attacking the seams between routes, each through a real
// client: what it shows is what a user meets.

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

// TestChangeNeverWaitsOnProvider: a server has a tenant provider and
// mounts a child; a client listens for changes. The provider's database
// hangs. A tool added to the child (or a visibility rule naming a tool)
// completes all the same, as does every later change: the review of the
// listeners asks the provider afterwards, on its own, never under the
// servers' locks.
func TestChangeNeverWaitsOnProvider(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, parent, child *mcpkit.Server, rules *visibility.Rules)
	}{
		{"child.Add", func(t *testing.T, _, child *mcpkit.Server, _ *visibility.Rules) { add(t, child, okTool("new")) }},
		{"rule by name", func(_ *testing.T, _, _ *mcpkit.Server, rules *visibility.Rules) {
			rules.Add(visibility.DisableNames("a"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, rules := newListChangeServer(t)
			p := newStuckProvider()
			parent.AddProvider(p)
			child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
			add(t, child, okTool("b"))
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
// refused as a header mismatch (HTTP 400) for a header it could not know.
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
// A user's search_tools finds report twice (the index's report, resolved
// to the provider's for the user, and the provider's own), each taking a
// place among the results that another tool should have.
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
// hides deploy from non-admins. The user's list loses deploy, yet its client
// is never told: the listener's digest, not kept while everyone saw the
// same list, was carried on by the review by name, and the Refresh compared
// the new list with it.
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
