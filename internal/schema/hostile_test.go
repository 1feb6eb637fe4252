package schema

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// hostile returns documents built to make validation errors large: n wrong
// values for an integer array, and n unknown properties.
func hostileStrings(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"xs":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"x"`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func hostileKeys(n int) []byte {
	var b strings.Builder
	b.WriteString(`{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":0`)
	}
	b.WriteString(`}`)
	return []byte(b.String())
}

const (
	intsSchema   = `{"type":"object","properties":{"xs":{"type":"array","items":{"type":"integer"}}}}`
	closedSchema = `{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false}`
)

// TestIssuesAreCapped checks that however many values fail, at most
// MaxIssues are listed, the rest are counted, and the error's text stays
// small.
func TestIssuesAreCapped(t *testing.T) {
	for _, tt := range []struct {
		name   string
		schema string
		doc    []byte
		failed int
	}{
		{"strings for integers", intsSchema, hostileStrings(1 << 20), 0},
		{"unknown keys", closedSchema, hostileKeys(100_000), 100_000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := mustCompile(t, tt.schema)
			for _, lenient := range []bool{false, true} {
				_, err := v.Process(tt.doc, lenient)
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("got %v", err)
				}
				if len(ve.Issues) != MaxIssues || ve.Omitted == 0 {
					t.Errorf("%d issues listed, %d omitted; want %d listed and the rest counted", len(ve.Issues), ve.Omitted, MaxIssues)
				}
				if tt.failed > 0 && len(ve.Issues)+ve.Omitted != tt.failed {
					t.Errorf("%d + %d failures counted, want %d", len(ve.Issues), ve.Omitted, tt.failed)
				}
				if n := len(err.Error()); n > 1024 {
					t.Errorf("error text is %d bytes", n)
				}
				if !strings.HasSuffix(err.Error(), " more") {
					t.Errorf("error text does not say how many more: %.200s", err)
				}
			}
		})
	}
}

// TestHostileAllocations checks that rejecting a hostile request allocates
// a bounded number of times, whatever the number of failures: the issues
// beyond MaxIssues, and the names of a huge object, cost no allocation.
func TestHostileAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop states")
	}
	for _, tt := range []struct {
		name, schema string
		doc          []byte
	}{
		{"strings for integers", intsSchema, hostileStrings(1 << 20)},
		{"unknown keys", closedSchema, hostileKeys(100_000)},
		{"numbers out of range", intsSchema, []byte(`{"xs":[` + strings.Repeat(`1e999,`, 100_000) + `1e999]}`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := mustCompile(t, tt.schema)
			for _, lenient := range []bool{false, true} {
				allocs := testing.AllocsPerRun(5, func() {
					if _, err := v.Process(tt.doc, lenient); err == nil {
						t.Fatal("accepted")
					}
				})
				if allocs > 4*MaxIssues+20 {
					t.Errorf("lenient=%v: %.0f allocations per call", lenient, allocs)
				}
			}
		})
	}
}

// TestEchoedInputIsClipped checks that no text from the instance reaches an
// issue unclipped: property names, numbers, deep paths.
func TestEchoedInputIsClipped(t *testing.T) {
	long := strings.Repeat("k", 5000)
	bigNum := "-1." + strings.Repeat("0", 5000)
	deep := strings.Repeat(`{"a":`, 500) + `"x"` + strings.Repeat(`}`, 500)
	deepSchema := `{"$defs":{"n":{"type":["object","integer"],"properties":{"a":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`
	longKeys := strings.Repeat(`{"`+long+`":`, 12) + `"x"` + strings.Repeat(`}`, 12)
	objects := `{"$defs":{"n":{"type":"object","additionalProperties":{"$ref":"#/$defs/n"}}},"$ref":"#/$defs/n"}`
	for _, tt := range []struct {
		name, schema, doc string
		want              string // a part of the first issue
	}{
		{"property name", closedSchema, `{"` + long + `":1}`, "kkkk..."},
		{"number", `{"type":"object","properties":{"n":{"type":"integer","minimum":0}}}`, `{"n":` + bigNum + `}`, "got -1.000"},
		{"enum value", `{"type":"object","properties":{"e":{"enum":["a"]}}}`, `{"e":"` + long + `"}`, `got "kkk`},
		{"deep path", deepSchema, deep, "a/a/a/.../a/a/a/a/a/a/a/a"},
		{"path of long names", objects, longKeys, "kkk.../kkk"},
		{"out of range", `true`, `{"` + long + `":` + "1" + strings.Repeat("0", 5000) + `}`, "got 1000"},
		{"pattern", `{"type":"object","properties":{"p":{"pattern":"^a"}}}`, `{"p":"` + long + `"}`, `got "kkk`},
		{"propertyNames", `{"propertyNames":{"maxLength":3}}`, `{"` + long + `":1}`, `got "kkk`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := mustCompile(t, tt.schema).Validate([]byte(tt.doc))
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Issues) == 0 {
				t.Fatalf("got %v", err)
			}
			is := ve.Issues[0]
			if len(is.Path) > maxLong+3 || len(is.Message) > maxLong || !strings.Contains(is.String(), tt.want) {
				t.Errorf("issue of %d+%d bytes: %.300s; want it short and containing %q", len(is.Path), len(is.Message), is.String(), tt.want)
			}
		})
	}
}

// BenchmarkHostile measures what rejecting a hostile request costs, by its
// size: the bytes allocated must not grow with the number of failures.
func BenchmarkHostile(b *testing.B) {
	for _, bc := range []struct {
		name   string
		schema string
		doc    []byte
	}{
		{"strings-1MB", intsSchema, hostileStrings(1 << 20)},
		{"strings-4MB", intsSchema, hostileStrings(4 << 20)},
		{"keys-100k", closedSchema, hostileKeys(100_000)},
	} {
		v, err := Compile([]byte(bc.schema))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.doc)))
			for b.Loop() {
				if _, err := v.Process(bc.doc, true); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}
