package tasks

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/mcpkit/mcpkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// slowAnswers is a Store whose Update, once armed, holds back its answer
// after it has stored a task working again, as a store across the network
// (Redis) does while the answer travels back: the task is working in the
// store, and the replica that wrote it does not know yet.
type slowAnswers struct {
	Store
	armed   atomic.Bool
	written chan struct{} // receives once the armed Update has stored its task
	release chan struct{} // closed to let it answer
}

func (s *slowAnswers) Update(ctx context.Context, id string, fn func(*Task) error) (*Task, error) {
	t, err := s.Store.Update(ctx, id, fn)
	if err == nil && t.Status == Working && s.armed.CompareAndSwap(true, false) {
		s.written <- struct{}{}
		<-s.release
	}
	return t, err
}

// TestCancelWhileResuming: a tasks/cancel acknowledged after the
// tasks/update that completes a task's answers has stored it working, but
// before that tasks/update has started the next round, stops that round
// on this replica at once: it never starts. (It used to start with a live
// context, and run until the next renewal of its lease found the task
// cancelled, a third of the lease later.)
func TestCancelWhileResuming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &slowAnswers{Store: NewMemoryStore(nil), written: make(chan struct{}), release: make(chan struct{})}
		m := NewManager(&Options{Store: store})
		var resumed atomic.Int32
		tool := Tool(&mcpkit.Tool{Tool: mcp.Tool{Name: "ask"}, Handler: mcpkit.HandlerFunc(
			func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				if _, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "ok"); !ok {
					return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Message: "ok?"}}}, nil
				}
				resumed.Add(1)
				<-ctx.Done()
				return nil, ctx.Err()
			})}, m, nil)
		res, err := tool.Handler.ServeTool(t.Context(), declaredRequest(tool))
		if err != nil {
			t.Fatal(err)
		}
		id := createdTask(res).TaskID
		synctest.Wait()
		if w := status(t, m, id); w.Status != InputRequired {
			t.Fatalf("task = %+v", w)
		}

		srv := served(t, tool)
		store.armed.Store(true)
		updated := make(chan struct{})
		go func() {
			defer close(updated)
			m.update(context.Background(), srv, "", nil, &taskParams{TaskID: id, InputResponses: json.RawMessage(`{"ok":{"action":"accept"}}`)})
		}()
		<-store.written
		if _, err := m.cancel(t.Context(), "", id); err != nil {
			t.Fatal(err)
		}
		close(store.release)
		<-updated
		synctest.Wait()
		if n := resumed.Load(); n != 0 {
			t.Errorf("the round after the cancel started (%d times)", n)
		}
		if w := status(t, m, id); w.Status != Cancelled {
			t.Errorf("task = %+v", w)
		}
		m.mu.Lock()
		running := len(m.running)
		m.mu.Unlock()
		if running != 0 {
			t.Errorf("%d tasks still run here", running)
		}
		if err := m.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCancelAfterStrayUpdate: a tasks/update for a task that runs here
// and waits for nothing resumes nothing, and leaves the running work
// where a tasks/cancel finds it and stops it at once.
func TestCancelAfterStrayUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewManager(nil)
		tool := newBlocking()
		id := start(t, m, tool.tool())
		synctest.Wait()
		m.update(t.Context(), nil, "", nil, &taskParams{TaskID: id, InputResponses: json.RawMessage(`{"ok":{"action":"accept"}}`)})
		if _, err := m.cancel(t.Context(), "", id); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case cause := <-tool.stopped:
			if cause != errCancelled {
				t.Errorf("work stopped by %v", cause)
			}
		default:
			t.Error("the work runs on after the cancel")
		}
		if err := m.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}
