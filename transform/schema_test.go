package transform_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/transform"
)

// ok is a handler for tools whose calls the test does not make.
var ok = mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
})

// toolWith returns a tool named "t" with the input schema given as JSON.
func toolWith(schema string) *mcpkit.Tool {
	return &mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: json.RawMessage(schema)}, Handler: ok}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestInputSchemaRewrite(t *testing.T) {
	value := transform.Arg{Hide: true, Value: "v"}
	for _, tc := range []struct {
		name   string
		schema string
		args   map[string]transform.Arg
		want   string
	}{{
		name:   "no argument transforms: the schema as it was",
		schema: `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"$defs":{"x":{"type":"integer"}},"x-other":[1]}`,
		want:   `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"$defs":{"x":{"type":"integer"}},"x-other":[1]}`,
	}, {
		name:   "rename keeps additionalProperties, $defs and every other keyword",
		schema: `{"type":"object","properties":{"q":{"type":"string","description":"what to find"},"n":{"$ref":"#/$defs/count"}},"required":["q"],"additionalProperties":false,"$defs":{"count":{"type":"integer","minimum":1}},"title":"T"}`,
		args:   map[string]transform.Arg{"q": {Name: "query"}},
		want:   `{"type":"object","properties":{"query":{"type":"string","description":"what to find"},"n":{"$ref":"#/$defs/count"}},"required":["query"],"additionalProperties":false,"$defs":{"count":{"type":"integer","minimum":1}},"title":"T"}`,
	}, {
		name: "rename in the subschemas that apply to the arguments object",
		schema: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},
			"allOf":[{"required":["a"]}],
			"anyOf":[{"properties":{"a":{"minLength":1}}},{"required":["b"]}],
			"oneOf":[{"required":["a"]},{"not":{"required":["a"]}}],
			"if":{"properties":{"a":{"const":"x"}}},"then":{"required":["b"]},"else":{"properties":{"a":{"maxLength":3}}},
			"dependentRequired":{"a":["b"],"b":["a"]},
			"dependentSchemas":{"a":{"properties":{"a":{"pattern":"^a"}},"required":["b"]}}}`,
		args: map[string]transform.Arg{"a": {Name: "alpha"}},
		want: `{"type":"object","properties":{"alpha":{"type":"string"},"b":{"type":"string"}},
			"allOf":[{"required":["alpha"]}],
			"anyOf":[{"properties":{"alpha":{"minLength":1}}},{"required":["b"]}],
			"oneOf":[{"required":["alpha"]},{"not":{"required":["alpha"]}}],
			"if":{"properties":{"alpha":{"const":"x"}}},"then":{"required":["b"]},"else":{"properties":{"alpha":{"maxLength":3}}},
			"dependentRequired":{"alpha":["b"],"b":["alpha"]},
			"dependentSchemas":{"alpha":{"properties":{"alpha":{"pattern":"^a"}},"required":["b"]}}}`,
	}, {
		name:   "names inside argument values are not the arguments'",
		schema: `{"type":"object","properties":{"a":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},"required":["a"]}`,
		args:   map[string]transform.Arg{"a": {Name: "b"}},
		want:   `{"type":"object","properties":{"b":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},"required":["b"]}`,
	}, {
		name:   "swap",
		schema: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`,
		args:   map[string]transform.Arg{"a": {Name: "b"}, "b": {Name: "a"}},
		want:   `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}},"required":["b"]}`,
	}, {
		name:   "draft-07 dependencies",
		schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{},"b":{}},"dependencies":{"a":["b"],"b":{"required":["a"]}}}`,
		args:   map[string]transform.Arg{"a": {Name: "c"}},
		want:   `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"c":{},"b":{}},"dependencies":{"c":["b"],"b":{"required":["c"]}}}`,
	}, {
		name:   "patternProperties that match both names or neither",
		schema: `{"type":"object","properties":{"x_a":{},"b":{}},"patternProperties":{"^x_":{"type":"string"},"^z":{}}}`,
		args:   map[string]transform.Arg{"x_a": {Name: "x_b"}, "b": {Name: "c"}},
		want:   `{"type":"object","properties":{"x_b":{},"c":{}},"patternProperties":{"^x_":{"type":"string"},"^z":{}}}`,
	}, {
		name:   "hide an optional argument, with its x-mcp-header",
		schema: `{"type":"object","properties":{"q":{"type":"string"},"tenant":{"type":"string","x-mcp-header":"Tenant"}},"required":["q"],"additionalProperties":false}`,
		args:   map[string]transform.Arg{"tenant": {Hide: true}},
		want:   `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`,
	}, {
		name:   "hide required arguments given values, also where allOf requires them",
		schema: `{"type":"object","properties":{"user":{"type":"string"},"org":{"type":"string","default":"acme"}},"required":["user","org"],"allOf":[{"required":["user"]},{"properties":{"user":{"minLength":1}}}]}`,
		args:   map[string]transform.Arg{"user": value, "org": {Hide: true}},
		want:   `{"type":"object","properties":{},"allOf":[{},{"properties":{}}]}`,
	}, {
		name:   "rename keeps x-mcp-header, nested ones too",
		schema: `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"f":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`,
		args:   map[string]transform.Arg{"region": {Name: "area"}, "f": {Name: "filter"}},
		want:   `{"type":"object","properties":{"area":{"type":"string","x-mcp-header":"Region"},"filter":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`,
	}, {
		name:   "description, default and examples, wherever the argument is described",
		schema: `{"type":"object","properties":{"n":{"type":"integer","description":"old","default":1},"b":true},"allOf":[{"properties":{"n":{"minimum":0}}}]}`,
		args: map[string]transform.Arg{
			"n": {Name: "count", Description: "How many.", Default: 10, Examples: []any{5, 20}},
			"b": {Description: "Anything."},
		},
		want: `{"type":"object","properties":{"count":{"type":"integer","description":"How many.","default":10,"examples":[5,20]},"b":{"description":"Anything."}},
			"allOf":[{"properties":{"count":{"minimum":0,"description":"How many.","default":10,"examples":[5,20]}}}]}`,
	}, {
		name:   "required and optional",
		schema: `{"type":"object","properties":{"a":{},"b":{"default":2},"c":{}},"required":["b","c"],"allOf":[{"required":["b"]}],"anyOf":[{"required":["b"]}]}`,
		args:   map[string]transform.Arg{"a": {Required: transform.Required}, "b": {Required: transform.Optional}, "c": {Required: transform.Optional, Default: "x"}},
		want:   `{"type":"object","properties":{"a":{},"b":{"default":2},"c":{"default":"x"}},"required":["a"],"allOf":[{}],"anyOf":[{"required":["b"]}]}`,
	}, {
		name:   "Required on an argument already required, and a rename with it",
		schema: `{"type":"object","properties":{"a":{}},"required":["a"]}`,
		args:   map[string]transform.Arg{"a": {Name: "z", Required: transform.Required}},
		want:   `{"type":"object","properties":{"z":{}},"required":["z"]}`,
	}, {
		name:   "a hidden argument's name reused by another",
		schema: `{"type":"object","properties":{"user":{},"name":{}},"required":["user","name"]}`,
		args:   map[string]transform.Arg{"user": value, "name": {Name: "user"}},
		want:   `{"type":"object","properties":{"user":{}},"required":["user"]}`,
	}, {
		name:   "a $ref elsewhere, and propertyNames, when nothing is renamed",
		schema: `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"},"b":{"$ref":"#/properties/a"}},"propertyNames":{"maxLength":3},"$defs":{"a":{"type":"string"}}}`,
		args:   map[string]transform.Arg{"b": {Hide: true}, "a": {Description: "A."}},
		want:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/a","description":"A."}},"propertyNames":{"maxLength":3},"$defs":{"a":{"type":"string"}}}`,
	}, {
		name:   "a $ref inside a value is data",
		schema: `{"type":"object","properties":{"a":{"type":"object","default":{"$ref":"#"},"enum":[{"$ref":"#"}]},"b":{}}}`,
		args:   map[string]transform.Arg{"b": {Name: "c"}},
		want:   `{"type":"object","properties":{"a":{"type":"object","default":{"$ref":"#"},"enum":[{"$ref":"#"}]},"c":{}}}`,
	}, {
		name:   "numbers keep their text",
		schema: `{"type":"object","properties":{"id":{"type":"integer","default":9007199254740993}},"maxProperties":1000000}`,
		args:   map[string]transform.Arg{"id": {Name: "ID"}},
		want:   `{"type":"object","properties":{"ID":{"type":"integer","default":9007199254740993}},"maxProperties":1000000}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := transform.Tool(toolWith(tc.schema), transform.Spec{Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			got := mustJSON(t, d.InputSchema)
			if !jsonEqual(t, got, tc.want) {
				t.Errorf("input schema:\n got %s\nwant %s", got, compact(t, tc.want))
			}
		})
	}
}

// jsonEqual compares two JSON texts by value, numbers by their text.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	return reflect.DeepEqual(decodeNumbers(t, a), decodeNumbers(t, b))
}

func decodeNumbers(t *testing.T, s string) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return v
}

func compact(t *testing.T, s string) string {
	t.Helper()
	return mustJSON(t, decodeNumbers(t, s))
}
