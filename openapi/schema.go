package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

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
	doc   *openapi3.T
	v30   bool                   // OpenAPI 3.0: nullable, boolean exclusiveMinimum, ...
	comps map[compKey]*component // by component name and direction
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
}

// A component is one converted component schema: its JSON and the names
// of the components it refers to directly.
type component struct {
	json json.RawMessage
	deps []string
	err  error
}

func newConverter(doc *openapi3.T) *converter {
	return &converter{
		doc:   doc,
		v30:   strings.HasPrefix(doc.OpenAPI, "3.0"),
		comps: make(map[compKey]*component),
	}
}

// schema converts s (the schema of a parameter, a body or a response) into
// a JSON value, and adds to refs the component names it refers to.
func (c *converter) schema(s *openapi3.SchemaRef, dir direction, refs map[string]bool) (any, error) {
	if s == nil {
		return map[string]any{}, nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	var deps []string
	out, err := c.rewrite(v, dir, &deps, 0)
	if err != nil {
		return nil, err
	}
	for _, d := range deps {
		refs[d] = true
	}
	return out, nil
}

// defs returns the $defs that the component names in refs need, with the
// components those refer to, transitively. A component that refers to
// itself (a tree, a linked list) is listed once.
func (c *converter) defs(refs map[string]bool, dir direction) (map[string]json.RawMessage, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage)
	queue := make([]string, 0, len(refs))
	for name := range refs {
		queue = append(queue, name)
	}
	slices.Sort(queue)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if _, ok := out[name]; ok {
			continue
		}
		comp := c.component(name, dir)
		if comp.err != nil {
			return nil, comp.err
		}
		out[name] = comp.json
		for _, d := range comp.deps {
			if _, ok := out[d]; !ok {
				queue = append(queue, d)
			}
		}
	}
	return out, nil
}

// component converts the component schema name, once per direction.
func (c *converter) component(name string, dir direction) *component {
	key := compKey{name, dir}
	if comp, ok := c.comps[key]; ok {
		return comp
	}
	comp := &component{}
	c.comps[key] = comp
	var s *openapi3.SchemaRef
	if c.doc.Components != nil {
		s = c.doc.Components.Schemas[name]
	}
	if s == nil || s.Value == nil && s.Ref == "" {
		comp.err = fmt.Errorf("%w: no schema %q in components", errUnsupportedRef, clip(name, 80))
		return comp
	}
	// The component itself, not a $ref to it: marshal its value.
	var raw []byte
	var err error
	if s.Ref != "" {
		raw, err = json.Marshal(s) // an alias of another component
	} else {
		raw, err = json.Marshal(s.Value)
	}
	if err != nil {
		comp.err = fmt.Errorf("component schema %q: %w", clip(name, 80), err)
		return comp
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		comp.err = fmt.Errorf("component schema %q: %w", clip(name, 80), err)
		return comp
	}
	out, err := c.rewrite(v, dir, &comp.deps, 0)
	if err != nil {
		comp.err = fmt.Errorf("component schema %q: %w", clip(name, 80), err)
		return comp
	}
	comp.json, comp.err = json.Marshal(out)
	return comp
}

// Keywords whose value is a schema, a map of schemas, or a list of
// schemas: the places rewrite descends into. Every other keyword's value
// is data (enum, const, default, required, ...) and is kept as it is.
var (
	schemaKeywords = map[string]bool{
		"items": true, "additionalProperties": true, "not": true, "contains": true,
		"propertyNames": true, "if": true, "then": true, "else": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "additionalItems": true,
		"contentSchema": true,
	}
	schemaMapKeywords  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	schemaListKeywords = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
	// OpenAPI's own annotations, which mean nothing to a JSON Schema
	// validator or to a model and only make the schema longer.
	droppedKeywords = map[string]bool{"xml": true, "externalDocs": true, "discriminator": true, "example": true}
)

// rewrite returns a copy of the schema v in JSON Schema 2020-12: component
// $refs point into $defs (their names appended to deps), OpenAPI 3.0's
// nullable and boolean exclusiveMinimum/Maximum become their 2020-12
// forms, OpenAPI-only annotations and x- extensions are dropped, and so
// are the properties that do not go in dir's direction (readOnly ones in
// the input, writeOnly ones in the output), from "required" too.
func (c *converter) rewrite(v any, dir direction, deps *[]string, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("schema nested more than %d levels deep", maxSchemaDepth)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil // true, false, or something the validator will judge
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
			*deps = append(*deps, name)
			out[k] = "#/$defs/" + escapePointer(name)
		case droppedKeywords[k] || strings.HasPrefix(k, "x-"):
		case schemaKeywords[k]:
			r, err := c.rewrite(val, dir, deps, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = r
		case schemaMapKeywords[k]:
			sm, ok := val.(map[string]any)
			if !ok {
				out[k] = val
				continue
			}
			rm := make(map[string]any, len(sm))
			for name, sub := range sm {
				if k == "properties" && !goes(sub, dir) {
					dropped = append(dropped, name)
					continue
				}
				r, err := c.rewrite(sub, dir, deps, depth+1)
				if err != nil {
					return nil, err
				}
				rm[name] = r
			}
			out[k] = rm
		case schemaListKeywords[k]:
			sl, ok := val.([]any)
			if !ok {
				out[k] = val
				continue
			}
			rl := make([]any, len(sl))
			for i, sub := range sl {
				r, err := c.rewrite(sub, dir, deps, depth+1)
				if err != nil {
					return nil, err
				}
				rl[i] = r
			}
			out[k] = rl
		default:
			out[k] = val
		}
	}
	if req, ok := out["required"].([]any); ok && len(dropped) > 0 {
		kept := make([]any, 0, len(req))
		for _, r := range req {
			if name, ok := r.(string); !ok || !slices.Contains(dropped, name) {
				kept = append(kept, r)
			}
		}
		out["required"] = kept
	}
	if c.v30 {
		from30(out)
	}
	return out, nil
}

// goes reports whether a property whose schema is s belongs in a schema of
// direction dir: not when it is readOnly and dir is input, nor writeOnly
// and dir is output.
func goes(s any, dir direction) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return true
	}
	if dir == input {
		return m["readOnly"] != true
	}
	return m["writeOnly"] != true
}

// from30 rewrites, in place, the OpenAPI 3.0 keywords whose meaning
// differs in JSON Schema 2020-12.
func from30(s map[string]any) {
	if n, ok := s["nullable"].(bool); ok {
		delete(s, "nullable")
		if n {
			if t, ok := s["type"].(string); ok {
				s["type"] = []any{t, "null"}
			}
			if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
				s["enum"] = append(slices.Clip(e), nil)
			}
		}
	}
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
}

// componentName returns the component schema a $ref names, or an error
// for any other $ref.
func componentName(ref string) (string, error) {
	tail, ok := strings.CutPrefix(ref, componentPrefix)
	if !ok || tail == "" || strings.Contains(tail, "/") {
		return "", fmt.Errorf("%w %q: only refs to #/components/schemas/... are followed", errUnsupportedRef, clip(ref, 80))
	}
	tail = strings.ReplaceAll(strings.ReplaceAll(tail, "~1", "/"), "~0", "~")
	if u, err := url.PathUnescape(tail); err == nil {
		tail = u
	}
	return tail, nil
}

// escapePointer escapes name as a JSON Pointer token, and what a URI
// fragment cannot hold.
func escapePointer(name string) string {
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
	return (&url.URL{Fragment: name}).EscapedFragment()
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
		comp := c.component(name, output)
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
