package deref

import (
	"fmt"
	"net/url"
	"strings"
)

// class says what a keyword's value holds.
type class uint8

const (
	data         class = iota // not a schema: enum, const, default, unknown keywords, ...
	schemaValue               // a schema
	schemaArray               // an array of schemas
	schemaMap                 // an object whose values are schemas
	itemsValue                // a schema, or an array of schemas (before 2020-12)
	dependencies              // an object of schemas and arrays of names
	definitions               // $defs or definitions: schemas kept for references
)

func classify(keyword string) class {
	switch keyword {
	case "additionalProperties", "additionalItems", "contains", "propertyNames",
		"not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties",
		"contentSchema":
		return schemaValue
	case "allOf", "anyOf", "oneOf", "prefixItems":
		return schemaArray
	case "properties", "patternProperties", "dependentSchemas":
		return schemaMap
	case "items":
		return itemsValue
	case "dependencies":
		return dependencies
	case "$defs", "definitions":
		return definitions
	}
	return data
}

// subschemas calls f for each schema in v, the value of keyword in a schema
// object, and reports whether v holds schemas at all.
func subschemas(keyword string, v *node, f func(*node)) {
	switch c := classify(keyword); {
	case c == schemaValue || c == itemsValue && v.kind != kindArray:
		f(v)
	case c == schemaArray && v.kind == kindArray || c == itemsValue:
		for _, e := range v.vals {
			f(e)
		}
	case (c == schemaMap || c == definitions) && v.kind == kindObject:
		for _, e := range v.vals {
			f(e)
		}
	case c == dependencies && v.kind == kindObject:
		for _, e := range v.vals {
			if e.kind == kindObject || e.kind == kindBool {
				f(e)
			}
		}
	}
}

// annotation reports whether keyword only annotates: it never changes
// whether an instance validates.
func annotation(keyword string) bool {
	switch keyword {
	case "title", "description", "$comment", "default", "examples",
		"deprecated", "readOnly", "writeOnly":
		return true
	}
	return false
}

// A resource is a schema with a base URI: the document root, or a subschema
// with an $id.
type resource struct {
	uri     *url.URL // absolute when the document says so; never has a fragment
	key     string   // uri.String()
	node    *node
	anchors map[string]*node // a nil value marks an anchor defined twice
	dup     bool             // two subschemas have this $id
}

// A site is a $ref in a schema object.
type site struct {
	obj    *node    // the schema object holding the $ref
	ref    *node    // the $ref string
	uri    *url.URL // the $ref, parsed
	target *node    // the schema it names, or nil for a remote reference
}

// A document is an indexed schema.
type document struct {
	root      *node
	legacy    bool   // draft-07 or older: $ref ignores its siblings
	idKeyword string // "$id", or "id" before draft-06
	rootRes   *resource
	resources map[string]*resource
	sites     []*site
	local     int    // how many sites name a schema in the document
	dynamic   string // a dynamic-reference keyword in use, if any
}

// legacyDraft reports whether a $schema value names draft-07 or an earlier
// draft, where a $ref makes its sibling keywords ignored, and which keyword
// holds identifiers there.
func legacyDraft(schema string) (legacy bool, idKeyword string) {
	s := strings.TrimSuffix(schema, "#")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "http://"), "https://")
	switch s {
	case "json-schema.org/draft-07/schema", "json-schema.org/draft-06/schema":
		return true, "$id"
	case "json-schema.org/draft-04/schema", "json-schema.org/draft-03/schema":
		return true, "id"
	}
	return false, "$id"
}

// index finds the schemas, resources, anchors and references of the
// document whose root is root, and resolves the references.
func index(root *node) (*document, error) {
	d := &document{root: root, idKeyword: "$id", resources: map[string]*resource{}}
	base := &url.URL{}
	if root.kind == kindObject {
		if s := root.get("$schema"); s != nil && s.kind == kindString {
			d.legacy, d.idKeyword = legacyDraft(s.lit)
		}
		if id := d.ownID(root); id != "" {
			u, err := d.parseID(root, id)
			if err != nil {
				return nil, err
			}
			base = base.ResolveReference(u)
			base.Fragment, base.RawFragment = "", ""
		}
	}
	d.rootRes = &resource{uri: base, key: base.String(), node: root}
	d.resources[d.rootRes.key] = d.rootRes
	if err := d.walk(root, d.rootRes); err != nil {
		return nil, err
	}
	for _, s := range d.sites {
		if err := d.resolve(s); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// ownID returns the identifier that gives the schema object n a base URI, or
// "". Draft-07 and older ignore an $id beside a $ref, and use "#name"
// identifiers as anchors.
func (d *document) ownID(n *node) string {
	id := n.get(d.idKeyword)
	if id == nil || id.kind != kindString || id.lit == "" {
		return ""
	}
	if d.legacy {
		if strings.HasPrefix(id.lit, "#") {
			return ""
		}
		if r := n.get("$ref"); r != nil && r.kind == kindString && r.lit != "" {
			return ""
		}
	}
	return id.lit
}

func (d *document) parseID(n *node, id string) (*url.URL, error) {
	u, err := url.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q at %q: %v", ErrUnsupported, d.idKeyword, id, "#"+n.pointer(), err)
	}
	if u.Fragment != "" && !d.legacy {
		return nil, fmt.Errorf("%w: %s %q at %q has a fragment", ErrUnsupported, d.idKeyword, id, "#"+n.pointer())
	}
	return u, nil
}

// walk indexes the schema n, written in the resource outer.
func (d *document) walk(n *node, outer *resource) error {
	n.schema, n.outer, n.inner = true, outer, outer
	if n.kind != kindObject {
		return nil
	}
	if n != d.root {
		if id := d.ownID(n); id != "" {
			u, err := d.parseID(n, id)
			if err != nil {
				return err
			}
			abs := outer.uri.ResolveReference(u)
			abs.Fragment, abs.RawFragment = "", ""
			r := d.resources[abs.String()]
			if r != nil {
				r.dup = true
			} else {
				r = &resource{uri: abs, key: abs.String(), node: n}
				d.resources[r.key] = r
			}
			n.id, n.inner = u, r
		}
	}
	var err error
	for i, k := range n.keys {
		v := n.vals[i]
		switch k {
		case "$ref":
			// An empty $ref would name the current resource, but
			// jsonschema-go, which validates mcpkit's tools, reads it as
			// absent; so does this package.
			if v.kind == kindString && v.lit != "" {
				n.site = &site{obj: n, ref: v}
				d.sites = append(d.sites, n.site)
			}
		case "$anchor", "$dynamicAnchor":
			if v.kind == kindString {
				addAnchor(n.inner, v.lit, n)
			}
		case d.idKeyword:
			if d.legacy && v.kind == kindString && strings.HasPrefix(v.lit, "#") && len(v.lit) > 1 {
				addAnchor(n.inner, v.lit[1:], n)
			}
		case "$dynamicRef", "$recursiveRef":
			d.dynamic = k
		}
		subschemas(k, v, func(s *node) {
			if err == nil {
				err = d.walk(s, n.inner)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func addAnchor(r *resource, name string, n *node) {
	if r.anchors == nil {
		r.anchors = map[string]*node{}
	}
	if _, ok := r.anchors[name]; ok {
		n = nil
	}
	r.anchors[name] = n
}

// resolve finds the schema s names. A reference whose URI, resolved against
// its base, is not the URI of a resource in the document is remote and
// keeps a nil target.
func (d *document) resolve(s *site) error {
	u, err := url.Parse(s.ref.lit)
	if err != nil {
		return d.refError(s, fmt.Errorf("%w: %v", ErrUnresolved, err))
	}
	s.uri = u
	abs := s.obj.inner.uri.ResolveReference(u)
	frag := abs.Fragment
	abs.Fragment, abs.RawFragment = "", ""
	r := d.resources[abs.String()]
	if r == nil {
		return nil
	}
	if r.dup {
		return d.refError(s, fmt.Errorf("%w: %s names more than one subschema", ErrUnsupported, abs))
	}
	var t *node
	switch {
	case frag == "":
		t = r.node
	case frag[0] == '/':
		if t = r.node.lookup(frag); t == nil {
			return d.refError(s, fmt.Errorf("%w: nothing at %s", ErrUnresolved, frag))
		}
	default:
		a, ok := r.anchors[frag]
		if !ok {
			return d.refError(s, fmt.Errorf("%w: no anchor %q", ErrUnresolved, frag))
		}
		if a == nil {
			return d.refError(s, fmt.Errorf("%w: anchor %q is defined twice", ErrUnsupported, frag))
		}
		t = a
	}
	if !t.schema || t.kind != kindObject && t.kind != kindBool {
		return d.refError(s, fmt.Errorf("%w: %s is not a schema", ErrUnresolved, "#"+t.pointer()))
	}
	s.target, t.named = t, true
	d.local++
	return nil
}

func (d *document) refError(s *site, err error) error {
	return &RefError{Ref: s.ref.lit, Location: s.obj.pointer(), Err: err}
}

// skip reports whether the member key of the schema object n is left out
// of the output: definitions are rebuilt at the root, and before 2020-12 the
// siblings of a $ref are ignored, so only their annotations (and the root's
// $schema and identifier) are worth keeping.
func (d *document) skip(n *node, key string) bool {
	if classify(key) == definitions {
		return true
	}
	if d.legacy && n.site != nil && key != "$ref" && !annotation(key) {
		return n != d.root || key != "$schema" && key != d.idKeyword
	}
	return false
}
