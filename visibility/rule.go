package visibility

import (
	"context"
	"fmt"
	"slices"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/version"
)

// A Rule is one statement about which tools (and prompts) are served,
// made by [Enable], [Disable], [Require], [ReadOnlyFor],
// [RequireClientCapabilities], or by name with [EnableNames],
// [DisableNames], [DisableVersion] and [RequireNames], and put in effect by
// [Rules.Add]. A Rule is immutable: the same Rule may be added to several
// Rules, and is removed by identity with [Rules.Remove].
type Rule struct {
	effect effect
	match  func(*mcpkit.Tool) bool // Enable and Disable: the tools it applies to

	// check returns the per-request check a Require rule puts on t, or nil
	// when the rule does not apply to t. It is called once per tool
	// version and rule set, not per request.
	check func(t *mcpkit.Tool) Predicate

	// other selects the targets of the other kinds (prompts) that the rule
	// applies to; nil when it applies to tools alone. A Require rule puts
	// pred on them.
	other func(mcpkit.Target) bool
	pred  Predicate

	// names, when not nil, are the names by which the rule selects its
	// tools (see [EnableNames]): every tool it selects has one of them in
	// its lineage, so a change of the rule concerns those tools alone.
	names []string

	// written are the tool names the rule was written with (names, or
	// those of its match function: see mcpkit.SelectorNames), for the
	// server's report of those that select no tool.
	written []string
}

type effect int

const (
	enable effect = iota + 1
	disable
	require
)

// selects returns what a match function over T selects, as the rules ask
// it: the tools, the targets of the other kinds (nil: none), and the tool
// names it was written with. A match over *mcpkit.Tool selects tools
// alone; one over *mcpkit.Prompt, prompts alone; one over [mcpkit.Target],
// everything.
func selects[T mcpkit.Target](match func(T) bool) (tools func(*mcpkit.Tool) bool, other func(mcpkit.Target) bool, written []string) {
	switch m := any(match).(type) {
	case func(*mcpkit.Tool) bool:
		return m, nil, mcpkit.SelectorNames(m)
	case func(mcpkit.Target) bool:
		tools = func(t *mcpkit.Tool) bool { return m(t) }
		return tools, func(t mcpkit.Target) bool { _, tool := t.(*mcpkit.Tool); return !tool && m(t) }, mcpkit.SelectorNames(tools)
	}
	return noTool, func(t mcpkit.Target) bool {
		x, ok := t.(T)
		return ok && match(x)
	}, nil
}

// noTool selects no tool.
func noTool(*mcpkit.Tool) bool { return false }

// Enable returns a Rule that enables what match selects. It matters to
// an allowlist ([NewAllowlist]), where only enabled tools and prompts are
// served, and never overrides a Disable rule. In a Rules made by [New],
// everything is enabled already. Enable panics if match is nil.
//
// Match selects tools (a func(*mcpkit.Tool) bool such as
// [mcpkit.Tagged]), prompts (a func(*mcpkit.Prompt) bool), resources
// (*mcpkit.Resource), templates (*mcpkit.ResourceTemplate), or targets of
// every kind (a func(mcpkit.Target) bool such as [AllTargets]).
func Enable[T mcpkit.Target](match func(T) bool) *Rule {
	if match == nil {
		panic("visibility: Enable: nil match")
	}
	tools, other, written := selects(match)
	return &Rule{effect: enable, match: tools, other: other, written: written}
}

// Disable returns a Rule that stops serving what match selects, to
// everyone, whatever other rules say: a disabled tool is absent from
// tools/list and answered as an unknown tool, and a disabled prompt alike.
// Match selects as [Enable]'s does. Disable panics if match is nil.
func Disable[T mcpkit.Target](match func(T) bool) *Rule {
	if match == nil {
		panic("visibility: Disable: nil match")
	}
	tools, other, written := selects(match)
	return &Rule{effect: disable, match: tools, other: other, written: written}
}

// Require returns a Rule that shows what match selects only to the
// requests for which p holds; to the others it is hidden as if never
// registered. When several Require rules select a tool (or prompt), each
// must hold. Match selects as [Enable]'s does. Require panics if match or p
// is nil.
//
// The match function is asked once per tool version (or prompt), when it
// is first seen after a change of rules, and p once per request for each
// one that match selected. Require, Enable and Disable also ask a match
// over tools once, with a tool of no name, for the names it selects by
// (see [mcpkit.SelectorNames]): a server logs those that select no tool.
func Require[T mcpkit.Target](match func(T) bool, p Predicate) *Rule {
	if match == nil {
		panic("visibility: Require: nil match")
	}
	if p == nil {
		panic("visibility: Require: nil predicate")
	}
	tools, other, written := selects(match)
	return &Rule{effect: require, written: written, other: other, pred: p, check: func(t *mcpkit.Tool) Predicate {
		if tools(t) {
			return p
		}
		return nil
	}}
}

// ReadOnlyFor returns a Rule that puts the requests for which p holds in
// read-only mode: they see and call only the tools annotated readOnlyHint
// (see [ReadOnly]). It is Require(mcpkit.Not(ReadOnly), not p). For a
// read-only mode for everyone, use Disable(mcpkit.Not(ReadOnly)).
// ReadOnlyFor panics if p is nil.
func ReadOnlyFor(p Predicate) *Rule {
	if p == nil {
		panic("visibility: ReadOnlyFor: nil predicate")
	}
	notP := Predicate(func(ctx context.Context, c mcpkit.Caller) bool { return !p(ctx, c) })
	return Require(func(t *mcpkit.Tool) bool { return !ReadOnly(t) }, notP)
}

// Tags by which a tool says it needs a capability of the client; see
// [RequireClientCapabilities].
const (
	// NeedsElicitation marks a tool that asks the user for input
	// (elicitation/create) while it runs.
	NeedsElicitation = "needs:elicitation"
	// NeedsSampling marks a tool that asks the client's model for a
	// completion (sampling/createMessage) while it runs.
	NeedsSampling = "needs:sampling"
	// NeedsRoots marks a tool that reads the client's roots (roots/list).
	NeedsRoots = "needs:roots"
)

// RequireClientCapabilities returns a Rule that hides a tool from clients
// that did not declare a capability it needs. A tool says what it needs by
// carrying the tags [NeedsElicitation], [NeedsSampling] or [NeedsRoots] in
// [mcpkit.Tool.Tags]: tags are for the server's rules and are not sent to
// clients. A client declares its capabilities when it initializes (up to
// protocol 2025-11-25) or in each request's _meta (2026-07-28); a request
// whose client capabilities are not known sees no tool that needs one.
func RequireClientCapabilities() *Rule {
	return &Rule{effect: require, check: func(t *mcpkit.Tool) Predicate {
		elicitation, sampling, roots := t.HasTag(NeedsElicitation), t.HasTag(NeedsSampling), t.HasTag(NeedsRoots)
		if !elicitation && !sampling && !roots {
			return nil
		}
		return func(_ context.Context, c mcpkit.Caller) bool {
			caps := c.ClientCapabilities()
			return caps != nil &&
				(!elicitation || caps.Elicitation != nil) &&
				(!sampling || caps.Sampling != nil) &&
				(!roots || caps.RootsV2 != nil)
		}
	}}
}

// AllTools is a match function that selects every tool:
// Require(AllTools, Authenticated()) hides every tool from strangers.
func AllTools(*mcpkit.Tool) bool { return true }

// AllPrompts is a match function that selects every prompt.
func AllPrompts(*mcpkit.Prompt) bool { return true }

// AllResources is a match function that selects every resource (at one
// URI; templates are selected by a match over *mcpkit.ResourceTemplate).
func AllResources(*mcpkit.Resource) bool { return true }

// AllTargets is a match function that selects everything a server serves:
// tools, prompts, resources and templates. Require(AllTargets,
// Authenticated()) hides the whole server from strangers.
func AllTargets(mcpkit.Target) bool { return true }

// ReadOnly is a match function that selects the tools annotated
// readOnlyHint: true, those that do not modify their environment.
func ReadOnly(t *mcpkit.Tool) bool {
	return t.Annotations != nil && t.Annotations.ReadOnlyHint
}

// Key returns a match function that selects one version of one tool: the
// tool served as name with version ver ("" for an unversioned tool), and
// the tools derived from it (see [mcpkit.Tool.Lineage]). It is
// [mcpkit.NamedVersion]: a server reports a version the tool does not
// have, as it reports a misspelt name.
func Key(name, ver string) func(*mcpkit.Tool) bool {
	return mcpkit.NamedVersion(name, ver)
}

// VersionRange returns a match function that selects the versioned tools
// whose version v is in [min, max): min <= v < max in mcpkit's order of
// versions (see [mcpkit.Tool.Version]: "1.10" is above "1.9", and "v1.2",
// "1.2" and "1.2.0" rank alike). An empty min or max leaves that end open.
// Unversioned tools never match.
//
// VersionRange panics if min is not below max.
func VersionRange(min, max string) func(*mcpkit.Tool) bool {
	if min != "" && max != "" && version.Rank(min, max) >= 0 {
		panic(fmt.Sprintf("visibility: VersionRange: %q is not below %q", min, max))
	}
	return func(t *mcpkit.Tool) bool {
		v := t.Version
		return v != "" &&
			(min == "" || version.Rank(v, min) >= 0) &&
			(max == "" || version.Rank(v, max) < 0)
	}
}

// EnableNames returns a Rule that enables the tools served under one of
// the given names and the tools derived from them, as
// Enable(mcpkit.Named(names...)) does. Adding or removing it costs in
// proportion to the tools it selects, not to the registry: prefer it (and
// [DisableNames], [DisableVersion], [RequireNames]) over a match function
// in large catalogs.
func EnableNames(names ...string) *Rule {
	names = slices.Clone(names)
	return &Rule{effect: enable, match: mcpkit.Named(names...), names: nonNil(names), written: names}
}

// DisableNames returns a Rule that stops serving the tools served under
// one of the given names and the tools derived from them, as
// Disable(mcpkit.Named(names...)) does, at a cost in proportion to those
// tools: see [EnableNames].
func DisableNames(names ...string) *Rule {
	names = slices.Clone(names)
	return &Rule{effect: disable, match: mcpkit.Named(names...), names: nonNil(names), written: names}
}

// DisableVersion returns a Rule that stops serving one version of one
// tool, as Disable(Key(name, ver)) does: the tool served as name with
// version ver ("" for an unversioned tool), and the tools derived from it.
// Its cost is in proportion to the versions of name: see [EnableNames].
func DisableVersion(name, ver string) *Rule {
	match := Key(name, ver)
	return &Rule{effect: disable, match: match, names: []string{name}, written: mcpkit.SelectorNames(match)}
}

// RequireNames returns a Rule that shows the tools served under one of the
// given names, and the tools derived from them, only to the requests for
// which p holds, as Require(mcpkit.Named(names...), p) does, at a cost in
// proportion to those tools: see [EnableNames]. RequireNames panics if p
// is nil.
func RequireNames(p Predicate, names ...string) *Rule {
	names = slices.Clone(names)
	r := Require(mcpkit.Named(names...), p)
	r.names = nonNil(names)
	return r
}

// nonNil returns names, or an empty slice for none: a rule of no names
// selects no tool, and a change of it concerns none.
func nonNil(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}
