package visibility_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/visibility"
)

// TestListChanged checks that every change of rules (enable, disable,
// require, added or removed) reaches listening clients as
// notifications/tools/list_changed, and that the list they then read
// reflects it. The stateful HTTP client (2025-11-25) hears of changes on
// its session's stream. The in-memory client (2026-07-28) hears of them on
// a subscriptions/listen stream that it opens while it connects; that test
// runs in a synctest bubble, so that it waits until the server has taken
// the subscription instead of guessing how long that takes, and can tell
// that a change sent no notification.
func TestListChanged(t *testing.T) {
	t.Run("stateful", func(t *testing.T) {
		testListChanged(t, mcpkittest.NewServer, nil)
	})
	t.Run("inmemory", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			testListChanged(t, mcpkittest.NewInMemoryServer, synctest.Wait)
		})
	})
}

// testListChanged runs the test on a client connected by connect. settle,
// when not nil, waits until every goroutine of the test is blocked.
func testListChanged(t *testing.T, connect func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server, settle func()) {
	changed := make(chan struct{}, 64)
	srv := newServer(t, nil, tool("a"), tool("b", "beta"), tool("c", "admin"))
	r := visibility.NewAllowlist(visibility.Enable(mcpkit.Named("a", "c")))
	r.Attach(srv)
	ts := connect(t, srv, &mcpkittest.Options{Client: &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}})
	if settle != nil {
		settle()
	}
	deadline := t.Context()
	if d, ok := deadlineOf(t, settle); ok {
		// Fail with a message, not a panic, well before go test's -timeout
		// (there is no clock to fake over a real network).
		var cancel context.CancelFunc
		deadline, cancel = context.WithDeadline(deadline, d.Add(-time.Until(d)/10))
		defer cancel()
	}
	step := func(what, want string, change func()) {
		t.Helper()
		change()
		select {
		case <-changed:
		case <-deadline.Done():
			t.Fatalf("no notifications/tools/list_changed after %s", what)
		}
		if settle != nil {
			// Debounced changes make one notification: there is no
			// second one.
			settle()
			select {
			case <-changed:
				t.Errorf("two notifications after %s", what)
			default:
			}
		}
		if got := joined(names(t, ts.Session)); got != want {
			t.Errorf("after %s: lists %s, want %s", what, got, want)
		}
	}

	beta := visibility.Enable(mcpkit.Tagged("beta"))
	step("Add(Enable)", "a,b,c", func() { r.Add(beta) })
	noA := visibility.Disable(mcpkit.Named("a"))
	step("Add(Disable)", "b,c", func() { r.Add(noA) })
	step("Remove(Disable)", "a,b,c", func() { r.Remove(noA) })
	admin := visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin"))
	step("Add(Require)", "a,b", func() { r.Add(admin) })
	step("Remove(Require)", "a,b,c", func() { r.Remove(admin) })
	step("Remove(Enable)", "a,c", func() { r.Remove(beta) })

	if settle != nil {
		// A change of rules that changes nothing: no notification.
		r.Add(visibility.Disable(mcpkit.Named("nothing")))
		settle()
		select {
		case <-changed:
			t.Errorf("a notification after a rule that changes nothing")
		default:
		}
	}
	ts.Close()
}

// deadlineOf returns t's deadline, if it has one and does not run in a
// synctest bubble (where settle is set, and time is fake).
func deadlineOf(t *testing.T, settle func()) (time.Time, bool) {
	if settle != nil {
		return time.Time{}, false
	}
	return t.Deadline()
}
