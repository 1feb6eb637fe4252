package middleware

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// ErrCircuitOpen is wrapped by every [*CircuitOpenError], for errors.Is.
var ErrCircuitOpen = errors.New("middleware: circuit open")

// A CircuitState is the state of one circuit of a [CircuitBreaker].
type CircuitState int

const (
	// CircuitClosed lets calls through and counts their failures.
	CircuitClosed CircuitState = iota
	// CircuitOpen rejects every call until its cooldown has passed.
	CircuitOpen
	// CircuitHalfOpen lets one trial call through, whose outcome closes
	// the circuit or opens it again, and rejects the others meanwhile.
	CircuitHalfOpen
)

func (s CircuitState) String() string {
	switch s {
	case CircuitClosed:
		return "closed"
	case CircuitOpen:
		return "open"
	case CircuitHalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("CircuitState(%d)", int(s))
}

// A CircuitOpenError reports a call rejected by [CircuitBreaker] because
// its circuit is open, or half-open with a trial call under way. It
// unwraps to [ErrCircuitOpen].
type CircuitOpenError struct {
	// Tool is the name of the tool called, of the prompt when Kind is
	// [mcpkit.KindPrompt], or the URI of the resource (the text of the
	// template) when Kind is [mcpkit.KindResource].
	Tool string
	// Kind is what was refused: a tool (the zero value), a prompt or a
	// resource.
	Kind mcpkit.Kind
	// RetryAfter is how long until the circuit lets a trial call through;
	// zero while a trial call is under way, whose outcome decides.
	RetryAfter time.Duration
}

func (e *CircuitOpenError) Error() string {
	if e.RetryAfter <= 0 {
		return fmt.Sprintf("%v %q is unavailable after repeated failures: try again later", e.Kind, e.Tool)
	}
	d := (e.RetryAfter + time.Millisecond - 1).Truncate(time.Millisecond)
	return fmt.Sprintf("%v %q is unavailable after repeated failures: try again in %v", e.Kind, e.Tool, d)
}

// Unwrap returns [ErrCircuitOpen].
func (e *CircuitOpenError) Unwrap() error { return ErrCircuitOpen }

// ResultMeta puts the retry delay, in whole milliseconds rounded up, in the
// result's _meta under [MetaKeyRetryAfter], when it is known.
func (e *CircuitOpenError) ResultMeta() mcp.Meta {
	if e.RetryAfter <= 0 {
		return nil
	}
	return mcp.Meta{MetaKeyRetryAfter: (e.RetryAfter + time.Millisecond - 1).Milliseconds()}
}

// Defaults of [CircuitBreakerOptions].
const (
	DefaultFailureRate = 0.5
	DefaultWindow      = 20
	DefaultMinCalls    = 10
	DefaultCooldown    = 30 * time.Second
)

// CircuitBreakerOptions configures [CircuitBreaker]. A nil
// *CircuitBreakerOptions means the defaults.
type CircuitBreakerOptions struct {
	// Key returns the circuit a call belongs to. Nil means the name of
	// the tool's identity ([mcpkit.Tool.ID]): one circuit per tool, which
	// its versions, its deprecated aliases and the tools derived from it
	// share, since they call the same code. Keys should come from a
	// bounded set (tools, tenants, upstream hosts): each has a small
	// record.
	Key func(*mcpkit.Request) string

	// TargetKey returns the circuit a prompts/get or a resources/read
	// belongs to. Nil means one circuit per prompt, resource or template:
	// its kind, ":" and its [mcpkit.Target.Key] ("prompt:greet",
	// "resource:file:///log"), whatever Key says of tools.
	TargetKey func(mcpkit.Target, mcpkit.Caller) string

	// FailureRate is the share of failed calls, among the counted calls
	// of the window, at which the circuit opens. Zero means
	// DefaultFailureRate; it must be at most 1.
	FailureRate float64

	// Window is the number of most recent counted calls the failure rate
	// is taken over. Zero means DefaultWindow.
	Window int

	// MinCalls is the number of counted calls the window must hold before
	// the circuit can open, so that the first failure of a quiet tool does
	// not open it. Zero means DefaultMinCalls, or Window if that is
	// smaller.
	MinCalls int

	// Cooldown is how long an open circuit rejects calls before it lets a
	// trial call through. Zero means DefaultCooldown.
	Cooldown time.Duration

	// OnStateChange, if set, is called on every change of a circuit's
	// state, for metrics and logs: with the key, the old state and the
	// new. Calls for one key are made in the order of the changes, with
	// that circuit locked, so it must return quickly.
	OnStateChange func(key string, from, to CircuitState)
}

// CircuitBreaker returns a Middleware that stops calling a tool that keeps
// failing, so that a broken dependency is given time to recover and the
// model learns at once that the tool is down instead of waiting for each
// call to fail.
//
// Each circuit (by default, one per tool, whatever name a call reaches it
// by; see [CircuitBreakerOptions.Key]) starts closed and counts the outcomes of the calls it lets through, over
// a window of the last [CircuitBreakerOptions.Window] counted calls. What
// counts is decided by [mcpkit.Classify]:
//
//   - failures are server faults: internal errors (OutcomeError, masked
//     or not), panics (OutcomePanic, also when they pass through the
//     breaker as panics, which it records and raises again) and timeouts
//     (OutcomeTimeout);
//   - successes are results without isError (OutcomeOK);
//   - nothing else counts: not tool errors (OutcomeToolError, which
//     includes invalid arguments, results with isError set, and
//     rejections by limits inside the breaker), which are answers the
//     model caused or can act on; not JSON-RPC errors
//     (OutcomeProtocolError), which answer the form of a request (an
//     unknown tool, invalid parameters), not the tool's health; and not
//     a call whose context ended before it returned (the client
//     cancelled it), whose outcome says nothing about the tool.
//
// Once the window holds at least [CircuitBreakerOptions.MinCalls] counted
// calls and the share of failures among them reaches
// [CircuitBreakerOptions.FailureRate], the circuit opens: every call is
// rejected at once, without reaching the rest of the chain, with a
// retryable [*mcpkit.ToolError] wrapping a [*CircuitOpenError] whose text
// reads `tool "name" is unavailable after repeated failures: try again in
// 30s` and whose _meta carries the delay under [MetaKeyRetryAfter]. After
// [CircuitBreakerOptions.Cooldown], the circuit is half-open: the next call
// goes through as a trial, alone (the calls that arrive meanwhile are
// rejected, with no delay known); a success closes the circuit with an
// empty window, a failure opens it for another cooldown, and an outcome
// that does not count leaves it half-open for the next call to try. Calls
// let through in one state that end in another are not counted.
//
// CircuitBreaker serves prompts and resources too, with circuits of their
// own (see [CircuitBreakerOptions.TargetKey]): a prompts/get or a
// resources/read that fails counts as a call that fails, one that
// succeeds as a success, and a rejection is the JSON-RPC error -32603
// `resource "uri" is unavailable after repeated failures: ...`, its class
// and delay in the error's data.
//
// The state is in memory, per server replica: each replica learns on its
// own that a dependency is down, which takes MinCalls calls at most.
//
// CircuitBreaker belongs inside [MaskErrors] and outside the other limits
// and [Timeout]: a rejected call costs nothing further, not even a rate
// token or a slot, and time limits inside it are what turn a hanging
// dependency into counted timeouts. It panics if FailureRate is above 1
// or negative, or another setting is negative.
func CircuitBreaker(opts *CircuitBreakerOptions) mcpkit.Middleware {
	var o CircuitBreakerOptions
	if opts != nil {
		o = *opts
	}
	if o.FailureRate < 0 || o.FailureRate > 1 || o.Window < 0 || o.MinCalls < 0 || o.Cooldown < 0 {
		panic(fmt.Sprintf("middleware: CircuitBreaker: invalid options: failure rate %v, window %d, min calls %d, cooldown %v",
			o.FailureRate, o.Window, o.MinCalls, o.Cooldown))
	}
	if o.FailureRate == 0 {
		o.FailureRate = DefaultFailureRate
	}
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.MinCalls == 0 {
		o.MinCalls = min(DefaultMinCalls, o.Window)
	}
	o.MinCalls = min(o.MinCalls, o.Window)
	if o.Cooldown == 0 {
		o.Cooldown = DefaultCooldown
	}
	b := &breaker{opts: o}
	return func(next mcpkit.Handler) mcpkit.Handler {
		return &breakerHandler{b: b, next: next, prompts: promptsOf(next), resources: resourcesOf(next)}
	}
}

// breaker is the state of one CircuitBreaker, shared by every tool it
// wraps.
type breaker struct {
	opts     CircuitBreakerOptions
	circuits sync.Map // key -> *circuit; read without a lock

	mu sync.Mutex // held to add or drop circuits
	n  int        // the number of circuits
}

// maxCircuits is the number of circuits past which a new key makes the
// breaker forget closed circuits.
const maxCircuits = 10_000

// A circuit is the state of one key. A healthy circuit is read without
// its lock: word mirrors its state and generation, and quiet says that a
// success would change nothing.
type circuit struct {
	key   string
	word  atomic.Uint64 // gen<<2 | state
	quiet atomic.Bool   // closed, with a full window and no failure in it

	mu       sync.Mutex
	state    CircuitState
	gen      uint64    // counts the changes of state
	until    time.Time // when an open circuit turns half-open
	probing  bool      // a trial call is under way
	window   []bool    // the last outcomes, true for a failure; a ring
	next     int       // where the next outcome goes in window
	calls    int       // outcomes in window
	failures int       // failures in window
}

// The outcomes of a call, as a circuit counts them.
const (
	uncounted = iota
	succeeded
	failed
)

type breakerHandler struct {
	b         *breaker
	next      mcpkit.Handler
	prompts   mcpkit.PromptHandler
	resources mcpkit.ResourceHandler
	targets   targetKeys // the default keys of prompts and resources
}

// LayerSettings shows when the circuit opens, and for how long, in the
// server's Pipeline.
func (h *breakerHandler) LayerSettings() []mcpkit.Setting {
	o := h.b.opts
	return []mcpkit.Setting{
		{Name: "failureRate", Value: strconv.FormatFloat(o.FailureRate, 'g', -1, 64)},
		{Name: "window", Value: strconv.Itoa(o.Window)},
		{Name: "minCalls", Value: strconv.Itoa(o.MinCalls)},
		{Name: "cooldown", Value: o.Cooldown.String()},
	}
}

func (h *breakerHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (res *mcp.CallToolResult, err error) {
	var key string
	if h.b.opts.Key != nil {
		key = h.b.opts.Key(req)
	} else {
		key = req.Tool.ID().Name
	}
	c := h.b.circuit(key)
	gen, probe, retry, ok := c.admit(&h.b.opts)
	if !ok {
		return nil, &mcpkit.ToolError{Err: &CircuitOpenError{Tool: req.Tool.Name, RetryAfter: retry}, Class: mcpkit.Retryable}
	}
	recorded := false
	defer func() {
		if recorded {
			return
		}
		v := recover()
		if v == nil { // runtime.Goexit: let it go on
			c.record(&h.b.opts, gen, probe, uncounted)
			return
		}
		c.record(&h.b.opts, gen, probe, failed)
		panic(mcpkit.NewPanicError(v))
	}()
	res, err = h.next.ServeTool(ctx, req)
	recorded = true
	c.record(&h.b.opts, gen, probe, outcomeOf(ctx, res, err))
	return res, err
}

func (h *breakerHandler) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	return serveTarget(ctx, h, req.Prompt, req, req.Prompt.Name, h.prompts.ServePrompt)
}

func (h *breakerHandler) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	return serveTarget(ctx, h, resourceTarget(req), req, resourceName(req), h.resources.ServeResource)
}

// serveTarget serves req, a request of t named name, through the circuit
// of t as ServeTool serves a call.
func serveTarget[Req mcpkit.Caller, Res any](ctx context.Context, h *breakerHandler, t mcpkit.Target, req Req, name string,
	serve func(context.Context, Req) (*Res, error)) (res *Res, err error) {
	var key string
	if h.b.opts.TargetKey != nil {
		key = h.b.opts.TargetKey(t, req)
	} else {
		key = h.targets.of(t)
	}
	c := h.b.circuit(key)
	gen, probe, retry, ok := c.admit(&h.b.opts)
	if !ok {
		return nil, &mcpkit.ToolError{Err: &CircuitOpenError{Tool: name, Kind: t.Kind(), RetryAfter: retry}, Class: mcpkit.Retryable}
	}
	recorded := false
	defer func() {
		if recorded {
			return
		}
		v := recover()
		if v == nil {
			c.record(&h.b.opts, gen, probe, uncounted)
			return
		}
		c.record(&h.b.opts, gen, probe, failed)
		panic(mcpkit.NewPanicError(v))
	}()
	res, err = serve(ctx, req)
	recorded = true
	c.record(&h.b.opts, gen, probe, outcomeOf(ctx, nil, err))
	return res, err
}

// outcomeOf says how a circuit counts a call that returned res and err.
func outcomeOf(ctx context.Context, res *mcp.CallToolResult, err error) int {
	if ctx.Err() != nil {
		return uncounted // the caller left: nothing is known of the tool
	}
	switch o, _ := mcpkit.Classify(res, err); o {
	case mcpkit.OutcomeOK:
		return succeeded
	case mcpkit.OutcomeError, mcpkit.OutcomePanic, mcpkit.OutcomeTimeout:
		return failed
	}
	return uncounted
}

// circuit returns the circuit of key, creating it if need be.
func (b *breaker) circuit(key string) *circuit {
	if c, ok := b.circuits.Load(key); ok {
		return c.(*circuit)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.circuits.Load(key); ok {
		return c.(*circuit)
	}
	if b.n >= maxCircuits {
		b.forget()
	}
	c := &circuit{key: key, window: make([]bool, b.opts.Window)}
	b.circuits.Store(key, c)
	b.n++
	return c
}

// forget drops closed circuits, those without failures first, to make room
// for new keys; open and half-open circuits are kept. A call under way on
// a dropped circuit records its outcome there, where nobody reads it. b.mu
// is held.
func (b *breaker) forget() {
	for _, anyFailures := range []bool{false, true} {
		b.circuits.Range(func(k, v any) bool {
			c := v.(*circuit)
			c.mu.Lock()
			drop := c.state == CircuitClosed && (anyFailures || c.failures == 0)
			c.mu.Unlock()
			if drop {
				b.circuits.Delete(k)
				b.n--
			}
			return true
		})
		if b.n < maxCircuits {
			return
		}
	}
}

// admit decides whether a call may go ahead. It returns the generation of
// the state it was let through in and whether it is the trial call of a
// half-open circuit, or, when it may not, how long until a call may.
func (c *circuit) admit(o *CircuitBreakerOptions) (gen uint64, probe bool, retry time.Duration, ok bool) {
	if w := c.word.Load(); CircuitState(w&3) == CircuitClosed {
		return w >> 2, false, 0, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case CircuitClosed:
		return c.gen, false, 0, true
	case CircuitOpen:
		now := time.Now()
		if now.Before(c.until) {
			return 0, false, c.until.Sub(now), false
		}
		c.change(o, CircuitHalfOpen)
	}
	if c.probing {
		return 0, false, 0, false
	}
	c.probing = true
	return c.gen, true, 0, true
}

// record counts the outcome of a call let through in generation gen.
func (c *circuit) record(o *CircuitBreakerOptions, gen uint64, probe bool, outcome int) {
	if !probe && (outcome == uncounted || outcome == succeeded && c.quiet.Load() && c.word.Load()>>2 == gen) {
		return // nothing would change
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return // the state changed since the call began
	}
	if probe {
		c.probing = false
		switch outcome {
		case succeeded:
			c.change(o, CircuitClosed)
		case failed:
			c.open(o)
		}
		return
	}
	if outcome == uncounted {
		return
	}
	if c.calls == len(c.window) {
		if c.window[c.next] {
			c.failures--
		}
	} else {
		c.calls++
	}
	c.window[c.next] = outcome == failed
	if outcome == failed {
		c.failures++
	}
	c.next = (c.next + 1) % len(c.window)
	if c.calls >= o.MinCalls && float64(c.failures) >= o.FailureRate*float64(c.calls) {
		c.open(o)
		return
	}
	c.quiet.Store(c.failures == 0 && c.calls == len(c.window))
}

// open opens the circuit for a cooldown. c.mu is held.
func (c *circuit) open(o *CircuitBreakerOptions) {
	c.until = time.Now().Add(o.Cooldown)
	c.change(o, CircuitOpen)
}

// change moves the circuit to state to, starting a new generation with an
// empty window, and reports the change. c.mu is held.
func (c *circuit) change(o *CircuitBreakerOptions, to CircuitState) {
	from := c.state
	c.state = to
	c.gen++
	c.word.Store(c.gen<<2 | uint64(to))
	c.quiet.Store(false)
	c.probing = false
	clear(c.window)
	c.next, c.calls, c.failures = 0, 0, 0
	if o.OnStateChange != nil {
		o.OnStateChange(c.key, from, to)
	}
}
