package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/schema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Draining: a replica about to stop stops taking work, lets the work it
// took finish, and hands on what it cannot finish, so that a rolling
// restart fails no call. See [Server.Drain].

// ErrDraining is in the chain of the error of a call refused because its
// server is draining (see [Server.Drain]).
var ErrDraining = errors.New("mcpkit: server draining")

// MetaKeyRetryAfter is the key, in the _meta of an error result, of how
// many milliseconds the client should wait before it tries the call again:
// a limit's refusal, or a draining server's.
const MetaKeyRetryAfter = "io.github.mcpkit/retryAfterMs"

// DrainRetryAfter is the retry hint of a call refused by a draining server:
// the client may try again at once elsewhere (another replica), or after
// this long where it is.
const DrainRetryAfter = time.Second

// A DrainingError is the error of a call refused because its server is
// draining. Its class is [Retryable]: the call did not start, and another
// replica can serve it. Its result's _meta carries the retry hint under
// [MetaKeyRetryAfter]. It wraps [ErrDraining].
type DrainingError struct {
	// RetryAfter is how long the client should wait before it tries again
	// on the same server.
	RetryAfter time.Duration
}

func (e *DrainingError) Error() string {
	return "the server is shutting down and takes no new calls; try again (another replica will serve it)"
}

// Unwrap returns [ErrDraining].
func (e *DrainingError) Unwrap() error { return ErrDraining }

// ErrorClass returns [Retryable].
func (*DrainingError) ErrorClass() ErrorClass { return Retryable }

// ResultMeta returns the retry hint, in milliseconds, under [MetaKeyRetryAfter].
func (e *DrainingError) ResultMeta() mcp.Meta {
	return mcp.Meta{MetaKeyRetryAfter: (e.RetryAfter + time.Millisecond - 1).Milliseconds()}
}

// drainer is a Server's drain state: whether it drains, the calls it
// serves, and what must happen when it begins.
type drainer struct {
	mu         sync.Mutex
	draining   bool
	calls      int                           // calls admitted and not yet answered
	idle       chan struct{}                 // closed when calls drops to zero while draining
	streams    context.Context               // ended once the drain waits for no call (see streamsDone)
	endStreams context.CancelFunc            // ends streams
	hooks      []func(context.Context) error // see RegisterOnDrain
	hooksRun   chan struct{}                 // closed when the hooks have returned
	hookErr    error                         // what they returned
}

// streamsDone returns a context that ends when the streams must end: once
// the drain has no call left to wait for, or gave up waiting. They end
// then, not when the drain begins, because a session's calls in flight
// (before 2026-07-28) need its GET stream: its client takes the stream's
// end for the session's.
func (d *drainer) streamsDone() context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.streamsLocked()
}

func (d *drainer) streamsLocked() context.Context {
	if d.streams == nil {
		d.streams, d.endStreams = context.WithCancel(context.Background())
	}
	return d.streams
}

// enter admits a call, unless the server drains.
func (d *drainer) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.calls++
	return true
}

// add counts a request served whether or not the server drains.
func (d *drainer) add() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
}

// leave ends a call that enter admitted, or add counted.
func (d *drainer) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls--
	if d.calls == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
	}
}

// isDraining reports whether the drain has begun.
func (d *drainer) isDraining() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.draining
}

// RegisterOnDrain registers f to run when [Server.Drain] is first called,
// alongside the calls in flight, with Drain's context; Drain waits for it
// and reports its error. It is where work that outlives a call (background
// jobs, streams of one's own, tasks: tasks.Manager.Attach registers its
// hand-over here) is stopped or handed to another replica. A panic of f
// is its error, a [*PanicError]. A function registered once the drain has
// begun runs at once, on a goroutine of its own, and its error is lost.
func (s *Server) RegisterOnDrain(f func(ctx context.Context) error) {
	if f == nil {
		panic("mcpkit: RegisterOnDrain: nil function")
	}
	d := &s.drain
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		go func() { _ = runHook(context.Background(), f) }()
		return
	}
	d.hooks = append(d.hooks, f)
}

// Drain makes s stop taking work and waits until the work it took is done,
// before the process exits (a rolling restart, a scale-down). From the
// moment it is called:
//
//   - the handler of [Server.ReadinessHandler] answers 503, so that a load
//     balancer that checks it sends s no more;
//   - a new tools/call (task creation included), prompts/get or
//     resources/read is refused with a retryable error that another
//     replica can serve (for a prompt or a read, a JSON-RPC error -32603
//     whose data carries the class and the retry hint): over
//     [Server.HTTPHandler], a request outside a session is answered 503
//     with Retry-After before any work (a proxy can pass it to another
//     replica unseen: nginx's proxy_next_upstream http_503); elsewhere
//     (sessions, stdio, in-memory) the call gets an error result of class
//     [Retryable] whose error is a [*DrainingError], with its retry hint in
//     _meta;
//   - calls already admitted run on until they finish;
//   - listen streams end once no call is left in flight (or ctx ends): a
//     subscriptions/listen request is answered with its result, which ends
//     it cleanly, and a GET stream of a session (before 2026-07-28) ends
//     its response;
//   - the functions given to [Server.RegisterOnDrain] run, with ctx
//     (tasks.Manager hands the tasks it runs to another replica), and the
//     servers s mounts ([Server.Mount]) drain alongside.
//
// Drain returns nil once every admitted call has been answered and every
// such function has returned, or an error naming what was left when ctx
// ended first (the calls still running, the functions' errors). Calling it
// again waits again; s never serves new calls after. Drain does not close
// listeners or sessions: call [http.Server.Shutdown] after it (see
// docs/deployment.md).
func (s *Server) Drain(ctx context.Context) error {
	// The servers s mounts drain with it: their work goes away with s's
	// process (a child drained twice, through two parents, waits twice).
	var children []func(context.Context) error
	for _, src := range s.state.Load().sources {
		if mv, ok := src.(*mountView); ok {
			children = append(children, mv.m.child.Drain)
		}
	}
	d := &s.drain
	d.mu.Lock()
	first := !d.draining
	d.draining = true
	d.streamsLocked()
	if first && len(d.hooks)+len(children) == 0 {
		d.hooksRun = closed
	} else if first {
		d.hooksRun = make(chan struct{})
		hooks := append(slices.Clone(d.hooks), children...)
		go func() {
			errs := make([]error, len(hooks))
			var wg sync.WaitGroup
			for i, f := range hooks {
				wg.Go(func() { errs[i] = runHook(ctx, f) })
			}
			wg.Wait()
			d.mu.Lock()
			d.hookErr = errors.Join(errs...)
			d.mu.Unlock()
			close(d.hooksRun)
		}()
	}
	idle := d.idle
	if d.calls == 0 {
		idle = closed
	} else if idle == nil {
		d.idle = make(chan struct{})
		idle = d.idle
	}
	hooksRun := d.hooksRun
	d.mu.Unlock()

	defer d.endStreams()
	// What is done already counts, however ctx is: only what is left
	// when ctx has ended is an error (a select between two ready cases
	// picks either).
	select {
	case <-idle:
	default:
		select {
		case <-idle:
		case <-ctx.Done():
			d.mu.Lock()
			n := d.calls
			d.mu.Unlock()
			return fmt.Errorf("mcpkit: drain: %d %s still running: %w", n, plural(n, "call", "calls"), context.Cause(ctx))
		}
	}
	d.endStreams()
	select {
	case <-hooksRun:
	default:
		select {
		case <-hooksRun:
		case <-ctx.Done():
			return fmt.Errorf("mcpkit: drain: the functions registered with RegisterOnDrain are still running: %w", context.Cause(ctx))
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hookErr != nil {
		return fmt.Errorf("mcpkit: drain: %w", d.hookErr)
	}
	return nil
}

// runHook runs f, a function given to RegisterOnDrain; its panic is its
// error, so that it fails the drain, not the process in mid-drain.
func runHook(ctx context.Context, f func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = NewPanicError(v)
		}
	}()
	return f(ctx)
}

// closed is a channel closed from the start.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ReadinessHandler returns an [http.Handler] for a load balancer's
// readiness check: it answers 200 "ready" until [Server.Drain] is called,
// then 503 "draining", to every method.
func (s *Server) ReadinessHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if s.drain.isDraining() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ready\n"))
	})
}

// admittedKey marks the context of an HTTP request that drainGate admitted,
// with an *atomic.Bool set once the request is answered: until then, its
// calls are counted already. (A session's calls run on a context that holds
// the values of the request that opened it, answered long ago.)
type admittedKey struct{}

// drainGate returns h, refusing new HTTP requests while s drains and
// counting those it admits as calls in flight. A request of a session (the
// session lives here: it cannot be served elsewhere) passes, counted too,
// its calls judged one by one (see gate). A stream (a GET, a subscriptions/listen)
// is refused once the drain has begun, and is not waited for: it ends
// when the calls in flight have (see streamsDone and gate).
func (s *Server) drainGate(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := &s.drain
		switch {
		case r.Method == http.MethodGet:
			if d.isDraining() {
				refuseDraining(w)
				return
			}
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(d.streamsDone(), cancel)()
			h.ServeHTTP(w, r.WithContext(ctx))
		case r.Method != http.MethodPost:
			h.ServeHTTP(w, r)
		case r.Header.Get(sessionIDHeader) != "":
			// Served, and waited for until its response is written, so
			// that the session's GET stream does not end first.
			d.add()
			defer d.leave()
			h.ServeHTTP(w, r)
		case r.Header.Get("Mcp-Method") == "subscriptions/listen":
			if d.isDraining() {
				refuseDraining(w)
				return
			}
			h.ServeHTTP(w, r)
		default:
			if !d.enter() {
				if _, ok := headerKind(r.Header.Get("Mcp-Method")); ok {
					s.observeByHeaders(r, DecisionDraining, nil, drainingError())
				}
				refuseDraining(w)
				return
			}
			defer d.leave()
			answered := new(atomic.Bool)
			defer answered.Store(true)
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), admittedKey{}, answered)))
		}
	})
}

// drainingError is the error of a call a draining server refuses.
func drainingError() error {
	return &ToolError{Err: &DrainingError{RetryAfter: DrainRetryAfter}, Class: Retryable}
}

// refuseDraining answers a request that a draining server does not take.
func refuseDraining(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(DrainRetryAfter/time.Second)))
	http.Error(w, "server draining; retry on another replica", http.StatusServiceUnavailable)
}

// gate is the SDK server's outermost receiving middleware of s: it refuses
// a tools/call while s drains, unless its HTTP request was admitted before
// (see drainGate), counts the calls it admits, and ends a
// subscriptions/listen when the drain's streams end, by ending the context
// of its handler, which then answers it.
func (s *Server) gate(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/call":
			if answered, ok := ctx.Value(admittedKey{}).(*atomic.Bool); ok && !answered.Load() {
				break
			}
			if !s.drain.enter() {
				name := ""
				r, ok := req.(*mcp.CallToolRequest)
				if ok && r.Params != nil {
					name = r.Params.Name
				}
				refusal := drainingError()
				if obs := s.observing(); obs != nil && ok && r.Params != nil {
					call := &Request{Arguments: r.Params.Arguments, Call: r}
					observeUnrouted(ctx, obs, DecisionDraining, name, nil, call, refusal, time.Now())
				}
				res, err := wireResult(name, refusal)
				if err != nil {
					return nil, err
				}
				return res, nil
			}
			defer s.drain.leave()
		case "prompts/get", "resources/read":
			// Refused as a call is: the prompt or resource may be had from
			// another replica.
			if answered, ok := ctx.Value(admittedKey{}).(*atomic.Bool); ok && !answered.Load() {
				break
			}
			if !s.drain.enter() {
				kind, name := KindPrompt, ""
				switch r := req.(type) {
				case *mcp.GetPromptRequest:
					if r.Params != nil {
						name = r.Params.Name
					}
				case *mcp.ReadResourceRequest:
					kind = KindResource
					if r.Params != nil {
						name = r.Params.URI
					}
				}
				refusal := drainingError()
				if obs := s.observing(); obs != nil {
					c := requestCaller{req}
					ev := &Event{Decision: DecisionDraining, Method: method, Name: schema.Clip(name), Caller: c, Principal: principalOf(c), Err: refusal, Start: time.Now()}
					ev.Outcome, ev.Class = Classify(nil, refusal)
					observe(ctx, obs, ev)
				}
				return nil, targetWireError(kind, name, refusal)
			}
			defer s.drain.leave()
		case "subscriptions/listen":
			ctx2, cancel := context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(s.drain.streamsDone(), cancel)()
			ctx = ctx2
		}
		return next(ctx, method, req)
	}
}
