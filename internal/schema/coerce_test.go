package schema

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestCoerce(t *testing.T) {
	const obj = `{"type":"object","properties":{
		"n":{"type":"integer"},"f":{"type":"number"},"b":{"type":"boolean"},"z":{"type":"null"},
		"s":{"type":"string"},"ns":{"type":["integer","string"]},"l":{"type":"array","items":{"type":"integer"}},
		"o":{"type":"object","properties":{"x":{"type":"boolean"}}},
		"r":{"$ref":"#/$defs/pos"},"ni":{"type":["null","integer"]}
	},"$defs":{"pos":{"type":"integer","minimum":1}}}`
	tests := []struct {
		name, schema, in, want string // want "" means unchanged
	}{
		{"integer", obj, `{"n":"10"}`, `{"n":10}`},
		{"negative integer", obj, `{"n":"-3"}`, `{"n":-3}`},
		{"integral float for integer", obj, `{"n":"3.0"}`, `{"n":3.0}`},
		{"number", obj, `{"f":"3.14"}`, `{"f":3.14}`},
		{"exponent", obj, `{"f":"1e3"}`, `{"f":1e3}`},
		{"boolean", obj, `{"b":"true","o":{"x":"false"}}`, `{"b":true,"o":{"x":false}}`},
		{"null", obj, `{"z":"null","ni":"null"}`, `{"z":null,"ni":null}`},
		{"escaped string", obj, `{"n":"\u0031\u0032"}`, `{"n":12}`},
		{"inside arrays", obj, `{"l":["1", 2, "3"]}`, `{"l":[1, 2, 3]}`},
		{"through $ref", obj, `{"r":"5"}`, `{"r":5}`},
		{"JSON array in a string", obj, `{"l":"[1,\"2\"]"}`, `{"l":[1,2]}`},
		{"JSON object in a string", obj, `{"o":"{\"x\":\"true\"}"}`, `{"o":{"x":true}}`},
		{"JSON object with spaces", obj, `{"o":" {\"x\":true} "}`, `{"o": {"x":true} }`},
		{"root", `{"type":"array","items":{"type":"number"}}`, `"[\"1.5\"]"`, `[1.5]`},
		{"nested items", `{"items":{"items":{"type":"boolean"}}}`, `[["true"],["false","x"]]`, `[[true],[false,"x"]]`},
		{"prefixItems", `{"prefixItems":[{"type":"integer"},{"type":"string"}],"items":{"type":"boolean"}}`, `["1","2","true"]`, `[1,"2",true]`},
		{"patternProperties", `{"patternProperties":{"^n":{"type":"integer"}},"additionalProperties":{"type":"boolean"}}`, `{"n1":"1","x":"true","n2":"y"}`, `{"n1":1,"x":true,"n2":"y"}`},
		{"allOf", `{"allOf":[{"$ref":"#/$defs/p"},{"required":["a"]}],"$defs":{"p":{"properties":{"a":{"type":"integer"}}}}}`, `{"a":"7"}`, `{"a":7}`},
		{"anyOf picks the alternative that fits", `{"anyOf":[{"type":"boolean"},{"type":"integer"}]}`, `"5"`, `5`},
		{"anyOf in order", `{"anyOf":[{"type":"integer","minimum":10},{"type":"boolean"},{"type":"number"}]}`, `"5"`, `5`},
		{"oneOf", `{"oneOf":[{"type":"object","properties":{"k":{"const":1},"v":{"type":"integer"}},"required":["k"]},{"type":"object","properties":{"k":{"const":2},"v":{"type":"boolean"}},"required":["k"]}]}`, `{"k":2,"v":"true"}`, `{"k":2,"v":true}`},
		{"if then", `{"if":{"required":["n"]},"then":{"properties":{"n":{"type":"integer"}}},"else":{"properties":{"m":{"type":"integer"}}}}`, `{"n":"1","m":"2"}`, `{"n":1,"m":"2"}`},
		{"if else", `{"if":{"required":["n"]},"then":{"properties":{"n":{"type":"integer"}}},"else":{"properties":{"m":{"type":"integer"}}}}`, `{"m":"2"}`, `{"m":2}`},

		{"valid stays", obj, `{"n":1,"s":"10","l":[1]}`, ""},
		{"string wanted", obj, `{"s":"10"}`, ""},
		{"string allowed", obj, `{"ns":"10"}`, ""},
		{"not a number", obj, `{"n":"abc"}`, ""},
		{"fraction for integer", obj, `{"n":"1.5"}`, ""},
		{"spaces", obj, `{"n":" 10"}`, ""},
		{"plus sign", obj, `{"n":"+1"}`, ""},
		{"hex", obj, `{"n":"0x10"}`, ""},
		{"out of range", obj, `{"f":"1e400"}`, ""},
		{"empty", obj, `{"n":""}`, ""},
		{"capitalised boolean", obj, `{"b":"True"}`, ""},
		{"array for an object", obj, `{"o":"[1]"}`, ""},
		{"bad JSON in a string", obj, `{"l":"[1,"}`, ""},
		{"no type", `{"properties":{"a":{"minimum":1}}}`, `{"a":"5"}`, ""},
		{"anyOf valid as is", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `"5"`, ""},
		{"anyOf nothing fits", `{"anyOf":[{"type":"integer","minimum":10},{"type":"boolean"}]}`, `"5"`, ""},
		{"not is left alone", `{"not":{"type":"string"}}`, `"5"`, ""},
		{"empty input", obj, ``, ""},
		{"null input", obj, `null`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustCompile(t, tt.schema)
			in := []byte(tt.in)
			out, changed, err := v.Coerce(in)
			if err != nil {
				t.Fatalf("Coerce: %v", err)
			}
			if tt.want == "" {
				if changed || len(in) > 0 && &out[0] != &in[0] {
					t.Fatalf("Coerce(%s) = %s, %v; want the input itself", in, out, changed)
				}
				return
			}
			if !changed || string(out) != tt.want {
				t.Fatalf("Coerce(%s) = %s, %v; want %s", in, out, changed, tt.want)
			}
			if string(in) != tt.in {
				t.Fatalf("Coerce modified its input")
			}
		})
	}
}

func TestCoerceErrors(t *testing.T) {
	v := mustCompile(t, `{"properties":{"n":{"type":"integer"}}}`)
	for _, in := range []string{`{"n":"1"`, `{"n":"1","n":"2"}`, `{"n":"1"} x`} {
		if _, _, err := v.Coerce([]byte(in)); !errors.Is(err, ErrSyntax) {
			t.Errorf("Coerce(%s) = %v, want a syntax error", in, err)
		}
	}
}

func TestProcess(t *testing.T) {
	const schema = `{"type":"object","properties":{
		"n":{"type":"integer"},
		"mode":{"type":"string","enum":["fast","slow"],"default":"fast"},
		"opts":{"$ref":"#/$defs/opts"}
	},"required":["n"],"additionalProperties":false,
	"$defs":{"opts":{"type":"object","properties":{"retries":{"type":"integer","default":3},"verbose":{"type":"boolean"}}}}}`
	v := mustCompile(t, schema)
	tests := []struct {
		name    string
		in      string
		lenient bool
		want    string // "" with wantErr
		wantErr string
	}{
		{"valid with defaults", `{"n":1}`, false, `{"n":1,"mode":"fast"}`, ""},
		{"defaults through $ref", `{"n":1,"mode":"slow","opts":{}}`, false, `{"n":1,"mode":"slow","opts":{"retries":3}}`, ""},
		{"strict rejects strings", `{"n":"1"}`, false, "", "n: want integer, got string"},
		{"lenient coerces", `{"n":"1","opts":{"verbose":"true"}}`, true, `{"n":1,"opts":{"verbose":true,"retries":3},"mode":"fast"}`, ""},
		{"lenient still fails", `{"n":"one"}`, true, "", "n: want integer, got string"},
		{"every field named", `{"x":1,"opts":{"retries":"x"}}`, true, "", "x: unexpected property; opts/retries: want integer, got string; n: required property is missing"},
		{"no arguments", ``, false, "", "n: required property is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := v.Process([]byte(tt.in), tt.lenient)
			if tt.wantErr != "" {
				if err == nil || err.Error() != "schema: invalid value: "+tt.wantErr {
					t.Fatalf("Process = %s, %v; want error %q", out, err, tt.wantErr)
				}
				return
			}
			if err != nil || !jsonEqual(t, out, []byte(tt.want)) {
				t.Fatalf("Process = %s, %v; want %s", out, err, tt.want)
			}
		})
	}
	t.Run("valid input comes back as it is", func(t *testing.T) {
		in := []byte(`{"n":1,"mode":"slow"}`)
		for _, lenient := range []bool{false, true} {
			out, err := v.Process(in, lenient)
			if err != nil || &out[0] != &in[0] || len(out) != len(in) {
				t.Errorf("Process(lenient=%v) = %s, %v; want the input", lenient, out, err)
			}
		}
	})
}

// jsonEqual reports whether a and b hold equal JSON values.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
