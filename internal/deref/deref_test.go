package deref

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestDereference(t *testing.T) {
	for _, tt := range cases() {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			orig := bytes.Clone(in)
			got, err := Dereference(in, nil)
			if err != nil {
				t.Fatalf("Dereference: %v", err)
			}
			if !bytes.Equal(in, orig) {
				t.Errorf("input modified:\n got %s\nwant %s", in, orig)
			}
			assertSameJSON(t, got, []byte(tt.want))
			again, err := Dereference(bytes.Clone(orig), nil)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("second run = %s, %v; want the same bytes %s", again, err, got)
			}
		})
	}
}

// TestEquivalence validates instances with jsonschema-go against each
// input and its output: each must accept and reject the same ones.
func TestEquivalence(t *testing.T) {
	for _, tt := range cases() {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Dereference([]byte(tt.in), nil)
			if err != nil {
				t.Fatalf("Dereference: %v", err)
			}
			before, after := mustResolve(t, []byte(tt.in)), mustResolve(t, out)
			check := func(inst string, want bool) {
				v := decode(t, inst)
				if err := before.Validate(v); (err == nil) != want {
					t.Fatalf("bad test: input schema on %s: %v, want valid=%v", inst, err, want)
				}
				if err := after.Validate(v); (err == nil) != want {
					t.Errorf("output schema on %s: %v, want valid=%v\noutput: %s", inst, err, want, out)
				}
			}
			for _, inst := range tt.accept {
				check(inst, true)
			}
			for _, inst := range tt.reject {
				check(inst, false)
			}
		})
	}
}

func TestUnchanged(t *testing.T) {
	tests := []struct{ name, in string }{
		{"no $ref", `{"type":"object","properties":{"a":{"type":"string"}},"$defs":{"unused":{}}}`},
		{"$ref only as a property name", `{"type":"object","properties":{"$ref":{"type":"string"}}}`},
		{"$ref only in data", `{"type":"object","enum":[{"$ref":"#/nowhere"}],"x-a":{"$ref":"#"}}`},
		{"escaped $ref only in data", `{"type":"object","const":{"\u0024ref":"#/nowhere"}}`},
		{"remote references only", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}},"$defs":{"b":{}}}`},
		{"$ref that is not a string", `{"type":"object","properties":{"a":{"$ref":5}}}`},
		{"boolean schema", `true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			got, err := Dereference(in, nil)
			if err != nil {
				t.Fatalf("Dereference: %v", err)
			}
			if len(got) != len(in) || &got[0] != &in[0] {
				t.Errorf("Dereference returned %s, not the input slice", got)
			}
		})
	}
}

func TestEscapedRefKey(t *testing.T) {
	in := `{"type":"object","properties":{"a":{"\u0024ref":"#/$defs/A"}},"$defs":{"A":{"type":"integer"}}}`
	got, err := Dereference([]byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	assertSameJSON(t, got, []byte(`{"type":"object","properties":{"a":{"type":"integer"}}}`))
}

// TestOutputBytes pins the exact encoding: the input's key order, number
// literals, and no HTML escaping.
func TestOutputBytes(t *testing.T) {
	in := `{ "type": "object",
		"properties": {"z": {"type": "string", "description": "a <b> & c\u2028"}, "a": {"$ref": "#/$defs/A"}, "m": {"type": "integer", "maximum": 1.50}},
		"$defs": {"A": {"type": "number", "minimum": 0, "multipleOf": 1e-2}} }`
	want := `{"type":"object","properties":{"z":{"type":"string","description":"a <b> & c\u2028"},` +
		`"a":{"type":"number","minimum":0,"multipleOf":1e-2},"m":{"type":"integer","maximum":1.50}}}`
	got, err := Dereference([]byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     error
		location string // for a *RefError
	}{
		{"invalid JSON", `{"$ref":`, ErrInvalidJSON, ""},
		{"trailing data", `{"$ref":"#"} {}`, ErrInvalidJSON, ""},
		{"missing definition", `{"type":"object","properties":{"b":{"$ref":"#/$defs/missing"}}}`, ErrUnresolved, "/properties/b"},
		{"pointer to data", `{"type":"object","required":["a"],"properties":{"b":{"$ref":"#/required"}}}`, ErrUnresolved, "/properties/b"},
		{"pointer to a map of schemas", `{"type":"object","properties":{"b":{"$ref":"#/properties"}}}`, ErrUnresolved, "/properties/b"},
		{"pointer into an unknown keyword", `{"type":"object","x-defs":{"a":{}},"properties":{"b":{"$ref":"#/x-defs/a"}}}`, ErrUnresolved, "/properties/b"},
		{"missing anchor", `{"type":"object","properties":{"b":{"$ref":"#nope"}}}`, ErrUnresolved, "/properties/b"},
		{"bad percent-encoding", `{"type":"object","properties":{"b":{"$ref":"#/a%zz"}}}`, ErrUnresolved, "/properties/b"},
		{"array index out of range", `{"allOf":[{}],"properties":{"b":{"$ref":"#/allOf/1"}}}`, ErrUnresolved, "/properties/b"},
		{"dynamic reference", `{"$dynamicAnchor":"n","properties":{"a":{"$dynamicRef":"#n"},"b":{"$ref":"#/$defs/x"}},"$defs":{"x":{}}}`, ErrUnsupported, ""},
		{"duplicate $id", `{"properties":{"a":{"$ref":"https://example.com/x"}},"$defs":{"x":{"$id":"https://example.com/x"},"y":{"$id":"https://example.com/x"}}}`, ErrUnsupported, "/properties/a"},
		{"duplicate anchor", `{"properties":{"a":{"$ref":"#x"}},"$defs":{"x":{"$anchor":"x"},"y":{"$anchor":"x"}}}`, ErrUnsupported, "/properties/a"},
		{"$id with a fragment", `{"properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$id":"https://example.com/x#frag"}}}`, ErrUnsupported, ""},
		{
			"relative $id would move",
			`{"properties":{"a":{"$ref":"https://example.com/a/b.json"}},"$defs":{"a":{"$id":"https://example.com/a/","$defs":{
				"b":{"$id":"b.json","properties":{"x":{"$ref":"c.json"}}}}}}}`,
			ErrUnsupported, "",
		},
		{
			"relative remote $ref would move",
			`{"properties":{"a":{"$ref":"https://example.com/a/#/$defs/b"}},"$defs":{"a":{"$id":"https://example.com/a/","$defs":{
				"b":{"properties":{"x":{"$ref":"c.json"}}}}}}}`,
			ErrUnsupported, "/$defs/a/$defs/b/properties/x",
		},
		{
			"kept schema cannot be named from a nested resource",
			`{"type":"object","properties":{"r":{"$ref":"https://example.com/r"}},"$defs":{
				"r":{"$id":"https://example.com/r","properties":{"n":{"$ref":"#/$defs/N"}},"$defs":{
					"N":{"properties":{"next":{"$ref":"#/$defs/N"}}}}}}}`,
			ErrUnsupported, "/$defs/r/properties/n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Dereference([]byte(tt.in), nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Dereference = %s, %v; want %v", got, err, tt.want)
			}
			if got != nil {
				t.Errorf("Dereference returned %s with an error", got)
			}
			var re *RefError
			if errors.As(err, &re) != (tt.location != "") {
				t.Fatalf("error %v: *RefError = %v, want one=%v", err, re, tt.location != "")
			}
			if re != nil && re.Location != tt.location {
				t.Errorf("Location = %q, want %q (%v)", re.Location, tt.location, err)
			}
		})
	}
}

func TestRefErrorText(t *testing.T) {
	_, err := Dereference([]byte(`{"properties":{"a b":{"$ref":"#/$defs/x"}}}`), nil)
	want := `deref: unresolved $ref: nothing at /$defs/x ($ref "#/$defs/x" at "#/properties/a b")`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// fanOut returns a schema whose definitions L0..L(levels-1) each use the
// next one width times; fully inlined, it has width^levels copies of the
// last.
func fanOut(levels, width int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"start":{"$ref":"#/$defs/L0"}},"$defs":{`)
	for i := range levels {
		fmt.Fprintf(&b, `"L%d":{"type":"object","properties":{`, i)
		for j := range width {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":{"$ref":"#/$defs/L%d"}`, j, i+1)
		}
		b.WriteString(`}},`)
	}
	fmt.Fprintf(&b, `"L%d":{"type":"integer","minimum":0}}}`, levels)
	return b.String()
}

// deepInstance returns an instance of fanOut(levels, _) that follows p0 to
// the leaf value.
func deepInstance(levels int, leaf string) string {
	return strings.Repeat(`{"p0":`, levels) + leaf + strings.Repeat("}", levels)
}

func TestExponentialFanOut(t *testing.T) {
	in := []byte(fanOut(20, 2))
	start := time.Now()
	out, err := Dereference(in, nil)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// Generous: it takes about a millisecond; full inlining would not end.
	if elapsed > 5*time.Second {
		t.Errorf("Dereference took %v", elapsed)
	}
	inNodes, outNodes := countJSON(decode(t, string(in))), countJSON(decode(t, string(out)))
	limit := max(4*inNodes, 1000)
	if outNodes > limit {
		t.Errorf("output has %d values, more than the bound %d (input %d)", outNodes, limit, inNodes)
	}
	if !bytes.Contains(out, []byte(`"$ref"`)) {
		t.Errorf("output has no $ref: the bound was not applied")
	}
	t.Logf("input %d values, output %d values, %v", inNodes, outNodes, elapsed)

	before, after := mustResolve(t, in), mustResolve(t, out)
	for _, inst := range []string{`{"start":` + deepInstance(20, "1") + `}`, `{"start":` + deepInstance(20, "-1") + `}`, `{"start":{"p1":{"p0":"x"}}}`} {
		v := decode(t, inst)
		if e1, e2 := before.Validate(v), after.Validate(v); (e1 == nil) != (e2 == nil) {
			t.Errorf("on %.60s...: input %v, output %v", inst, e1, e2)
		}
	}
}

// TestNestedTargetsStayBounded names every level of a deep schema twice:
// copies of nested levels would grow quadratically, and a kept level must
// not be written again inside the levels around it.
func TestNestedTargetsStayBounded(t *testing.T) {
	const depth = 100
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"n":`)
	b.WriteString(strings.Repeat(`{"type":"object","properties":{"a":`, depth))
	b.WriteString(`{"type":"integer"}`)
	b.WriteString(strings.Repeat(`}}`, depth))
	ptr := "#/properties/n"
	for i := range depth {
		fmt.Fprintf(&b, `,"x%d":{"$ref":"%s"},"y%d":{"$ref":"%s"}`, i, ptr, i, ptr)
		ptr += "/properties/a"
	}
	b.WriteString(`}}`)
	in := []byte(b.String())
	out, err := Dereference(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	inNodes, outNodes := countJSON(decode(t, string(in))), countJSON(decode(t, string(out)))
	if limit := max(4*inNodes, 1000); outNodes > limit {
		t.Errorf("output has %d values, more than the bound %d", outNodes, limit)
	}
	before, after := mustResolve(t, in), mustResolve(t, out)
	deep := func(leaf string) string {
		return `{"x5":` + strings.Repeat(`{"a":`, depth-5) + leaf + strings.Repeat(`}`, depth-5) + `}`
	}
	for _, inst := range []string{deep("1"), deep(`"s"`)} {
		v := decode(t, inst)
		if e1, e2 := before.Validate(v), after.Validate(v); (e1 == nil) != (e2 == nil) {
			t.Errorf("input says %v, output says %v", e1, e2)
		}
	}
}

func TestMaxNodes(t *testing.T) {
	in := []byte(fanOut(3, 2)) // 8 copies of L3 when inlined: small
	tests := []struct {
		name     string
		opts     *Options
		wantRefs int
	}{
		{"default inlines all", nil, 0},
		{"generous bound inlines all", &Options{MaxNodes: 200}, 0},
		{"tiny bound keeps every shared definition", &Options{MaxNodes: 1}, 2 + 2 + 2}, // L0 inlined once, L1..L3 kept
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Dereference(in, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(out, []byte(`"$ref"`)); n != tt.wantRefs {
				t.Errorf("%d $refs in %s, want %d", n, out, tt.wantRefs)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	in := []byte(fanOut(12, 3))
	first, err := Dereference(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if got, _ := Dereference(in, nil); !bytes.Equal(got, first) {
			t.Fatalf("outputs differ:\n%s\n%s", got, first)
		}
	}
}

func assertSameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	g, w := decode(t, string(got)), decode(t, string(want))
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", got, compact(t, want))
	}
}

func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return v
}

func compact(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func countJSON(v any) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n += countJSON(e)
		}
	case []any:
		for _, e := range v {
			n += countJSON(e)
		}
	}
	return n
}

// resolve prepares schema for validation by jsonschema-go. Remote schemas
// load as a string schema with a string definition x.
func resolve(schema []byte) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, err
	}
	return s.Resolve(&jsonschema.ResolveOptions{Loader: func(*url.URL) (*jsonschema.Schema, error) {
		return &jsonschema.Schema{Type: "string", Defs: map[string]*jsonschema.Schema{"x": {Type: "string"}}}, nil
	}})
}

func mustResolve(t testing.TB, schema []byte) *jsonschema.Resolved {
	t.Helper()
	r, err := resolve(schema)
	if err != nil {
		t.Fatalf("jsonschema-go cannot resolve %s: %v", schema, err)
	}
	return r
}
