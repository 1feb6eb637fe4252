package transform_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

func TestToolErrors(t *testing.T) {
	const basic = `{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"},"user":{"type":"string"}},"required":["q","user"]}`
	userID := func(context.Context, *mcpkit.Request) (any, error) { return "u", nil }
	for _, tc := range []struct {
		name   string
		tool   *mcpkit.Tool
		spec   transform.Spec
		want   error
		detail string // a part of the error's text
	}{
		{name: "nil tool", want: transform.ErrInvalidTool, detail: "nil tool"},
		{name: "no handler", tool: &mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: json.RawMessage(basic)}},
			want: transform.ErrInvalidTool, detail: `tool "t" has no handler`},
		{name: "nil HandlerFunc", tool: &mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: json.RawMessage(basic)}, Handler: mcpkit.HandlerFunc(nil)},
			want: transform.ErrInvalidTool, detail: "no handler"},
		{name: "no input schema", tool: &mcpkit.Tool{Tool: mcp.Tool{Name: "t"}, Handler: ok},
			want: transform.ErrInvalidTool, detail: "input schema: not a JSON object"},
		{name: "input schema not of type object", tool: toolWith(`{"type":"string"}`),
			want: transform.ErrInvalidTool, detail: `input schema: type must be "object"`},
		{name: "invalid x-mcp-header", tool: toolWith(`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`),
			want: transform.ErrInvalidTool, detail: `property "a": x-mcp-header is only for an argument of type string, integer or boolean, not "object"`},
		{name: "invalid x-mcp-header value", tool: toolWith(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`),
			spec: transform.Spec{Arguments: map[string]transform.Arg{"a": {Name: "b"}}},
			want: transform.ErrInvalidTool, detail: `property "b": x-mcp-header "A B" is not an HTTP header name: it has ' '`},
		{name: "invalid tool name", tool: toolWith(basic), spec: transform.Spec{Name: "no spaces"},
			want: mcpkit.ErrInvalidToolName, detail: `transform: invalid name: mcpkit: invalid tool name: "no spaces"`},
		{name: "tool name too long", tool: toolWith(basic), spec: transform.Spec{Name: strings.Repeat("x", 129)},
			want: transform.ErrInvalidName, detail: "129 characters"},
		{name: "invalid argument name", tool: toolWith(basic), spec: args("q", transform.Arg{Name: "the query"}),
			want: transform.ErrInvalidName, detail: `transform: invalid name: tool "t": argument "q": new name "the query"`},
		{name: "argument name too long", tool: toolWith(basic), spec: args("q", transform.Arg{Name: strings.Repeat("q", 65)}),
			want: transform.ErrInvalidName},
		{name: "unknown argument", tool: toolWith(basic), spec: args("query", transform.Arg{Description: "x"}),
			want: transform.ErrUnknownArgument, detail: `transform: unknown argument: tool "t": "query"`},
		{name: "two renamed to one name", tool: toolWith(basic),
			spec: transform.Spec{Arguments: map[string]transform.Arg{"q": {Name: "x"}, "n": {Name: "x"}}},
			want: transform.ErrDuplicateArgument, detail: `arguments "n" and "q" would both be called "x"`},
		{name: "renamed onto an untouched argument", tool: toolWith(basic), spec: args("q", transform.Arg{Name: "n"}),
			want: transform.ErrDuplicateArgument, detail: `arguments "n" and "q" would both be called "n"`},
		{name: "renamed onto a name only required", tool: toolWith(`{"type":"object","properties":{"q":{}},"required":["x"]}`), spec: args("q", transform.Arg{Name: "x"}),
			want: transform.ErrDuplicateArgument, detail: `arguments "q" and "x" would both be called "x"`},
		{name: "renamed onto a name only a dependency names", tool: toolWith(`{"type":"object","properties":{"q":{}},"anyOf":[{"dependentRequired":{"y":["z"]}}]}`),
			spec: args("q", transform.Arg{Name: "z"}), want: transform.ErrDuplicateArgument},
		{name: "hide a required argument without a value", tool: toolWith(basic), spec: args("user", transform.Arg{Hide: true}),
			want: transform.ErrMissingValue, detail: `argument "user" is required`},
		{name: "optional without a default", tool: toolWith(basic), spec: args("q", transform.Arg{Required: transform.Optional}),
			want: transform.ErrMissingValue, detail: `give it a Default`},
		{name: "Value and ValueFunc", tool: toolWith(basic), spec: args("user", transform.Arg{Hide: true, Value: "u", ValueFunc: userID}),
			want: transform.ErrInvalidSpec, detail: "Value and ValueFunc are both set"},
		{name: "Value without Hide", tool: toolWith(basic), spec: args("user", transform.Arg{Value: "u"}),
			want: transform.ErrInvalidSpec, detail: "for hidden arguments"},
		{name: "ValueFunc without Hide", tool: toolWith(basic), spec: args("user", transform.Arg{ValueFunc: userID}),
			want: transform.ErrInvalidSpec, detail: "for hidden arguments"},
		{name: "a hidden argument renamed", tool: toolWith(basic), spec: args("user", transform.Arg{Hide: true, Value: "u", Name: "u"}),
			want: transform.ErrInvalidSpec, detail: "takes only Value or ValueFunc"},
		{name: "Required with a Default", tool: toolWith(basic), spec: args("n", transform.Arg{Required: transform.Required, Default: 1}),
			want: transform.ErrInvalidSpec},
		{name: "unknown Requiredness", tool: toolWith(basic), spec: args("n", transform.Arg{Required: 7}),
			want: transform.ErrInvalidSpec},
		{name: "Value that does not marshal", tool: toolWith(basic), spec: args("user", transform.Arg{Hide: true, Value: func() {}}),
			want: transform.ErrInvalidSpec, detail: "Value"},
		{name: "Default that does not marshal", tool: toolWith(basic), spec: args("n", transform.Arg{Default: make(chan int)}),
			want: transform.ErrInvalidSpec, detail: "default: json: unsupported type"},
		{name: "Default the schema refuses", tool: toolWith(basic), spec: args("n", transform.Arg{Default: "ten"}),
			want: transform.ErrInvalidSpec, detail: "default"},
		{name: "nil middleware", tool: toolWith(basic), spec: transform.Spec{Middleware: []mcpkit.Middleware{nil}},
			want: transform.ErrInvalidSpec, detail: "middleware 0 is nil"},
		{name: "Meta that does not marshal", tool: toolWith(basic), spec: transform.Spec{Meta: mcp.Meta{"x": func() {}}},
			want: transform.ErrInvalidSpec, detail: "Meta"},
		{name: "root $ref", tool: toolWith(`{"type":"object","$ref":"#/$defs/a","properties":{"q":{}},"$defs":{"a":{"properties":{"q":{}}}}}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema, detail: "$ref at the root"},
		{name: "$ref in allOf", tool: toolWith(`{"type":"object","properties":{"q":{}},"allOf":[{"$ref":"#/$defs/a"}],"$defs":{"a":{"required":["q"]}}}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema, detail: "$ref at /allOf/0"},
		{name: "$ref to the root from a property", tool: toolWith(`{"type":"object","properties":{"q":{},"children":{"type":"array","items":{"$ref":"#"}}}}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema, detail: `"#" at /properties/children/items`},
		{name: "$ref to the root from a property called enum", tool: toolWith(`{"type":"object","properties":{"q":{},"enum":{"$ref":"#"}}}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema, detail: `"#" at /properties/enum`},
		{name: "$ref to a member", tool: toolWith(`{"type":"object","properties":{"q":{},"c":{"$ref":"#/anyOf/0"}},"anyOf":[{"properties":{"q":{}}}]}`),
			spec: args("q", transform.Arg{Hide: true}), want: transform.ErrUnsupportedSchema},
		{name: "$ref to an anchor of the root", tool: toolWith(`{"$anchor":"top","type":"object","properties":{"q":{},"c":{"$ref":"#top"}}}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema},
		{name: "$ref by URI to a root with an $id", tool: toolWith(`{"$id":"https://example.com/s","type":"object","properties":{"q":{},"c":{"$ref":"https://example.com/s"}}}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema},
		{name: "$ref by an escaped pointer", tool: toolWith(`{"type":"object","properties":{"q":{},"c":{"$ref":"#/%61llOf/0"}},"allOf":[{}]}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema},
		{name: "$recursiveRef", tool: toolWith(`{"type":"object","properties":{"q":{},"c":{"$recursiveRef":"#"}}}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema},
		{name: "propertyNames with a rename", tool: toolWith(`{"type":"object","properties":{"q":{}},"propertyNames":{"maxLength":1}}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema, detail: "propertyNames at the root"},
		{name: "patternProperties matching the new name", tool: toolWith(`{"type":"object","properties":{"q":{}},"allOf":[{"patternProperties":{"^que":{"type":"integer"}}}]}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema, detail: `patternProperties at /allOf/0: "^que" matches only one of "q" and "query"`},
		{name: "patternProperties matching the old name", tool: toolWith(`{"type":"object","properties":{"q":{}},"patternProperties":{"^q$":{}}}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema},
		{name: "patternProperties that is not a pattern", tool: toolWith(`{"type":"object","properties":{"q":{}},"patternProperties":{"(":{}}}`),
			spec: args("q", transform.Arg{Name: "query"}), want: transform.ErrUnsupportedSchema},
		{name: "hide with maxProperties", tool: toolWith(`{"type":"object","properties":{"q":{},"u":{}},"maxProperties":1}`),
			spec: args("u", transform.Arg{Hide: true}), want: transform.ErrUnsupportedSchema, detail: "maxProperties would count it"},
		{name: "hide what anyOf describes", tool: toolWith(`{"type":"object","properties":{"q":{},"u":{}},"anyOf":[{"properties":{"u":{"const":1}}}]}`),
			spec: args("u", transform.Arg{Hide: true}), want: transform.ErrUnsupportedSchema, detail: "a conditional subschema describes it at /anyOf/0"},
		{name: "hide what then requires", tool: toolWith(`{"type":"object","properties":{"q":{},"u":{}},"if":{},"then":{"required":["u"]}}`),
			spec: args("u", transform.Arg{Hide: true}), want: transform.ErrUnsupportedSchema, detail: "requires it at /then"},
		{name: "hide what dependentRequired names", tool: toolWith(`{"type":"object","properties":{"q":{},"u":{}},"dependentRequired":{"q":["u"]}}`),
			spec: args("u", transform.Arg{Hide: true}), want: transform.ErrUnsupportedSchema, detail: "dependentRequired requires it"},
		{name: "hide what dependentSchemas depends on", tool: toolWith(`{"type":"object","properties":{"q":{},"u":{}},"dependentSchemas":{"u":{}}}`),
			spec: args("u", transform.Arg{Hide: true}), want: transform.ErrUnsupportedSchema, detail: "dependentSchemas depends on it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := transform.Tool(tc.tool, tc.spec)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, %v; want an error wrapping %v", d, err, tc.want)
			}
			if d != nil {
				t.Errorf("got a tool with the error")
			}
			if !strings.HasPrefix(err.Error(), "transform: ") {
				t.Errorf("error %q: want the prefix transform: ", err)
			}
			if !strings.Contains(err.Error(), tc.detail) {
				t.Errorf("error %q: want it to say %q", err, tc.detail)
			}
		})
	}
}

func args(name string, a transform.Arg) transform.Spec {
	return transform.Spec{Arguments: map[string]transform.Arg{name: a}}
}

// TestParentUnchanged derives tools from one with a schema shared with
// another tool, $defs, x-mcp-header annotations and nested _meta, changes
// everything the derived tools hold, and finds the parent as it was.
func TestParentUnchanged(t *testing.T) {
	shared := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"q":      {Type: "string", Description: "what", Extra: map[string]any{"x-mcp-header": "Q"}},
			"user":   {Type: "string", Default: json.RawMessage(`"nobody"`)},
			"filter": {Ref: "#/$defs/filter"},
		},
		Required: []string{"q", "user"},
		Defs: map[string]*jsonschema.Schema{
			"filter": {Type: "object", Properties: map[string]*jsonschema.Schema{"tag": {Type: "string"}}},
		},
	}
	out := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	destructive := true
	parent := &mcpkit.Tool{
		Tool: mcp.Tool{
			Name:         "search",
			Description:  "Search.",
			InputSchema:  shared,
			OutputSchema: out,
			Meta:         mcp.Meta{"com.example/ui": map[string]any{"hints": []any{"a"}}, "drop": 1},
			Annotations:  &mcp.ToolAnnotations{DestructiveHint: &destructive},
			Icons:        []mcp.Icon{{Source: "https://example.com/i.png", Sizes: []string{"48x48"}}},
		},
		Handler:    ok,
		Middleware: []mcpkit.Middleware{func(h mcpkit.Handler) mcpkit.Handler { return h }},
		Tags:       []string{"a"},
	}
	sibling := &mcpkit.Tool{Tool: mcp.Tool{Name: "sibling", InputSchema: shared}, Handler: ok}
	before, siblingBefore := mustJSON(t, parent.Tool), mustJSON(t, sibling.Tool)

	specs := []transform.Spec{
		{},
		{Name: "find", Meta: mcp.Meta{"drop": nil, "com.example/x": map[string]any{"y": []any{1}}}, Tags: []string{"b"}},
		{Arguments: map[string]transform.Arg{
			"q":      {Name: "query", Description: "What to find.", Examples: []any{map[string]any{"k": "v"}}},
			"user":   {Hide: true},
			"filter": {Default: map[string]any{"tag": "x"}},
		}},
	}
	for _, spec := range specs {
		d, err := transform.Tool(parent, spec)
		if err != nil {
			t.Fatal(err)
		}
		scribble(d.InputSchema)
		scribble(d.OutputSchema)
		scribble(map[string]any(d.Meta))
		*d.Annotations.DestructiveHint = false
		d.Annotations.Title = "changed"
		d.Icons[0].Sizes[0] = "changed"
		d.Icons[0].Source = "changed"
		d.Tags = append(d.Tags[:0], "changed")
		d.Middleware[0] = nil
		if spec.Meta != nil {
			scribble(map[string]any(spec.Meta))
		}
	}
	if after := mustJSON(t, parent.Tool); after != before {
		t.Errorf("parent changed:\nbefore %s\n after %s", before, after)
	}
	if after := mustJSON(t, sibling.Tool); after != siblingBefore {
		t.Errorf("a tool sharing the parent's schema changed:\nbefore %s\n after %s", siblingBefore, after)
	}
	if parent.Tags[0] != "a" || parent.Middleware[0] == nil || !*parent.Annotations.DestructiveHint {
		t.Errorf("parent's tags, middleware or annotations changed")
	}
}

// scribble changes every map and slice reachable from v.
func scribble(v any) {
	switch v := v.(type) {
	case *jsonschema.Schema:
		if v == nil {
			return
		}
		v.Description = "scribbled"
		for i := range v.Required {
			v.Required[i] = "scribbled"
		}
		for _, m := range []map[string]*jsonschema.Schema{v.Properties, v.Defs} {
			for k, sub := range m {
				scribble(sub)
				m[k+"~"] = &jsonschema.Schema{}
			}
		}
		scribble(v.Extra)
		if v.Extra != nil {
			v.Extra["x-scribbled"] = true
		}
		if len(v.Default) > 0 {
			v.Default[0] = ' '
		}
	case map[string]any:
		for k, x := range v {
			scribble(x)
			v[k+"~"] = "scribbled"
		}
	case []any:
		for i, x := range v {
			scribble(x)
			v[i] = "scribbled"
		}
	}
}

// TestSchemaTypes: the derived tool's schemas, and those its parent's
// handler finds in req.Tool, have the Go type of the parent's.
func TestSchemaTypes(t *testing.T) {
	const schema = `{"type":"object","properties":{"q":{"type":"string"},"u":{"type":"string"}}}`
	var typed jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &typed); err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	json.Unmarshal([]byte(schema), &generic)
	spec := transform.Spec{Arguments: map[string]transform.Arg{"q": {Name: "query"}, "u": {Hide: true, Value: "x"}}}
	for _, tc := range []struct {
		name   string
		schema any
		want   string
	}{
		{"*jsonschema.Schema", &typed, "*jsonschema.Schema"},
		{"json.RawMessage", json.RawMessage(schema), "json.RawMessage"},
		{"map", generic, "map[string]interface {}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			parent := &mcpkit.Tool{Tool: mcp.Tool{Name: "p", InputSchema: tc.schema, OutputSchema: tc.schema}, Handler: rec}
			d, err := transform.Tool(parent, spec)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Handler.ServeTool(context.Background(), mcpkittest.NewRequest(d, nil)); err != nil {
				t.Fatal(err)
			}
			for what, v := range map[string]any{
				"derived input": d.InputSchema, "derived output": d.OutputSchema,
				"parent's input": rec.req.Tool.InputSchema, "parent's output": rec.req.Tool.OutputSchema,
			} {
				if got := fmt.Sprintf("%T", v); got != tc.want {
					t.Errorf("%s schema is a %s, want a %s", what, got, tc.want)
				}
			}
			want := `{"type":"object","properties":{"query":{"type":"string"}}}`
			if got := mustJSON(t, d.InputSchema); !jsonEqual(t, got, want) {
				t.Errorf("derived input schema %s, want %s", got, want)
			}
			if got := mustJSON(t, rec.req.Tool.InputSchema); !jsonEqual(t, got, schema) {
				t.Errorf("the parent's handler sees %s, want %s", got, schema)
			}
		})
	}
}

func TestDerivedDefinition(t *testing.T) {
	yes := true
	parent := &mcpkit.Tool{
		Tool: mcp.Tool{
			Name: "search", Title: "Search", Description: "Search.",
			InputSchema:  json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"hits":{"type":"integer"}}}`),
			Meta:         mcp.Meta{"keep": "k", "replace": 1, "remove": true},
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true},
			Icons:        []mcp.Icon{{Source: "a"}},
		},
		Handler:    ok,
		Tags:       []string{"x"},
		Version:    "1",
		Validation: mcpkit.Lenient,
	}
	t.Run("zero spec keeps everything", func(t *testing.T) {
		d, err := transform.Tool(parent, transform.Spec{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := mustJSON(t, d.Tool), mustJSON(t, parent.Tool); !jsonEqual(t, got, want) {
			t.Errorf("definition:\n got %s\nwant %s", got, want)
		}
		if d.Version != "1" || d.Validation != mcpkit.Lenient || len(d.Tags) != 1 || d.Tags[0] != "x" {
			t.Errorf("derived tool: version %q, validation %v, tags %v", d.Version, d.Validation, d.Tags)
		}
	})
	t.Run("spec replaces", func(t *testing.T) {
		d, err := transform.Tool(parent, transform.Spec{
			Name: "find", Title: "Find", Description: "Find things.",
			Tags:        []string{},
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: &yes},
			Meta:        mcp.Meta{"replace": 2, "remove": nil, "add": []int{1}},
			Icons:       []mcp.Icon{{Source: "b"}},
			Version:     "2",
		})
		if err != nil {
			t.Fatal(err)
		}
		want := `{"name":"find","title":"Find","description":"Find things.","inputSchema":{"type":"object"},
			"outputSchema":{"type":"object","properties":{"hits":{"type":"integer"}}},
			"_meta":{"keep":"k","replace":2,"add":[1]},
			"annotations":{"openWorldHint":true,"idempotentHint":false,"readOnlyHint":false},
			"icons":[{"src":"b"}]}`
		if got := mustJSON(t, d.Tool); !jsonEqual(t, got, want) {
			t.Errorf("definition:\n got %s\nwant %s", got, compact(t, want))
		}
		if d.Version != "2" || d.Tags == nil || len(d.Tags) != 0 {
			t.Errorf("version %q, tags %#v; want 2 and empty", d.Version, d.Tags)
		}
	})
}
