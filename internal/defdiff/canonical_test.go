package defdiff

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCanonicalNumber(t *testing.T) {
	for _, tt := range []struct {
		in, want string
	}{
		{"0", "0"},
		{"-0", "0"},
		{"0.0", "0"},
		{"-0.0e5", "0"},
		{"1", "1"},
		{"1.0", "1"},
		{"1e0", "1"},
		{"10E-1", "1"},
		{"0.1e1", "1"},
		{"100", "100"},
		{"1e2", "100"},
		{"1.5", "1.5"},
		{"15e-1", "1.5"},
		{"-2.50", "-2.5"},
		{"0.000001", "0.000001"},
		{"1e-6", "0.000001"},
		{"1e-7", "1e-7"},
		{"1.5e-7", "1.5e-7"},
		{"123456789012345678901", "123456789012345678901"},
		{"1e20", "100000000000000000000"},
		{"1e21", "1e+21"},
		{"1.25E+30", "1.25e+30"},
		{"9007199254740993", "9007199254740993"}, // 2^53 + 1: no rounding
		{"00012", "12"},                          // not JSON, but harmless
		{"1e1000000001", "1e1000000001"},         // beyond maxExponent: as written
		{"1e99999999999999999999", "1e99999999999999999999"},
	} {
		if got := canonicalNumber(tt.in); got != tt.want {
			t.Errorf("canonicalNumber(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestCanonicalNumberRoundTrip checks that the canonical form is a fixed
// point, valid JSON, and the same value as its input.
func TestCanonicalNumberRoundTrip(t *testing.T) {
	for _, in := range []string{"0", "-1", "3.14159", "2e-9", "-7.5e+40", "12345.678e3", "0.00000123", "1e21", "999999999999999999999"} {
		c := canonicalNumber(in)
		if again := canonicalNumber(c); again != c {
			t.Errorf("canonicalNumber(%s) = %s, then %s", in, c, again)
		}
		if !json.Valid([]byte(c)) {
			t.Errorf("canonicalNumber(%s) = %s, not JSON", in, c)
		}
		a, _ := parseNumber(canonicalNumber(in))
		b, _ := parseNumber(c)
		if a.cmp(b) != 0 {
			t.Errorf("%s and %s compare unequal", in, c)
		}
	}
}

func TestCompareNumbers(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"1", "2", -1},
		{"2", "1", 1},
		{"1", "1.0", 0},
		{"-1", "1", -1},
		{"-2", "-1", -1},
		{"0", "-0.5", 1},
		{"0", "0.5", -1},
		{"0.15", "0.2", -1},
		{"100", "99.999", 1},
		{"1e+21", "999999999999999999999", 1},
		{"1e-7", "0.000001", -1},
		{"9007199254740993", "9007199254740992", 1},
	} {
		got, ok := compareNumbers(json.Number(canonicalNumber(tt.a)), json.Number(canonicalNumber(tt.b)))
		if !ok || got != tt.want {
			t.Errorf("compareNumbers(%s, %s) = %d, %v; want %d", tt.a, tt.b, got, ok, tt.want)
		}
	}
	if _, ok := compareNumbers(json.Number("1e99999999999999999999"), json.Number("1")); ok {
		t.Error("compared a number beyond maxExponent")
	}
	if _, ok := compareNumbers("1", json.Number("1")); ok {
		t.Error("compared a string")
	}
}

func TestDefinition(t *testing.T) {
	a := `{"name":"t","inputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":10,"minimum":1.0}}},
		"annotations":{"readOnlyHint":true,"idempotentHint":false,"destructiveHint":true}}`
	b := `{
		"annotations": {"readOnlyHint": true},
		"inputSchema": {"properties": {"n": {"minimum": 1, "maximum": 1e1, "type": "integer"}}, "type": "object"},
		"name": "t"
	}`
	want := `{"annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"n":{"maximum":10,"minimum":1,"type":"integer"}},"type":"object"},"name":"t"}`
	for _, in := range []string{a, b} {
		got, err := Definition([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("Definition(%s) =\n%s, %v\nwant\n%s", in, got, err, want)
		}
	}
}

func TestDefinitionAnnotations(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"name":"t","annotations":{"idempotentHint":false,"readOnlyHint":false}}`, `{"name":"t"}`},
		{`{"name":"t","annotations":{}}`, `{"name":"t"}`},
		{`{"name":"t","annotations":null}`, `{"name":"t"}`},
		{`{"name":"t","annotations":{"destructiveHint":false,"openWorldHint":true}}`, `{"annotations":{"destructiveHint":false},"name":"t"}`},
		{`{"name":"t","annotations":{"title":"T","readOnlyHint":"yes"}}`, `{"annotations":{"readOnlyHint":"yes","title":"T"},"name":"t"}`},
		{`{"name":"t","annotations":[1]}`, `{"annotations":[1],"name":"t"}`},
	} {
		got, err := Definition([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Definition(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestDefinitionText(t *testing.T) {
	// '<', '>' and '&' stay readable in a lockfile; other escapes are
	// encoding/json's.
	got, err := Definition([]byte(`{"description":"a < b && c > d \u00e9 \u2028"}`))
	if want := `{"description":"a < b && c > d é \u2028"}`; err != nil || string(got) != want {
		t.Errorf("Definition = %s, %v; want %s", got, err, want)
	}
}

func TestDefinitionErrors(t *testing.T) {
	for _, in := range []string{``, `[]`, `"x"`, `{"a":1} {}`, `{"a":`, `null`} {
		if got, err := Definition([]byte(in)); err == nil {
			t.Errorf("Definition(%q) = %s, want an error", in, got)
		} else if !strings.HasPrefix(err.Error(), "defdiff: ") {
			t.Errorf("Definition(%q): error %q lacks the package prefix", in, err)
		}
	}
	if _, err := Definition([]byte(" {\"name\":\"t\"}\n\t")); err != nil {
		t.Errorf("surrounding whitespace: %v", err)
	}
}

func TestFingerprint(t *testing.T) {
	got := Fingerprint([]byte(`{"name":"t"}`))
	if !strings.HasPrefix(got, "sha256:") || len(got) != len("sha256:")+64 {
		t.Errorf("Fingerprint = %q", got)
	}
	if Fingerprint([]byte(`{"name":"u"}`)) == got {
		t.Error("two definitions, one fingerprint")
	}
}
