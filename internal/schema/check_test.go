package schema

import (
	"encoding/json"
	"errors"
	"testing"
)

// compileFaults are schemas Compile cannot enforce as written, with where
// and why it says so.
var compileFaults = []struct {
	name, schema string
	pointer, msg string
	also         error // wrapped besides ErrInvalidSchema
}{
	{"misspelt type", `{"type":"object","properties":{"a":{"type":"strng"}}}`,
		"/properties/a/type", `unknown type "strng"`, nil},
	{"misspelt type in a list", `{"properties":{"a":{"type":["string","nul"]}}}`,
		"/properties/a/type/1", `unknown type "nul"`, nil},
	{"dangling $ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`,
		"/properties/a/$ref", `$ref "#/$defs/missing" refers to nothing in the schema`, nil},
	{"dangling anchor", `{"$defs":{"d":{"items":{"$ref":"#nope"}}}}`,
		"/$defs/d/items/$ref", `$ref "#nope" refers to nothing in the schema`, nil},
	{"remote $ref", `{"properties":{"a":{"$ref":"https://example.com/a.json"}}}`,
		"/properties/a/$ref", `$ref "https://example.com/a.json" is to another document, which is never fetched`, ErrRemoteRef},
	{"relative remote $ref", `{"allOf":[{"$ref":"other.json#/x"}]}`,
		"/allOf/0/$ref", `$ref "other.json#/x" is to another document, which is never fetched`, ErrRemoteRef},
	{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`,
		"/properties/a/pattern", "not a regular expression: missing closing ): `(`", nil},
	{"bad patternProperties", `{"patternProperties":{"a/[":{}}}`,
		"/patternProperties/a~1[", "not a regular expression: missing closing ]: `[`", nil},
	{"array items", `{"items":[{"type":"integer"}]}`,
		"/items", "the array form of items is not enforced under 2020-12; use prefixItems", nil},
	{"additionalItems", `{"properties":{"l":{"additionalItems":false}}}`,
		"/properties/l/additionalItems", "additionalItems is not enforced under 2020-12; use prefixItems and items", nil},
	{"dependencies", `{"dependencies":{"a":["b"]}}`,
		"/dependencies", "dependencies is not enforced under 2020-12; use dependentRequired or dependentSchemas", nil},
	{"$recursiveRef", `{"$defs":{"t":{"$recursiveRef":"#"}}}`,
		"/$defs/t/$recursiveRef", "$recursiveRef (2019-09) is not enforced; use $dynamicRef", nil},
	{"circular", `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		"/$defs/a", "the schema applies itself to the same value without end", ErrCircular},
	{"circular at the root", `{"$ref":"#"}`,
		"", "the schema applies itself to the same value without end", ErrCircular},
	{"misspelt keyword", `{"type":"object","propertees":{"a":{"type":"string"}}}`,
		"/propertees", `unknown keyword "propertees": did you mean "properties"? (name an annotation of your own x-...)`, nil},
	{"misspelt keyword inside", `{"properties":{"a":{"type":"integer","mininum":1}}}`,
		"/properties/a/mininum", `unknown keyword "mininum": did you mean "minimum"? (name an annotation of your own x-...)`, nil},
	{"keyword in another case", `{"properties":{"a":{"type":"string","maxlength":3}}}`,
		"/properties/a/maxlength", `unknown keyword "maxlength": did you mean "maxLength"? (name an annotation of your own x-...)`, nil},
	{"null subschema", `{"properties":{"a":null}}`, "/properties/a", "null is not a schema", nil},
	{"null in a list", `{"anyOf":[{},null]}`, "/anyOf/1", "null is not a schema", nil},
	{"nil", ``, "", "no schema (nil)", nil},
	{"not JSON", `{"type":`, "", "unexpected end of JSON input", nil},
}

// TestCompileNamesTheFault checks that a schema Compile cannot enforce as
// written is a *SchemaError that points at the keyword at fault.
func TestCompileNamesTheFault(t *testing.T) {
	for _, tt := range compileFaults {
		t.Run(tt.name, func(t *testing.T) {
			var in any = json.RawMessage(tt.schema)
			if tt.schema == "" {
				in = nil
			}
			_, err := Compile(in)
			var se *SchemaError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSchema) {
				t.Fatalf("Compile = %v, want a *SchemaError", err)
			}
			if se.Pointer != tt.pointer || tt.msg != "" && se.Msg != tt.msg {
				t.Errorf("Compile = %q at %q, want %q at %q", se.Msg, se.Pointer, tt.msg, tt.pointer)
			}
			if tt.also != nil && !errors.Is(err, tt.also) {
				t.Errorf("Compile = %v, want it to wrap %v", err, tt.also)
			}
			want := "schema: invalid schema: " + tt.pointer + ": " + tt.msg
			if tt.pointer == "" {
				want = "schema: invalid schema: " + tt.msg
			}
			if tt.msg != "" && err.Error() != want {
				t.Errorf("Error() = %q, want %q", err, want)
			}
		})
	}
}

// TestCompileAccepts lists what Compile accepts although it does not check
// it, or checks it by falling back to jsonschema-go.
func TestCompileAccepts(t *testing.T) {
	for name, schema := range map[string]string{
		"unknown format":                `{"type":"string","format":"flurb"}`,
		"unknown keyword":               `{"type":"object","x-vendor":{"a":1},"nullable":true}`,
		"annotations of other kinds":    `{"type":"object","example":{"a":1},"x-mcp-header":"A","x-requried":true,"discriminator":{},"flavour":"mild","units":"cm"}`,
		"annotations":                   `{"title":"t","description":"d","examples":[1],"deprecated":true,"readOnly":true,"$comment":"c","contentMediaType":"text/plain"}`,
		"array items under draft-07":    `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"integer"}],"additionalItems":false,"dependencies":{"a":["b"]}}`,
		"$dynamicRef":                   `{"$dynamicAnchor":"n","type":"object","properties":{"k":{"$dynamicRef":"#n"}}}`,
		"unevaluatedProperties":         `{"properties":{"a":{}},"unevaluatedProperties":false}`,
		"$ref to an $id":                `{"$id":"https://example.com/root.json","$defs":{"d":{"$id":"d.json","type":"string"}},"properties":{"a":{"$ref":"d.json"}}}`,
		"$ref with an escaped pointer":  `{"$defs":{"a/b":{"type":"string"},"c d":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/a~1b"},"y":{"$ref":"#/$defs/c%20d"}}}`,
		"recursion through properties":  `{"properties":{"a":{"$ref":"#"}}}`,
		"items in the 2020-12 form":     `{"prefixItems":[{"type":"integer"}],"items":false}`,
		"dependentRequired and Schemas": `{"dependentRequired":{"a":["b"]},"dependentSchemas":{"c":{"required":["d"]}}}`,
	} {
		if _, err := Compile([]byte(schema)); err != nil {
			t.Errorf("%s: Compile(%s) = %v", name, schema, err)
		}
	}
}
