package deref

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// FuzzDereference feeds arbitrary bytes: Dereference must not panic or
// hang, must leave its input alone, must answer the same twice, must return
// valid JSON, and must leave no $ref it cannot resolve itself.
func FuzzDereference(f *testing.F) {
	for _, tt := range cases() {
		f.Add([]byte(tt.in))
	}
	for _, s := range []string{
		fanOut(20, 2), fanOut(4, 4),
		`{"$ref":"#"}`, `{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
		`{"properties":{"a":{"$ref":"#/properties/a/properties/b"}}}`,
		`{"$id":"https://e.com/r","$defs":{"x":{"$id":"x","$ref":"#"}},"$ref":"x"}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","id":"https://e.com/","properties":{"a":{"$ref":"#n"}},"definitions":{"n":{"id":"#n"}}}`,
		`{"allOf":"x","$ref":"#/$defs/a","maxLength":1,"$defs":{"a":{"maxLength":2}}}`,
		`{"items":[{"$ref":"#/items/1"},{}],"dependencies":{"a":["b"],"c":{"$ref":"#/items/0"}}}`,
		`[{"$ref":"#"}]`, `"$ref"`, `{"\u0024ref":"#/x","x":1}`, `{"$ref":"#/$defs/x","$defs":{"x":{"$ref":"#/a%zz"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		out, err := Dereference(data, nil)
		if !bytes.Equal(data, orig) {
			t.Fatalf("input modified")
		}
		out2, err2 := Dereference(data, nil)
		if !bytes.Equal(out, out2) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("unstable: %s, %v then %s, %v", out, err, out2, err2)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidJSON) && !errors.Is(err, ErrUnresolved) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON output %q", out)
		}
		// Every $ref left in the output resolves within it.
		if _, err := Dereference(out, nil); errors.Is(err, ErrUnresolved) || errors.Is(err, ErrInvalidJSON) {
			t.Fatalf("output %s does not dereference: %v", out, err)
		}
	})
}

// A schemaGen builds a schema with $defs d0..dN-1 and references between
// them from fuzzer bytes. References under properties and items may name
// any definition or the root, making cycles; the others (aliases, anyOf,
// the root's $ref) only name later definitions, so every cycle consumes
// instance depth and validation ends.
type schemaGen struct {
	data []byte
	pos  int
	n    int
	refs [][]int // refs[i]: the definitions that d_i's body names; index n is the root
}

func (g *schemaGen) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	g.pos++
	return int(g.data[g.pos-1])
}

func (g *schemaGen) intn(n int) int { return g.next() % n }

func (g *schemaGen) leaf() string {
	switch g.intn(5) {
	case 0:
		return fmt.Sprintf(`{"type":"integer","minimum":%d}`, g.intn(3))
	case 1:
		return fmt.Sprintf(`{"type":"string","maxLength":%d}`, g.intn(4))
	case 2:
		return `true`
	case 3:
		return `{"type":["object","null"]}`
	}
	return `{"enum":[1,"a",{"$ref":"#/$defs/d0"}]}`
}

// ref returns a $ref from the schema owner (n for the root) to a
// definition; guarded references may also name the root or an earlier
// definition.
func (g *schemaGen) ref(owner int, guarded bool) (string, bool) {
	lo := owner + 1
	if owner == g.n {
		lo = 0
	}
	if guarded {
		if k := g.intn(g.n + 1); k == g.n {
			g.refs[owner] = append(g.refs[owner], g.n)
			return `"#"`, true
		} else {
			g.refs[owner] = append(g.refs[owner], k)
			return `"#/$defs/d` + strconv.Itoa(k) + `"`, true
		}
	}
	if lo >= g.n {
		return "", false
	}
	k := lo + g.intn(g.n-lo)
	g.refs[owner] = append(g.refs[owner], k)
	return `"#/$defs/d` + strconv.Itoa(k) + `"`, true
}

// sub returns a schema in a guarded position of owner's body.
func (g *schemaGen) sub(owner int) string {
	if g.intn(4) == 0 {
		return g.leaf()
	}
	r, _ := g.ref(owner, true)
	switch g.intn(7) {
	case 0:
		return `{"$ref":` + r + `,"description":"outer"}`
	case 1:
		return `{"$ref":` + r + `,"minProperties":1}`
	case 2:
		return `{"$ref":` + r + `,"type":"object"}`
	case 3:
		return `{"$ref":` + r + `,"properties":{"p0":{"type":"integer"}},"additionalProperties":false}`
	case 4:
		return `{"$ref":` + r + `,"unevaluatedProperties":false}`
	}
	return `{"$ref":` + r + `}`
}

func (g *schemaGen) body(owner int) string {
	switch g.intn(7) {
	case 0, 1:
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{`)
		for j := range 1 + g.intn(4) {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":%s`, j, g.sub(owner))
		}
		b.WriteString(`}`)
		if g.intn(3) == 0 {
			b.WriteString(`,"additionalProperties":false`)
		}
		if g.intn(3) == 0 {
			b.WriteString(`,"required":["p0"]`)
		}
		b.WriteString(`}`)
		return b.String()
	case 2:
		return `{"type":"array","maxItems":3,"items":` + g.sub(owner) + `}`
	case 3:
		if r, ok := g.ref(owner, false); ok {
			return `{"$ref":` + r + `,"title":"alias","maxProperties":3}`
		}
	case 4:
		if r, ok := g.ref(owner, false); ok {
			return `{"anyOf":[{"$ref":` + r + `},` + g.leaf() + `]}`
		}
	case 5:
		// Fan-out: every property names the next definition, so copies
		// multiply along a chain of these.
		if owner+1 < g.n {
			var b strings.Builder
			b.WriteString(`{"type":"object","properties":{`)
			for j := range 2 + g.intn(3) {
				if j > 0 {
					b.WriteByte(',')
				}
				g.refs[owner] = append(g.refs[owner], owner+1)
				fmt.Fprintf(&b, `"p%d":{"$ref":"#/$defs/d%d"}`, j, owner+1)
			}
			b.WriteString(`}}`)
			return b.String()
		}
	}
	return g.leaf()
}

// schema returns the generated schema.
func (g *schemaGen) schema() string {
	g.n = 1 + g.intn(14)
	g.refs = make([][]int, g.n+1)
	defs := make([]string, g.n)
	for i := range defs {
		defs[i] = g.body(i)
	}
	var b strings.Builder
	b.WriteString(`{`)
	if g.intn(3) == 0 {
		r, _ := g.ref(g.n, false)
		b.WriteString(`"$ref":` + r + `,`)
	}
	fmt.Fprintf(&b, `"type":"object","properties":{"a":%s,"b":%s},"$defs":{`, g.sub(g.n), g.sub(g.n))
	for i, d := range defs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"d%d":%s`, i, d)
	}
	b.WriteString(`}}`)
	return b.String()
}

// cyclic returns the $ref targets that lie on a cycle: "#" for the root,
// "#/$defs/dK" for definitions.
func (g *schemaGen) cyclic() map[string]bool {
	n := g.n + 1
	reach := make([][]bool, n)
	for i := range reach {
		reach[i] = make([]bool, n)
		for _, j := range g.refs[i] {
			reach[i][j] = true
		}
	}
	for k := range n {
		for i := range n {
			for j := range n {
				reach[i][j] = reach[i][j] || reach[i][k] && reach[k][j]
			}
		}
	}
	on := map[string]bool{}
	for i := range g.n {
		if reach[i][i] {
			on["#/$defs/d"+strconv.Itoa(i)] = true
		}
	}
	if reach[g.n][g.n] {
		on["#"] = true
	}
	return on
}

// instance returns a JSON value shaped like the generated schemas.
func (g *schemaGen) instance(depth int) any {
	k := g.intn(9)
	if depth == 0 && k >= 6 {
		k = g.intn(6)
	}
	switch k {
	case 0:
		return g.intn(4) - 1
	case 1:
		return strings.Repeat("x", g.intn(5))
	case 2:
		return nil
	case 3:
		return g.intn(2) == 0
	case 4:
		return "a"
	case 5:
		return 1
	case 6:
		var a []any
		for range g.intn(4) {
			a = append(a, g.instance(depth-1))
		}
		return a
	}
	m := map[string]any{}
	for range g.intn(4) {
		key := [...]string{"p0", "p1", "p2", "p3", "a", "b", "zz"}[g.intn(7)]
		m[key] = g.instance(depth - 1)
	}
	return m
}

// FuzzDereferenceStructured builds schemas with definitions, recursion and
// fan-out from the fuzzer's bytes, and checks that the output has no $ref
// left but to definitions on cycles (when the size bound allows inlining
// everything else), that every $ref left resolves, that the default size
// bound holds, and that jsonschema-go accepts and rejects the same
// generated instances with the input and with the outputs.
func FuzzDereferenceStructured(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{7, 0, 0, 3, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2})
	f.Add([]byte("recursion and fan-out: \x07\x00\x03\x03\x03\x03\x00\x03\x03\x03\x03\x00\x03\x03\x03"))
	f.Add(bytes.Repeat([]byte{7, 1, 3, 2, 5, 0, 6, 4}, 16))
	f.Add(bytes.Repeat([]byte{0, 3, 3}, 40))
	f.Add(append([]byte{13}, bytes.Repeat([]byte{5, 2}, 40)...)) // a fan-out chain of 14
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &schemaGen{data: data}
		in := []byte(g.schema())
		before, err := resolve(in)
		if err != nil {
			t.Fatalf("generator made a schema jsonschema-go rejects: %v\n%s", err, in)
		}

		out, err := Dereference(in, nil)
		if err != nil {
			t.Fatalf("Dereference: %v\n%s", err, in)
		}
		after, err := resolve(out)
		if err != nil {
			t.Fatalf("output does not resolve: %v\ninput  %s\noutput %s", err, in, out)
		}
		inNodes, outNodes := countJSON(decode(t, string(in))), countJSON(decode(t, string(out)))
		if limit := max(4*inNodes, 1000); outNodes > limit {
			t.Fatalf("output has %d values, the bound is %d\n%s", outNodes, limit, in)
		}

		// With room to inline everything, only refs to cycles remain.
		const room = 20000
		full, err := Dereference(in, &Options{MaxNodes: room})
		if err != nil {
			t.Fatalf("Dereference(MaxNodes %d): %v", room, err)
		}
		fullRes, err := resolve(full)
		if err != nil {
			t.Fatalf("full output does not resolve: %v\n%s", err, full)
		}
		if inlinedSize(t, in) <= room {
			cyc := g.cyclic()
			for _, r := range refsIn(t, full) {
				if !cyc[r] {
					t.Fatalf("$ref %q is left, but it is on no cycle\ninput  %s\noutput %s", r, in, full)
				}
			}
		}

		for range 8 {
			inst := g.instance(5)
			want := before.Validate(inst) == nil
			for name, r := range map[string]interface {
				Validate(any) error
			}{"default": after, "full": fullRes} {
				if got := r.Validate(inst) == nil; got != want {
					b, _ := json.Marshal(inst)
					t.Fatalf("%s output: valid=%v on %s, input says %v\ninput  %s\noutput %s", name, got, b, want, in, out)
				}
			}
		}
	})
}

// refsIn returns the $ref values in schema positions of the schema data.
func refsIn(t *testing.T, data []byte) []string {
	root, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	d, err := index(root)
	if err != nil {
		t.Fatalf("indexing output: %v", err)
	}
	var refs []string
	for _, s := range d.sites {
		refs = append(refs, s.ref.lit)
	}
	return refs
}

// inlinedSize returns the size Dereference computes for the output of data
// with only the schemas on cycles kept.
func inlinedSize(t *testing.T, data []byte) int {
	root, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	d, err := index(root)
	if err != nil {
		t.Fatal(err)
	}
	p := newPlan(d)
	p.markCycles()
	return p.measure()
}
