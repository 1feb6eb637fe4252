package middleware

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"

	"github.com/mcpkit/mcpkit"
)

// ConcurrencyLimitOptions configures [ConcurrencyLimit]. A nil
// *ConcurrencyLimitOptions means the defaults.
type ConcurrencyLimitOptions struct {
	// Wait is how long a call waits for a free slot before it is rejected.
	// Zero, the default, rejects at once; a negative duration waits as long
	// as the call's context allows.
	Wait time.Duration

	// Key, if set, partitions calls: each key has its own slots, so that,
	// for instance, one user's calls (keyed by [mcpkit.VerifiedPrincipal])
	// never wait for another's. Nil means one key for every call. A key
	// must not be something the caller chooses (a bearer token no
	// verifier checked, a header a client can set): a caller would get
	// fresh slots with each new one.
	Key func(*mcpkit.Request) string

	// TargetKey, if set, partitions prompts/get and resources/read as Key
	// does tools calls (by [mcpkit.VerifiedPrincipal] of the Caller, say).
	// Nil means that they share one set of slots: with no Key, the slots
	// of every call; with a Key, one set apart from the tools' keys.
	TargetKey func(mcpkit.Target, mcpkit.Caller) string

	// RetryAfter is the delay a rejected call is told to wait before
	// trying again, under [MetaKeyRetryAfter] in its result's _meta. No
	// one knows when a slot frees up, so it is a hint for agent loops, not
	// a promise. Zero means [DefaultBusyRetryAfter]; a negative duration
	// gives no hint.
	RetryAfter time.Duration
}

// DefaultBusyRetryAfter is the retry delay that [ConcurrencyLimit] and
// [Bulkhead] suggest to the calls they reject, when their options do not
// say.
const DefaultBusyRetryAfter = time.Second

// ConcurrencyLimit returns a Middleware that lets at most n calls run the
// rest of the chain at once, counted over every tool the middleware wraps
// (and per key, when opts give a Key). A zero or negative n means no limit:
// the middleware adds no layer. To give a tool slots of its own, apply a
// ConcurrencyLimit to it alone with [mcpkit.ForTools].
//
// A call counts from the moment it holds a slot until its handler really
// returns: a call that [Timeout] answered at its deadline keeps its slot
// while its handler runs on, so that handlers ignoring their context cannot
// pile up beyond n.
//
// A call that finds no free slot waits up to [ConcurrencyLimitOptions.Wait]
// for one (by default it does not wait); then it is rejected with a
// retryable [*mcpkit.ToolError] (which wraps [ErrBusy]) whose text reads
// `tool "name" is busy: the limit of 4 concurrent calls is reached; try again later`
// and whose _meta suggests a delay under [MetaKeyRetryAfter]
// ([ConcurrencyLimitOptions.RetryAfter]).
// If the call's context ends while it waits, ConcurrencyLimit returns the
// context's error at once.
//
// The slots are counted with semaphores from golang.org/x/sync/semaphore;
// those of a key exist only while calls hold or wait for them, so the
// memory used is bounded by the calls in flight, not by the number of keys
// ever seen.
//
// ConcurrencyLimit serves prompts and resources too: a prompts/get or a
// resources/read takes a slot as a call does (see
// [ConcurrencyLimitOptions.TargetKey]), and a rejection is the JSON-RPC
// error -32603 `resource "uri" is busy: ...` (`prompt "name" ...`), its
// class and retry hint in the error's data.
//
// ConcurrencyLimit belongs inside [MaskErrors] and outside [Timeout], so
// that the time a call waits for a slot is not taken from its time limit
// (see [RecommendedOptions.Limits]).
func ConcurrencyLimit(n int, opts *ConcurrencyLimitOptions) mcpkit.Middleware {
	c := &concurrency{n: n, sems: make(map[string]*sharedSem)}
	c.retryAfter = DefaultBusyRetryAfter
	if opts != nil {
		c.wait, c.key, c.targetKey = opts.Wait, opts.Key, opts.TargetKey
		if opts.RetryAfter != 0 {
			c.retryAfter = opts.RetryAfter
		}
	}
	if n > 0 {
		c.global = semaphore.NewWeighted(int64(n))
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		if n <= 0 {
			return next
		}
		return &concurrencyHandler{c: c, next: next, prompts: promptsOf(next), resources: resourcesOf(next)}
	}
}

// concurrency is the state of one ConcurrencyLimit, shared by every tool it
// wraps.
type concurrency struct {
	n          int
	wait       time.Duration
	retryAfter time.Duration // <= 0: no hint
	key        func(*mcpkit.Request) string
	targetKey  func(mcpkit.Target, mcpkit.Caller) string
	global     *semaphore.Weighted // the slots when there is no Key

	mu   sync.Mutex
	sems map[string]*sharedSem // by key
}

// sharedSem is a semaphore with the number of calls holding or waiting for
// it, so that it can be dropped when that number falls to zero.
type sharedSem struct {
	sem  *semaphore.Weighted
	refs int
}

type concurrencyHandler struct {
	c         *concurrency
	next      mcpkit.Handler
	prompts   mcpkit.PromptHandler
	resources mcpkit.ResourceHandler
}

// LayerSettings shows the limit in the server's Pipeline.
func (h *concurrencyHandler) LayerSettings() []mcpkit.Setting {
	s := []mcpkit.Setting{{Name: "concurrency", Value: strconv.Itoa(h.c.n)}}
	if h.c.wait > 0 {
		s = append(s, mcpkit.Setting{Name: "wait", Value: h.c.wait.String()})
	}
	if h.c.key != nil {
		s = append(s, mcpkit.Setting{Name: "per", Value: "key"})
	}
	if h.c.targetKey != nil {
		s = append(s, mcpkit.Setting{Name: "targetsPer", Value: "key"})
	}
	return s
}

func (h *concurrencyHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (res *mcp.CallToolResult, err error) {
	c := h.c
	sem, key, shared := c.global, "", (*sharedSem)(nil)
	if c.key != nil {
		key = c.key(req)
		shared = c.get(key)
		sem = shared.sem
	}
	if !sem.TryAcquire(1) {
		if err := c.await(ctx, sem, mcpkit.KindTool, req.Tool.Name); err != nil {
			c.put(key, shared)
			return nil, err
		}
	}
	defer func() { c.done(err, sem, key, shared) }() // also when the rest of the chain panics
	return h.next.ServeTool(ctx, req)
}

func (h *concurrencyHandler) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (res *mcp.GetPromptResult, err error) {
	sem, key, shared, err := h.c.acquireTarget(ctx, req.Prompt, req, req.Prompt.Name)
	if err != nil {
		return nil, err
	}
	defer func() { h.c.done(err, sem, key, shared) }()
	return h.prompts.ServePrompt(ctx, req)
}

func (h *concurrencyHandler) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (res *mcp.ReadResourceResult, err error) {
	sem, key, shared, err := h.c.acquireTarget(ctx, resourceTarget(req), req, resourceName(req))
	if err != nil {
		return nil, err
	}
	defer func() { h.c.done(err, sem, key, shared) }()
	return h.resources.ServeResource(ctx, req)
}

// acquireTarget takes a slot for a request of t from c, named name in a
// rejection: of its TargetKey's slots, or else of the shared ones.
func (c *concurrency) acquireTarget(ctx context.Context, t mcpkit.Target, caller mcpkit.Caller, name string) (*semaphore.Weighted, string, *sharedSem, error) {
	sem, key, shared := c.global, "", (*sharedSem)(nil)
	if c.targetKey != nil {
		key = c.targetKey(t, caller)
		shared = c.get(key)
		sem = shared.sem
	}
	if !sem.TryAcquire(1) {
		if err := c.await(ctx, sem, t.Kind(), name); err != nil {
			c.put(key, shared)
			return nil, "", nil, err
		}
	}
	return sem, key, shared, nil
}

// done gives back the slot of a request that ended with err, at once or,
// when its handler runs on after a timeout, once it returns.
func (c *concurrency) done(err error, sem *semaphore.Weighted, key string, shared *sharedSem) {
	if running := stillRunning(err); running != nil {
		go c.releaseWhenDone(running, sem, key, shared)
		return
	}
	c.release(sem, key, shared)
}

// releaseWhenDone releases the slot once running is closed: when the
// handler of a call answered without it really returns.
func (c *concurrency) releaseWhenDone(running <-chan struct{}, sem *semaphore.Weighted, key string, shared *sharedSem) {
	<-running
	c.release(sem, key, shared)
}

// release gives back a slot of sem and, with a Key, the hold on its slots.
func (c *concurrency) release(sem *semaphore.Weighted, key string, shared *sharedSem) {
	sem.Release(1)
	c.put(key, shared)
}

// await waits for a slot of sem as long as c.wait allows, and returns nil
// once it holds one.
func (c *concurrency) await(ctx context.Context, sem *semaphore.Weighted, kind mcpkit.Kind, name string) error {
	if c.wait == 0 {
		return c.busy(fmt.Sprintf("%v %q is busy: the limit of %d concurrent calls is reached; try again later", kind, name, c.n))
	}
	wctx := ctx
	if c.wait > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, c.wait)
		defer cancel()
	}
	if err := sem.Acquire(wctx, 1); err != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		return c.busy(fmt.Sprintf("%v %q is busy: the limit of %d concurrent calls was still reached after %v; try again later", kind, name, c.n, c.wait))
	}
	return nil
}

// busy returns the retryable tool error of a rejected call, with msg and
// c's retry hint.
func (c *concurrency) busy(msg string) error {
	return &mcpkit.ToolError{Err: &limitError{msg: msg, sentinel: ErrBusy, retryAfter: c.retryAfter}, Class: mcpkit.Retryable}
}

// get returns the slots of key, creating them if no call holds them, and
// counts the caller as a holder.
func (c *concurrency) get(key string) *sharedSem {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sems[key]
	if s == nil {
		s = &sharedSem{sem: semaphore.NewWeighted(int64(c.n))}
		c.sems[key] = s
	}
	s.refs++
	return s
}

// put undoes get, dropping the slots once no call holds them. A nil s
// (no Key) does nothing.
func (c *concurrency) put(key string, s *sharedSem) {
	if s == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.refs--; s.refs == 0 {
		delete(c.sems, key)
	}
}
