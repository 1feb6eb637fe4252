package middleware

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// DefaultCacheTTL is how long [CacheResults] keeps a result when its
// options do not say.
const DefaultCacheTTL = time.Minute

// DefaultMaxCachedResult is the largest result, in bytes of JSON, that
// [CacheResults] and [Idempotent] keep when their options do not say.
const DefaultMaxCachedResult = 1 << 20

// MetaKeyCache is the key, in the _meta of a result that [CacheResults]
// answered from its cache, whose value is "hit".
const MetaKeyCache = "io.github.mcpkit/cache"

// CacheOptions configures [CacheResults]. A nil *CacheOptions means the
// defaults.
type CacheOptions struct {
	// Tools selects tools whose results are cached besides those annotated
	// readOnlyHint or idempotentHint. It is called once per tool, when the
	// tool's chain is built (per call outside a Server). To leave out an
	// annotated tool, apply CacheResults with [mcpkit.ForTools].
	Tools func(*mcpkit.Tool) bool

	// Targets selects the prompts, resources and templates whose results
	// are cached: prompts/get by prompt and arguments, resources/read by
	// resource (or template) and URI. It is called once per target, when
	// its chain is built. Nil means none.
	Targets func(mcpkit.Target) bool

	// TargetKey returns the part of the cache key that says who is
	// asking, for prompts and resources, as Key does for tools. Nil means
	// [mcpkit.Principal], and no caching of anonymous requests. A result
	// whose cacheScope is "private" is kept only under that default key:
	// with a TargetKey, which several principals may share, it is not kept.
	TargetKey func(mcpkit.Target, mcpkit.Caller) string

	// TTL is how long a result is kept; zero means DefaultCacheTTL.
	TTL time.Duration

	// Key returns the part of the cache key that says who is calling.
	// Nil means [mcpkit.Principal], and no caching of anonymous calls
	// (those whose Principal is ""). The tool, the route the call came
	// in by and the arguments are always part of the key. Callers with
	// the same Key share results, "" included: make it as narrow as what
	// the tool's results depend on (a tenant, a user, a token's scopes).
	Key func(*mcpkit.Request) string

	// MaxResultBytes is the largest result kept, in bytes of JSON; zero
	// means DefaultMaxCachedResult. Larger results are answered and not
	// kept.
	MaxResultBytes int

	// Logger receives warnings when the Cache fails, at most one a minute
	// with the number left out since. Nil means no logging.
	Logger *slog.Logger
}

// CacheResults returns a Middleware that answers calls from c with the
// result of an earlier call by the same caller, to the same tool by the
// same route (name and version), with the same arguments, and keeps each
// successful result in c for a while.
//
// Only the results of some tools are cached: those annotated readOnlyHint
// or idempotentHint (whose repeated calls, by the annotation's promise,
// change nothing more than the first), and those that [CacheOptions.Tools]
// selects. For an idempotent tool that means a repeat within the TTL does
// not run at all: leave out tools whose effect must be applied again (say,
// "set x to 5" after someone else set it to 6) with [mcpkit.ForTools].
//
// The key is a SHA-256 over the caller ([mcpkit.Principal], or
// [CacheOptions.Key]), the tool's identity ([mcpkit.Tool.ID]), the route
// the call came in by (the name and version it was called as) and the
// canonical form of the arguments: objects with their keys sorted, numbers
// as written, no white space, so that {"a":1,"b":2} and { "b":2, "a":1 }
// are one entry (1 and 1.0 are two). Arguments that have no canonical form
// (a key given twice, nesting deeper than 512, more than 1 MiB) are not
// cached.
//
// Two callers never share an entry: a cache shared across authorization
// contexts would leak one caller's results to another. A bearer token that
// no verifier checked separates its holder's entries (it is a secret the
// caller keeps). Every anonymous caller (stdio, in-memory, HTTP without a
// bearer token) is the same principal, "", and results may depend on more
// of the request than the arguments (a tenant header, say), so by default
// anonymous calls are not cached: they run as if there were no cache, and
// nothing is kept. Give a [CacheOptions.Key] to cache them: one that tells
// the callers apart as far as the results depend on them (the tenant
// header), or, where every caller may see every result (a stdio server,
// which has one client), one that returns a constant.
//
// Two routes to one tool never share an entry either: a deprecated alias,
// a tool derived from another or a namespaced name may take the arguments
// under other names, or fill hidden ones with values of its own, so that
// the same arguments by two routes can be two different calls. Each route
// has its entries, and no route is answered with another's result.
//
// Never cached: errors, results with isError set, input_required results
// and the calls that carry an answer to one (requestState or
// inputResponses: round two and later of a multi-round-trip call), results
// that [Idempotent] replayed (which may come from such a call), and
// results longer than [CacheOptions.MaxResultBytes]. A hit is a new result
// decoded from the cache, which the caller may modify, with "hit" under
// [MetaKeyCache] in its _meta. Structured content comes back as a
// json.RawMessage.
//
// Calls that miss the same entry while it is being computed, in one
// process, wait for that call and answer its result (as a hit) instead of
// running the tool again; when it keeps nothing (an error, an isError
// result, a caller that went away), each runs on its own. Across replicas
// there is no such waiting: each replica's first miss runs the tool.
//
// Prompts and resources are cached when [CacheOptions.Targets] selects
// them, by the same rules: per principal by default (anonymous requests
// are not cached), never an error, an input_required result or a round
// that answers one, and a hit has "hit" under [MetaKeyCache] in its
// _meta. A read whose result is marked private (cacheScope "private") is
// never answered to another principal. Concurrent misses of one prompt or
// read each run.
//
// CacheResults fails open: when c cannot answer, the call runs as if the
// cache were empty, and a warning goes to [CacheOptions.Logger]. A nil c
// means no cache: the middleware adds no layer. CacheResults panics if the
// options hold a negative TTL or MaxResultBytes.
//
// CacheResults belongs inside [MaskErrors] and outside the limits
// (CircuitBreaker, RateLimit, ...): a hit costs no rate token or slot, and
// answers while a circuit is open. [NewMemoryCache] is an in-memory Cache;
// one shared by server replicas plugs in through the [Cache] interface.
func CacheResults(c Cache, opts *CacheOptions) mcpkit.Middleware {
	var o CacheOptions
	if opts != nil {
		o = *opts
	}
	if o.TTL < 0 {
		panic(fmt.Sprintf("middleware: CacheResults: negative TTL %v", o.TTL))
	}
	if o.MaxResultBytes < 0 {
		panic(fmt.Sprintf("middleware: CacheResults: negative MaxResultBytes %d", o.MaxResultBytes))
	}
	if o.TTL == 0 {
		o.TTL = DefaultCacheTTL
	}
	if o.MaxResultBytes == 0 {
		o.MaxResultBytes = DefaultMaxCachedResult
	}
	tools := o.Tools
	cacheable := func(t *mcpkit.Tool) bool {
		if a := t.Annotations; a != nil && (a.ReadOnlyHint || a.IdempotentHint) {
			return true
		}
		return tools != nil && tools(t)
	}
	w := &warner{logger: o.Logger}
	layer := func(next mcpkit.Handler) mcpkit.Handler {
		return &cacheHandler{c: c, opts: &o, warn: w, next: next, flights: make(map[string]*flight),
			prompts: promptsOf(next), resources: resourcesOf(next)}
	}
	// ForTools (For) decides once per tool (target) inside a Server, and
	// lists the layer as skipped for those it leaves out.
	selected := mcpkit.ForTools(cacheable, layer)
	if targets := o.Targets; targets != nil {
		selected = mcpkit.For(func(t mcpkit.Target) bool {
			if tool, ok := t.(*mcpkit.Tool); ok {
				return cacheable(tool)
			}
			return targets(t)
		}, layer)
	}
	return func(next mcpkit.Handler) mcpkit.Handler {
		if c == nil {
			return next
		}
		return selected(next)
	}
}

type cacheHandler struct {
	c         Cache
	opts      *CacheOptions
	warn      *warner
	next      mcpkit.Handler
	prompts   mcpkit.PromptHandler
	resources mcpkit.ResourceHandler

	mu      sync.Mutex
	flights map[string]*flight // the misses being computed, by key
}

// A flight is a miss being computed. Calls that miss the same key while it
// runs wait for it instead of running the tool too.
type flight struct {
	done chan struct{} // closed when the call ends
	data []byte        // its encoded result, if it was kept; set before done is closed
}

// join returns the flight of key and whether the caller leads it: runs the
// call and ends the flight with land.
func (h *cacheHandler) join(key string) (f *flight, leader bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f := h.flights[key]; f != nil {
		return f, false
	}
	f = &flight{done: make(chan struct{})}
	h.flights[key] = f
	return f, true
}

// land ends the flight of key, handing data (nil if nothing was kept) to
// the calls waiting for it.
func (h *cacheHandler) land(key string, f *flight, data []byte) {
	h.mu.Lock()
	delete(h.flights, key)
	h.mu.Unlock()
	f.data = data
	close(f.done)
}

func (h *cacheHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	if inputRound(req) {
		return h.next.ServeTool(ctx, req)
	}
	key, ok := h.key(req)
	if !ok {
		return h.next.ServeTool(ctx, req)
	}
	data, found, err := h.c.Get(ctx, key)
	if err != nil {
		h.warn.warn("middleware: cache unavailable, calling the tool", "tool", req.Tool.Name, "error", err)
		return h.next.ServeTool(ctx, req) // and not Set: the store is failing
	}
	if found {
		res, err := decodeResult(data, MetaKeyCache, "hit")
		if err == nil {
			return res, nil
		}
		h.warn.warn("middleware: cache entry unreadable, calling the tool", "tool", req.Tool.Name, "error", err)
	}

	// A miss. If the same entry is being computed, wait for that call and
	// answer its result; if it kept none (an error, say, or its caller
	// went away), run the call as if it had not been there.
	f, leader := h.join(key)
	if !leader {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.data != nil {
			if res, err := decodeResult(f.data, MetaKeyCache, "hit"); err == nil {
				return res, nil
			}
		}
		res, _, err := h.run(ctx, req, key)
		return res, err
	}
	var kept []byte
	defer func() { h.land(key, f, kept) }() // also if the handler panics
	res, kept, err := h.run(ctx, req, key)
	return res, err
}

// run calls the tool and keeps its result under key when it may, and
// returns what it kept.
func (h *cacheHandler) run(ctx context.Context, req *mcpkit.Request, key string) (*mcp.CallToolResult, []byte, error) {
	res, err := h.next.ServeTool(ctx, req)
	if err != nil || !storable(res) || res.Meta[MetaKeyIdempotent] != nil {
		// A replay is not kept: it may be the outcome of an exchange
		// (an answer to input_required) that this call did not have.
		return res, nil, err
	}
	data, merr := encodeResult(res)
	if merr != nil || len(data) > h.opts.MaxResultBytes {
		return res, nil, nil // the server answers an unmarshalable result
	}
	if err := h.c.Set(context.WithoutCancel(ctx), key, data, h.opts.TTL); err != nil {
		h.warn.warn("middleware: cache unavailable, result not kept", "tool", req.Tool.Name, "error", err)
	}
	return res, data, nil
}

// key returns the cache key of req, and false when the call is not to be
// cached: it is anonymous, or its arguments have no canonical form.
func (h *cacheHandler) key(req *mcpkit.Request) (string, bool) {
	var who string
	if h.opts.Key != nil {
		who = h.opts.Key(req)
	} else if who = mcpkit.Principal(req); who == "" {
		return "", false // anonymous callers cannot be told apart
	}
	buf := getArgBuffer()
	defer putArgBuffer(buf)
	canon, err := canonicalJSON((*buf)[:0], req.Arguments)
	if err != nil {
		return "", false
	}
	*buf = canon[:0]
	id := req.Tool.ID()
	k := newKeyHash("mcpkit/cache/v2").add(who).add(id.Name).add(id.Version).add(req.Tool.Name).add(req.Tool.Version).addBytes(canon)
	return k.sum(""), true
}

func (h *cacheHandler) ServePrompt(ctx context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
	var round bool
	if p := req.Call; p != nil && p.Params != nil {
		round = p.Params.RequestState != "" || len(p.Params.InputResponses) > 0
	}
	args, err := json.Marshal(req.Arguments) // keys sorted
	if round || err != nil {
		return h.prompts.ServePrompt(ctx, req)
	}
	// The name served is in the key with the arguments: a prompt derived
	// from another (its identity) may give other values to what the
	// client does not send.
	what := append([]byte(req.Prompt.Name+"\x00"), args...)
	return serveCached(ctx, h, req.Prompt, req, what, h.prompts.ServePrompt, decodeJSON[mcp.GetPromptResult], func(r *mcp.GetPromptResult) (*mcp.Meta, bool) {
		return &r.Meta, r.InputRequests == nil && r.RequestState == "" && (!req.Private() || h.opts.TargetKey == nil)
	})
}

func (h *cacheHandler) ServeResource(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
	if p := req.Call; p != nil && p.Params != nil && (p.Params.RequestState != "" || len(p.Params.InputResponses) > 0) {
		return h.resources.ServeResource(ctx, req)
	}
	return serveCached(ctx, h, resourceTarget(req), req, []byte(req.URI), h.resources.ServeResource, decodeRead, func(r *mcp.ReadResourceResult) (*mcp.Meta, bool) {
		private := r.CacheScope == "private" || req.Private()
		return &r.Meta, r.InputRequests == nil && r.RequestState == "" && (!private || h.opts.TargetKey == nil)
	})
}

// decodeJSON decodes a kept result with its own decoding.
func decodeJSON[Res any](data []byte) (*Res, error) {
	res := new(Res)
	if err := json.Unmarshal(data, res); err != nil {
		return nil, err
	}
	return res, nil
}

// decodeRead decodes a kept read result with encoding/json alone: the
// SDK's own decoding costs a 32 KiB buffer per call. A kept result is
// complete, so its result type is the default.
func decodeRead(data []byte) (*mcp.ReadResourceResult, error) {
	var w struct {
		Meta       mcp.Meta                `json:"_meta"`
		TTLMs      int                     `json:"ttlMs"`
		CacheScope string                  `json:"cacheScope"`
		Contents   []*mcp.ResourceContents `json:"contents"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Meta: w.Meta, Cacheable: mcp.Cacheable{TTLMs: w.TTLMs, CacheScope: w.CacheScope}, Contents: w.Contents}, nil
}

// serveCached answers req, a request of t whose key is made of who asks,
// t and what (the name served and the arguments, the URI read), from the cache (decoding the
// kept result with decode), or serves it and keeps its result when keep
// reports it may be kept; keep also returns the result's _meta, where a
// hit is marked.
func serveCached[Req mcpkit.Caller, Res any](ctx context.Context, h *cacheHandler, t mcpkit.Target, req Req, what []byte,
	serve func(context.Context, Req) (*Res, error), decode func([]byte) (*Res, error), keep func(*Res) (*mcp.Meta, bool)) (*Res, error) {
	var who string
	if h.opts.TargetKey != nil {
		who = h.opts.TargetKey(t, req)
	} else if who = mcpkit.Principal(req); who == "" {
		return serve(ctx, req) // anonymous callers cannot be told apart
	}
	key := newKeyHash("mcpkit/cache/target/v2").add(who).add(t.Kind().String()).add(t.Key()).addBytes(what).sum("")
	data, found, err := h.c.Get(ctx, key)
	if err != nil {
		h.warn.warn("middleware: cache unavailable, serving the "+t.Kind().String(), t.Kind().String(), t.Key(), "error", err)
		return serve(ctx, req)
	}
	if found {
		res, err := decode(data)
		if err == nil {
			meta, _ := keep(res)
			if *meta == nil {
				*meta = mcp.Meta{}
			}
			(*meta)[MetaKeyCache] = "hit"
			return res, nil
		}
		h.warn.warn("middleware: cache entry unreadable, serving the "+t.Kind().String(), t.Kind().String(), t.Key(), "error", err)
	}
	res, err := serve(ctx, req)
	if err != nil || res == nil {
		return res, err
	}
	meta, ok := keep(res)
	if !ok {
		return res, nil
	}
	if (*meta)[MetaKeyCache] != nil {
		// A hit of a cache inside this one: keep the result, not the mark.
		stored := *res
		m := mcp.Meta(maps.Clone(*meta))
		delete(m, MetaKeyCache)
		sm, _ := keep(&stored)
		*sm = m
		data, err = json.Marshal(&stored)
	} else {
		data, err = json.Marshal(res)
	}
	if err != nil || len(data) > h.opts.MaxResultBytes {
		return res, nil
	}
	if err := h.c.Set(context.WithoutCancel(ctx), key, data, h.opts.TTL); err != nil {
		h.warn.warn("middleware: cache unavailable, result not kept", t.Kind().String(), t.Key(), "error", err)
	}
	return res, nil
}

// argBuffers keeps buffers for canonical arguments.
var argBuffers = sync.Pool{New: func() any { return new([]byte) }}

func getArgBuffer() *[]byte { return argBuffers.Get().(*[]byte) }

func putArgBuffer(b *[]byte) {
	if cap(*b) <= 64<<10 { // a rare large one goes to the garbage collector
		argBuffers.Put(b)
	}
}

// inputRound reports whether req carries the answer to an input_required
// result (SEP-2322): its outcome belongs to that exchange alone.
func inputRound(req *mcpkit.Request) bool {
	p := req.Call
	return p != nil && p.Params != nil && (p.Params.RequestState != "" || len(p.Params.InputResponses) > 0)
}

// storable reports whether res is a successful, complete result, which a
// cache or an idempotency record may keep.
func storable(res *mcp.CallToolResult) bool {
	return res != nil && !res.IsError && res.InputRequests == nil && res.RequestState == ""
}

// A MemoryCache is an in-memory [Cache] of bounded size, for one process.
// It is safe for concurrent use.
//
// It holds at most maxBytes bytes of keys and values together: a Set that
// would go beyond drops the least recently used entries first, and a value
// that alone would not fit is not kept. Expired entries are dropped when
// they are next read, or as the least recently used ones.
type MemoryCache struct {
	maxBytes int64

	mu      sync.Mutex
	size    int64
	entries map[string]*list.Element // of *cacheEntry
	lru     list.List                // most recently used at the front
}

type cacheEntry struct {
	key     string
	value   []byte
	expires time.Time
}

func (e *cacheEntry) bytes() int64 { return int64(len(e.key) + len(e.value)) }

// NewMemoryCache returns an empty MemoryCache holding at most maxBytes
// bytes of keys and values. It panics if maxBytes is not positive.
func NewMemoryCache(maxBytes int64) *MemoryCache {
	if maxBytes <= 0 {
		panic(fmt.Sprintf("middleware: NewMemoryCache: maxBytes %d holds nothing", maxBytes))
	}
	return &MemoryCache{maxBytes: maxBytes, entries: make(map[string]*list.Element)}
}

// Get returns a copy of the value under key, if it is there and has not
// expired. It never returns an error.
func (c *MemoryCache) Get(_ context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false, nil
	}
	e := el.Value.(*cacheEntry)
	if !time.Now().Before(e.expires) {
		c.remove(el)
		return nil, false, nil
	}
	c.lru.MoveToFront(el)
	return bytes.Clone(e.value), true, nil
}

// Set keeps a copy of value under key for ttl, replacing what key held. A
// ttl that is not positive removes key. It never returns an error.
func (c *MemoryCache) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	e := &cacheEntry{key: key, value: bytes.Clone(value), expires: time.Now().Add(ttl)}
	if ttl <= 0 || e.bytes() > c.maxBytes {
		return nil
	}
	for c.size+e.bytes() > c.maxBytes {
		c.remove(c.lru.Back())
	}
	c.entries[key] = c.lru.PushFront(e)
	c.size += e.bytes()
	return nil
}

func (c *MemoryCache) remove(el *list.Element) {
	e := el.Value.(*cacheEntry)
	delete(c.entries, e.key)
	c.lru.Remove(el)
	c.size -= e.bytes()
}
