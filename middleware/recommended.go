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
	// Timeout limits each call; zero means DefaultTimeout, a negative
	// duration no limit. Per-tool limits go in TimeoutOptions.PerTool.
	Timeout time.Duration
	// TimeoutOptions, if set, configures the time limit further.
	TimeoutOptions *TimeoutOptions

	// Validation is the mode of argument validation; zero means Lenient.
	Validation ValidationMode
	// ValidateOptions, if set, configures validation further; its Mode is
	// replaced by Validation when that is set.
	ValidateOptions *ValidateOptions

	// ShowErrors leaves the text of internal errors visible to clients,
	// for development. By default they are masked.
	ShowErrors bool
}

// Recommended returns the chain most servers want, as one middleware for
// [mcpkit.Server.Use]. In order, outermost first:
//
//  1. Logging: one record per call, outermost so that it sees what every
//     layer below did (a rejection, a timeout, a panic) and times it all.
//  2. Recover: a panic anywhere below, a re-raised one from Timeout
//     included, becomes a fatal error with a generic text; the server
//     keeps serving.
//  3. MaskErrors: internal errors reach the client as a generic text, so
//     that connection strings and stack traces stay on the server; tool
//     errors, validation errors and timeouts pass, since they are meant
//     for the model. Skipped with ShowErrors.
//  4. Timeout: the handler's context ends after the limit, and the caller
//     gets its answer then even if the handler does not stop.
//  5. Validate: arguments are checked (and, leniently, coerced) against
//     the input schema before the handler runs, inside the time limit;
//     structured results are checked against the output schema.
//
// Limits on rate, concurrency and size depend on the deployment and are
// left out; add them between MaskErrors and Timeout. A nil logger means no
// logging (Recover and MaskErrors then log nothing either).
func Recommended(logger *slog.Logger, opts *RecommendedOptions) mcpkit.Middleware {
	var o RecommendedOptions
	if opts != nil {
		o = *opts
	}
	chain := []mcpkit.Middleware{Logging(logger, nil), Recover(logger, nil)}
	if !o.ShowErrors {
		chain = append(chain, MaskErrors(&MaskErrorsOptions{Logger: logger}))
	}
	switch {
	case o.Timeout == 0:
		chain = append(chain, Timeout(DefaultTimeout, o.TimeoutOptions))
	case o.Timeout > 0:
		chain = append(chain, Timeout(o.Timeout, o.TimeoutOptions))
	}
	var vo ValidateOptions
	if o.ValidateOptions != nil {
		vo = *o.ValidateOptions
	}
	if o.Validation != DefaultValidation {
		vo.Mode = o.Validation
	}
	if vo.Logger == nil {
		vo.Logger = logger
	}
	chain = append(chain, Validate(&vo))
	return mcpkit.Chain(chain...)
}
