package portable

import (
	"errors"
	"strings"
	"testing"

	validator "github.com/mcpkit/mcpkit/internal/schema"
)

// want is what Rewrite gives for one profile: the schema, or an error
// containing err.
type want struct {
	schema string
	exact  bool
	plan   bool
	err    string
}

var rewriteTests = []struct {
	name   string
	schema string
	opts   *Options
	want   map[Profile]want
}{
	{
		name:   "nullable string, optional, with a title and a bound",
		schema: `{"type":"object","properties":{"a":{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}],"default":null,"title":"A"}}}`,
		want: map[Profile]want{
			AllProviders: {schema: `{"type":"object","properties":{"a":{"anyOf":[{"type":"string","title":"A"},{"type":"null"}]}}}`},
			Gemini:       {schema: `{"type":"object","properties":{"a":{"type":"string","nullable":true,"title":"A","default":null,"maxLength":5}}}`, exact: true},
			OpenAIStrict: {schema: `{"type":"object","properties":{"a":{"type":["string","null"],"title":"A"}},"required":["a"],"additionalProperties":false}`},
		},
	},
	{
		name:   "enums and const",
		schema: `{"type":"object","properties":{"e":{"enum":["x","y",null]},"n":{"enum":[1,2,3]},"c":{"const":"k"}},"required":["e"]}`,
		want: map[Profile]want{
			AllProviders: {schema: `{"type":"object","properties":{"e":{"anyOf":[{"type":"string","enum":["x","y"]},{"type":"null"}]},"n":{"type":"integer"},"c":{"type":"string","enum":["k"]}},"required":["e"]}`},
			Gemini:       {schema: `{"type":"object","properties":{"e":{"type":"string","nullable":true,"enum":["x","y"]},"n":{"type":"integer"},"c":{"type":"string","enum":["k"]}},"required":["e"]}`},
			OpenAIStrict: {schema: `{"type":"object","properties":{"e":{"type":["string","null"],"enum":["x","y",null]},"n":{"type":["integer","null"],"enum":[1,2,3,null]},"c":{"type":["string","null"],"enum":["k",null]}},"required":["e","n","c"],"additionalProperties":false}`, exact: true, plan: true},
		},
	},
	{
		name:   "exclusive bounds and multipleOf",
		schema: `{"type":"object","properties":{"i":{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10},"f":{"type":"number","exclusiveMinimum":0.5,"multipleOf":0.5}}}`,
		want: map[Profile]want{
			AllProviders: {schema: `{"type":"object","properties":{"i":{"type":"integer","minimum":1,"maximum":9},"f":{"type":"number","minimum":0.5}}}`},
			Gemini:       {schema: `{"type":"object","properties":{"i":{"type":"integer","minimum":1,"maximum":9},"f":{"type":"number","minimum":0.5}}}`},
			OpenAIStrict: {schema: `{"type":"object","properties":{"i":{"type":["integer","null"],"exclusiveMinimum":0,"exclusiveMaximum":10},"f":{"type":["number","null"],"exclusiveMinimum":0.5,"multipleOf":0.5}},"required":["i","f"],"additionalProperties":false}`, exact: true, plan: true},
		},
	},
	{
		name:   "oneOf and allOf",
		schema: `{"type":"object","properties":{"o":{"oneOf":[{"type":"string"},{"type":"integer"}]},"m":{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer"}}}]}}}`,
		want: map[Profile]want{
			Gemini:       {schema: `{"type":"object","properties":{"o":{"anyOf":[{"type":"string"},{"type":"integer"}]},"m":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}}}`},
			OpenAIStrict: {schema: `{"type":"object","properties":{"o":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]},"m":{"type":["object","null"],"properties":{"a":{"type":"string"},"b":{"type":["integer","null"]}},"required":["a","b"],"additionalProperties":false}},"required":["o","m"],"additionalProperties":false}`, plan: true},
		},
	},
	{
		name:   "no type but properties, and formats",
		schema: `{"type":"object","properties":{"p":{"properties":{"x":{"type":"string"}}},"u":{"type":"string","format":"uuid"},"t":{"type":"string","format":"date-time"},"l":{"type":"integer","format":"int64"}}}`,
		want: map[Profile]want{
			AllProviders: {schema: `{"type":"object","properties":{"p":{"type":"object","properties":{"x":{"type":"string"}}},"u":{"type":"string"},"t":{"type":"string","format":"date-time"},"l":{"type":"integer"}}}`, exact: true},
			OpenAIStrict: {schema: `{"type":"object","properties":{"p":{"type":["object","null"],"properties":{"x":{"type":["string","null"]}},"required":["x"],"additionalProperties":false},"u":{"type":["string","null"],"format":"uuid"},"t":{"type":["string","null"],"format":"date-time"},"l":{"type":["integer","null"]}},"required":["p","u","t","l"],"additionalProperties":false}`, exact: true, plan: true},
		},
	},
	{
		name:   "alternatives inside items",
		schema: `{"type":"object","properties":{"objs":{"type":"array","items":{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"integer"}},"required":["b"]}]}},"xs":{"type":"array","items":{"type":["string","null"]}}}}`,
		want: map[Profile]want{
			AllProviders: {schema: `{"type":"object","properties":{"objs":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}},"xs":{"type":"array","items":{"type":"string"}}}}`},
			Gemini:       {schema: `{"type":"object","properties":{"objs":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}},"xs":{"type":"array","items":{"type":"string","nullable":true}}}}`},
			OpenAIStrict: {schema: `{"type":"object","properties":{"objs":{"type":["array","null"],"items":{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false},{"type":"object","properties":{"b":{"type":"integer"}},"required":["b"],"additionalProperties":false}]}},"xs":{"type":["array","null"],"items":{"type":["string","null"]}}},"required":["objs","xs"],"additionalProperties":false}`, exact: true, plan: true},
		},
	},
	{
		name:   "scalars of several types inside items",
		schema: `{"type":"object","properties":{"xs":{"type":"array","items":{"type":["string","integer"]}}}}`,
		want: map[Profile]want{
			AllProviders: {err: "/properties/xs/items: items of several kinds"},
			Gemini:       {err: "/properties/xs/items: items of several kinds"},
			OpenAIStrict: {schema: `{"type":"object","properties":{"xs":{"type":["array","null"],"items":{"anyOf":[{"type":"string"},{"type":"integer"}]}}},"required":["xs"],"additionalProperties":false}`, exact: true, plan: true},
		},
	},
	{
		name:   "a property no value satisfies",
		schema: `{"type":"object","properties":{"f":false}}`,
		want: map[Profile]want{
			Gemini:       {schema: `{"type":"object","properties":{}}`},
			OpenAIStrict: {schema: `{"type":"object","properties":{},"required":[],"additionalProperties":false}`, exact: true},
		},
	},
	{
		name:   "annotations providers refuse",
		schema: `{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"Q","examples":["a"],"$comment":"c","deprecated":true}},"$schema":"https://json-schema.org/draft/2020-12/schema"}`,
		want: map[Profile]want{
			Gemini: {schema: `{"type":"object","properties":{"q":{"type":"string"}}}`, exact: true},
		},
	},
	{
		name:   "a default",
		schema: `{"type":"object","properties":{"k":{"type":"integer","default":3}}}`,
		want: map[Profile]want{
			AllProviders: {schema: `{"type":"object","properties":{"k":{"type":"integer"}}}`},
			Gemini:       {schema: `{"type":"object","properties":{"k":{"type":"integer","default":3}}}`, exact: true},
			OpenAIStrict: {schema: `{"type":"object","properties":{"k":{"type":["integer","null"]}},"required":["k"],"additionalProperties":false}`, plan: true},
		},
	},
	{
		name:   "alternatives that disagree on what null means",
		schema: `{"type":"object","properties":{"v":{"anyOf":[{"type":"object","properties":{"k":{"type":"string"}}},{"type":"object","properties":{"k":{"type":["string","null"]}}}]}}}`,
		want: map[Profile]want{
			OpenAIStrict: {schema: `{"type":"object","properties":{"v":{"anyOf":[{"type":"object","properties":{"k":{"type":["string","null"]}},"required":["k"],"additionalProperties":false},{"type":"object","properties":{"k":{"type":["string","null"]}},"required":["k"],"additionalProperties":false},{"type":"null"}]}},"required":["v"],"additionalProperties":false}`, plan: true},
		},
	},
	{
		name:   "a linked list",
		schema: `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},"required":["v","next"]}},"type":"object","properties":{"list":{"$ref":"#/$defs/node"}},"required":["list"]}`,
		opts:   &Options{Depth: 2},
		want: map[Profile]want{
			AllProviders: {schema: `{"type":"object","properties":{"list":{"type":"object","properties":{"v":{"type":"integer"},"next":{"anyOf":[{"type":"object","properties":{"v":{"type":"integer"},"next":{"type":"null"}},"required":["v","next"]},{"type":"null"}]}},"required":["v","next"]}},"required":["list"]}`, exact: true},
			Gemini:       {schema: `{"type":"object","properties":{"list":{"type":"object","properties":{"v":{"type":"integer"},"next":{"type":"object","nullable":true,"properties":{"v":{"type":"integer"},"next":{"type":"null"}},"required":["v","next"]}},"required":["v","next"]}},"required":["list"]}`, exact: true},
			OpenAIStrict: {schema: `{"type":"object","properties":{"list":{"$ref":"#/$defs/node"}},"required":["list"],"additionalProperties":false,"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},"required":["v","next"],"additionalProperties":false}}}`, exact: true},
		},
	},
	{
		name:   "a definition whose name a URI escapes",
		schema: `{"$defs":{"a b/c":{"type":"object","properties":{"n":{"$ref":"#/$defs/a%20b~1c"}}}},"type":"object","properties":{"x":{"$ref":"#/$defs/a%20b~1c"}},"required":["x"]}`,
		want: map[Profile]want{
			OpenAIStrict: {schema: `{"type":"object","properties":{"x":{"$ref":"#/$defs/a_b_c"}},"required":["x"],"additionalProperties":false,"$defs":{"a_b_c":{"type":"object","properties":{"n":{"anyOf":[{"$ref":"#/$defs/a_b_c"},{"type":"null"}]}},"required":["n"],"additionalProperties":false}}}`, exact: true, plan: true},
		},
	},
	{
		name:   "a tree",
		schema: `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}`,
		opts:   &Options{Depth: 1},
		want: map[Profile]want{
			Gemini:       {schema: `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},"required":["name"]}`},
			OpenAIStrict: {schema: `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":["array","null"],"items":{"$ref":"#"}}},"required":["name","children"],"additionalProperties":false}`, exact: true, plan: true},
		},
	},
	{
		name:   "a required recursion",
		schema: `{"type":"object","properties":{"n":{"$ref":"#"}},"required":["n"]}`,
		want: map[Profile]want{
			Gemini:       {err: "the recursion goes deeper than the levels unrolled"},
			OpenAIStrict: {schema: `{"type":"object","properties":{"n":{"$ref":"#"}},"required":["n"],"additionalProperties":false}`, exact: true},
		},
	},
	{
		name:   "what cannot be expressed",
		schema: `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}},"any":{"description":"Any JSON value."},"xs":{"type":"array"},"bad-name":{"type":"string"}}}`,
		want: map[Profile]want{
			AllProviders: {err: "/properties/m: an object without properties"},
			Gemini:       {err: "/properties/m: an object without properties"},
			OpenAIStrict: {err: "/properties/m: an object with arbitrary property names (a map)"},
		},
	},
	{
		name:   "an object that takes any properties",
		schema: `{"type":"object","properties":{"o":{"type":"object"},"c":{"type":"object","additionalProperties":false}}}`,
		want: map[Profile]want{
			Gemini:       {err: "/properties/o: an object without properties"},
			OpenAIStrict: {err: "/properties/o: an object with arbitrary property names (a map)"},
		},
	},
	{
		name:   "what cannot be expressed, left out",
		schema: `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}},"any":{"description":"Any JSON value."},"xs":{"type":"array"},"bad-name":{"type":"string"},"ok":{"type":"boolean"}}}`,
		opts:   &Options{Omit: true},
		want: map[Profile]want{
			Gemini:       {schema: `{"type":"object","properties":{"ok":{"type":"boolean"}}}`},
			OpenAIStrict: {schema: `{"type":"object","properties":{"bad-name":{"type":["string","null"]},"ok":{"type":["boolean","null"]}},"required":["bad-name","ok"],"additionalProperties":false}`, exact: true, plan: true},
		},
	},
	{
		name:   "alternatives and conditions at the root",
		schema: `{"type":"object","additionalProperties":false,"properties":{"email":{"type":"string"},"phone":{"type":"string"},"how":{"enum":["phone","email"]}},"required":["how"],"anyOf":[{"required":["phone"]},{"required":["email"]}],"if":{"properties":{"how":{"const":"phone"}}},"then":{"required":["phone"]}}`,
		want: map[Profile]want{
			AllProviders: {schema: `{"type":"object","properties":{"email":{"type":"string"},"phone":{"type":"string"},"how":{"type":"string","enum":["phone","email"]}},"required":["how"]}`},
			OpenAIStrict: {schema: `{"type":"object","properties":{"email":{"type":["string","null"]},"phone":{"type":["string","null"]},"how":{"type":"string","enum":["phone","email"]}},"required":["email","phone","how"],"additionalProperties":false}`, plan: true},
		},
	},
	{
		name:   "keywords in another case, as the server reads them",
		schema: `{"type":"object","properties":{"a":{"TYPE":"string","type":"integer","Minimum":1},"b":{"tYpe":["array"],"items":{"type":"string"}}}}`,
		want: map[Profile]want{
			Gemini: {schema: `{"type":"object","properties":{"a":{"type":"integer","minimum":1},"b":{"type":"array","items":{"type":"string"}}}}`, exact: true},
		},
	},
	{
		name:   "argument names",
		schema: `{"type":"object","properties":{"a-b":{"type":"string"}},"required":["a-b"]}`,
		opts:   &Options{Omit: true},
		want: map[Profile]want{
			Gemini:       {err: `argument name "a-b"`},
			OpenAIStrict: {schema: `{"type":"object","properties":{"a-b":{"type":"string"}},"required":["a-b"],"additionalProperties":false}`, exact: true},
		},
	},
}

func TestRewrite(t *testing.T) {
	for _, tt := range rewriteTests {
		t.Run(tt.name, func(t *testing.T) {
			for p, w := range tt.want {
				in := []byte(tt.schema)
				res, err := Rewrite(in, p, tt.opts)
				if string(in) != tt.schema {
					t.Fatalf("%v: Rewrite changed its input", p)
				}
				if w.err != "" {
					var ue *UnsupportedError
					if err == nil || !strings.Contains(err.Error(), w.err) || !errors.As(err, &ue) {
						t.Errorf("%v: error %v, want an *UnsupportedError with %q", p, err, w.err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%v: %v", p, err)
					continue
				}
				if string(res.Schema) != w.schema {
					t.Errorf("%v:\n got %s\nwant %s", p, res.Schema, w.schema)
				}
				if res.Exact != w.exact || (res.Plan != nil) != w.plan {
					t.Errorf("%v: exact %v, plan %v; want %v, %v (dropped %q)", p, res.Exact, res.Plan != nil, w.exact, w.plan, res.Dropped)
				}
				if res.Exact != (len(res.Dropped) == 0) {
					t.Errorf("%v: exact %v, dropped %q", p, res.Exact, res.Dropped)
				}
				if pbs := Check(res.Schema, p); pbs != nil {
					t.Errorf("%v: the result breaks the profile: %v", p, pbs)
				}
				for _, s := range [][]byte{res.Schema, res.Validate} {
					if _, err := validator.Compile(s); s != nil && err != nil {
						t.Errorf("%v: the server cannot compile %s: %v", p, s, err)
					}
				}
			}
		})
	}
}

// Gemini's nullable is written as JSON Schema for the server to check.
func TestRewriteValidate(t *testing.T) {
	res, err := Rewrite([]byte(`{"type":"object","properties":{"e":{"enum":["x",null]},"xs":{"type":"array","items":{"type":["integer","null"]}},"s":{"type":"string"}}}`), Gemini, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"e":{"type":["string","null"],"enum":["x",null]},"xs":{"type":"array","items":{"type":["integer","null"]}},"s":{"type":"string"}}}`
	if string(res.Validate) != want {
		t.Errorf("Validate\n got %s\nwant %s", res.Validate, want)
	}
	for _, p := range []Profile{AllProviders, OpenAIStrict} {
		if res, err := Rewrite([]byte(`{"type":"object","properties":{"e":{"enum":["x",null]}}}`), p, nil); err != nil || res.Validate != nil {
			t.Errorf("%v: Validate %s, %v; want none", p, res.Validate, err)
		}
	}
	if res, err := Rewrite([]byte(`{"type":"object","properties":{"s":{"type":"string"}}}`), Gemini, nil); err != nil || res.Validate != nil {
		t.Errorf("Gemini without null: Validate %s, %v; want none", res.Validate, err)
	}
}

func TestRewriteErrors(t *testing.T) {
	for _, tt := range []struct {
		schema string
		err    error
	}{
		{`{"type":"object",`, ErrInvalid},
		{`[1]`, ErrInvalid},
		{`{"type":"object","properties":{"a":{"$ref":"https://example.com/s"}}}`, ErrUnsupported},
		{`{"type":"object","properties":{"a":{"$dynamicRef":"#x"}},"$dynamicAnchor":"x"}`, ErrUnsupported},
	} {
		if _, err := Rewrite([]byte(tt.schema), Gemini, nil); !errors.Is(err, tt.err) {
			t.Errorf("%s: error %v, want %v", tt.schema, err, tt.err)
		}
	}
}
