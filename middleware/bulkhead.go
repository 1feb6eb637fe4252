package middleware

import (
	"maps"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit"
)

// BulkheadOptions configures [Bulkhead]. A nil *BulkheadOptions means the
// defaults.
type BulkheadOptions struct {
	// Pool returns the name of the pool a tool's calls run in, one of the
	// keys of the pools given to Bulkhead; a tool whose pool is not one of
	// them (Pool returns "", say) is not limited by the bulkhead. It is
	// called when a tool's chain is built. Nil means that a pool holds the
	// tools [mcpkit.Named] selects by its name: the tool served under it,
	// its versions, its deprecated aliases, the tools derived from it and
	// its namespaced names.
	Pool func(*mcpkit.Tool) string

	// TargetPool, if set, returns the name of the pool a prompt, a
	// resource or a template is served in, as Pool does for tools ("" for
	// none); it is called when the target's chain is built. Nil means
	// that no prompt or resource is in a pool.
	TargetPool func(mcpkit.Target) string

	// Wait is how long a call waits for a slot in its pool before it is
	// rejected, as [ConcurrencyLimitOptions.Wait] says: zero, the default,
	// rejects at once.
	Wait time.Duration

	// RetryAfter is the delay a rejected call is told to wait, as
	// [ConcurrencyLimitOptions.RetryAfter] says: zero means
	// [DefaultBusyRetryAfter].
	RetryAfter time.Duration
}

// Bulkhead returns a Middleware that runs the calls of each pool of tools
// in slots of their own: at most pools[name] calls of the tools in pool
// name run at once, whatever the other pools' calls do, so that one slow
// or stuck tool uses up its own pool and never the slots of the others. A
// pool of zero or fewer slots has no limit.
//
//	srv.Use(middleware.Bulkhead(map[string]int{"report": 2, "search": 16}, nil))
//
// gives the tool "report" 2 slots and "search" 16, and leaves the other
// tools alone. A pool named after a tool holds the tools
// mcpkit.Named(name) selects, which share its slots: a pool "report"
// holds report, its deprecated alias (transform.Alias), a tool derived
// from it and its namespaced name gh.report; a pool "gh.report" holds
// gh.report and what derives from it. With [BulkheadOptions.Pool], tools
// share pools by tag or by any other property of the tool.
//
// A tool that several pools hold (gh.report, with pools "report" and
// "gh.report") takes a slot in each, in the order of the pools' names
// (gh.report's, then report's), and is rejected when one of them is full.
// Every call takes its slots in that one order, so that calls waiting for
// slots ([BulkheadOptions.Wait]) never wait for each other in a cycle.
//
// Each pool is one [ConcurrencyLimit], whose slots every tool of the pool
// shares, applied with [mcpkit.ForTools] to the tools of the pool, and
// follows its rules: a call holds its slot until its handler really
// returns, also after [Timeout] has answered it, and a rejection is a
// retryable [*mcpkit.ToolError] wrapping [ErrBusy] that reads `tool
// "report" is busy: the limit of 2 concurrent calls is reached; try again
// later`, with a retry hint in its _meta. Inside a [mcpkit.Server], each
// tool gets the layers of its pools, resolved when its chain is built,
// listed by [mcpkit.Server.Pipeline] as "middleware.Bulkhead" with their
// concurrency; the other pools' layers are listed as skipped.
//
// Prompts and resources are in pools when [BulkheadOptions.TargetPool]
// puts them there: a prompts/get or a resources/read then takes a slot of
// its pool, shared with the pool's tools, and a rejection names the
// prompt or the resource.
//
// Bulkhead belongs with the other limits, inside [MaskErrors] and outside
// [Timeout]. With a ConcurrencyLimit over all tools, put Bulkhead outside
// it: a call then takes its pool's slot first, so that a pool's calls
// hold at most as many shared slots as the pool has, and a call waiting
// for its pool holds none.
func Bulkhead(pools map[string]int, opts *BulkheadOptions) mcpkit.Middleware {
	var o BulkheadOptions
	if opts != nil {
		o = *opts
	}
	names := slices.Sorted(maps.Keys(pools))
	layers := make([]mcpkit.Middleware, 0, len(names))
	for _, name := range names {
		match := mcpkit.Named(name)
		if o.Pool != nil {
			match = func(t *mcpkit.Tool) bool { return o.Pool(t) == name }
		}
		layer := mcpkit.NamedMiddleware("middleware.Bulkhead",
			ConcurrencyLimit(pools[name], &ConcurrencyLimitOptions{Wait: o.Wait, RetryAfter: o.RetryAfter}))
		if o.TargetPool == nil {
			layers = append(layers, mcpkit.ForTools(match, layer))
			continue
		}
		layers = append(layers, mcpkit.For(func(t mcpkit.Target) bool {
			if tool, ok := t.(*mcpkit.Tool); ok {
				return match(tool)
			}
			return o.TargetPool(t) == name
		}, layer))
	}
	return mcpkit.Chain(layers...)
}
