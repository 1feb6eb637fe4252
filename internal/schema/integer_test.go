package schema

import (
	"errors"
	"strconv"
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

// TestOverflows checks overflows against strconv.ParseFloat, on the edges
// of the float64 range and on numbers written in many ways.
func TestOverflows(t *testing.T) {
	limit := "0." + float64Limit
	docs := []string{
		"0", "-0", "0.0", "0e999999999999", "1e308", "1e309", "-1e309", "9.99e308", "1.7976931348623157e308",
		"1.7976931348623158e308", "1.797693134862315807937289714053e308", "1.797693134862315807937289714054e308",
		limit + "e309", "-" + limit + "e309", limit + "0000e309", limit + "0001e309",
		"0." + float64Limit[:308] + "1e309", "0." + float64Limit[:308] + "3e309",
		"17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797758720709633028641669288791094655554785194040263065748867150582068190890200070838367627385484581771153176447573027006985557136695962284291481986083493647529271907416844436551070434271155969950809304288017790417449779" + "1",
		"17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797758720709633028641669288791094655554785194040263065748867150582068190890200070838367627385484581771153176447573027006985557136695962284291481986083493647529271907416844436551070434271155969950809304288017790417449779" + "2",
		"0.000001797693134862315807937289714054e314", "1797693134862315807937289714054e278", "1e-400", "1e+400", "1E400",
		"123.456e-999999999999999999", "1e99999999999999999999", "0.1e310", "100e307", "179.7693134862315807937289714054e306",
	}
	for _, d := range docs {
		_, err := strconv.ParseFloat(d, 64)
		if got, want := overflows([]byte(d)), err != nil; got != want {
			t.Errorf("overflows(%.60s) = %v, want %v", d, got, want)
		}
		end, shape := scanNumber([]byte(d), 0)
		if end != len(d) {
			t.Fatalf("%.60s is not a JSON number", d)
		}
		if _, ok := parseNumber([]byte(d), shape); ok != (err == nil) {
			t.Errorf("parseNumber(%.60s) ok = %v, want %v", d, ok, err == nil)
		}
	}
}

// FuzzNumber checks that parseNumber agrees with strconv.ParseFloat, on
// the value and on whether it is in range, for every JSON number.
func FuzzNumber(f *testing.F) {
	for _, s := range []string{"0", "-1.5e3", "1e309", "1.7976931348623158e308", "0.000e-5", "12345678901234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		end, shape := scanNumber([]byte(s), 0)
		if end != len(s) || end <= 0 {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		got, ok := parseNumber([]byte(s), shape)
		if ok != (err == nil) || overflows([]byte(s)) != (err != nil) || got != want {
			t.Fatalf("parseNumber(%q) = %v, %v; ParseFloat: %v, %v", s, got, ok, want, err)
		}
	})
}
