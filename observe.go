package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Decision is what a server decided about a tools/call, a prompts/get or
// a resources/read: refused it, found nothing for it, found it at fault, or
// served it.
type Decision string

// The decisions an [Event] reports.
const (
	// DecisionRefused: a token requirement ([RequireToken],
	// [RequireScopes]) refused the call, before its body was read (a
	// 2026-07-28 call over HTTP whose headers decide it) or in its chain.
	// Err holds the [*InsufficientScopeError].
	DecisionRefused Decision = "refused"
	// DecisionUnknown: the name reaches no tool (or prompt, or the URI no
	// resource or template) the caller may see (never registered, hidden, or disabled alike; the client gets
	// one answer for all three).
	DecisionUnknown Decision = "unknown"
	// DecisionInvalid: a prompts/get lacks a required argument; its chain
	// did not run.
	DecisionInvalid Decision = "invalid"
	// DecisionHeaderMismatch: the call's Mcp-Param headers disagree with
	// its arguments (a 2026-07-28 call over HTTP); the chain did not run.
	DecisionHeaderMismatch Decision = "header_mismatch"
	// DecisionDraining: the server was draining (see [Server.Drain]) and
	// refused the call, retryably, before routing it. A refusal made
	// before the body was read is observed only when the headers name the
	// method (2026-07-28).
	DecisionDraining Decision = "draining"
	// DecisionServed: the tool's chain ran; Outcome and Class say how it
	// ended, and Err what it returned (limits, timeouts, validation and
	// the tool's own errors alike).
	DecisionServed Decision = "served"
)

// An Event is one decision about one tools/call, prompts/get or
// resources/read, as an [Observer] is told of it. An observer must not keep it, nor its
// requests, beyond its call: copy what it needs.
type Event struct {
	// Decision is what the server decided.
	Decision Decision
	// Method is the request's method: "tools/call", "prompts/get",
	// "resources/read" or "completion/complete".
	Method string
	// Name is the name the request named; for a resources/read, the URI
	// it read, as the caller wrote it (a template's variables included);
	// for a completion/complete, the name of the prompt or the URI (or
	// template text) its reference names.
	Name string
	// Tool is the tool the call reached (its [Tool.ID] is the identity
	// every rule keys on), or nil when it reached none. For a refusal
	// before the body was read (made only when every version the caller
	// sees is refused), it is the version an unpinned call reaches: a
	// version pinned in the body is not read.
	Tool *Tool
	// Caller is who sent the call: its token, headers, protocol version;
	// Principal is who that is, as [Principal] says it.
	Caller    Caller
	Principal string
	// Request is the call, or nil for a refusal made before its body was
	// read. Its Arguments are the caller's: an observer that records them
	// redacts them first.
	Request *Request
	// Result is what a tools/call's chain returned, for DecisionServed
	// (nil with an error); an input_required result (its InputRequests
	// set) asked the client for input, a confirmation say. It is shared:
	// an observer must not modify it.
	Result *mcp.CallToolResult
	// Prompt and PromptRequest are, for a prompts/get, the prompt it
	// reached (nil: none) and the request.
	Prompt        *Prompt
	PromptRequest *PromptRequest
	// Resource or Template is, for a resources/read, the resource or the
	// URI template it reached (both nil: none), and ResourceRequest the
	// request (nil for a refusal made before its body was read).
	Resource        *Resource
	Template        *ResourceTemplate
	ResourceRequest *ResourceRequest
	// CompleteRequest is, for a completion/complete, the request; its
	// Prompt or Template is what the reference reached (Prompt or
	// Template above too; both nil: nothing).
	CompleteRequest *CompleteRequest
	// Outcome and Class are [Classify]'s verdict on what the chain
	// returned (DecisionServed), or on the refusal.
	Outcome Outcome
	Class   ErrorClass
	// Err is the refusal or the chain's error, before the server maps it
	// onto the wire (so before masking by the server, but after any
	// masking middleware in the chain), or nil.
	Err error
	// Start is when the server began on the call and Duration how long
	// it took to decide (for DecisionServed, to serve).
	Start    time.Time
	Duration time.Duration
}

// An Observer is told of every decision a [Server] makes about a
// tools/call, prompts/get or resources/read it routes (see [Server.Observe]).
type Observer interface {
	// Observe is called once per decision, on the call's goroutine,
	// after the decision and before the answer is written. It must not
	// block for long: an observer that writes records somewhere slow
	// queues them (see middleware.Audit).
	Observe(ctx context.Context, ev *Event)
}

// ObserverFunc adapts a function to an [Observer].
type ObserverFunc func(ctx context.Context, ev *Event)

// Observe calls f(ctx, ev).
func (f ObserverFunc) Observe(ctx context.Context, ev *Event) { f(ctx, ev) }

// Observe adds observers, told of every decision s makes about a tools/call
// from then on, in the order added: each refusal, whether a token
// requirement refused the call before its body was read (2026-07-28 over
// HTTP) or in its chain; each name that reaches no tool the caller may see;
// each call whose Mcp-Param headers are at fault; and the outcome of each
// call served, with the tool it reached; and the same of each prompts/get
// and each resources/read. It is the one place to audit a server: unlike a
// middleware, it also sees what is decided before any middleware runs.
// Tools, prompts and resources registered on the SDK server directly are
// not mcpkit's, and are not observed. An observer that panics is logged and skipped: the call goes
// on.
func (s *Server) Observe(observers ...Observer) {
	observers = slices.DeleteFunc(slices.Clone(observers), func(o Observer) bool { return o == nil })
	if len(observers) == 0 {
		return
	}
	for i, o := range observers {
		observers[i] = &guarded{o: o, logger: s.logger}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []Observer
	if p := s.observers.Load(); p != nil {
		all = slices.Clone(*p)
	}
	all = append(all, observers...)
	s.observers.Store(&all)
}

// guarded is an observer whose panic is logged, not raised: an audit's
// failure must not fail, or crash, the call it records.
type guarded struct {
	o      Observer
	logger *slog.Logger
}

func (g *guarded) Observe(ctx context.Context, ev *Event) {
	defer func() {
		if v := recover(); v != nil {
			pe := NewPanicError(v)
			g.logger.Error("mcpkit: observer panicked", "name", ev.Name, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
		}
	}()
	g.o.Observe(ctx, ev)
}

// observing returns s's observers, or nil when there are none.
func (s *Server) observing() []Observer {
	if p := s.observers.Load(); p != nil {
		return *p
	}
	return nil
}

// observe tells every observer of ev.
func observe(ctx context.Context, obs []Observer, ev *Event) {
	for _, o := range obs {
		o.Observe(ctx, ev)
	}
}

// observeRefusedEarly tells s's observers of a request that its headers
// alone refused with err, for e (a tool, prompt, resource or template).
func (s *Server) observeRefusedEarly(r *http.Request, e *entry, err *InsufficientScopeError) {
	// As the chain's requirement returns it (see requirement.ServeTool).
	s.observeByHeaders(r, DecisionRefused, e, &ToolError{Err: err, Class: Fatal})
}

// observeByHeaders tells s's observers of a request (a tools/call,
// prompts/get or resources/read, as its Mcp-Method header says) that its
// headers alone decided (d), for e (nil: none), with err.
func (s *Server) observeByHeaders(r *http.Request, d Decision, e *entry, err error) {
	obs := s.observing()
	if obs == nil {
		return
	}
	c := headerCaller{info: auth.TokenInfoFromContext(r.Context()), header: r.Header}
	ev := &Event{
		Decision:  d,
		Method:    r.Header.Get("Mcp-Method"),
		Name:      r.Header.Get("Mcp-Name"),
		Caller:    c,
		Principal: principalOf(c),
		Err:       err,
		Start:     time.Now(),
	}
	ev.Outcome, ev.Class = Classify(nil, err)
	ev.reached(e)
	observe(r.Context(), obs, ev)
}

// reached sets what ev says was reached: e's tool, prompt, resource or
// template (nil: nothing).
func (ev *Event) reached(e *entry) {
	if e == nil {
		return
	}
	ev.Tool, ev.Prompt, ev.Resource, ev.Template = e.tool, e.prompt, e.resource, e.template
}

// observeUnrouted tells obs of req, a call that did not reach its chain:
// named name, it reached e (nil: nothing), and was answered err.
func observeUnrouted(ctx context.Context, obs []Observer, d Decision, name string, e *entry, req *Request, err error, start time.Time) {
	ev := &Event{
		Decision:  d,
		Method:    "tools/call",
		Name:      name,
		Caller:    req,
		Principal: Principal(req),
		Request:   req,
		Err:       err,
		Start:     start,
		Duration:  time.Since(start),
	}
	ev.Outcome, ev.Class = Classify(nil, err)
	if e != nil {
		ev.Tool = e.tool
	}
	observe(ctx, obs, ev)
}

// observeServed tells obs of req, served by e's chain, which returned res
// and err.
func observeServed(ctx context.Context, obs []Observer, name string, e *entry, req *Request, res *mcp.CallToolResult, err error, start time.Time) {
	ev := &Event{
		Decision:  DecisionServed,
		Result:    res,
		Method:    "tools/call",
		Name:      name,
		Tool:      e.tool,
		Caller:    req,
		Principal: Principal(req),
		Request:   req,
		Err:       err,
		Start:     start,
		Duration:  time.Since(start),
	}
	var ise *InsufficientScopeError
	if errors.As(err, &ise) {
		ev.Decision = DecisionRefused
	}
	ev.Outcome, ev.Class = Classify(res, err)
	observe(ctx, obs, ev)
}

// observeTarget tells obs of req, a prompts/get, resources/read or
// completion/complete (by its type) of name (a URI for a read; the name
// or URI its reference names for a completion) that reached e (nil:
// nothing), decided d; for DecisionServed, err is what its chain (its
// completer) returned. A served prompts/get or read refused for a scope
// is a refusal.
func observeTarget(ctx context.Context, obs []Observer, d Decision, name string, e *entry, req Caller, err error, start time.Time) {
	ev := &Event{
		Decision:  d,
		Name:      name,
		Caller:    req,
		Principal: principalOf(req),
		Err:       err,
		Start:     start,
		Duration:  time.Since(start),
	}
	switch r := req.(type) {
	case *PromptRequest:
		ev.Method, ev.PromptRequest = "prompts/get", r
	case *ResourceRequest:
		ev.Method, ev.ResourceRequest = "resources/read", r
	case *CompleteRequest:
		ev.Method, ev.CompleteRequest = "completion/complete", r
	}
	var ise *InsufficientScopeError
	if d == DecisionServed && ev.CompleteRequest == nil && errors.As(err, &ise) {
		ev.Decision = DecisionRefused
	}
	ev.Outcome, ev.Class = Classify(nil, err)
	ev.reached(e)
	observe(ctx, obs, ev)
}
