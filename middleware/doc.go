// Package middleware provides the built-in [mcpkit.Middleware] catalog:
// argument and result validation, recovery from panics, time limits, error
// masking, logging, and limits on concurrency, rate and size; and the list
// middleware [Deref], which removes $ref from advertised schemas.
//
// [Recommended] returns the chain most servers want:
//
//	srv.Use(middleware.Recommended(logger, nil))
//	srv.UseList(middleware.Deref(nil))
//
// or, spelled out, with limits added:
//
//	srv := mcpkit.NewServer(&mcp.Implementation{Name: "demo"}, nil)
//	srv.Use(
//		middleware.Logging(logger, nil),
//		middleware.Recover(logger, nil),
//		middleware.MaskErrors(&middleware.MaskErrorsOptions{Logger: logger}),
//		middleware.RateLimit(middleware.NewTokenBucket(10, 20, nil), nil),
//		middleware.ConcurrencyLimit(64, nil),
//		middleware.Timeout(30*time.Second, &middleware.TimeoutOptions{
//			PerTool: middleware.ByName(map[string]time.Duration{"report": 5 * time.Minute}),
//		}),
//		middleware.ArgumentSizeLimit(1<<20, nil),
//		middleware.ResultSizeLimit(1<<20, &middleware.ResultSizeLimitOptions{Truncate: true}),
//		middleware.Validate(nil),
//	)
//
// # Order
//
// The first middleware in a chain is the outermost: it sees the call first
// and the outcome last. The recommended order, outermost first, is
//
//	Logging -> Recover -> MaskErrors -> RateLimit, ConcurrencyLimit -> Timeout
//	        -> ArgumentSizeLimit, ResultSizeLimit -> Validate -> handler
//
// Logging is outermost so that its one record per call covers everything
// the others do; Recover next, so that a panic anywhere inside (a re-raised
// one from Timeout included) becomes an error the rest of the chain
// handles; MaskErrors then hides internal errors from everything inside it.
// The limits reject calls before they cost anything, and outside Timeout,
// so that waiting for a slot does not use up a call's time. Size limits and
// validation run within the time limit. Each middleware's documentation
// says where it belongs.
//
// # Conventions
//
// Every middleware constructor returns an [mcpkit.Middleware], never a bare
// function value. Required arguments come first, then a pointer to an
// options struct, XOptions for constructor X, where nil means the defaults.
// Invalid configuration panics in the constructor. The
// middleware's state (semaphores, buckets) is created by the constructor and
// shared by every tool the middleware is applied to, so one
// ConcurrencyLimit in [mcpkit.Server.Use] limits all tools together.
//
// Settings that may differ per tool have a PerTool field in the options: a
// function of the [mcpkit.Tool], whose zero value means "use the
// server-wide setting". [ByName] builds one from a map of tool names. When a
// [mcpkit.Server] builds a tool's chain, PerTool is asked once for that tool
// (see [mcpkit.ToolOf]), and a tool whose setting turns the middleware off
// gets no layer at all; in chains built otherwise it is asked on each call,
// with the request's Tool. Either way it should be cheap and give the same
// answer for the same tool.
//
// # Errors
//
// Middleware report failures as Go errors and leave it to the server to map
// them onto the wire once, after the outermost middleware (see the mcpkit
// package documentation). Rejections meant for the model (limits, time
// limits) are [*mcpkit.ToolError] values, which are shown and never masked,
// of class Retryable; their chains hold a sentinel or typed error
// ([ErrBusy], [ErrRateLimited], [ErrArgumentsTooLarge], [ErrResultTooLarge],
// [*RateLimitError], [*TimeoutError]) for errors.Is and errors.As. Every
// error keeps the class its ErrorClass method gives it.
package middleware
