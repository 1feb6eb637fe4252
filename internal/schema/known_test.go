package schema

import (
	"encoding/json"
	"testing"
)

// knownValidCases are schemas that KnownValid judges (want true) and
// schemas it must leave to Compile (want false): every schema Compile
// refuses, and those it accepts through keywords KnownValid does not read.
var knownValidCases = []struct {
	schema string
	want   bool
}{
	{`{}`, true},
	{`true`, true},
	{` {"type" : "object" , "properties" : { } } `, true},
	{`{"type":"object","properties":{"a":{"type":"integer","minimum":0,"maximum":10},"b":{"type":"string","maxLength":64,"pattern":"^[a-z0-9_-]+$"}},"required":["a"],"additionalProperties":false}`, true},
	{`{"type":"object","properties":{"s":{"type":"string","pattern":"^\\d+\\.\\d+$","format":"uuid"},"e":{"enum":["a",1,null,[1.5e3],{"k":true}]},"c":{"const":null}}}`, true},
	{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":999999999,"uniqueItems":true}}}`, true},
	{`{"type":["string","null"],"description":"d\u00e9j\u00e0","title":"t","$comment":"c","default":"x","examples":["x"],"deprecated":false,"readOnly":true,"writeOnly":false}`, true},
	{`{"anyOf":[{"type":"integer"},{"type":"string"}],"oneOf":[true,false],"allOf":[],"not":{"type":"null"},"if":{"required":["a"]},"then":{},"else":false}`, true},
	{`{"prefixItems":[{"type":"integer"}],"items":false,"contains":{"type":"integer"},"minContains":1,"maxContains":-2}`, true},
	{`{"patternProperties":{"^x-":{"type":"string"},"\\d":{}},"propertyNames":{"maxLength":8},"minProperties":0,"maxProperties":4}`, true},
	{`{"dependentRequired":{"a":["b","c"]},"dependentSchemas":{"c":{"required":["d"]}},"$defs":{"unused":{"type":"string"}}}`, true},
	{`{"multipleOf":0.01,"exclusiveMinimum":-1e300,"exclusiveMaximum":1E+300,"maximum":1.7e308}`, true},
	{`{"x-mcp-header":"Region","x-vendor":{"n":[1,2]},"example":{"a":1},"nullable":true,"discriminator":{},"externalDocs":{},"xml":{},"propertyOrder":["a","a"],"units":"cm","flavour":"mild"}`, true},
	{`{"contentEncoding":"base64","contentMediaType":"image/png","contentSchema":{"type":"object"}}`, true},
	{`{"properties":{"a":{"$ref":"#/$defs/d"}},"$defs":{"d":{}}}`, true},
	{`{"$ref":"#/$defs/a","$defs":{"a":{"type":"object","allOf":[{"$ref":"#/$defs/b"}]},"b":{"required":["x"]}}}`, true},
	{`{"$defs":{"n":{"properties":{"kids":{"items":{"$ref":"#/$defs/n"}}}}},"properties":{"root":{"$ref":"#/$defs/n"}}}`, true},
	{`{"$defs":{"e":{"enum":["x","y"],"default":"x"}},"properties":{"k":{"$ref":"#/$defs/e"},"l":{"$ref":"#/$defs/e","default":"y"}}}`, true},
	{`{"$defs":{"a.b-c_1":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a.b-c_1"}}}`, true},

	// What Compile refuses.
	{`{"type":"strng"}`, false},
	{`{"type":["string","nul"]}`, false},
	{`{"type":"Object"}`, false},
	{`{"type":1}`, false},
	{`{"type":null}`, false},
	{`{"pattern":"("}`, false},
	{`{"pattern":"\\"}`, false},
	{`{"patternProperties":{"a/[":{}}}`, false},
	{`{"items":[{"type":"integer"}]}`, false},
	{`{"additionalItems":false}`, false},
	{`{"dependencies":{"a":["b"]}}`, false},
	{`{"$recursiveRef":"#"}`, false},
	{`{"propertees":{}}`, false},
	{`{"mininum":1}`, false},
	{`{"maxlength":3}`, false},
	{`{"Minimum":"x"}`, false},
	{`{"properties":{"a":null}}`, false},
	{`{"anyOf":[{},null]}`, false},
	{`{"not":null}`, false},
	{`{"minimum":1e400}`, false},
	{`{"maximum":1.8e308}`, false},
	{`{"x-big":[1e400]}`, false},
	{`{"const":-1e999}`, false},
	{`{"minLength":1.5}`, false},
	{`{"minLength":"1"}`, false},
	{`{"minLength":4294967296}`, false},
	{`{"required":"a"}`, false},
	{`{"required":[1]}`, false},
	{`{"enum":1}`, false},
	{`{"examples":{}}`, false},
	{`{"deprecated":"yes"}`, false},
	{`{"properties":[]}`, false},
	{`{"allOf":{}}`, false},
	{`{"properties":{"a":1}}`, false},
	{`{"$vocabulary":{}}`, false},
	{`{"type":`, false},
	{`{"type":"object"`, false},
	{`{"type":"object"} x`, false},
	{`{"type":"object",}`, false},
	{`{"a":"\x01"}`, false},
	{``, false},
	{`null`, false},
	{`[]`, false},

	// What Compile accepts, through keywords KnownValid leaves to it.
	{`{"$ref":"#"}`, false},
	{`{"$schema":"https://json-schema.org/draft/2020-12/schema"}`, false},
	{`{"$id":"https://example.com/s"}`, false},
	{`{"$anchor":"a"}`, false},
	{`{"unevaluatedProperties":false}`, false},
	{`{"definitions":{}}`, false},
	{`{"minLength":1.0}`, false},
	{`{"typ\u0065":"object"}`, false},
	{`{"kéy":1}`, false},
	{`{"$foo":1}`, false},
	{`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`, false},
	{`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"not":{"$ref":"#/$defs/a"}}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, false},
	{`{"$defs":{"a":{"dependentSchemas":{"k":{"$ref":"#/$defs/a"}}}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, false},
	{`{"$defs":{"a":{"if":{"$ref":"#/$defs/a"}}}}`, false},
	{`{"properties":{"a":{"$ref":"#/$defs/missing"}}}`, false},
	{`{"$defs":{"a":{}},"$defs":{"b":{}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, false},
	{`{"properties":{"p":{"$defs":{"a":{}}}}}`, false},
	{`{"$defs":{"a":{}},"$ref":"#/definitions/a"}`, false},
	{`{"$defs":{"a/b":{}},"$ref":"#/$defs/a~1b"}`, false},
	{`{"$defs":{"a b":{}},"$ref":"#/$defs/a%20b"}`, false},
	{`{"$defs":{"a":{}},"$ref":"#/$defs/\u0061"}`, false},
}

func TestKnownValid(t *testing.T) {
	for _, tt := range knownValidCases {
		got := KnownValid([]byte(tt.schema), nil)
		if got != tt.want {
			t.Errorf("KnownValid(%s) = %v, want %v", tt.schema, got, tt.want)
		}
		if got {
			if _, err := Compile(json.RawMessage(tt.schema)); err != nil {
				t.Errorf("KnownValid(%s), but Compile = %v", tt.schema, err)
			}
		}
	}
}

// TestKnownValidRefusesWhatCompileRefuses runs KnownValid on the schemas
// whose faults Compile names: it must leave each to Compile.
func TestKnownValidRefusesWhatCompileRefuses(t *testing.T) {
	for _, tt := range compileFaults {
		if KnownValid([]byte(tt.schema), nil) {
			t.Errorf("%s: KnownValid(%s) = true, but Compile refuses it", tt.name, tt.schema)
		}
	}
}

// TestKnownValidRemembersPatterns checks that a set of patterns learns
// the valid regular expressions only, and judges as KnownValid does
// without one.
func TestKnownValidRemembersPatterns(t *testing.T) {
	var seen Patterns
	for _, s := range []string{
		`{"pattern":"^[a-z]+$"}`,
		`{"pattern":"^[a-z]+$","properties":{"a":{"pattern":"^[a-z]+$"}}}`,
		`{"pattern":"(["}`,
		`{"patternProperties":{"\\d":{},"(":{}}}`,
		`{"pattern":"\\d+"}`,
	} {
		if got, want := KnownValid([]byte(s), &seen), KnownValid([]byte(s), nil); got != want {
			t.Errorf("KnownValid(%s) = %v with a set of patterns, %v without", s, got, want)
		}
	}
	for _, text := range []string{`^[a-z]+$`, `\\d`, `\\d+`} {
		if !seen.has([]byte(text)) {
			t.Errorf("%s: not remembered", text)
		}
	}
	for _, text := range []string{`([`, `(`} {
		if seen.has([]byte(text)) {
			t.Errorf("%s: remembered, but it is not a regular expression", text)
		}
	}
}

// FuzzKnownValid checks the one promise of KnownValid: a schema it judges
// valid compiles. The bytes are tried as a schema, and as the choices of
// the schema generator of the differential fuzz test.
func FuzzKnownValid(f *testing.F) {
	for _, tt := range knownValidCases {
		f.Add([]byte(tt.schema))
	}
	for _, s := range fuzzSchemas {
		f.Add([]byte(s))
	}
	var seen Patterns
	f.Fuzz(func(t *testing.T, data []byte) {
		if KnownValid(data, nil) != KnownValid(data, &seen) {
			t.Fatalf("KnownValid(%s) differs with the patterns seen before", data)
		}
		if KnownValid(data, nil) {
			if _, err := Compile(json.RawMessage(data)); err != nil {
				t.Fatalf("KnownValid(%s), but Compile = %v", data, err)
			}
		}
		g := &gen{data: data}
		root := g.rootSchema()
		text, err := json.Marshal(root)
		if err != nil {
			t.Fatal(err)
		}
		// The generator's $defs have an anchor, which KnownValid leaves to
		// Compile: without it, their $refs are judged too.
		if m, ok := root.(map[string]any); ok {
			defs, _ := m["$defs"].(map[string]any)
			if d1, ok := defs["d1"].(map[string]any); ok {
				delete(d1, "$anchor")
			}
		}
		unanchored, err := json.Marshal(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range [][]byte{text, unanchored} {
			if KnownValid(text, nil) {
				if _, err := Compile(json.RawMessage(text)); err != nil {
					t.Fatalf("KnownValid(%s), but Compile = %v", text, err)
				}
			}
		}
	})
}
