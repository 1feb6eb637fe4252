// Package tasks provides the MCP tasks extension (SEP-2663,
// "io.modelcontextprotocol/tasks") for mcpkit tools: a tool call answered
// with a task handle at once, whose work goes on in the background and
// whose result the client fetches later with tasks/get.
//
//	caps := &mcp.ServerCapabilities{}
//	caps.AddExtension(tasks.ExtensionID, map[string]any{}) // advertise the extension
//	srv := mcpkit.NewServer(impl, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{Capabilities: caps}})
//	m := tasks.NewManager(nil) // or &tasks.Options{Store: aSharedStore} for several replicas
//	if err := m.Attach(srv); err != nil { ... }
//	srv.Add(tasks.Tool(report, m, &tasks.ToolOptions{Timeout: 10 * time.Minute}))
//	defer m.Shutdown(ctx)
//
// # Where the task begins
//
// [Tool] replaces a tool's Handler, so the task boundary is the innermost
// point of the call's chain: the server's middleware, the tool's
// middleware, visibility, authorization, rate limits, idempotency and
// argument validation have all run, on the request, before a task exists,
// and a call they refuse creates none. Then the handler stores the task,
// durably (once the client has the task's ID, tasks/get finds it on every
// replica sharing the store), and answers with the CreateTaskResult. The
// tool's own Handler, wrapped in [ToolOptions].Middleware and Timeout, runs
// on a goroutine detached from the request: it keeps the request's context
// values and the [mcpkit.Request] (token, headers, arguments), not its
// cancellation or deadline, nor its session, which on a stateless server
// ends with the request. Its outcome is mapped by the server's error table
// ([mcpkit.WireResult]): a result, tool errors, timeouts, panics and
// internal errors included (isError), makes the task completed; a JSON-RPC
// error makes it failed, with that error inlined. Output-schema validation
// does not apply inside a task.
//
// Middleware outside the boundary sees the call end when the task is
// created: the outcome of the work never passes through it. What must act
// on the outcome goes in [ToolOptions].Middleware, which runs with the work:
// middleware.MaskErrors above all (without it, an internal error's text is
// in the task's result), result size limits, logging or metrics of the work
// itself ([InfoFromContext] names the task), and otelmcp.NewTaskMiddleware,
// which traces the work in a trace of its own, linked to the creating
// call's span.
//
// # Policy
//
// The client decides nothing but whether it can take a task: a call from a
// client that declared the extension on the request (in 2026-07-28, in the
// request's _meta "io.modelcontextprotocol/clientCapabilities"; before,
// in the capabilities of initialize) always becomes a task. SEP-2663 forbids
// a task for a client that did not: then an [Optional] tool (the default)
// runs synchronously, under the request's context, as an ordinary tool
// does; a [Required] tool is refused with JSON-RPC error -32021 (missing
// required client capability), whose data names the extension
// ({"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}).
//
// # The methods
//
// [Manager.Attach] registers on the SDK server:
//   - tasks/get: the task's status, its result (completed) or error
//     (failed) inlined. An unknown or expired task is JSON-RPC -32602.
//   - tasks/cancel: a task that is not terminal becomes cancelled at once
//     and its handler's context is cancelled before the answer is sent,
//     when the work runs on this replica or is about to (a round that has
//     not started yet never starts); on another replica, at that replica's
//     next lease renewal. A terminal task stays as it is. The answer is an
//     empty acknowledgement, for any task ID.
//   - tasks/update: answers to the input a task waits for. Work that
//     returns an input_required result (SEP-2322, see mcpkit.InputResponse)
//     parks its task as input_required, its requests in tasks/get's
//     inputRequests; tasks/update keeps the answers to requests still
//     outstanding and ignores others (SEP-2663), and when none is left the
//     work runs again, on the replica that got the last answer, with the
//     call's arguments, every answer of the round and the request state it
//     gave (which never reaches the wire). The round reaches the task's
//     tool as a call does, by the name and version the call reached it by
//     (a mounted, aliased or provided name included), as the caller the
//     tasks/update request shows ([mcpkit.Server.Resolve], on the server
//     the manager is attached to), and runs its whole chain, the server's
//     middleware and the tool's requirements included, then the work. A
//     tool hidden from that caller, removed since, or not the task's own
//     (another tool of that name, or on the replica that made the task, a
//     tool that replaced it under the same name and version: see
//     [Task].Handler) does not run: the task becomes failed,
//     with the error a call to an
//     unknown tool gets (-32602). The answer is an empty acknowledgement,
//     for any task ID.
//
// Each needs the extension on the request (-32021 otherwise, as above), and
// an Mcp-Name header, when there is one, must name the task of the body
// (-32020 otherwise, SEP-2243).
// tasks/list and tasks/result do not exist in the extension; the SDK answers
// them -32601.
//
// # Identity
//
// A task ID is a name, not a capability. A task belongs to the principal
// that created it: the verified token's user ID, else a hash of the bearer
// token, else nobody in particular (stdio, in-memory, unauthenticated
// HTTP: one principal). Every tasks/* request is checked against it, and
// another principal gets exactly the answer for a task that does not
// exist. Nothing keys on a session.
//
// # Several replicas
//
// Tasks live in a [Store]; the [MemoryStore] serves one process, and a
// shared store (Redis: redisstore.NewTaskStore) lets any replica answer for a task another runs, and
// resume one that waited for input (every replica must serve the same task
// tools, made with [Tool]). The
// replica running a task holds a lease on it and renews it every third of
// [Options].Lease; a task whose lease ran out (its replica died) is
// reported failed, with JSON-RPC error -32603, by the next tasks/get. A
// task is kept for [Options].TTL from its creation, then forgotten, and its
// work stopped if it still runs. [Manager.Shutdown] stops the tasks a
// replica runs and marks them failed. A replica that drains
// ([mcpkit.Server.Drain]) hands them over instead: each stays working,
// without a lease, until a tasks/get on another replica takes it up and
// runs its work again there from the start of its round (so work must be
// safe to repeat, as a retried call is).
//
// # Memory
//
// The [MemoryStore] is bounded in tasks and in bytes, in all and for each
// principal, so that one principal cannot lock the others out; a call that
// finds no room gets a retryable tool error, with a retry hint. A task
// keeps one copy of its call's arguments, shared by its record and its
// work, and drops it when it ends.
//
// # Conventions
//
// Options are structs, nil meaning the defaults, as in the SDK.
package tasks
