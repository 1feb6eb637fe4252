package transform

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// changeServer serves n tools behind the meta-tools, and returns a
// discovery of them (the one Discovery added is not reachable here) and a
// request to search_tools.
func changeServer(tb testing.TB, n int) (*mcpkit.Server, *discovery, *mcpkit.Request) {
	tb.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "change"}, nil)
	verbs := []string{"list", "get", "create", "update", "delete", "archive", "restore", "export", "import", "approve"}
	objects := []string{"invoices", "customers", "orders", "tickets", "files", "reports", "users", "roles", "events", "pages"}
	ts := make([]*mcpkit.Tool, n)
	for i := range ts {
		v, o := verbs[i%len(verbs)], objects[i/len(verbs)%len(objects)]
		ts[i] = indexTool(fmt.Sprintf("svc%d_%s_%s", i/100, v, o), "", fmt.Sprintf("%s the %s of service %d.", v, o, i/100))
	}
	if err := srv.Add(ts...); err != nil {
		tb.Fatal(err)
	}
	if err := Discovery(srv, nil); err != nil {
		tb.Fatal(err)
	}
	search, _ := srv.Lookup(SearchToolName)
	req := mcpkittest.NewRequest(search, map[string]any{"query": "export invoices"})
	return srv, &discovery{srv: srv, match: func(*mcpkit.Tool) bool { return true }, limit: 10, scan: 1000}, req
}

// BenchmarkIndexAfterChange measures a change and the search after it at
// 100,000 tools behind the meta-tools, with the index brought up to date
// by the names mcpkit.Server.ChangedSince reports ("changes") and, as
// before it, by a walk of every served tool ("walk"); "none" is the search
// alone. ProviderChanged changes no indexed tool; Add adds one (removed
// again outside the timing); Remove removes one (added outside the timing).
func BenchmarkIndexAfterChange(b *testing.B) {
	srv, d, req := changeServer(b, 100_000)
	ctx := context.Background()
	in := SearchIn{Query: "svc7"} // a hundred tools: the search is small beside the change
	serve := func(d *discovery) {
		if out, err := d.search(ctx, req, in); err != nil || len(out.Tools) == 0 {
			b.Fatal(out, err)
		}
	}
	late := indexTool("quantum_teleport_parcels", "", "Teleport parcels.")
	b.Run("none", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			serve(d)
		}
	})
	for _, mode := range []string{"walk", "changes"} {
		d := &discovery{srv: srv, match: d.match, limit: d.limit, scan: d.scan, walk: mode == "walk"}
		serve(d)
		b.Run("ProviderChanged/"+mode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				srv.ProviderChanged("")
				serve(d)
			}
		})
		b.Run("Add/"+mode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := srv.Add(late); err != nil {
					b.Fatal(err)
				}
				serve(d)
				b.StopTimer()
				srv.Remove(late.Name)
				serve(d)
				b.StartTimer()
			}
		})
		b.Run("Remove/"+mode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				if err := srv.Add(late); err != nil {
					b.Fatal(err)
				}
				serve(d)
				b.StartTimer()
				srv.Remove(late.Name)
				serve(d)
			}
		})
	}
}

// TestIndexConcurrentChanges searches from several goroutines while
// others add and remove tools and change rules, and then checks that the
// index the searches kept up to date is the index made from scratch. Run
// with -race, it checks that the change log and the index are safe for
// concurrent use.
func TestIndexConcurrentChanges(t *testing.T) {
	srv, d, req := changeServer(t, 500)
	rules := visibility.New()
	rules.Attach(srv)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := range 100 {
				name := fmt.Sprintf("late%d_%d_export_invoices", w, i)
				if err := srv.Add(indexTool(name, "", "Export the invoices late.")); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					srv.Remove(name)
				}
				r := visibility.DisableNames(fmt.Sprintf("svc%d_export_invoices", i%5))
				rules.Add(r)
				if i%2 == 0 {
					rules.Remove(r)
				}
			}
		})
	}
	for range 3 {
		wg.Go(func() {
			for range 100 {
				if _, err := d.search(ctx, req, SearchIn{Query: "export invoices late"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	fresh := (&discovery{srv: srv, match: d.match}).index(ctx)
	sameIndex(t, d.index(ctx), fresh)
}
