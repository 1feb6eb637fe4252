package mcpkit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// attack35Serve serves srv in memory and lists its tools once, which makes
// the server judge the names written in its rules.
func attack35Serve(t *testing.T, srv *mcpkit.Server) *mcpkittest.Server {
	t.Helper()
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	if _, err := ts.Session.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	return ts
}

// attack35Versions returns namedServer's server with the tool calc in
// versions 1 and 2.
func attack35Versions(t *testing.T) (*mcpkit.Server, *records) {
	srv, logs := namedServer()
	for _, v := range []string{"1", "2"} {
		c := tool("calc", reply("calc "+v))
		c.Version = v
		if err := srv.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return srv, logs
}

// TestAttack35VersionRuleSelectsNoVersion: a kill switch for one version
// of a tool, with the version misspelt ("3" for a tool served in 1 and 2;
// "1.0" for "1", which Key compares byte-wise), hides nothing, and nothing
// is logged: the report judges the name alone. docs/visibility.md puts
// DisableVersion among the rules whose names are checked.
func TestAttack35VersionRuleSelectsNoVersion(t *testing.T) {
	for _, tt := range []struct {
		name    string
		install func(srv *mcpkit.Server)
	}{
		{"DisableVersion", func(srv *mcpkit.Server) {
			visibility.New(visibility.DisableVersion("calc", "3")).Attach(srv)
		}},
		{"DisableVersion 1.0 for 1", func(srv *mcpkit.Server) {
			visibility.New(visibility.DisableVersion("calc", "1.0")).Attach(srv)
		}},
		{"ForTools(Key)", func(srv *mcpkit.Server) {
			srv.Use(mcpkit.ForTools(visibility.Key("calc", "3"), mcpkit.RequireScopes("calc:admin")))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, logs := attack35Versions(t)
			tt.install(srv)
			ts := attack35Serve(t, srv)
			res, err := ts.Session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var versions any
			for _, tl := range res.Tools {
				if tl.Name == "calc" {
					versions = tl.Meta["io.github.mcpkit/versions"]
				}
			}
			if got := logs.all(); len(got) == 0 {
				t.Errorf("a rule on a version calc does not have selects no tool, and nothing is logged (calc still served in versions %v)", versions)
			}
		})
	}
}

// TestAttack35DerefSkipNameReported: docs/middleware.md says a name given
// to mcpkit.Named that selects no tool once the server serves is logged;
// in DerefOptions.Skip it is not (list middleware is never asked for its
// names).
func TestAttack35DerefSkipNameReported(t *testing.T) {
	srv, logs := namedServer()
	srv.UseList(middleware.Deref(&middleware.DerefOptions{Skip: mcpkit.Named("reprot")}))
	attack35Serve(t, srv)
	if got := logs.all(); len(got) != 1 || !strings.HasPrefix(got[0], "reprot -> report") {
		t.Errorf("records %q, want the misspelt name of DerefOptions.Skip reported", got)
	}
}

// TestAttack35DiscoveryMatchWhere: a misspelt name in DiscoveryOptions.Match
// is reported, but as written in transform.Select, which the user never
// wrote; the record should lead to transform.Discovery.
func TestAttack35DiscoveryMatchWhere(t *testing.T) {
	srv, logs := namedServer()
	if err := transform.Discovery(srv, &transform.DiscoveryOptions{Match: mcpkit.Named("reprot")}); err != nil {
		t.Fatal(err)
	}
	attack35Serve(t, srv)
	got := logs.all()
	if len(got) != 1 || !strings.HasPrefix(got[0], "reprot -> report") {
		t.Fatalf("records %q, want reprot reported", got)
	}
	if !strings.Contains(got[0], "Discovery") {
		t.Errorf("the record says the name was written %q, not in transform.Discovery", strings.Split(got[0], " | ")[0])
	}
}

// TestAttack35NamesHeld records what held: names that select tools through
// renames, aliases, catalog transforms, versions, mounts and providers are
// not reported; misspelt names in CacheResults, nested Bulkhead pools and
// allowlists are, each once, however often the catalog changes.
func TestAttack35NamesHeld(t *testing.T) {
	timeout := middleware.Timeout(time.Minute, nil)
	for _, tt := range []struct {
		name    string
		install func(t *testing.T, srv *mcpkit.Server)
		want    []string // the names reported
	}{
		{"the name before transform.Tool renamed it", func(t *testing.T, srv *mcpkit.Server) {
			d, err := transform.Tool(tool("orig", reply("o")), transform.Spec{Name: "renamed"})
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Add(d); err != nil {
				t.Fatal(err)
			}
			srv.Use(mcpkit.ForTools(mcpkit.Named("orig", "renamed"), timeout))
		}, nil},
		{"a catalog transform's new name and the old", func(t *testing.T, srv *mcpkit.Server) {
			srv.Transform(func(tl *mcpkit.Tool) (*mcpkit.Tool, error) {
				if tl.Name != "report" {
					return tl, nil
				}
				t2 := tl.Clone()
				t2.Name = "summary"
				return t2, nil
			})
			srv.Use(mcpkit.ForTools(mcpkit.Named("summary", "report"), timeout))
		}, nil},
		{"namespaced", func(t *testing.T, srv *mcpkit.Server) {
			srv.Transform(transform.Namespace("gh", "_"))
			visibility.New(visibility.RequireNames(visibility.Scopes("x"), "gh_report", "report")).Attach(srv)
		}, nil},
		{"a deprecated alias", func(t *testing.T, srv *mcpkit.Server) {
			a, err := transform.Alias(tool("audit", reply("a")), "old_audit", nil)
			if err != nil {
				t.Fatal(err)
			}
			srv.Add(a)
			srv.Use(mcpkit.ForTools(mcpkit.Named("old_audit"), timeout))
		}, nil},
		{"a provider's name", func(t *testing.T, srv *mcpkit.Server) {
			srv.AddProvider(&catalogProvider{tools: []*mcpkit.Tool{okTool("tenantReport")}})
			srv.Use(middleware.Bulkhead(map[string]int{"tenantReport": 1, "tenantRepot": 1}, nil))
		}, []string{"tenantRepot -> tenantReport"}},
		{"CacheResults Tools", func(t *testing.T, srv *mcpkit.Server) {
			srv.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), &middleware.CacheOptions{Tools: mcpkit.Named("reprot")}))
		}, []string{"reprot -> report"}},
		{"a Bulkhead inside ForTools(Not)", func(t *testing.T, srv *mcpkit.Server) {
			srv.Use(mcpkit.ForTools(mcpkit.Not(mcpkit.Named("report")), middleware.Bulkhead(map[string]int{"listOrder": 1}, nil)))
		}, []string{"listOrder -> listOrders"}},
		{"an allowlist", func(t *testing.T, srv *mcpkit.Server) {
			visibility.NewAllowlist(visibility.EnableNames("report", "delteOrder")).Attach(srv)
		}, []string{"delteOrder -> deleteOrder"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, logs := namedServer()
				tt.install(t, srv)
				ts := attack35Serve(t, srv)
				// Churn: the reports are made once, not on every change.
				for i := range 5 {
					srv.Add(tool(fmt.Sprintf("churn%d", i), reply("c")))
					srv.Remove(fmt.Sprintf("churn%d", i))
					ts.Session.ListTools(t.Context(), nil)
				}
				synctest.Wait()
				var got []string
				for _, r := range logs.all() {
					got = append(got, strings.Split(r, " in ")[0])
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("reported %q, want %q", got, tt.want)
				}
			})
		})
	}
}

// TestAttack35NamesRace changes the catalog and the rules from several
// goroutines while the server serves and asks a provider in the
// background, for the race detector.
func TestAttack35NamesRace(t *testing.T) {
	srv, logs := namedServer()
	srv.AddProvider(&catalogProvider{tools: []*mcpkit.Tool{okTool("tenantReport")}})
	srv.Use(mcpkit.ForTools(mcpkit.Named("tenantRport", "tenantReport"), middleware.Timeout(time.Minute, nil)))
	rules := visibility.New()
	rules.Attach(srv)
	ts := attack35Serve(t, srv)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 20 {
				name := fmt.Sprintf("t%d_%d", i, j)
				srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: name, InputSchema: objectSchema}, Handler: reply("x"),
					Middleware: []mcpkit.Middleware{mcpkit.ForTools(mcpkit.Named("listOrdrs"), middleware.Timeout(time.Minute, nil))}})
				r := visibility.DisableNames("delteOrder")
				rules.Add(r)
				rules.Remove(r)
				ts.Session.ListTools(t.Context(), nil)
				srv.Remove(name)
			}
		})
	}
	wg.Wait()
	// The provider is asked in the background: wait for its answer, with
	// a generous bound as a safety net only.
	for deadline := time.Now().Add(10 * time.Second); len(logs.all()) < 3 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	var got []string
	for _, r := range logs.all() {
		got = append(got, strings.Split(r, " in ")[0])
	}
	slices.Sort(got)
	if want := []string{"delteOrder -> deleteOrder", "listOrdrs -> listOrders", "tenantRport -> tenantReport"}; !slices.Equal(got, want) {
		t.Errorf("reported %q, want %q, each once", got, want)
	}
}

// TestAttack35StatelessHarnessProgress: docs/tools.md shows a Go client
// hearing progress "on every transport", and docs/testing.md says
// NewStatelessServer serves "as srv.HTTPHandler(nil) serves it"; but the
// harness sets JSONResponse, so a 2026-07-28 call of the stateless harness
// hears no progress at all, while srv.HTTPHandler(nil) streams it. A user
// testing the progress snippet with ForEachTransport sees the stateless
// subtest fail. The tool reports, then waits until the client heard it (at
// most a generous safety bound).
func TestAttack35StatelessHarnessProgress(t *testing.T) {
	heard := make(chan struct{}, 1)
	opts := &mcpkittest.Options{Client: &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			select {
			case heard <- struct{}{}:
			default:
			}
		},
	}}
	mcpkittest.ForEachTransport(t, func(t *testing.T) *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "indexer"}, nil)
		srv.Add(tool("index", func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
			mcpkit.ReportProgress(ctx, 1, 2, "indexing")
			select {
			case <-heard:
				return textResult("heard"), nil
			case <-time.After(5 * time.Second):
				return textResult("not heard"), nil
			}
		}))
		return srv
	}, func(t *testing.T, ts *mcpkittest.Server) {
		params := &mcp.CallToolParams{Name: "index", Arguments: map[string]any{}}
		params.SetProgressToken("index-1")
		res, err := ts.Session.CallTool(t.Context(), params)
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(t, res); got != "heard" {
			t.Errorf("the client heard no progress of the call (%s)", got)
		}
	}, opts)
}

// TestAttack35SkippedLayerNames: a layer a ForTools selection leaves out
// is listed by Server.Pipeline as skipped, under the name of the function
// that made it; for middleware.Bulkhead, and for a Chain of RequireScopes,
// that is "mcpkit.Chain", which says nothing of what was skipped, while
// the same layers are "middleware.Bulkhead" and "mcpkit.RequireScopes" for
// the tools they apply to.
func TestAttack35SkippedLayerNames(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "x"}, nil)
	srv.Use(mcpkit.ForTools(mcpkit.Named("a"), middleware.Bulkhead(map[string]int{"a": 2}, nil)))
	srv.Use(mcpkit.ForTools(mcpkit.Named("a"), mcpkit.Chain(mcpkit.RequireScopes("s:admin"))))
	if err := srv.Add(okTool("a"), okTool("b")); err != nil {
		t.Fatal(err)
	}
	names := func(tool string) []string {
		layers, _ := srv.Pipeline(tool)
		var out []string
		for _, l := range layers {
			out = append(out, fmt.Sprintf("%s skipped=%v", l.Name, l.Skipped))
		}
		return out
	}
	if got := names("b"); slices.Contains(got, "mcpkit.Chain skipped=true") {
		t.Errorf("Pipeline(b) = %q; for a: %q", got, names("a"))
	}
}
