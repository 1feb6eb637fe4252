package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// A Policy says what a task tool does for a client that did not declare the
// extension on its request. A client that declared it always gets a task.
type Policy int

const (
	// Optional runs the call synchronously, as an ordinary tool, for
	// clients without the extension. It is the default.
	Optional Policy = iota

	// Required refuses the call for clients without the extension, with
	// the JSON-RPC error SEP-2663 gives: -32021 (missing required client
	// capability), naming the extension in its data.
	Required
)

// ToolOptions configures [Tool]. A nil *ToolOptions means the defaults.
type ToolOptions struct {
	// Policy is what happens for clients without the extension. The zero
	// value is Optional.
	Policy Policy

	// Timeout limits the work of one call, as middleware.Timeout does,
	// whether it runs as a task or synchronously. Zero means no limit of
	// its own: the work still stops when the task is cancelled or expires.
	Timeout time.Duration

	// Middleware wraps the tool's handler inside the task: it runs with
	// the work, after the call has been answered. The first is the
	// outermost, and Timeout is outside all of them.
	Middleware []mcpkit.Middleware

	// Synchronous, if set, reports whether a call from a client with the
	// extension is served synchronously all the same, as SEP-2663 allows:
	// for calls known to be quick, or for the rounds of a call that gathers
	// input (input_required, SEP-2322) before its long part, which then
	// becomes a task with the answers in hand. Nil means never.
	Synchronous func(*mcpkit.Request) bool
}

// Tool returns a copy of t whose Handler runs each call as a task of m: it
// stores the task (durably, in m's store), answers the call with the
// extension's CreateTaskResult, and runs t's Handler, wrapped in
// opts.Middleware and opts.Timeout, on a goroutine of its own, detached
// from the request: the request's context values stay, its cancellation
// and deadline do not (the session of a stateless request ends with it).
// The outcome becomes the task's: a result, tool errors included
// (isError), makes it completed; a JSON-RPC error makes it failed. Errors
// are mapped by the server's own table ([mcpkit.WireResult]).
//
// The task boundary is the tool's Handler, so everything in front of it
// has run before a task exists: the server's and t's middleware
// (visibility, authorization, rate limits, idempotency) and argument
// validation. Output validation does not apply to the work inside a task.
// Each round after input (see [Manager.Attach]) runs that whole chain
// again, judged as a first call is, and then the work. Calls from clients
// that did not declare the extension are served as opts.Policy says. t's
// other fields are copied unchanged; t is not modified. Tool panics if t
// or its Handler is nil.
func Tool(t *mcpkit.Tool, m *Manager, opts *ToolOptions) *mcpkit.Tool {
	if t == nil || t.Handler == nil {
		panic("tasks: Tool: nil tool or handler")
	}
	if m == nil {
		panic("tasks: Tool: nil manager")
	}
	h := &taskHandler{m: m, key: m.replica + "/" + strconv.FormatUint(m.handlers.Add(1), 10)}
	var mw []mcpkit.Middleware
	if opts != nil {
		h.policy, h.sync = opts.Policy, opts.Synchronous
		mw = append(mw, middleware.Timeout(opts.Timeout, &middleware.TimeoutOptions{Logger: m.logger}))
		mw = append(mw, opts.Middleware...)
	}
	h.work = mcpkit.Chain(mw...)(t.Handler)
	t2 := *t
	t2.Handler = h
	return &t2
}

type taskHandler struct {
	m      *Manager
	key    string // m's replica and the handler's number there (see Task.Handler)
	policy Policy
	sync   func(*mcpkit.Request) bool
	work   mcpkit.Handler
}

// ServeTool creates the task, or serves the call as the policy says, or,
// at the end of the whole chain of a round after input that the manager
// resumes with this handler, runs that round's work.
func (h *taskHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if r, ok := ctx.Value(roundKey{}).(*round); ok && r.h == h && r.started.CompareAndSwap(false, true) {
		return h.work.ServeTool(ctx, req)
	}
	if !declared(req.ClientCapabilities()) {
		if h.policy == Required {
			return nil, missingCapability(fmt.Sprintf("tool %q", req.Tool.Name))
		}
		return h.work.ServeTool(ctx, req)
	}
	if h.sync != nil && h.sync(req) {
		return h.work.ServeTool(ctx, req)
	}
	m := h.m
	now := time.Now()
	t := &Task{
		ID:              newID(),
		Owner:           principal(req.TokenInfo(), req.Header()),
		Tool:            req.Tool.Name,
		ToolVersion:     req.Tool.Version,
		Identity:        req.Tool.ID(),
		Handler:         h.key,
		Status:          Working,
		CreatedAt:       now,
		UpdatedAt:       now,
		ExpiresAt:       now.Add(m.ttl),
		PollInterval:    m.poll,
		LeaseUntil:      now.Add(m.lease),
		Arguments:       req.Arguments, // shared with the work and the store, which write neither
		ProtocolVersion: req.ProtocolVersion(),
	}
	if caps, ok := req.Meta()[mcp.MetaKeyClientCapabilities]; ok {
		t.ClientCapabilities, _ = json.Marshal(caps)
	}
	run, ok := m.reserve(ctx, t.ID)
	if !ok {
		if !m.isDraining() {
			return h.work.ServeTool(ctx, req) // shut down
		}
		// A call admitted before its server began to drain (the server
		// refuses those that come after): its task is created handed
		// over, for another replica to run (see Manager.takeOver).
		t.LeaseUntil, t.StatusMessage = time.Time{}, handedOverMessage
	}
	if err := m.store.Create(ctx, t); err != nil {
		if ok {
			run.release()
		}
		if errors.Is(err, ErrStoreFull) {
			return nil, mcpkit.NewToolError(&storeFullError{retryAfter: m.poll}, mcpkit.Retryable)
		}
		return nil, fmt.Errorf("tasks: creating task: %w", err)
	}
	if ok {
		go m.run(run, t.ID, h.work, detach(req))
	}
	return &mcp.CallToolResult{Meta: mcp.Meta{metaKeyCreated: t.toWire(resultTypeTask)}}, nil
}

// A round is a round after input that the manager resumes: the chain of
// the task's tool runs again, as for a first call, and the task handler it
// was bound to, at its end, runs the work instead of creating a task.
type round struct {
	h       *taskHandler
	started atomic.Bool
}

type roundKey struct{}

// storeFullError is what a call that finds the task store full is told:
// a retryable tool error with a retry hint in its result's _meta, as for
// every limit.
type storeFullError struct{ retryAfter time.Duration }

func (e *storeFullError) Error() string { return "no room for another task; try again later" }
func (e *storeFullError) Unwrap() error { return ErrStoreFull }
func (e *storeFullError) ResultMeta() mcp.Meta {
	return mcp.Meta{middleware.MetaKeyRetryAfter: e.retryAfter.Milliseconds()}
}

// detach returns the request that the work of a task created by req runs
// with: req without what ends with the call, its session and its stream,
// which the work must not use and must not keep (a stateless session keeps
// the call's message, arguments included), and with the protocol version
// and the client capabilities req has, which before 2026-07-28 come from
// the session, in its _meta. The arguments, headers and token are shared.
func detach(req *mcpkit.Request) *mcpkit.Request {
	if req.Call == nil {
		return req
	}
	call := &mcp.CallToolRequest{Extra: detachExtra(req.Call.Extra)}
	if p := req.Call.Params; p != nil {
		params := *p
		_, hasVersion := p.Meta[mcp.MetaKeyProtocolVersion]
		_, hasCaps := p.Meta[mcp.MetaKeyClientCapabilities]
		if !hasVersion || !hasCaps {
			params.Meta = maps.Clone(p.Meta)
			if params.Meta == nil {
				params.Meta = mcp.Meta{}
			}
			if v := req.ProtocolVersion(); !hasVersion && v != "" {
				params.Meta[mcp.MetaKeyProtocolVersion] = v
			}
			if caps := req.ClientCapabilities(); !hasCaps && caps != nil {
				params.Meta[mcp.MetaKeyClientCapabilities] = caps
			}
		}
		call.Params = &params
	}
	r := *req
	r.Call = call
	return &r
}

// detachExtra returns what the work of a task keeps of the transport
// information of a request: its token and headers.
func detachExtra(extra *mcp.RequestExtra) *mcp.RequestExtra {
	if extra == nil {
		return nil
	}
	return &mcp.RequestExtra{TokenInfo: extra.TokenInfo, Header: extra.Header}
}

// A reservation is the right to run one task on this manager: its
// context, which keeps the values of parent and none of its end, and
// carries the task's Info, and a place among the tasks Shutdown waits for
// and tasks/cancel stops. A task is reserved before the store has it
// working, so that a cancel acknowledged after that finds its run.
type reservation struct {
	m      *Manager
	id     string
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// reserve makes a reservation for the task with the given ID, unless the
// manager is shut down.
func (m *Manager) reserve(parent context.Context, id string) (*reservation, bool) {
	info := Info{ID: id, Origin: trace.SpanContextFromContext(parent)}
	ctx, cancel := context.WithCancelCause(ContextWithInfo(context.WithoutCancel(parent), info))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || (m.draining && !m.alone()) {
		cancel(nil)
		return nil, false
	}
	r := &reservation{m: m, id: id, ctx: ctx, cancel: cancel}
	m.running[id] = append(m.running[id], r)
	m.wg.Add(1)
	return r, true
}

// release gives the reservation back.
func (r *reservation) release() {
	r.cancel(nil)
	m := r.m
	m.mu.Lock()
	rs := slices.DeleteFunc(m.running[r.id], func(r2 *reservation) bool { return r2 == r })
	if len(rs) == 0 {
		delete(m.running, r.id)
	} else {
		m.running[r.id] = rs
	}
	m.mu.Unlock()
	m.wg.Done()
}

// metaKeyCreated marks, in the _meta of the result of a tool call, a task
// created by the call; the manager's SDK middleware replaces such a result
// by the CreateTaskResult it carries. It survives a result cache or an
// idempotency store that keeps results as JSON, so a replayed call answers
// the same task.
const metaKeyCreated = "io.github.mcpkit/taskCreated"

// createdTask returns the CreateTaskResult that res carries, or nil.
func createdTask(res *mcp.CallToolResult) *wireTask {
	v, ok := res.Meta[metaKeyCreated]
	if !ok {
		return nil
	}
	if w, ok := v.(*wireTask); ok {
		return w
	}
	b, err := json.Marshal(v) // a result that went through JSON
	if err != nil {
		return nil
	}
	var w wireTask
	if json.Unmarshal(b, &w) != nil || w.TaskID == "" {
		return nil
	}
	w.ResultType = resultTypeTask
	return &w
}

// run does the work of the task with the given ID and stores its outcome.
// Work whose task was cancelled between its reservation and now does not
// start: the client has been told the task is cancelled. (Work whose
// manager shut down meanwhile starts with its context ended, as Shutdown
// says.)
func (m *Manager) run(r *reservation, id string, work mcpkit.Handler, req *mcpkit.Request) {
	defer r.release()
	ctx, cancel := r.ctx, r.cancel

	var res *mcp.CallToolResult
	var err error
	if !errors.Is(context.Cause(ctx), errCancelled) {
		done := make(chan struct{})
		heartbeat := make(chan struct{})
		go func() {
			defer close(heartbeat)
			m.renew(ctx, cancel, id, done)
		}()
		status := &statusWriter{m: m, id: id, ctx: context.WithoutCancel(ctx)}
		res, err = serve(mcpkit.WatchProgress(ctx, status.report), work, req)
		close(done)
		<-heartbeat
		status.stop()
	}

	var outcome func(*Task)
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errHandedOver) && (err != nil || res == nil || res.IsError):
		// Stopped by the hand-over, not finished: another replica runs
		// the round again (see takeOver). A result that made it is kept.
		outcome = func(t *Task) {
			t.StatusMessage = handedOverMessage
			t.UpdatedAt, t.LeaseUntil = time.Now(), time.Time{}
		}
	case errors.Is(cause, errShutdown):
		outcome = func(t *Task) {
			m.end(t, Failed, "the server shut down before the task finished", nil,
				&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "task interrupted: the server shut down"})
		}
	case errors.Is(cause, errCancelled), errors.Is(cause, errVanished):
		return // the task is terminal or gone already
	case err == nil && res != nil && res.InputRequests != nil:
		outcome = m.park(res)
	default:
		outcome = m.outcome(req, res, err)
	}
	// A fresh context: the task's has ended, and the outcome must be stored.
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), m.lease)
	defer scancel()
	finish := func(outcome func(*Task)) error {
		_, err := m.store.Update(sctx, id, func(t *Task) error {
			if !t.Status.Terminal() {
				outcome(t)
			}
			return nil
		})
		return err
	}
	err = finish(outcome)
	if errors.Is(err, ErrStoreFull) {
		// The result, or the input requests, do not fit: the task fails
		// rather than run on as working until its lease runs out.
		m.logger.Warn("tasks: store full, outcome dropped", "task", id)
		e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "task result too large for the task store"}
		err = finish(func(t *Task) { m.end(t, Failed, e.Message, nil, e) })
	}
	if err != nil {
		m.logger.Error("tasks: store", "op", "finish", "task", id, "err", err)
	}
}

// outcome returns what makes a task terminal after its work returned res
// and err: the server's error table decides between completed and failed.
func (m *Manager) outcome(req *mcpkit.Request, res *mcp.CallToolResult, err error) func(*Task) {
	wire, werr := mcpkit.WireResult(req.Tool.Name, res, err, req.ProtocolVersion())
	if werr != nil {
		var e *jsonrpc.Error
		if !errors.As(werr, &e) {
			e = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: werr.Error()}
		}
		return func(t *Task) { m.end(t, Failed, e.Message, nil, e) }
	}
	b, merr := json.Marshal(wire)
	if merr != nil {
		e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "task result cannot be sent: " + merr.Error()}
		return func(t *Task) { m.end(t, Failed, "the result cannot be sent", nil, e) }
	}
	return func(t *Task) { m.end(t, Completed, "", b, nil) }
}

// park returns what makes a task wait for the input its work asked for in
// res (an input_required result, SEP-2322): nobody runs it until a
// tasks/update answers every request, so it holds no lease.
func (m *Manager) park(res *mcp.CallToolResult) func(*Task) {
	b, err := json.Marshal(res.InputRequests)
	if err != nil {
		e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "task input requests cannot be sent: " + err.Error()}
		return func(t *Task) { m.end(t, Failed, "the input requests cannot be sent", nil, e) }
	}
	return func(t *Task) {
		t.Status, t.StatusMessage = InputRequired, "waiting for input"
		t.InputRequests, t.InputResponses, t.RequestState = b, nil, res.RequestState
		t.UpdatedAt, t.LeaseUntil = time.Now(), time.Time{}
	}
}

// serve runs work, turning a panic into a [*mcpkit.PanicError] as the
// server does.
func serve(ctx context.Context, work mcpkit.Handler, req *mcpkit.Request) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			if pe, ok := v.(*mcpkit.PanicError); ok {
				err = pe
			} else {
				err = mcpkit.NewPanicError(v)
			}
		}
	}()
	return work.ServeTool(ctx, req)
}

// renew extends the lease of a running task every third of the lease
// until done is closed, and stops the work when the task was cancelled
// (possibly on another replica) or has left the store.
func (m *Manager) renew(ctx context.Context, cancel context.CancelCauseFunc, id string, done <-chan struct{}) {
	tick := time.NewTicker(m.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t, err := m.store.Update(ctx, id, func(t *Task) error {
			if !t.Status.Terminal() {
				t.LeaseUntil = time.Now().Add(m.lease)
			}
			return nil
		})
		switch {
		case errors.Is(err, ErrNotFound):
			cancel(errVanished)
			return
		case err != nil:
			m.logger.Error("tasks: store", "op", "renew", "task", id, "err", err)
		case t.Status.Terminal():
			cancel(errCancelled)
			return
		}
	}
}
