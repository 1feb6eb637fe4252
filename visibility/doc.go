// Package visibility provides rules that decide which tools an
// [mcpkit.Server] serves, and to whom: rules that enable and disable tools
// for everyone (by name, tag, name and version, version range), an
// allowlist mode, and per-request rules that show tools only to the
// requests whose bearer token, headers, context or client pass a
// [Predicate]. A [Rules] value implements [mcpkit.Visibility].
//
//	rules := visibility.New(
//		visibility.Disable(mcpkit.Tagged("experimental")),
//		visibility.Require(mcpkit.Tagged("admin"), visibility.Scopes("admin")),
//		visibility.ReadOnlyFor(visibility.Header("X-Read-Only", "1")),
//		visibility.RequireClientCapabilities(),
//	)
//	rules.Attach(srv)
//	...
//	beta := visibility.Enable(mcpkit.Tagged("beta"))
//	rules.Add(beta)    // while serving; clients get list_changed
//	rules.Remove(beta)
//
// Rules are values made by [Enable], [Disable], [Require], [ReadOnlyFor] and
// [RequireClientCapabilities]. They select tools with match functions, the
// same as [mcpkit.ForTools] takes: [mcpkit.Named], [mcpkit.Tagged],
// [mcpkit.Not], [Key], [VersionRange], [ReadOnly], [AllTools], or any
// func(*mcpkit.Tool) bool. The same rules decide prompts: a match function
// over *mcpkit.Prompt ([AllPrompts]) selects prompts, and one over
// [mcpkit.Target] ([AllTargets]) tools and prompts alike. Rules by name, made by [EnableNames],
// [DisableNames], [DisableVersion] and [RequireNames], select as
// [mcpkit.Named] and [Key] do. A Rules learns the servers it serves from
// [Rules.Attach]; each [Rules.Add] and [Rules.Remove] refreshes them before
// it returns, and they tell their clients with
// notifications/tools/list_changed.
//
// # Precedence
//
// For each version of each tool, as the catalog transforms made it:
//
//  1. A Disable rule that selects the tool hides it from everyone, whatever
//     any other rule says: disable beats enable.
//  2. In an allowlist ([NewAllowlist]), a tool that no Enable rule selects
//     is hidden from everyone; with no Enable rule, nothing is served. In
//     Rules made by [New], every tool not disabled is enabled, and Enable
//     rules change nothing.
//  3. An enabled tool is shown to a request only if every Require rule
//     that selects it holds for the request (and always if none does).
//  4. The order in which rules were added does not matter.
//
// A rule about a tool holds on every way to reach it. A Disable or Require
// rule that selects a tool also selects every tool derived from it (see
// [mcpkit.Tool.Lineage]): its deprecated aliases, the tools package
// transform derives from it, its namespaced name. Require(Named("delete_repo"),
// Scopes("admin")) hides the alias remove_repo from a caller without the
// scope too, even with a match function that reads only t.Name. A rule
// that names a derived tool, in turn, selects that tool alone:
// Disable(Named("remove_repo")) retires the alias and keeps delete_repo.
// An Enable rule enables the tools it selects, and [mcpkit.Named] and [Key]
// select by every name in a tool's lineage: in an allowlist,
// Enable(Named("delete_repo")) enables its aliases, and
// Enable(Named("remove_repo")) the alias alone, by the operator's choice.
//
// Rules see each version of a tool separately. When the highest version
// of a tool is hidden (for everyone, or from one request), the next
// version that is not is listed and called, as [mcpkit.Server] serves the
// highest visible version.
//
// # Hidden means never registered
//
// A hidden tool is absent from tools/list, and a call to it gets exactly
// the answer to a name that was never registered: JSON-RPC error -32602
// `unknown tool "name"`. That holds for a call pinned to a hidden version
// (see [mcpkit.MetaKeyVersion]) and for a tool hidden by a per-request rule,
// so that a caller cannot tell a tool it may not see from one that does not
// exist.
//
// # Per-request rules
//
// A [Predicate] reads what the request carries: its verified bearer token
// (behind the SDK's auth.RequireBearerToken; see [Scopes], [Users],
// [Claim], [Authenticated]), its HTTP headers ([Header]), its protocol
// version ([ProtocolAtLeast]), its client's declared capabilities
// ([RequireClientCapabilities]), or any value the embedding service put in
// its context. Predicates never key on the session, which the 2026-07-28
// protocol does not have. On stdio and in-memory transports a request has
// neither headers nor token, and the predicates of this package that read
// them ([Authenticated], [Scopes], [Users], [Claim], [Header]) answer as
// they do for a stranger: no. Protocol version and client capabilities are
// known on every transport.
//
// Context values reach a predicate as the SDK hands them to handlers: on
// stateless streamable HTTP, those of each HTTP request; on stateful
// streamable HTTP, those of the request that opened the session, since the
// SDK serves a session's requests in the context of its connection. Who is
// calling is best read from the token.
//
// While any Require rule is in effect, every tools/list answer has
// cacheScope "private" (it depends on who asks); otherwise "public".
// Evaluating the rules for a request needs no notification: a request sees
// what its own credentials allow. Adding or removing a rule, Require rules
// included, may change what clients see; the clients listening for changes
// whose list it changes are told, and only those. A listener is judged by
// the request that opened it (a session's initialize request, a 2026-07-28
// subscriptions/listen request), so that a client does not hear that tools
// hidden from it come and go, whether rules or the registry change; see
// [mcpkit.Server.Refresh] for the details and the exceptions.
//
// # Cost
//
// Enable and Disable rules are evaluated when the server's registry or the
// rules change, never per request: a tool hidden from everyone costs
// nothing per request. Adding or removing a rule by name has the servers
// ask again about the tools it names alone ([mcpkit.Server.RefreshTools]),
// at a cost that does not grow with the catalog; a rule with a match
// function, which could select any tool, has them ask about every tool. The Require rules that select a tool are found the
// first time the tool is asked about after a change of rules, and kept by
// the tool's identity (without keeping a removed tool alive), so that per
// request a tool costs one map lookup and the predicates that apply to it,
// without allocation. A tools/call asks about the tool it calls (and, when
// the highest versions are hidden, the ones above the version it gets); a
// tools/list asks about the tools it walks through to fill its page. The
// one predicate here that may allocate is RequireClientCapabilities' on
// protocol 2026-07-28, where the SDK decodes the client's capabilities
// from each request's _meta.
package visibility
