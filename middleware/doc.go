// Package middleware provides the built-in [mcpkit.Middleware] catalog:
// recovery from panics, time limits, error masking, logging, limits on
// concurrency, rate and size, a result cache, idempotent calls and the
// user's confirmation of destructive tools ([Confirm]); and the
// list middleware [Deref], which removes $ref from advertised schemas. (Argument validation is not here: every
// [mcpkit.Server] validates, innermost, by default.)
//
// [Recommended] returns the chain most servers want:
//
//	srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: logger}))
//	srv.UseList(middleware.Deref(nil))
//
// or, spelled out, with limits added and a longer time limit for one tool:
//
//	srv := mcpkit.NewServer(&mcp.Implementation{Name: "demo"}, nil)
//	srv.Use(
//		middleware.Logging(&middleware.LoggingOptions{Logger: logger}),
//		middleware.Recover(nil),
//		middleware.MaskErrors(nil),
//		middleware.RateLimit(middleware.NewTokenBucket(10, 20, nil), nil),
//		middleware.ConcurrencyLimit(64, nil),
//		mcpkit.ForTools(mcpkit.Not(mcpkit.Named("report")), middleware.Timeout(30*time.Second, nil)),
//		mcpkit.ForTools(mcpkit.Named("report"), middleware.Timeout(5*time.Minute, nil)),
//		middleware.ArgumentSizeLimit(1<<20),
//		middleware.ResultSizeLimit(1<<20, &middleware.ResultSizeLimitOptions{Truncate: true}),
//	)
//
// # Order
//
// The first middleware in a chain is the outermost: it sees the call first
// and the outcome last. The recommended order, outermost first, is
//
//	Logging -> Recover -> MaskErrors -> Confirm -> CacheResults -> CircuitBreaker -> RateLimit
//	        -> Bulkhead -> ConcurrencyLimit -> Timeout -> Idempotent -> ArgumentSizeLimit, ResultSizeLimit
//	        -> TokenBudget -> (the server's validation) -> handler
//
// Logging is outermost so that its one record per call covers everything
// the others do; Recover next, so that a panic anywhere inside (a re-raised
// one from Timeout included) becomes an error the rest of the chain
// handles; MaskErrors then hides internal errors from everything inside it.
// Confirm (for the tools that need it) follows, so that asking the user
// costs no rate token or slot and no cached answer skips the question.
// The limits reject calls before they cost anything, and outside Timeout,
// so that waiting for a slot does not use up a call's time: CircuitBreaker
// first, so that a rejection costs no rate token or slot, and Bulkhead
// outside a server-wide ConcurrencyLimit, so that a call waiting for its
// pool holds no shared slot. Size limits run
// within the time limit. Each middleware's documentation says where it
// belongs.
//
// CacheResults sits before the limits (first in [RecommendedOptions.Limits]):
// a hit is cheap, so it costs no rate token or slot and is answered while a
// circuit is open; and inside Logging, so that hits are logged. What it
// keeps is what the layers inside made of the result (truncated,
// validated). Idempotent sits inside Timeout, although a
// replay then goes through the limits like any call: when a call times
// out, Timeout answers the caller and the handler runs on, and only a layer
// inside Timeout sees when the handler really returns. There, Idempotent
// holds the key until then and keeps the late result, so that the retry
// that follows the timeout is told "in progress", then gets the result;
// outside Timeout it would release the key at the timeout, and the retry
// would run the tool a second time. Its lease must therefore exceed the
// time limit. Only a call that passed the limits claims a key, so a
// rejected call leaves none behind. With [Recommended], give Idempotent to
// [mcpkit.Server.Use] after it, with the size limits:
//
//	srv.Use(
//		middleware.Recommended(&middleware.RecommendedOptions{Limits: []mcpkit.Middleware{
//			middleware.CacheResults(cache, nil),
//			middleware.RateLimit(limiter, nil),
//		}}),
//		middleware.Idempotent(store, &middleware.IdempotencyOptions{Lease: 2 * middleware.DefaultTimeout}),
//		middleware.ResultSizeLimit(1<<20, nil),
//	)
//
// # Prompts and resources
//
// Recover, Timeout, MaskErrors, Logging, RateLimit, ConcurrencyLimit and
// CircuitBreaker serve prompts/get and resources/read as they serve calls;
// Bulkhead does for the targets its TargetPool option places, and
// CacheResults for those its Targets option selects. The other layers
// serve tools alone, and a prompt's or a resource's pipeline lists them as
// skipped. [mcpkit.For] gives one kind layers of its own.
//
// # State shared by replicas
//
// [CacheResults], [Idempotent] and [RateLimit] keep their state behind
// store interfaces ([Cache], [IdempotencyStore], [Limiter]) with in-memory
// implementations here ([NewMemoryCache], [NewMemoryIdempotencyStore],
// [NewTokenBucket]) and shared ones (on Redis) in a module of their own.
// They key it by the tool's identity ([mcpkit.Tool.ID]), so that a call
// counts against the tool it reaches whatever name it came in by (a
// deprecated alias, a derived or namespaced name), and by the caller, never
// by a session. What bounds callers is keyed by someone the caller cannot
// choose: RateLimit gives a budget to each verified user
// ([mcpkit.VerifiedPrincipal]) and one shared budget to everyone else. What
// keeps a caller's records is keyed by [mcpkit.Principal], the caller's
// verified user or a digest of its bearer token, with the route and a
// canonical form of the arguments; every anonymous caller is the same
// principal, so CacheResults does not cache anonymous calls and Idempotent
// refuses their keys, unless given a Key function. When a store fails, the
// cache fails open (the tool runs) and idempotency fails closed (the call
// is refused, retryably) unless told otherwise.
//
// # Resilience and budgets
//
// [CircuitBreaker] stops calling a tool whose calls keep failing with
// server faults (internal errors, panics, timeouts, as [mcpkit.Classify]
// says) and answers at once with a retryable rejection and a retry delay in
// _meta, until a trial call after a cooldown succeeds. [Bulkhead] gives
// pools of tools concurrency slots of their own, so that one stuck tool
// cannot take the slots of the others. [TokenBudget] keeps results within a
// budget of estimated tokens, cutting text at a line or word with a note the
// tool can word (what was cut, how to get the rest), trimming arrays of
// structured content while keeping it valid against the tool's output
// schema, and recording the cut in _meta under [MetaKeyTruncated].
//
// # Conventions
//
// Every middleware constructor returns an [mcpkit.Middleware], never a bare
// function value. Required arguments come first, then a pointer to an
// options struct, XOptions for constructor X, where nil means the defaults;
// optional things, a logger included, are always options. Invalid
// configuration panics in the constructor. The middleware's state
// (semaphores, buckets) is created by the constructor and shared by every
// tool the middleware is applied to, so one ConcurrencyLimit in
// [mcpkit.Server.Use] limits all tools together.
//
// Settings that differ per tool are made by selecting tools, never by a
// per-tool field: [mcpkit.ForTools] applies middleware to the tools a match
// function selects, decided once per tool when its chain is built, and a
// tool it does not select gets no layer. A middleware whose setting turns it
// off (a zero limit, a nil logger) adds no layer either.
//
// # Errors
//
// Middleware report failures as Go errors and leave it to the server to map
// them onto the wire once, after the outermost middleware (the error table
// of docs/concepts.md); they decide what a call's outcome was with
// [mcpkit.Classify]. Rejections meant for the model (limits, time limits)
// are [*mcpkit.ToolError] values, which are shown and never masked, of class
// Retryable, and never JSON-RPC errors; their chains hold a sentinel or
// typed error ([ErrBusy], [ErrRateLimited], [ErrCircuitOpen],
// [ErrArgumentsTooLarge], [ErrResultTooLarge], [ErrIdempotencyInProgress],
// [ErrIdempotencyUnavailable], [*RateLimitError], [*CircuitOpenError],
// [*TimeoutError]) for errors.Is and errors.As. Idempotent's refusals of
// a key ([ErrIdempotencyKeyInvalid], [ErrIdempotencyKeyReused]) are Fatal:
// the client must send another key, not retry. So are Confirm's refusals
// ([ErrDeclined], [ErrCannotConfirm]), while its store's failure
// ([ErrConfirmUnavailable]) is Retryable; a confirmation replayed on
// another call, or used twice, gets the JSON-RPC error -32602 of
// [requeststate.Sealer]. Every error keeps the class its ErrorClass method gives it.
package middleware
