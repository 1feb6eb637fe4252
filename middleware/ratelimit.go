package middleware

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
)

// A Limiter decides whether a call may go ahead under a rate limit.
//
// Allow reports whether one more call under key may run now; when it may
// not, retryAfter is how long until it may (zero if unknown). An error means
// the limiter could not decide (a shared store is down, for instance).
// Allow is called concurrently.
type Limiter interface {
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error)
}

// The LimiterFunc type is an adapter to allow the use of ordinary functions
// as Limiters.
type LimiterFunc func(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error)

// Allow calls f(ctx, key).
func (f LimiterFunc) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	return f(ctx, key)
}

// A RateLimitError reports a call (a prompts/get, a resources/read)
// rejected by [RateLimit]. It unwraps to [ErrRateLimited].
type RateLimitError struct {
	// Tool is the name of the tool called, of the prompt when Kind is
	// [mcpkit.KindPrompt], or the URI of the resource (the text of the
	// template) when Kind is [mcpkit.KindResource].
	Tool string
	// Kind is what was refused: a tool (the zero value), a prompt or a
	// resource.
	Kind mcpkit.Kind
	// RetryAfter is how long until a call may succeed; zero if unknown.
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	if e.RetryAfter <= 0 {
		return fmt.Sprintf("%v %q is rate limited: try again later", e.Kind, e.Tool)
	}
	// Whole milliseconds, rounded up: "try again in 334ms", not a few
	// nanoseconds too early.
	d := (e.RetryAfter + time.Millisecond - 1).Truncate(time.Millisecond)
	return fmt.Sprintf("%v %q is rate limited: try again in %v", e.Kind, e.Tool, d)
}

// Unwrap returns [ErrRateLimited].
func (e *RateLimitError) Unwrap() error { return ErrRateLimited }

// MetaKeyRetryAfter is the key, in the _meta of a rate-limited call's
// result, of the delay in milliseconds after which a retry may succeed:
// [mcpkit.MetaKeyRetryAfter], which a draining server's refusal uses too.
const MetaKeyRetryAfter = mcpkit.MetaKeyRetryAfter

// ResultMeta puts the retry delay, in whole milliseconds rounded up, in
// the result's _meta under [MetaKeyRetryAfter], when it is known.
func (e *RateLimitError) ResultMeta() mcp.Meta {
	if e.RetryAfter <= 0 {
		return nil
	}
	return mcp.Meta{MetaKeyRetryAfter: (e.RetryAfter + time.Millisecond - 1).Milliseconds()}
}

// RateLimitOptions configures [RateLimit]. A nil *RateLimitOptions means
// the defaults.
type RateLimitOptions struct {
	// Key, if set, returns the key a call is counted under, for instance
	// a tenant read from a header, or "" for one budget shared by every
	// call. Nil means a budget per verified caller and tool:
	// [mcpkit.VerifiedPrincipal], a zero byte, and the name of the tool's
	// identity ([mcpkit.Tool.ID]). A key must not be something the caller
	// chooses (a bearer token no verifier checked, a header a client can
	// set), or each caller can give itself a fresh budget; behind a proxy
	// you trust, a header that the proxy sets (the client's address, say)
	// will do.
	Key func(*mcpkit.Request) string

	// TargetKey, if set, returns the key a prompts/get or a
	// resources/read is counted under, as Key does for tools calls. Nil
	// means a budget per verified caller and prompt, resource or template
	// (whatever Key says of tools): [mcpkit.VerifiedPrincipal], a zero
	// byte, the kind ("prompt:", "resource:") and the target's
	// [mcpkit.Target.Key]. The same rule holds: never a key the caller
	// chooses.
	TargetKey func(mcpkit.Target, mcpkit.Caller) string
}

// RateLimit returns a Middleware that asks l before each call and rejects
// the calls it does not allow, with a retryable [*mcpkit.ToolError] wrapping
// a [*RateLimitError] whose text says when to try again
// (`tool "name" is rate limited: try again in 1.5s`) and whose _meta
// carries the delay under [MetaKeyRetryAfter]. An error from the Limiter
// (a shared store that is down) is returned as an internal error, masked by
// [MaskErrors], of class Retryable: the call did not run, and may once the
// store is back. A nil l means
// no limit: the middleware adds no layer.
//
// By default each verified caller has a budget of its own for each tool: l
// is asked with the key [mcpkit.VerifiedPrincipal](req) + "\x00" + the name
// of the tool's identity ([mcpkit.Tool.ID]). A tool's versions, its
// deprecated aliases and the tools derived from it are one tool, with one
// budget: a call is counted against the tool it reaches, whatever name it
// was called by. Every caller without a verified user shares one budget
// per tool: anonymous callers (stdio, in-memory, unauthenticated HTTP) and
// callers whose bearer token no verifier checked, since a caller who could
// send a new token on each call would otherwise get a new budget with
// each. For a budget shared by several tools, or keyed on something else,
// set [RateLimitOptions.Key].
//
// [NewTokenBucket] is an in-memory Limiter; one backed by a store shared
// between server replicas plugs in through the [Limiter] interface.
//
// RateLimit serves prompts and resources too: each prompts/get and
// resources/read is counted, by default, against a budget of its caller
// for that prompt, resource or template (a template's reads share one
// budget, whatever URI they read), and a refusal is the JSON-RPC error
// -32603 `prompt "name" is rate limited: try again in 1.5s` (`resource
// "uri" ...`), its class and delay in the error's data. A tool, a prompt
// and a resource of one name never share a budget. To limit one kind
// alone, select it with [mcpkit.For].
//
// RateLimit belongs inside [MaskErrors] and outside [Timeout], with the
// other limits (see [RecommendedOptions.Limits]): a rejected call costs
// nothing further.
func RateLimit(l Limiter, opts *RateLimitOptions) mcpkit.Middleware {
	var o RateLimitOptions
	if opts != nil {
		o = *opts
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		if l == nil {
			return next
		}
		return &rateHandler{l: l, key: o.Key, targetKey: o.TargetKey, next: next, prompts: promptsOf(next), resources: resourcesOf(next),
			targets: targetKeys{prefix: "\x00"}}
	}
}

type rateHandler struct {
	l         Limiter
	key       func(*mcpkit.Request) string
	targetKey func(mcpkit.Target, mcpkit.Caller) string
	next      mcpkit.Handler
	prompts   mcpkit.PromptHandler
	resources mcpkit.ResourceHandler

	// anon is the default key of the last unverified call, kept so that
	// such calls allocate nothing: inside a Server, a handler serves one
	// tool, so it nearly always fits.
	anon atomic.Pointer[toolKey]

	// targets makes the default key's suffix of a prompt or a resource.
	targets targetKeys
}

// LayerSettings shows, in the server's Pipeline, what the budget is kept
// by: the default key (the verified caller and the tool) or the options'.
func (h *rateHandler) LayerSettings() []mcpkit.Setting {
	key := "verified caller and tool"
	if h.key != nil {
		key = "Key option"
	}
	s := []mcpkit.Setting{{Name: "key", Value: key}}
	if h.targetKey != nil {
		s = append(s, mcpkit.Setting{Name: "targetKey", Value: "TargetKey option"})
	}
	return s
}

// A toolKey is the default rate key of unverified calls to one tool.
type toolKey struct{ tool, key string }

func (h *rateHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	var key string
	if h.key != nil {
		key = h.key(req)
	} else {
		key = h.defaultKey(req)
	}
	ok, after, err := h.l.Allow(ctx, key)
	if err != nil {
		return nil, &unavailableError{fmt.Errorf("middleware: rate limiter: %w", err)}
	}
	if !ok {
		return nil, &mcpkit.ToolError{Err: &RateLimitError{Tool: req.Tool.Name, RetryAfter: after}, Class: mcpkit.Retryable}
	}
	return h.next.ServeTool(ctx, req)
}

func (h *rateHandler) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	if err := h.allowTarget(ctx, req.Prompt, req, req.Prompt.Name); err != nil {
		return nil, err
	}
	return h.prompts.ServePrompt(ctx, req)
}

func (h *rateHandler) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	if err := h.allowTarget(ctx, resourceTarget(req), req, resourceName(req)); err != nil {
		return nil, err
	}
	return h.resources.ServeResource(ctx, req)
}

// allowTarget asks the limiter about a request of t from c, named name in
// the refusal, and returns the error that refuses it, or nil.
func (h *rateHandler) allowTarget(ctx context.Context, t mcpkit.Target, c mcpkit.Caller, name string) error {
	var key string
	if h.targetKey != nil {
		key = h.targetKey(t, c)
	} else {
		key = mcpkit.VerifiedPrincipal(c) + h.targets.of(t)
	}
	ok, after, err := h.l.Allow(ctx, key)
	if err != nil {
		return &unavailableError{fmt.Errorf("middleware: rate limiter: %w", err)}
	}
	if !ok {
		return &mcpkit.ToolError{Err: &RateLimitError{Tool: name, Kind: t.Kind(), RetryAfter: after}, Class: mcpkit.Retryable}
	}
	return nil
}

// defaultKey returns the key of a call when the options set none: the
// caller's verified principal and the name of the tool's identity.
func (h *rateHandler) defaultKey(req *mcpkit.Request) string {
	tool := req.Tool.ID().Name
	if p := mcpkit.VerifiedPrincipal(req); p != "" {
		return p + "\x00" + tool
	}
	if k := h.anon.Load(); k != nil && k.tool == tool {
		return k.key
	}
	k := &toolKey{tool: tool, key: "\x00" + tool}
	h.anon.Store(k)
	return k.key
}

// DefaultMaxKeys is the number of keys a [TokenBucket] holds at most when
// its options do not say.
const DefaultMaxKeys = 10_000

// TokenBucketOptions configures [NewTokenBucket]. A nil *TokenBucketOptions
// means the defaults.
type TokenBucketOptions struct {
	// MaxKeys is the largest number of keys the limiter holds a bucket for.
	// Zero means DefaultMaxKeys.
	MaxKeys int
}

// A TokenBucket is an in-memory [Limiter] with one token bucket
// (golang.org/x/time/rate) per key. It is safe for concurrent use.
//
// Its memory is bounded: it holds at most MaxKeys buckets. A bucket that
// has been unused long enough to have filled up again (burst/r) is dropped,
// which changes nothing, since a new bucket starts full; idle buckets are
// dropped as calls arrive, least recently used first. When MaxKeys keys are
// busy at once, a new key pushes out the least recently used one, whose
// next call then finds a full bucket.
type TokenBucket struct {
	limit   rate.Limit
	burst   int
	maxKeys int
	refill  time.Duration // time for an empty bucket to fill; 0 if never

	mu      sync.Mutex
	buckets map[string]*list.Element // of *bucket
	lru     list.List                // most recently used at the front
}

type bucket struct {
	key     string
	lim     *rate.Limiter
	lastUse time.Time
}

// NewTokenBucket returns a TokenBucket that allows r calls per second per
// key on average, with bursts of up to burst calls. It panics unless burst
// is at least 1 or r is [rate.Inf] (which allows everything).
func NewTokenBucket(r rate.Limit, burst int, opts *TokenBucketOptions) *TokenBucket {
	if burst < 1 && r != rate.Inf {
		panic(fmt.Sprintf("middleware: NewTokenBucket: burst %d allows no call", burst))
	}
	b := &TokenBucket{limit: r, burst: burst, maxKeys: DefaultMaxKeys, buckets: make(map[string]*list.Element)}
	if opts != nil && opts.MaxKeys > 0 {
		b.maxKeys = opts.MaxKeys
	}
	if r > 0 && r != rate.Inf {
		ns := math.Ceil(float64(burst) / float64(r) * float64(time.Second))
		if ns < math.MaxInt64 {
			b.refill = time.Duration(ns)
		}
	}
	return b
}

// Allow takes a token from key's bucket if there is one. Otherwise it
// reports how long until there will be. It never returns an error.
func (b *TokenBucket) Allow(_ context.Context, key string) (bool, time.Duration, error) {
	if b.limit == rate.Inf {
		return true, 0, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now() // under the lock, so that uses are in time order
	b.dropIdle(now)
	bk := b.bucket(key)
	bk.lastUse = now
	if bk.lim.AllowN(now, 1) {
		return true, 0, nil
	}
	if b.limit <= 0 {
		return false, 0, nil // the bucket never refills
	}
	missing := 1 - bk.lim.TokensAt(now)
	return false, time.Duration(math.Ceil(missing / float64(b.limit) * float64(time.Second))), nil
}

// bucket returns key's bucket, most recently used from now on. b.mu is held.
func (b *TokenBucket) bucket(key string) *bucket {
	if e, ok := b.buckets[key]; ok {
		b.lru.MoveToFront(e)
		return e.Value.(*bucket)
	}
	if len(b.buckets) >= b.maxKeys {
		b.remove(b.lru.Back())
	}
	bk := &bucket{key: key, lim: rate.NewLimiter(b.limit, b.burst)}
	b.buckets[key] = b.lru.PushFront(bk)
	return bk
}

// dropIdle drops the buckets that have filled up since their last use.
// Buckets fill in the order they were last used, so it looks only at the
// least recently used end. b.mu is held.
func (b *TokenBucket) dropIdle(now time.Time) {
	if b.refill == 0 {
		return
	}
	for e := b.lru.Back(); e != nil; e = b.lru.Back() {
		if now.Sub(e.Value.(*bucket).lastUse) < b.refill {
			return
		}
		b.remove(e)
	}
}

func (b *TokenBucket) remove(e *list.Element) {
	delete(b.buckets, e.Value.(*bucket).key)
	b.lru.Remove(e)
}

// An unavailableError is the error of a store that could not answer: an
// internal error (its text names the store and stays on the server behind
// MaskErrors) that a later retry may get past.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return e.err.Error() }

func (e *unavailableError) Unwrap() error { return e.err }

// ErrorClass reports Retryable.
func (*unavailableError) ErrorClass() mcpkit.ErrorClass { return mcpkit.Retryable }
