package deref

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// A builder writes the output document for a plan.
type builder struct {
	d   *document
	p   *plan
	ids map[string]bool // resources written so far, by URI
}

// schema returns the output for the schema n, written in the output inside
// the resource outer. inlined is set for copies written away from where the
// input has them; those lose their anchors, which no output $ref uses and
// which must not repeat.
func (b *builder) schema(n *node, outer *resource, inlined bool) (*node, error) {
	if n.named {
		if v := b.p.byNode[n]; v != nil && v.kept && v != b.p.root {
			ref, err := b.refTo(v, outer, n)
			if err != nil {
				return nil, err
			}
			return newObject2("$ref", newString(ref)), nil
		}
	}
	return b.write(n, outer, inlined)
}

// write is schema without the check for a kept schema: it writes n's own
// keywords.
func (b *builder) write(n *node, outer *resource, inlined bool) (*node, error) {
	if n.kind != kindObject {
		return n, nil
	}
	inner := outer
	if n.id != nil {
		if outer != n.outer {
			abs := outer.uri.ResolveReference(n.id)
			abs.Fragment, abs.RawFragment = "", ""
			if abs.String() != n.inner.key {
				return nil, fmt.Errorf("%w: moving the schema at %q would change its %s %q from %s to %s",
					ErrUnsupported, "#"+n.pointer(), b.d.idKeyword, n.id, n.inner.key, abs)
			}
		}
		if b.ids[n.inner.key] {
			return nil, fmt.Errorf("%w: the schema at %q (%s %q) would be written twice",
				ErrUnsupported, "#"+n.pointer(), b.d.idKeyword, n.id)
		}
		b.ids[n.inner.key] = true
		inner = n.inner
	}

	out := newObject()
	refAt := -1
	for i, k := range n.keys {
		c := n.vals[i]
		switch {
		case b.d.skip(n, k):
			continue
		case k == "$ref" && n.site != nil:
			refAt = len(out.keys)
			continue
		case inlined && (k == "$anchor" || k == "$dynamicAnchor" || b.d.legacy && k == b.d.idKeyword && strings.HasPrefix(c.lit, "#")):
			continue
		}
		v, err := b.member(k, c, inner, inlined)
		if err != nil {
			return nil, err
		}
		out.add(k, v)
	}
	if refAt < 0 {
		return out, nil
	}

	s := n.site
	if s.target == nil {
		if inner != n.inner {
			was, now := n.inner.uri.ResolveReference(s.uri), inner.uri.ResolveReference(s.uri)
			if was.String() != now.String() {
				return nil, b.d.refError(s, fmt.Errorf("%w: moving it would make it name %s instead of %s",
					ErrUnsupported, now, was))
			}
		}
		out.insert(refAt, "$ref", s.ref)
		return out, nil
	}
	tv := b.p.byNode[s.target]
	if tv.kept && !(n == b.d.root && tv != b.p.root) {
		ref, err := b.refTo(tv, inner, n)
		if err != nil {
			return nil, b.d.refError(s, err)
		}
		out.insert(refAt, "$ref", newString(ref))
		return out, nil
	}
	t, err := b.write(s.target, inner, true)
	if err != nil {
		return nil, err
	}
	return combine(out, refAt, t, b.d), nil
}

// member returns the output for the value c of keyword k in a schema.
func (b *builder) member(k string, c *node, inner *resource, inlined bool) (*node, error) {
	c2 := classify(k)
	switch {
	case c2 == schemaValue || c2 == itemsValue && c.kind != kindArray:
		return b.schema(c, inner, inlined)
	case c2 == schemaArray && c.kind == kindArray || c2 == itemsValue:
		arr := newArray(make([]*node, len(c.vals))...)
		for i, e := range c.vals {
			v, err := b.schema(e, inner, inlined)
			if err != nil {
				return nil, err
			}
			arr.vals[i] = v
		}
		return arr, nil
	case (c2 == schemaMap || c2 == dependencies) && c.kind == kindObject:
		// The keys are shared with the input; the full slice expression makes
		// any append copy them.
		obj := &node{kind: kindObject, keys: c.keys[:len(c.keys):len(c.keys)], vals: make([]*node, len(c.vals))}
		for i, e := range c.vals {
			if c2 == dependencies && e.kind != kindObject && e.kind != kindBool {
				obj.vals[i] = e
				continue
			}
			v, err := b.schema(e, inner, inlined)
			if err != nil {
				return nil, err
			}
			obj.vals[i] = v
		}
		return obj, nil
	}
	return c, nil
}

// refTo returns the $ref, written in the output inside the resource inner
// at the place of the input's schema at, that names the kept schema v.
func (b *builder) refTo(v *vertex, inner *resource, at *node) (string, error) {
	frag := v.fragment(b.p.root)
	switch {
	case inner == b.d.rootRes:
		return frag, nil
	case b.d.rootRes.uri.IsAbs():
		return b.d.rootRes.key + frag, nil
	}
	return "", fmt.Errorf("%w: the kept schema %q cannot be named at %q, inside %s, as the root has no absolute %s",
		ErrUnsupported, "#"+v.n.pointer(), "#"+at.pointer(), inner.key, b.d.idKeyword)
}

// combine returns the schema that means what the object out (the output of
// a schema without its $ref) together with its $ref, which would be at
// position refAt and named the schema t, means.
//
// With no other keywords, that is t. Otherwise t's keywords are merged into
// out where that cannot change what either side means; where it could, the
// $ref becomes "allOf": [t] in place (appended to an allOf already there),
// which applies t to the same instance and, like the $ref, passes t's
// annotations to out's unevaluatedProperties and unevaluatedItems.
func combine(out *node, refAt int, t *node, d *document) *node {
	if len(out.keys) == 0 {
		return t
	}
	if t.kind == kindBool && t.b {
		return out
	}
	if t.kind == kindObject && mergeable(out, t, d) {
		m := &node{kind: kindObject}
		m.keys = append(m.keys, out.keys[:refAt]...)
		m.vals = append(m.vals, out.vals[:refAt]...)
		for i, k := range t.keys {
			if out.index(k) < 0 {
				m.add(k, t.vals[i])
			}
		}
		m.keys = append(m.keys, out.keys[refAt:]...)
		m.vals = append(m.vals, out.vals[refAt:]...)
		return m
	}
	if i := out.index("allOf"); i >= 0 {
		if a := out.vals[i]; a.kind == kindArray {
			out.vals[i] = newArray(append(a.vals[:len(a.vals):len(a.vals)], t)...)
			return out
		}
		return newObject2("allOf", newArray(out, t))
	}
	out.insert(refAt, "allOf", newArray(t))
	return out
}

func newObject2(key string, v *node) *node {
	o := newObject()
	o.add(key, v)
	return o
}

// mergeable reports whether writing the keywords of the schema t into the
// object s (the siblings of the $ref that named t) means the same as
// applying both. Shared keywords must be equal, except annotations, where
// s (the outer schema, which the author wrote beside the $ref) wins.
// Keywords whose meaning depends on their neighbours must not gain
// neighbours from the other side: additionalProperties (properties,
// patternProperties), items (prefixItems), additionalItems (items),
// min/maxContains (contains), then/else (if). t must not have
// unevaluatedProperties or unevaluatedItems, which would start seeing s's
// keywords, nor an identifier or $schema that would cover s.
func mergeable(s, t *node, d *document) bool {
	for i, k := range t.keys {
		switch k {
		case "unevaluatedProperties", "unevaluatedItems", d.idKeyword:
			return false
		case "$schema":
			if v := s.get(k); v == nil || !equal(v, t.vals[i]) {
				return false
			}
		}
		if v := s.get(k); v != nil && !annotation(k) && !equal(v, t.vals[i]) {
			return false
		}
	}
	return !dependsAcross(s, t) && !dependsAcross(t, s)
}

// dependsAcross reports whether a keyword of x would see, once merged, a
// neighbour that only y has.
func dependsAcross(x, y *node) bool {
	for _, k := range x.keys {
		d1, d2 := neighbours(k)
		for _, dep := range [2]string{d1, d2} {
			if dep != "" && y.index(dep) >= 0 && x.index(dep) < 0 {
				return true
			}
		}
	}
	return false
}

// neighbours returns the keywords whose presence in the same schema
// changes what keyword k does.
func neighbours(k string) (string, string) {
	switch k {
	case "additionalProperties":
		return "properties", "patternProperties"
	case "items":
		return "prefixItems", ""
	case "additionalItems":
		return "items", ""
	case "minContains", "maxContains":
		return "contains", ""
	case "then", "else":
		return "if", ""
	case "contentSchema":
		return "contentMediaType", ""
	}
	return "", ""
}

// build writes the output document.
func (b *builder) build() (*node, error) {
	root, err := b.write(b.d.root, b.d.rootRes, false)
	if err != nil {
		return nil, err
	}
	var defs []*node   // containers, in order
	var names []string // their keys
	container := func(name string) *node {
		for i, n := range names {
			if n == name {
				return defs[i]
			}
		}
		names = append(names, name)
		defs = append(defs, newObject())
		return defs[len(defs)-1]
	}
	kept := make([]*vertex, 0, len(b.p.vertices))
	for _, v := range b.p.vertices {
		if v.kept && v.used && v != b.p.root {
			kept = append(kept, v)
		}
	}
	if b.d.root.kind == kindObject {
		// The input's definition containers keep their order.
		for _, k := range b.d.root.keys {
			if classify(k) == definitions && slices.ContainsFunc(kept, func(v *vertex) bool { return v.container == k }) {
				container(k)
			}
		}
	}
	// Definitions that stay where they were keep the input's order; new
	// ones follow, in the order they were found.
	slices.SortStableFunc(kept, func(x, y *vertex) int {
		switch {
		case x.preserved != y.preserved:
			if x.preserved {
				return -1
			}
			return 1
		case x.preserved:
			return cmp.Compare(x.n.parent.index(x.name), y.n.parent.index(y.name))
		}
		return cmp.Compare(x.order, y.order)
	})
	for _, v := range kept {
		body, err := b.write(v.n, b.d.rootRes, !v.preserved)
		if err != nil {
			return nil, err
		}
		container(v.container).add(v.name, body)
	}
	if len(defs) == 0 {
		return root, nil
	}
	if root.kind != kindObject {
		root = newObject2("allOf", newArray(root))
	}
	for i, name := range names {
		root.add(name, defs[i])
	}
	return root, nil
}
