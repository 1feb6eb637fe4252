// Package mcpkit provides a middleware pipeline for MCP tools, modelled on
// net/http and served through the official Go MCP SDK, which keeps the
// wire: transports, sessions and protocol versions (2025-11-25 and
// 2026-07-28 clients on one endpoint).
//
// A tool is a [Handler] with an MCP definition, gathered in a [Tool] and
// registered on a [Server], which validates every call's arguments against
// the tool's schema. Behaviour around tools is [Middleware], a
// func(Handler) Handler composed once: [Chain](a, b, c)(h) is a(b(c(h))),
// the first outermost. [ForTools] gives some tools middleware of their
// own; [ListMiddleware] shapes tools/list. A [Prompt], a [Resource] and a
// [ResourceTemplate] ([Server.AddPrompts], [Server.AddResources]) are
// reached, hidden and listed by the same rules as a tool, and served
// through the same middleware, those whose Handler also implements
// [PromptHandler] or [ResourceHandler] (middleware.Recover, MaskErrors,
// Timeout, Logging, RequireScopes); a layer that serves tools only is left
// out of their chains. A whole server:
//
//	srv := mcpkit.NewServer(&mcp.Implementation{Name: "calc"}, nil)
//	srv.Use(middleware.Recommended(nil)) // a log line per call, recovery, masking, a time limit
//	if err := srv.Add(tools.Must(tools.New("add", add, nil))); err != nil {
//		log.Fatal(err)
//	}
//	http.Handle("/mcp", srv.HTTPHandler(nil))
//
// The packages of this module:
//
//   - mcpkit: the Server and its registry, the error table, versions,
//     providers and mounts ([Server.Mount]), replicas ([Server.ShareChanges])
//     and their restarts ([Server.Drain]);
//   - tools: typed tools from Go functions;
//   - middleware: the catalog (Recommended, Timeout, RateLimit, Bulkhead,
//     CacheResults, ...) and list middleware;
//   - transform: renamed, aliased and derived tools, namespaces, versions,
//     discovery meta-tools, portable schemas;
//   - visibility: which tools exist, for everyone and per request;
//   - tasks: tool calls that run in the background;
//   - requeststate: sealed request state of input_required results;
//   - proxy: a remote MCP server's tools served through this one;
//   - apps: tools of MCP Apps, rendered by HTML views;
//   - skills: SKILL.md directories for the Skills extension;
//   - otelmcp: OpenTelemetry traces and metrics;
//   - mcpkittest: the test harness, shaped like net/http/httptest.
//
// Modules of their own, so that the core stays light:
//
//   - github.com/mcpkit/mcpkit/oauth: token verifiers (JWT, introspection)
//     for an OAuth resource server, and oauth/oauthtest, a development
//     issuer;
//   - github.com/mcpkit/mcpkit/openapi: an HTTP API's OpenAPI operations
//     as tools;
//   - github.com/mcpkit/mcpkit/redisstore: the stores and the event bus on
//     Redis, for replicas.
//
// The guides are in the repository's docs directory, from
// docs/getting-started.md on; docs/concepts.md is the long form of this
// package: the order of middleware, validation, the error table, who is
// calling, versions, identity across routes, replicas and composition.
// Runnable programs are in examples/.
package mcpkit
