package mcpkit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// audit is a middleware as a user would write it, with no name given.
func audit(next mcpkit.Handler) mcpkit.Handler {
	return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return next.ServeTool(ctx, req)
	})
}

// describe lists layers as from:name.
func describe(layers []mcpkit.Layer) string {
	var b []string
	for _, l := range layers {
		s := l.From + ":" + l.Name
		if l.Skipped {
			s += "(skipped)"
		}
		b = append(b, s)
	}
	return strings.Join(b, " ")
}

func TestPipeline(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, nil)
	srv.Use(audit, mcpkit.Chain(middleware.ConcurrencyLimit(1, nil), mcpkit.ForTools(mcpkit.Named("report"), middleware.Timeout(time.Minute, nil))))
	report, other := tool("report", reply("x")), tool("other", reply("x"))
	report.Middleware = []mcpkit.Middleware{mcpkit.Middleware(audit)}
	noCheck := tool("raw", reply("x"))
	noCheck.Validation = mcpkit.NoValidation
	if err := srv.Add(report, other, noCheck); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"report": "server:mcpkit_test.audit server:middleware.ConcurrencyLimit server:middleware.Timeout tool:mcpkit_test.audit server:mcpkit.Validation",
		"other":  "server:mcpkit_test.audit server:middleware.ConcurrencyLimit server:middleware.Timeout(skipped) server:mcpkit.Validation",
		"raw":    "server:mcpkit_test.audit server:middleware.ConcurrencyLimit server:middleware.Timeout(skipped)",
	} {
		layers, ok := srv.Pipeline(name)
		if got := describe(layers); !ok || got != want {
			t.Errorf("%s: %s\nwant %s", name, got, want)
		}
	}
	if _, ok := srv.Pipeline("missing"); ok {
		t.Error("Pipeline of an unknown tool")
	}
	// Use after Add rebuilds the pipelines.
	srv.Use(audit)
	layers, _ := srv.Pipeline("other")
	if got := describe(layers); !strings.HasSuffix(got, "server:mcpkit_test.audit server:mcpkit.Validation") {
		t.Errorf("after Use: %s", got)
	}
}

// TestPipelineRequirements checks that a requirement is listed by the
// function the user wrote, with the scopes it needs: RequireScopes as
// mcpkit.RequireScopes (also where a selection skips it), RequireToken as
// itself.
func TestPipelineRequirements(t *testing.T) {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, nil)
	srv.Use(mcpkit.ForTools(mcpkit.Named("delete"), mcpkit.RequireScopes("orders:write", "orders:admin")))
	srv.Use(mcpkit.ForTools(mcpkit.Named("audit"), mcpkit.RequireToken(func(context.Context, *auth.TokenInfo) bool { return true }, "audit")))
	if err := srv.Add(tool("delete", reply("x")), tool("audit", reply("x"))); err != nil {
		t.Fatal(err)
	}
	settings := func(name string) string {
		layers, _ := srv.Pipeline(name)
		var out []string
		for _, l := range layers {
			s := l.Name
			if l.Skipped {
				s += "(skipped)"
			}
			for _, st := range l.Settings {
				s += " " + st.Name + "=" + st.Value
			}
			out = append(out, s)
		}
		return strings.Join(out, "; ")
	}
	for name, want := range map[string]string{
		"delete": "mcpkit.RequireScopes scopes=orders:write orders:admin; mcpkit.RequireToken(skipped); mcpkit.Validation",
		"audit":  "mcpkit.RequireScopes(skipped); mcpkit.RequireToken scopes=audit; mcpkit.Validation",
	} {
		if got := settings(name); got != want {
			t.Errorf("%s: %s\nwant %s", name, got, want)
		}
	}
}

// TestPipelineSkippedCombinators checks that the layers of a Chain, a
// ForTools or a Bulkhead that a selection leaves out are listed under
// their own names, in order, as they are where they apply, and that a
// skipped middleware is never built.
func TestPipelineSkippedCombinators(t *testing.T) {
	builds := 0
	counted := func(next mcpkit.Handler) mcpkit.Handler { builds++; return next }
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, nil)
	srv.Use(mcpkit.ForTools(mcpkit.Named("a"),
		audit,
		mcpkit.Chain(middleware.Timeout(time.Minute, nil), mcpkit.ForTools(mcpkit.Named("a"), mcpkit.NamedMiddleware("acme.counted", counted))),
		middleware.Bulkhead(map[string]int{"a": 2}, nil),
		mcpkit.Chain(mcpkit.RequireScopes("s:admin")),
	))
	if err := srv.Add(tool("a", reply("x")), tool("b", reply("x"))); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"a": "server:mcpkit_test.audit server:middleware.Timeout server:acme.counted server:middleware.Bulkhead server:mcpkit.RequireScopes server:mcpkit.Validation",
		"b": "server:mcpkit_test.audit(skipped) server:middleware.Timeout(skipped) server:acme.counted(skipped) " +
			"server:middleware.Bulkhead(skipped) server:mcpkit.RequireScopes(skipped) server:mcpkit.Validation",
	} {
		layers, _ := srv.Pipeline(name)
		if got := describe(layers); got != want {
			t.Errorf("%s: %s\nwant %s", name, got, want)
		}
	}
	if builds != 1 {
		t.Errorf("the middleware was built %d times, want once, for a", builds)
	}
}

// TestPipelineNamesCommand builds and runs a command (testdata/mainlayers)
// whose own middleware, one made by a constructor inlined into main, is
// listed under "main", as Layer.Name says, not under its directory's name;
// and runs its test, built with -trimpath, where it is "main" too.
func TestPipelineNamesCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a command with the go command; skipped with -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	cmd := exec.Command(goCmd, "run", "./testdata/mainlayers")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./testdata/mainlayers: %v\n%s", err, out)
	}
	if got, want := strings.Fields(string(out)), []string{"main.audit", "main.tenant", "mcpkit.Validation"}; !slices.Equal(got, want) {
		t.Errorf("layers of a command: %q, want %q", got, want)
	}
	cmd = exec.Command(goCmd, "test", "-count=1", "-trimpath", "./testdata/mainlayers")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go test -trimpath ./testdata/mainlayers: %v\n%s", err, out)
	}
}

// ExampleServer_Pipeline shows the layers that serve each tool, as a test
// or a debug endpoint would.
func ExampleServer_Pipeline() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, nil)
	srv.Use(audit, mcpkit.ForTools(mcpkit.Named("report"), middleware.ConcurrencyLimit(1, nil)))
	srv.Add(tool("report", reply("x")), tool("search", reply("x")))
	for _, t := range srv.Tools() {
		layers, _ := srv.Pipeline(t.Name)
		fmt.Println(t.Name+":", describe(layers))
	}
	// Output:
	// report: server:mcpkit_test.audit server:middleware.ConcurrencyLimit server:mcpkit.Validation
	// search: server:mcpkit_test.audit server:middleware.ConcurrencyLimit(skipped) server:mcpkit.Validation
}

// TestNamedMiddleware checks that a middleware named by its author is
// listed by that name, in a chain and when a ForTools selection skips it,
// and that the name costs no layer of its own.
func TestNamedMiddleware(t *testing.T) {
	var calls, builds int
	tenant := mcpkit.NamedMiddleware("acme.requireTenant", func(next mcpkit.Handler) mcpkit.Handler {
		builds++
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			calls++
			return next.ServeTool(ctx, req)
		})
	})
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, nil)
	srv.Use(mcpkit.ForTools(mcpkit.Named("report"), tenant), mcpkit.Chain(tenant))
	if err := srv.Add(tool("report", reply("x")), tool("other", reply("x"))); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"report": "server:acme.requireTenant server:acme.requireTenant server:mcpkit.Validation",
		"other":  "server:acme.requireTenant(skipped) server:acme.requireTenant server:mcpkit.Validation",
	} {
		layers, _ := srv.Pipeline(name)
		if got := describe(layers); got != want {
			t.Errorf("%s: %s\nwant %s", name, got, want)
		}
	}
	if builds != 3 {
		t.Errorf("the named middleware was built %d times, want 3 (twice for report, once for other)", builds)
	}
	if _, err := mcpkittest.ServeTool(t.Context(), srv, "report", nil); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("the named middleware ran %d times for report, want 2", calls)
	}
	// Outside a Server, it is m.
	h := tenant(mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil }))
	h.ServeTool(t.Context(), mcpkittest.NewRequest(tool("x", reply("x")), nil))
	if calls != 3 {
		t.Errorf("outside a server: %d calls, want 3", calls)
	}
	for _, bad := range []func(){
		func() { mcpkit.NamedMiddleware("", tenant) },
		func() { mcpkit.NamedMiddleware("x", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			bad()
		}()
	}
}

// ExampleNamedMiddleware names a middleware made by a generic helper, so
// that Pipeline lists it by what it does.
func ExampleNamedMiddleware() {
	requireHeader := func(name string) mcpkit.Middleware {
		return mcpkit.NamedMiddleware("acme.require"+name, func(next mcpkit.Handler) mcpkit.Handler {
			return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				if req.Header() != nil && req.Header().Get(name) == "" {
					return nil, mcpkit.ToolErrorf("missing header %s", name)
				}
				return next.ServeTool(ctx, req)
			})
		})
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, nil)
	srv.Use(requireHeader("Tenant"))
	srv.Add(tool("report", reply("x")))
	layers, _ := srv.Pipeline("report")
	fmt.Println(describe(layers))
	// Output:
	// server:acme.requireTenant server:mcpkit.Validation
}

// The README's composition, "30 s for every tool, 5 min for report", works
// as written: report runs for two minutes, the others stop at 30 s.
func TestReadmeTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, &mcpkit.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: slog.New(slog.DiscardHandler), Timeout: -1}))
		srv.Use(mcpkit.ForTools(mcpkit.Not(mcpkit.Named("report")), middleware.Timeout(30*time.Second, nil)))
		srv.Use(mcpkit.ForTools(mcpkit.Named("report"), middleware.Timeout(5*time.Minute, nil)))
		sleeper := func(d time.Duration) mcpkit.HandlerFunc {
			return func(ctx context.Context, _ *mcpkit.Request) (*mcp.CallToolResult, error) {
				select {
				case <-time.After(d):
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
		if err := srv.Add(tool("report", sleeper(2*time.Minute)), tool("search", sleeper(time.Minute))); err != nil {
			t.Fatal(err)
		}
		if res, err := mcpkittest.ServeTool(t.Context(), srv, "report", nil); err != nil || res.IsError {
			t.Errorf("report after 2 min: %+v, %v", res, err)
		}
		start := time.Now()
		_, err := mcpkittest.ServeTool(t.Context(), srv, "search", nil)
		var te *middleware.TimeoutError
		if !errors.As(err, &te) || te.Limit != 30*time.Second || time.Since(start) != 30*time.Second {
			t.Errorf("search: %v after %v; want a timeout after 30s", err, time.Since(start))
		}
		if logs.Len() != 0 {
			t.Errorf("warnings for a correct composition: %s", logs.String())
		}
		layers, _ := srv.Pipeline("report")
		var got []string
		for _, l := range layers {
			for _, s := range l.Settings {
				got = append(got, l.Name+" "+s.Name+"="+s.Value)
			}
		}
		if want := []string{"middleware.Timeout timeout=5m0s"}; !slices.Equal(got, want) {
			t.Errorf("report's settings: %q, want %q", got, want)
		}
	})
}

// A layer that can never take effect is reported when the tool is added: a
// 5-minute Timeout inside Recommended's 30 s, an ArgumentSizeLimit inside a
// smaller one.
func TestMootLayersReported(t *testing.T) {
	var logs bytes.Buffer
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, &mcpkit.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: slog.New(slog.DiscardHandler)}), middleware.ArgumentSizeLimit(1<<10))
	srv.Use(mcpkit.ForTools(mcpkit.Named("report"), middleware.Timeout(5*time.Minute, nil), middleware.ArgumentSizeLimit(1<<20)))
	srv.Use(mcpkit.ForTools(mcpkit.Named("quick"), middleware.Timeout(time.Second, nil), middleware.ArgumentSizeLimit(100)))
	if err := srv.Add(tool("report", reply("x")), tool("quick", reply("x")), tool("other", reply("x"))); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 warnings (report's timeout and size limit), got:\n%s", logs.String())
	}
	for _, want := range []string{
		`level=WARN msg="mcpkit: a layer can never take effect: a layer outside it has a lower timeout" tool=report layer=middleware.Timeout from=server value=5m0s outer=middleware.Timeout outerFrom=server outerValue=30s`,
		`level=WARN msg="mcpkit: a layer can never take effect: a layer outside it has a lower argumentBytes" tool=report layer=middleware.ArgumentSizeLimit from=server value=1048576 outer=middleware.ArgumentSizeLimit outerFrom=server outerValue=1024`,
	} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasSuffix(l, want) }) {
			t.Errorf("no warning %s\nin:\n%s", want, logs.String())
		}
	}
}

// quota is a middleware of one's own that shows its setting in Pipeline.
type quota struct {
	perDay int
	next   mcpkit.Handler
}

func (q *quota) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	return q.next.ServeTool(ctx, req)
}

func (q *quota) LayerSettings() []mcpkit.Setting {
	return []mcpkit.Setting{{Name: "callsPerDay", Value: fmt.Sprint(q.perDay)}}
}

// A middleware shows its settings in Pipeline by returning a Handler that
// implements LayerSettings.
func ExampleLayerSettings() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "pipe"}, nil)
	srv.Use(
		mcpkit.NamedMiddleware("acme.quota", func(next mcpkit.Handler) mcpkit.Handler { return &quota{perDay: 1000, next: next} }),
		middleware.Timeout(time.Minute, nil),
	)
	srv.Add(tool("report", reply("x")))
	layers, _ := srv.Pipeline("report")
	for _, l := range layers {
		fmt.Println(l.Name, l.Settings)
	}
	// Output:
	// acme.quota [{callsPerDay 1000 0}]
	// middleware.Timeout [{timeout 1m0s 60000000000}]
	// mcpkit.Validation []
}
