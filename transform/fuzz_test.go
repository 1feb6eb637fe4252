package transform_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

var sentinels = []error{
	transform.ErrInvalidTool, transform.ErrInvalidSpec, transform.ErrInvalidName, transform.ErrUnknownArgument,
	transform.ErrDuplicateArgument, transform.ErrMissingValue, transform.ErrUnsupportedSchema,
}

// FuzzArgTransforms applies a sequence of argument transforms, read from
// ops, to the schema in schemaJSON. Tool never panics and never changes the
// schema it was given (also when the derived schema is changed
// afterwards); it fails with one of its errors or returns a tool whose
// handler hands the parent the values sent under the new names and the
// hidden values, whatever the client sends, and which a Server accepts
// whenever it accepts the parent.
//
// A schemaJSON that is not JSON is read as a sequence of choices that
// build a schema (see genSchema), with the keywords the rewrite handles.
//
// Each op is three bytes: what to do, which argument (among the names the
// schema's properties use, and one it does not), and a parameter.
func FuzzArgTransforms(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"]}`), []byte{0, 0, 1, 2, 1, 0})
	f.Fuzz(func(t *testing.T, schemaJSON, ops []byte) {
		var schema any
		if err := json.Unmarshal(schemaJSON, &schema); err != nil {
			// Not JSON: read the bytes as choices of a schema instead,
			// so that no input is wasted.
			schema = genSchema(&byteReader{data: schemaJSON}, 0)
			schemaJSON, _ = json.Marshal(schema)
		}
		if len(ops) > 0 && ops[0]&0x80 != 0 {
			// The same schema as a *jsonschema.Schema, as typed tools have it.
			var s jsonschema.Schema
			if json.Unmarshal(schemaJSON, &s) != nil {
				return
			}
			schema = &s
		}
		before, err := json.Marshal(schema)
		if err != nil {
			return
		}
		names := propertyNames(schema)
		spec := transform.Spec{Arguments: map[string]transform.Arg{}}
		for op := range slices.Chunk(ops, 3) {
			if len(op) < 3 {
				break
			}
			name := "absent"
			if i := int(op[1]); i < len(names) {
				name = names[i]
			}
			a := spec.Arguments[name]
			applyOp(&a, op[0], op[2], names)
			spec.Arguments[name] = a
		}

		rec := &recorder{}
		parent := &mcpkit.Tool{Tool: mcp.Tool{Name: "parent", InputSchema: schema}, Handler: rec}
		d, err := transform.Tool(parent, spec)
		if after, _ := json.Marshal(schema); string(after) != string(before) {
			t.Fatalf("Tool changed its input schema:\nbefore %s\n after %s", before, after)
		}
		if err != nil {
			if !slices.ContainsFunc(sentinels, func(s error) bool { return errors.Is(err, s) }) || !strings.HasPrefix(err.Error(), "transform: ") {
				t.Fatalf("error %q wraps none of the package's errors", err)
			}
			return
		}

		if mcpkit.NewServer(&mcp.Implementation{Name: "p"}, nil).Add(parent) == nil {
			if err := mcpkit.NewServer(&mcp.Implementation{Name: "d"}, nil).Add(d); err != nil {
				t.Fatalf("a server takes the parent and refuses the derived tool: %v\nderived schema %s", err, mustJSON(t, d.InputSchema))
			}
		}

		// The client sends every name there is, each with a value of its
		// own.
		sent := map[string]any{}
		all := append(slices.Clone(names), "absent")
		for _, a := range spec.Arguments {
			all = append(all, a.Name)
		}
		for _, n := range all {
			sent[n] = "client:" + n
			sent[strings.ToUpper(n)] = "client:" + strings.ToUpper(n)
		}
		res, err := d.Handler.ServeTool(context.Background(), mcpkittest.NewRequest(d, sent))
		if err != nil {
			var ve *transform.ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("handler: %v", err)
			}
			return
		}
		if res == nil {
			t.Fatal("nil result")
		}
		got := rec.args(t)
		for old, a := range spec.Arguments {
			switch {
			case a.Hide && a.Value != nil:
				if g, w := mustJSON(t, got[old]), mustJSON(t, a.Value); g != w {
					t.Errorf("hidden %q: the parent got %s, want %s", old, g, w)
				}
			case a.Hide:
				if s, _ := got[old].(string); strings.HasPrefix(s, "client:") {
					t.Errorf("hidden %q: the parent got the client's %q", old, s)
				}
			case a.Name != "" && a.Name != old:
				if g, w := got[old], "client:"+a.Name; g != w {
					t.Errorf("%q renamed %q: the parent got %v, want %v", old, a.Name, g, w)
				}
			}
		}

		// The derived schema is the derived tool's own.
		scribble(d.InputSchema)
		if after, _ := json.Marshal(schema); string(after) != string(before) {
			t.Fatalf("the derived schema shares with the parent's:\nbefore %s\n after %s", before, after)
		}
	})
}

// applyOp changes a as op says, with param choosing among values.
func applyOp(a *transform.Arg, op, param byte, names []string) {
	pick := func(vs ...any) any { return vs[int(param)%len(vs)] }
	switch op % 9 {
	case 0:
		newNames := append([]string{"a", "b", "x_1", "query", "bad name", strings.Repeat("l", 65), ""}, names...)
		a.Name = newNames[int(param)%len(newNames)]
	case 1:
		a.Hide = true
	case 2:
		a.Hide, a.Value = true, pick("server", 7, true, map[string]any{"k": []any{1}}, nil)
	case 3:
		a.Hide = true
		v := pick("fn", nil, errors.New("no value"))
		a.ValueFunc = func(context.Context, *mcpkit.Request) (any, error) {
			if err, ok := v.(error); ok {
				return nil, err
			}
			return v, nil
		}
	case 4:
		a.Description = pick("", "A description.", "ünïcödé").(string)
	case 5:
		a.Default = pick(1, "s", nil, false, map[string]any{}, []any{1.5})
	case 6:
		a.Required = transform.Requiredness(param % 4)
	case 7:
		a.Examples, _ = pick([]any{1}, []any{}, []any{"x", nil}, nil).([]any)
	case 8:
		*a = transform.Arg{}
	}
}

// propertyNames returns the names used as properties anywhere in the
// schema s, sorted.
func propertyNames(s any) []string {
	data, _ := json.Marshal(s)
	var v any
	json.Unmarshal(data, &v)
	set := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for k := range props {
					set[k] = true
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return slices.Sorted(maps.Keys(set))
}

// byteReader hands out the bytes of data one by one, then zeros.
type byteReader struct {
	data []byte
	i    int
}

func (r *byteReader) next() int {
	if r.i >= len(r.data) {
		return 0
	}
	r.i++
	return int(r.data[r.i-1])
}

// pick returns one of vs, as the next byte chooses.
func (r *byteReader) pick(vs ...string) string { return vs[r.next()%len(vs)] }

// genSchema builds an object schema from the choices r makes: properties of
// a few kinds (some with defaults, x-mcp-header annotations, $refs), required
// lists, and, below the root, the keywords whose subschemas apply to the
// same object, dependencies, patterns and references back to the root.
func genSchema(r *byteReader, depth int) map[string]any {
	names := []string{"a", "b", "q", "user", "A", "x_1", "query"}
	s := map[string]any{}
	if depth == 0 || r.next()%2 == 0 {
		s["type"] = "object"
	}
	props := map[string]any{}
	for range r.next() % 5 {
		name := r.pick(names...)
		switch r.next() % 8 {
		case 0:
			props[name] = map[string]any{"type": "string"}
		case 1:
			props[name] = map[string]any{"type": "integer", "default": r.next()}
		case 2:
			props[name] = map[string]any{"type": "string", "x-mcp-header": r.pick("H1", "H2", "Bad Header")}
		case 3:
			props[name] = true
		case 4:
			props[name] = map[string]any{"$ref": r.pick("#/$defs/d", "#", "#/allOf/0", "#top")}
		case 5:
			props[name] = map[string]any{"type": "object", "properties": map[string]any{r.pick(names...): map[string]any{"type": "string"}}}
		case 6:
			props[name] = map[string]any{"type": "string", "default": "d", "x-mcp-header": "H3"}
		case 7:
			props[name] = false
		}
	}
	if len(props) > 0 {
		s["properties"] = props
	}
	var required []any
	for range r.next() % 3 {
		required = append(required, r.pick(names...))
	}
	if required != nil {
		s["required"] = required
	}
	for range r.next() % 4 {
		switch kw := r.pick("additionalProperties", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
			"dependentRequired", "dependentSchemas", "patternProperties", "propertyNames", "minProperties",
			"$defs", "$ref", "$anchor", "$id", "unevaluatedProperties"); kw {
		case "additionalProperties", "unevaluatedProperties":
			s[kw] = r.next()%2 == 0
		case "allOf", "anyOf", "oneOf":
			if depth < 3 {
				s[kw] = []any{genSchema(r, depth+1), genSchema(r, depth+1)}
			}
		case "not", "if", "then", "else":
			if depth < 3 {
				s[kw] = genSchema(r, depth+1)
			}
		case "dependentRequired":
			s[kw] = map[string]any{r.pick(names...): []any{r.pick(names...)}}
		case "dependentSchemas":
			if depth < 3 {
				s[kw] = map[string]any{r.pick(names...): genSchema(r, depth+1)}
			}
		case "patternProperties":
			s[kw] = map[string]any{r.pick("^q", "^x_", "a$", "^$", "("): map[string]any{"type": "string"}}
		case "propertyNames":
			s[kw] = map[string]any{"maxLength": 5}
		case "minProperties":
			s[kw] = 1
		case "$defs":
			s[kw] = map[string]any{"d": map[string]any{"type": "string"}}
		case "$ref":
			s[kw] = r.pick("#/$defs/d", "#")
		case "$anchor":
			s[kw] = "top"
		case "$id":
			s[kw] = "https://example.com/s"
		}
	}
	return s
}
