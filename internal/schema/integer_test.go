package schema

import (
	"errors"
	"testing"
)

// TestWholeNumbersAreIntegers checks that a number with no fractional part
// is an integer however it is written (JSON Schema counts values, not
// literals), that Process hands it on as written, strict or lenient, and
// that a number that is not whole, or beyond float64, is refused with a
// message that says why.
func TestWholeNumbersAreIntegers(t *testing.T) {
	const schema = `{"type":"object","properties":{
		"n":{"type":"integer"},
		"b":{"type":"integer","minimum":0,"maximum":100,"multipleOf":5},
		"l":{"type":"array","items":{"type":"integer"}}}}`
	v := mustCompile(t, schema)
	for _, doc := range []string{
		`{"n":10.0}`, `{"n":1e2}`, `{"n":1E2}`, `{"n":1.0e+2}`, `{"n":100.000}`, `{"n":-0.0}`,
		`{"n":0e0}`, `{"n":2.5e1}`, `{"n":1e308}`, `{"n":-12345678901234567890.0}`,
		`{"b":1e2}`, `{"b":5.0}`, `{"b":0.0}`, `{"l":[1.0,2e0,30E-1]}`,
	} {
		t.Run(doc, func(t *testing.T) {
			if err := v.Validate([]byte(doc)); err != nil {
				t.Fatalf("Validate = %v", err)
			}
			for _, lenient := range []bool{false, true} {
				in := []byte(doc)
				out, err := v.Process(in, lenient)
				if err != nil || string(out) != doc || &out[0] != &in[0] {
					t.Errorf("Process(lenient=%v) = %s, %v; want the document itself", lenient, out, err)
				}
			}
		})
	}
	for _, tt := range []struct{ doc, want string }{
		{`{"n":10.5}`, "n: want integer, got number 10.5"},
		{`{"n":1e-1}`, "n: want integer, got number 1e-1"},
		{`{"n":1.0000000000000002}`, "n: want integer, got number 1.0000000000000002"},
		{`{"b":1.5e2}`, "b: want <= 100, got 1.5e2"},
		{`{"b":1e1000}`, "b: want a number within the range of a 64-bit float (about ±1.8e308), got 1e1000"},
		{`{"l":[1.0,2.5]}`, "l/1: want integer, got number 2.5"},
	} {
		t.Run(tt.doc, func(t *testing.T) {
			for _, lenient := range []bool{false, true} {
				_, err := v.Process([]byte(tt.doc), lenient)
				var ve *ValidationError
				if !errors.As(err, &ve) || len(ve.Issues) != 1 || ve.Issues[0].String() != tt.want {
					t.Errorf("Process(lenient=%v) = %v, want %q", lenient, err, tt.want)
				}
			}
		})
	}
}
