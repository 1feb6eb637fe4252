package middleware

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/deref"
)

// DerefOptions configures [Deref]. A nil *DerefOptions means the defaults.
type DerefOptions struct {
	// Skip reports tools whose schemas are advertised exactly as
	// registered, references included: for example a tool whose schema
	// is itself the point, or clients known to handle $ref. Nil skips
	// none. A name given to [mcpkit.Named] in it that selects no tool is
	// reported in the server's log (see [mcpkit.ListMiddleware]).
	Skip func(*mcpkit.Tool) bool

	// MaxNodes bounds the size of a rewritten schema, counted in JSON
	// values. Inlining a definition that is used in many places can make
	// a schema grow exponentially; past the bound, the definitions whose
	// copies cost most stay under $defs and are referred to with $ref.
	// Zero means four times the size of the original, and at least 1,000.
	MaxNodes int

	// Logger receives a warning for each schema that cannot be rewritten
	// (a $ref to a definition that does not exist, say); that schema is
	// advertised as registered. Nil means no logging.
	Logger *slog.Logger
}

// Deref returns a list middleware that inlines the local $ref references of
// the input and output schemas that tools/list advertises, for clients that
// reject references (among them VS Code Copilot, Claude Desktop and Amazon
// Bedrock). Definitions that are used in many places are inlined at each
// use, a $ref at the root is resolved, and recursive definitions, which
// cannot be inlined, stay under $defs with only the references that close a
// cycle. References to other documents are left alone and never fetched.
// Everything else in the schema is kept: additionalProperties, $schema,
// titles, unknown keywords such as x-mcp-header.
//
// Only what is advertised changes: the registered schemas (and any $defs
// they share) are not modified, and validation uses them as registered,
// which is equivalent. Each tool's schemas are rewritten once and cached by
// tool; a tools/list whose tools are unchanged costs a slice comparison.
//
// Put Deref first in [mcpkit.Server.UseList] so that it sees each tool once
// filtering is done, or anywhere: it rewrites definitions and keeps the
// order and the number of tools.
func Deref(opts *DerefOptions) mcpkit.ListMiddleware {
	var o DerefOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return func(next mcpkit.Lister) mcpkit.Lister {
		return &derefLister{next: next, opts: o, cache: make(map[*mcpkit.Tool]*mcpkit.Tool)}
	}
}

type derefLister struct {
	next mcpkit.Lister
	opts DerefOptions

	last atomic.Pointer[derefPage] // the last list seen, rewritten

	mu    sync.Mutex
	cache map[*mcpkit.Tool]*mcpkit.Tool // registered tool -> advertised tool
}

type derefPage struct{ in, out []*mcpkit.Tool }

func (d *derefLister) ServeList(ctx context.Context, req *mcpkit.ListRequest) ([]*mcpkit.Tool, error) {
	in, err := d.next.ServeList(ctx, req)
	if err != nil {
		return nil, err
	}
	if p := d.last.Load(); p != nil && sameTools(p.in, in) {
		return p.out, nil
	}
	out := make([]*mcpkit.Tool, len(in))
	d.mu.Lock()
	for i, t := range in {
		rt, ok := d.cache[t]
		if !ok {
			rt = d.rewrite(t)
			d.cache[t] = rt
		}
		out[i] = rt
	}
	// Tools that were removed or replaced stay cached until the cache is
	// much larger than the list; then it keeps only the current tools.
	if len(d.cache) > 2*len(in)+64 {
		fresh := make(map[*mcpkit.Tool]*mcpkit.Tool, len(in))
		for i, t := range in {
			fresh[t] = out[i]
		}
		d.cache = fresh
	}
	d.mu.Unlock()
	d.last.Store(&derefPage{in: in, out: out})
	return out, nil
}

// ToolNames returns the tool names Skip was written with (see
// [mcpkit.SelectorNames]), for the server's report of those that select
// no tool.
func (d *derefLister) ToolNames() []string { return mcpkit.SelectorNames(d.opts.Skip) }

// sameTools reports whether a and b are the same slice: a lister that did
// not change returns the very slice it returned before.
func sameTools(a, b []*mcpkit.Tool) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// rewrite returns t, or a copy of t with dereferenced schemas.
func (d *derefLister) rewrite(t *mcpkit.Tool) *mcpkit.Tool {
	if d.opts.Skip != nil && d.opts.Skip(t) {
		return t
	}
	in, inChanged := d.schema(t, "input", t.InputSchema)
	out, outChanged := d.schema(t, "output", t.OutputSchema)
	if !inChanged && !outChanged {
		return t
	}
	c := *t
	c.InputSchema, c.OutputSchema = in, out
	return &c
}

// schema returns s dereferenced and true, or s and false when it has
// nothing to inline or cannot be rewritten.
func (d *derefLister) schema(t *mcpkit.Tool, which string, s any) (any, bool) {
	if s == nil {
		return nil, false
	}
	raw, err := json.Marshal(s)
	if err != nil {
		d.opts.Logger.Warn("mcpkit: deref: cannot encode schema", "tool", t.Name, "schema", which, "error", err)
		return s, false
	}
	out, err := deref.Dereference(raw, &deref.Options{MaxNodes: d.opts.MaxNodes})
	if err != nil {
		d.opts.Logger.Warn("mcpkit: deref: schema advertised with its references", "tool", t.Name, "schema", which, "error", err)
		return s, false
	}
	if len(out) == len(raw) && &out[0] == &raw[0] {
		return s, false // no local references
	}
	return json.RawMessage(out), true
}
