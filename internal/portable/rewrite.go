package portable

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mcpkit/mcpkit/internal/deref"
)

// Options configure [Rewrite]. A nil *Options means the defaults.
type Options struct {
	// Depth is how many times a profile without $ref (Gemini, AllProviders)
	// writes out a recursive schema inside itself before it stops; zero
	// or less means DefaultDepth.
	Depth int
	// Omit leaves out what a profile cannot express where it may: an
	// optional property, an alternative of several. Without it, Rewrite
	// fails there.
	Omit bool
}

// DefaultDepth is the default of Options.Depth.
const DefaultDepth = 3

// A Result is a schema rewritten for a profile.
type Result struct {
	// Schema is the rewritten schema, compact JSON: what clients list.
	Schema []byte
	// Validate, when set, is the schema that calls must be checked
	// against in Schema's place: Schema read as its provider reads it
	// (Gemini's nullable), written as JSON Schema. It is nil when JSON
	// Schema reads Schema as the provider does.
	Validate []byte
	// Exact reports that every call valid under Schema (or Validate),
	// mapped by Plan, is valid under the input schema. When it is false,
	// something the profile cannot say (a closed object for Gemini, a
	// string's length for OpenAI) was left out, and calls must be checked
	// against the input schema as well.
	Exact bool
	// Plan maps calls back to the input's meaning; nil when none need
	// mapping.
	Plan *Plan
	// Dropped lists, for information, what was left out and where
	// ("/properties/a: additionalProperties"). It is empty when Exact.
	Dropped []string
}

// Errors that Rewrite's errors wrap, besides an *UnsupportedError.
var (
	ErrInvalid     = errors.New("invalid schema")
	ErrUnsupported = errors.New("schema cannot be rewritten")
	// ErrInternal means the rewrite wrote a schema that breaks the
	// profile's own rules: a bug, reported rather than served.
	ErrInternal = errors.New("the rewrite broke the profile's rules")
)

// Rewrite rewrites schema, a tool's input schema as JSON (an object with
// "type": "object"), into a schema that profile p accepts and that admits
// the same calls, as far as p can say so; see the package documentation.
// schema is not modified.
//
// An error is an *UnsupportedError naming the place p cannot express, or
// wraps ErrInvalid, ErrUnsupported or ErrInternal.
func Rewrite(schema []byte, p Profile, opts *Options) (*Result, error) {
	if opts == nil {
		opts = &Options{}
	}
	depth := opts.Depth
	if depth <= 0 {
		depth = DefaultDepth
	}
	r := rulesFor(p)
	flat, err := deref.Dereference(schema, nil)
	if err != nil {
		if errors.Is(err, deref.ErrUnsupported) {
			return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	root, err := decode(flat)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if _, ok := root.(*object); !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalid)
	}

	res := &Result{Exact: true}
	inexact := func(where, why string) {
		res.Exact = false
		note := orRoot(where) + ": " + why
		if len(res.Dropped) < 100 && (len(res.Dropped) == 0 || res.Dropped[len(res.Dropped)-1] != note) {
			res.Dropped = append(res.Dropped, note)
		}
	}
	b := &builder{root: root, refs: r.refs, depth: depth, onPath: map[string]int{}, defs: map[string]*def{}, inexact: inexact}
	s := b.build(root, "")
	var defs []*def
	for len(b.pending) > 0 {
		d := b.pending[0]
		b.pending = b.pending[1:]
		defs = append(defs, d)
		if d.ptr == "" {
			d.s = s
			continue
		}
		target, _, _ := b.resolve("#" + d.ptr)
		d.s = b.build(target, d.ptr)
	}
	if b.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, b.err)
	}

	e := &emitter{r: r, omit: opts.Omit, inexact: inexact, names: map[*def]string{}, plans: map[*def]*plan{}}
	e.nameDefs(defs)
	out, rootPlan, err := e.emit(s, atRoot, false)
	if err != nil {
		return nil, err
	}
	if len(defs) > 0 {
		all := &object{}
		for _, d := range defs {
			if d.ptr == "" {
				if rootPlan != nil {
					*e.defPlan(d) = *rootPlan
				}
				continue
			}
			ds, dp, err := e.emit(d.s, atDef, false)
			if err != nil {
				return nil, err
			}
			if dp != nil {
				*e.defPlan(d) = *dp
			}
			all.set(e.names[d], ds)
		}
		if all.len() > 0 {
			out.set("$defs", all)
		}
	}
	if rootPlan != nil {
		if rootPlan.conflicts(map[*plan]bool{}) {
			inexact("", "a null that may mean absent or null")
		}
		if rootPlan.maps(map[*plan]bool{}) {
			res.Plan = &Plan{root: rootPlan}
		}
	}
	res.Schema = encode(nil, out)
	if probs := check(out, r); len(probs) > 0 {
		// A bug of the rewrite: better an error than a schema that
		// breaks the client's session.
		return nil, fmt.Errorf("%w: %s: %s", ErrInternal, orRoot(probs[0].Pointer), probs[0].Rule)
	}
	if r.null == nullKeyword && hasNullable(out) {
		res.Validate = encode(nil, asJSONSchema(out))
	}
	return res, nil
}

// asJSONSchema returns a copy of o, a schema in Gemini's dialect, with
// each nullable: true written as JSON Schema says it: null among the types
// (and the enum values).
func asJSONSchema(v any) any {
	o, ok := v.(*object)
	if !ok {
		return v
	}
	c := &object{}
	nullable, _ := o.get("nullable")
	for i, k := range o.keys {
		val := o.vals[i]
		switch k {
		case "nullable":
			continue
		case "type":
			if nullable == true {
				val = []any{val, "null"}
			}
		case "enum":
			if nullable == true {
				val = append(append([]any{}, val.([]any)...), nil)
			}
		case "items":
			val = asJSONSchema(val)
		case "properties":
			props := val.(*object)
			cp := &object{}
			for j, name := range props.keys {
				cp.set(name, asJSONSchema(props.vals[j]))
			}
			val = cp
		case "anyOf":
			list := val.([]any)
			cl := make([]any, len(list))
			for j, x := range list {
				cl[j] = asJSONSchema(x)
			}
			val = cl
		}
		c.set(k, val)
	}
	return c
}

// hasNullable reports whether a schema in Gemini's dialect says nullable
// anywhere.
func hasNullable(v any) bool {
	o, ok := v.(*object)
	if !ok {
		return false
	}
	if n, _ := o.get("nullable"); n == true {
		return true
	}
	if items, ok := o.get("items"); ok && hasNullable(items) {
		return true
	}
	if props, ok := o.get("properties"); ok {
		if slices.ContainsFunc(props.(*object).vals, hasNullable) {
			return true
		}
	}
	list, _ := o.get("anyOf")
	branches, _ := list.([]any)
	return slices.ContainsFunc(branches, hasNullable)
}
