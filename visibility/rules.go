package visibility

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit"
)

// Rules is an [mcpkit.Visibility] made of [Rule] values, which may be added
// and removed at any time, also while the servers it is attached to serve
// requests. The package documentation gives the precedence of its rules.
//
// A Rules learns its servers from [Rules.Attach], and refreshes each of
// them after every change of its rules, so that their clients receive
// notifications/tools/list_changed. (A Rules given to
// [mcpkit.Server.SetVisibility] directly is not refreshed: call
// [mcpkit.Server.Refresh] after each change.) A Rules is safe for
// concurrent use.
type Rules struct {
	allowlist bool

	mu      sync.Mutex // serializes changes, and the refreshes that publish them
	servers []*mcpkit.Server
	set     atomic.Pointer[ruleSet] // what Enabled, PerRequest and Allowed read
}

// A ruleSet is an immutable state of a Rules, replaced whole on each change.
type ruleSet struct {
	allowlist bool
	rules     []*Rule // in the order added
	enable    []*Rule
	disable   []*Rule
	require   []*Rule
	checks    *checkCache[mcpkit.Tool] // per tool, the checks of the require rules
	prompts   *checkCache[mcpkit.Prompt]
	resources *checkCache[mcpkit.Resource]
	templates *checkCache[mcpkit.ResourceTemplate]
}

func newRuleSet(allowlist bool, rules []*Rule) *ruleSet {
	s := &ruleSet{allowlist: allowlist, rules: rules}
	for _, r := range rules {
		switch r.effect {
		case enable:
			s.enable = append(s.enable, r)
		case disable:
			s.disable = append(s.disable, r)
		case require:
			s.require = append(s.require, r)
		}
	}
	s.checks = newCheckCache(s.compile)
	s.prompts = newCheckCache(func(p *mcpkit.Prompt) []Predicate { return s.compileTarget(p) })
	s.resources = newCheckCache(func(r *mcpkit.Resource) []Predicate { return s.compileTarget(r) })
	s.templates = newCheckCache(func(r *mcpkit.ResourceTemplate) []Predicate { return s.compileTarget(r) })
	return s
}

// compileTarget returns the checks the require rules put on t, a target
// that is not a tool.
func (s *ruleSet) compileTarget(t mcpkit.Target) []Predicate {
	var ps []Predicate
	for _, r := range s.require {
		if r.other != nil && r.other(t) {
			ps = append(ps, r.pred)
		}
	}
	return ps
}

// compile returns the checks the require rules put on t: those of each rule
// that selects t or a tool t derives from (a call to t reaches them all).
func (s *ruleSet) compile(t *mcpkit.Tool) []Predicate {
	var ps []Predicate
	for _, r := range s.require {
		for o, depth := t, 0; o != nil && depth <= maxLineage; o, depth = o.Origin, depth+1 {
			if p := r.check(o); p != nil {
				ps = append(ps, p)
				break
			}
		}
	}
	return ps
}

// New returns Rules that serve every tool except those a rule disables or
// hides from a request: Disable and Require rules restrict, and Enable rules
// change nothing. Attach it to a server with [Rules.Attach]. New panics if
// a rule is nil.
func New(rules ...*Rule) *Rules {
	return newRules(false, rules)
}

// NewAllowlist returns Rules that serve only the tools an Enable rule
// selects (and no Disable rule does): with no Enable rule, no tool is
// served. Require rules restrict further, per request. Attach it to a
// server with [Rules.Attach]. NewAllowlist panics if a rule is nil.
func NewAllowlist(rules ...*Rule) *Rules {
	return newRules(true, rules)
}

func newRules(allowlist bool, rules []*Rule) *Rules {
	checkRules("New", rules)
	r := &Rules{allowlist: allowlist}
	r.set.Store(newRuleSet(allowlist, added(nil, rules)))
	return r
}

// Attach makes r decide which tools srv serves (it calls
// srv.SetVisibility(r)), and has r refresh srv after each change of its
// rules. One Rules may be attached to several servers; attaching it twice
// to one server has no further effect. An attachment lasts as long as r:
// r keeps refreshing srv even if srv is later given another Visibility.
func (r *Rules) Attach(srv *mcpkit.Server) {
	if srv == nil {
		panic("visibility: Attach: nil server")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.servers, srv) {
		r.servers = append(r.servers, srv)
	}
	srv.SetVisibility(r)
}

// Add puts rules in effect; rules already in effect are left as they are.
// When Add returns, every server r is attached to has been refreshed: new
// requests are answered by the new rules, calls and lists already running
// finish under the old ones, and the servers have sent
// notifications/tools/list_changed to the clients listening for changes
// whose list changed (see [mcpkit.Server.Refresh]). When every rule added
// is a rule by name ([EnableNames], [DisableNames], [DisableVersion],
// [RequireNames]), the servers ask again about the tools those rules name
// alone; otherwise about every tool. Add panics if a rule is nil.
func (r *Rules) Add(rules ...*Rule) {
	checkRules("Add", rules)
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.set.Load()
	next := added(cur.rules, rules)
	if len(next) == len(cur.rules) {
		return
	}
	r.set.Store(newRuleSet(r.allowlist, next))
	r.refresh(next[len(cur.rules):])
}

// Remove takes rules out of effect; rules not in effect are ignored. When
// Remove returns, every server r is attached to has been refreshed, as for
// [Rules.Add].
func (r *Rules) Remove(rules ...*Rule) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.set.Load()
	var removed []*Rule
	next := slices.DeleteFunc(slices.Clone(cur.rules), func(x *Rule) bool {
		if slices.Contains(rules, x) {
			removed = append(removed, x)
			return true
		}
		return false
	})
	if len(removed) == 0 {
		return
	}
	r.set.Store(newRuleSet(r.allowlist, next))
	r.refresh(removed)
}

// refresh has every attached server ask r again about the tools that the
// rules changed may select: with [mcpkit.Server.RefreshTools] when each of
// them names its tools (see [EnableNames]), in proportion to those tools,
// else with [mcpkit.Server.Refresh], about every tool. r.mu is held, so
// that the last change is the last one the servers see.
func (r *Rules) refresh(changed []*Rule) {
	var names []string
	for _, rule := range changed {
		if rule.names == nil {
			for _, srv := range r.servers {
				srv.Refresh()
			}
			return
		}
		names = append(names, rule.names...)
	}
	for _, srv := range r.servers {
		srv.RefreshTools(names...)
	}
}

// Enabled reports whether t is served at all: no Disable rule selects it
// and, in an allowlist, an Enable rule does. The server asks when its
// registry or r's rules change, never per request.
func (r *Rules) Enabled(t *mcpkit.Tool) bool {
	return r.set.Load().enabled(t)
}

// enabled is Enabled for the rules of s.
func (s *ruleSet) enabled(t *mcpkit.Tool) bool {
	for _, rule := range s.disable {
		for o, depth := t, 0; o != nil && depth <= maxLineage; o, depth = o.Origin, depth+1 {
			if rule.match(o) {
				return false
			}
		}
	}
	if !s.allowlist {
		return true
	}
	for _, rule := range s.enable {
		if rule.match(t) {
			return true
		}
	}
	return false
}

// EnabledTarget reports whether t (a tool, prompt, resource or template) is served at all,
// as [Rules.Enabled] does for tools: no Disable rule selects it and, in an
// allowlist, an Enable rule does. It makes r an
// [mcpkit.TargetVisibility].
func (r *Rules) EnabledTarget(t mcpkit.Target) bool {
	return r.set.Load().enabledTarget(t)
}

// enabledTarget is EnabledTarget for the rules of s.
func (s *ruleSet) enabledTarget(t mcpkit.Target) bool {
	if tool, ok := t.(*mcpkit.Tool); ok {
		return s.enabled(tool)
	}
	for _, rule := range s.disable {
		if rule.other != nil && rule.other(t) {
			return false
		}
	}
	if !s.allowlist {
		return true
	}
	for _, rule := range s.enable {
		if rule.other != nil && rule.other(t) {
			return true
		}
	}
	return false
}

// AllowedTarget reports whether the request c may see and reach t, an
// enabled target, as [Rules.Allowed] does for tools: the rules that select
// a prompt, resource or template are found once per target and rule set.
func (r *Rules) AllowedTarget(ctx context.Context, t mcpkit.Target, c mcpkit.Caller) bool {
	return r.set.Load().allowedTarget(ctx, t, c)
}

// allowedTarget is AllowedTarget for the rules of s.
func (s *ruleSet) allowedTarget(ctx context.Context, t mcpkit.Target, c mcpkit.Caller) bool {
	var ps []Predicate
	switch x := t.(type) {
	case *mcpkit.Tool:
		return s.allowed(ctx, x, c)
	case *mcpkit.Prompt:
		ps = s.prompts.get(x)
	case *mcpkit.Resource:
		ps = s.resources.get(x)
	case *mcpkit.ResourceTemplate:
		ps = s.templates.get(x)
	default:
		ps = s.compileTarget(t)
	}
	for _, p := range ps {
		if !p(ctx, c) {
			return false
		}
	}
	return true
}

// PerRequest reports whether r has a Require rule, so that what a request
// sees depends on the request (and lists answer with cacheScope
// "private").
func (r *Rules) PerRequest() bool {
	return r.set.Load().perRequest()
}

func (s *ruleSet) perRequest() bool { return len(s.require) > 0 }

// Allowed reports whether the request c may see and call t, an enabled
// tool: whether every Require rule that selects t holds for c. The rules
// that select t are found once per tool version and kept by the tool's
// identity until the rules change, so Allowed costs a map lookup plus the
// predicates of those rules, and allocates nothing of its own.
func (r *Rules) Allowed(ctx context.Context, t *mcpkit.Tool, c mcpkit.Caller) bool {
	return r.set.Load().allowed(ctx, t, c)
}

// allowed is Allowed for the rules of s.
func (s *ruleSet) allowed(ctx context.Context, t *mcpkit.Tool, c mcpkit.Caller) bool {
	for _, p := range s.checks.get(t) {
		if !p(ctx, c) {
			return false
		}
	}
	return true
}

// ToolNames returns the tool names that r's rules in effect were written
// with: those of its rules by name, and those given to [mcpkit.Named]
// within the match functions of the others (see
// [mcpkit.SelectorNames]; a rule on one version, [DisableVersion] or
// [Key], gives "name@version"), sorted, each once. A server asks, once it
// serves and after each change of the rules, and logs a warning for each
// name that selects no tool, with the name it most likely meant.
func (r *Rules) ToolNames() []string {
	var names []string
	for _, rule := range r.set.Load().rules {
		names = append(names, rule.written...)
	}
	return slices.Compact(slices.Sorted(slices.Values(names)))
}

// Snapshot returns a Visibility that answers as r does with the rules in
// effect now, whatever rules are added to r or removed from it later; the
// predicates of its Require rules are still asked per request. A server
// serves each state of its registry with a snapshot of its Rules (see
// [mcpkit.VisibilitySnapshotter]), so that it can tell precisely which
// listening clients a change of named rules concerns.
func (r *Rules) Snapshot() mcpkit.Visibility {
	return snapshot{r.set.Load()}
}

// snapshot is a Rules frozen at one set of rules.
type snapshot struct{ set *ruleSet }

func (s snapshot) Enabled(t *mcpkit.Tool) bool { return s.set.enabled(t) }
func (s snapshot) PerRequest() bool            { return s.set.perRequest() }
func (s snapshot) Allowed(ctx context.Context, t *mcpkit.Tool, c mcpkit.Caller) bool {
	return s.set.allowed(ctx, t, c)
}
func (s snapshot) EnabledTarget(t mcpkit.Target) bool { return s.set.enabledTarget(t) }
func (s snapshot) AllowedTarget(ctx context.Context, t mcpkit.Target, c mcpkit.Caller) bool {
	return s.set.allowedTarget(ctx, t, c)
}

var (
	_ mcpkit.TargetVisibility      = (*Rules)(nil)
	_ mcpkit.TargetVisibility      = snapshot{}
	_ mcpkit.VisibilitySnapshotter = (*Rules)(nil)
)

// added returns rules followed by those of more that it does not hold.
func added(rules, more []*Rule) []*Rule {
	out := slices.Clone(rules)
	for _, r := range more {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func checkRules(fn string, rules []*Rule) {
	for i, r := range rules {
		if r == nil {
			panic(fmt.Sprintf("visibility: %s: rule %d is nil", fn, i))
		}
	}
}

// maxLineage bounds the walks along a tool's origins, as
// mcpkit.Tool.Lineage does; a loop rather than Lineage, so that asking the
// rules about every tool allocates nothing.
const maxLineage = 64
