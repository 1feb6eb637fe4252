package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// methodListen is SEP-2575's listen request, on which a client of the
// extension asks for notifications/tasks by task ID.
const methodListen = "subscriptions/listen"

// methodNotify is the extension's status notification.
const methodNotify = "notifications/tasks"

// MaxListenTasks is the most task IDs one subscriptions/listen request is
// acknowledged for. Only the first MaxListenTasks distinct IDs a request
// names are considered, whatever their number, and the acknowledgement
// names the caller's own tasks among them; the client can open another
// stream for the rest.
const MaxListenTasks = 64

// changes tells the watchers of listen streams on this replica that a task
// changed here, so that they need not wait for their next poll of the
// store. Changes made on other replicas are seen at that poll.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next change.
func (c *changes) wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// signal wakes the watchers.
func (c *changes) signal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// signalling is a Store that tells the manager's watchers of each change
// it makes.
type signalling struct {
	Store
	c *changes
}

func (s signalling) Create(ctx context.Context, t *Task) error {
	err := s.Store.Create(ctx, t)
	if err == nil {
		s.c.signal()
	}
	return err
}

func (s signalling) Update(ctx context.Context, id string, fn func(*Task) error) (*Task, error) {
	t, err := s.Store.Update(ctx, id, fn)
	if err == nil {
		s.c.signal()
	}
	return t, err
}

// taskIDs returns the taskIds member of a listen request's notifications
// object, or nil when the request asks for no task (no such member, null,
// or an empty array). It reads the object once and decodes no ID.
func taskIDs(subs json.RawMessage) json.RawMessage {
	var n struct {
		TaskIDs json.RawMessage `json:"taskIds"`
	}
	if len(subs) == 0 || json.Unmarshal(subs, &n) != nil {
		return nil
	}
	v := bytes.TrimSpace(n.TaskIDs)
	if len(v) == 0 || string(v) == "null" || len(v) >= 2 && v[0] == '[' && len(bytes.TrimSpace(v[1:len(v)-1])) == 0 {
		return nil
	}
	return v
}

// requestedTasks returns the task IDs of raw, a taskIds array, that a
// listen request is served for: the first MaxListenTasks distinct ones,
// empty IDs left out, in the request's order; nil if raw is not an array
// of strings as far as it is read. It stops reading at the cap: its work
// is linear in what it reads, and it keeps at most MaxListenTasks IDs.
func requestedTasks(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil
	}
	var ids []string
	seen := make(map[string]bool, MaxListenTasks)
	for len(ids) < MaxListenTasks && dec.More() {
		var id string
		if dec.Decode(&id) != nil {
			return nil
		}
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// listen serves a subscriptions/listen request that asks for
// notifications/tasks, whose taskIds member is raw (see taskIDs): from a
// client that did not declare the extension, it refuses the request
// before it reads an ID. Otherwise it acknowledges the caller's own tasks
// among the IDs requestedTasks considers (another principal's tasks and
// unknown IDs are left out alike), sends each task's state once the
// stream is acknowledged and again at each change, and holds the stream
// open until every acknowledged task has ended, the client goes away, or
// the manager shuts down. The SDK serves the rest of the request
// (list_changed subscriptions) as usual.
func (m *Manager) listen(ctx context.Context, srv resolver, l *mcpkit.ListenStream, raw json.RawMessage, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	sr, ok := req.(*mcp.ServerRequest[*mcp.SubscriptionsListenParams])
	if !ok {
		return next(ctx, method, req)
	}
	if !declared(sr.ClientCapabilities()) {
		return nil, missingCapability("notifications/tasks on " + methodListen)
	}
	ids := requestedTasks(raw)
	if len(ids) == 0 {
		return next(ctx, method, req)
	}
	who := principal(nil, nil)
	if sr.Extra != nil {
		who = principal(sr.Extra.TokenInfo, sr.Extra.Header)
	}
	agreed := make([]string, 0, len(ids))
	for _, id := range ids {
		if t, err := m.store.Get(ctx, id); err == nil && t.Owner == who {
			agreed = append(agreed, id)
		}
	}
	if err := l.Acknowledge("taskIds", agreed); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tasks: " + err.Error()}
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-l.Acknowledged():
			m.watch(wctx, srv, l, who, sr.Extra, agreed)
		case <-wctx.Done():
		}
	}()
	res, err := next(ctx, method, req)
	if err != nil {
		return nil, err
	}
	// The SDK returns at once when the client asked it for nothing else;
	// the stream stays open for the tasks.
	select {
	case <-watched:
	case <-ctx.Done():
	}
	return res, nil
}

// watch sends the state of each task of ids on l, then again each time it
// changes, until each has ended (or expired), ctx is done or the manager
// shuts down. It looks at the store at each change made on this replica,
// and every poll interval for those made on others.
func (m *Manager) watch(ctx context.Context, srv resolver, l *mcpkit.ListenStream, who string, extra *mcp.RequestExtra, ids []string) {
	sent := make(map[string]string, len(ids)) // the last state sent, by task
	gone := false                             // the stream closed
	timer := time.NewTimer(m.poll)
	defer timer.Stop()
	for len(ids) > 0 {
		changed := m.changes.wait()
		ids = slices.DeleteFunc(ids, func(id string) bool {
			res, err := m.get(ctx, srv, who, extra, id)
			var jerr *jsonrpc.Error
			if errors.As(err, &jerr) && jerr == errUnknownTask {
				return true // expired
			}
			w, ok := res.(*wireTask)
			if err != nil || !ok {
				return false // the store failed; try again at the next poll
			}
			state := string(w.Status) + "\x00" + w.StatusMessage + "\x00" + w.LastUpdatedAt
			if sent[id] != state && !gone {
				w.ResultType = "" // a notification, not a result
				if err := l.Notify(methodNotify, w); err != nil {
					gone = errors.Is(err, mcpkit.ErrListenClosed)
					m.logger.Debug("tasks: notification", "task", id, "err", err)
					return false
				}
				sent[id] = state
			}
			return w.Status.Terminal()
		})
		if len(ids) == 0 || gone {
			return
		}
		timer.Reset(m.poll)
		select {
		case <-ctx.Done():
			return
		case <-m.done:
			return
		case <-m.drained:
			return
		case <-changed:
		case <-timer.C:
		}
	}
}
