package portable

import (
	"bytes"
	"encoding/json"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// A Plan maps a call's arguments, valid under a schema OpenAI's strict
// mode rewrote, back to the original's meaning: where an optional property
// was made required and nullable, a null stands for "absent", and the
// property is removed. Where the original admits null itself, a null is
// kept: it is valid there, and the arguments are the same.
//
// A Plan is safe for concurrent use.
type Plan struct {
	root *plan
}

// plan is what maps at one place of the arguments.
type plan struct {
	props map[string]*propPlan
	items *plan
	// alts are the plans of the alternatives (anyOf) of the schema here.
	// A null member is removed only if every alternative that knows the
	// member says so.
	alts []*plan
}

type propPlan struct {
	absentIfNull bool
	sub          *plan
}

func (p *plan) prop(name string, absentIfNull bool, sub *plan) {
	if p.props == nil {
		p.props = map[string]*propPlan{}
	}
	p.props[name] = &propPlan{absentIfNull: absentIfNull, sub: sub}
}

// orNil returns nil for a plan that says nothing.
func (p *plan) orNil() *plan {
	if p == nil || p.props == nil && p.items == nil && p.alts == nil {
		return nil
	}
	return p
}

// flatten appends to out the plans that apply at p's place: p, or its
// alternatives', recursively.
func (p *plan) flatten(out []*plan, depth int) []*plan {
	if p == nil || depth > 32 {
		return out
	}
	if p.alts == nil {
		return append(out, p)
	}
	for _, a := range p.alts {
		out = a.flatten(out, depth+1)
	}
	return out
}

// maps reports whether any plan reachable from p removes anything.
func (p *plan) maps(seen map[*plan]bool) bool {
	if p == nil || seen[p] {
		return false
	}
	seen[p] = true
	for _, pp := range p.props {
		if pp.absentIfNull || pp.sub.maps(seen) {
			return true
		}
	}
	if p.items.maps(seen) {
		return true
	}
	for _, a := range p.alts {
		if a.maps(seen) {
			return true
		}
	}
	return false
}

// conflicts reports a place where alternatives disagree on what a null
// member means; the plan then keeps it, and the rewrite is not exact.
func (p *plan) conflicts(seen map[*plan]bool) bool {
	if p == nil || seen[p] {
		return false
	}
	seen[p] = true
	flat := p.flatten(nil, 0)
	if len(flat) > 1 {
		verdict := map[string]bool{}
		for _, a := range flat {
			for name, pp := range a.props {
				if v, ok := verdict[name]; ok && v != pp.absentIfNull {
					return true
				}
				verdict[name] = pp.absentIfNull
			}
		}
	}
	for _, a := range flat {
		for _, pp := range a.props {
			if pp.sub.conflicts(seen) {
				return true
			}
		}
		if a.items.conflicts(seen) {
			return true
		}
	}
	return false
}

// Apply returns args with the nulls that stand for absent properties
// removed, and the rest as written. It returns args itself when there are
// none, and also when args is not a JSON object (validation, when on, has
// refused it before). It allocates only the result, and nothing for
// arguments without a null.
func (pl *Plan) Apply(args []byte) []byte {
	if pl == nil || !bytes.Contains(args, []byte("null")) || !json.Valid(args) {
		return args
	}
	i := jsonscan.Space(args, 0)
	if i == len(args) || args[i] != '{' {
		return args
	}
	w := &writer{data: args}
	w.value(i, []*plan{pl.root})
	if !w.changed {
		return args
	}
	return append(w.out, args[w.copied:]...)
}

// writer copies valid JSON, leaving out the members plans remove. It
// writes nothing until it removes something, then everything before it
// at once.
type writer struct {
	data    []byte
	out     []byte
	copied  int // data[:copied] is in out, when changed
	changed bool
}

// skip leaves data[from:to] out of the result.
func (w *writer) skip(from, to int) {
	if !w.changed {
		w.changed = true
		w.out = make([]byte, 0, len(w.data))
	}
	w.out = append(w.out, w.data[w.copied:from]...)
	w.copied = to
}

// value walks the value at data[i], applying ps, and returns the index
// after it.
func (w *writer) value(i int, ps []*plan) int {
	var flat []*plan
	for _, p := range ps {
		flat = p.flatten(flat, 0)
	}
	switch {
	case len(flat) == 0:
		return jsonscan.Value(w.data, i)
	case w.data[i] == '{':
		return w.object(i, flat)
	case w.data[i] == '[':
		var items []*plan
		for _, p := range flat {
			if p.items != nil {
				items = append(items, p.items)
			}
		}
		if len(items) == 0 {
			return jsonscan.Value(w.data, i)
		}
		i = jsonscan.Space(w.data, i+1)
		for w.data[i] != ']' {
			i = jsonscan.Space(w.data, w.value(i, items))
			if w.data[i] == ',' {
				i = jsonscan.Space(w.data, i+1)
			}
		}
		return i + 1
	}
	return jsonscan.Value(w.data, i)
}

// object walks the object at data[i] with the plans flat. A member it
// removes takes one separator along: the comma before it when a member
// before it stays, else the comma after it.
func (w *writer) object(i int, flat []*plan) int {
	i = jsonscan.Space(w.data, i+1)
	kept := false
	prevEnd := 0 // where the value of the member before ends
	for w.data[i] != '}' {
		memberStart := i
		end := jsonscan.String(w.data, i)
		name := unquote(w.data[i:end])
		i = jsonscan.Space(w.data, end)
		i = jsonscan.Space(w.data, i+1) // ':'
		valStart := i
		remove, known := true, false
		var subs []*plan
		for _, p := range flat {
			pp := p.props[name]
			if pp == nil {
				continue
			}
			known = true
			remove = remove && pp.absentIfNull
			if pp.sub != nil {
				subs = append(subs, pp.sub)
			}
		}
		remove = known && remove && bytes.HasPrefix(w.data[valStart:], []byte("null"))
		var valEnd int
		if remove {
			valEnd = valStart + len("null")
		} else {
			valEnd = w.value(valStart, subs)
		}
		i = jsonscan.Space(w.data, valEnd)
		if w.data[i] == ',' {
			i = jsonscan.Space(w.data, i+1)
		}
		switch {
		case !remove:
			kept = true
		case kept:
			w.skip(prevEnd, valEnd)
		default:
			w.skip(memberStart, i)
		}
		prevEnd = valEnd
	}
	return i + 1
}

// unquote returns the value of a JSON string, written with its quotes.
func unquote(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	json.Unmarshal(quoted, &s) // valid JSON: it cannot fail
	return s
}
