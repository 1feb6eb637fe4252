package visibility_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestPagination lists 2,500 tools, about half of them hidden per request
// (every other one, and a run of 300 that spans pages), page by page: every
// visible tool is listed exactly once, in order, and every page is full
// but the last. A cursor that the server did not make is -32602.
func TestPagination(t *testing.T) {
	const n = 2500
	hidden := func(i int) bool { return i%2 == 1 || 1000 <= i && i < 1300 }
	newSrv := func(t *testing.T, pageSize int) *mcpkit.Server {
		tools := make([]*mcpkit.Tool, n)
		for i := range tools {
			tools[i] = tool(fmt.Sprintf("t%04d", i))
			if hidden(i) {
				tools[i].Tags = []string{"admin"}
			}
		}
		srv := newServer(t, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: pageSize}}, tools...)
		visibility.New(visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))).Attach(srv)
		return srv
	}
	var userSees, adminSees []string
	for i := range n {
		adminSees = append(adminSees, fmt.Sprintf("t%04d", i))
		if !hidden(i) {
			userSees = append(userSees, fmt.Sprintf("t%04d", i))
		}
	}

	for _, pageSize := range []int{100, 7, mcp.DefaultPageSize} {
		t.Run(fmt.Sprint("page size ", pageSize), func(t *testing.T) {
			// One server for every client, connected here, so that the
			// harnesses close together when this test ends (building a
			// server of 2,500 tools is what takes time here).
			srv := newSrv(t, pageSize)
			for _, c := range []struct {
				name    string
				connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
				token   string
				want    []string
			}{
				{"inmemory stranger", mcpkittest.NewInMemoryServer, "", userSees},
				{"stateful user", mcpkittest.NewServer, "user-token", userSees},
				{"stateless user", mcpkittest.NewStatelessServer, "user-token", userSees},
				{"stateless admin", mcpkittest.NewStatelessServer, "admin-token", adminSees},
			} {
				ts := c.connect(t, srv, as(c.token, nil))
				t.Run(c.name, func(t *testing.T) {
					checkPages(t, ts.Session, pageSize, c.want)
				})
			}
			if pageSize != 100 {
				return
			}
			ts := mcpkittest.NewStatelessServer(t, srv, as("user-token", nil))
			for _, cursor := range []string{"garbage!", "bm90IG91cnM", "\x00"} {
				_, err := ts.Session.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("cursor %q: %v, want JSON-RPC error -32602", cursor, err)
				}
			}
		})
	}
}

// checkPages lists every page of cs's tools and checks that they are want,
// in order, each listed once, in pages of pageSize tools but the last,
// which is not empty.
func checkPages(t *testing.T, cs *mcp.ClientSession, pageSize int, want []string) {
	t.Helper()
	var got []string
	var sizes []int
	cursor := ""
	for {
		res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("page %d: %v", len(sizes), err)
		}
		sizes = append(sizes, len(res.Tools))
		for _, tl := range res.Tools {
			got = append(got, tl.Name)
		}
		if res.NextCursor == "" {
			break
		}
		if len(sizes) > len(want)+1 {
			t.Fatalf("more pages than tools")
		}
		cursor = res.NextCursor
	}
	if joined(got) != joined(want) {
		t.Errorf("listed %d tools, want %d (each once, in order)", len(got), len(want))
	}
	for i, s := range sizes {
		last := i == len(sizes)-1
		if !last && s != pageSize || last && (s == 0 || s > pageSize) {
			t.Errorf("page %d of %d has %d tools, page size %d", i, len(sizes), s, pageSize)
		}
	}
	if wantPages := (len(want) + pageSize - 1) / pageSize; len(sizes) != wantPages {
		t.Errorf("%d pages, want %d", len(sizes), wantPages)
	}
}
