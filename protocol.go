package mcpkit

import (
	"bytes"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// anyValueVersion is the first protocol version whose structured content
// and output schemas may be any JSON value (SEP-2106); before it, both are
// objects.
const anyValueVersion = "2026-07-28"

// wantsObjects reports whether a client of protocol version v needs
// structured content and output schemas to be objects. An unknown version
// is taken as the current one.
func wantsObjects(v string) bool { return v != "" && v < anyValueVersion }

// wrapValue returns the structured content {"result": value}, which is how
// a non-object value reaches a client that needs objects.
func wrapValue(value []byte) json.RawMessage {
	b := make([]byte, 0, len(`{"result":}`)+len(value))
	b = append(b, `{"result":`...)
	b = append(b, value...)
	return append(b, '}')
}

// isObjectJSON reports whether the JSON text b is an object.
func isObjectJSON(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// A wrapping is how a tool's structured content reaches a client.
type wrapping uint8

const (
	// asIs sends any value as it is: a client of 2026-07-28 or later.
	asIs wrapping = iota
	// wrapNonObjects sends {"result": value} for a value that is not an
	// object, and an object as it is: what a client that needs objects is
	// sent when no output schema says otherwise.
	wrapNonObjects
	// wrapAll sends {"result": value} for every value, objects included:
	// the output schema listed to a client that needs objects describes
	// that wrapper (see forObjectClients).
	wrapAll
)

// wrapping returns how e's structured content reaches a client of
// protocol version v, in agreement with the output schema that client is
// listed.
func (e *entry) wrapping(v string) wrapping {
	switch {
	case !wantsObjects(v):
		return asIs
	case e.objectDef() != &e.tool.Tool:
		return wrapAll
	}
	return wrapNonObjects
}

// objectDef returns e's definition as a client that needs objects is
// listed it (forObjectClients), made once.
func (e *entry) objectDef() *mcp.Tool {
	m := e.lazy()
	m.legacyOnce.Do(func() { m.legacy = forObjectClients(&e.tool.Tool) })
	return m.legacy
}

// wireDef returns e's definition as tools/list sends it, with its schemas
// marshalled once, when first listed, instead of on every list: a schema
// given as a *jsonschema.Schema (as tools.New makes it) costs a walk of the
// schema each time it is marshalled.
func (e *entry) wireDef() *mcp.Tool {
	m := e.lazy()
	m.wireOnce.Do(func() {
		def := e.tool.Tool
		def.InputSchema = asJSON(def.InputSchema)
		if def.OutputSchema != nil {
			def.OutputSchema = asJSON(def.OutputSchema)
		}
		m.wire = &def
	})
	return m.wire
}

// asJSON returns schema as JSON text, or schema itself when it is text
// already or does not marshal.
func asJSON(schema any) any {
	if _, ok := schema.(json.RawMessage); ok {
		return schema
	}
	data, err := json.Marshal(schema)
	if err != nil {
		return schema
	}
	return json.RawMessage(data)
}

// forObjectClients returns def as a client that needs objects must see it:
// def itself when it has no output schema or one whose values are all
// objects, or else a copy whose output schema describes {"result": value}.
// It never modifies def or its schema.
func forObjectClients(def *mcp.Tool) *mcp.Tool {
	types, ok := schemaTypes(def.OutputSchema)
	if !ok || onlyObjects(types) {
		return def
	}
	d := *def
	d.OutputSchema = map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"result": def.OutputSchema},
		"required":             []string{"result"},
		"additionalProperties": false,
	}
	return &d
}

// onlyObjects reports whether the "type" of a schema, as schemaTypes
// returns it, admits objects and nothing else. A schema without a type
// (anyOf, a $ref, {}) may admit anything, so it does not.
func onlyObjects(types []string) bool {
	for _, t := range types {
		if t != "object" {
			return false
		}
	}
	return len(types) > 0
}

// schemaTypes returns the types the schema s names in its "type" (none
// when it has no type, or one that is not a string or a list of them), and
// whether there is a schema at all: false for nil, a nil
// *jsonschema.Schema, JSON null, and a schema that cannot be read.
func schemaTypes(s any) ([]string, bool) {
	switch s := s.(type) {
	case nil:
		return nil, false
	case *jsonschema.Schema:
		if s == nil {
			return nil, false
		}
		if s.Type != "" {
			return []string{s.Type}, true
		}
		return s.Types, true
	}
	b, err := json.Marshal(s)
	if err != nil || string(b) == "null" {
		return nil, false
	}
	var probe struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(b, &probe) != nil {
		return nil, true // not an object: true or false
	}
	var types []string
	switch t := probe.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			str, ok := x.(string)
			if !ok {
				return nil, true
			}
			types = append(types, str)
		}
	}
	return types, true
}
