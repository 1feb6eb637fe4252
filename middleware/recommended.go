package middleware

import (
	"log/slog"
	"time"

	"github.com/mcpkit/mcpkit"
)

// DefaultTimeout is the per-call time limit of [Recommended].
const DefaultTimeout = 30 * time.Second

// RecommendedOptions configures [Recommended]. A nil *RecommendedOptions
// means the defaults.
type RecommendedOptions struct {
	// Logger receives one record per call (see [Logging]), panics with
	// their stack included, and the panics of handlers that overran their
	// time limit. Nil means no logging.
	Logger *slog.Logger

	// Timeout limits each call; zero means DefaultTimeout, a negative
	// duration no limit (for per-tool limits: a negative Timeout here, then
	// [Timeout] layers selected with [mcpkit.ForTools]).
	Timeout time.Duration

	// Limits are placed between MaskErrors and Timeout, where
	// CacheResults, CircuitBreaker, RateLimit, Bulkhead and
	// ConcurrencyLimit belong, in that order: a cache hit costs no limit, a
	// rejected call costs nothing further, waiting for a slot does not use
	// up a call's time, and a rejection is never masked. Idempotent, size
	// limits and TokenBudget belong inside Timeout: give them to
	// [mcpkit.Server.Use] after Recommended.
	Limits []mcpkit.Middleware

	// ShowErrors leaves the text of internal errors visible to clients,
	// for development. By default they are masked.
	ShowErrors bool
}

// Recommended returns the chain most servers want, as one middleware for
// [mcpkit.Server.Use]. In order, outermost first:
//
//  1. Logging: one record per call, outermost so that it sees what every
//     layer below did (a rejection, a timeout, a panic) and times it all.
//     It is the only layer that logs a call, so each outcome is logged
//     once, and internal errors with their real text.
//  2. Recover: a panic anywhere below, a re-raised one from Timeout
//     included, becomes a fatal error with a generic text; the server
//     keeps serving.
//  3. MaskErrors: internal errors reach the client as a generic text, so
//     that connection strings and stack traces stay on the server; tool
//     errors, validation errors and timeouts pass, since they are meant
//     for the model. Skipped with ShowErrors.
//  4. Limits, in the order given.
//  5. Timeout: the handler's context ends after the limit, and the caller
//     gets its answer then even if the handler does not stop.
//
// Argument validation is not part of it: the [mcpkit.Server] validates
// every call, innermost, by default.
func Recommended(opts *RecommendedOptions) mcpkit.Middleware {
	var o RecommendedOptions
	if opts != nil {
		o = *opts
	}
	chain := []mcpkit.Middleware{Logging(&LoggingOptions{Logger: o.Logger}), Recover(nil)}
	if !o.ShowErrors {
		chain = append(chain, MaskErrors(nil))
	}
	chain = append(chain, o.Limits...)
	switch {
	case o.Timeout == 0:
		chain = append(chain, Timeout(DefaultTimeout, &TimeoutOptions{Logger: o.Logger}))
	case o.Timeout > 0:
		chain = append(chain, Timeout(o.Timeout, &TimeoutOptions{Logger: o.Logger}))
	}
	return mcpkit.Chain(chain...)
}
