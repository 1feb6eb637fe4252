package openapi

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// fix adjusts the parsed document, which [Load] owns, where its schemas
// taken as written would refuse calls the API accepts: a default that its
// own schema refuses is dropped (the server fills in defaults before it
// validates), and the branches of a oneOf or anyOf that a discriminator
// tells apart are told apart by the discriminator's value.
func fix(doc *openapi3.T) {
	schemas := allSchemas(doc)
	for _, s := range schemas {
		if s.Default != nil && (nesting(s.Default, 0) > maxDefaultDepth || !fits(s, s.Default)) {
			s.Default = nil
		}
	}
	// The server also builds a missing object that holds defaults: when
	// what it would build is invalid (a required property has none), the
	// defaults below it go.
	for _, s := range schemas {
		if s.Default == nil {
			if built, ok := build(s, 0); ok && !fits(s, built) {
				dropDefaults(s, 0)
			}
		}
	}
	// The server fills in the defaults of every schema an allOf brings
	// together: a default that a sibling's property refuses (a base's
	// kind "car" in a truck that allows "truck" only) goes.
	for _, s := range schemas {
		if len(s.AllOf) > 0 {
			dropClashing(s)
		}
	}
	for _, s := range schemas {
		discriminate(s)
	}
}

// dropClashing removes the defaults of the properties of s and of the
// schemas its allOf brings together, at any depth, that the same
// property of another of them refuses.
func dropClashing(s *openapi3.Schema) {
	var parts []*openapi3.Schema
	var gather func(s *openapi3.Schema, depth int)
	gather = func(s *openapi3.Schema, depth int) {
		if depth > 8 || slices.Contains(parts, s) {
			return
		}
		parts = append(parts, s)
		for _, p := range s.AllOf {
			if p != nil && p.Value != nil {
				gather(p.Value, depth+1)
			}
		}
	}
	gather(s, 0)
	for _, p := range parts {
		for name, ps := range p.Properties {
			if ps == nil || ps.Value == nil || ps.Value.Default == nil {
				continue
			}
			for _, q := range parts {
				if qs := q.Properties[name]; q != p && qs != nil && qs.Value != nil && qs.Value != ps.Value && !fits(qs.Value, ps.Value.Default) {
					ps.Value.Default = nil
					break
				}
			}
		}
	}
}

// build returns the object the server builds for a missing value of s
// from the defaults of its properties, and whether there are any.
func build(s *openapi3.Schema, depth int) (map[string]any, bool) {
	if depth > maxDefaultDepth || len(s.Properties) == 0 {
		return nil, false
	}
	obj := make(map[string]any)
	for name, p := range s.Properties {
		if p == nil || p.Value == nil {
			continue
		}
		if p.Value.Default != nil {
			obj[name] = p.Value.Default
		} else if sub, ok := build(p.Value, depth+1); ok {
			obj[name] = sub
		}
	}
	return obj, len(obj) > 0
}

// dropDefaults removes the defaults of the properties of s, at any depth.
func dropDefaults(s *openapi3.Schema, depth int) {
	if depth > maxDefaultDepth {
		return
	}
	for _, p := range s.Properties {
		if p != nil && p.Value != nil {
			p.Value.Default = nil
			dropDefaults(p.Value, depth+1)
		}
	}
}

// maxDefaultDepth bounds the nesting of a default that is checked against
// its schema: the parser's validator tries every branch of a oneOf or
// anyOf at every level, so the check of a deeper default can take time
// exponential in its depth. A deeper default is dropped, unchecked.
const maxDefaultDepth = 4

// nesting returns how deeply arrays and objects nest in v, counting from
// depth and stopping past maxDefaultDepth.
func nesting(v any, depth int) int {
	if depth > maxDefaultDepth {
		return depth
	}
	deepest := depth
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			deepest = max(deepest, nesting(e, depth+1))
		}
	case map[string]any:
		for _, e := range v {
			deepest = max(deepest, nesting(e, depth+1))
		}
	}
	return deepest
}

// fits reports whether v is valid against s, as the parser's own
// validator judges it; a schema it cannot judge counts as valid.
func fits(s *openapi3.Schema, v any) (ok bool) {
	if str, isString := v.(string); isString && s.Pattern != "" {
		// The parser's patterns are off (Go cannot compile some of them),
		// and mcpkit's validator checks those it can.
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(str) {
			return false
		}
	}
	defer func() {
		if recover() != nil {
			ok = true
		}
	}()
	return s.VisitJSON(v, openapi3.DisablePatternValidation(), openapi3.FailFast()) == nil
}

// discriminate makes the discriminator of s, if it has one, part of its
// oneOf and anyOf: each branch that is a $ref becomes allOf [the branch,
// the discriminator property required with the values that select the
// branch]. The values are the mapping's keys that name the branch or,
// for a branch no key names, the name of its component, as OpenAPI says,
// unless the branch already constrains the property (an enum or a const
// of its own). A valid value then matches exactly one branch, where
// branches that differ only by the discriminator matched several, and the
// schema tells the model which value picks which branch. When every
// branch is told apart so, s also requires the property to be one of the
// values, for an error that names it.
func discriminate(s *openapi3.Schema) {
	d := s.Discriminator
	if d == nil || d.PropertyName == "" {
		return
	}
	// Branches and the mapping's values are matched by the names their
	// $refs resolve to ("#/components/schemas/a~1b" names "a/b").
	target := func(ref string) string {
		if name, err := componentName(ref); err == nil {
			return name
		}
		return ref
	}
	byRef := make(map[string][]any)
	for _, key := range slices.Sorted(maps.Keys(d.Mapping)) {
		ref := d.Mapping[key].Ref
		if ref != "" && !strings.Contains(ref, "/") {
			ref = componentPrefix + escapePointer(ref) // the mapping may name a component
		}
		byRef[target(ref)] = append(byRef[target(ref)], key)
	}
	for i, branches := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		if !slices.ContainsFunc(branches, func(b *openapi3.SchemaRef) bool {
			return b != nil && b.Value != nil && declares(b.Value, d.PropertyName, 0)
		}) {
			// No branch has the property (it is the parent's own, as in
			// Linode's PaymentMethod.data): it cannot tell the branches
			// apart, and the value chosen by it may match several, so a
			// oneOf is taken as an anyOf.
			if i == 0 && len(s.AnyOf) == 0 {
				s.AnyOf, s.OneOf = s.OneOf, nil
			}
			continue
		}
		var all []any
		for i, b := range branches {
			if b == nil || b.Ref == "" || b.Value == nil {
				all = nil
				break
			}
			values := byRef[target(b.Ref)]
			if len(values) == 0 {
				name := target(b.Ref)
				if !strings.HasPrefix(b.Ref, componentPrefix) || strings.HasPrefix(name, "/") || constrains(b.Value, d.PropertyName) {
					all = nil
					break
				}
				values = []any{name}
			}
			branches[i] = &openapi3.SchemaRef{Value: &openapi3.Schema{AllOf: openapi3.SchemaRefs{b, {Value: oneOfValues(d.PropertyName, values)}}}}
			all = append(all, values...)
		}
		if len(all) > 0 {
			s.AllOf = append(s.AllOf, &openapi3.SchemaRef{Value: oneOfValues(d.PropertyName, all)})
		}
	}
}

// oneOfValues is the schema of an object whose property name is one of
// values.
func oneOfValues(name string, values []any) *openapi3.Schema {
	return &openapi3.Schema{
		Required:   []string{name},
		Properties: openapi3.Schemas{name: &openapi3.SchemaRef{Value: &openapi3.Schema{Enum: values}}},
	}
}

// declares reports whether s, or a schema of its allOf, has the property
// name.
func declares(s *openapi3.Schema, name string, depth int) bool {
	if s.Properties[name] != nil {
		return true
	}
	if depth > 8 {
		return false
	}
	return slices.ContainsFunc(s.AllOf, func(p *openapi3.SchemaRef) bool {
		return p != nil && p.Value != nil && declares(p.Value, name, depth+1)
	})
}

// constrains reports whether s, or a schema of its allOf, gives the
// property name an enum or a const.
func constrains(s *openapi3.Schema, name string) bool {
	for _, part := range append(openapi3.SchemaRefs{{Value: s}}, s.AllOf...) {
		if part == nil || part.Value == nil {
			continue
		}
		if p := part.Value.Properties[name]; p != nil && p.Value != nil && (p.Value.Enum != nil || p.Value.Const != nil) {
			return true
		}
	}
	return false
}

// allSchemas returns every schema of the document once: those of its
// components, parameters, bodies, responses and headers, and those
// nested in them.
func allSchemas(doc *openapi3.T) []*openapi3.Schema {
	var out []*openapi3.Schema
	seen := make(map[*openapi3.Schema]bool)
	var stack []*openapi3.SchemaRef
	push := func(refs ...*openapi3.SchemaRef) {
		for _, r := range refs {
			if r != nil && r.Value != nil && !seen[r.Value] {
				seen[r.Value] = true
				stack = append(stack, r)
			}
		}
	}
	content := func(c openapi3.Content) {
		for _, mt := range c {
			if mt != nil {
				push(mt.Schema)
			}
		}
	}
	params := func(ps openapi3.Parameters) {
		for _, p := range ps {
			if p != nil && p.Value != nil {
				push(p.Value.Schema)
				content(p.Value.Content)
			}
		}
	}
	headers := func(hs openapi3.Headers) {
		for _, h := range hs {
			if h != nil && h.Value != nil {
				push(h.Value.Schema)
				content(h.Value.Content)
			}
		}
	}
	responses := func(rs map[string]*openapi3.ResponseRef) {
		for _, r := range rs {
			if r != nil && r.Value != nil {
				content(r.Value.Content)
				headers(r.Value.Headers)
			}
		}
	}
	if c := doc.Components; c != nil {
		for _, s := range c.Schemas {
			push(s)
		}
		for _, p := range c.Parameters {
			params(openapi3.Parameters{p})
		}
		for _, b := range c.RequestBodies {
			if b != nil && b.Value != nil {
				content(b.Value.Content)
			}
		}
		responses(c.Responses)
		headers(c.Headers)
	}
	if doc.Paths != nil {
		for _, item := range doc.Paths.Map() {
			if item == nil {
				continue
			}
			params(item.Parameters)
			for _, op := range item.Operations() {
				if op == nil {
					continue
				}
				params(op.Parameters)
				if op.RequestBody != nil && op.RequestBody.Value != nil {
					content(op.RequestBody.Value.Content)
				}
				if op.Responses != nil {
					responses(op.Responses.Map())
				}
			}
		}
	}
	for len(stack) > 0 {
		r := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s := r.Value
		out = append(out, s)
		push(s.OneOf...)
		push(s.AnyOf...)
		push(s.AllOf...)
		push(s.PrefixItems...)
		push(s.Not, s.Items, s.Contains, s.PropertyNames, s.If, s.Then, s.Else,
			s.AdditionalProperties.Schema, s.UnevaluatedItems.Schema, s.UnevaluatedProperties.Schema)
		for _, m := range []openapi3.Schemas{s.Properties, s.PatternProperties, s.DependentSchemas} {
			for _, p := range m {
				push(p)
			}
		}
	}
	return out
}
