package portable

import (
	"bytes"
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

// flatten returns the plans that apply at p's place: p, or its
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
// removed. It returns args itself when there are none, and also when args
// is not a JSON object (validation, when on, has refused it before).
func (pl *Plan) Apply(args []byte) []byte {
	if pl == nil || !bytes.Contains(args, []byte("null")) {
		return args
	}
	v, err := decode(args)
	if err != nil {
		return args
	}
	if _, ok := v.(*object); !ok || !apply(v, []*plan{pl.root}) {
		return args
	}
	return encode(make([]byte, 0, len(args)), v)
}

// apply removes, in place, the members of v that ps say to, and reports
// whether it removed any.
func apply(v any, ps []*plan) bool {
	var flat []*plan
	for _, p := range ps {
		flat = p.flatten(flat, 0)
	}
	if len(flat) == 0 {
		return false
	}
	changed := false
	switch v := v.(type) {
	case *object:
		for i := 0; i < len(v.keys); i++ {
			name, val := v.keys[i], v.vals[i]
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
			if known && remove && val == nil {
				v.del(name)
				i--
				changed = true
				continue
			}
			if len(subs) > 0 && apply(val, subs) {
				changed = true
			}
		}
	case []any:
		var items []*plan
		for _, p := range flat {
			if p.items != nil {
				items = append(items, p.items)
			}
		}
		if len(items) == 0 {
			return false
		}
		for _, x := range v {
			if apply(x, items) {
				changed = true
			}
		}
	}
	return changed
}
