package mcpkit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// A burst of changes reaches a listening client as one
// notifications/tools/list_changed, not one per Add: 200 tools added one
// at a time, then removed one at a time, are two notifications.
func TestListChangedCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var heard atomic.Int64
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "burst"}, nil)
		ts := mcpkittest.NewInMemoryServer(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { heard.Add(1) },
		}, ProtocolVersion: "2025-11-25"})
		defer ts.Close()
		synctest.Wait()
		for i := range 200 {
			if err := srv.Add(benchTool(i)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := heard.Load(); n != 1 {
			t.Errorf("200 Adds in a burst: %d notifications, want 1", n)
		}
		for i := range 200 {
			srv.Remove(benchTool(i).Name)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := heard.Load(); n != 2 {
			t.Errorf("then 200 Removes in a burst: %d notifications in all, want 2", n)
		}
		if res, err := ts.Session.ListTools(t.Context(), nil); err != nil || len(res.Tools) != 0 {
			t.Errorf("after the removes: %v, %v", res, err)
		}
	})
}
