package deref

import (
	"cmp"
	"math"
	"net/url"
	"slices"
	"strconv"
)

// A vertex is a schema that the output needs: the root, and every schema a
// reachable $ref names. Its edges lead to the schemas that writing it out
// meets: those its local $refs name, and named schemas inside it.
type vertex struct {
	n     *node
	order int // discovery order, for deterministic choices
	edges []*edge
	in    []*edge
	own   int  // JSON values written for n, not counting the schemas it inlines
	hasID bool // n, or a subschema written as part of it, starts a resource

	// kept means the schema is written once, in a definition (the root is
	// its own), and $refs to it stay $refs.
	kept bool
	// Where a kept schema is written: container ("$defs" or "definitions")
	// and name; preserved when that is where the input had it.
	container, name string
	preserved       bool
	// used means the output has a $ref to the kept schema, so its
	// definition is written.
	used bool

	// Recomputed for every choice of kept schemas.
	size, occ int  // values written per copy; copies written
	deepID    bool // a copy contains an $id
	state     uint8

	// Tarjan's strongly connected components.
	index, low int
	onStack    bool
}

// An edge says that writing from out writes to: a $ref in from names to, or
// to lies inside from.
type edge struct {
	from, to *vertex
	// unroll is set on the root's own $ref: the root is always the named
	// schema merged with the root's other keywords, even when that schema is
	// kept, so that the root keeps the type and properties that MCP clients
	// expect of an input schema.
	unroll bool
}

// writes reports whether the edge copies the schema it names into the
// output (rather than leaving a $ref).
func (e *edge) writes() bool { return !e.to.kept || e.unroll }

// A plan decides which schemas are inlined and which are kept as definitions.
type plan struct {
	d        *document
	vertices []*vertex
	byNode   map[*node]*vertex
	root     *vertex
}

// maxSize caps size arithmetic; a fan-out of shared definitions makes
// sizes grow exponentially.
const maxSize = math.MaxInt / 4

func addSat(a, b int) int { return min(a+b, maxSize) }

func mulSat(a, b int) int {
	if a != 0 && b > maxSize/a {
		return maxSize
	}
	return a * b
}

func newPlan(d *document) *plan {
	p := &plan{d: d, byNode: map[*node]*vertex{}}
	p.root = p.vertex(d.root)
	for i := 0; i < len(p.vertices); i++ {
		v := p.vertices[i]
		p.scan(v, v.n)
	}
	for _, v := range p.vertices {
		for _, e := range v.edges {
			e.to.in = append(e.to.in, e)
		}
	}
	return p
}

func (p *plan) vertex(n *node) *vertex {
	v := p.byNode[n]
	if v == nil {
		v = &vertex{n: n, order: len(p.vertices), index: -1}
		p.byNode[n] = v
		p.vertices = append(p.vertices, v)
	}
	return v
}

// scan adds to v what writing the schema n out costs, and the edges it
// needs. It visits exactly what [builder.schema] writes.
//
// A schema that a $ref names, met inside another, is an edge too: where it
// is kept, it is written once, in its definition, and a $ref to that
// replaces it everywhere else.
func (p *plan) scan(v *vertex, n *node) {
	if n.named && n != v.n {
		v.edges = append(v.edges, &edge{from: v, to: p.vertex(n)})
		v.own += 2 // {"$ref": ...}, should it be kept
		return
	}
	if n.kind != kindObject {
		v.own += n.size
		return
	}
	v.own++
	if n.id != nil {
		v.hasID = true
	}
	for i, k := range n.keys {
		c := n.vals[i]
		if p.d.skip(n, k) {
			continue
		}
		if k == "$ref" && n.site != nil {
			// The $ref string's value pays for the wrapper (allOf, or a
			// $ref to a kept schema) that may replace it.
			v.own++
			if t := n.site.target; t != nil {
				e := &edge{from: v, to: p.vertex(t), unroll: n == p.d.root && t != p.d.root}
				v.edges = append(v.edges, e)
			}
			continue
		}
		subschemas(k, c, func(s *node) { p.scan(v, s) })
		// Containers, and values that are not schemas (data keywords,
		// the name lists of dependencies), are written as they are.
		v.own += c.size - schemaSizes(k, c)
	}
}

// schemaSizes returns the size of the schemas in c, the value of keyword k.
func schemaSizes(k string, c *node) int {
	total := 0
	subschemas(k, c, func(s *node) { total += s.size })
	return total
}

// markCycles keeps every schema on a cycle of references: those cannot be
// inlined.
func (p *plan) markCycles() {
	var stack []*vertex
	next := 0
	var connect func(v *vertex)
	connect = func(v *vertex) {
		v.index, v.low = next, next
		next++
		stack = append(stack, v)
		v.onStack = true
		for _, e := range v.edges {
			w := e.to
			if w.index < 0 {
				connect(w)
				v.low = min(v.low, w.low)
			} else if w.onStack {
				v.low = min(v.low, w.index)
			}
		}
		if v.low != v.index {
			return
		}
		i := len(stack) - 1
		for stack[i] != v {
			i--
		}
		scc := stack[i:]
		stack = stack[:i]
		for _, w := range scc {
			w.onStack = false
			if len(scc) > 1 {
				w.kept = true
			}
		}
		for _, e := range v.edges {
			if e.to == v {
				v.kept = true
			}
		}
	}
	for _, v := range p.vertices {
		if v.index < 0 {
			connect(v)
		}
	}
}

// measure computes, for the current choice of kept schemas, every schema's
// size, how often it is written, and whether its copies carry an $id; and
// returns the size of the whole output.
func (p *plan) measure() int {
	for _, v := range p.vertices {
		v.state = 0
	}
	for _, v := range p.vertices {
		p.sizeOf(v)
	}
	for _, v := range p.vertices {
		v.state = 0
	}
	total := 0
	for _, v := range p.vertices {
		p.occOf(v)
		if v.kept || v == p.root {
			total = addSat(total, v.size)
		}
	}
	return total
}

// sizeOf computes v.size and v.deepID. The edges that write form a DAG:
// every cycle goes through a kept schema, and only the root's edge unrolls.
func (p *plan) sizeOf(v *vertex) {
	if v.state != 0 {
		return
	}
	v.state = 1
	v.size, v.deepID = v.own, v.hasID
	for _, e := range v.edges {
		if e.writes() {
			p.sizeOf(e.to)
			v.size = addSat(v.size, e.to.size)
			v.deepID = v.deepID || e.to.deepID
		}
	}
}

// occOf computes v.occ, the number of copies of v in the output.
func (p *plan) occOf(v *vertex) int {
	if v.state == 2 {
		return v.occ
	}
	v.state = 2
	v.occ = 0
	if v.kept || v == p.root {
		v.occ = 1
	}
	for _, e := range v.in {
		if e.writes() {
			v.occ = addSat(v.occ, p.occOf(e.from))
		}
	}
	return v.occ
}

// bound keeps, besides the schemas on cycles, the shared schemas whose
// copies would make the output larger than limit, largest savings first,
// and the shared schemas whose copies would repeat an $id.
func (p *plan) bound(limit int) {
	for {
		total := p.measure()
		var cands []*vertex
		forced := false
		for _, v := range p.vertices {
			if v.kept || v == p.root || v.occ < 2 {
				continue
			}
			if v.deepID {
				v.kept, forced = true, true
			}
			cands = append(cands, v)
		}
		if forced {
			continue
		}
		if total <= limit || len(cands) == 0 {
			return
		}
		saving := func(v *vertex) int { return mulSat(v.occ-1, v.size) }
		slices.SortFunc(cands, func(a, b *vertex) int {
			if c := cmp.Compare(saving(b), saving(a)); c != 0 {
				return c
			}
			return cmp.Compare(a.order, b.order)
		})
		// Savings overlap when one candidate is written inside another, so
		// their sum overestimates; the next round measures again.
		excess := total - limit
		for _, v := range cands {
			v.kept = true
			if excess -= saving(v); excess <= 0 {
				break
			}
		}
	}
}

// markUsed finds the kept schemas that the output references: the root
// writes its own $ref's target in place, so that schema may need no
// definition of its own.
func (p *plan) markUsed() {
	written := map[*vertex]bool{}
	var visit func(v *vertex)
	visit = func(v *vertex) {
		if written[v] {
			return
		}
		written[v] = true
		for _, e := range v.edges {
			if !e.writes() {
				e.to.used = true
			}
			visit(e.to)
		}
	}
	visit(p.root)
}

// place chooses where each kept schema is written: a definition of the
// root stays under its name; any other kept schema gets a new definition in
// $defs (definitions before draft 2019-09), named after its last pointer
// token.
func (p *plan) place() {
	taken := map[string]map[string]bool{}
	take := func(container, name string) {
		if taken[container] == nil {
			taken[container] = map[string]bool{}
		}
		taken[container][name] = true
	}
	var moved []*vertex
	for _, v := range p.vertices {
		if !v.kept || !v.used || v == p.root {
			continue
		}
		if parent := v.n.parent; parent != nil && parent.parent == p.d.root && classify(parent.token) == definitions {
			v.container, v.name, v.preserved = parent.token, v.n.token, true
			take(v.container, v.name)
			continue
		}
		moved = append(moved, v)
	}
	container := "$defs"
	if p.d.legacy {
		container = "definitions"
	}
	for _, v := range moved {
		base := v.n.token
		if parent := v.n.parent; parent != nil && parent.kind == kindArray {
			base = parent.token + "-" + base
		}
		if base == "" {
			base = "schema"
		}
		name := base
		for i := 2; taken[container][name]; i++ {
			name = base + "-" + strconv.Itoa(i)
		}
		v.container, v.name = container, name
		take(container, name)
	}
}

// fragment returns the URI fragment, with its '#', of where v is written.
func (v *vertex) fragment(root *vertex) string {
	if v == root {
		return "#"
	}
	return "#" + escapeFragment("/"+escapeToken(v.container)+"/"+escapeToken(v.name))
}

// escapeFragment percent-encodes a JSON Pointer for use as a URI fragment.
func escapeFragment(ptr string) string {
	return (&url.URL{Fragment: ptr}).EscapedFragment()
}
