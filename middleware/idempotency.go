package middleware

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// MetaKeyIdempotencyKey is the key, in a tools/call request's _meta, of the
// idempotency key a client gives a call (see [Idempotent]): a string of 1
// to [MaxIdempotencyKeyLen] bytes, new for each distinct operation and the
// same on every retry of it.
const MetaKeyIdempotencyKey = "io.github.mcpkit/idempotencyKey"

// MetaKeyIdempotent is the key, in the _meta of a result that [Idempotent]
// answered from its record of an earlier call, whose value is "replayed".
const MetaKeyIdempotent = "io.github.mcpkit/idempotent"

// MaxIdempotencyKeyLen is the longest idempotency key accepted, in bytes.
const MaxIdempotencyKeyLen = 256

// Defaults of [IdempotencyOptions].
const (
	DefaultIdempotencyTTL        = 24 * time.Hour
	DefaultIdempotencyLease      = 5 * time.Minute
	DefaultIdempotencyRetryAfter = time.Second
)

// Errors that the rejections of [Idempotent] wrap, for errors.Is.
var (
	ErrIdempotencyKeyInvalid  = errors.New("middleware: invalid idempotency key")
	ErrIdempotencyKeyReused   = errors.New("middleware: idempotency key reused for another call")
	ErrIdempotencyInProgress  = errors.New("middleware: idempotent call in progress")
	ErrIdempotencyUnavailable = errors.New("middleware: idempotency store unavailable")
	ErrIdempotencyAnonymous   = errors.New("middleware: idempotency key from an anonymous caller")
)

// IdempotencyOptions configures [Idempotent]. A nil *IdempotencyOptions
// means the defaults.
type IdempotencyOptions struct {
	// TTL is how long the outcome of a call is kept for replay; zero means
	// DefaultIdempotencyTTL.
	TTL time.Duration

	// Lease is how long a running call holds its key; zero means
	// DefaultIdempotencyLease. It must exceed the longest a handler may
	// run (its [Timeout], plus however long it may go on after its context
	// ends): a call still running when its lease expires no longer holds
	// the key, and a retry may run the tool a second time. The lease is
	// what frees the key of a call whose process died.
	Lease time.Duration

	// RetryAfter is the delay suggested to a call that finds its key held
	// by a running call; zero means DefaultIdempotencyRetryAfter.
	RetryAfter time.Duration

	// Key returns the part of the store key that says who is calling.
	// Nil means [mcpkit.Principal], and no idempotency keys from
	// anonymous callers (those whose Principal is ""): see [Idempotent].
	// The tool's identity and the client's key are always part of the
	// store key, so that one caller's key never meets another's. Callers
	// with the same Key share one space of keys, "" included.
	Key func(*mcpkit.Request) string

	// Require refuses calls without an idempotency key, with a fatal tool
	// error. Select the tools it applies to with [mcpkit.ForTools].
	Require bool

	// FailOpen runs calls when the store fails, without the guarantee,
	// logging a warning; by default they are refused with a retryable
	// tool error and the tool does not run.
	FailOpen bool

	// MaxResultBytes is the largest result kept for replay, in bytes of
	// JSON; zero means DefaultMaxCachedResult. A repeat of a call whose
	// result was larger gets a fatal tool error saying that the call ran.
	MaxResultBytes int

	// Logger receives warnings about the store, at most one a minute with
	// the number left out since. Nil means no logging.
	Logger *slog.Logger
}

// Idempotent returns a Middleware that runs a call at most once per
// idempotency key, answering repeats with the outcome of the first: a
// client that retries after a lost answer (a dropped connection, a
// timeout) does not pay, send or delete twice.
//
// The client gives the key in the request's _meta under
// [MetaKeyIdempotencyKey]. A call without one runs as usual (unless
// [IdempotencyOptions.Require]); a key that is not a string of 1 to
// [MaxIdempotencyKeyLen] bytes is refused with a fatal tool error wrapping
// [ErrIdempotencyKeyInvalid]. Keys are kept per caller and tool: the store
// key is a hash of [mcpkit.Principal] (or [IdempotencyOptions.Key]), the
// name of the tool's identity ([mcpkit.Tool.ID]) and the client's key, so
// that a key sent to a tool by its name and again by a deprecated alias, a
// tool derived from it or another of its versions is one key. The call's
// fingerprint is a hash of the route the call came in by (the name and
// version it was called as), the version of the tool it reaches and the
// canonical arguments (keys sorted, no white space; see [CacheResults]).
// Two routes may take the same arguments under other names, or fill hidden
// ones with values of their own: a key reused by another route is refused
// as a key reused for another call (below), even with byte-identical
// arguments. It is neither replayed across routes nor run a second time.
//
// Every anonymous caller (stdio, in-memory, HTTP without a bearer token)
// is the same principal, "", and a key one of them sent must not replay
// its result to another. So, unless [IdempotencyOptions.Key] is set, a
// call from an anonymous caller that carries an idempotency key (or any
// call from one, with [IdempotencyOptions.Require]) is refused with a
// fatal tool error wrapping [ErrIdempotencyAnonymous], and the tool does
// not run: a client that counts on safe retries learns at once that it has
// none, rather than after a second payment. Calls without a key run as
// usual. A bearer token that no verifier checked separates its holder's
// keys (it is a secret the caller keeps). Over stdio, where the process
// has one client, give a Key that returns a constant.
//
// The first call with a key claims it in s, with a lease, and runs. A
// successful result is kept for [IdempotencyOptions.TTL]; on an error, a
// result with isError set, or an input_required result, the claim is
// released instead, so that a retry runs the tool again: failures are not
// replayed, and neither are requests for input. Then:
//
//   - a repeat with the same key and fingerprint gets a copy of the kept
//     result, with "replayed" under [MetaKeyIdempotent] in its _meta;
//   - a repeat with the same key and another fingerprint (other arguments,
//     another version, another route) gets a fatal tool error wrapping
//     [ErrIdempotencyKeyReused]: the key names another operation;
//   - a repeat while the first call runs gets a retryable tool error
//     wrapping [ErrIdempotencyInProgress], with a retry delay under
//     [MetaKeyRetryAfter] in its _meta. It does not wait: the first call
//     may take long, and a waiting call would hold a slot and the
//     client's connection for nothing.
//
// Idempotent fails closed: when s fails to claim, the call gets a
// retryable tool error wrapping [ErrIdempotencyUnavailable] and the tool
// does not run, unless [IdempotencyOptions.FailOpen]. When s fails to keep
// or release an outcome, the caller still gets it, and a warning is
// logged. A nil s means no guarantee: the middleware adds no layer.
// Idempotent panics if the options hold a negative duration or size.
//
// Idempotent belongs inside [Timeout]. Outside it, a call that timed out
// would release its key while its handler ran on, and a retry would run
// the tool twice; inside, the key is held until the handler really
// returns, and a retry gets "in progress", then the result. The cost is
// that a replay goes through the limits (a rate token, a slot) like any
// call. [NewMemoryIdempotencyStore] is an in-memory store; one shared by
// server replicas plugs in through the [IdempotencyStore] interface.
func Idempotent(s IdempotencyStore, opts *IdempotencyOptions) mcpkit.Middleware {
	var o IdempotencyOptions
	if opts != nil {
		o = *opts
	}
	for name, v := range map[string]int64{"TTL": int64(o.TTL), "Lease": int64(o.Lease), "RetryAfter": int64(o.RetryAfter), "MaxResultBytes": int64(o.MaxResultBytes)} {
		if v < 0 {
			panic(fmt.Sprintf("middleware: Idempotent: negative %s", name))
		}
	}
	if o.TTL == 0 {
		o.TTL = DefaultIdempotencyTTL
	}
	if o.Lease == 0 {
		o.Lease = DefaultIdempotencyLease
	}
	if o.RetryAfter == 0 {
		o.RetryAfter = DefaultIdempotencyRetryAfter
	}
	if o.MaxResultBytes == 0 {
		o.MaxResultBytes = DefaultMaxCachedResult
	}
	w := &warner{logger: o.Logger}
	return func(next mcpkit.Handler) mcpkit.Handler {
		if s == nil {
			return next
		}
		return &idempotentHandler{s: s, opts: &o, warn: w, next: next}
	}
}

type idempotentHandler struct {
	s    IdempotencyStore
	opts *IdempotencyOptions
	warn *warner
	next mcpkit.Handler
}

// An idempotencyError is a rejection by Idempotent: a text for the client,
// the sentinel it wraps, and the store's error, if any, which outer
// middleware may read but the client does not see.
type idempotencyError struct {
	msg        string
	sentinel   error
	cause      error
	retryAfter time.Duration
}

func (e *idempotencyError) Error() string { return e.msg }
func (e *idempotencyError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}

// ResultMeta puts the retry delay, if any, under [MetaKeyRetryAfter].
func (e *idempotencyError) ResultMeta() mcp.Meta {
	if e.retryAfter <= 0 {
		return nil
	}
	return mcp.Meta{MetaKeyRetryAfter: (e.retryAfter + time.Millisecond - 1).Milliseconds()}
}

func idempotencyRejection(class mcpkit.ErrorClass, e *idempotencyError) error {
	return &mcpkit.ToolError{Err: e, Class: class}
}

func (h *idempotentHandler) ServeTool(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
	v, present := req.Meta()[MetaKeyIdempotencyKey]
	if !present && !h.opts.Require {
		return h.next.ServeTool(ctx, req)
	}
	var who string
	if h.opts.Key != nil {
		who = h.opts.Key(req)
	} else if who = mcpkit.Principal(req); who == "" {
		return nil, idempotencyRejection(mcpkit.Fatal, &idempotencyError{
			msg:      fmt.Sprintf("tool %q: an idempotency key needs an authenticated caller (a bearer token): anonymous callers cannot be told apart", req.Tool.Name),
			sentinel: ErrIdempotencyAnonymous,
		})
	}
	if !present { // and required
		return nil, idempotencyRejection(mcpkit.Fatal, &idempotencyError{
			msg:      fmt.Sprintf("tool %q needs an idempotency key: a string in the request's _meta under %q", req.Tool.Name, MetaKeyIdempotencyKey),
			sentinel: ErrIdempotencyKeyInvalid,
		})
	}
	clientKey, ok := v.(string)
	if !ok || clientKey == "" || len(clientKey) > MaxIdempotencyKeyLen {
		return nil, idempotencyRejection(mcpkit.Fatal, &idempotencyError{
			msg:      fmt.Sprintf("the idempotency key (_meta %q) must be a string of 1 to %d bytes", MetaKeyIdempotencyKey, MaxIdempotencyKeyLen),
			sentinel: ErrIdempotencyKeyInvalid,
		})
	}

	// The identity's name: one key by every route to the tool. For a tool
	// reached by its own name, the key is what earlier releases made, so
	// that a retry across a rolling upgrade finds its record.
	key := newKeyHash("mcpkit/idempotency/v1").add(who).add(req.Tool.ID().Name).add(clientKey).sum("")
	token := randomToken()
	existing, claimed, err := h.s.Claim(ctx, key, IdempotencyRecord{Fingerprint: fingerprint(req), Token: token}, h.opts.Lease)
	if err != nil {
		if h.opts.FailOpen {
			h.warn.warn("middleware: idempotency store unavailable, calling the tool without the guarantee", "tool", req.Tool.Name, "error", err)
			return h.next.ServeTool(ctx, req)
		}
		return nil, idempotencyRejection(mcpkit.Retryable, &idempotencyError{
			msg:        fmt.Sprintf("tool %q: idempotency store unavailable: try again later", req.Tool.Name),
			sentinel:   ErrIdempotencyUnavailable,
			cause:      err,
			retryAfter: h.opts.RetryAfter,
		})
	}
	if !claimed {
		return h.repeat(req, existing)
	}

	// The claim is released unless the call ends with a result to keep,
	// also when the handler panics or exits its goroutine.
	settled := false
	bg := context.WithoutCancel(ctx) // the claim must end even if the call's context did
	defer func() {
		if !settled {
			h.release(bg, req, key, token)
		}
	}()
	res, err := h.next.ServeTool(ctx, req)
	if err != nil || !storable(res) {
		return res, err
	}
	data, merr := encodeResult(res)
	if merr != nil {
		return res, nil // the server answers an unmarshalable result; the call may run again
	}
	if len(data) > h.opts.MaxResultBytes {
		data, _ = encodeResult(&mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
				"tool %q already ran for this idempotency key; its result (%d bytes) was too large to keep for a repeat", req.Tool.Name, len(data))}},
			IsError: true,
			Meta:    mcp.Meta{mcpkit.MetaKeyErrorClass: string(mcpkit.Fatal)},
		})
	}
	settled = true
	if err := h.s.Complete(bg, key, token, data, h.opts.TTL); err != nil {
		h.warn.warn("middleware: idempotency record not kept; a repeat will run the tool again", "tool", req.Tool.Name, "error", err)
	}
	return res, nil
}

// repeat answers a call whose key another call claimed.
func (h *idempotentHandler) repeat(req *mcpkit.Request, rec IdempotencyRecord) (*mcp.CallToolResult, error) {
	if rec.Fingerprint != fingerprint(req) {
		return nil, idempotencyRejection(mcpkit.Fatal, &idempotencyError{
			msg:      fmt.Sprintf("tool %q: this idempotency key was used for a call with other arguments, to another version of the tool or by another name; use a new key for a new call", req.Tool.Name),
			sentinel: ErrIdempotencyKeyReused,
		})
	}
	if !rec.Done {
		return nil, idempotencyRejection(mcpkit.Retryable, &idempotencyError{
			msg:        fmt.Sprintf("tool %q: a call with this idempotency key is in progress: try again in %v", req.Tool.Name, h.opts.RetryAfter),
			sentinel:   ErrIdempotencyInProgress,
			retryAfter: h.opts.RetryAfter,
		})
	}
	res, err := decodeResult(rec.Result, MetaKeyIdempotent, "replayed")
	if err != nil {
		return nil, fmt.Errorf("middleware: idempotency record of tool %q unreadable: %w", req.Tool.Name, err)
	}
	return res, nil
}

func (h *idempotentHandler) release(ctx context.Context, req *mcpkit.Request, key, token string) {
	if err := h.s.Release(ctx, key, token); err != nil {
		h.warn.warn("middleware: idempotency claim not released; the key stays blocked until its lease ends", "tool", req.Tool.Name, "error", err)
	}
}

// fingerprint identifies what a call does: the route it came in by, the
// version of the tool it reaches, and its canonical arguments, or, for
// arguments without a canonical form, their bytes (marked as such). The
// arguments mean what the route says: an alias may name them otherwise,
// a derived tool add hidden ones.
//
// A call to a tool by its own name is fingerprinted as earlier releases
// did (its version and arguments), so that a retry across a rolling
// upgrade is replayed; a call by a derived route adds the route's name and
// the identity's version, parts that the other form lacks, so that the two
// never match.
func fingerprint(req *mcpkit.Request) string {
	buf := getArgBuffer()
	defer putArgBuffer(buf)
	k := newKeyHash("mcpkit/fingerprint/v1").add(req.Tool.Version)
	if req.Tool.Origin != nil {
		k.add("route").add(req.Tool.Name).add(req.Tool.ID().Version)
	}
	if canon, err := canonicalJSON((*buf)[:0], req.Arguments); err == nil {
		*buf = canon[:0]
		k.add("canonical").addBytes(canon)
	} else {
		k.add("raw").addBytes(req.Arguments)
	}
	return k.sum("")
}

// DefaultIdempotencyStoreBytes is the size of a [MemoryIdempotencyStore]
// when its options do not say: 64 MiB.
const DefaultIdempotencyStoreBytes = 64 << 20

// MemoryIdempotencyStoreOptions configures [NewMemoryIdempotencyStore]. A
// nil *MemoryIdempotencyStoreOptions means the defaults.
type MemoryIdempotencyStoreOptions struct {
	// MaxBytes bounds the bytes of keys, fingerprints, tokens and results
	// held; zero means DefaultIdempotencyStoreBytes.
	MaxBytes int64
}

// A MemoryIdempotencyStore is an in-memory [IdempotencyStore] of bounded
// size, for one process. It is safe for concurrent use; Claim is atomic.
//
// Records expire: a claim when its lease ends, a completed call after its
// TTL. When a new record would take the store beyond its size, the records
// written least recently are dropped first, so a store too small for its
// load forgets calls (and a repeat of a forgotten call runs again): size
// it for the calls of one TTL.
type MemoryIdempotencyStore struct {
	maxBytes int64

	mu      sync.Mutex
	size    int64
	records map[string]*list.Element // of *idemEntry
	lru     list.List                // most recently written at the front
}

type idemEntry struct {
	key     string
	rec     IdempotencyRecord
	expires time.Time
}

func (e *idemEntry) bytes() int64 {
	return int64(len(e.key) + len(e.rec.Fingerprint) + len(e.rec.Token) + len(e.rec.Result))
}

// NewMemoryIdempotencyStore returns an empty MemoryIdempotencyStore. It
// panics if MaxBytes is negative.
func NewMemoryIdempotencyStore(opts *MemoryIdempotencyStoreOptions) *MemoryIdempotencyStore {
	s := &MemoryIdempotencyStore{maxBytes: DefaultIdempotencyStoreBytes, records: make(map[string]*list.Element)}
	if opts != nil {
		if opts.MaxBytes < 0 {
			panic(fmt.Sprintf("middleware: NewMemoryIdempotencyStore: negative MaxBytes %d", opts.MaxBytes))
		}
		if opts.MaxBytes > 0 {
			s.maxBytes = opts.MaxBytes
		}
	}
	return s
}

// errRecordTooLarge is returned by Complete for a result that alone would
// not fit in the store.
var errRecordTooLarge = errors.New("middleware: idempotency record larger than the store")

// Claim implements [IdempotencyStore]. It never returns an error.
func (s *MemoryIdempotencyStore) Claim(_ context.Context, key string, rec IdempotencyRecord, lease time.Duration) (IdempotencyRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if e := s.live(key, now); e != nil {
		r := e.rec
		r.Result = bytes.Clone(r.Result)
		return r, false, nil
	}
	rec.Done, rec.Result = false, nil
	s.put(&idemEntry{key: key, rec: rec, expires: now.Add(lease)})
	return rec, true, nil
}

// Complete implements [IdempotencyStore].
func (s *MemoryIdempotencyStore) Complete(_ context.Context, key, token string, result []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	e := s.live(key, now)
	if e == nil || e.rec.Done || e.rec.Token != token {
		return ErrClaimLost
	}
	s.remove(s.records[key])
	done := &idemEntry{key: key, rec: e.rec, expires: now.Add(ttl)}
	done.rec.Done, done.rec.Result = true, bytes.Clone(result)
	if done.bytes() > s.maxBytes {
		return errRecordTooLarge
	}
	s.put(done)
	return nil
}

// Release implements [IdempotencyStore].
func (s *MemoryIdempotencyStore) Release(_ context.Context, key, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.live(key, time.Now())
	if e == nil || e.rec.Done || e.rec.Token != token {
		return ErrClaimLost
	}
	s.remove(s.records[key])
	return nil
}

// live returns the unexpired record under key, dropping an expired one.
// s.mu is held.
func (s *MemoryIdempotencyStore) live(key string, now time.Time) *idemEntry {
	el, ok := s.records[key]
	if !ok {
		return nil
	}
	e := el.Value.(*idemEntry)
	if !now.Before(e.expires) {
		s.remove(el)
		return nil
	}
	return e
}

// put adds e, dropping the least recently written records to make room.
// s.mu is held.
func (s *MemoryIdempotencyStore) put(e *idemEntry) {
	for s.size+e.bytes() > s.maxBytes && s.lru.Len() > 0 {
		s.remove(s.lru.Back())
	}
	s.records[e.key] = s.lru.PushFront(e)
	s.size += e.bytes()
}

func (s *MemoryIdempotencyStore) remove(el *list.Element) {
	e := el.Value.(*idemEntry)
	delete(s.records, e.key)
	s.lru.Remove(el)
	s.size -= e.bytes()
}
