package mcpkit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
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

// records is a slog.Handler that keeps the warnings it is given, as
// "name -> didYouMean in", for the report of names that select no tool.
type records struct {
	mu   sync.Mutex
	warn []string
}

func (r *records) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (r *records) WithAttrs([]slog.Attr) slog.Handler           { return r }
func (r *records) WithGroup(string) slog.Handler                { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	attrs := map[string]string{}
	rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warn = append(r.warn, fmt.Sprintf("%s -> %s in %s | %s", attrs["name"], attrs["didYouMean"], attrs["in"], rec.Message))
	return nil
}

func (r *records) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.warn)
}

// namedServer returns a server, logging to the records it returns, with the
// tools deleteOrder, listOrders and report.
func namedServer() (*mcpkit.Server, *records) {
	logs := &records{}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "orders"}, &mcpkit.ServerOptions{Logger: slog.New(logs)})
	if err := srv.Add(tool("deleteOrder", reply("deleted")), tool("listOrders", reply("[]")), tool("report", reply("r"))); err != nil {
		panic(err)
	}
	return srv, logs
}

// TestMisspeltNameReported checks that a tool name written in a rule that
// selects no tool is reported once the server serves, wherever it was
// written, as a warning naming the tool it most likely meant and where it
// was written; and that a name that selects a tool is not reported.
func TestMisspeltNameReported(t *testing.T) {
	always := func(context.Context, mcpkit.Caller) bool { return true }
	keep := func(tl *mcpkit.Tool) (*mcpkit.Tool, error) { return tl, nil }
	for _, tt := range []struct {
		name    string
		install func(srv *mcpkit.Server, name string)
		wrong   string // the misspelt name
		right   string // the name it means
		in      string // where the report says it was written
	}{
		{"ForTools(Named)", func(srv *mcpkit.Server, name string) {
			srv.Use(mcpkit.ForTools(mcpkit.Named(name), mcpkit.RequireScopes("orders:admin")))
		}, "deleteOrders", "deleteOrder", "mcpkit.ForTools(mcpkit.RequireScopes)"},
		{"ForTools(Not(Named))", func(srv *mcpkit.Server, name string) {
			srv.Use(mcpkit.ForTools(mcpkit.Not(mcpkit.Named(name)), middleware.Timeout(30*time.Second, nil)))
		}, "reprot", "report", "mcpkit.ForTools(middleware.Timeout)"},
		{"Bulkhead pool", func(srv *mcpkit.Server, name string) {
			srv.Use(middleware.Bulkhead(map[string]int{name: 2}, nil))
		}, "reports", "report", "mcpkit.ForTools(middleware.Bulkhead)"},
		{"a tool's own ForTools", func(srv *mcpkit.Server, name string) {
			own := tool("audit", reply("a"))
			own.Middleware = []mcpkit.Middleware{mcpkit.ForTools(mcpkit.Named(name), middleware.Timeout(30*time.Second, nil))}
			if err := srv.Add(own); err != nil {
				t.Fatal(err)
			}
		}, "Audit", "audit", "mcpkit.ForTools(middleware.Timeout)"},
		{"visibility.RequireNames", func(srv *mcpkit.Server, name string) {
			visibility.New(visibility.RequireNames(visibility.Scopes("orders:read"), name)).Attach(srv)
		}, "listOrder", "listOrders", "*visibility.Rules"},
		{"visibility.DisableNames", func(srv *mcpkit.Server, name string) {
			visibility.New(visibility.DisableNames(name)).Attach(srv)
		}, "reprt", "report", "*visibility.Rules"},
		{"visibility.Require(Named)", func(srv *mcpkit.Server, name string) {
			visibility.New(visibility.Require(mcpkit.Named(name), always)).Attach(srv)
		}, "deleteorder", "deleteOrder", "*visibility.Rules"},
		{"visibility.DisableVersion", func(srv *mcpkit.Server, name string) {
			visibility.New(visibility.DisableVersion(name, "")).Attach(srv)
		}, "lstOrders", "listOrders", "*visibility.Rules"},
		{"visibility.Disable(Key)", func(srv *mcpkit.Server, name string) {
			visibility.New(visibility.Disable(visibility.Key(name, ""))).Attach(srv)
		}, "report_", "report", "*visibility.Rules"},
		{"transform.Select", func(srv *mcpkit.Server, name string) {
			if err := srv.Transform(transform.Select(mcpkit.Named(name), keep)); err != nil {
				t.Fatal(err)
			}
		}, "delete_order", "deleteOrder", "mcpkit.CatalogTransform(transform.Select)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, logs := namedServer()
			tt.install(srv, tt.wrong)
			if got := logs.all(); len(got) != 0 {
				t.Fatalf("reported before the server serves: %q", got)
			}
			ts := mcpkittest.NewInMemoryServer(t, srv, nil)
			if _, err := ts.Session.ListTools(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("%s -> %s in %s | mcpkit: tool name %q selects no tool: did you mean %q?", tt.wrong, tt.right, tt.in, tt.wrong, tt.right)
			if got := logs.all(); !slices.Equal(got, []string{want}) {
				t.Errorf("records %q\nwant      [%q]", got, want)
			}
			// Once: later requests report nothing more.
			ts.CallTool(t.Context(), "report", nil)
			if got := logs.all(); len(got) != 1 {
				t.Errorf("reported again: %q", got)
			}

			srv, logs = namedServer()
			tt.install(srv, tt.right)
			ts = mcpkittest.NewInMemoryServer(t, srv, nil)
			if _, err := ts.Session.ListTools(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			if got := logs.all(); len(got) != 0 {
				t.Errorf("a name that selects a tool is reported: %q", got)
			}
		})
	}
}

// TestMisspeltNameAfterChange checks that what changes once the server
// serves is judged again: a rule added with a misspelt name, a tool a rule
// names that goes away.
func TestMisspeltNameAfterChange(t *testing.T) {
	srv, logs := namedServer()
	srv.Use(mcpkit.ForTools(mcpkit.Named("report"), middleware.Timeout(30*time.Second, nil)))
	rules := visibility.New()
	rules.Attach(srv)
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	if _, err := ts.Session.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if got := logs.all(); len(got) != 0 {
		t.Fatalf("reported: %q", got)
	}
	rules.Add(visibility.DisableNames("listOrdres"))
	if err := srv.Add(&mcpkit.Tool{Tool: mcp.Tool{Name: "reports", InputSchema: objectSchema}, Handler: reply("x"),
		Middleware: []mcpkit.Middleware{mcpkit.ForTools(mcpkit.Named("deleteOrdr"), middleware.Timeout(30*time.Second, nil))}}); err != nil {
		t.Fatal(err)
	}
	srv.Remove("report")
	want := []string{
		"listOrdres -> listOrders in *visibility.Rules",
		"deleteOrdr -> deleteOrder in mcpkit.ForTools(middleware.Timeout)",
		"report -> reports in mcpkit.ForTools(middleware.Timeout)",
	}
	var got []string
	for _, r := range logs.all() {
		got = append(got, strings.Split(r, " | ")[0])
	}
	if !slices.Equal(got, want) {
		t.Errorf("records %q\nwant      %q", got, want)
	}
}

// TestMisspeltNameAcrossSources checks that names served by a mounted
// server or a provider select their tools (the providers are asked in
// the background), that a misspelt one is reported with the name it most
// likely meant among theirs, and that a mounted server reports the names
// of its own rules when the server it is mounted into first serves.
func TestMisspeltNameAcrossSources(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, logs := namedServer()
		childLogs := &records{}
		child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, &mcpkit.ServerOptions{Logger: slog.New(childLogs)})
		child.Use(mcpkit.ForTools(mcpkit.Named("serch"), middleware.Timeout(30*time.Second, nil)))
		if err := child.Add(tool("search", reply("s"))); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Mount("docs", child); err != nil {
			t.Fatal(err)
		}
		srv.AddProvider(&catalogProvider{tools: []*mcpkit.Tool{okTool("tenantReport")}})
		srv.Use(mcpkit.ForTools(mcpkit.Named("docs_search", "search", "tenantReport"), middleware.Timeout(30*time.Second, nil)))
		srv.Use(mcpkit.ForTools(mcpkit.Named("docs_serach", "tenantRport"), middleware.Timeout(time.Minute, nil)))
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)
		if _, err := ts.Session.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		var got []string
		for _, r := range logs.all() {
			got = append(got, strings.Split(r, " | ")[0])
		}
		slices.Sort(got)
		want := []string{
			"docs_serach -> docs_search in mcpkit.ForTools(middleware.Timeout)",
			"tenantRport -> tenantReport in mcpkit.ForTools(middleware.Timeout)",
		}
		if !slices.Equal(got, want) {
			t.Errorf("records %q\nwant      %q", got, want)
		}
		if got, want := childLogs.all(), []string{`serch -> search in mcpkit.ForTools(middleware.Timeout) | mcpkit: tool name "serch" selects no tool: did you mean "search"?`}; !slices.Equal(got, want) {
			t.Errorf("the mounted server's records %q\nwant %q", got, want)
		}
	})
}

// ExampleSelectorNames shows the names a match function selects by, which
// a server checks once it serves.
func ExampleSelectorNames() {
	fmt.Println(mcpkit.SelectorNames(mcpkit.Not(mcpkit.Named("report", "audit"))))
	fmt.Println(mcpkit.SelectorNames(mcpkit.Tagged("admin")))
	fmt.Println(mcpkit.SelectorNames(mcpkit.NamedVersion("calc", "2")))
	// Output:
	// [audit report]
	// []
	// [calc@2]
}

// ExampleForTools_misspelt shows the warning for a name in a selection that
// selects no tool, logged when the server first serves.
func ExampleForTools_misspelt() {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime}))
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "orders"}, &mcpkit.ServerOptions{Logger: logger})
	srv.Use(mcpkit.ForTools(mcpkit.Named("deleteOrders"), mcpkit.RequireScopes("orders:admin")))
	srv.Add(tool("deleteOrder", reply("deleted")))

	cs, _ := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
	defer cs.Close()
	cs.ListTools(context.Background(), nil)
	// Output:
	// level=WARN msg="mcpkit: tool name \"deleteOrders\" selects no tool: did you mean \"deleteOrder\"?" name=deleteOrders in=mcpkit.ForTools(mcpkit.RequireScopes) didYouMean=deleteOrder
}

// TestMisspeltListMiddlewareName checks that a list middleware added once
// the server serves has its names judged too, and that one that says no
// names reports nothing.
func TestMisspeltListMiddlewareName(t *testing.T) {
	srv, logs := namedServer()
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	if _, err := ts.Session.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	srv.UseList(func(next mcpkit.Lister) mcpkit.Lister { return next })
	srv.UseList(middleware.Deref(&middleware.DerefOptions{Skip: mcpkit.Named("lstOrders")}))
	want := []string{"lstOrders -> listOrders in mcpkit.ListMiddleware(middleware.Deref)"}
	var got []string
	for _, r := range logs.all() {
		got = append(got, strings.Split(r, " | ")[0])
	}
	if !slices.Equal(got, want) {
		t.Errorf("records %q\nwant      %q", got, want)
	}
}

// TestMisspeltVersion checks that a rule on one version of a tool whose
// name is right but whose version the tool does not have is reported,
// with the versions it has, or the one that ranks alike; that versions
// served under another name (derived, mounted) are known; and that a
// version that goes away is reported then.
func TestMisspeltVersion(t *testing.T) {
	srv, logs := attack35Versions(t)
	renamed, err := transform.Tool(func() *mcpkit.Tool { o := tool("orig", reply("o")); o.Version = "4"; return o }(), transform.Spec{Name: "renamed"})
	if err != nil {
		t.Fatal(err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	search := tool("search", reply("s"))
	search.Version = "7"
	if err := errors.Join(srv.Add(renamed), child.Add(search)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Mount("docs", child); err != nil {
		t.Fatal(err)
	}
	visibility.New(
		visibility.DisableVersion("calc", "1.0"),
		visibility.DisableVersion("calc", "3"),
		visibility.Disable(visibility.Key("calc", "")),
		visibility.DisableVersion("calc", "2"),
		visibility.DisableVersion("orig", "4"),
	).Attach(srv)
	for _, name := range []string{"docs_search", "search"} {
		srv.Use(mcpkit.ForTools(visibility.Key(name, "7"), middleware.Timeout(time.Minute, nil)))
	}
	ts := attack35Serve(t, srv)
	want := []string{
		`calc ->  in *visibility.Rules | mcpkit: tool "calc" is not served unversioned: it has "1", "2"`,
		`calc -> 1 in *visibility.Rules | mcpkit: tool "calc" has no version "1.0": did you mean "1"?`,
		`calc ->  in *visibility.Rules | mcpkit: tool "calc" has no version "3": it has "1", "2"`,
	}
	if got := logs.all(); !slices.Equal(got, want) {
		t.Errorf("records %q\nwant      %q", got, want)
	}
	// Version 2 goes away: the rule on it selects nothing now.
	srv.RemoveVersion("calc", "2")
	ts.Session.ListTools(t.Context(), nil)
	want = append(want, `calc ->  in *visibility.Rules | mcpkit: tool "calc" has no version "2": it has "1"`)
	if got := logs.all(); !slices.Equal(got, want) {
		t.Errorf("after RemoveVersion: records %q\nwant      %q", got, want)
	}
}
