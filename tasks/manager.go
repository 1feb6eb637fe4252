package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/taskround"

	"github.com/mcpkit/mcpkit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The methods of the extension. tasks/list and tasks/result are not part
// of it (SEP-2663 removed them).
const (
	methodGet    = "tasks/get"
	methodUpdate = "tasks/update"
	methodCancel = "tasks/cancel"
)

// codeMissingCapability is the JSON-RPC code SEP-2575 gives for a request
// that needs a client capability the client did not declare
// (mcp.CodeMissingRequiredClientCapabilities).
const codeMissingCapability = mcp.CodeMissingRequiredClientCapabilities

// Options configures [NewManager]. A nil *Options means the defaults.
type Options struct {
	// Store keeps the tasks. Nil means a [MemoryStore] with its defaults,
	// which serves one replica only: a drain then lets the tasks running
	// finish, since no other replica could take them up (see Attach), as
	// it does for a MemoryStore that no other Manager uses.
	Store Store

	// TTL is how long a task is kept from its creation, whatever its
	// status; a task still running then is stopped. Zero means one hour.
	TTL time.Duration

	// PollInterval is the polling interval suggested to clients. Zero
	// means one second.
	PollInterval time.Duration

	// Lease is how long a running task stays "working" without its
	// server renewing it; the server renews it every third of Lease. A
	// task whose server died is reported failed at the first tasks/get
	// after its lease ran out. Zero means 30 seconds.
	Lease time.Duration

	// Logger receives the manager's records (store failures, lost
	// tasks). Nil means no logging.
	Logger *slog.Logger
}

// A Manager runs tool calls as tasks and answers the extension's methods
// for them. Create one with [NewManager], make tools that run as tasks with
// [Tool], and attach the manager to the server with [Manager.Attach].
type Manager struct {
	store  Store
	ttl    time.Duration
	poll   time.Duration
	lease  time.Duration
	logger *slog.Logger

	// replica identifies m among the managers sharing its store, and
	// handlers numbers its task tools (see Task.Handler).
	replica  string
	handlers atomic.Uint64

	changes changes       // wakes the watchers of listen streams
	done    chan struct{} // closed by Shutdown
	drained chan struct{} // closed when a drain has handed the tasks over

	mu       sync.Mutex
	running  map[string][]*reservation // the runs of tasks reserved or running here, by task ID
	closed   bool
	draining bool         // see drain
	mem      *MemoryStore // the store, if it is one (see alone)
	wg       sync.WaitGroup
}

// A resolver finds what a call of a tool reaches: an [mcpkit.Server].
type resolver interface {
	Resolve(ctx context.Context, c mcpkit.Caller, name string, meta mcp.Meta) (*mcpkit.Tool, mcpkit.Handler, bool)
}

// NewManager returns a Manager with the given options.
func NewManager(opts *Options) *Manager {
	m := &Manager{ttl: time.Hour, poll: time.Second, lease: 30 * time.Second, running: map[string][]*reservation{}, done: make(chan struct{}), drained: make(chan struct{}), replica: newID()}
	if opts != nil {
		m.store, m.logger = opts.Store, opts.Logger
		if opts.TTL > 0 {
			m.ttl = opts.TTL
		}
		if opts.PollInterval > 0 {
			m.poll = opts.PollInterval
		}
		if opts.Lease > 0 {
			m.lease = opts.Lease
		}
	}
	if m.store == nil {
		m.store = NewMemoryStore(nil)
	}
	if ms, ok := m.store.(*MemoryStore); ok {
		ms.managers.Add(1)
		m.mem = ms
	}
	m.store = signalling{Store: m.store, c: &m.changes}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	return m
}

// Attach registers tasks/get, tasks/update and tasks/cancel on srv's SDK
// server and adds the SDK receiving middleware that answers them and turns
// the result of a tool call that created a task into the extension's
// CreateTaskResult. Call it once per server, before serving. The server
// must also advertise the extension (see the package documentation).
//
// A tasks/update that completes a task's answers resumes it on srv: the
// round reaches the task's tool by the name and version the call reached
// it by, as the caller of the tasks/update ([mcpkit.Server.Resolve]), and
// runs the tool's whole chain, the server's middleware included, as a
// first call would, then the work. A tool hidden from that caller, removed,
// or no longer the task's own (another tool of that name, or of another
// Manager) is not run: the task fails as a call to an unknown tool would.
//
// When srv drains ([mcpkit.Server.Drain]), the manager hands the tasks it
// runs over to the other replicas sharing its store: their work is
// stopped, and each task stays working, without a lease, until a tasks/get
// on another replica (a client's poll, or the watcher of its listen
// stream) takes it up there and runs its work again, from the start of the
// round it was in, as a round after input is run. Work must therefore be
// safe to run again, as a retried call is. A draining server refuses new
// calls; one it admitted before creates its task handed over, and a
// tasks/update that completes a task's answers hands its round over. A
// manager whose store is a [MemoryStore] no other Manager uses has no
// replica to hand its tasks to: its drain waits for the tasks running to
// finish, within the drain's deadline, and admitted calls and rounds run
// here.
func (m *Manager) Attach(srv *mcpkit.Server) error {
	sdk := srv.MCPServer()
	// The handlers registered here only let the methods past the SDK's
	// checks; the middleware answers them, since only it sees the
	// request's token and headers.
	unreachable := func(context.Context, *mcp.ServerSession, *taskParams) (*ackResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tasks: middleware not installed"}
	}
	for _, method := range []string{methodGet, methodUpdate, methodCancel} {
		if err := mcp.AddReceivingCustomMethod(sdk, method, unreachable); err != nil {
			return fmt.Errorf("tasks: Attach: %w", err)
		}
	}
	sdk.AddReceivingMiddleware(m.middleware(srv))
	srv.RegisterOnDrain(m.drain)
	return nil
}

// middleware returns the SDK middleware of srv that answers the extension's
// methods and converts task-created tool results.
func (m *Manager) middleware(srv *mcpkit.Server) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return m.handler(srv, next)
	}
}

// handler answers the extension's methods on srv, and passes the others to
// next.
func (m *Manager) handler(srv *mcpkit.Server, next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/call":
			res, err := next(ctx, method, req)
			if cr, ok := res.(*mcp.CallToolResult); ok && err == nil {
				if w := createdTask(cr); w != nil {
					return w, nil
				}
			}
			return res, err
		case methodListen:
			if l := mcpkit.ListenStreamFrom(ctx); l != nil {
				if raw := taskIDs(l.Subscriptions()); raw != nil {
					return m.listen(ctx, srv, l, raw, method, req, next)
				}
			}
			return next(ctx, method, req)
		case methodGet, methodUpdate, methodCancel:
			sr, ok := req.(*mcp.ServerRequest[*taskParams])
			if !ok || sr.Params == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
			}
			if !declared(sr.ClientCapabilities()) {
				return nil, missingCapability(method)
			}
			var who string
			if extra := sr.Extra; extra != nil {
				// SEP-2663 routes tasks/* by the Mcp-Name header, which
				// must then name the task of the body (SEP-2243).
				if name := extra.Header.Values("Mcp-Name"); len(name) > 0 && name[0] != sr.Params.TaskID {
					return nil, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: "Mcp-Name header does not match params.taskId"}
				}
				who = principal(extra.TokenInfo, extra.Header)
			} else {
				who = principal(nil, nil)
			}
			switch method {
			case methodGet:
				return m.get(ctx, srv, who, sr.Extra, sr.Params.TaskID)
			case methodCancel:
				return m.cancel(ctx, who, sr.Params.TaskID)
			default:
				return m.update(ctx, srv, who, sr.Extra, sr.Params)
			}
		}
		return next(ctx, method, req)
	}
}

// declared reports whether caps include the extension.
func declared(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[ExtensionID]
	return ok
}

// missingCapability is the error for a request that needs the extension
// from a client that did not declare it (SEP-2575, SEP-2663).
func missingCapability(what string) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    codeMissingCapability,
		Message: fmt.Sprintf("%s requires the client capability extensions[%q]", what, ExtensionID),
		Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + ExtensionID + `":{}}}}`),
	}
}

// errUnknownTask is tasks/get's answer for a task that does not exist, has
// expired, or belongs to another principal: the same in each case.
var errUnknownTask = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"}

// get answers tasks/get, for the caller of the request with extra: a task
// that another replica handed over (see Attach) is taken up here, by srv.
func (m *Manager) get(ctx context.Context, srv resolver, who string, extra *mcp.RequestExtra, id string) (mcp.Result, error) {
	t, err := m.store.Get(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && t.Owner != who {
		return nil, errUnknownTask
	}
	if err != nil {
		m.logger.Error("tasks: store", "op", "get", "task", id, "err", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Failed to retrieve task"}
	}
	if !t.Status.Terminal() && !t.LeaseUntil.IsZero() && !time.Now().Before(t.LeaseUntil) {
		t, err = m.store.Update(ctx, id, func(t *Task) error {
			if t.Status.Terminal() || time.Now().Before(t.LeaseUntil) {
				return nil // finished or renewed meanwhile
			}
			m.end(t, Failed, "the server running the task stopped", nil,
				&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "task lost: the server running it stopped"})
			return nil
		})
		switch {
		case errors.Is(err, ErrNotFound): // expired meanwhile
			return nil, errUnknownTask
		case err != nil:
			m.logger.Error("tasks: store", "op", "expire lease", "task", id, "err", err)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Failed to retrieve task"}
		}
		if t.Status == Failed {
			m.logger.Warn("tasks: lease expired", "task", id)
		}
	}
	if handedOver(t) {
		t, err = m.takeOver(ctx, srv, who, extra, t)
		switch {
		case errors.Is(err, ErrNotFound):
			return nil, errUnknownTask
		case err != nil:
			m.logger.Error("tasks: store", "op", "take over", "task", id, "err", err)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Failed to retrieve task"}
		}
	}
	return t.toWire(resultTypeComplete), nil
}

// handedOver reports whether t is a task that a draining replica handed
// over: working, and nobody's lease on it.
func handedOver(t *Task) bool { return t.Status == Working && t.LeaseUntil.IsZero() }

// takeOver runs t's work here, a task another replica handed over, as the
// caller of the tasks/get with extra: the round it was in starts again, as
// a round after input does (see update), once the store has the task
// leased here. A task another replica took first is left to it; a manager
// that drains or is shut down takes none. It returns the task as stored.
func (m *Manager) takeOver(ctx context.Context, srv resolver, who string, extra *mcp.RequestExtra, t *Task) (*Task, error) {
	tool, h, bound := m.resolve(ctx, srv, t, extra)
	r, open := m.reserve(ctx, t.ID)
	if !open {
		return t, nil
	}
	var next *mcpkit.Request
	t, err := m.store.Update(ctx, t.ID, func(t *Task) error {
		next = nil
		if t.Owner != who {
			return ErrNotFound
		}
		if !handedOver(t) {
			return nil
		}
		req, err := resumed(t, extra)
		switch {
		case err != nil:
			e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the input responses cannot be read: " + err.Error()}
			m.end(t, Failed, e.Message, nil, e)
		case bound == nil:
			var e *jsonrpc.Error
			errors.As(mcpkit.NewUnknownToolError(t.Tool), &e)
			m.end(t, Failed, e.Message, nil, e)
		default:
			t.StatusMessage = ""
			t.UpdatedAt = time.Now()
			t.LeaseUntil = t.UpdatedAt.Add(m.lease)
			req.Tool = tool
			next = req
		}
		return nil
	})
	if err == nil && next != nil {
		m.logger.Info("tasks: took over a task handed over by another server", "task", t.ID)
		r.ctx = taskround.With(context.WithValue(r.ctx, roundKey{}, &round{h: bound}), tool.ID())
		go m.run(r, t.ID, h, next)
		return t, nil
	}
	r.release()
	return t, err
}

// cancel answers tasks/cancel: a task that is not terminal becomes
// cancelled at once, and its work is told to stop, here or, through the
// store, on the replica that runs it. The answer is the same empty
// acknowledgement for every task ID, known or not, terminal or not
// (SEP-2663), so it tells another principal nothing.
func (m *Manager) cancel(ctx context.Context, who, id string) (mcp.Result, error) {
	_, err := m.store.Update(ctx, id, func(t *Task) error {
		if t.Owner != who {
			return ErrNotFound
		}
		if !t.Status.Terminal() {
			m.end(t, Cancelled, "cancelled by the client", nil, nil)
		}
		return nil
	})
	if err == nil {
		m.stop(id, errCancelled)
	} else if !errors.Is(err, ErrNotFound) {
		m.logger.Error("tasks: store", "op", "cancel", "task", id, "err", err)
	}
	return &ackResult{ResultType: resultTypeComplete}, nil
}

// update answers tasks/update: the responses to requests the task waits
// for are kept, others ignored (SEP-2663: unknown, answered and superseded
// keys alike), and when none is left outstanding the work resumes, here,
// with every answer of the round. The answer is the same empty
// acknowledgement for every task ID and any responses.
//
// The round runs what srv resolves for the caller of the tasks/update by
// the task's name and version, if that is a task tool of m with the task's
// identity (see [Manager.Attach]). Its run is reserved before the store
// has the task working again, so that a tasks/cancel acknowledged after
// that write finds the run here and stops it.
func (m *Manager) update(ctx context.Context, srv resolver, who string, extra *mcp.RequestExtra, p *taskParams) (mcp.Result, error) {
	ack := &ackResult{ResultType: resultTypeComplete}
	var answers map[string]json.RawMessage
	if json.Unmarshal(p.InputResponses, &answers) != nil || len(answers) == 0 {
		return ack, nil
	}
	t, err := m.store.Get(ctx, p.TaskID)
	if err != nil || t.Owner != who || t.Status != InputRequired {
		if err != nil && !errors.Is(err, ErrNotFound) {
			m.logger.Error("tasks: store", "op", "get", "task", p.TaskID, "err", err)
		}
		return ack, nil
	}
	// What the round reaches is resolved before the store's update, which
	// may hold a lock: resolving asks the server's providers.
	tool, h, bound := m.resolve(ctx, srv, t, extra)
	r, open := m.reserve(ctx, p.TaskID)
	var next *mcpkit.Request // the request of the round to run, if one is
	_, err = m.store.Update(ctx, p.TaskID, func(t *Task) error {
		next = nil
		if t.Owner != who {
			return ErrNotFound
		}
		if t.Status != InputRequired {
			return nil
		}
		var pending, got map[string]json.RawMessage
		if err := json.Unmarshal(t.InputRequests, &pending); err != nil {
			return err
		}
		if len(t.InputResponses) > 0 {
			if err := json.Unmarshal(t.InputResponses, &got); err != nil {
				return err
			}
		}
		if got == nil {
			got = map[string]json.RawMessage{}
		}
		for k, v := range answers {
			if _, ok := pending[k]; ok {
				got[k] = v
				delete(pending, k)
			}
		}
		t.InputResponses, _ = json.Marshal(got)
		t.InputRequests, _ = json.Marshal(pending)
		t.UpdatedAt = time.Now()
		if len(pending) > 0 {
			return nil
		}
		fail := func(e *jsonrpc.Error) { m.end(t, Failed, e.Message, nil, e) }
		req, err := resumed(t, extra)
		switch {
		case err != nil:
			fail(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the input responses cannot be read: " + err.Error()})
		case !open && m.isDraining():
			// Another replica runs the round (see takeOver), and resolves
			// its tool there.
			t.Status, t.StatusMessage, t.InputRequests = Working, handedOverMessage, nil
			t.LeaseUntil = time.Time{}
		case bound == nil:
			var e *jsonrpc.Error
			errors.As(mcpkit.NewUnknownToolError(t.Tool), &e)
			fail(e)
		case !open:
			fail(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "task interrupted: the server shut down"})
		default:
			t.Status, t.StatusMessage, t.InputRequests = Working, "", nil
			t.LeaseUntil = t.UpdatedAt.Add(m.lease)
			req.Tool = tool
			next = req
		}
		return nil
	})
	switch {
	case err == nil && next != nil:
		r.ctx = taskround.With(context.WithValue(r.ctx, roundKey{}, &round{h: bound}), tool.ID())
		go m.run(r, p.TaskID, h, next)
		return ack, nil
	case err == nil, errors.Is(err, ErrNotFound):
	case errors.Is(err, ErrStoreFull):
		m.logger.Warn("tasks: store full, input responses dropped", "task", p.TaskID)
	default:
		m.logger.Error("tasks: store", "op", "update", "task", p.TaskID, "err", err)
	}
	if open {
		r.release()
	}
	return ack, nil
}

// resolve returns what the next round of t reaches on srv for the caller
// of the tasks/update with extra: the tool, the Handler of its whole
// chain, and the task handler of m at its end, bound to the task; that is
// nil when the round reaches no tool, or one that is not the task's (of
// another identity, or not a task tool of m).
func (m *Manager) resolve(ctx context.Context, srv resolver, t *Task, extra *mcp.RequestExtra) (*mcpkit.Tool, mcpkit.Handler, *taskHandler) {
	if srv == nil {
		return nil, nil, nil
	}
	caller, err := resumed(t, extra)
	if err != nil {
		return nil, nil, nil
	}
	tool, h, ok := srv.Resolve(ctx, caller, t.Tool, mcp.Meta{mcpkit.MetaKeyVersion: t.ToolVersion})
	if !ok || tool.ID() != t.Identity {
		return nil, nil, nil
	}
	for o := range tool.Lineage() {
		if th, ok := o.Handler.(*taskHandler); ok && th.m == m {
			if !th.made(t) {
				return nil, nil, nil
			}
			return tool, h, th
		}
	}
	return nil, nil, nil
}

// made reports whether h may run t's rounds: t was made by h, or on
// another replica (whose task tools this one serves alike), or before
// tasks named their handler.
func (h *taskHandler) made(t *Task) bool {
	if t.Handler == "" || t.Handler == h.key {
		return true
	}
	replica, _, _ := strings.Cut(t.Handler, "/")
	return replica != h.m.replica
}

// resumed returns the request of the next round of t's work: the call
// again, by the name and version it reached, with its arguments, protocol
// version and declared capabilities, the answers, and the request state
// the work gave, with the token and headers of the tasks/update that
// completed the answers (extra). It has no session: the call's is gone.
// Its Tool is set once the round is resolved.
func resumed(t *Task, extra *mcp.RequestExtra) (*mcpkit.Request, error) {
	var answers mcp.InputResponseMap
	if len(t.InputResponses) > 0 {
		if err := json.Unmarshal(t.InputResponses, &answers); err != nil {
			return nil, err
		}
	}
	var caps any = map[string]any{"extensions": map[string]any{ExtensionID: map[string]any{}}}
	if len(t.ClientCapabilities) > 0 {
		caps = t.ClientCapabilities
	}
	call := &mcp.CallToolRequest{
		Params: &mcp.CallToolParamsRaw{
			Name:           t.Tool,
			Arguments:      t.Arguments,
			InputResponses: answers,
			RequestState:   t.RequestState,
			Meta: mcp.Meta{
				mcp.MetaKeyProtocolVersion:    t.ProtocolVersion,
				mcp.MetaKeyClientCapabilities: caps,
				mcpkit.MetaKeyVersion:         t.ToolVersion,
			},
		},
		Extra: detachExtra(extra),
	}
	return &mcpkit.Request{Arguments: t.Arguments, Call: call}, nil
}

// end moves t to a terminal status. What only later rounds of the work
// would need (the arguments, above all) is dropped: the task keeps only
// what tasks/get shows.
func (m *Manager) end(t *Task, s Status, msg string, result json.RawMessage, err *jsonrpc.Error) {
	t.Status, t.StatusMessage, t.Result, t.Error = s, msg, result, err
	t.InputRequests, t.InputResponses, t.RequestState = nil, nil, ""
	t.Arguments, t.ClientCapabilities = nil, nil
	t.UpdatedAt = time.Now()
	t.LeaseUntil = time.Time{}
}

// Causes of a running task's context ending.
var (
	errCancelled  = errors.New("tasks: task cancelled")
	errShutdown   = errors.New("tasks: manager shut down")
	errVanished   = errors.New("tasks: task expired or lost from the store")
	errHandedOver = errors.New("tasks: task handed over to another server")
)

// handedOverMessage is the status message of a task handed over, until
// another replica takes it up.
const handedOverMessage = "handed over to another server"

// stop cancels the work of the task with the given ID if it runs here, or
// is about to.
func (m *Manager) stop(id string, cause error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.running[id] {
		r.cancel(cause)
	}
}

// isDraining reports whether the server m is attached to drains, handing
// its tasks over.
func (m *Manager) isDraining() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.draining && !m.alone()
}

// alone reports whether no other replica can take m's tasks up: its store
// is a MemoryStore that no other Manager uses.
func (m *Manager) alone() bool {
	return m.mem != nil && m.mem.managers.Load() == 1
}

// drain hands every task m runs over to the other replicas (see Attach)
// and waits until their work has returned, or ctx ends; then the watchers
// of listen streams stop. It is registered with the server's drain.
func (m *Manager) drain(ctx context.Context) error {
	m.mu.Lock()
	first := !m.draining
	m.draining = true
	if !m.alone() {
		for _, rs := range m.running {
			for _, r := range rs {
				r.cancel(errHandedOver)
			}
		}
	}
	m.mu.Unlock()
	if first {
		defer close(m.drained)
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		m.mu.Lock()
		n := len(m.running)
		m.mu.Unlock()
		if m.alone() {
			return fmt.Errorf("tasks: %d tasks still running: %w", n, context.Cause(ctx))
		}
		return fmt.Errorf("tasks: %d tasks not handed over, their work still running: %w", n, context.Cause(ctx))
	}
}

// Shutdown stops every task this manager runs, marks them failed (a
// replica that goes away cannot finish them), and waits until their work
// has returned or ctx ends. Tools that create tasks run their calls
// synchronously from then on.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	if !m.closed {
		close(m.done)
	}
	m.closed = true
	for _, rs := range m.running {
		for _, r := range rs {
			r.cancel(errShutdown)
		}
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newID returns a fresh task ID: 128 random bits.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
