package mcpkit

import (
	"context"
	"errors"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ForTools returns a Middleware that applies mw, in order, only to the tools
// that match selects, in the spirit of chi's With and go-grpc-middleware's
// selector: the one way to give some tools their own settings.
//
//	srv.Use(mcpkit.ForTools(mcpkit.Not(mcpkit.Named("report")), middleware.Timeout(30*time.Second, nil)))
//	srv.Use(mcpkit.ForTools(mcpkit.Named("report"), middleware.Timeout(5*time.Minute, nil)))
//
// Inside a [Server] (given to [Server.Use], to [Tool.Middleware], or within a
// [Chain] given to either), match is called once per tool when the tool's
// chain is built, and a tool it does not select gets no layer at all: the
// middleware costs nothing on its calls. Applied outside a Server (a chain
// built by hand in a test), match is called with req.Tool on each call.
// ForTools also calls match once itself, with a tool of no name, to learn
// the names it selects by (see [SelectorNames]).
//
// A name given to [Named] in match that selects no tool once the server
// serves is reported in the server's log (see [SelectorNames]).
//
// ForTools panics if match or an entry of mw is nil.
func ForTools(match func(*Tool) bool, mw ...Middleware) Middleware {
	if match == nil {
		panic("mcpkit: ForTools: nil match")
	}
	return selection("mcpkit.ForTools", match, nil, mw)
}

// For returns a Middleware that applies mw, in order, only to the targets
// that match selects: tools, prompts, resources and templates alike, as
// [ForTools] does for tools. With [OfKind] it gives a kind its own layers:
//
//	srv.Use(mcpkit.For(mcpkit.OfKind(mcpkit.KindResource), middleware.RateLimit(reads, nil)))
//
// Inside a [Server], match is called once per target when its chain is
// built, and a target it does not select gets no layer: [Server.Pipeline],
// [Server.PromptPipeline] and [Server.ResourcePipeline] list the layers as
// skipped, the latter two with the reason. A resources/read served by a
// template is judged by the [*ResourceTemplate]. Applied outside a Server,
// match is called on each request, with the request's tool, prompt,
// resource or template.
//
// For panics if match or an entry of mw is nil.
func For(match func(Target) bool, mw ...Middleware) Middleware {
	if match == nil {
		panic("mcpkit: For: nil match")
	}
	return selection("mcpkit.For", func(t *Tool) bool { return match(t) }, match, mw)
}

// OfKind returns a match function for [For] that selects the targets of
// the given kinds.
func OfKind(kinds ...Kind) func(Target) bool {
	var set [numKinds]bool
	for _, k := range kinds {
		if k < numKinds {
			set[k] = true
		}
	}
	return func(t Target) bool { return set[t.Kind()] }
}

// selection is ForTools (targets nil: no prompt or resource is selected)
// and For. It is never inlined, so that the Middleware of both is one
// function, which addSkipped recognises.
//
//go:noinline
func selection(label string, tools func(*Tool) bool, targets func(Target) bool, mw []Middleware) Middleware {
	inner := Chain(mw...)
	names := SelectorNames(tools)
	skipReason := "mcpkit.ForTools selects tools only"
	if targets != nil {
		skipReason = "not selected by mcpkit.For"
	}
	return func(next Handler) Handler {
		if pb, ok := next.(targetBound); ok {
			if targets != nil && pb.target != nil && targets(pb.target) {
				return inner(next)
			}
			n := pb.rec.len()
			for i := len(mw) - 1; i >= 0; i-- {
				pb.rec.addSkipped(mw[i], &Tool{})
			}
			for i := n; i < pb.rec.len(); i++ {
				pb.rec.layers[i].Reason = skipReason
			}
			return next
		}
		b, ok := next.(boundHandler)
		if !ok {
			if targets != nil {
				return &selectedTargets{match: targets, on: inner(next), off: next}
			}
			return &selected{match: tools, on: inner(next), off: next}
		}
		n := b.rec.len()
		if !b.probing() && tools(b.tool) {
			h := inner(next)
			b.rec.noteNames(label, names, n)
			return h
		}
		// Left out, by match or by a selection around this one: listed,
		// innermost first as the chain is recorded, and never built.
		for i := len(mw) - 1; i >= 0; i-- {
			b.rec.addSkipped(mw[i], b.tool)
		}
		b.rec.noteNames(label, names, n)
		return next
	}
}

// selected is ForTools outside a Server, where the tool is known per call.
type selected struct {
	match   func(*Tool) bool
	on, off Handler
}

func (h *selected) ServeTool(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
	if h.match(req.Tool) {
		return h.on.ServeTool(ctx, req)
	}
	return h.off.ServeTool(ctx, req)
}

// selectedTargets is For outside a Server, where the target is known per
// request. A kind that the chosen Handler does not serve is answered
// errTargetChain.
type selectedTargets struct {
	match   func(Target) bool
	on, off Handler
}

func (h *selectedTargets) pick(t Target) Handler {
	if t != nil && h.match(t) {
		return h.on
	}
	return h.off
}

func (h *selectedTargets) ServeTool(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
	var t Target
	if req.Tool != nil {
		t = req.Tool
	}
	return h.pick(t).ServeTool(ctx, req)
}

func (h *selectedTargets) ServePrompt(ctx context.Context, req *PromptRequest) (*mcp.GetPromptResult, error) {
	var t Target
	if req.Prompt != nil {
		t = req.Prompt
	}
	p, ok := h.pick(t).(PromptHandler)
	if !ok {
		return nil, errTargetChain
	}
	return p.ServePrompt(ctx, req)
}

func (h *selectedTargets) ServeResource(ctx context.Context, req *ResourceRequest) (*mcp.ReadResourceResult, error) {
	var t Target
	switch {
	case req.Resource != nil:
		t = req.Resource
	case req.Template != nil:
		t = req.Template
	}
	r, ok := h.pick(t).(ResourceHandler)
	if !ok {
		return nil, errTargetChain
	}
	return r.ServeResource(ctx, req)
}

// maxLineage bounds the walks along a tool's origins in match functions, as
// Tool.Lineage does; real chains have a few links. (A loop, not Lineage, so
// that a match function asked about every tool allocates nothing.)
const maxLineage = 64

// Named returns a match function for [ForTools] (and visibility rules) that
// selects the tools served under one of the given names, and the tools
// derived from them: a tool one of whose [Tool.Lineage] has one of the
// names. Named("delete_repo") selects delete_repo, its deprecated alias
// remove_repo, and gh.delete_repo when a namespace renamed it;
// Named("remove_repo") selects the alias alone.
func Named(names ...string) func(*Tool) bool {
	names = slices.Clone(names)
	return func(t *Tool) bool {
		if t.probe != nil {
			t.probe.names = append(t.probe.names, names...)
			return false
		}
		for o, depth := t, 0; o != nil && depth <= maxLineage; o, depth = o.Origin, depth+1 {
			if slices.Contains(names, o.Name) {
				return true
			}
		}
		return false
	}
}

// NamedVersion returns a match function that selects one version of one
// tool: the tool served as name with version ver ("" for an unversioned
// tool), and the tools derived from it (see [Tool.Lineage]). Versions are
// compared as written: "1.0" is not "1".
func NamedVersion(name, ver string) func(*Tool) bool {
	written := name + "@" + ver
	return func(t *Tool) bool {
		if t.probe != nil {
			t.probe.names = append(t.probe.names, written)
			return false
		}
		for o, depth := t, 0; o != nil && depth <= maxLineage; o, depth = o.Origin, depth+1 {
			if o.Name == name && o.Version == ver {
				return true
			}
		}
		return false
	}
}

// SelectorNames returns the tool names by which match selects tools, as
// they were written: those given to [Named] within it, also under [Not]
// and in the rules by name of package visibility, sorted, each once; nil
// for a match function that selects otherwise (by tag, by annotation).
// A selection of one version ([NamedVersion], visibility.Key) is given as
// "name@version" ("name@" for the unversioned tool): a tool name never
// holds an "@". A server reports such a version that the tool does not
// have, with the versions it has.
// A Server asks it of what it is given ([ForTools] selections, its
// [Visibility] through a method ToolNames() []string, its catalog
// transforms), and logs a warning, once it serves, for each such name
// that selects no tool: registered, mounted, or that a provider looks up
// for a caller without credentials. A misspelt name in a rule protects
// nothing, silently otherwise.
//
// SelectorNames calls match once, with a tool that is no real tool (no
// name, no schema), to which Named answers false and reports its names; a
// match function that panics on it (reading a field it takes for granted)
// selects by no name.
func SelectorNames(match func(*Tool) bool) []string {
	if match == nil {
		return nil
	}
	return probeNames(func(t *Tool) { match(t) })
}

// nameProbe collects the names Named selects by, for SelectorNames.
type nameProbe struct{ names []string }

// probeNames calls ask with a probe tool and returns the names Named
// reported to it, sorted, each once. A panic of ask is taken for no name.
func probeNames(ask func(*Tool)) []string {
	p := &Tool{probe: &nameProbe{}}
	func() {
		defer func() { _ = recover() }()
		ask(p)
	}()
	if len(p.probe.names) == 0 {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(p.probe.names)))
}

// Tagged returns a match function for [ForTools] that selects the tools
// carrying at least one of the given tags.
func Tagged(tags ...string) func(*Tool) bool {
	tags = slices.Clone(tags)
	return func(t *Tool) bool {
		for _, tag := range tags {
			if slices.Contains(t.Tags, tag) {
				return true
			}
		}
		return false
	}
}

// Not returns a match function that selects the tools match does not.
func Not(match func(*Tool) bool) func(*Tool) bool {
	return func(t *Tool) bool { return !match(t) }
}

// boundHandler is a layer of a tool's chain, labelled with its tool, so
// that ForTools can select it, and with the record of the chain being built.
// It costs one indirect call per layer and no allocation.
type boundHandler struct {
	tool *Tool
	rec  *pipeline
	next Handler
}

func (b boundHandler) ServeTool(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
	return b.next.ServeTool(ctx, req)
}

// apply returns m(next), labelling the result for the next layer out, and
// records m as a layer of the pipeline unless m recorded its own (as Chain
// and ForTools do).
func apply(m Middleware, next boundHandler) boundHandler {
	n := next.rec.len()
	h := m(next)
	if next.rec.len() == n {
		next.rec.add(m, false)
		if ls, ok := h.(LayerSettings); ok {
			next.rec.layers[n].Settings = ls.LayerSettings()
		}
	}
	return boundHandler{tool: next.tool, rec: next.rec, next: h}
}

// buildChain returns the chain of t: its handler wrapped in the
// validation of its schemas (when c is not nil), then t's own middleware,
// then the server-wide middleware use, each layer labelled with t, with
// its layers and requirements in order, outermost first.
func buildChain(t *Tool, use []Middleware, c *checker) *chain {
	rec := &pipeline{}
	h := t.Handler
	if c != nil {
		h = &validating{c: c, next: h}
		rec.layers = append(rec.layers, Layer{Name: "mcpkit.Validation", From: FromServer})
	}
	b := boundHandler{tool: t, rec: rec, next: h}
	rec.from = FromTool
	for i := len(t.Middleware) - 1; i >= 0; i-- {
		b = apply(t.Middleware[i], b)
	}
	rec.from = FromServer
	for i := len(use) - 1; i >= 0; i-- {
		b = apply(use[i], b)
	}
	slices.Reverse(rec.layers)
	slices.Reverse(rec.requirements)
	return &chain{handler: b, layers: rec.layers, require: rec.requirements, named: rec.named}
}

// targetBound is the next Handler a middleware is given when a Server
// builds the chain of a prompt or a resource: it serves that kind,
// labelled with the record of the chain being built. Its ServeTool is
// never called within a Server, nor the method of the other kind.
type targetBound struct {
	kind     Kind
	target   Target // what the chain serves, for For
	rec      *pipeline
	prompt   PromptHandler   // a prompt's next
	resource ResourceHandler // a resource's (or template's) next
}

// errTargetChain is what a chain answers when a layer calls its next for
// another kind than the one the chain serves.
var errTargetChain = errors.New("mcpkit: a chain was called for another kind than it serves")

func (b targetBound) ServeTool(context.Context, *Request) (*mcp.CallToolResult, error) {
	return nil, errTargetChain
}

func (b targetBound) ServePrompt(ctx context.Context, req *PromptRequest) (*mcp.GetPromptResult, error) {
	if b.prompt == nil {
		return nil, errTargetChain
	}
	return b.prompt.ServePrompt(ctx, req)
}

func (b targetBound) ServeResource(ctx context.Context, req *ResourceRequest) (*mcp.ReadResourceResult, error) {
	if b.resource == nil {
		return nil, errTargetChain
	}
	return b.resource.ServeResource(ctx, req)
}

// serves reports whether h, a layer's Handler, serves b's kind.
func (b targetBound) serves(h Handler) bool {
	switch b.kind {
	case KindPrompt:
		_, ok := h.(PromptHandler)
		return ok
	case KindResource:
		_, ok := h.(ResourceHandler)
		return ok
	}
	return false
}

// skipReason is the reason a pipeline gives for a layer whose Handler
// does not serve b's kind.
func (b targetBound) skipReason() string {
	return "does not serve " + b.kind.String() + "s"
}

// next returns b with h, which serves b's kind, as the next layer.
func (b targetBound) next(h Handler) targetBound {
	switch b.kind {
	case KindPrompt:
		b.prompt = h.(PromptHandler)
	case KindResource:
		b.resource = h.(ResourceHandler)
	}
	return b
}

// apply returns m(b) as the next layer out of the chain, recording m as
// a layer unless m recorded its own (as Chain does). A middleware whose
// Handler does not serve b's kind is left out and recorded as skipped.
func (b targetBound) apply(m Middleware) targetBound {
	n := b.rec.len()
	h := m(b)
	ok := b.serves(h)
	if b.rec.len() == n {
		b.rec.add(m, !ok)
		switch l := &b.rec.layers[n]; {
		case !ok:
			l.Reason = b.skipReason()
		default:
			if ls, isSet := h.(LayerSettings); isSet {
				l.Settings = ls.LayerSettings()
			}
		}
	}
	if !ok {
		return b
	}
	return b.next(h)
}

// buildTargetChain returns the chain of t, a prompt, resource or
// template: its handler wrapped in its own middleware, then the
// server-wide middleware use, with its layers outermost first.
func buildTargetChain(t Target, use []Middleware) *chain {
	var (
		own  []Middleware
		from string
		b    = targetBound{kind: t.Kind(), target: t}
	)
	switch t := t.(type) {
	case *Prompt:
		own, from, b.prompt = t.Middleware, FromPrompt, t.Handler
	case *Resource:
		own, from, b.resource = t.Middleware, FromResource, t.Handler
	case *ResourceTemplate:
		own, from, b.resource = t.Middleware, FromResource, t.Handler
	}
	b.rec = &pipeline{from: from}
	for i := len(own) - 1; i >= 0; i-- {
		b = b.apply(own[i])
	}
	b.rec.from = FromServer
	for i := len(use) - 1; i >= 0; i-- {
		b = b.apply(use[i])
	}
	slices.Reverse(b.rec.layers)
	slices.Reverse(b.rec.requirements)
	return &chain{prompt: b.prompt, resource: b.resource, layers: b.rec.layers, require: b.rec.requirements}
}
