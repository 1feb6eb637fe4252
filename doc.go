// Package mcpkit provides a middleware pipeline for MCP tools, modelled on
// net/http and served through the official Go MCP SDK, which keeps the
// wire: transports, sessions and protocol versions (2025-11-25 and
// 2026-07-28 clients on one endpoint).
//
// New here? Read docs/getting-started.md in the repository first, then
// run examples/quickstart. A whole server, with a typed tool, the
// recommended middleware and argument validation, is this:
//
//	type AddIn struct {
//		A int `json:"a"`
//		B int `json:"b" minimum:"0"`
//	}
//
//	func add(ctx context.Context, in AddIn) (int, error) { return in.A + in.B, nil }
//
//	func main() {
//		srv := mcpkit.NewServer(&mcp.Implementation{Name: "calc"}, nil)
//		srv.Use(middleware.Recommended(nil)) // a log line per call, recovery, masking, a time limit
//		if err := srv.Add(tools.Must(tools.New("add", add, nil))); err != nil {
//			log.Fatal(err)
//		}
//		http.Handle("/mcp", srv.HTTPHandler(nil))
//		log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
//	}
//
// Where each package fits:
//
//   - mcpkit (this package): the [Server], [Tool], [Handler], [Middleware],
//     [Chain] and [ForTools], and the error table below;
//   - tools: typed tools from Go functions (schema from the input struct,
//     results from the output value): tools.New;
//   - middleware: the catalog (Recommended, Timeout, RateLimit, Bulkhead,
//     CacheResults, Idempotent, ...) and the list middleware (Deref);
//   - transform: renamed, aliased and derived tools, namespaces, version
//     ranges, discovery meta-tools, provider-portable schemas;
//   - visibility: which tools exist, for everyone and per request (scopes,
//     claims, headers);
//   - tasks: tool calls that run in the background (the tasks extension);
//   - requeststate: the request state of input_required results, sealed
//     for the caller, the tool and the arguments;
//   - otelmcp: OpenTelemetry traces and metrics;
//   - mcpkittest: the test harness, shaped like net/http/httptest;
//   - redisstore (a module of its own): the stores on Redis, for replicas.
//
// Underneath, a tool is a [Handler] with an MCP definition, gathered in a
// [Tool] and registered on a [Server]. Behaviour around handlers
// (validation, timeouts, logging, tracing) is [Middleware], a
// func(Handler) Handler; what tools/list answers is shaped by
// [ListMiddleware] in the same way:
//
//	srv.Use(audit) // func(mcpkit.Handler) mcpkit.Handler, runs around every tool
//	err := srv.Add(&mcpkit.Tool{
//		Tool:    mcp.Tool{Name: "greet", InputSchema: json.RawMessage(`{"type":"object"}`)},
//		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
//			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
//		}),
//	})
//
// # Order
//
// The first middleware is the outermost: [Chain](a, b, c)(h) is a(b(c(h))),
// so a sees the call first and the result last. On a [Server], the
// server-wide middleware (in the order given to [Server.Use]) runs around a
// tool's own middleware ([Tool.Middleware]), which runs around the
// validation of the call's arguments, which runs around the handler.
//
// # Selecting tools
//
// [ForTools] applies middleware to some tools only, chosen by a match
// function ([Named], [Tagged], [Not], or any func(*Tool) bool) that the
// Server asks once per tool, when it builds the tool's chain:
//
//	srv.Use(mcpkit.ForTools(mcpkit.Not(mcpkit.Named("report")), middleware.Timeout(30*time.Second, nil)))
//	srv.Use(mcpkit.ForTools(mcpkit.Named("report"), middleware.Timeout(5*time.Minute, nil)))
//
// # Validation
//
// Every call's arguments are checked against the tool's input schema before
// its handler runs, with missing properties given the schema's defaults,
// and its structured content against its output schema after; a call that
// fails gets a retryable tool error naming the fields at fault. Validation
// is strict by default; [ServerOptions.Validation] and [Tool.Validation]
// choose [Lenient] coercion ("10" for 10) or [NoValidation]. Schemas are
// compiled once, by [Server.Add], which refuses one the validator cannot
// enforce.
//
// # Errors
//
// Every call's outcome reaches the client by one table, applied after the
// outermost middleware, so that middleware sees the Go error a handler
// returned:
//
//   - unknown tool: JSON-RPC error -32602 `unknown tool "name"`; see
//     [NewUnknownToolError] for hiding a tool behind the same answer;
//   - a [*ToolError] anywhere in the error's chain ([ToolErrorf],
//     [NewToolError]): a result with isError set and the
//     tool error's own text (not what wrappers added around it), never
//     masked;
//   - a JSON-RPC error ([NewProtocolError], or a *jsonrpc.Error wrapped
//     anywhere in the chain) with a non-zero code: that JSON-RPC error,
//     code and message;
//   - any other error: a result with isError set and the error's text
//     (error-masking middleware replaces the text, not the error);
//   - a panic, or a [*PanicError] anywhere in the chain: the server keeps
//     serving, the stack goes to [ServerOptions.Logger], and the client
//     gets a result with isError set and a generic text;
//   - a nil result with a nil error: an empty, successful result;
//   - a result that cannot be marshalled (a NaN in structured content):
//     a fatal tool error, instead of no answer at all.
//
// A result with structured content and no content blocks also gets the
// structured content's JSON as a text block, for clients that read only
// content. [Classify] is this table as a function, for middleware that
// logs, masks or counts outcomes. A Go error never reaches the wire as JSON-RPC code 0. Results with isError
// set carry an [ErrorClass] (Retryable or Fatal) in their _meta under
// [MetaKeyErrorClass], for agent loops to read with [ErrorClassOf]. Errors
// choose their class with an ErrorClass() ErrorClass method; a tool error is
// Retryable unless marked otherwise, any other error and a panic are Fatal.
// An error can add its own entries to the result's _meta by implementing
// [ResultMetaError].
//
// # Asking the client for input
//
// A tool asks the client for input (elicitation, sampling, roots) the same
// way on every protocol version: it returns an input_required result, a
// [mcp.CallToolResult] with InputRequests and RequestState (SEP-2322), and
// is called again with the answers, which [InputResponse] reads. A
// 2026-07-28 client makes the second call itself; for a 2025-11-25 client
// with a session (see [HTTPOptions].Sessions) the SDK asks it over the
// session and calls the handler again. Handlers should not call
// [Request.Session]'s Elicit or CreateMessage: that fails on 2026-07-28 and
// on stateless servers. Every layer passes an input_required result
// untouched. The request state comes back from the client and must not be
// trusted: package requeststate seals it, bound to the caller, the tool and
// the arguments, with an expiry.
//
// # Who is calling
//
// Nothing in mcpkit keys on a session: on protocol 2026-07-28 there are
// none, and a stateless server makes a new one per request. Identity comes
// from the request: the verified bearer token ([Request.TokenInfo], behind
// the SDK's auth.RequireBearerToken), HTTP headers ([Request.Header],
// [Request.ParamHeader]), the request's _meta ([Request.Meta]), or values the
// embedding service put in the context. [Principal] reduces that to one
// string for keying the records of a caller that replicas share: the
// verified user, else a digest of the bearer token, else "" for every
// anonymous caller. [VerifiedPrincipal] is the verified user alone, for
// what bounds callers: a key the caller cannot choose. So RateLimit counts
// per verified user and tool by default, and every other caller, anonymous
// or with a token no verifier checked, shares one budget; the result cache
// and idempotency records are kept per principal, and none are kept for
// anonymous callers, who cannot be told apart; the middleware that
// partition by caller take a key function over the Request to do
// otherwise; and [Visibility] decides per request from a [Caller]. What the
// client declared (protocol version, capabilities, client info) is read per
// request too, on both eras. A tool that needs a capability the client did
// not declare (elicitation, say) is best hidden from that client by a
// Visibility, so that the model never tries it; the alternative, answering
// -32021 (missing required client capability), is for tools that cannot
// know beforehand.
//
// # Versions
//
// Several versions of a name may be registered ([Tool.Version]); clients
// list and call the highest visible one, which lists its version and the
// others in its _meta ([MetaKeyVersions]), and a call can pin another with
// [MetaKeyVersion] in its _meta.
//
// # Catalog transforms and visibility
//
// What clients list and call is computed when the registry changes, in
// this order: every registered version, through the catalog transforms
// ([Server.Transform]: renames, namespaces, version ranges), then the
// [Visibility] rules that enable or disable tools for everyone, then, per
// request, the Visibility predicates (scopes, claims, headers), then the
// choice of the highest version of each name, then the list middleware
// ([Server.UseList]). A tool that is not visible to a request is, for that
// request, a tool that does not exist.
//
// # A call is judged by the tool it reaches
//
// A tool can be reached in several ways: by its name; by a deprecated alias
// or a tool derived from it (package transform's Alias and Tool, which
// rename it or its arguments, or fill some in); under a namespaced name (a
// [CatalogTransform]); pinned to a version; through a discovery meta-tool
// (call_tool); as a new task, and as a task resumed by tasks/update (package
// tasks); as a tool of a server mounted in another ([Server.Mount]). Each of these reaches one tool, and every decision about a tool
// is made about that tool, whichever way the call came in. A tool's
// identity is [Tool.ID]: the name and version of the tool at the end of its
// chain of [Tool.Origin]s, which package transform records on what it
// derives and the Server on what catalog transforms make. Then:
//
//   - visibility: a rule that disables or restricts a tool (package
//     visibility's Disable and Require, with [Named], Key, or a match
//     function of your own) holds on every tool derived from it, so an
//     alias of a hidden tool is hidden and answered as unknown;
//   - selection: [Named] selects a tool by any name along its
//     [Tool.Lineage], so [ForTools](Named("report"), ...) gives an alias of
//     report report's timeout and limits;
//   - limits and pools (RateLimit, Bulkhead, CircuitBreaker) count per
//     identity: an alias shares its tool's budget;
//   - stores: idempotency keys are one space per identity (a key reused on
//     another route is a conflict, never a second run); cached results are
//     kept per identity and route, since a route's arguments are in its own
//     names; a request state sealed by package requeststate is bound to
//     the identity, version included;
//   - tasks record the identity and version they started on, and a
//     resumed round runs that version, after asking visibility again
//     ([Server.Reaches]) for the caller who resumes it.
//
// A rule that names a derived tool (Named("remove_repo") for an alias)
// applies to that route alone. Match functions of your own that read
// t.Name see the name a tool is served under; read [Tool.ID] or
// [Tool.Lineage] to decide by identity. The test suite checks this as a
// matrix of every route by every decision keyed on a tool, and fails when a
// new route or decision is not in it.
//
// # Several replicas
//
// Behind a load balancer, N replicas of a server answer any request: the
// default [Server.HTTPHandler] is stateless, and a 2026-07-28 client's
// subscriptions/listen stream, on which it hears notifications, may be held
// by any replica. A change made on one replica must then reach the clients
// listening on every replica. [Server.ShareChanges] does that over an
// [EventBus] ([NewMemoryBus] in one process, the redisstore module's bus
// across processes):
//
//	stop, err := srv.ShareChanges(bus, &mcpkit.ShareOptions{
//		OnChange: func(ctx context.Context) error { return reloadTools(ctx, srv) },
//	})
//
// Each change of the registry that sends notifications/tools/list_changed
// locally publishes a small event (a burst of changes, a few events); each
// other replica then runs OnChange, where it catches up with the
// configuration the replicas share, and sends list_changed to its own
// clients even if its tools did not change, since the client's next
// tools/list may reach any replica. (With a per-request [Visibility] and an
// OnChange that succeeded, a replica tells only the listeners whose own
// list may have changed, as it does for its own changes; see
// [Server.SetVisibility].) What OnChange changes is not published
// again, so replicas do not echo each other. Events say only that something
// changed, never what: the registry itself (tools, handlers, transforms,
// visibility rules) is built by each replica, from code and shared
// configuration.
//
// What stays on one replica: the listen streams and the GET streams of
// sessions (a replica notifies the clients it holds), calls in flight (they
// finish on the replica that started them, with the chain they started
// with), and the sessions of 2025-11-25 clients when [HTTPOptions].Sessions
// is on, which need sticky routing on Mcp-Session-Id.
//
// # Registry
//
// Tool names are 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.';
// [Server.Add] rejects others with an error. Several versions of a name may
// be registered; clients see and call the highest. A name and version
// registered twice is an error unless [ServerOptions.ReplaceDuplicates] is
// set. Adding and removing tools while clients are connected sends them
// notifications/tools/list_changed.
//
// # Composition
//
// [Server.Mount] serves the tools of another Server under a namespace,
// kept live: its changes reach this server's clients, its middleware runs
// inside this server's, and a tool hidden by either server is unknown.
// A [Provider] serves tools resolved per request, without registering
// them.
package mcpkit
