package middleware

import (
	"context"
	"fmt"
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

	// PerTool, if set, returns a tool's own limit: zero means the tool
	// shares the server-wide slots, a positive number gives the tool that
	// many slots of its own (instead of the shared ones), a negative number
	// means no limit for the tool. See [ByName].
	PerTool func(*mcpkit.Tool) int

	// Key, if set, partitions calls: each key has its own slots, so that,
	// for instance, one user's calls (keyed by req.TokenInfo().UserID) never
	// wait for another's. Nil means one key for every call.
	Key func(*mcpkit.Request) string
}

// ConcurrencyLimit returns a Middleware that lets at most n calls run the
// rest of the chain at once, counted over every tool the middleware wraps
// (and per key and per tool as opts say). A zero or negative n means no
// server-wide limit, leaving only the per-tool limits of opts.PerTool.
//
// A call that finds no free slot waits up to [ConcurrencyLimitOptions.Wait]
// for one; then it is rejected with a retryable [*mcpkit.ToolError] (which
// wraps [ErrBusy]) whose text reads
// `tool "name" is busy: the limit of 4 concurrent calls is reached; try again later`.
// If the call's context ends while it waits, ConcurrencyLimit returns the
// context's error at once.
//
// The slots are counted with semaphores from golang.org/x/sync/semaphore;
// those of a key or a tool with its own limit exist only while calls hold or
// wait for them, so the memory used is bounded by the calls in flight, not
// by the number of keys ever seen.
//
// ConcurrencyLimit belongs inside [MaskErrors] and outside [Timeout], so
// that the time a call waits for a slot is not taken from its time limit.
func ConcurrencyLimit(n int, opts *ConcurrencyLimitOptions) mcpkit.Middleware {
	c := &concurrency{n: n, sems: make(map[semKey]*sharedSem)}
	if opts != nil {
		c.wait, c.perTool, c.key = opts.Wait, opts.PerTool, opts.Key
	}
	if n > 0 {
		c.global = semaphore.NewWeighted(int64(n))
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		h := &concurrencyHandler{c: c, limit: n, perTool: c.perTool, next: next}
		if l, ok := resolvePerTool(next, c.perTool); ok {
			if l != 0 {
				t, _ := mcpkit.ToolOf(next)
				h.limit, h.scope = l, t.Name
			}
			h.perTool = nil
		}
		if h.limit <= 0 && h.perTool == nil {
			return next
		}
		return h
	}
}

// concurrency is the state of one ConcurrencyLimit, shared by every tool it
// wraps.
type concurrency struct {
	n       int
	wait    time.Duration
	perTool func(*mcpkit.Tool) int
	key     func(*mcpkit.Request) string
	global  *semaphore.Weighted // the server-wide slots when there is no Key

	mu   sync.Mutex
	sems map[semKey]*sharedSem
}

// semKey names a set of slots: those of a tool with its own limit (or of
// every other tool, when tool is "") for one key.
type semKey struct{ tool, key string }

// sharedSem is a semaphore with the number of calls holding or waiting for
// it, so that it can be dropped when that number falls to zero.
type sharedSem struct {
	sem  *semaphore.Weighted
	refs int
}

type concurrencyHandler struct {
	c       *concurrency
	limit   int
	scope   string                 // the tool's name when it has slots of its own
	perTool func(*mcpkit.Tool) int // nil once resolved
	next    mcpkit.Handler
}

func (h *concurrencyHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	c := h.c
	limit, scope := h.limit, h.scope
	if h.perTool != nil {
		if l := h.perTool(req.Tool); l != 0 {
			limit, scope = l, toolName(req)
		}
	}
	if limit <= 0 {
		return h.next.ServeTool(ctx, req)
	}

	sem := c.global
	if scope != "" || c.key != nil {
		k := semKey{tool: scope}
		if c.key != nil {
			k.key = c.key(req)
		}
		s := c.get(k, limit)
		defer c.put(k, s)
		sem = s.sem
	}
	if !sem.TryAcquire(1) {
		if err := c.await(ctx, sem, req, limit); err != nil {
			return nil, err
		}
	}
	defer sem.Release(1)
	return h.next.ServeTool(ctx, req)
}

// await waits for a slot of sem as long as c.wait allows, and returns nil
// once it holds one.
func (c *concurrency) await(ctx context.Context, sem *semaphore.Weighted, req *mcpkit.Request, limit int) error {
	if c.wait == 0 {
		return reject(ErrBusy, fmt.Sprintf("tool %q is busy: the limit of %d concurrent calls is reached; try again later", toolName(req), limit))
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
		return reject(ErrBusy, fmt.Sprintf("tool %q is busy: the limit of %d concurrent calls was still reached after %v; try again later", toolName(req), limit, c.wait))
	}
	return nil
}

// get returns the slots named k, creating them with limit slots if no call
// holds them, and counts the caller as a holder.
func (c *concurrency) get(k semKey, limit int) *sharedSem {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sems[k]
	if s == nil {
		s = &sharedSem{sem: semaphore.NewWeighted(int64(limit))}
		c.sems[k] = s
	}
	s.refs++
	return s
}

// put undoes get, dropping the slots once no call holds them.
func (c *concurrency) put(k semKey, s *sharedSem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.refs--; s.refs == 0 {
		delete(c.sems, k)
	}
}
