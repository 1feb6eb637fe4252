// Package proxy provides a tool source backed by another MCP server: an
// [Upstream] connects an SDK client to a remote server (over streamable
// HTTP, a command's stdio, in memory, or any [mcp.Transport]), and serves
// its tools, prompts, resources and resource templates through a local
// [mcpkit.Server] as if they were the local server's own.
//
//	up, err := proxy.New(ctx, proxy.HTTP("https://crm.internal/mcp", &proxy.HTTPOptions{
//		Header: http.Header{"Authorization": {"Bearer " + proxyToken}}, // the proxy's own credentials
//	}), &proxy.Options{Prefix: "crm_", Timeout: 10 * time.Second, MaxConcurrent: 16})
//	if err != nil { // a Dial that fails; an upstream down at start is retried
//		return err
//	}
//	defer up.Close()
//	up.AddTo(srv)
//
// # What a proxied call goes through
//
// A call of a proxied tool runs the local server's middleware, visibility
// and tracing, then the upstream's own layers, outermost first: a circuit
// breaker (one circuit for the whole upstream), a concurrency limit, a
// time limit, a bound on the result's size and [Options.Middleware]; then
// the local server validates the arguments against the schema the
// upstream advertises, and only then does the call leave. It carries its
// arguments, its _meta (trace context included) without the keys that
// belong to the local hop, and the answers of an input_required round.
// The caller's token is never sent: the upstream sees the proxy's
// credentials ([HTTPOptions.Header]) and, per call, those that
// [Options.Credentials] mints or exchanges for the caller.
//
// # What the client sees
//
// The upstream's answers go through the local error table:
//
//   - a result, isError or not, is passed on as it is: a remote tool error
//     stays a tool error, with its class;
//   - an input_required result (protocol 2026-07-28) is passed on, and the
//     client's answers are forwarded with the call it makes again; a
//     2025-11-25 client is asked over its session by the SDK;
//   - progress the upstream reports reaches the client under its own
//     progress token;
//   - a JSON-RPC error of the upstream, an answer that is not JSON-RPC, an
//     answer past the size bounds, and an upstream that cannot be reached
//     or breaks off mid-call are an [*UpstreamError]: a result with
//     isError set, retryable, counted by the breaker; never a hang and
//     never a JSON-RPC error of the local server. An answer past the size
//     bounds fails its own call only: the calls beside it go on;
//   - a call the upstream does not answer in time is the time limit's
//     retryable error, and the upstream's handler is cancelled.
//
// # The catalog
//
// The upstream's tools are read at [New] across every page of its
// tools/list, and again each time it sends
// notifications/tools/list_changed; the local server's listening clients
// are told when the catalog changed. tools/list answers from the copy and
// never waits for the upstream. While the upstream is unreachable, its
// tools are listed from the last catalog, or left out with
// [Options.DropWhenDown]; the local server's other tools are served as
// ever, and the next call reconnects. An upstream that is down when [New]
// runs is retried in the background, and its tools appear when it comes
// up. Every connection the proxy makes is its own: the proxy's context,
// protocol version and credentials, never a caller's. An upstream that
// keeps sessions gets a session per caller's credentials (see
// [Options.MaxSessions]).
//
// A tool's identity is its local name (the prefix and the upstream's
// name), the same on every route, so that visibility rules, ForTools
// selectors, rate limits and stores keyed on a tool find it however a
// call comes in.
//
// # Prompts, resources and templates
//
// An Upstream is also a [mcpkit.PromptProvider] and a
// [mcpkit.ResourceProvider]. The upstream's prompts (under the prefix),
// resources and templates (their URIs as they are) are read with its
// tools, for the kinds its capabilities declare, and each kind again when
// the upstream sends its notifications/…/list_changed. prompts/get and
// resources/read are forwarded as calls are: their arguments and _meta,
// an input_required round, progress, the credentials of
// [Options.TargetCredentials], the upstream's time limit; the upstream's
// result is passed on as it is, text and blob contents byte for byte,
// embedded resources and resource links untouched. A URI that one of the
// upstream's templates matches is read from the upstream under that URI.
// Arguments and template variables are completed by the upstream when it
// declares completions. A prompt or URI the upstream no longer serves is
// answered as one never served; its other failures are an
// [*UpstreamError].
//
// An upstream that declares the Skills extension has the files of its
// skills served too, below the directory of each SKILL.md it lists, and
// its skills/list read per caller by [Upstream.ListSkills], for
// skills.ServeOptions.Upstreams.
//
// Options follow the SDK's convention: a struct whose nil pointer means
// the defaults.
package proxy
