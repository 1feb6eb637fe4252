package middleware

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct {
		in, want string
		err      error
	}{
		{``, ``, nil},
		{`{}`, `{}`, nil},
		{` { "b" : 2 , "a" : 1 } `, `{"a":1,"b":2}`, nil},
		{`{"a":1,"b":2}`, `{"a":1,"b":2}`, nil},
		{`[3, 1, 2]`, `[3,1,2]`, nil},
		{`{"n":1.0,"m":1e2,"k":-0}`, `{"k":-0,"m":1e2,"n":1.0}`, nil},
		{`{"z":{"y":[{"b":true,"a":null}],"x":"s"},"a":[]}`, `{"a":[],"z":{"x":"s","y":[{"a":null,"b":true}]}}`, nil},
		{`"\u0041\n\u00e9\/"`, `"A\né/"`, nil},
		{`{"\u0062":1,"a":2}`, `{"a":2,"b":1}`, nil},
		{`"\u003c\u0001"`, `"<\u0001"`, nil},
		{`"\ud800"`, `"` + "\ufffd" + `"`, nil},
		{"\"\xff\"", `"` + "\ufffd" + `"`, nil},
		{`{"é":1,"e":2,"f":3}`, `{"e":2,"f":3,"é":1}`, nil},
		{`{"a":1,"a":2}`, ``, errDuplicateKey},
		{`{"a":1,"\u0061":2}`, ``, errDuplicateKey},
		{`{"a":{"b":1,"b":1}}`, ``, errDuplicateKey},
		{`{"a":1`, ``, errNotJSON},
		{`{"a":1} x`, ``, errNotJSON},
		{` `, ``, errNotJSON},
		{strings.Repeat("[", maxCanonicalDepth+1) + strings.Repeat("]", maxCanonicalDepth+1), ``, errTooDeep},
		{strings.Repeat("[", maxCanonicalDepth) + strings.Repeat("]", maxCanonicalDepth), strings.Repeat("[", maxCanonicalDepth) + strings.Repeat("]", maxCanonicalDepth), nil},
		{`"` + strings.Repeat("x", maxCanonicalBytes) + `"`, ``, errTooLongToHash},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			got, err := canonicalJSON(nil, []byte(tt.in))
			if !errors.Is(err, tt.err) || string(got) != tt.want {
				t.Errorf("canonicalJSON(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
			}
		})
	}
}

// FuzzCanonicalJSON checks canonicalJSON on any input: it never panics,
// refuses exactly the texts encoding/json refuses (and those with a key
// twice, or too deep), is idempotent, and maps texts that decode to the
// same value (such as json.Marshal's form of the decoded value) to the same
// form. The fuzzer spends up to a minute minimizing each new input (its
// -fuzzminimizetime), during which it reports no executions; pass
// -fuzzminimizetime=5s for a steadier rate.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{
		`{"b":2,"a":1}`, `{ "a" : [1, 2.50, -3e10, true, false, null] }`, `"\u00e9\ud83d\ude00"`,
		`{"a":{"c":{},"b":[]},"\u0061b":"x"}`, `[[[[{"k":"v"}]]]]`, `{"a":1,"a":2}`, `{"<":"&>"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := canonicalJSON(nil, data)
		if err != nil {
			if json.Valid(data) && !errors.Is(err, errDuplicateKey) && !errors.Is(err, errTooDeep) && !errors.Is(err, errTooLongToHash) {
				t.Fatalf("valid JSON %q refused: %v", data, err)
			}
			return
		}
		if len(data) > 0 && !json.Valid(c) {
			t.Fatalf("canonical form %q of %q is not JSON", c, data)
		}
		again, err := canonicalJSON(nil, c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("canonical(canonical(%q)) = %q, %v; want %q", data, again, err, c)
		}
		if len(data) == 0 {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("canonicalJSON accepted %q, which does not decode: %v", data, err)
		}
		remarshalled, err := json.Marshal(v)
		if err != nil {
			return // a number json.Number will not write back
		}
		other, err := canonicalJSON(nil, remarshalled)
		if err != nil || !bytes.Equal(other, c) {
			t.Fatalf("%q and its re-encoding %q: canonical forms %q and %q (%v)", data, remarshalled, c, other, err)
		}
	})
}
