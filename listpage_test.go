package mcpkit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// List middleware sees one page, not the catalog: a middleware that passes
// the request on is handed at most a page and one more tool; one that drops
// tools gets more from the server until its page is full; one that asks for
// every tool (Limit 0) gets them all. Through a real client that reads
// every page, each lists the right tools, once, in order.
func TestListMiddlewarePaged(t *testing.T) {
	const n, pageSize = 1000, 50
	var odd []string
	var all []string
	for i := range n {
		name := benchTool(i).Name
		all = append(all, name)
		if i%2 == 1 {
			odd = append(odd, name)
		}
	}
	for _, tc := range []struct {
		name    string
		mw      func(seen *atomic.Int64) mcpkit.ListMiddleware
		want    []string
		maxSeen int64 // the most tools one ServeList of next may return
	}{
		{"passes the request on", func(seen *atomic.Int64) mcpkit.ListMiddleware {
			return func(next mcpkit.Lister) mcpkit.Lister {
				return mcpkit.ListerFunc(func(ctx context.Context, req *mcpkit.ListRequest) ([]*mcpkit.Tool, error) {
					out, err := next.ServeList(ctx, req)
					seen.Store(max(seen.Load(), int64(len(out))))
					return out, err
				})
			}
		}, all, pageSize + 1},
		{"drops every other tool", func(seen *atomic.Int64) mcpkit.ListMiddleware {
			return func(next mcpkit.Lister) mcpkit.Lister {
				return mcpkit.ListerFunc(func(ctx context.Context, req *mcpkit.ListRequest) ([]*mcpkit.Tool, error) {
					in, err := next.ServeList(ctx, req)
					seen.Store(max(seen.Load(), int64(len(in))))
					var out []*mcpkit.Tool
					for _, t := range in {
						var i int
						fmt.Sscanf(t.Name, "tool_%d", &i)
						if i%2 == 1 {
							out = append(out, t)
						}
					}
					return out, err
				})
			}
		}, odd, pageSize + 1},
		{"needs every tool", func(seen *atomic.Int64) mcpkit.ListMiddleware {
			return func(next mcpkit.Lister) mcpkit.Lister {
				return mcpkit.ListerFunc(func(ctx context.Context, req *mcpkit.ListRequest) ([]*mcpkit.Tool, error) {
					whole := *req
					whole.Limit = 0
					out, err := next.ServeList(ctx, &whole)
					seen.Store(max(seen.Load(), int64(len(out))))
					return out, err
				})
			}
		}, all, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "paged"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: pageSize}})
			var seen atomic.Int64
			srv.UseList(tc.mw(&seen))
			batch := make([]*mcpkit.Tool, n)
			for i := range batch {
				batch[i] = benchTool(i)
			}
			if err := srv.Add(batch...); err != nil {
				t.Fatal(err)
			}
			ts := mcpkittest.NewInMemoryServer(t, srv, nil)
			var got []string
			pages := 0
			cursor := ""
			for {
				res, err := ts.Session.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, tl := range res.Tools {
					got = append(got, tl.Name)
				}
				if res.NextCursor == "" {
					break
				}
				if len(res.Tools) != pageSize {
					t.Errorf("page %d has %d tools, want %d before the last", pages, len(res.Tools), pageSize)
				}
				cursor = res.NextCursor
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("listed %d tools (%s ... %s), want %d", len(got), strings.Join(got[:min(3, len(got))], " "), got[len(got)-1], len(tc.want))
			}
			if s := seen.Load(); s > tc.maxSeen {
				t.Errorf("the middleware saw %d tools in one call, want at most %d", s, tc.maxSeen)
			}
		})
	}
}
