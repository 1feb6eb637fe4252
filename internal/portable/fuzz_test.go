package portable

import (
	"bytes"
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
				res.Plan.Apply(a)
				if !bytes.Equal(a, args) {
					t.Fatal("Apply changed its input")
				}
			}
		}
	})
}
