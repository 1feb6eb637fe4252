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

// forObjectClients returns def as a client that needs objects must see it:
// def itself, or, when its output schema describes values that are not
// objects, a copy whose output schema describes {"result": value}. It never
// modifies def or its schema.
func forObjectClients(def *mcp.Tool) *mcp.Tool {
	if def.OutputSchema == nil || !nonObjectSchema(def.OutputSchema) {
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

// nonObjectSchema reports whether the schema s says, with its "type", that
// its values are not objects. A schema without a type says nothing.
func nonObjectSchema(s any) bool {
	var types []string
	switch s := s.(type) {
	case *jsonschema.Schema:
		if s == nil {
			return false
		}
		types = append(s.Types, s.Type)
	default:
		var probe struct {
			Type any `json:"type"`
		}
		b, err := json.Marshal(s)
		if err != nil || json.Unmarshal(b, &probe) != nil {
			return false
		}
		switch t := probe.Type.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				if str, ok := x.(string); ok {
					types = append(types, str)
				}
			}
		}
	}
	known := false
	for _, t := range types {
		if t == "object" {
			return false
		}
		known = known || t != ""
	}
	return known
}
