package schema

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// names returns n members "<prefix>i":0, joined by commas.
func names(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + prefix + strconv.Itoa(i) + `":0`)
	}
	return b.String()
}

// TestDuplicateNames checks duplicate detection across the switch from
// comparing names to hashing them, in nested objects (whose key sets are
// stacked), for every walker: validate, skip, coerce and defaults.
func TestDuplicateNames(t *testing.T) {
	const (
		recursive = `{"properties":{"a":{"type":"integer"}},"additionalProperties":{"$ref":"#"}}`
		defaults  = `{"properties":{"d":{"default":1},"o":{"$ref":"#"}}}`
	)
	big := names("k", 300)
	for _, tt := range []struct {
		name, doc string
		dup       string // the duplicate name, "" if none
	}{
		{"distinct", `{` + big + `}`, ""},
		{"last repeats the first", `{` + big + `,"k0":1}`, "k0"},
		{"repeat right after the switch", `{` + names("k", maxLinearKeys+1) + `,"k3":1}`, "k3"},
		{"escaped repeat", `{` + big + `,"\u006b7":1}`, "k7"},
		{"escaped names", `{` + strings.ReplaceAll(big, `"k`, `"\u00e9`) + `,"é9":1}`, "é9"},
		{"nested large objects", `{` + big + `,"o":{` + names("k", 100) + `},"x":1}`, ""},
		{"repeat after a nested large object", `{` + big + `,"o":{` + names("k", 100) + `},"k299":1}`, "k299"},
		{"repeat inside the nested object", `{` + big + `,"o":{` + names("k", 100) + `,"k50":1}}`, "k50"},
		{"same names in siblings", `{"o":{` + big + `},"p":{` + big + `}}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				var se *SyntaxError
				switch {
				case tt.dup == "" && err != nil:
					t.Errorf("%s: %v", what, err)
				case tt.dup != "" && (!errors.As(err, &se) || se.Msg != "duplicate property "+strconv.Quote(tt.dup)):
					t.Errorf("%s = %v, want duplicate property %q", what, err, tt.dup)
				}
			}
			doc := []byte(tt.doc)
			check("Validate", mustCompile(t, recursive).Validate(doc))
			check("Validate (skip)", mustCompile(t, `true`).Validate(doc))
			_, _, err := mustCompile(t, recursive).Coerce(doc)
			check("Coerce", err)
			out, changed, err := mustCompile(t, defaults).ApplyDefaults(doc)
			check("ApplyDefaults", err)
			if err == nil && tt.dup == "" && !changed {
				t.Errorf("ApplyDefaults inserted no default: %.100s", out)
			}
		})
	}
}

// TestDefaultsAmongManyNames checks that a default is not inserted where
// the property is present among more names than are compared one by one.
func TestDefaultsAmongManyNames(t *testing.T) {
	v := mustCompile(t, `{"properties":{"d":{"default":1}}}`)
	doc := []byte(`{` + names("k", 100) + `,"d":2}`)
	out, changed, err := v.ApplyDefaults(doc)
	if err != nil || changed || &out[0] != &doc[0] {
		t.Errorf("ApplyDefaults = %.60s..., %v, %v; want the document unchanged", out, changed, err)
	}
}
