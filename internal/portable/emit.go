package portable

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// An UnsupportedError reports a part of a schema that a profile cannot
// express without changing what it admits in a way the server could not
// make up for.
type UnsupportedError struct {
	Pointer string // in the input schema, where it is used
	Msg     string // what the profile cannot express there, and why

	kind unsupportedKind
}

type unsupportedKind int

const (
	inexpressible unsupportedKind = iota
	recursion                     // a recursive reference beyond the depth unrolled
	unsatisfiable                 // no value is valid
	tooComplex                    // beyond the bounds of the rewrite's work: never left out
)

// omittable reports whether err, from writing a part of a schema, lets
// that part be left out when Options.Omit asks for it.
func omittable(err error) bool {
	var ue *UnsupportedError
	return errors.As(err, &ue) && ue.kind != tooComplex
}

// Error returns "pointer: message", with "the root" for the root.
func (e *UnsupportedError) Error() string { return orRoot(e.Pointer) + ": " + e.Msg }

func unsupported(ptr, format string, a ...any) error {
	return &UnsupportedError{Pointer: ptr, Msg: fmt.Sprintf(format, a...)}
}

// maxAlternatives bounds the alternatives one schema is split into (types
// times anyOf branches, nested anyOf multiplied out), and maxWork those of
// the whole rewrite, so that nested alternatives cannot make it take
// exponential time.
const (
	maxAlternatives = 64
	maxWork         = 4096
)

type emitter struct {
	r       *rules
	omit    bool
	work    int // alternatives made so far
	inexact func(where, why string)
	names   map[*def]string // the $defs name of each kept definition
	plans   map[*def]*plan
}

// emit writes s as the profile wants it at position pos. forceNull asks
// for null to be admitted too (OpenAI strict: an optional property made
// required). The plan says how calls map back below s; nil when nothing
// maps.
func (e *emitter) emit(s *schema, pos position, forceNull bool) (*object, *plan, error) {
	switch {
	case s.cut:
		return nil, nil, &UnsupportedError{Pointer: s.ptr, Msg: "the recursion goes deeper than the levels unrolled", kind: recursion}
	case s.never():
		return nil, nil, &UnsupportedError{Pointer: s.ptr, Msg: "no value is valid here", kind: unsatisfiable}
	}
	if s.types == tAll && s.enum == nil && s.anyOf == nil && s.ref == nil {
		if t := s.evidentTypes(); t != 0 {
			// A schema that lists properties but no type is written
			// as an object, which admits less (not null, not a
			// string), never more.
			c := *s
			c.types = t
			s = &c
		}
	}
	nullable := s.admitsNull() || forceNull
	core := s.withoutNull()
	var alts []*schema
	if !core.never() {
		var err error
		if alts, err = e.alternatives(core); err != nil {
			var ue *UnsupportedError
			if !nullable || !errors.As(err, &ue) || ue.kind != recursion {
				return nil, nil, err
			}
		}
	}
	if len(alts) == 0 {
		if !nullable || pos == atRoot {
			return nil, nil, &UnsupportedError{Pointer: s.ptr, Msg: "no value is valid here", kind: unsatisfiable}
		}
		// Only null is valid (or, below the recursion unrolled, all that
		// is left): a schema of the null type says so.
		return nullSchema(), nil, nil
	}
	if pos == atRoot && (len(alts) > 1 || alts[0].types != tObj) {
		alts = []*schema{e.collapse(core, alts)}
	}
	if len(alts) > 1 && pos == atItems && !e.r.anyOfInItems {
		if !allObjects(alts) {
			return nil, nil, unsupported(s.ptr, "items of several kinds: %s refuses anyOf directly inside items", e.r.profile)
		}
		alts = []*schema{e.collapse(core, alts)}
	}
	if len(alts) == 1 {
		out, p, err := e.single(alts[0], pos)
		if err != nil {
			return nil, nil, err
		}
		if nullable {
			out = e.nullable(out, pos)
		}
		return out, p, nil
	}

	var branches []any
	p := &plan{}
	for _, a := range alts {
		out, ap, err := e.single(a, atBranch)
		if err != nil {
			if !e.omit || !omittable(err) {
				return nil, nil, err
			}
			continue // one alternative fewer admits less, never more
		}
		if nullable && e.r.null == nullKeyword {
			out = withNullable(out)
		}
		branches = append(branches, out)
		p.alts = append(p.alts, orEmpty(ap))
	}
	if len(branches) == 0 {
		return nil, nil, unsupported(s.ptr, "%s cannot express any of the alternatives", e.r.profile)
	}
	if nullable && e.r.null != nullKeyword {
		branches = append(branches, nullSchema())
	}
	out := &object{}
	if len(branches) == 1 {
		out = branches[0].(*object)
	} else {
		out.set("anyOf", branches)
	}
	return out, p.orNil(), nil
}

func orEmpty(p *plan) *plan {
	if p == nil {
		return &plan{}
	}
	return p
}

func nullSchema() *object { return &object{keys: []string{"type"}, vals: []any{"null"}} }

// withNullable returns o, an object schema with a type, with nullable:
// true after its type.
func withNullable(o *object) *object {
	c := &object{keys: slices.Clone(o.keys), vals: slices.Clone(o.vals)}
	i := c.index("type") + 1
	c.keys = slices.Insert(c.keys, i, "nullable")
	c.vals = slices.Insert(c.vals, i, any(true))
	return c
}

// nullable returns out, written by single, made to admit null too.
func (e *emitter) nullable(out *object, pos position) *object {
	if _, isRef := out.get("$ref"); isRef {
		return &object{keys: []string{"anyOf"}, vals: []any{[]any{out, nullSchema()}}}
	}
	switch e.r.null {
	case nullKeyword:
		return withNullable(out)
	case nullTypeArray:
		t, _ := out.get("type")
		out.set("type", []any{t, "null"})
		if v, ok := out.get("enum"); ok {
			out.set("enum", append(slices.Clone(v.([]any)), nil))
		}
		return out
	}
	if pos == atItems && !e.r.anyOfInItems {
		// Null items would take an anyOf inside items: leave them out.
		// The schema then admits less, never more.
		return out
	}
	return &object{keys: []string{"anyOf"}, vals: []any{[]any{out, nullSchema()}}}
}

// withoutNull returns s without null among the values it admits. It
// shares s's subschemas.
func (s *schema) withoutNull() *schema {
	c := *s
	c.types &^= tNull
	if s.enum != nil {
		c.enum = slices.DeleteFunc(slices.Clone(s.enum), func(v any) bool { return v == nil })
	}
	if s.anyOf != nil {
		c.anyOf = []*schema{}
		for _, b := range s.anyOf {
			if b = b.withoutNull(); !b.never() {
				c.anyOf = append(c.anyOf, b)
			}
		}
	}
	return &c
}

// alternatives splits s, which does not admit null, into schemas of one
// type each (or one kept reference), whose union is s.
func (e *emitter) alternatives(s *schema) ([]*schema, error) {
	if s.anyOf != nil {
		own := *s
		own.anyOf = nil
		var out []*schema
		var cut error
		for _, b := range s.anyOf {
			if b.cut {
				// Below the recursion unrolled, this alternative is
				// left out: the schema admits less, never more.
				cut = &UnsupportedError{Pointer: b.ptr, Msg: "the recursion goes deeper than the levels unrolled", kind: recursion}
				continue
			}
			if e.work++; e.work > maxWork {
				return nil, &UnsupportedError{Pointer: s.ptr, Msg: fmt.Sprintf("more than %d alternatives in all", maxWork), kind: tooComplex}
			}
			x := b.clone()
			x.merge(&own, e.inexact)
			alts, err := e.alternatives(x.withoutNull())
			if err != nil {
				if !e.omit || !omittable(err) {
					return nil, err
				}
				continue
			}
			out = append(out, alts...)
			if len(out) > maxAlternatives {
				return nil, &UnsupportedError{Pointer: s.ptr, Msg: fmt.Sprintf("more than %d alternatives", maxAlternatives), kind: tooComplex}
			}
		}
		if len(out) == 0 {
			if cut != nil {
				return nil, cut
			}
			return nil, unsupported(s.ptr, "%s cannot express any of the alternatives", e.r.profile)
		}
		return out, nil
	}
	if s.cut {
		return nil, &UnsupportedError{Pointer: s.ptr, Msg: "the recursion goes deeper than the levels unrolled", kind: recursion}
	}
	if s.ref != nil {
		if s.constrainedBesidesRef() {
			e.inexact(s.ptr, "constraints next to a recursive reference")
		}
		return []*schema{s}, nil
	}
	types := s.types
	if types == tAll&^tNull && s.enum == nil {
		types = s.evidentTypes()
		if types == 0 {
			return nil, unsupported(s.ptr, "any JSON value is valid here, and %s needs a type", e.r.profile)
		}
	}
	var out []*schema
	for _, t := range [...]typeSet{tStr, tNum, tBool, tObj, tArr} {
		if types&t == 0 {
			continue
		}
		a := *s
		a.restrict(types & t) // integers alone, or all numbers
		if !a.never() {
			out = append(out, &a)
		}
	}
	if len(out) == 0 {
		return nil, &UnsupportedError{Pointer: s.ptr, Msg: "no value is valid here", kind: unsatisfiable}
	}
	return out, nil
}

// evidentTypes returns the types whose keywords s uses: a schema that says
// nothing of types but lists properties is written as an object (which
// admits less, never more).
func (s *schema) evidentTypes() typeSet {
	var t typeSet
	if len(s.props) > 0 || len(s.required) > 0 || s.closed || s.mapOf != nil || s.minProps != "" || s.maxProps != "" {
		t |= tObj
	}
	if s.items != nil || s.minItems != "" || s.maxItems != "" {
		t |= tArr
	}
	if s.minLen != "" || s.maxLen != "" || s.pattern != nil {
		t |= tStr
	}
	if s.min != "" || s.max != "" || s.exMin != "" || s.exMax != "" || s.multipleOf != "" {
		t |= tNum
	}
	return t
}

func (s *schema) constrainedBesidesRef() bool {
	c := *s
	c.ref = nil
	c.types = tAll
	return c.constrained() || s.types&^tNull != tAll&^tNull
}

func allObjects(alts []*schema) bool {
	for _, a := range alts {
		if a.types != tObj || a.ref != nil {
			return false
		}
	}
	return true
}

// collapse writes object alternatives as one object that has the
// properties of all of them and requires what all of them require: it
// admits more than they did, which the rewrite reports.
func (e *emitter) collapse(s *schema, alts []*schema) *schema {
	m := &schema{ptr: s.ptr, types: tObj, title: s.title, desc: s.desc}
	first := true
	for _, a := range alts {
		if a.types&tObj == 0 || a.ref != nil {
			continue
		}
		if m.desc == nil {
			m.desc = a.desc
		}
		for _, p := range a.props {
			if m.prop(p.name) == nil {
				m.props = append(m.props, p)
			}
		}
		if first {
			m.required = slices.Clone(a.required)
			first = false
		} else {
			m.required = slices.DeleteFunc(m.required, func(r string) bool { return !a.requires(r) })
		}
	}
	e.inexact(s.ptr, "alternatives written as one object")
	return m
}

// single writes s, of one type (or a kept reference), without null.
func (e *emitter) single(s *schema, pos position) (*object, *plan, error) {
	if s.ref != nil {
		return &object{keys: []string{"$ref"}, vals: []any{e.refTo(s.ref)}}, e.defPlan(s.ref), nil
	}
	t := typeName(s.types)
	out := &object{}
	out.set("type", t)
	if s.title != nil && e.r.common["title"] {
		out.set("title", *s.title)
	}
	if s.desc != nil && e.r.common["description"] {
		out.set("description", *s.desc)
	}
	if s.enum != nil {
		if e.r.allows(t, "enum") && (!e.r.enumStrings || t == "string") {
			out.set("enum", slices.Clone(s.enum))
		} else {
			e.inexact(s.ptr, "enum")
		}
	}
	if s.format != "" && e.r.formatOK(t, s.format) {
		out.set("format", s.format)
	}
	if s.hasDef {
		if e.r.allows(t, "default") && (s.def == nil || typeOf(s.def)&s.types != 0) {
			out.set("default", s.def)
		} else {
			e.inexact(s.ptr, "default")
		}
	}
	var p *plan
	switch t {
	case "string":
		if s.pattern != nil {
			out.set("pattern", *s.pattern)
		}
		e.bound(out, t, s, "minLength", s.minLen)
		e.bound(out, t, s, "maxLength", s.maxLen)
	case "number", "integer":
		e.numeric(out, t, s)
	case "array":
		if s.items == nil {
			return nil, nil, unsupported(s.ptr, "an array whose items can be anything: %s needs a schema for them", e.r.profile)
		}
		items, ip, err := e.emit(s.items, atItems, false)
		if err != nil {
			return nil, nil, err
		}
		out.set("items", items)
		e.bound(out, t, s, "minItems", s.minItems)
		e.bound(out, t, s, "maxItems", s.maxItems)
		if ip != nil {
			p = &plan{items: ip}
		}
	case "object":
		var err error
		if p, err = e.object(out, s, pos); err != nil {
			return nil, nil, err
		}
	}
	return out, p, nil
}

func typeName(t typeSet) string {
	switch {
	case t&tFrac != 0:
		return "number"
	case t == tInt:
		return "integer"
	case t == tStr:
		return "string"
	case t == tBool:
		return "boolean"
	case t == tArr:
		return "array"
	case t == tObj:
		return "object"
	}
	panic(fmt.Sprintf("portable: typeName(%b)", t))
}

// bound writes a bound the profile takes, or reports it dropped.
func (e *emitter) bound(out *object, t string, s *schema, kw string, n json.Number) {
	if n == "" {
		return
	}
	if e.r.allows(t, kw) {
		out.set(kw, n)
		return
	}
	e.inexact(s.ptr, kw)
}

func (e *emitter) numeric(out *object, t string, s *schema) {
	lo, hi := s.min, s.max
	if s.exMin != "" {
		switch {
		case e.r.allows(t, "exclusiveMinimum"):
			out.set("exclusiveMinimum", s.exMin)
		case t == "integer":
			if n, ok := nextInteger(s.exMin); ok {
				lo = tighter(lo, n, true)
			}
		default:
			lo = tighter(lo, s.exMin, true)
			e.inexact(s.ptr, "exclusiveMinimum")
		}
	}
	if s.exMax != "" {
		switch {
		case e.r.allows(t, "exclusiveMaximum"):
			out.set("exclusiveMaximum", s.exMax)
		case t == "integer":
			if n, ok := prevInteger(s.exMax); ok {
				hi = tighter(hi, n, false)
			}
		default:
			hi = tighter(hi, s.exMax, false)
			e.inexact(s.ptr, "exclusiveMaximum")
		}
	}
	e.bound(out, t, s, "minimum", lo)
	e.bound(out, t, s, "maximum", hi)
	e.bound(out, t, s, "multipleOf", s.multipleOf)
}

// object writes the object keywords of s into out.
func (e *emitter) object(out *object, s *schema, pos position) (*plan, error) {
	props := &object{}
	var required []any
	p := &plan{}
	for _, pr := range s.props {
		req := s.requires(pr.name)
		if pos == atRoot && e.r.rootNames != nil && !e.r.rootNames.MatchString(pr.name) {
			err := unsupported(pr.s.ptr, "argument name %q: %s takes a letter or _ then letters, digits and _, at most 64", pr.name, e.r.profile)
			if req || !e.omit {
				return nil, err
			}
			e.inexact(pr.s.ptr, "left out")
			continue
		}
		forceNull := e.r.closed && !req
		child, cp, err := e.emit(pr.s, atProperty, forceNull)
		if err != nil {
			var ue *UnsupportedError
			errors.As(err, &ue)
			if req || ue == nil || ue.kind == tooComplex || ue.kind == inexpressible && !e.omit {
				return nil, err
			}
			if !e.r.closed {
				// The profile's objects are open: the property is
				// still accepted, and no longer checked by its schema.
				e.inexact(pr.s.ptr, "left out")
			}
			continue
		}
		props.set(pr.name, child)
		if req || e.r.closed {
			required = append(required, pr.name)
		}
		if e.r.closed {
			// Every property has its entry, so that alternatives that
			// disagree on what a null means are seen to (see plan).
			p.prop(pr.name, forceNull && !pr.s.admitsNull(), cp)
		}
	}
	for _, r := range s.required {
		if s.prop(r) != nil {
			continue
		}
		if e.r.closed {
			return nil, unsupported(s.ptr, "%q is required but has no schema among the properties, which %s needs", r, e.r.profile)
		}
		e.inexact(s.ptr, "required")
	}
	switch {
	case e.r.closed && len(s.props) == 0 && (s.mapOf != nil || !s.closed && pos != atRoot):
		// Closing it would leave only {}. (The root of a tool without
		// arguments is closed: it takes none.)
		return nil, unsupported(s.ptr, "an object with arbitrary property names (a map): %s takes only fixed properties", e.r.profile)
	case e.r.closed:
		// Closing an open object admits less, never more.
	case s.closed || s.mapOf != nil:
		e.inexact(s.ptr, "additionalProperties")
	}
	if !e.r.closed && e.r.nonEmptyObjects && pos != atRoot && props.len() == 0 {
		return nil, unsupported(s.ptr, "an object without properties: %s refuses one below the root", e.r.profile)
	}
	if props.len() > 0 || pos == atRoot || e.r.closed {
		out.set("properties", props)
	}
	if len(required) > 0 || e.r.closed {
		if required == nil {
			required = []any{}
		}
		out.set("required", required)
	}
	if e.r.closed {
		out.set("additionalProperties", false)
	}
	e.bound(out, "object", s, "minProperties", s.minProps)
	e.bound(out, "object", s, "maxProperties", s.maxProps)
	return p.orNil(), nil
}

// refTo returns the $ref that names d in the output.
func (e *emitter) refTo(d *def) string {
	if d.ptr == "" {
		return "#"
	}
	return "#/$defs/" + escapeToken(e.names[d])
}

// defPlan returns the plan of a kept definition, which the rewrite fills
// in when it writes the definition.
func (e *emitter) defPlan(d *def) *plan {
	p := e.plans[d]
	if p == nil {
		p = &plan{}
		e.plans[d] = p
	}
	return p
}

// nameDefs gives each kept definition a name in the output's $defs, after
// the last token of its pointer in the input.
func (e *emitter) nameDefs(defs []*def) {
	used := map[string]bool{}
	for _, d := range defs {
		if d.ptr == "" {
			continue
		}
		// A name of letters, digits, _, - and . needs no escaping in
		// the $ref that names it, as a JSON Pointer or in a URI.
		base := strings.Map(func(r rune) rune {
			if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' || r == '.' {
				return r
			}
			return '_'
		}, unescapeToken(d.ptr[lastSlash(d.ptr)+1:]))
		if base == "" {
			base = "def"
		}
		name := base
		for i := 2; used[name]; i++ {
			name = base + "_" + strconv.Itoa(i)
		}
		used[name] = true
		e.names[d] = name
	}
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}
