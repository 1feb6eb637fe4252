package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func mustCompile(t testing.TB, schema string) *Validator {
	t.Helper()
	v, err := Compile([]byte(schema))
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return v
}

func mustResolve(t testing.TB, schema string) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("Resolve(%s): %v", schema, err)
	}
	return rs
}

// TestKeywords checks each keyword on documents it must accept and reject,
// and that jsonschema-go agrees on each.
func TestKeywords(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		valid   []string
		invalid []string
	}{
		{"type string", `{"type":"string"}`, []string{`"a"`, `""`}, []string{`1`, `true`, `[]`, `{"a":1}`}},
		{"type integer", `{"type":"integer"}`, []string{`1`, `-3`, `1.0`, `1e2`, `12345678901234567890`}, []string{`1.5`, `"1"`, `1e-2`}},
		{"type number", `{"type":"number"}`, []string{`1`, `1.5`, `-0`, `2e-3`}, []string{`"1"`, `false`}},
		{"type boolean", `{"type":"boolean"}`, []string{`true`, `false`}, []string{`0`, `"true"`}},
		{"type array", `{"type":"array"}`, []string{`[]`, `[1,"a"]`}, []string{`{}`, `"[]"`}},
		{"type object", `{"type":"object"}`, []string{`{}`, `{"a":[1]}`, ``, `null`}, []string{`[]`, `1`}},
		{"type null in items", `{"items":{"type":"null"}}`, []string{`[null]`}, []string{`[0]`, `[""]`}},
		{"types array", `{"items":{"type":["string","null"]}}`, []string{`["a",null]`}, []string{`[1]`, `[true]`}},
		{"types integer or boolean", `{"type":["integer","boolean"]}`, []string{`2`, `2.0`, `true`}, []string{`2.5`, `"x"`}},
		{"empty types", `{"type":[]}`, nil, []string{`1`, `"a"`}},
		{"enum", `{"enum":["a",1,[1,2],{"a":1},true]}`, []string{`"a"`, `1.0`, `[1,2]`, `{"a":1.0}`, `true`}, []string{`"b"`, `2`, `[2,1]`, `false`, `{"a":1,"b":2}`}},
		{"enum null", `{"items":{"enum":[null,"\u00e9"]}}`, []string{`[null,"é","\u00e9"]`}, []string{`[0]`, `["e"]`}},
		{"empty enum", `{"enum":[]}`, nil, []string{`1`, `{}`}},
		{"const", `{"const":{"a":[1,"x"]}}`, []string{`{"a":[1.0,"x"]}`, `{"a":[1,"\u0078"]}`}, []string{`{"a":[1]}`, `{"a":[1,"x"],"b":0}`, `1`}},
		{"const null", `{"items":{"const":null}}`, []string{`[null]`}, []string{`[0]`, `[{}]`}},
		{"const number", `{"const":2}`, []string{`2`, `2.0`, `20e-1`}, []string{`2.1`, `"2"`}},
		{"minimum exclusiveMaximum", `{"minimum":1,"exclusiveMaximum":3}`, []string{`1`, `2.99`, `"x"`}, []string{`0.99`, `3`, `4`}},
		{"exclusiveMinimum maximum", `{"exclusiveMinimum":-1,"maximum":0.5}`, []string{`0`, `0.5`, `-0.5`}, []string{`-1`, `0.51`}},
		{"multipleOf", `{"multipleOf":0.5}`, []string{`1.5`, `0`, `-2`}, []string{`1.25`, `0.1`}},
		{"multipleOf integer", `{"multipleOf":3}`, []string{`9`, `-3`, `0`}, []string{`10`, `1.5`}},
		{"length in runes", `{"minLength":2,"maxLength":3}`, []string{`"éé"`, `"😀😀😀"`, `"\ud83d\ude00\u00e9"`, `7`}, []string{`"é"`, `"abcd"`, `"😀😀😀😀"`}},
		{"pattern", `{"pattern":"^[a-z]+\\d$"}`, []string{`"ab1"`, `"a\u0031"`, `1`}, []string{`"AB1"`, `"ab"`}},
		{"pattern unanchored", `{"pattern":"b"}`, []string{`"abc"`}, []string{`"ac"`}},
		{"pattern unicode", `{"pattern":"^\\p{L}+$"}`, []string{`"héllo"`}, []string{`"h1"`}},
		{"properties", `{"properties":{"a":{"type":"integer"},"b":{"type":"string"}}}`, []string{`{}`, `{"a":1,"b":"x","c":null}`, `[1]`}, []string{`{"a":"1"}`, `{"b":2}`}},
		{"escaped property names", `{"properties":{"a/b":{"type":"integer"},"é":{"type":"string"}}}`, []string{`{"a\/b":1,"\u00e9":"x"}`}, []string{`{"a\u002fb":"1"}`, `{"\u00e9":1}`}},
		{"required", `{"required":["a","b"]}`, []string{`{"a":1,"b":null}`, `[]`}, []string{`{"a":1}`, `{}`, ``}},
		{"additionalProperties false", `{"properties":{"a":{}},"additionalProperties":false}`, []string{`{"a":1}`, `{}`}, []string{`{"b":1}`, `{"a":1,"c":2}`}},
		{"additionalProperties schema", `{"properties":{"a":{}},"additionalProperties":{"type":"integer"}}`, []string{`{"a":"x","b":1}`}, []string{`{"b":"1"}`}},
		{"patternProperties", `{"patternProperties":{"^n_":{"type":"integer"},"x$":{"minimum":5}},"additionalProperties":false}`, []string{`{"n_a":1,"zx":9,"n_x":6}`}, []string{`{"n_a":"1"}`, `{"m":1}`, `{"n_x":1}`}},
		{"propertyNames", `{"propertyNames":{"maxLength":2,"pattern":"^[a-z]"}}`, []string{`{"ab":1,"c":2}`, `{}`}, []string{`{"abc":1}`, `{"1":1}`}},
		{"minProperties maxProperties", `{"minProperties":1,"maxProperties":2}`, []string{`{"a":1}`, `{"a":1,"b":2}`}, []string{`{}`, `{"a":1,"b":2,"c":3}`}},
		{"dependentRequired", `{"dependentRequired":{"a":["b","c"]}}`, []string{`{"b":1}`, `{"a":1,"b":2,"c":3}`}, []string{`{"a":1}`, `{"a":1,"b":2}`}},
		{"dependentSchemas", `{"dependentSchemas":{"a":{"required":["c"],"properties":{"c":{"type":"string"}}}}}`, []string{`{"b":1}`, `{"a":1,"c":"x"}`}, []string{`{"a":1}`, `{"a":1,"c":2}`}},
		{"items", `{"items":{"type":"integer"}}`, []string{`[]`, `[1,2]`, `{"a":"b"}`}, []string{`[1,"2"]`, `[1.5]`}},
		{"prefixItems items false", `{"prefixItems":[{"type":"integer"},{"type":"string"}],"items":false}`, []string{`[1,"a"]`, `[1]`, `[]`}, []string{`[1,"a",true]`, `["a"]`}},
		{"minItems maxItems", `{"minItems":1,"maxItems":2}`, []string{`[1]`, `[1,2]`}, []string{`[]`, `[1,2,3]`}},
		{"uniqueItems", `{"uniqueItems":true}`, []string{`[1,2,"1",{"a":1},{"a":2},[1],[1,1]]`, `[]`}, []string{`[1,1.0]`, `[{"a":1,"b":2},{"b":2,"a":1}]`, `[[1,"a"],[1,"a"]]`, `[0,-0]`}},
		{"contains", `{"contains":{"type":"integer"},"minContains":2,"maxContains":3}`, []string{`[1,2,"a"]`, `[1,2,3]`}, []string{`[1,"a"]`, `[1,2,3,4]`, `[]`}},
		{"contains default minimum", `{"contains":{"const":"x"}}`, []string{`["a","x"]`}, []string{`["a"]`, `[]`}},
		{"minContains zero", `{"contains":{"type":"integer"},"minContains":0,"maxContains":1}`, []string{`["a"]`, `[]`, `[1]`}, []string{`[1,2]`}},
		{"ref defs", `{"$defs":{"pos":{"type":"integer","minimum":1}},"properties":{"n":{"$ref":"#/$defs/pos"}}}`, []string{`{"n":1}`}, []string{`{"n":0}`, `{"n":"1"}`}},
		{"ref anchor", `{"$defs":{"s":{"$anchor":"str","type":"string"}},"items":{"$ref":"#str"}}`, []string{`["a"]`}, []string{`[1]`}},
		{"ref with siblings", `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","maxLength":2}`, []string{`"ab"`}, []string{`"abc"`, `1`}},
		{"ref id", `{"$id":"https://example.com/root.json","$defs":{"s":{"$id":"s.json","type":"string"}},"items":{"$ref":"s.json"}}`, []string{`["a"]`}, []string{`[1]`}},
		{"ref escaped pointer", `{"$defs":{"a/b":{"type":"integer"},"c~d":{"type":"string"}},"prefixItems":[{"$ref":"#/$defs/a~1b"},{"$ref":"#/$defs/c~0d"}]}`, []string{`[1,"x"]`}, []string{`["x"]`, `[1,2]`}},
		{"recursive tree", `{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#"}}},"required":["v"]}`,
			[]string{`{"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4,"kids":[]}]}]}`}, []string{`{"v":1,"kids":[{"v":2},{"kids":[]}]}`, `{"v":1,"kids":[{"v":"x"}]}`}},
		{"allOf", `{"allOf":[{"type":"integer"},{"minimum":2}]}`, []string{`2`}, []string{`1`, `2.5`}},
		{"anyOf", `{"anyOf":[{"type":"integer"},{"type":"string","minLength":2}]}`, []string{`1`, `"ab"`}, []string{`"a"`, `1.5`}},
		{"oneOf", `{"oneOf":[{"type":"integer"},{"minimum":2}]}`, []string{`1`, `2.5`}, []string{`3`, `0.5`}},
		{"empty anyOf", `{"anyOf":[]}`, nil, []string{`1`}},
		{"not", `{"not":{"type":"string"}}`, []string{`1`, `{}`}, []string{`"a"`}},
		{"if then else", `{"if":{"properties":{"k":{"const":"n"}},"required":["k"]},"then":{"properties":{"v":{"type":"number"}}},"else":{"properties":{"v":{"type":"string"}}}}`,
			[]string{`{"k":"n","v":1}`, `{"k":"s","v":"x"}`, `{"v":"x"}`}, []string{`{"k":"n","v":"x"}`, `{"v":1}`}},
		{"if then only", `{"if":{"type":"integer"},"then":{"minimum":5}}`, []string{`5`, `"a"`}, []string{`4`}},
		{"true schema", `true`, []string{`1`, `{}`, `[[]]`}, nil},
		{"false schema", `false`, nil, []string{`1`, `{}`}},
		{"false property", `{"properties":{"a":false}}`, []string{`{"b":1}`}, []string{`{"a":null}`}},
		{"format is an annotation", `{"format":"email","items":{"format":"date-time"}}`, []string{`"nope"`, `["nope"]`}, nil},
		{"unevaluatedProperties", `{"allOf":[{"properties":{"a":{}}}],"properties":{"b":{"type":"integer"}},"unevaluatedProperties":false}`,
			[]string{`{"a":1,"b":2}`}, []string{`{"c":1}`, `{"b":"x"}`}},
		{"nested unevaluatedItems", `{"properties":{"l":{"prefixItems":[{"type":"integer"}],"unevaluatedItems":false}},"required":["l"]}`,
			[]string{`{"l":[1]}`}, []string{`{"l":[1,2]}`, `{"l":["x"]}`, `{}`}},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"integer"}],"additionalItems":false}`, []string{`[1]`}, []string{`["x"]`, `[1,2]`}},
		{"dynamicRef", `{"$dynamicAnchor":"node","type":"object","properties":{"kid":{"$dynamicRef":"#node"}}}`, []string{`{"kid":{"kid":{}}}`}, []string{`{"kid":{"kid":1}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustCompile(t, tt.schema)
			rs := mustResolve(t, tt.schema)
			for _, doc := range tt.valid {
				if err := v.Validate([]byte(doc)); err != nil {
					t.Errorf("Validate(%s) = %v, want nil", doc, err)
				}
				if err := reference(rs, []byte(doc)); err != nil {
					t.Errorf("jsonschema-go rejects %s: %v", doc, err)
				}
			}
			for _, doc := range tt.invalid {
				var ve *ValidationError
				if err := v.Validate([]byte(doc)); !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
					t.Errorf("Validate(%s) = %v, want a *ValidationError", doc, err)
				}
				if reference(rs, []byte(doc)) == nil {
					t.Errorf("jsonschema-go accepts %s", doc)
				}
			}
		})
	}
}

const echoSchema = `{
	"type": "object",
	"properties": {
		"items": {"type": "array", "items": {
			"type": "object",
			"properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
			"required": ["id", "name", "tags"],
			"additionalProperties": false
		}},
		"q": {"type": "string"}
	},
	"required": ["items", "q"],
	"additionalProperties": false
}`

// TestIssues checks that the error names every failing location, in the
// order of the document, with its reason.
func TestIssues(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		doc    string
		want   []Issue
	}{
		{
			name:   "every field",
			schema: echoSchema,
			doc:    `{"items":[{"id":1,"name":"a","tags":[]},{"id":"x","tags":[1,"b",2]},{"id":2.5,"name":"c","tags":[],"color":"red"}],"extra":true}`,
			want: []Issue{
				{"items/1/id", "want integer, got string"},
				{"items/1/tags/0", "want string, got number"},
				{"items/1/tags/2", "want string, got number"},
				{"items/1/name", "required property is missing"},
				{"items/2/id", "want integer, got number 2.5"},
				{"items/2/color", "unexpected property"},
				{"extra", "unexpected property"},
				{"q", "required property is missing"},
			},
		},
		{
			name:   "root",
			schema: echoSchema,
			doc:    `[1]`,
			want:   []Issue{{"", "want object, got array"}},
		},
		{
			name:   "escaped names",
			schema: `{"additionalProperties":{"type":"integer"}}`,
			doc:    `{"a/b":"1","t~":"2","\u00e9":"3"}`,
			want: []Issue{
				{"a~1b", "want integer, got string"},
				{"t~0", "want integer, got string"},
				{"é", "want integer, got string"},
			},
		},
		{
			name:   "bounds",
			schema: `{"properties":{"n":{"minimum":1,"multipleOf":2},"s":{"maxLength":2,"pattern":"^a"},"l":{"minItems":2,"uniqueItems":true},"e":{"enum":["x","y"]},"c":{"const":3}}}`,
			doc:    `{"n":-1,"s":"bcd","l":[1.0],"e":"z","c":4}`,
			want: []Issue{
				{"n", "want >= 1, got -1"},
				{"n", "want a multiple of 2, got -1"},
				{"s", "want at most 2 characters, got 3"},
				{"s", `want a string matching ^a, got "bcd"`},
				{"l", "want at least 2 items, got 1"},
				{"e", `want one of ["x", "y"], got "z"`},
				{"c", "want 3, got 4"},
			},
		},
		{
			name:   "counts of one are singular",
			schema: `{"properties":{"s":{"minLength":1},"l":{"maxItems":1},"o":{"minProperties":1},"p":{"maxProperties":0}}}`,
			doc:    `{"s":"","l":[1,2],"o":{},"p":{"a":1}}`,
			want: []Issue{
				{"s", "want at least 1 character, got 0"},
				{"l", "want at most 1 item, got 2"},
				{"o", "want at least 1 property, got 0"},
				{"p", "want at most 0 properties, got 1"},
			},
		},
		{
			name:   "anyOf explains the alternative of the right type",
			schema: `{"properties":{"p":{"anyOf":[{"type":"string"},{"type":"object","properties":{"x":{"type":"integer"}},"required":["y"]}]}}}`,
			doc:    `{"p":{"x":"1"}}`,
			want: []Issue{
				{"p/x", "want integer, got string"},
				{"p/y", "required property is missing"},
			},
		},
		{
			name:   "anyOf without a single candidate",
			schema: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
			doc:    `true`,
			want:   []Issue{{"", "want a match for one of the 2 alternatives of anyOf, got none"}},
		},
		{
			name:   "oneOf matching two",
			schema: `{"oneOf":[{"type":"integer"},{"minimum":0}]}`,
			doc:    `1`,
			want:   []Issue{{"", "want a match for exactly one of the 2 alternatives of oneOf, got alternatives 0 and 1"}},
		},
		{
			name:   "oneOf matching none",
			schema: `{"oneOf":[{"type":"integer"},{"type":"string"}]}`,
			doc:    `true`,
			want:   []Issue{{"", "want a match for exactly one of the 2 alternatives of oneOf, got none"}},
		},
		{
			name:   "not",
			schema: `{"not":{"type":"integer"}}`,
			doc:    `1`,
			want:   []Issue{{"", "want no match for the schema of not, got one"}},
		},
		{
			name:   "false schema",
			schema: `{"properties":{"a":false}}`,
			doc:    `{"a":[]}`,
			want:   []Issue{{"a", "want no value (the schema is false), got array"}},
		},
		{
			name:   "propertyNames",
			schema: `{"propertyNames":{"maxLength":2}}`,
			doc:    `{"abc":1}`,
			want:   []Issue{{"abc", `want a name allowed by propertyNames, got "abc"`}},
		},
		{
			name:   "uniqueItems",
			schema: `{"uniqueItems":true}`,
			doc:    `[1,2,1.0]`,
			want:   []Issue{{"", "want unique items, got items 0 and 2 equal"}},
		},
		{
			name:   "number out of range",
			schema: `{"type":"number"}`,
			doc:    `1e400`,
			want:   []Issue{{"", "want a number within the range of a 64-bit float (about ±1.8e308), got 1e400"}},
		},
		{
			name:   "integer out of range, bounded",
			schema: `{"type":"object","properties":{"n":{"type":"integer","maximum":10}}}`,
			doc:    `{"n":1e400,"m":-1E+309}`,
			want: []Issue{
				{"n", "want a number within the range of a 64-bit float (about ±1.8e308), got 1e400"},
				{"m", "want a number within the range of a 64-bit float (about ±1.8e308), got -1E+309"},
			},
		},
		{
			name:   "number out of range where nothing is checked",
			schema: `true`,
			doc:    `{"a":[0,-1e309],"b\u0062":{"c":1e999}}`,
			want: []Issue{
				{"a/1", "want a number within the range of a 64-bit float (about ±1.8e308), got -1e309"},
				{"bb/c", "want a number within the range of a 64-bit float (about ±1.8e308), got 1e999"},
			},
		},
		{
			name:   "number out of range under a fallback",
			schema: `{"properties":{"o":{"unevaluatedProperties":false}}}`,
			doc:    `{"o":{"a":1e400}}`,
			want:   []Issue{{"o/a", "want a number within the range of a 64-bit float (about ±1.8e308), got 1e400"}},
		},
		{
			name:   "dependentRequired",
			schema: `{"dependentRequired":{"card":["cvv"]}}`,
			doc:    `{"card":"1234"}`,
			want:   []Issue{{"cvv", `required property is missing (required when "card" is present)`}},
		},
		{
			name:   "duplicates in allOf reported once",
			schema: `{"allOf":[{"type":"string"},{"type":"string"}]}`,
			doc:    `1`,
			want:   []Issue{{"", "want string, got number"}},
		},
		{
			name:   "fallback",
			schema: `{"properties":{"o":{"properties":{"a":{}},"unevaluatedProperties":false}}}`,
			doc:    `{"o":{"a":1,"b":2}}`,
			want:   []Issue{{"o", `not: validated against <anonymous schema>`}}, // jsonschema-go's text
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustCompile(t, tt.schema)
			err := v.Validate([]byte(tt.doc))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want a *ValidationError", err)
			}
			if len(ve.Issues) != len(tt.want) {
				t.Fatalf("got issues\n%q\nwant\n%q", ve.Issues, tt.want)
			}
			for i := range tt.want {
				if ve.Issues[i] != tt.want[i] {
					t.Errorf("issue %d = %q, want %q", i, ve.Issues[i], tt.want[i])
				}
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "schema: invalid value: ") {
				t.Errorf("Error() = %q, want the schema: invalid value: prefix", msg)
			}
			for _, is := range tt.want {
				if !strings.Contains(msg, is.String()) {
					t.Errorf("Error() = %q does not name %q", msg, is)
				}
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	v := mustCompile(t, echoSchema)
	err := v.Validate([]byte(`{"items":[{"id":1,"name":2,"tags":[]}]}`))
	want := "schema: invalid value: items/0/name: want string, got number; q: required property is missing"
	if err == nil || err.Error() != want {
		t.Errorf("Error() = %v, want %q", err, want)
	}
	err = mustCompile(t, `{"type":"object"}`).Validate([]byte(`"x"`))
	if want := "schema: invalid value: (root): want object, got string"; err == nil || err.Error() != want {
		t.Errorf("Error() = %v, want %q", err, want)
	}
}

func TestSyntaxErrors(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	tests := []struct {
		name, schema, doc, msg string
		offset                 int
	}{
		{"trailing comma", `true`, `{"a":1,}`, "expected a property name", 7},
		{"missing colon", `true`, `{"a" 1}`, "expected : after property name", 5},
		{"missing comma", `{"items":{"type":"integer"}}`, `[1 2]`, "expected , or ] after array element", 3},
		{"control character", `{"type":"string"}`, "\"a\x01\"", "control character in string", 0},
		{"bad escape", `true`, `"\x"`, "invalid escape in string", 0},
		{"bad unicode escape", `true`, `"\u12g4"`, `invalid \u escape in string`, 0},
		{"unterminated", `true`, `{"a":"b`, "unterminated string", 5},
		{"bad number", `{"type":"number"}`, `01`, "data after the JSON value", 1},
		{"bad fraction", `true`, `[1.]`, "invalid character", 1},
		{"trailing data", `true`, `{} {}`, "data after the JSON value", 3},
		{"whitespace only", `true`, `  `, "no JSON value", 2},
		{"duplicate known", `{"properties":{"a":{}}}`, `{"a":1,"a":2}`, `duplicate property "a"`, 7},
		{"duplicate unknown", `{"properties":{"a":{}}}`, `{"b":1,"c":0,"b":2}`, `duplicate property "b"`, 13},
		{"duplicate escaped", `true`, `{"x":{"é":1,"\u00e9":2}}`, `duplicate property "é"`, 13},
		{"duplicate in a large object", `true`, `{` + manyKeys(40) + `,"k07":0}`, `duplicate property "k07"`, 0},
		{"too deep", `true`, deep, "exceeded max depth", maxDepth},
		{"bad literal", `true`, `[tru]`, "invalid literal", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustCompile(t, tt.schema)
			err := v.Validate([]byte(tt.doc))
			var se *SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("Validate = %v, want a *SyntaxError", err)
			}
			if se.Msg != tt.msg || tt.offset > 0 && se.Offset != tt.offset {
				t.Errorf("got %q at %d, want %q at %d", se.Msg, se.Offset, tt.msg, tt.offset)
			}
			if _, err := v.Process([]byte(tt.doc), true); !errors.Is(err, ErrSyntax) {
				t.Errorf("Process = %v, want a syntax error", err)
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + string(rune('0'+i/10)) + string(rune('0'+i%10)) + `":0`)
	}
	return b.String()
}

func TestRecursiveSchemaDoesNotHang(t *testing.T) {
	v := mustCompile(t, `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v"]}},"$ref":"#/$defs/node"}`)
	const depth = 2000
	doc := strings.Repeat(`{"v":1,"kids":[`, depth) + `{"v":"leaf"}` + strings.Repeat(`]}`, depth)
	var ve *ValidationError
	if err := v.Validate([]byte(doc)); !errors.As(err, &ve) || len(ve.Issues) != 1 || !strings.HasSuffix(ve.Issues[0].Path, "kids/0/v") {
		t.Fatalf("Validate = %v, want one issue at the leaf", err)
	}
	if err := v.Validate([]byte(strings.ReplaceAll(doc, `"leaf"`, `2`))); err != nil {
		t.Fatalf("Validate = %v, want nil", err)
	}
}

// TestWorkIsBounded checks that alternatives nested through $ref cannot
// make validation take exponential time.
func TestWorkIsBounded(t *testing.T) {
	v := mustCompile(t, `{"anyOf":[{"type":"array","items":{"$ref":"#"}},{"type":"array","items":{"$ref":"#"}},{"type":"array","items":{"$ref":"#"}}]}`)
	doc := strings.Repeat("[", 40) + "1" + strings.Repeat("]", 40)
	if err := v.Validate([]byte(doc)); !errors.Is(err, ErrTooComplex) {
		t.Fatalf("Validate = %v, want ErrTooComplex", err)
	}
	if err := v.Validate([]byte(`[[[]]]`)); err != nil {
		t.Fatalf("Validate = %v, want nil", err)
	}
}

func TestCompile(t *testing.T) {
	t.Run("inputs", func(t *testing.T) {
		const text = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`
		var js jsonschema.Schema
		if err := json.Unmarshal([]byte(text), &js); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			t.Fatal(err)
		}
		for name, in := range map[string]any{
			"*jsonschema.Schema": &js,
			"json.RawMessage":    json.RawMessage(text),
			"[]byte":             []byte(text),
			"map[string]any":     m,
		} {
			v, err := Compile(in)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if v.Validate([]byte(`{"n":1}`)) != nil || v.Validate([]byte(`{"n":"1"}`)) == nil {
				t.Errorf("%s: the schema is not enforced", name)
			}
		}
	})
	t.Run("does not modify the schema", func(t *testing.T) {
		var js jsonschema.Schema
		text := `{"$defs":{"d":{"type":"string","default":"x"}},"properties":{"a":{"$ref":"#/$defs/d"},"b":{"properties":{"c":{"default":1}},"unevaluatedProperties":false}}}`
		if err := json.Unmarshal([]byte(text), &js); err != nil {
			t.Fatal(err)
		}
		before, _ := json.Marshal(&js)
		v, err := Compile(&js)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := v.ApplyDefaults([]byte(`{"b":{}}`)); err != nil {
			t.Fatal(err)
		}
		if after, _ := json.Marshal(&js); string(after) != string(before) {
			t.Errorf("schema changed:\n%s\n%s", before, after)
		}
	})
	errs := []struct {
		name, schema string
		want         []error
	}{
		{"remote ref", `{"properties":{"a":{"$ref":"https://example.com/a.json"}}}`, []error{ErrInvalidSchema, ErrRemoteRef}},
		{"relative remote ref", `{"$ref":"other.json#/x"}`, []error{ErrInvalidSchema}},
		{"missing def", `{"$ref":"#/$defs/nope"}`, []error{ErrInvalidSchema}},
		{"self ref at root", `{"$ref":"#"}`, []error{ErrCircular}},
		{"cycle through allOf", `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, []error{ErrCircular}},
		{"cycle through not", `{"not":{"$ref":"#"}}`, []error{ErrCircular}},
		{"dynamic cycle", `{"$dynamicAnchor":"a","$dynamicRef":"#a"}`, []error{ErrCircular}},
		{"bad pattern", `{"pattern":"("}`, []error{ErrInvalidSchema}},
		{"bad type", `{"type":1}`, []error{ErrInvalidSchema}},
		{"not json", `{"type":`, []error{ErrInvalidSchema}},
		{"nil", ``, []error{ErrInvalidSchema}},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			var in any = []byte(tt.schema)
			if tt.schema == "" {
				in = nil
			}
			_, err := Compile(in)
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("Compile = %v, want %v", err, w)
				}
			}
		})
	}
	t.Run("recursion through properties compiles", func(t *testing.T) {
		v := mustCompile(t, `{"properties":{"a":{"$ref":"#"}},"additionalProperties":{"$ref":"#"}}`)
		if err := v.Validate([]byte(`{"a":{"a":{"b":{}}}}`)); err != nil {
			t.Error(err)
		}
	})
}

func TestFallbacks(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"object"}`, ""},
		{`{"properties":{"o":{"unevaluatedProperties":false,"unevaluatedItems":true}}}`, "/properties/o: unevaluatedProperties, unevaluatedItems"},
		{`{"$schema":"http://json-schema.org/draft-07/schema#"}`, ": draft-07 ($schema)"},
		{`{"$dynamicAnchor":"n","properties":{"k":{"$dynamicRef":"#n"}}}`, ": $dynamicRef"},
	}
	for _, tt := range tests {
		got := strings.Join(mustCompile(t, tt.schema).Fallbacks(), "|")
		if got != tt.want {
			t.Errorf("Fallbacks(%s) = %q, want %q", tt.schema, got, tt.want)
		}
	}
}

func TestValidAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	v := mustCompile(t, echoSchema)
	doc := echoDoc(50)
	for name, f := range map[string]func(){
		"Validate":        func() { _ = v.Validate(doc) },
		"Process strict":  func() { _, _ = v.Process(doc, false) },
		"Process lenient": func() { _, _ = v.Process(doc, true) },
		"Coerce":          func() { _, _, _ = v.Coerce(doc) },
		"ApplyDefaults":   func() { _, _, _ = v.ApplyDefaults(doc) },
	} {
		f() // fill the state pool
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations, want 0", name, n)
		}
	}
	if err := v.Validate(doc); err != nil {
		t.Fatal(err)
	}
}

// TestMultipleOfIsExact checks multipleOf against the decimal values, where
// jsonschema-go divides float64s (a known divergence, kept out of
// FuzzDifferential).
func TestMultipleOfIsExact(t *testing.T) {
	tests := []struct {
		schema  string
		doc     string
		valid   bool
		refSays bool // what jsonschema-go answers
	}{
		{`{"multipleOf":0.01}`, `19.99`, true, false},
		{`{"multipleOf":0.01}`, `19.999`, false, false},
		{`{"multipleOf":0.1}`, `0.3`, true, false},
		{`{"multipleOf":0.05}`, `4.35`, true, false},
		{`{"multipleOf":3}`, `1e21`, false, true},
		{`{"multipleOf":3}`, `3e21`, true, true},
		{`{"multipleOf":1e-7}`, `3e-7`, true, true},
		{`{"multipleOf":10}`, `123456789012345678901234567890`, true, true},
		{`{"multipleOf":7}`, `123456789012345678901234567891`, false, true},
		{`{"multipleOf":0.5}`, `-1.25`, false, false},
		{`{"multipleOf":0.5}`, `-0`, true, true},
		{`{"multipleOf":2.5}`, `7.50`, true, true},
	}
	for _, tt := range tests {
		v := mustCompile(t, tt.schema)
		if got := v.Validate([]byte(tt.doc)) == nil; got != tt.valid {
			t.Errorf("%s: Validate(%s) valid = %v, want %v", tt.schema, tt.doc, got, tt.valid)
		}
		if got := reference(mustResolve(t, tt.schema), []byte(tt.doc)) == nil; got != tt.refSays {
			t.Errorf("%s: jsonschema-go on %s: valid = %v, want %v", tt.schema, tt.doc, got, tt.refSays)
		}
	}
}

// TestDecimalMultipleOf compares the machine-integer multipleOf with
// math/big on many small decimals.
func TestDecimalMultipleOf(t *testing.T) {
	nums := []string{"0", "1", "2", "3", "5", "10", "0.1", "0.3", "0.25", "1.5", "2.5", "12.5", "0.001", "1e3", "1e-3", "3e-7", "7.5e2", "0.07", "1000000007", "9999999999999999999", "1.2e-15"}
	for _, a := range nums {
		for _, b := range nums {
			if b == "0" {
				continue
			}
			da, ok1 := parseDecimal([]byte(a))
			db, ok2 := parseDecimal([]byte(b))
			if !ok1 || !ok2 {
				t.Fatalf("parseDecimal(%s or %s) failed", a, b)
			}
			if got, want := da.multipleOf(db), bigMultipleOf([]byte(a), []byte(b)); got != want {
				t.Errorf("%s multipleOf %s = %v, want %v", a, b, got, want)
			}
		}
	}
}

// TestConcurrentUse runs the entry points of one Validator from several
// goroutines (run with -race), checking each result.
func TestConcurrentUse(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"n":{"type":"integer"},"o":{"properties":{"d":{"default":1}},"unevaluatedProperties":false}},"required":["n"]}`)
	docs := []struct {
		in, want string
		lenient  bool
	}{
		{`{"n":1}`, `{"n":1,"o":{"d":1}}`, false}, // "o" made for its default, as jsonschema-go does
		{`{"n":"2"}`, `{"n":2,"o":{"d":1}}`, true},
		{`{"n":3,"o":{}}`, `{"n":3,"o":{"d":1}}`, false},
		{`{"n":"x"}`, "", true},
		{`{"n":4,"o":{"e":1}}`, "", false},
	}
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 200 {
				d := docs[(g+i)%len(docs)]
				out, err := v.Process([]byte(d.in), d.lenient)
				if (d.want == "") != (err != nil) || d.want != "" && string(out) != d.want {
					t.Errorf("Process(%s) = %s, %v; want %s", d.in, out, err, d.want)
					return
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
}

// TestManyNames checks objects whose schema knows more than 64 names.
func TestManyNames(t *testing.T) {
	var props, doc []string
	for i := range 100 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"integer"}`, i))
		if i%3 == 0 && i != 90 && i != 99 {
			doc = append(doc, fmt.Sprintf(`"p%d":%d`, i, i))
		}
	}
	schema := `{"properties":{` + strings.Join(props, ",") + `},"required":["p0","p99","p98"],` +
		`"dependentRequired":{"p90":["p91"]},"dependentSchemas":{"p99":{"required":["p97"]}},"additionalProperties":false}`
	v := mustCompile(t, schema)
	rs := mustResolve(t, schema)
	tests := []struct {
		doc  string
		want []Issue
	}{
		{`{` + strings.Join(doc, ",") + `,"p98":1,"p99":1,"p97":1}`, nil},
		{`{` + strings.Join(doc, ",") + `,"p99":1,"p97":1}`, []Issue{{"p98", "required property is missing"}}},
		{`{"p0":0,"p99":1,"p98":2,"p90":3}`, []Issue{{"p91", `required property is missing (required when "p90" is present)`}, {"p97", "required property is missing"}}},
		{`{"p0":0,"p99":1,"p98":"x","p100":1}`, []Issue{{"p98", "want integer, got string"}, {"p100", "unexpected property"}, {"p97", "required property is missing"}}},
	}
	for _, tt := range tests {
		err := v.Validate([]byte(tt.doc))
		if (err == nil) != (reference(rs, []byte(tt.doc)) == nil) {
			t.Errorf("Validate(%s) = %v, jsonschema-go disagrees", tt.doc, err)
		}
		var got []Issue
		var ve *ValidationError
		if errors.As(err, &ve) {
			got = ve.Issues
		} else if err != nil {
			t.Fatalf("Validate(%s) = %v", tt.doc, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("Validate(%s) issues = %q, want %q", tt.doc, got, tt.want)
		}
	}
	if err := v.Validate([]byte(`{"p1":1,"p1":2}`)); !errors.Is(err, ErrSyntax) {
		t.Errorf("duplicate p1: %v", err)
	}
	if err := v.Validate([]byte(`{"p70":1,"p70":2}`)); !errors.Is(err, ErrSyntax) {
		t.Errorf("duplicate p70: %v", err)
	}
}
