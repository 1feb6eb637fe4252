package schema

import (
	"encoding/json"
	"testing"
)

func TestApplyDefaults(t *testing.T) {
	tests := []struct {
		name, schema, in, want string // want "" means unchanged
		// jsonschema-go applies the same defaults (else it applies a subset).
		sameAsRef bool
	}{
		{"missing property", `{"properties":{"a":{"default":1},"b":{"default":"x"}}}`, `{"b":"y"}`, `{"b":"y","a":1}`, true},
		{"empty object", `{"properties":{"a":{"default":[1,{"k":null}]}}}`, `{}`, `{"a":[1,{"k":null}]}`, true},
		{"empty input", `{"properties":{"a":{"default":1}}}`, ``, `{"a":1}`, true},
		{"null input", `{"properties":{"a":{"default":1}}}`, `null`, `{"a":1}`, true},
		{"present property", `{"properties":{"a":{"default":1}}}`, `{"a":null}`, "", true},
		{"required property", `{"properties":{"a":{"default":1}},"required":["a"]}`, `{}`, "", true},
		{"nested present object", `{"properties":{"o":{"properties":{"x":{"default":true}}}}}`, `{"o":{"y":1}}`, `{"o":{"y":1,"x":true}}`, true},
		{"missing parent is created", `{"properties":{"o":{"properties":{"x":{"default":true}}}}}`, `{}`, `{"o":{"x":true}}`, true},
		{"default completed by its schema", `{"properties":{"o":{"default":{"a":1},"properties":{"b":{"default":2}}}}}`, `{}`, `{"o":{"a":1,"b":2}}`, true},
		{"not an object", `{"properties":{"a":{"default":1}}}`, `[1]`, "", true},
		{"escaped names", `{"properties":{"é":{"default":1},"a\"b":{"default":"<&>"}}}`, `{"\u00e9":0}`, `{"\u00e9":0,"a\"b":"<&>"}`, true},
		{"big numbers kept exact", `{"properties":{"a":{"default":12345678901234567890}}}`, `{}`, `{"a":12345678901234567890}`, true},
		{"through $ref", `{"$defs":{"o":{"properties":{"x":{"default":"d"}}}},"properties":{"o":{"$ref":"#/$defs/o"}}}`, `{"o":{}}`, `{"o":{"x":"d"}}`, false},
		{"root $ref", `{"$ref":"#/$defs/r","$defs":{"r":{"properties":{"a":{"default":1}}}}}`, `{}`, `{"a":1}`, false},
		{"allOf", `{"allOf":[{"properties":{"a":{"default":1}}},{"properties":{"b":{"default":2}}}]}`, `{}`, `{"a":1,"b":2}`, false},
		{"own default first", `{"properties":{"a":{"default":"own"}},"allOf":[{"properties":{"a":{"default":"allOf"}}}]}`, `{}`, `{"a":"own"}`, true},
		{"required elsewhere", `{"properties":{"a":{"default":1}},"allOf":[{"required":["a"]}]}`, `{}`, `{"a":1}`, true},
		{"array items", `{"properties":{"l":{"items":{"properties":{"x":{"default":0}}}}}}`, `{"l":[{},{"x":5},1]}`, `{"l":[{"x":0},{"x":5},1]}`, false},
		{"required parent descended", `{"properties":{"o":{"properties":{"x":{"default":0}}}},"required":["o"]}`, `{"o":{}}`, `{"o":{"x":0}}`, false},
		{"recursive schema", `{"properties":{"v":{"default":0},"kids":{"items":{"$ref":"#"}}}}`, `{"kids":[{},{"kids":[{}]}]}`, `{"kids":[{"v":0},{"kids":[{"v":0}],"v":0}],"v":0}`, false},
		{"default of a reference's target", `{"$defs":{"p":{"enum":["low","high"],"default":"low"}},"properties":{"p":{"$ref":"#/$defs/p"}}}`, `{}`, `{"p":"low"}`, false},
		{"default beside the reference wins", `{"$defs":{"p":{"default":"low"}},"properties":{"p":{"$ref":"#/$defs/p","default":"high"}}}`, `{}`, `{"p":"high"}`, true},
		{"target object not created for its properties' defaults", `{"$defs":{"o":{"properties":{"x":{"default":1}}}},"properties":{"o":{"$ref":"#/$defs/o"}}}`, `{}`, "", false},
		{"recursive default does not grow", `{"properties":{"p":{"$ref":"#","default":{}}}}`, `{}`, `{"p":{}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustCompile(t, tt.schema)
			in := []byte(tt.in)
			out, changed, err := v.ApplyDefaults(in)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if changed || len(in) > 0 && &out[0] != &in[0] {
					t.Fatalf("ApplyDefaults(%s) = %s, %v; want the input itself", in, out, changed)
				}
			} else if !changed || string(out) != tt.want {
				t.Fatalf("ApplyDefaults(%s) = %s, %v; want %s", in, out, changed, tt.want)
			}
			// Compare with jsonschema-go's ApplyDefaults.
			var ref, orig any = map[string]any{}, map[string]any{}
			if len(in) > 0 && string(in) != "null" {
				if err := json.Unmarshal(in, &ref); err != nil {
					t.Fatal(err)
				}
				json.Unmarshal(in, &orig)
			}
			if _, ok := ref.(map[string]any); !ok {
				return
			}
			if err := mustResolve(t, tt.schema).ApplyDefaults(&ref); err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(out, &got); err != nil {
				if len(out) == 0 {
					got = map[string]any{}
				} else {
					t.Fatal(err)
				}
			}
			if msg := covers(got, ref, orig, ""); msg != "" {
				t.Errorf("does not apply what jsonschema-go applies (%s): %s", jsonText(ref), msg)
			}
			if tt.sameAsRef {
				if gb, rb := jsonText(got), jsonText(ref); gb != rb {
					t.Errorf("got %s, jsonschema-go %s", gb, rb)
				}
			}
		})
	}
}

// TestDefaultsAreCopies checks that a document built from defaults shares
// nothing with the schema or with another document.
func TestDefaultsAreCopies(t *testing.T) {
	v := mustCompile(t, `{"properties":{"a":{"default":{"list":[1,2]}}}}`)
	first, _, err := v.ApplyDefaults([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		first[i] = 'X'
	}
	second, _, err := v.ApplyDefaults([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(second) != `{"a":{"list":[1,2]}}` {
		t.Fatalf("second ApplyDefaults = %s", second)
	}
}
