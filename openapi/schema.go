package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
)

// componentPrefix is how a $ref names a schema of the document's
// components; such schemas become entries of the tool schema's $defs.
const componentPrefix = "#/components/schemas/"

// maxSchemaDepth bounds the nesting of one schema (not counting $refs,
// which are followed once per name), so that a hostile document cannot
// exhaust the stack.
const maxSchemaDepth = 256

// errUnsupportedRef is wrapped by the error for a $ref the converter does
// not follow: one into another document, or to something other than a
// component schema.
var errUnsupportedRef = errors.New("unsupported $ref")

// A converter turns the schemas of one document into JSON Schema 2020-12,
// as MCP tool schemas are written. Each component schema is converted once
// and shared, read-only, by every tool that refers to it.
type converter struct {
	doc    *openapi3.T
	comps  map[compKey]*component         // by component name and direction
	shared map[string]*openapi3.SchemaRef // see sharedSchema, by name
	raw    any                            // the document as JSON values, for lookup
}

// A direction says which way a schema's data goes: into the API (the
// tool's arguments), where readOnly properties have no place, or out of it
// (its answer), where writeOnly ones have none.
type direction bool

const (
	input  direction = false
	output direction = true
)

type compKey struct {
	name string
	dir  direction
	bare bool // without annotations (see annotationOnly)
}

// A component is one converted component schema: its JSON and the names
// of the components it refers to directly.
type component struct {
	json  json.RawMessage
	deps  []string
	notes []error // what the conversion left out (see [Options.OnDegrade])
	err   error
}

func newConverter(doc *openapi3.T) *converter {
	return &converter{
		doc:    doc,
		comps:  make(map[compKey]*component),
		shared: make(map[string]*openapi3.SchemaRef),
	}
}

// A walk is one conversion: of an inline schema (comp is "") or of the
// component schema comp. It collects the component names the schema
// refers to and notes on what it left out.
type walk struct {
	dir   direction
	comp  string
	deps  []string
	notes []error
}

// A degradation says what a tool's schema leaves out of its document's:
// what [Options.OnDegrade] hears. It matches [ErrDegraded].
type degradation struct{ msg string }

func (d *degradation) Error() string        { return d.msg }
func (d *degradation) Is(target error) bool { return target == ErrDegraded }

func degraded(format string, args ...any) error {
	return &degradation{fmt.Sprintf(format, args...)}
}

// note records that the conversion left something out, at most once per
// text.
func (w *walk) note(err error) {
	if !slices.ContainsFunc(w.notes, func(e error) bool { return e.Error() == err.Error() }) {
		w.notes = append(w.notes, err)
	}
}

// schema converts s (the schema of a parameter, a body or a response) into
// a JSON value, adds to refs the component names it refers to, and
// returns the notes on what it left out.
func (c *converter) schema(s *openapi3.SchemaRef, dir direction, refs map[string]bool) (any, []error, error) {
	if s == nil {
		return map[string]any{}, nil, nil
	}
	if err := checkDepth(s); err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, nil, err
	}
	w := &walk{dir: dir}
	out, err := c.rewrite(v, w, 0)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range w.deps {
		refs[d] = true
	}
	return out, w.notes, nil
}

// maxInlineShared is the longest a shared schema (see sharedSchema) is
// copied into each tool's root, converted: a longer one becomes an entry
// of its $defs. A short one reads better inline, and costs no more.
const maxInlineShared = 512

// sharedSchema converts, as schema does, the schema s of a parameter,
// request body or response that operations may share: one of the
// document's components (parameters, requestBodies, responses) or a
// parameter of a path item, whose schema is at the JSON Pointer at in the
// document ("" for an operation's own, which schema converts). Written
// inline there and longer than maxInlineShared, it becomes the entry at
// of the tool schema's $defs, named by where it is (no component schema's
// name starts with "/"), which fit trims as it does a component schema,
// instead of a copy in each operation's root.
func (c *converter) sharedSchema(s *openapi3.SchemaRef, at string, dir direction, refs map[string]bool) (any, []error, error) {
	if at == "" || s == nil || s.Ref != "" || s.Value == nil {
		return c.schema(s, dir, refs)
	}
	if c.shared[at] == nil {
		c.shared[at] = s
	}
	comp := c.component(at, dir, false)
	if comp.err != nil {
		return nil, nil, comp.err
	}
	if len(comp.json) > maxInlineShared {
		refs[at] = true
		return map[string]any{"$ref": "#/$defs/" + escapePointer(at)}, nil, nil
	}
	var v any
	if err := json.Unmarshal(comp.json, &v); err != nil {
		return nil, nil, err
	}
	for _, d := range comp.deps {
		refs[d] = true
	}
	return v, comp.notes, nil
}

// errTooDeep is the error for a schema nested past maxSchemaDepth.
var errTooDeep = fmt.Errorf("schema nested more than %d levels deep", maxSchemaDepth)

// checkDepth returns errTooDeep when the parsed schema s nests more than
// maxSchemaDepth levels (not counting $refs), before it is marshalled:
// the parser's marshalling of a deep schema costs the square of its
// depth. Each schema is measured once.
func checkDepth(s *openapi3.SchemaRef) error {
	memo := make(map[*openapi3.Schema]int)
	var below func(r *openapi3.SchemaRef, depth int) int
	below = func(r *openapi3.SchemaRef, depth int) int {
		if r == nil || r.Ref != "" || r.Value == nil {
			return 0
		}
		if depth > maxSchemaDepth {
			return maxSchemaDepth + 1
		}
		v := r.Value
		if d, ok := memo[v]; ok {
			return d
		}
		memo[v] = 0 // a cycle of inline schemas counts no deeper
		deepest := 0
		visit := func(rs ...*openapi3.SchemaRef) {
			for _, c := range rs {
				if deepest <= maxSchemaDepth {
					deepest = max(deepest, 1+below(c, depth+1))
				}
			}
		}
		visit(v.OneOf...)
		visit(v.AnyOf...)
		visit(v.AllOf...)
		visit(v.PrefixItems...)
		visit(v.Not, v.Items, v.Contains, v.PropertyNames, v.If, v.Then, v.Else,
			v.AdditionalProperties.Schema, v.UnevaluatedItems.Schema, v.UnevaluatedProperties.Schema)
		for _, m := range []openapi3.Schemas{v.Properties, v.PatternProperties, v.DependentSchemas} {
			for _, p := range m {
				visit(p)
			}
		}
		memo[v] = deepest
		return deepest
	}
	if below(s, 0) > maxSchemaDepth {
		return errTooDeep
	}
	return nil
}

// stub is what a component that a size limit leaves out becomes: a
// schema that accepts any value, so that every $ref still resolves.
var stub = json.RawMessage(`{}`)

// levels returns the components that the names in refs need, a level of
// $refs at a time: refs' own, then those they refer to, and so on. Each
// component is in the first level that reaches it, so a component that
// refers to itself (a tree, a linked list) is listed once.
func (c *converter) levels(refs map[string]bool, dir direction) ([][]string, error) {
	var out [][]string
	seen := make(map[string]bool, len(refs))
	level := make([]string, 0, len(refs))
	for name := range refs {
		level = append(level, name)
		seen[name] = true
	}
	for len(level) > 0 {
		slices.Sort(level)
		out = append(out, level)
		var next []string
		for _, name := range level {
			comp := c.component(name, dir, false)
			if comp.err != nil {
				return nil, comp.err
			}
			for _, d := range comp.deps {
				if !seen[d] {
					seen[d] = true
					next = append(next, d)
				}
			}
		}
		level = next
	}
	return out, nil
}

// A limit is the size a tool schema is fitted to, and the option that set
// it, for the note that says so.
type limit struct {
	bytes  int // <= 0: no limit
	option string
}

// Which annotations (descriptions, titles, examples) a fitted schema
// keeps, from the most to the least.
const (
	allProse   = iota // all of them
	nearProse         // the root's, and those of the components it refers to
	topProse          // the root's, down to topDepth
	proseSteps        // how many steps there are
)

// topDepth is how deep in the root schema topProse keeps annotations: the
// root, its properties (the tool's arguments) and theirs (a body's
// fields).
const topDepth = 2

// fit returns the JSON of the tool schema root with the $defs it needs
// (the components the names in refs reach), and the notes on what it
// leaves out. The root is the caller's own, and fit may change it.
//
// Past lim, fit gives up, in this order and only while the schema is
// still too long: the descriptions, titles and examples of the components
// reached through more than one $ref; those of every component and of the
// root below its properties' properties; then the components of the
// deepest level, which become {} (any value), a level at a time, down to
// the components the root refers to. What the schema says is what the
// server enforces at every step: annotations check nothing, and a
// component left as {} checks nothing either. Only the root, written in
// the operation, is never cut, so it alone may pass the limit; the
// schemas that operations share are entries of $defs (see sharedSchema),
// short ones aside.
func (c *converter) fit(root map[string]any, refs map[string]bool, dir direction, lim limit) ([]byte, []error, error) {
	levels, err := c.levels(refs, dir)
	if err != nil {
		return nil, nil, err
	}
	rootJSON, err := json.Marshal(root)
	if err != nil {
		return nil, nil, err
	}
	// The length of the levels, whole, bare and as stubs, the first two
	// summed from the top (whole[k] is that of levels[:k]), so that size
	// costs the same whatever it keeps: a chain of thousands of
	// components is given up a level at a time.
	whole, stubs := make([]int, len(levels)+1), make([]int, len(levels))
	for l, level := range levels {
		n := 0
		for _, name := range level {
			n += entryLen(name) + len(c.component(name, dir, false).json)
			stubs[l] += entryLen(name) + len(stub)
		}
		whole[l+1] = whole[l] + n
	}
	var bare []int // as whole, without annotations; summed when first needed
	// size is the length of the schema that keeps the first keep levels,
	// with the annotations prose says, and stubs for the next level.
	size := func(prose, keep int) int {
		n := len(rootJSON) + len(`,"$defs":{}`)
		if keep < len(levels) {
			n += stubs[keep]
		}
		if prose == allProse {
			return n + whole[keep]
		}
		if bare == nil {
			bare = make([]int, len(levels)+1)
			for l, level := range levels {
				b := 0
				for _, name := range level {
					b += entryLen(name) + len(c.component(name, dir, true).json)
				}
				bare[l+1] = bare[l] + b
			}
		}
		n += bare[keep]
		if prose == nearProse && keep > 0 {
			n += whole[1] - bare[1] // the root's own components keep theirs
		}
		return n
	}
	prose, keep := allProse, len(levels)
	lost := false // whether an annotation was left out
	if lim.bytes > 0 {
		for prose+1 < proseSteps && size(prose, keep) > lim.bytes {
			prose++
			if prose == topProse && stripProse(root, 0) {
				lost = true
				if rootJSON, err = json.Marshal(root); err != nil {
					return nil, nil, err
				}
			}
		}
		for keep > 0 && size(prose, keep) > lim.bytes {
			keep--
		}
	}

	var (
		defs  map[string]json.RawMessage
		found []error
		out   []byte
	)
	for {
		defs, found = nil, nil
		if len(levels) > 0 {
			defs = make(map[string]json.RawMessage)
		}
		stubbed := make(map[string]bool)
		for l, level := range levels {
			if l > keep {
				break
			}
			for _, name := range level {
				if l == keep {
					defs[name] = stub
					stubbed[name] = true
					continue
				}
				bare := prose > allProse && (l > 0 || prose > nearProse)
				comp := c.component(name, dir, bare)
				lost = lost || bare && len(comp.json) < len(c.component(name, dir, false).json)
				defs[name] = comp.json
				for _, e := range comp.notes {
					if !slices.ContainsFunc(found, func(n error) bool { return n.Error() == e.Error() }) {
						found = append(found, e)
					}
				}
			}
		}
		if defs != nil {
			root["$defs"] = defs
		}
		out, err = json.Marshal(root)
		if err != nil {
			return nil, nil, err
		}
		if len(stubbed) > 0 {
			// A oneOf whose branches reach stubs, directly or through the
			// $refs of kept components, may now match a value twice, and
			// refuse it (see loosen): the schema, which the limit keeps
			// short, is loosened where it reaches them.
			out, _ = loosen(out, c.reaching(levels[:keep], stubbed, dir))
		}
		// loosen may lengthen the schema a little (an anyOf moved into
		// an allOf), which size does not count: past the limit, one more
		// level is given up.
		if lim.bytes <= 0 || len(out) <= lim.bytes || keep == 0 || len(stubbed) == 0 {
			break
		}
		keep--
	}
	switch {
	case keep < len(levels):
		cut := 0
		for _, level := range levels[keep:] {
			cut += len(level)
		}
		found = append(found, degraded("trimmed to %d bytes (%s %d): descriptions are left out, and the %d components reached through more than %d $refs accept any value", len(out), lim.option, lim.bytes, cut, keep))
	case !lost:
	case prose == topProse:
		found = append(found, degraded("trimmed to %d bytes (%s %d): the descriptions of its components and of nested properties are left out", len(out), lim.option, lim.bytes))
	case prose == nearProse:
		found = append(found, degraded("trimmed to %d bytes (%s %d): the descriptions of the components reached through more than one $ref are left out", len(out), lim.option, lim.bytes))
	}
	if lim.bytes > 0 && len(out) > lim.bytes {
		// What the operation writes itself is never cut: said, so that
		// the limit is never passed unheard.
		found = append(found, degraded("%d bytes, past %s %d: the schema the operation writes itself is kept whole", len(out), lim.option, lim.bytes))
	}
	return out, found, nil
}

// entryLen is the length of the name of an entry of $defs in a tool
// schema's JSON, with its colon and comma: quoted and escaped as
// json.Marshal writes it (a shared schema's name, a JSON Pointer, may
// hold a '"' or a '<', which take more bytes written than read).
func entryLen(name string) int {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			if b, err := json.Marshal(name); err == nil {
				return len(b) + 2
			}
			break
		}
	}
	return len(name) + 4 // most names: nothing to escape
}

// reaching returns the names in stubbed and those of the components of
// kept that refer to one of them, directly or through others.
func (c *converter) reaching(kept [][]string, stubbed map[string]bool, dir direction) map[string]bool {
	out := maps.Clone(stubbed)
	referrers := make(map[string][]string)
	for _, level := range kept {
		for _, name := range level {
			for _, d := range c.component(name, dir, false).deps {
				referrers[d] = append(referrers[d], name)
			}
		}
	}
	queue := slices.Collect(maps.Keys(stubbed))
	for len(queue) > 0 {
		name := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, r := range referrers[name] {
			if !out[r] {
				out[r] = true
				queue = append(queue, r)
			}
		}
	}
	return out
}

// annotationOnly are the keywords that a trimmed schema leaves out: they
// check nothing, and are most of a large schema's length.
var annotationOnly = map[string]bool{"description": true, "title": true, "examples": true, "$comment": true}

// stripProse removes, in place, the annotations of the converted schema v
// nested deeper than topDepth, depth being v's own, and reports whether
// there were any.
func stripProse(v any, depth int) bool {
	m, ok := v.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return false
	}
	found := false
	if depth > topDepth {
		for k := range annotationOnly {
			if _, ok := m[k]; ok {
				delete(m, k)
				found = true
			}
		}
	}
	for k, val := range m {
		switch {
		case k == "items" || schemaKeywords[k]:
			found = stripProse(val, depth+1) || found
		case schemaMapKeywords[k]:
			for _, s := range asMap(val) {
				found = stripProse(s, depth+1) || found
			}
		case schemaListKeywords[k]:
			for _, s := range asSlice(val) {
				found = stripProse(s, depth+1) || found
			}
		}
	}
	return found
}

// loosen returns the schema js, some of whose components are stubbed
// ({}, any value), with the checks that a stub would make stricter than
// the document's left out, and whether it changed anything: each oneOf
// that has a branch referring to a stubbed component, itself or below it
// (an allOf that wraps the $ref to add a description, a nullable anyOf),
// becomes an anyOf, since two branches may now match one value; a not of
// such a schema, which would now refuse more, is dropped, and so is an
// if (with its then and else) whose then would now apply to more. The
// schema js is shared and is not modified.
func loosen(js json.RawMessage, stubbed map[string]bool) (json.RawMessage, bool) {
	var v any
	if json.Unmarshal(js, &v) != nil {
		return js, false
	}
	changed := false
	var visit func(v any, depth int)
	visit = func(v any, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > maxSchemaDepth {
			return
		}
		if branches, ok := m["oneOf"].([]any); ok && slices.ContainsFunc(branches, func(b any) bool {
			return refersTo(b, stubbed, depth+1)
		}) {
			delete(m, "oneOf")
			if other, ok := m["anyOf"].([]any); ok {
				// Both must hold: the anyOf moves into an allOf.
				m["allOf"] = append(slices.Clip(asSlice(m["allOf"])), map[string]any{"anyOf": other})
			}
			m["anyOf"] = branches
			changed = true
		}
		if not, ok := m["not"]; ok && refersTo(not, stubbed, depth+1) {
			delete(m, "not")
			changed = true
		}
		if cond, ok := m["if"]; ok && refersTo(cond, stubbed, depth+1) {
			delete(m, "if")
			delete(m, "then")
			delete(m, "else")
			changed = true
		}
		for k, e := range m {
			switch {
			case k == "items" || schemaKeywords[k]:
				visit(e, depth+1)
			case schemaMapKeywords[k]:
				for _, s := range asMap(e) {
					visit(s, depth+1)
				}
			case schemaListKeywords[k]:
				for _, s := range asSlice(e) {
					visit(s, depth+1)
				}
			}
		}
	}
	visit(v, 0)
	if !changed {
		return js, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return js, false
	}
	return out, true
}

// refersTo reports whether the converted schema v has a $ref to one of
// the components named in names, at any depth.
func refersTo(v any, names map[string]bool, depth int) bool {
	if depth > maxSchemaDepth {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			name, err := componentName(strings.Replace(ref, "#/$defs/", componentPrefix, 1))
			if err == nil && names[name] {
				return true
			}
		}
		for k, e := range v {
			if k != "enum" && k != "const" && k != "default" && k != "examples" && refersTo(e, names, depth+1) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, func(e any) bool { return refersTo(e, names, depth+1) })
	}
	return false
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// component converts the component schema name, once per direction, with
// its annotations or bare (without them).
func (c *converter) component(name string, dir direction, bare bool) *component {
	key := compKey{name, dir, bare}
	if comp, ok := c.comps[key]; ok {
		return comp
	}
	if bare {
		// The converted component, less its annotations.
		whole := c.component(name, dir, false)
		comp := &component{deps: whole.deps, notes: whole.notes, err: whole.err}
		c.comps[key] = comp
		var v any
		if comp.err == nil {
			comp.err = json.Unmarshal(whole.json, &v)
		}
		if comp.err == nil {
			stripProse(v, topDepth+1)
			comp.json, comp.err = json.Marshal(v)
		}
		return comp
	}
	comp := &component{}
	c.comps[key] = comp
	var v any
	if strings.HasPrefix(name, "/") && c.shared[name] == nil {
		// A place in the document other than a component: Linode's
		// "#/components/schemas/X/properties/y", bundlers' "#/paths/...".
		if v, comp.err = c.lookup(name); comp.err != nil {
			return comp
		}
	} else {
		s := c.shared[name] // a shared body's, parameter's or response's
		if s == nil && c.doc.Components != nil {
			s = c.doc.Components.Schemas[name]
		}
		if s == nil || s.Value == nil && s.Ref == "" {
			comp.err = fmt.Errorf("%w: no schema %q in components", errUnsupportedRef, clip(name, 80))
			return comp
		}
		// The component itself, not a $ref to it: marshal its value.
		var raw []byte
		err := checkDepth(&openapi3.SchemaRef{Value: s.Value})
		switch {
		case err != nil:
		case s.Ref != "":
			raw, err = json.Marshal(s) // an alias of another component
		default:
			raw, err = json.Marshal(s.Value)
		}
		if err == nil {
			err = json.Unmarshal(raw, &v)
		}
		if err != nil {
			comp.err = fmt.Errorf("component schema %q: %w", clip(name, 80), err)
			return comp
		}
	}
	w := &walk{dir: dir, comp: name}
	out, err := c.rewrite(v, w, 0)
	if err != nil {
		comp.err = fmt.Errorf("component schema %q: %w", clip(name, 80), err)
		return comp
	}
	comp.deps, comp.notes = w.deps, w.notes
	comp.json, comp.err = json.Marshal(out)
	return comp
}

// Keywords whose value is a schema, a map of schemas, or a list of
// schemas: the places rewrite descends into (and items and
// additionalItems, which it handles itself). Every other keyword's value
// is data (enum, const, default, required, ...) and is kept as it is.
var (
	schemaKeywords = map[string]bool{
		"additionalProperties": true, "not": true, "contains": true,
		"propertyNames": true, "if": true, "then": true, "else": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "contentSchema": true,
	}
	schemaMapKeywords  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	schemaListKeywords = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
	// The other keywords of JSON Schema 2020-12 that are kept. Any keyword
	// outside these lists (OpenAPI's example, xml, externalDocs and
	// discriminator, x- extensions, a misspelt "max_items") is dropped: it
	// means nothing to a validator, and a model reads the schema as one.
	dataKeywords = map[string]bool{
		"$schema": true, "$id": true, "$ref": true, "$anchor": true, "$dynamicRef": true, "$dynamicAnchor": true,
		"$comment": true, "type": true, "enum": true, "const": true, "multipleOf": true, "maximum": true,
		"exclusiveMaximum": true, "minimum": true, "exclusiveMinimum": true, "maxLength": true, "minLength": true,
		"pattern": true, "maxItems": true, "minItems": true, "uniqueItems": true, "maxContains": true,
		"minContains": true, "maxProperties": true, "minProperties": true, "required": true,
		"dependentRequired": true, "title": true, "description": true, "default": true, "deprecated": true,
		"readOnly": true, "writeOnly": true, "examples": true, "format": true, "contentEncoding": true,
		"contentMediaType": true, "nullable": true,
	}
	// jsonTypes are the names "type" may give.
	jsonTypes = []any{"null", "boolean", "object", "array", "number", "string", "integer"}
)

// rewrite returns a copy of the schema v in JSON Schema 2020-12, in the
// form mcpkit's validator enforces as written: component $refs point into
// $defs (their names appended to w.deps); OpenAPI 3.0's nullable and
// boolean exclusiveMinimum/Maximum become their 2020-12 forms; other
// drafts' keywords (dependencies, the array form of items, $recursiveRef)
// become 2020-12's; keywords of no vocabulary are dropped; a pattern Go's
// regexp cannot compile is dropped with a note; and so are the properties
// that do not go in w's direction (readOnly ones in the input, writeOnly
// ones in the output), from "required" too.
func (c *converter) rewrite(v any, w *walk, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, errTooDeep
	}
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil // true, false, or something the validator will judge
	}
	sub := func(v any) (any, error) {
		if v == nil {
			return map[string]any{}, nil // a null where a schema should be
		}
		return c.rewrite(v, w, depth+1)
	}
	out := make(map[string]any, len(m))
	var dropped []string
	for k, val := range m {
		switch {
		case k == "$ref":
			ref, _ := val.(string)
			name, err := componentName(ref)
			if err != nil {
				return nil, err
			}
			w.deps = append(w.deps, name)
			out[k] = "#/$defs/" + escapePointer(name)
		case k == "$recursiveRef":
			// 2019-09's recursion: OpenAPI 3.1 documents write "#" in a
			// component for "this component".
			if val == "#" && w.comp != "" {
				w.deps = append(w.deps, w.comp)
				out["$ref"] = "#/$defs/" + escapePointer(w.comp)
			} else {
				w.note(degraded("$recursiveRef %q outside a component schema is not checked", clip(fmt.Sprint(val), 80)))
			}
		case k == "pattern":
			if p, ok := val.(string); ok {
				if _, err := regexp.Compile(p); err != nil {
					w.note(degraded("pattern %q is not checked: Go's regexp cannot compile it", clip(p, 80)))
					continue
				}
			}
			out[k] = val
		case k == "dependencies":
			// draft-07: a list is dependentRequired, a schema dependentSchemas.
			deps, _ := val.(map[string]any)
			for name, d := range deps {
				kw := "dependentSchemas"
				if _, isList := d.([]any); isList {
					kw = "dependentRequired"
				} else if r, err := sub(d); err != nil {
					return nil, err
				} else {
					d = r
				}
				if out[kw] == nil {
					out[kw] = map[string]any{}
				}
				if km, ok := out[kw].(map[string]any); ok {
					km[name] = d
				}
			}
		case k == "items" || k == "additionalItems":
			if list, ok := val.([]any); ok && k == "items" {
				// draft-07's tuple: prefixItems in 2020-12.
				rl := make([]any, len(list))
				for i, e := range list {
					r, err := sub(e)
					if err != nil {
						return nil, err
					}
					rl[i] = r
				}
				out["prefixItems"] = rl
				continue
			}
			r, err := sub(val)
			if err != nil {
				return nil, err
			}
			if k == "additionalItems" {
				if _, tuple := m["items"].([]any); !tuple {
					continue // means nothing without a tuple
				}
				k = "items"
			}
			out[k] = r
		case schemaKeywords[k]:
			r, err := sub(val)
			if err != nil {
				return nil, err
			}
			out[k] = r
		case schemaMapKeywords[k]:
			sm, ok := val.(map[string]any)
			if !ok {
				continue
			}
			rm := make(map[string]any, len(sm))
			for name, s := range sm {
				if k == "properties" && !c.goes(s, w.dir) {
					dropped = append(dropped, name)
					continue
				}
				if k == "patternProperties" {
					if _, err := regexp.Compile(name); err != nil {
						w.note(degraded("patternProperties %q is not checked: Go's regexp cannot compile it (nor additionalProperties beside it)", clip(name, 80)))
						continue
					}
				}
				r, err := sub(s)
				if err != nil {
					return nil, err
				}
				rm[name] = r
			}
			if k == "definitions" {
				k = "$defs"
			}
			out[k] = rm
		case schemaListKeywords[k]:
			sl, ok := val.([]any)
			if !ok {
				continue
			}
			rl := make([]any, len(sl))
			for i, s := range sl {
				r, err := sub(s)
				if err != nil {
					return nil, err
				}
				rl[i] = r
			}
			out[k] = rl
		case dataKeywords[k]:
			out[k] = val
		}
	}
	if pp, ok := out["patternProperties"].(map[string]any); ok && len(pp) < len(asMap(m["patternProperties"])) {
		delete(out, "additionalProperties") // what the dropped ones matched stays allowed
	}
	if parts, ok := out["allOf"].([]any); ok {
		// A property that one schema of an allOf declares readOnly (or
		// writeOnly) is no more required by another, written here, than
		// by its own: Base's readOnly id, required by the schema that
		// extends it.
		inline := []map[string]any{out}
		for _, p := range parts {
			if pm, ok := p.(map[string]any); ok && pm["$ref"] == nil && pm["required"] != nil {
				inline = append(inline, pm)
			}
		}
		if out["required"] != nil || len(inline) > 1 {
			dropped = append(dropped, c.gone(m, w.dir, 0)...)
			for _, pm := range inline[1:] {
				dropRequired(pm, dropped)
			}
		}
	}
	dropRequired(out, dropped)
	if w.dir == output {
		optionalNullable(out)
	}
	return normalize(out), nil
}

// optionalNullable lets every optional property of the converted output
// schema s be null too: APIs written in Go, Kubernetes first, answer null
// for an optional value they do not have ("creationTimestamp": null in
// every pod template), where their documents type the value, and such an
// answer is not an API's fault to refuse.
func optionalNullable(s map[string]any) {
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return
	}
	req, _ := s["required"].([]any)
	for name, p := range props {
		pm, ok := p.(map[string]any)
		if !ok || slices.Contains(req, any(name)) {
			continue
		}
		c := maps.Clone(pm)
		c["nullable"] = true
		props[name] = normalize(c)
	}
}

// dropRequired removes names from the required list of the converted
// schema s.
func dropRequired(s map[string]any, names []string) {
	req, ok := s["required"].([]any)
	if !ok || len(names) == 0 {
		return
	}
	kept := make([]any, 0, len(req))
	for _, r := range req {
		if name, ok := r.(string); !ok || !slices.Contains(names, name) {
			kept = append(kept, r)
		}
	}
	s["required"] = kept
}

// gone returns the names of the properties that do not go in direction
// dir (see goes) among those that the schema m, as written, and the
// component schemas its allOf refers to, at any depth, declare.
func (c *converter) gone(m map[string]any, dir direction, depth int) []string {
	var out []string
	for name, s := range asMap(m["properties"]) {
		if !c.goes(s, dir) {
			out = append(out, name)
		}
	}
	for _, p := range asSlice(m["allOf"]) {
		pm := asMap(p)
		if ref, ok := pm["$ref"].(string); ok {
			if name, err := componentName(ref); err == nil && c.doc.Components != nil {
				if cs := c.doc.Components.Schemas[name]; cs != nil && cs.Value != nil {
					out = append(out, goneOf(cs.Value, dir, depth+1)...)
				}
			}
			continue
		}
		if depth < 8 {
			out = append(out, c.gone(pm, dir, depth+1)...)
		}
	}
	return out
}

// goneOf is gone for a parsed schema.
func goneOf(s *openapi3.Schema, dir direction, depth int) []string {
	if depth > 8 {
		return nil
	}
	var out []string
	for name, p := range s.Properties {
		if p != nil && p.Value != nil && (dir == input && p.Value.ReadOnly || dir == output && p.Value.WriteOnly) {
			out = append(out, name)
		}
	}
	for _, p := range s.AllOf {
		if p != nil && p.Value != nil {
			out = append(out, goneOf(p.Value, dir, depth+1)...)
		}
	}
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// goes reports whether a property whose schema is s belongs in a schema of
// direction dir: not when it is readOnly and dir is input, nor writeOnly
// and dir is output, written in s or in the component s is a $ref to.
func (c *converter) goes(s any, dir direction) bool {
	kw := "writeOnly"
	if dir == input {
		kw = "readOnly"
	}
	for range 8 { // a chain of aliases is followed a few links, not forever
		m, ok := s.(map[string]any)
		if !ok || m[kw] == true {
			return !ok
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return true
		}
		name, err := componentName(ref)
		if err != nil {
			return true
		}
		if strings.HasPrefix(name, "/") {
			if s, err = c.lookup(name); err != nil {
				return true
			}
			continue
		}
		var cs *openapi3.SchemaRef
		if c.doc.Components != nil {
			cs = c.doc.Components.Schemas[name]
		}
		if cs == nil || cs.Value == nil {
			return true
		}
		if dir == input && cs.Value.ReadOnly || dir == output && cs.Value.WriteOnly {
			return false
		}
		if cs.Ref == "" {
			return true
		}
		s = map[string]any{"$ref": cs.Ref}
	}
	return true
}

// normalize rewrites, in place, the keywords whose meaning differs in
// JSON Schema 2020-12, and returns the schema: nullable (OpenAPI 3.0's)
// adds "null" to the type, or to the enum, or, for a schema with neither,
// allows null besides what it says, as the document's authors meant;
// boolean exclusiveMinimum and exclusiveMaximum (3.0's, and found in 3.1
// documents) become the number form; a type that names no JSON type
// ("file", of documents converted from Swagger 2.0) is a string or is
// dropped.
func normalize(s map[string]any) map[string]any {
	for _, b := range [...][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		ex, ok := s[b[0]].(bool)
		if !ok {
			continue
		}
		delete(s, b[0])
		if lim, ok := s[b[1]]; ok && ex {
			s[b[0]] = lim
			delete(s, b[1])
		}
	}
	switch t := s["type"].(type) {
	case string:
		if t == "file" {
			s["type"] = "string"
		} else if !slices.Contains(jsonTypes, any(t)) {
			delete(s, "type")
		}
	case []any:
		kept := slices.DeleteFunc(slices.Clone(t), func(e any) bool { return !slices.Contains(jsonTypes, e) })
		if len(kept) == 0 {
			delete(s, "type")
		} else {
			s["type"] = kept
		}
	case nil:
	default:
		delete(s, "type")
	}
	n, ok := s["nullable"].(bool)
	delete(s, "nullable")
	if !ok || !n {
		return s
	}
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(t, "null")
		}
	}
	if e, ok := s["enum"].([]any); ok {
		if !slices.Contains(e, nil) {
			s["enum"] = append(slices.Clip(e), nil)
		}
		return s
	}
	if _, typed := s["type"]; typed {
		return s
	}
	// No type: null or what the schema says, its annotations kept outside.
	inner := make(map[string]any, len(s))
	for k, v := range s {
		if !annotationKeywords[k] {
			inner[k] = v
			delete(s, k)
		}
	}
	if len(inner) > 0 {
		s["anyOf"] = []any{map[string]any{"type": "null"}, inner}
	}
	return s
}

// annotationKeywords stay on a nullable schema that normalize wraps.
var annotationKeywords = map[string]bool{
	"title": true, "description": true, "default": true, "deprecated": true, "readOnly": true,
	"writeOnly": true, "examples": true, "$comment": true,
}

// componentName returns the name in $defs of what a $ref inside the
// document refers to: a component schema's name or, for another place of
// the document, its JSON Pointer ("/components/schemas/X/properties/y",
// which no component's name starts with). A $ref to another document is
// an error.
func componentName(ref string) (string, error) {
	tail, ok := strings.CutPrefix(ref, componentPrefix)
	if !ok || tail == "" || strings.Contains(tail, "/") {
		ptr, local := strings.CutPrefix(ref, "#")
		if !local || !strings.HasPrefix(ptr, "/") {
			return "", fmt.Errorf("%w %q: only refs inside the document are followed", errUnsupportedRef, clip(ref, 80))
		}
		if u, err := url.PathUnescape(ptr); err == nil {
			ptr = u
		}
		return ptr, nil
	}
	tail = strings.ReplaceAll(strings.ReplaceAll(tail, "~1", "/"), "~0", "~")
	if u, err := url.PathUnescape(tail); err == nil {
		tail = u
	}
	return tail, nil
}

// lookup returns the JSON value at the pointer ptr in the document.
func (c *converter) lookup(ptr string) (any, error) {
	if c.raw == nil {
		data, err := json.Marshal(c.doc)
		if err == nil {
			err = json.Unmarshal(data, &c.raw)
		}
		if err != nil {
			return nil, err
		}
	}
	return c.lookupFrom(ptr, 0)
}

// lookupFrom is lookup, hops $refs deep: a $ref met on the way is
// followed, a few links at most.
func (c *converter) lookupFrom(ptr string, hops int) (any, error) {
	v := c.raw
	for tok := range strings.SplitSeq(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if m, ok := v.(map[string]any); ok && hops < 8 {
			if ref, ok := m["$ref"].(string); ok && m[tok] == nil {
				if target, local := strings.CutPrefix(ref, "#"); local && strings.HasPrefix(target, "/") {
					if u, err := url.PathUnescape(target); err == nil {
						target = u
					}
					var err error
					if v, err = c.lookupFrom(target, hops+1); err != nil {
						return nil, err
					}
				}
			}
		}
		switch cur := v.(type) {
		case map[string]any:
			v = cur[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur) {
				v = nil
			} else {
				v = cur[i]
			}
		default:
			v = nil
		}
		if v == nil {
			return nil, fmt.Errorf("%w: nothing at %q in the document", errUnsupportedRef, clip(ptr, 80))
		}
	}
	return v, nil
}

// escapePointer escapes name as a JSON Pointer token, and what a URI
// fragment cannot hold.
func escapePointer(name string) string {
	return (&url.URL{Fragment: pointerToken(name)}).EscapedFragment()
}

// pointerToken escapes s as a JSON Pointer token.
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// refPointer returns the JSON Pointer that the $ref ref of a parameter,
// request body or response points to in the document, or "" for a $ref
// to another document.
func refPointer(ref string) string {
	if name, err := componentName(ref); err == nil && strings.HasPrefix(name, "/") {
		return name
	}
	return ""
}

// isObjectSchema reports whether the converted schema s describes a JSON
// object and nothing else, as MCP wants of an output schema: "type" is
// "object", directly or through the component it refers to.
func (c *converter) isObjectSchema(s any) bool {
	for range 8 { // a chain of aliases is followed a few links, not forever
		m, ok := s.(map[string]any)
		if !ok {
			return false
		}
		if t, ok := m["type"]; ok {
			return t == "object"
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return false
		}
		name, err := componentName(strings.Replace(ref, "#/$defs/", componentPrefix, 1))
		if err != nil {
			return false
		}
		comp := c.component(name, output, false)
		if comp.err != nil {
			return false
		}
		s = nil
		if err := json.Unmarshal(comp.json, &s); err != nil {
			return false
		}
	}
	return false
}
