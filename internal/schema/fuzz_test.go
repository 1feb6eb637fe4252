package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// gen draws choices from the bytes the fuzzer gives. Once they run out,
// every choice is the first one and nothing optional happens, so that
// generation always ends.
type gen struct {
	data []byte
	pos  int
}

func (g *gen) next() (byte, bool) {
	if g.pos >= len(g.data) {
		return 0, false
	}
	g.pos++
	return g.data[g.pos-1], true
}

// n returns a number in [0, k).
func (g *gen) n(k int) int {
	b, _ := g.next()
	return int(b) % k
}

// chance is true with probability num/den, and false once the bytes run out.
func (g *gen) chance(num, den int) bool {
	b, ok := g.next()
	return ok && int(b)%den < num
}

func pick[T any](g *gen, xs ...T) T { return xs[g.n(len(xs))] }

var (
	typeNames = []string{"null", "boolean", "object", "array", "number", "integer", "string"}
	propNames = []string{"a", "b", "c", "d"}
	patterns  = []string{"^a", "b$", "^[a-c]*$", `\d`, "^$", "é", "^.{2}$"}
)

// poolValue returns a JSON value from a small pool that exercises the
// keywords: numbers around the bounds, strings around the patterns and
// lengths, coercible strings, small arrays and objects.
func (g *gen) poolValue(depth int) any {
	switch g.n(6) {
	case 0:
		return pick[any](g, nil, true, false)
	case 1:
		return pick[any](g, 0.0, 1.0, -1.0, 2.5, 3.0, 10.0, 0.5, 1e21, -0.5, 4.0)
	case 2:
		return pick[any](g, "", "a", "ab", "abc", "b", "é", "10", "2.5", "true", "null", "[1,2]", `{"a":1}`, "a1", "ba")
	case 3:
		if depth <= 0 {
			return []any{}
		}
		n := g.n(4)
		arr := make([]any, n)
		for i := range arr {
			arr[i] = g.poolValue(depth - 1)
		}
		return arr
	default:
		if depth <= 0 {
			return map[string]any{}
		}
		m := map[string]any{}
		for range g.n(4) {
			m[pick(g, propNames...)] = g.poolValue(depth - 1)
		}
		return m
	}
}

// schema returns a random schema, as JSON-ready Go values.
func (g *gen) schema(depth int) any {
	if g.chance(1, 12) {
		return g.chance(1, 2)
	}
	s := map[string]any{}
	if depth <= 0 {
		if g.chance(1, 2) {
			s["type"] = pick(g, typeNames...)
		}
		return s
	}
	sub := func() any { return g.schema(depth - 1) }
	subs := func() []any {
		out := make([]any, 1+g.n(3))
		for i := range out {
			out[i] = sub()
		}
		return out
	}
	num := func() float64 { return pick(g, 0.0, 1.0, 2.0, 3.0, -1.0, 2.5, 0.5, 10.0) }
	count := func() int { return g.n(4) }
	for range 1 + g.n(4) {
		switch g.n(30) {
		case 0, 1:
			if g.chance(1, 3) {
				s["type"] = []string{pick(g, typeNames...), pick(g, typeNames...)}
			} else {
				s["type"] = pick(g, typeNames...)
			}
		case 2:
			vals := make([]any, 1+g.n(3))
			for i := range vals {
				vals[i] = g.poolValue(1)
			}
			s["enum"] = vals
		case 3:
			s["const"] = g.poolValue(1)
		case 4:
			s[pick(g, "minimum", "exclusiveMinimum")] = num()
		case 5:
			s[pick(g, "maximum", "exclusiveMaximum")] = num()
		case 6:
			// Powers of two only: for them jsonschema-go's float division
			// gives the exact answer. For others (0.01, 3) it does not
			// (19.99 is no multiple of 0.01 to it), and this package
			// divides exactly instead: see TestMultipleOfIsExact.
			s["multipleOf"] = pick(g, 1.0, 2.0, 0.5, 0.25, 4.0)
		case 7:
			s[pick(g, "minLength", "maxLength")] = count()
		case 8:
			s["pattern"] = pick(g, patterns...)
		case 9:
			s["items"] = sub()
		case 10:
			s["prefixItems"] = subs()
		case 11:
			s[pick(g, "minItems", "maxItems")] = count()
		case 12:
			s["uniqueItems"] = g.chance(3, 4)
		case 13:
			s["contains"] = sub()
			if g.chance(1, 2) {
				s[pick(g, "minContains", "maxContains")] = count()
			}
		case 14, 15:
			props := map[string]any{}
			for range 1 + g.n(3) {
				ps := sub()
				if m, ok := ps.(map[string]any); ok && g.chance(1, 3) {
					m["default"] = g.poolValue(1)
				}
				props[pick(g, propNames...)] = ps
			}
			s["properties"] = props
		case 16:
			var req []string
			for range 1 + g.n(2) {
				req = append(req, pick(g, propNames...))
			}
			s["required"] = req
		case 17:
			if g.chance(1, 2) {
				s["additionalProperties"] = g.chance(1, 3)
			} else {
				s["additionalProperties"] = sub()
			}
		case 18:
			s["patternProperties"] = map[string]any{pick(g, patterns...): sub()}
		case 19:
			s["propertyNames"] = pick[any](g, map[string]any{"maxLength": 1}, map[string]any{"pattern": "^[ab]"}, sub())
		case 20:
			s[pick(g, "minProperties", "maxProperties")] = count()
		case 21:
			s["dependentRequired"] = map[string]any{pick(g, propNames...): []string{pick(g, propNames...)}}
		case 22:
			s["$ref"] = pick(g, "#", "#/$defs/d0", "#/$defs/d1", "#d1")
		case 23:
			s["allOf"] = subs()
		case 24:
			s["anyOf"] = subs()
		case 25:
			s["oneOf"] = subs()
		case 26:
			s["not"] = sub()
		case 27:
			s["if"] = sub()
			if g.chance(2, 3) {
				s["then"] = sub()
			}
			if g.chance(2, 3) {
				s["else"] = sub()
			}
		case 28:
			s["dependentSchemas"] = map[string]any{pick(g, propNames...): sub()}
		case 29:
			s[pick(g, "unevaluatedProperties", "unevaluatedItems")] = sub()
		}
	}
	return s
}

// rootSchema returns a random schema with $defs d0 and d1 (d1 also known
// by the anchor d1) for $ref to use.
func (g *gen) rootSchema() any {
	s := g.schema(3)
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	d1 := g.schema(2)
	if dm, ok := d1.(map[string]any); ok {
		dm["$anchor"] = "d1"
	} else {
		d1 = map[string]any{"$anchor": "d1", "not": map[string]any{"not": d1}}
	}
	m["$defs"] = map[string]any{"d0": g.schema(2), "d1": d1}
	return m
}

// instance returns a value for schema s: often one built to fit it, so
// that valid instances are common, sometimes any value, sometimes one
// written as a string for Coerce to convert.
func (g *gen) instance(root, s any, depth int) any {
	v := g.fitting(root, s, depth)
	if _, isString := v.(string); !isString && g.chance(1, 8) {
		text, _ := json.Marshal(v)
		return string(text)
	}
	return v
}

func (g *gen) fitting(root, s any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth <= 0 || g.chance(1, 5) {
		return g.poolValue(2)
	}
	if ref, ok := m["$ref"].(string); ok && g.chance(1, 2) {
		defs, _ := root.(map[string]any)["$defs"].(map[string]any)
		switch ref {
		case "#":
			return g.instance(root, root, depth-1)
		case "#/$defs/d0":
			return g.instance(root, defs["d0"], depth-1)
		default:
			return g.instance(root, defs["d1"], depth-1)
		}
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		if alts, ok := m[kw].([]any); ok && g.chance(1, 3) {
			return g.instance(root, alts[g.n(len(alts))], depth-1)
		}
	}
	if e, ok := m["enum"].([]any); ok && g.chance(3, 4) {
		return e[g.n(len(e))]
	}
	if c, ok := m["const"]; ok && g.chance(3, 4) {
		return c
	}
	var t string
	switch x := m["type"].(type) {
	case string:
		t = x
	case []string:
		t = x[g.n(len(x))]
	default:
		switch {
		case m["properties"] != nil || m["required"] != nil || m["additionalProperties"] != nil:
			t = "object"
		case m["items"] != nil || m["prefixItems"] != nil || m["contains"] != nil:
			t = "array"
		case m["pattern"] != nil || m["minLength"] != nil || m["maxLength"] != nil:
			t = "string"
		default:
			return g.poolValue(2)
		}
	}
	switch t {
	case "object":
		obj := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if g.chance(3, 4) {
				obj[k] = g.instance(root, props[k], depth-1)
			}
		}
		req, _ := m["required"].([]string)
		for _, r := range req {
			if _, ok := obj[r]; !ok && g.chance(3, 4) {
				obj[r] = g.instance(root, props[r], depth-1)
			}
		}
		if g.chance(1, 4) {
			obj[pick(g, propNames...)] = g.poolValue(1)
		}
		return obj
	case "array":
		prefix, _ := m["prefixItems"].([]any)
		arr := make([]any, g.n(4))
		for i := range arr {
			switch {
			case i < len(prefix):
				arr[i] = g.instance(root, prefix[i], depth-1)
			case m["items"] != nil:
				arr[i] = g.instance(root, m["items"], depth-1)
			default:
				arr[i] = g.poolValue(1)
			}
		}
		return arr
	case "string":
		return pick[any](g, "", "a", "ab", "abc", "b", "é", "10", "ba", "a1", "aé")
	case "integer":
		return pick[any](g, 0.0, 1.0, 2.0, 3.0, -1.0, 10.0)
	case "number":
		return pick[any](g, 0.5, 2.5, 1.0, -1.0, 3.0, 0.1)
	case "boolean":
		return g.chance(1, 2)
	case "null":
		return nil
	}
	return g.poolValue(2)
}

// encode writes v as JSON, choosing among equivalent spellings: spaces,
// numbers as 3, 3.0 or 3e0, strings with \u escapes.
func (g *gen) encode(b []byte, v any) []byte {
	if g.chance(1, 8) {
		b = append(b, ' ')
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			switch g.n(4) {
			case 1:
				return append(strconv.AppendFloat(b, x, 'f', -1, 64), ".0"...)
			case 2:
				return append(strconv.AppendFloat(b, x, 'f', -1, 64), "e0"...)
			}
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case string:
		if !g.chance(1, 4) {
			q, _ := json.Marshal(x)
			return append(b, q...)
		}
		b = append(b, '"')
		for _, r := range x {
			if r > 0xFFFF {
				b = fmt.Appendf(b, `\u%04x\u%04x`, 0xD800+((r-0x10000)>>10), 0xDC00+((r-0x10000)&0x3FF))
			} else {
				b = fmt.Appendf(b, `\u%04x`, r)
			}
		}
		return append(b, '"')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = g.encode(b, e)
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = g.encode(b, k)
			b = append(b, ':')
			b = g.encode(b, x[k])
		}
		return append(b, '}')
	}
	panic(fmt.Sprintf("encode: %T", v))
}

// reference validates data with jsonschema-go as the MCP SDK does, with
// empty and null arguments standing for {}.
func reference(rs *jsonschema.Resolved, data []byte) (err error) {
	var v any = map[string]any{}
	if len(data) > 0 && !isNullDoc(data) {
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
	}
	return rs.Validate(&v)
}

// FuzzDifferential compares Validate and ApplyDefaults with jsonschema-go
// on random schemas and instances drawn from the fuzzer's bytes.
func FuzzDifferential(f *testing.F) {
	for _, seed := range []string{
		"",
		"\x00\x01\x02\x03",
		"\x0e\x0e\x02\x10\x05\x03",
		"\x05\x0e\x0f\x01\x01\x02\x16\x00\x04",
		"\x03\x16\x01\x18\x02\x09\x04\x01\x19\x07",
		"\x02\x17\x0a\x01\x1a\x05\x1b\x03\x02\x0c\x01\x0d\x02\x00\x01",
		"\x01\x0e\x10\x09\x02\x0f\x0e\x01\x03\x00\x07\x01\x13\x12\x14",
		"zzzzyyyyxxxxwwwwvvvvuuuu",
		"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1",
		"\x1d\x1c\x1b\x1a\x19\x18\x17\x16\x15\x14\x13\x12\x11\x10\x0f\x0e\x0d\x0c\x0b",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(fuzzDiffOne)
}

func fuzzDiffOne(t *testing.T, data []byte) {
	{
		g := &gen{data: data}
		s := g.rootSchema()
		schemaJSON, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var js jsonschema.Schema
		if err := json.Unmarshal(schemaJSON, &js); err != nil {
			t.Fatalf("jsonschema-go cannot read %s: %v", schemaJSON, err)
		}
		rs, rerr := js.Resolve(nil)
		v, err := Compile(schemaJSON)
		switch {
		case errors.Is(err, ErrCircular):
			return // jsonschema-go would overflow its stack validating
		case (err == nil) != (rerr == nil):
			t.Fatalf("schema %s: Compile: %v; jsonschema-go Resolve: %v", schemaJSON, err, rerr)
		case err != nil:
			return
		}
		for range 3 {
			inst := g.instance(s, s, 4)
			doc := g.encode(nil, inst)
			compare(t, v, rs, schemaJSON, doc)
			compareDefaults(t, v, rs, schemaJSON, doc)
			if out, changed, err := v.Coerce(doc); err == nil && changed {
				compare(t, v, rs, schemaJSON, out)
			}
		}
	}
}

// compare requires v and rs to agree on whether doc is valid.
func compare(t *testing.T, v *Validator, rs *jsonschema.Resolved, schemaJSON, doc []byte) {
	t.Helper()
	got := v.Validate(doc)
	if errors.Is(got, ErrTooComplex) {
		return
	}
	want := reference(rs, doc)
	if (got == nil) != (want == nil) {
		t.Fatalf("schema %s\ninstance %s\nValidate: %v\njsonschema-go: %v", schemaJSON, doc, got, want)
	}
	if got == nil {
		// A valid document is never rewritten.
		if out, changed, err := v.Coerce(doc); err != nil || changed || &out[0] != &doc[0] {
			t.Fatalf("schema %s\ninstance %s\nCoerce of a valid document: %s, %v, %v", schemaJSON, doc, out, changed, err)
		}
	}
}

// compareDefaults requires ApplyDefaults to apply every default that
// jsonschema-go's applies, with the same value, and to add only properties
// that the instance does not have.
func compareDefaults(t *testing.T, v *Validator, rs *jsonschema.Resolved, schemaJSON, doc []byte) {
	t.Helper()
	var orig, ref any
	if json.Unmarshal(doc, &orig) != nil || json.Unmarshal(doc, &ref) != nil {
		return
	}
	if _, ok := ref.(map[string]any); !ok {
		return
	}
	if err := applyRef(rs, &ref); err != nil {
		return
	}
	out, _, err := v.ApplyDefaults(doc)
	if err != nil {
		t.Fatalf("schema %s\ninstance %s\nApplyDefaults: %v", schemaJSON, doc, err)
	}
	var got any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("schema %s\ninstance %s\nApplyDefaults returned invalid JSON %s: %v", schemaJSON, doc, out, err)
	}
	if msg := covers(got, ref, orig, ""); msg != "" {
		t.Fatalf("schema %s\ninstance %s\nApplyDefaults: %s\njsonschema-go: %s\n%s", schemaJSON, doc, out, jsonText(ref), msg)
	}
}

// applyRef calls jsonschema-go's ApplyDefaults, which panics on some
// instances (a default that cannot be stored).
func applyRef(rs *jsonschema.Resolved, v *any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return rs.ApplyDefaults(v)
}

// covers returns "" if got has everything ref has, and beyond that only
// properties that orig, the instance before defaults, lacks.
func covers(got, ref, orig any, path string) string {
	switch r := ref.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path + ": not an object"
		}
		o, _ := orig.(map[string]any)
		for k, rv := range r {
			gv, ok := g[k]
			if !ok {
				return path + "/" + k + ": missing"
			}
			if msg := covers(gv, rv, o[k], path+"/"+k); msg != "" {
				return msg
			}
		}
		for k := range g {
			if _, ok := r[k]; !ok {
				if _, had := o[k]; had {
					return path + "/" + k + ": dropped by jsonschema-go?"
				}
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(r) {
			return path + ": not the same array"
		}
		o, _ := orig.([]any)
		for i := range r {
			var oi any
			if i < len(o) {
				oi = o[i]
			}
			if msg := covers(g[i], r[i], oi, path+"/"+strconv.Itoa(i)); msg != "" {
				return msg
			}
		}
		return ""
	}
	if !jsonschema.Equal(got, ref) {
		return fmt.Sprintf("%s: %v, want %v", path, got, ref)
	}
	return ""
}

// fuzzSchemas are the schemas FuzzValidate and FuzzCoerce pick from.
var fuzzSchemas = []string{
	`true`,
	`{"type":"object","properties":{"n":{"type":"integer"},"f":{"type":"number"},"b":{"type":"boolean"},"s":{"type":"string","maxLength":3}},"additionalProperties":false}`,
	`{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/$defs/item"}}},"$defs":{"item":{"type":"object","properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["id"]}}}`,
	`{"$defs":{"node":{"type":"object","properties":{"v":{"type":["integer","null"]},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`,
	`{"anyOf":[{"type":"integer"},{"type":"object","properties":{"x":{"type":"boolean"}}},{"type":"array","items":{"type":"number"}}]}`,
	`{"type":"object","properties":{"o":{"oneOf":[{"type":"object","required":["a"]},{"type":"array"}]},"c":{"type":"object","properties":{"d":{"default":1}}}},"if":{"required":["x"]},"then":{"properties":{"x":{"type":"integer"}}},"else":{"properties":{"x":{"type":"string"}}}}`,
	`{"type":"object","patternProperties":{"^n":{"type":"integer"}},"additionalProperties":{"type":"boolean"},"propertyNames":{"maxLength":4},"unevaluatedProperties":false}`,
	`{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":{"type":"boolean"},"uniqueItems":true,"contains":{"type":"integer"},"maxContains":2}`,
}

// FuzzValidate feeds arbitrary bytes to Compile as a schema and to the
// validator as an instance: nothing may panic or hang, and the entry
// points must agree with each other.
func FuzzValidate(f *testing.F) {
	for _, s := range fuzzSchemas {
		f.Add([]byte(s), []byte(`{"n":1,"items":[{"id":"2"}],"v":null,"kids":[{"v":"x"}]}`))
	}
	f.Add([]byte(`{"$ref":"#"}`), []byte(`1`))
	f.Add([]byte(`{"properties":{"a":{"$ref":"#"}}}`), []byte(`{"a":{"a":{"a":1}}}`))
	f.Add([]byte(`{"items":{"anyOf":[{"$ref":"#"},{"$ref":"#"}]}}`), []byte(`[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]`))
	f.Add([]byte(`{"$dynamicAnchor":"a","$dynamicRef":"#a"}`), []byte(`{}`))
	f.Add([]byte(`{"$ref":"https://example.com/s.json"}`), []byte(`{}`))
	f.Add([]byte(`{"type":"string","pattern":"\\p{L}+"}`), []byte(`"\ud83d\ude00\udc00\u00e9"`))
	f.Add([]byte(`{"enum":[[1,{"a":null}],"x",2]}`), []byte(`[1.0,{"a":null}]`))
	f.Add([]byte(`{"const":1e400}`), []byte(`1e400`))
	f.Fuzz(func(t *testing.T, schemaJSON, doc []byte) {
		v, err := Compile(schemaJSON)
		if err != nil {
			if !errors.Is(err, ErrInvalidSchema) && !errors.Is(err, ErrCircular) {
				t.Fatalf("Compile(%s): error %v wraps neither ErrInvalidSchema nor ErrCircular", schemaJSON, err)
			}
			return
		}
		verr := v.Validate(doc)
		var ve *ValidationError
		var se *SyntaxError
		switch {
		case verr == nil, errors.Is(verr, ErrTooComplex):
		case errors.As(verr, &ve):
			if len(ve.Issues) == 0 {
				t.Fatalf("ValidationError without issues")
			}
		case errors.As(verr, &se):
			if len(doc) > 0 && json.Valid(doc) && !hasDuplicateKeys(doc) && !strings.Contains(se.Msg, "out of range") && !strings.Contains(se.Msg, "depth") {
				t.Fatalf("schema %s: Validate(%q) = %v, but the JSON is valid", schemaJSON, doc, verr)
			}
		default:
			t.Fatalf("Validate: unexpected error %T %v", verr, verr)
		}
		if verr == nil && len(doc) > 0 && !json.Valid(doc) {
			t.Fatalf("Validate accepted invalid JSON %q", doc)
		}
		out, perr := v.Process(doc, false)
		if (perr == nil) != (verr == nil) && !v.hasDefaults {
			t.Fatalf("Process strict: %v, Validate: %v", perr, verr)
		}
		if perr == nil && !v.hasDefaults && len(doc) > 0 && &out[0] != &doc[0] {
			t.Fatalf("Process rewrote a valid document")
		}
		if _, _, err := v.Coerce(doc); (err == nil) != (se == nil) && !errors.Is(verr, ErrTooComplex) && !errors.Is(err, ErrTooComplex) {
			t.Fatalf("Coerce: %v, Validate: %v", err, verr)
		}
		if out, _, err := v.ApplyDefaults(doc); err == nil && !json.Valid(out) && len(out) > 0 {
			t.Fatalf("ApplyDefaults returned invalid JSON %q", out)
		}
	})
}

// hasDuplicateKeys reports whether the valid JSON doc has an object with
// a property twice.
func hasDuplicateKeys(doc []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				ks, _ := k.(string)
				if seen[ks] {
					return true
				}
				seen[ks] = true
				if walk() {
					return true
				}
			}
			dec.Token()
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			dec.Token()
		}
		return false
	}
	return walk()
}

// FuzzCoerce checks Coerce on arbitrary instances against a few schemas:
// no panic, JSON out, valid documents untouched, and coercing twice is
// coercing once.
func FuzzCoerce(f *testing.F) {
	for i := range fuzzSchemas {
		for _, doc := range []string{
			`{"n":"10","f":"2.5","b":"true","s":"abc"}`,
			`{"items":"[{\"id\":\"3\",\"tags\":[]}]"}`,
			`{"v":"null","kids":[{"v":"7","kids":"[]"}]}`,
			`"12"`, `["1","2"]`, `{"x":"false"}`,
			`{"o":"{\"a\":\"1\"}","x":"5"}`,
			`{"n1":"1","z":"true"}`,
			`["1","s","true","true"]`,
			`{"n":"abc","f":"1e400","b":"True"}`,
		} {
			f.Add(byte(i), []byte(doc))
		}
	}
	compiled := make([]*Validator, len(fuzzSchemas))
	for i, s := range fuzzSchemas {
		v, err := Compile([]byte(s))
		if err != nil {
			f.Fatal(err)
		}
		compiled[i] = v
	}
	f.Fuzz(func(t *testing.T, which byte, doc []byte) {
		v := compiled[int(which)%len(compiled)]
		out, changed, err := v.Coerce(doc)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrTooComplex) {
				t.Fatalf("Coerce(%q): unexpected error %v", doc, err)
			}
			return
		}
		if !changed {
			if len(doc) > 0 && &out[0] != &doc[0] {
				t.Fatalf("Coerce(%q) copied an unchanged document", doc)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Coerce(%q) = %q, not JSON", doc, out)
		}
		if v.Validate(doc) == nil {
			t.Fatalf("Coerce(%q) changed a valid document to %q", doc, out)
		}
		if again, changed, err := v.Coerce(out); err != nil || changed {
			t.Fatalf("Coerce(%q) = %q, then %q, %v", doc, out, again, err)
		}
		if utf8.Valid(doc) && !utf8.Valid(out) {
			t.Fatalf("Coerce(%q) = %q: invalid UTF-8", doc, out)
		}
	})
}
