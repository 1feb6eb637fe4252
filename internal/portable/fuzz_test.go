package portable

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzRewrite reads any JSON as a schema: Check and Rewrite never panic
// on it, for any profile; Rewrite never breaks the rules it checks (its
// results pass Check) and never changes its input; a plan maps any
// arguments without panicking.
func FuzzRewrite(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"$ref":"#"}}}`), []byte(`{"a":null,"b":{"a":null}}`))
	f.Add([]byte(`{"type":"object","properties":{"x":{"type":"array","items":{"anyOf":[{"type":"object","properties":{"k":{"type":"string"}}},{"type":"null"}]}}}}`), []byte(`{"x":[null,{"k":null}]}`))
	f.Add([]byte(`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}},"allOf":[{"properties":{"m":{"properties":{"q":{"type":"string"}}}}}]}`), []byte(`{}`))
	f.Add([]byte(`{"type":"object","properties":{"t":{"type":"integer","exclusiveMinimum":1e400}},"required":[5,"t"]}`), []byte(`{"t":null}`))
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		in := bytes.Clone(schema)
		for _, p := range []Profile{AllProviders, Gemini, OpenAIStrict} {
			Check(schema, p)
			for _, omit := range []bool{false, true} {
				res, err := Rewrite(schema, p, &Options{Depth: 2, Omit: omit})
				if !bytes.Equal(schema, in) {
					t.Fatal("Rewrite changed its input")
				}
				if errors.Is(err, ErrInternal) {
					t.Fatalf("%v: %v\nschema %s", p, err, schema)
				}
				if err != nil {
					continue
				}
				if pbs := Check(res.Schema, p); pbs != nil {
					t.Fatalf("%v: %v\nschema %s\nresult %s", p, pbs, schema, res.Schema)
				}
				a := bytes.Clone(args)
				got := res.Plan.Apply(a)
				if !bytes.Equal(a, args) {
					t.Fatal("Apply changed its input")
				}
				// (The server refuses an object with a member twice: which
				// one counts is not Apply's business.)
				if want := refApply(res.Plan, args); !duplicates(args) && !equalJSON(got, want) {
					t.Fatalf("Apply(%s) = %s, want %s", args, got, want)
				}
			}
		}
	})
}

// refApply is what Apply does, the slow way: decode, remove, encode.
func refApply(pl *Plan, args []byte) []byte {
	if pl == nil {
		return args
	}
	v, err := decode(args)
	if err != nil {
		return args
	}
	if _, ok := v.(*object); !ok {
		return args
	}
	var remove func(v any, ps []*plan)
	remove = func(v any, ps []*plan) {
		var flat []*plan
		for _, p := range ps {
			flat = p.flatten(flat, 0)
		}
		switch v := v.(type) {
		case *object:
			for i := 0; i < len(v.keys); i++ {
				drop, known := true, false
				var subs []*plan
				for _, p := range flat {
					if pp := p.props[v.keys[i]]; pp != nil {
						known, drop = true, drop && pp.absentIfNull
						if pp.sub != nil {
							subs = append(subs, pp.sub)
						}
					}
				}
				if known && drop && v.vals[i] == nil {
					v.del(v.keys[i])
					i--
					continue
				}
				remove(v.vals[i], subs)
			}
		case []any:
			var items []*plan
			for _, p := range flat {
				if p.items != nil {
					items = append(items, p.items)
				}
			}
			for _, x := range v {
				remove(x, items)
			}
		}
	}
	remove(v, []*plan{pl.root})
	return encode(nil, v)
}

// equalJSON reports whether a and b hold the same JSON value, or are the
// same bytes when they are not JSON.
func equalJSON(a, b []byte) bool {
	va, erra := decode(a)
	vb, errb := decode(b)
	if erra != nil || errb != nil {
		return bytes.Equal(a, b)
	}
	return equal(va, vb)
}

// duplicates reports whether data, if JSON, has an object with a member
// twice.
func duplicates(data []byte) bool {
	if !json.Valid(data) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
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
				k, err := dec.Token()
				if err != nil {
					return false
				}
				if seen[k.(string)] {
					return true
				}
				seen[k.(string)] = true
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
