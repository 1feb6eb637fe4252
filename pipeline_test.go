package mcpkit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
)

// audit is a middleware as a user would write it, with no name given.
func audit(next mcpkit.Handler) mcpkit.Handler {
	return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return next.ServeTool(ctx, req)
	})
}

// describe lists layers as from:name, with the directory of the tests'
// own middleware (the checkout's, whatever its name) shown as "here".
func describe(layers []mcpkit.Layer) string {
	var b []string
	for _, l := range layers {
		name := l.Name
		if _, fn, ok := strings.Cut(name, "."); ok && !strings.HasPrefix(name, "middleware.") && !strings.HasPrefix(name, "mcpkit.") {
			name = "here." + fn
		}
		s := l.From + ":" + name
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
		"report": "server:here.audit server:middleware.ConcurrencyLimit server:middleware.Timeout tool:here.audit server:mcpkit.Validation",
		"other":  "server:here.audit server:middleware.ConcurrencyLimit server:middleware.Timeout(skipped) server:mcpkit.Validation",
		"raw":    "server:here.audit server:middleware.ConcurrencyLimit server:middleware.Timeout(skipped)",
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
	if got := describe(layers); !strings.HasSuffix(got, "server:here.audit server:mcpkit.Validation") {
		t.Errorf("after Use: %s", got)
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
	// report: server:here.audit server:middleware.ConcurrencyLimit server:mcpkit.Validation
	// search: server:here.audit server:middleware.ConcurrencyLimit(skipped) server:mcpkit.Validation
}
