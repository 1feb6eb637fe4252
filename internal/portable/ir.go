package portable

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// typeSet is a set of JSON types. Integers and other numbers are apart, so
// that "number" is {integer, fraction} and "integer" is {integer}.
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBool
	tInt  // numbers that are integers
	tFrac // numbers that are not
	tStr
	tArr
	tObj

	tNum typeSet = tInt | tFrac
	tAll typeSet = tNull | tBool | tNum | tStr | tArr | tObj
)

func typeNamed(name string) (typeSet, bool) {
	switch name {
	case "null":
		return tNull, true
	case "boolean":
		return tBool, true
	case "integer":
		return tInt, true
	case "number":
		return tNum, true
	case "string":
		return tStr, true
	case "array":
		return tArr, true
	case "object":
		return tObj, true
	}
	return 0, false
}

// typeOf returns the type of a JSON value.
func typeOf(v any) typeSet {
	switch v := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBool
	case json.Number:
		if isInteger(v) {
			return tInt
		}
		return tFrac
	case string:
		return tStr
	case []any:
		return tArr
	}
	return tObj
}

// A schema is what the rewrite knows of one JSON Schema: its constraints,
// by type, in a form each profile can write out its own way. What it cannot
// hold of the input is dropped, and the rewrite then reports that the
// result is not exact (see Result.Exact).
type schema struct {
	ptr   string  // where the schema is used, as a JSON Pointer into the input
	types typeSet // the types it admits (tAll: no constraint)

	title, desc *string
	def         any
	hasDef      bool
	enum        []any // nil: no enum; const is a one-value enum
	format      string

	minLen, maxLen json.Number
	pattern        *string

	min, max, exMin, exMax, multipleOf json.Number

	items              *schema // nil: any items
	minItems, maxItems json.Number

	props              []prop
	required           []string
	closed             bool    // additionalProperties: false
	mapOf              *schema // additionalProperties: a schema
	minProps, maxProps json.Number

	anyOf []*schema // nil: none; the schema is also one of these

	ref *def // a definition kept as a reference (profiles with $ref)
	cut bool // a recursive reference beyond the depth unrolled
}

type prop struct {
	name string
	s    *schema
}

// def is a schema kept in $defs, for recursion.
type def struct {
	ptr string // in the input; "" for the root ("#")
	s   *schema
}

func (s *schema) prop(name string) *schema {
	for _, p := range s.props {
		if p.name == name {
			return p.s
		}
	}
	return nil
}

func (s *schema) requires(name string) bool { return slices.Contains(s.required, name) }

// never reports whether no value is valid.
func (s *schema) never() bool {
	return s.types == 0 || s.enum != nil && len(s.enum) == 0 || s.anyOf != nil && len(s.anyOf) == 0
}

// admitsNull reports whether null is valid.
func (s *schema) admitsNull() bool { return s.admitsNullWithin(16) }

// admitsNullWithin follows at most n kept references; beyond them (a
// definition that is only a reference to itself), it says no.
func (s *schema) admitsNullWithin(n int) bool {
	if s.never() || s.types&tNull == 0 || s.cut {
		return false
	}
	if s.enum != nil && !slices.ContainsFunc(s.enum, func(v any) bool { return v == nil }) {
		return false
	}
	if s.anyOf != nil && !slices.ContainsFunc(s.anyOf, func(b *schema) bool { return b.admitsNullWithin(n) }) {
		return false
	}
	if s.ref != nil && (n == 0 || s.ref.s == nil || !s.ref.s.admitsNullWithin(n-1)) {
		return false
	}
	return true
}

// constrained reports whether s says anything of values at all, beyond
// annotations.
func (s *schema) constrained() bool {
	return s.types != tAll || s.enum != nil || s.anyOf != nil || s.ref != nil || s.cut ||
		s.format != "" || s.minLen != "" || s.maxLen != "" || s.pattern != nil ||
		s.min != "" || s.max != "" || s.exMin != "" || s.exMax != "" || s.multipleOf != "" ||
		s.items != nil || s.minItems != "" || s.maxItems != "" ||
		len(s.props) > 0 || len(s.required) > 0 || s.closed || s.mapOf != nil ||
		s.minProps != "" || s.maxProps != ""
}

// clone returns a deep copy of s (kept references are shared).
func (s *schema) clone() *schema {
	if s == nil {
		return nil
	}
	c := *s
	c.enum = slices.Clone(s.enum)
	c.items = s.items.clone()
	c.props = slices.Clone(s.props)
	for i := range c.props {
		c.props[i].s = c.props[i].s.clone()
	}
	c.required = slices.Clone(s.required)
	c.mapOf = s.mapOf.clone()
	if s.anyOf != nil {
		c.anyOf = make([]*schema, len(s.anyOf))
		for i, b := range s.anyOf {
			c.anyOf[i] = b.clone()
		}
	}
	return &c
}

// restrict keeps only the values of types t.
func (s *schema) restrict(t typeSet) {
	s.types &= t
	if s.enum != nil {
		s.enum = slices.DeleteFunc(s.enum, func(v any) bool { return typeOf(v)&s.types == 0 })
	}
}

// merge adds the constraints of o to s: s then admits what both admitted
// (allOf, or a $ref and its siblings). s's annotations win. Where the two
// cannot be combined into one schema, s keeps its own and inexact is
// called: the result admits more than both did.
func (s *schema) merge(o *schema, inexact func(where, why string)) {
	s.restrict(o.types)
	if s.title == nil {
		s.title = o.title
	}
	if s.desc == nil {
		s.desc = o.desc
	}
	if !s.hasDef && o.hasDef {
		s.def, s.hasDef = o.def, true
	}
	if o.enum != nil {
		if s.enum == nil {
			s.enum = slices.Clone(o.enum)
			s.restrict(s.types)
		} else {
			s.enum = slices.DeleteFunc(s.enum, func(v any) bool { return !slices.ContainsFunc(o.enum, func(w any) bool { return equal(v, w) }) })
		}
	}
	if s.format == "" {
		s.format = o.format
	}
	s.minLen = tighter(s.minLen, o.minLen, true)
	s.maxLen = tighter(s.maxLen, o.maxLen, false)
	s.min = tighter(s.min, o.min, true)
	s.max = tighter(s.max, o.max, false)
	s.exMin = tighter(s.exMin, o.exMin, true)
	s.exMax = tighter(s.exMax, o.exMax, false)
	s.minItems = tighter(s.minItems, o.minItems, true)
	s.maxItems = tighter(s.maxItems, o.maxItems, false)
	s.minProps = tighter(s.minProps, o.minProps, true)
	s.maxProps = tighter(s.maxProps, o.maxProps, false)
	switch {
	case o.pattern == nil:
	case s.pattern == nil:
		s.pattern = o.pattern
	case *s.pattern != *o.pattern:
		inexact(s.ptr, "two patterns")
	}
	switch {
	case o.multipleOf == "":
	case s.multipleOf == "":
		s.multipleOf = o.multipleOf
	case !numEqual(s.multipleOf, o.multipleOf):
		inexact(s.ptr, "two multipleOf")
	}
	switch {
	case o.items == nil:
	case s.items == nil:
		s.items = o.items.clone()
	default:
		s.items.merge(o.items, inexact)
	}
	s.mergeProps(o, inexact)
	switch {
	case o.anyOf == nil:
	case s.anyOf == nil:
		s.anyOf = o.clone().anyOf
	default:
		inexact(s.ptr, "two lists of alternatives")
	}
	switch {
	case o.ref == nil:
	case s.ref == nil && !s.constrained():
		s.ref = o.ref
	default:
		inexact(s.ptr, "a recursive reference with other constraints")
	}
	s.cut = s.cut || o.cut
}

// mergeProps combines the object constraints of s and o. Each side's
// additionalProperties speaks only of the names its own properties do not
// list, so a closed side forbids the other's extra names.
func (s *schema) mergeProps(o *schema, inexact func(where, why string)) {
	if s.mapOf != nil || o.mapOf != nil {
		if len(o.props) > 0 || len(s.props) > 0 || s.closed || o.closed {
			inexact(s.ptr, "additionalProperties with a schema, combined with other properties")
			s.mapOf = nil
		} else if s.mapOf == nil {
			s.mapOf = o.mapOf.clone()
		} else if o.mapOf != nil {
			s.mapOf.merge(o.mapOf, inexact)
		}
	}
	var props []prop
	for _, p := range s.props {
		if q := o.prop(p.name); q != nil {
			p.s = p.s.clone()
			p.s.merge(q, inexact)
		} else if o.closed {
			continue // o forbids it
		}
		props = append(props, p)
	}
	for _, q := range o.props {
		if s.prop(q.name) == nil && !s.closed {
			props = append(props, prop{q.name, q.s.clone()})
		}
	}
	s.props = props
	s.closed = s.closed || o.closed
	for _, r := range o.required {
		if !s.requires(r) {
			s.required = append(s.required, r)
		}
	}
}

// builder turns the input schema, dereferenced, into schemas.
type builder struct {
	root    any
	refs    bool           // keep references (else unroll them)
	depth   int            // how many times a reference may be unrolled on one path
	onPath  map[string]int // unrollings of each target on the current path
	defs    map[string]*def
	pending []*def
	nodes   int
	inexact func(where, why string)
	err     error
}

// maxNodes bounds the schemas one rewrite builds, unrolled recursion
// included.
const maxNodes = 20000

func (b *builder) fail(format string, a ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, a...)
	}
}

// build returns the schema of v, a JSON value in a schema position, used at
// ptr.
func (b *builder) build(v any, ptr string) *schema {
	s := &schema{ptr: ptr, types: tAll}
	if b.nodes++; b.nodes > maxNodes {
		b.fail("the schema has more than %d subschemas once its recursion is unrolled", maxNodes)
		return s
	}
	switch v := v.(type) {
	case bool:
		if !v {
			s.types = 0
		}
		return s
	case *object:
		b.object(s, v)
	}
	return s
}

// relax says that the keyword kw of the schema at ptr is not carried over.
func (b *builder) relax(ptr, kw string) { b.inexact(ptr, kw) }

// keywords are the names the server's validator reads (the fields of
// jsonschema-go's Schema). It matches a key to them as encoding/json does,
// without regard to case.
var keywords = setOf("$anchor", "$comment", "$defs", "$dynamicAnchor", "$dynamicRef", "$id", "$ref", "$schema",
	"$vocabulary", "additionalItems", "additionalProperties", "allOf", "anyOf", "const", "contains",
	"contentEncoding", "contentMediaType", "contentSchema", "default", "definitions", "dependencies",
	"dependentRequired", "dependentSchemas", "deprecated", "description", "else", "enum", "examples",
	"exclusiveMaximum", "exclusiveMinimum", "format", "if", "items", "maxContains", "maxItems", "maxLength",
	"maxProperties", "maximum", "minContains", "minItems", "minLength", "minProperties", "minimum", "multipleOf",
	"not", "oneOf", "pattern", "patternProperties", "prefixItems", "properties", "propertyNames", "readOnly",
	"required", "then", "title", "type", "unevaluatedItems", "unevaluatedProperties", "uniqueItems", "writeOnly")

// foldedKeyword returns the keyword that key, which is not one, stands
// for in the server's reading, or "".
func foldedKeyword(key string) string {
	for kw := range keywords {
		if strings.EqualFold(key, kw) {
			return kw
		}
	}
	return ""
}

// canonical returns o with its keys read as the server reads them: a key
// that differs from a keyword only in case is that keyword ("tYpe" is
// "type"), and of two keys for one keyword the last counts.
func canonical(o *object) *object {
	c := o
	for i, k := range o.keys {
		if keywords[k] {
			if c != o {
				c.set(k, o.vals[i])
			}
			continue
		}
		if kw := foldedKeyword(k); kw != "" {
			if c == o {
				c = &object{keys: slices.Clone(o.keys[:i]), vals: slices.Clone(o.vals[:i])}
			}
			c.set(kw, o.vals[i])
			continue
		}
		if c != o {
			c.set(k, o.vals[i])
		}
	}
	return c
}

func (b *builder) object(s *schema, o *object) {
	ptr := s.ptr
	o = canonical(o)
	var allOf []*schema
	var oneOf []*schema
	hasPrefix := o.index("prefixItems") >= 0
	hasPatterns := o.index("patternProperties") >= 0
	for i, kw := range o.keys {
		v := o.vals[i]
		at := ptr + "/" + escapeToken(kw)
		switch kw {
		case "type":
			var names []any
			switch v := v.(type) {
			case string:
				names = []any{v}
			case []any:
				names = v
			}
			var t typeSet
			for _, n := range names {
				name, _ := n.(string)
				x, ok := typeNamed(name)
				if !ok {
					b.relax(ptr, "type")
					t = tAll
					break
				}
				t |= x
			}
			s.restrict(t)
		case "enum":
			if list, ok := v.([]any); ok {
				s.setEnum(list)
			} else {
				b.relax(ptr, kw)
			}
		case "const":
			s.setEnum([]any{v})
		case "title":
			if str, ok := v.(string); ok {
				s.title = &str
			}
		case "description":
			if str, ok := v.(string); ok {
				s.desc = &str
			}
		case "default":
			s.def, s.hasDef = v, true
		case "format":
			if str, ok := v.(string); ok {
				s.format = str
			}
		case "pattern":
			if str, ok := v.(string); ok {
				s.pattern = &str
			} else {
				b.relax(ptr, kw)
			}
		case "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
			"minItems", "maxItems", "minProperties", "maxProperties":
			n, ok := v.(json.Number)
			if !ok {
				b.relax(ptr, kw)
				continue
			}
			*s.number(kw) = n
		case "items":
			switch v.(type) {
			case bool, *object:
				if !hasPrefix {
					s.items = b.build(v, at)
				} else {
					b.relax(ptr, kw) // items after prefixItems: the rest of a tuple
				}
			default:
				b.relax(ptr, kw) // the draft-07 tuple form
			}
		case "uniqueItems":
			if v != false {
				b.relax(ptr, kw)
			}
		case "properties":
			props, ok := v.(*object)
			if !ok {
				continue
			}
			for j, name := range props.keys {
				s.props = append(s.props, prop{name, b.build(props.vals[j], at+"/"+escapeToken(name))})
			}
		case "required":
			list, _ := v.([]any)
			for _, x := range list {
				if name, ok := x.(string); ok && !s.requires(name) {
					s.required = append(s.required, name)
				}
			}
		case "additionalProperties":
			switch {
			case hasPatterns:
				if v != true {
					b.relax(ptr, kw) // it speaks of the names no pattern matches
				}
			case v == false:
				s.closed = true
			case v == true:
			default:
				s.mapOf = b.build(v, at)
			}
		case "allOf":
			list, _ := v.([]any)
			for j, x := range list {
				allOf = append(allOf, b.build(x, fmt.Sprintf("%s/%d", at, j)))
			}
		case "anyOf", "oneOf":
			list, _ := v.([]any)
			var branches []*schema
			for j, x := range list {
				branches = append(branches, b.build(x, fmt.Sprintf("%s/%d", at, j)))
			}
			if kw == "anyOf" {
				if s.anyOf != nil {
					oneOf = s.anyOf
				}
				s.anyOf = branches
			} else {
				// Only one may match: admitting any is more.
				b.relax(ptr, kw)
				oneOf = branches
			}
		case "$ref":
			ref, _ := v.(string)
			if t := b.ref(ref, ptr); t != nil {
				allOf = append(allOf, t)
			}
		case "prefixItems", "additionalItems", "contains", "minContains", "maxContains", "unevaluatedItems",
			"patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
			"unevaluatedProperties", "not", "if", "then", "else":
			b.relax(ptr, kw)
		case "$dynamicRef", "$recursiveRef":
			b.fail("%s at %s: its target depends on the path taken at validation time", kw, orRoot(ptr))
		}
		// Anything else is an annotation ($schema, $id, $comment,
		// examples, deprecated, x-..., nullable) or a container of
		// definitions ($defs): the server's validator ignores it too.
	}
	if oneOf != nil {
		if s.anyOf == nil {
			s.anyOf = oneOf
		} else {
			b.relax(ptr, "oneOf") // anyOf and oneOf both: keep anyOf
		}
	}
	for _, a := range allOf {
		s.merge(a, b.inexact)
	}
}

func (s *schema) setEnum(vals []any) {
	if s.enum == nil {
		s.enum = slices.Clone(vals)
	} else {
		s.enum = slices.DeleteFunc(s.enum, func(v any) bool { return !slices.ContainsFunc(vals, func(w any) bool { return equal(v, w) }) })
	}
	var t typeSet
	for _, v := range vals {
		t |= typeOf(v)
	}
	s.restrict(t)
}

func (s *schema) number(kw string) *json.Number {
	switch kw {
	case "minLength":
		return &s.minLen
	case "maxLength":
		return &s.maxLen
	case "minimum":
		return &s.min
	case "maximum":
		return &s.max
	case "exclusiveMinimum":
		return &s.exMin
	case "exclusiveMaximum":
		return &s.exMax
	case "multipleOf":
		return &s.multipleOf
	case "minItems":
		return &s.minItems
	case "maxItems":
		return &s.maxItems
	case "minProperties":
		return &s.minProps
	}
	return &s.maxProps
}

// ref returns the schema a $ref at ptr stands for: the target built in its
// place (unrolled), or a schema that refers to a kept definition. It
// returns nil for a reference it cannot follow, having failed.
func (b *builder) ref(ref, ptr string) *schema {
	if ref == "" {
		return nil // ignored, as jsonschema-go ignores it
	}
	target, tptr, ok := b.resolve(ref)
	if !ok {
		b.fail("$ref %q at %s: only references within the schema can be rewritten", ref, orRoot(ptr))
		return nil
	}
	if b.refs {
		d := b.defs[tptr]
		if d == nil {
			d = &def{ptr: tptr}
			b.defs[tptr] = d
			b.pending = append(b.pending, d)
		}
		return &schema{ptr: ptr, types: tAll, ref: d}
	}
	if b.onPath[tptr] >= b.depth {
		return &schema{ptr: ptr, types: tAll, cut: true}
	}
	b.onPath[tptr]++
	s := b.build(target, ptr)
	b.onPath[tptr]--
	return s
}

// resolve finds the value a local reference names.
func (b *builder) resolve(ref string) (any, string, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, "", false
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, "", false
	}
	if frag == "" {
		return b.root, "", true
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, "", false
	}
	v := b.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = unescapeToken(tok)
		switch x := v.(type) {
		case *object:
			var ok bool
			if v, ok = x.get(tok); !ok {
				return nil, "", false
			}
		case []any:
			i := -1
			fmt.Sscan(tok, &i)
			if i < 0 || i >= len(x) {
				return nil, "", false
			}
			v = x[i]
		default:
			return nil, "", false
		}
	}
	return v, frag, true
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "the root"
	}
	return ptr
}
