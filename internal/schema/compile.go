package schema

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
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Errors that [Compile]'s errors wrap. Every error of Compile is a
// [*SchemaError], which wraps ErrInvalidSchema and, for a remote $ref or a
// circular schema, ErrRemoteRef or ErrCircular.
var (
	ErrInvalidSchema = errors.New("schema: invalid schema")
	ErrRemoteRef     = errors.New("schema: remote $ref not fetched")
	ErrCircular      = errors.New("schema: schema applies itself to the same value without end")
)

// A Validator is a compiled schema. It is safe for concurrent use.
type Validator struct {
	root  *node
	empty []byte // the document that empty arguments stand for: {}
	// whole, when set, is the resolved schema that validates every
	// instance: the fast path does not apply to the schema at all.
	whole       *jsonschema.Resolved
	fallbacks   []string
	hasDefaults bool
	states      sync.Pool
}

// Compile resolves and compiles a JSON Schema. The schema is a
// *jsonschema.Schema, a json.RawMessage or []byte holding the schema's JSON,
// or any other value whose JSON encoding is a schema (such as a
// map[string]any). Compile does not modify the schema; the caller must not
// modify it afterwards either.
//
// References are resolved within the schema ($defs, $anchor, $id, JSON
// Pointers); a reference to any other document is never fetched and makes
// Compile fail with [ErrRemoteRef]. A schema that would apply itself to the
// same value forever ({"$ref": "#"} at its root, say) fails with
// [ErrCircular]; recursion through properties or items is fine.
//
// Compile also rejects what it could compile but not enforce as written,
// so that a tool's schema never says more than validation checks: a
// "type" that names no type ("strng"), a $ref to nothing, a pattern that
// is not a regular expression, and keywords of other drafts that are not
// enforced under 2020-12 (the array form of items, additionalItems and
// dependencies, unless $schema is draft-07; $recursiveRef), and an unknown
// keyword that is a near miss of a known one ("propertees"). Other unknown
// keywords and format are annotations, and are ignored.
//
// Every error is a [*SchemaError] locating the fault in the schema.
func Compile(schema any) (*Validator, error) {
	s, err := load(schema)
	if err != nil {
		return nil, err
	}
	c := &compiler{
		root:   s,
		info:   map[*jsonschema.Schema]*schemaInfo{},
		byPath: map[string]*jsonschema.Schema{},
		byURI:  map[string]*jsonschema.Schema{},
		nodes:  map[*jsonschema.Schema]*node{},
	}
	c.walk(s, "", s)
	if err := c.check(); err != nil {
		return nil, err
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{Loader: noRemote})
	if err != nil {
		if e := c.refFault(); e != nil {
			return nil, e
		}
		return nil, &SchemaError{Msg: err.Error(), Err: err}
	}
	c.rs = rs
	if isDraft07(s) {
		c.wholeBecause("draft-07 ($schema)")
	}
	if c.dynamic {
		c.wholeBecause("$dynamicRef")
	}
	v := &Validator{root: c.node(s), empty: []byte("{}")}
	if c.err != nil {
		return nil, c.err
	}
	if err := c.checkCycles(); err != nil {
		return nil, err
	}
	c.prepareDefaults()
	for _, n := range c.nodes {
		n.direct = n.local && !n.inplace && !n.never && n.fallback == nil
	}
	if c.whole {
		v.whole = rs
	}
	v.fallbacks = c.fallbacks
	v.hasDefaults = v.root.defBelow
	return v, nil
}

// Fallbacks lists the places where validation does not take the fast path
// but decodes the value and calls jsonschema-go, each as "pointer: keywords"
// (the pointer locating the subschema within the schema; "" is the whole
// schema). The keywords that fall back are unevaluatedProperties and
// unevaluatedItems (for the subschema that has them), and $dynamicRef and a
// draft-07 $schema (for the whole schema). Coercion and defaults do not fall
// back: they read the schema as 2020-12, also for a draft-07 one.
func (v *Validator) Fallbacks() []string { return slices.Clone(v.fallbacks) }

// noRemote is the loader given to jsonschema-go: it refuses every remote
// schema, so that compiling never touches the network.
func noRemote(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("%w: %s", ErrRemoteRef, u)
}

// load returns the schema that schema describes.
func load(schema any) (*jsonschema.Schema, error) {
	var data []byte
	switch s := schema.(type) {
	case nil:
		return nil, &SchemaError{Msg: "no schema (nil)"}
	case *jsonschema.Schema:
		if s == nil {
			return nil, &SchemaError{Msg: "no schema (nil)"}
		}
		return s, nil
	case json.RawMessage:
		data = s
	case []byte:
		data = s
	default:
		var err error
		if data, err = json.Marshal(schema); err != nil {
			return nil, &SchemaError{Msg: err.Error(), Err: err}
		}
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(data, s); err != nil {
		return nil, &SchemaError{Msg: err.Error(), Err: err}
	}
	return s, nil
}

// schemaInfo is what the compiler knows of one schema of the tree.
type schemaInfo struct {
	path    string
	base    *jsonschema.Schema
	uri     *url.URL                      // for a base: its absolute URI
	anchors map[string]*jsonschema.Schema // for a base: its anchors
}

type compiler struct {
	root   *jsonschema.Schema
	rs     *jsonschema.Resolved
	info   map[*jsonschema.Schema]*schemaInfo
	byPath map[string]*jsonschema.Schema
	byURI  map[string]*jsonschema.Schema
	nodes  map[*jsonschema.Schema]*node

	null       string // the pointer of the first null subschema, if any
	dynamic    bool
	dynAnchors map[string][]*jsonschema.Schema
	whole      bool
	fallbacks  []string
	err        *SchemaError
}

func (c *compiler) wholeBecause(why string) {
	if !c.whole {
		c.fallbacks = append(c.fallbacks, ": "+why)
	} else {
		c.fallbacks[0] += ", " + why
	}
	c.whole = true
}

// walk records the path, base URI and anchors of s and its subschemas, the
// way jsonschema-go resolves them, so that $ref can be resolved to the same
// schemas (jsonschema-go does not export its resolution).
func (c *compiler) walk(s *jsonschema.Schema, path string, base *jsonschema.Schema) {
	info := &schemaInfo{path: path}
	c.info[s] = info
	c.byPath[path] = s
	if s == c.root {
		info.uri = &url.URL{}
		c.byURI[""] = s
	}
	if s.ID != "" {
		if id, err := url.Parse(s.ID); err == nil {
			info.uri = c.info[base].uri.ResolveReference(id)
			c.byURI[info.uri.String()] = s
			base = s
		}
	}
	info.base = base
	if s.DynamicAnchor != "" {
		if c.dynAnchors == nil {
			c.dynAnchors = map[string][]*jsonschema.Schema{}
		}
		c.dynAnchors[s.DynamicAnchor] = append(c.dynAnchors[s.DynamicAnchor], s)
	}
	for _, a := range []string{s.Anchor, s.DynamicAnchor} {
		if a != "" {
			bi := c.info[base]
			if bi.anchors == nil {
				bi.anchors = map[string]*jsonschema.Schema{}
			}
			bi.anchors[a] = s
		}
	}
	if s.DynamicRef != "" {
		c.dynamic = true
	}
	eachChild(s, func(seg string, child *jsonschema.Schema) {
		if child == nil {
			if c.null == "" {
				c.null = path + seg
			}
			return
		}
		c.walk(child, path+seg, base)
	})
}

// eachChild calls f with every subschema of s and its path segment, and
// with nil for a null in a list or a map of subschemas.
func eachChild(s *jsonschema.Schema, f func(seg string, child *jsonschema.Schema)) {
	one := func(name string, c *jsonschema.Schema) {
		if c != nil {
			f("/"+name, c)
		}
	}
	list := func(name string, cs []*jsonschema.Schema) {
		for i, c := range cs {
			f("/"+name+"/"+strconv.Itoa(i), c)
		}
	}
	dict := func(name string, m map[string]*jsonschema.Schema) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			f("/"+name+"/"+escapePointer(k), m[k])
		}
	}
	dict("$defs", s.Defs)
	dict("definitions", s.Definitions)
	dict("dependencies", s.DependencySchemas)
	list("prefixItems", s.PrefixItems)
	one("items", s.Items)
	list("items", s.ItemsArray)
	one("additionalItems", s.AdditionalItems)
	one("contains", s.Contains)
	one("unevaluatedItems", s.UnevaluatedItems)
	dict("properties", s.Properties)
	dict("patternProperties", s.PatternProperties)
	one("additionalProperties", s.AdditionalProperties)
	one("propertyNames", s.PropertyNames)
	one("unevaluatedProperties", s.UnevaluatedProperties)
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	one("not", s.Not)
	one("if", s.If)
	one("then", s.Then)
	one("else", s.Else)
	dict("dependentSchemas", s.DependentSchemas)
	one("contentSchema", s.ContentSchema)
}

// escapePointer escapes a JSON Pointer segment (RFC 6901).
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// resolveRef returns the schema that the $ref of s refers to.
func (c *compiler) resolveRef(s *jsonschema.Schema) *jsonschema.Schema {
	return c.resolve(s, s.Ref)
}

// dynamicTargets returns every schema that the $dynamicRef of s may refer
// to: its lexical target and every schema with the dynamic anchor it names.
// They are only used to find cycles: validation with $dynamicRef is left to
// jsonschema-go.
func (c *compiler) dynamicTargets(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	if t := c.resolve(s, s.DynamicRef); t != nil {
		out = append(out, t)
	}
	if u, err := url.Parse(s.DynamicRef); err == nil {
		out = append(out, c.dynAnchors[u.Fragment]...)
	}
	return out
}

// resolve returns the schema that the reference ref, in s, refers to.
func (c *compiler) resolve(s *jsonschema.Schema, ref string) *jsonschema.Schema {
	u0, err := url.Parse(ref)
	if err != nil {
		return nil
	}
	u := *c.info[c.info[s].base].uri.ResolveReference(u0)
	frag := u.Fragment
	u.Fragment, u.RawFragment = "", ""
	target := c.byURI[u.String()]
	if target == nil {
		return nil
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return c.info[target].anchors[frag]
	}
	return c.byPath[c.info[target].path+frag]
}

// node returns the node of s, compiling it on first use.
func (c *compiler) node(s *jsonschema.Schema) *node {
	if n, ok := c.nodes[s]; ok {
		return n
	}
	n := &node{path: c.info[s].path}
	c.nodes[s] = n
	c.fill(n, s)
	return n
}

func (c *compiler) nodeList(ss []*jsonschema.Schema) []*node {
	if len(ss) == 0 {
		return nil
	}
	ns := make([]*node, len(ss))
	for i, s := range ss {
		ns[i] = c.node(s)
	}
	return ns
}

// fail records the first fault found while compiling: at the keyword kw
// of s ("" for s itself), for the reason err.
func (c *compiler) fail(s *jsonschema.Schema, kw string, err error) {
	if c.err == nil {
		p := c.info[s].path
		if kw != "" {
			p += "/" + kw
		}
		c.err = &SchemaError{Pointer: p, Msg: err.Error(), Err: err}
	}
}

// fill compiles the keywords of s into n. It reads no flag of another node:
// through $ref, that node may still be being filled.
func (c *compiler) fill(n *node, s *jsonschema.Schema) {
	n.secret = s.WriteOnly || s.Format == "password"
	if s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil {
		var kw []string
		if s.UnevaluatedProperties != nil {
			kw = append(kw, "unevaluatedProperties")
		}
		if s.UnevaluatedItems != nil {
			kw = append(kw, "unevaluatedItems")
		}
		c.fallbacks = append(c.fallbacks, n.path+": "+strings.Join(kw, ", "))
		n.fallback = c.subResolved(s)
	}

	// In-place applicators.
	if s.Ref != "" {
		if t := c.resolveRef(s); t != nil {
			n.ref = c.node(t)
		} else {
			// jsonschema-go resolved what this package cannot: let it
			// validate everything rather than guess.
			c.wholeBecause("$ref " + s.Ref)
		}
	}
	// Schemas the fast path leaves to jsonschema-go are compiled too, only
	// so that checkCycles sees them.
	if s.DynamicRef != "" {
		n.cycleEdges = c.nodeList(c.dynamicTargets(s))
	}
	for _, k := range slices.Sorted(maps.Keys(s.DependencySchemas)) {
		n.cycleEdges = append(n.cycleEdges, c.node(s.DependencySchemas[k])) // draft-07, in place
	}
	for _, sub := range append([]*jsonschema.Schema{s.UnevaluatedProperties, s.UnevaluatedItems, s.AdditionalItems}, s.ItemsArray...) {
		if sub != nil {
			c.node(sub)
		}
	}
	n.allOf = c.nodeList(s.AllOf)
	n.anyOf = c.nodeList(s.AnyOf)
	n.oneOf = c.nodeList(s.OneOf)
	if s.AnyOf != nil && len(s.AnyOf) == 0 || s.OneOf != nil && len(s.OneOf) == 0 {
		n.never = true // jsonschema-go: no alternative can match
	}
	if s.Not != nil {
		if isEmpty(s.Not) {
			n.never = true
		} else {
			n.not = c.node(s.Not)
		}
	}
	if s.If != nil {
		n.ifN = c.node(s.If)
		if s.Then != nil {
			n.thenN = c.node(s.Then)
		}
		if s.Else != nil {
			n.elseN = c.node(s.Else)
		}
	}
	n.inplace = n.ref != nil || n.allOf != nil || n.anyOf != nil || n.oneOf != nil || n.not != nil || n.ifN != nil

	// Any type.
	if s.Type != "" || s.Types != nil {
		n.hasType = true
		var names []string
		for _, t := range append([]string{s.Type}, s.Types...) {
			if t == "" {
				continue
			}
			n.types |= typeBit(t) // check rejected the unknown ones
			names = append(names, t)
		}
		n.typeText = strings.Join(names, " or ")
		if len(names) == 0 {
			n.typeText = "no type"
		}
	}
	if s.Enum != nil {
		n.hasEnum = true
		texts := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			n.enum = append(n.enum, toConst(e))
			texts[i] = jsonText(e)
		}
		n.enumText = clipTo(strings.Join(texts, ", "), maxLong)
	}
	if s.Const != nil {
		k := toConst(*s.Const)
		n.konst = &k
		n.konstTxt = clipTo(jsonText(*s.Const), maxLong)
	}

	// Numbers.
	setF := func(p *float64, has *bool, v *float64, text *string) {
		if p != nil {
			*has, *v, *text = true, *p, strconv.FormatFloat(*p, 'g', -1, 64)
			n.numChecks = true
		}
	}
	setF(s.Minimum, &n.hasMin, &n.min, &n.minText)
	setF(s.Maximum, &n.hasMax, &n.max, &n.maxText)
	setF(s.ExclusiveMinimum, &n.hasExMin, &n.exMin, &n.exMinText)
	setF(s.ExclusiveMaximum, &n.hasExMax, &n.exMax, &n.exMaxText)
	setF(s.MultipleOf, &n.hasMultipleOf, &n.multipleOf, &n.multipleOfText)
	if n.hasMultipleOf {
		n.mulDec, n.mulFits = parseDecimal([]byte(n.multipleOfText))
	}

	// Strings.
	setI := func(p *int, has *bool, v *int, checks *bool) {
		if p != nil {
			*has, *v, *checks = true, *p, true
		}
	}
	setI(s.MinLength, &n.hasMinLen, &n.minLen, &n.strChecks)
	setI(s.MaxLength, &n.hasMaxLen, &n.maxLen, &n.strChecks)
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			c.fail(s, "pattern", err) // check has rejected it already
			return
		}
		n.pattern, n.patternText = re, clipTo(s.Pattern, maxLong)
		n.strChecks = true
	}

	// Arrays. jsonschema-go ignores the draft-07 array form of items and
	// additionalItems under 2020-12, and so does this package.
	n.prefix = c.nodeList(s.PrefixItems)
	if s.Items != nil && !isEmpty(s.Items) {
		n.items = c.node(s.Items)
	}
	setI(s.MinItems, &n.hasMinItems, &n.minItems, &n.arrChecks)
	setI(s.MaxItems, &n.hasMaxItems, &n.maxItems, &n.arrChecks)
	n.unique = s.UniqueItems
	if s.Contains != nil {
		n.contains = c.node(s.Contains)
		setI(s.MinContains, &n.hasMinContains, &n.minContains, &n.arrChecks)
		setI(s.MaxContains, &n.hasMaxContains, &n.maxContains, &n.arrChecks)
	}
	n.arrChecks = n.arrChecks || n.prefix != nil || n.items != nil || n.unique || n.contains != nil

	// Objects.
	c.fillObject(n, s)

	n.local = n.hasType || n.hasEnum || n.konst != nil || n.numChecks || n.strChecks || n.arrChecks || n.objChecks
}

func (c *compiler) fillObject(n *node, s *jsonschema.Schema) {
	names := map[string]bool{}
	for k := range s.Properties {
		names[k] = true
	}
	for _, r := range s.Required {
		names[r] = true
	}
	for k, rs := range s.DependentRequired {
		names[k] = true
		for _, r := range rs {
			names[r] = true
		}
	}
	for k := range s.DependentSchemas {
		names[k] = true
	}
	n.names = slices.Sorted(maps.Keys(names))
	index := make(map[string]int, len(n.names))
	for i, name := range n.names {
		index[name] = i
	}
	if len(n.names) > linearNames {
		n.nameIdx = index
	}
	if len(s.Properties) > 0 {
		n.props = make([]*node, len(n.names))
		for k, ps := range s.Properties {
			n.props[index[k]] = c.node(ps)
		}
	}
	seen := map[string]bool{}
	for _, r := range s.Required {
		if !seen[r] {
			seen[r] = true
			n.required = append(n.required, index[r])
		}
	}
	for _, src := range slices.Sorted(maps.Keys(s.PatternProperties)) {
		re, err := regexp.Compile(src)
		if err != nil {
			c.fail(s, "patternProperties/"+escapePointer(src), err) // as for pattern
			return
		}
		n.patterns = append(n.patterns, patternProp{src: src, re: re, n: c.node(s.PatternProperties[src])})
	}
	switch ap := s.AdditionalProperties; {
	case ap == nil || isEmpty(ap):
	case isFalse(ap):
		n.additionalFalse = true
	default:
		n.additional = c.node(ap)
	}
	if s.PropertyNames != nil && !isEmpty(s.PropertyNames) {
		n.propertyNames = c.node(s.PropertyNames)
	}
	if s.MinProperties != nil {
		n.hasMinProps, n.minProps = true, *s.MinProperties
	}
	if s.MaxProperties != nil {
		n.hasMaxProps, n.maxProps = true, *s.MaxProperties
	}
	for _, k := range slices.Sorted(maps.Keys(s.DependentRequired)) {
		d := depRequired{trigger: index[k]}
		for _, r := range s.DependentRequired[k] {
			d.required = append(d.required, index[r])
		}
		n.depRequired = append(n.depRequired, d)
	}
	for _, k := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
		n.depSchemas = append(n.depSchemas, depSchema{trigger: index[k], n: c.node(s.DependentSchemas[k])})
	}
	n.objChecks = len(n.names) > 0 || n.patterns != nil || n.additional != nil || n.additionalFalse ||
		n.propertyNames != nil || n.hasMinProps || n.hasMaxProps
	if len(s.Properties) > 0 {
		c.fillInserts(n, s)
	}
}

func typeBit(t string) typeSet {
	switch t {
	case "null":
		return 1 << kNull
	case "boolean":
		return 1 << kBool
	case "object":
		return 1 << kObject
	case "array":
		return 1 << kArray
	case "number":
		return 1 << kNumber
	case "string":
		return 1 << kString
	case "integer":
		return tInteger
	}
	return 0 // jsonschema-go lets an unknown type match nothing
}

// toConst converts a value of enum or const.
func toConst(v any) constVal {
	const exact = 1 << 53 // integers up to this are exact in a float64
	switch x := v.(type) {
	case nil:
		return constVal{kind: kNull}
	case bool:
		return constVal{kind: kBool, b: x}
	case string:
		return constVal{kind: kString, s: x}
	case float64:
		return constVal{kind: kNumber, f: x}
	case float32:
		return constVal{kind: kNumber, f: float64(x)}
	case int:
		if -exact <= x && x <= exact {
			return constVal{kind: kNumber, f: float64(x)}
		}
	case int64:
		if -exact <= x && x <= exact {
			return constVal{kind: kNumber, f: float64(x)}
		}
	}
	return constVal{generic: true, v: v}
}

// jsonText returns v as JSON, for messages.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// subResolved returns a resolved schema that validates like s within the
// root: a copy of the root, given an absolute $id if it has none, wrapped in
// a schema that refers to s by JSON Pointer. References inside s then
// resolve as they do in the root.
func (c *compiler) subResolved(s *jsonschema.Schema) *jsonschema.Resolved {
	if s == c.root {
		return c.rs
	}
	root := c.root.CloneSchemas()
	if root.ID == "" {
		root.ID = "https://mcpkit.invalid/root.json"
	}
	u, err := url.Parse(root.ID)
	if err != nil {
		c.fail(c.root, "$id", err)
		return nil
	}
	u.Fragment = c.info[s].path
	wrapper := &jsonschema.Schema{
		Schema: c.root.Schema,
		Ref:    u.String(),
		Defs:   map[string]*jsonschema.Schema{"root": root},
	}
	rs, err := wrapper.Resolve(&jsonschema.ResolveOptions{Loader: noRemote})
	if err != nil {
		c.fail(s, "", err)
	}
	return rs
}

// checkCycles reports a schema that applies itself, through in-place
// keywords only, to the value it is validating: validating would never end
// (jsonschema-go overflows its stack on it).
func (c *compiler) checkCycles() *SchemaError {
	const (
		white = iota
		grey
		black
	)
	color := map[*node]int{}
	var visit func(n *node) *node
	visit = func(n *node) *node {
		switch color[n] {
		case grey:
			return n
		case black:
			return nil
		}
		color[n] = grey
		for _, m := range inplaceEdges(n) {
			if bad := visit(m); bad != nil {
				return bad
			}
		}
		color[n] = black
		return nil
	}
	for _, s := range slices.SortedFunc(maps.Keys(c.nodes), func(a, b *jsonschema.Schema) int {
		return strings.Compare(c.info[a].path, c.info[b].path)
	}) {
		if bad := visit(c.nodes[s]); bad != nil {
			return &SchemaError{Pointer: bad.path, Msg: "the schema applies itself to the same value without end", Err: ErrCircular}
		}
	}
	return nil
}

// inplaceEdges returns the nodes that n applies to the same value.
func inplaceEdges(n *node) []*node {
	var out []*node
	if n.ref != nil {
		out = append(out, n.ref)
	}
	out = append(out, n.allOf...)
	out = append(out, n.anyOf...)
	out = append(out, n.oneOf...)
	for _, m := range []*node{n.not, n.ifN, n.thenN, n.elseN} {
		if m != nil {
			out = append(out, m)
		}
	}
	for _, d := range n.depSchemas {
		out = append(out, d.n)
	}
	return append(out, n.cycleEdges...)
}

// isEmpty reports whether s has no keyword that jsonschema-go validates
// with, so that it accepts every value.
func isEmpty(s *jsonschema.Schema) bool {
	return s.Ref == "" && s.DynamicRef == "" && s.Type == "" && s.Types == nil && s.Enum == nil &&
		s.Const == nil && s.MultipleOf == nil && s.Minimum == nil && s.Maximum == nil &&
		s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil && s.MinLength == nil &&
		s.MaxLength == nil && s.Pattern == "" && s.PrefixItems == nil && s.Items == nil &&
		s.ItemsArray == nil && s.AdditionalItems == nil && s.MinItems == nil && s.MaxItems == nil &&
		!s.UniqueItems && s.Contains == nil && s.MinContains == nil && s.MaxContains == nil &&
		s.UnevaluatedItems == nil && s.MinProperties == nil && s.MaxProperties == nil &&
		s.Required == nil && s.DependentRequired == nil && s.Properties == nil &&
		s.PatternProperties == nil && s.AdditionalProperties == nil && s.PropertyNames == nil &&
		s.UnevaluatedProperties == nil && s.AllOf == nil && s.AnyOf == nil && s.OneOf == nil &&
		s.Not == nil && s.If == nil && s.Then == nil && s.Else == nil && s.DependentSchemas == nil &&
		s.DependencySchemas == nil && s.DependencyStrings == nil
}

// isFalse reports whether s is the false schema, {"not": {}}.
func isFalse(s *jsonschema.Schema) bool {
	if s.Not == nil || !isEmpty(s.Not) {
		return false
	}
	t := *s
	t.Not = nil
	return isEmpty(&t)
}
