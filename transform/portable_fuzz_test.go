package transform_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/portable"
	"github.com/mcpkit/mcpkit/internal/schema"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

var profiles = []transform.Profile{transform.AllProviders, transform.Gemini, transform.OpenAIStrict}

// FuzzPortable rewrites an input schema for every profile. Portable never
// panics and never changes the schema it is given; it fails with
// ErrNotPortable, or returns a tool whose listed schema CheckPortable
// finds nothing wrong with, which a Server accepts, and whose handler
// serves calls without panicking.
//
// A schema that is not JSON is read as a sequence of choices that build
// one (see genPortable), with the keywords that providers refuse. The last
// byte chooses the options: the recursion depth, and OmitUnsupported.
func FuzzPortable(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"array","items":{"anyOf":[{"type":"integer"},{"type":"null"}]}}},"required":["a"]}`))
	f.Fuzz(fuzzPortable)
}

func fuzzPortable(t *testing.T, data []byte) {
	var sch any
	if err := json.Unmarshal(data, &sch); err != nil {
		sch = genPortable(&byteReader{data: data}, 0)
	}
	before, err := json.Marshal(sch)
	if err != nil {
		return
	}
	parent := &mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: sch}, Handler: echoArgs}
	if mcpkit.CheckTool(parent) != nil {
		return // a server would not take it
	}
	var opts transform.PortableOptions
	if len(data) > 0 {
		last := data[len(data)-1]
		opts.RecursionDepth = int(last % 4)
		opts.OmitUnsupported = last&4 != 0
	}
	for _, p := range profiles {
		d, err := transform.Portable(p, &opts)(parent)
		if after, _ := json.Marshal(sch); string(after) != string(before) {
			t.Fatalf("%v changed the input schema:\nbefore %s\n after %s", p, before, after)
		}
		if err != nil {
			if !errors.Is(err, transform.ErrNotPortable) || errors.Is(err, portable.ErrInternal) {
				t.Fatalf("%v: %v\ninput %s", p, err, before)
			}
			continue
		}
		if pbs := transform.CheckPortable(p, &d.Tool); pbs != nil {
			t.Fatalf("%v: the rewritten schema breaks the profile: %v\ninput %s\noutput %s", p, pbs, before, mustJSONString(d.InputSchema))
		}
		if err := mcpkit.CheckTool(d); err != nil {
			t.Fatalf("%v: a server refuses the rewritten tool: %v\ninput %s\noutput %s", p, err, before, mustJSONString(d.InputSchema))
		}
		servePortableCalls(t, p, &opts, sch, d.InputSchema)
	}
}

// servePortableCalls serves calls to a tool with the input schema sch,
// rewritten for p, through a server's whole chain: whatever the calls,
// the tool gets only arguments that sch admits.
func servePortableCalls(t *testing.T, p transform.Profile, opts *transform.PortableOptions, sch, listed any) {
	orig, err := schema.Compile(sch)
	if err != nil {
		t.Fatal(err)
	}
	var bad string
	tool := &mcpkit.Tool{Tool: mcp.Tool{Name: "t", InputSchema: sch}, Handler: mcpkit.HandlerFunc(func(_ context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		if err := orig.Validate(req.Arguments); err != nil && bad == "" {
			bad = fmt.Sprintf("%s: %v", req.Arguments, err)
		}
		return &mcp.CallToolResult{}, nil
	})}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "fuzz"}, nil)
	if err := srv.Add(tool); err != nil {
		t.Fatal(err)
	}
	if err := srv.Transform(transform.Portable(p, opts)); err != nil {
		t.Fatalf("%v: the server refuses the transform that served the tool: %v", p, err)
	}
	for _, args := range fuzzCalls(listed) {
		res, err := mcpkittest.ServeTool(context.Background(), srv, "t", args)
		if err == nil && res == nil {
			t.Fatalf("%v: nil result and nil error", p)
		}
		if bad != "" {
			t.Fatalf("%v: the tool got arguments its schema refuses: %s\nschema %s\nlisted %s", p, bad, mustJSONString(sch), mustJSONString(listed))
		}
	}
}

func mustJSONString(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// fuzzCalls returns arguments to call a tool with: none, and null, a
// string and an object for each listed argument.
func fuzzCalls(schema any) []map[string]any {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	data, _ := json.Marshal(schema)
	json.Unmarshal(data, &s)
	calls := []map[string]any{{}}
	for _, v := range []any{nil, "x", map[string]any{"a": nil}} {
		c := map[string]any{}
		for name := range s.Properties {
			c[name] = v
		}
		calls = append(calls, c)
	}
	return calls
}

// genPortable builds a schema from the choices r makes, with what the
// profiles handle differently: type lists with null, nullable, enums of
// several types, formats, bounds, items of several kinds, maps, anyOf,
// oneOf and allOf (with null branches and branches without a type),
// references and recursion, defaults, and argument names Gemini refuses.
func genPortable(r *byteReader, depth int) any {
	if depth > 0 {
		switch r.next() % 16 {
		case 0:
			return true
		case 1:
			return false
		}
	}
	s := map[string]any{}
	types := []string{"string", "integer", "number", "boolean", "array", "object", "null"}
	switch k := r.next() % 6; {
	case depth == 0:
		s["type"] = "object"
	case k < 3:
		s["type"] = types[r.next()%len(types)]
	case k == 3:
		s["type"] = []any{types[r.next()%len(types)], types[r.next()%len(types)]}
	case k == 4:
		s["type"] = []any{types[r.next()%len(types)], "null"}
	}
	names := []string{"a", "b", "c-d", "1e", "x_y", "long"}
	for range r.next() % 6 {
		switch r.next() % 26 {
		case 0:
			s["enum"] = []any{"p", "q", nil}[:1+r.next()%3]
		case 1:
			s["enum"] = []any{1, 2.5, true}[:1+r.next()%3]
		case 2:
			s["const"] = r.pick("k", "1")
		case 3:
			s["format"] = r.pick("date-time", "uuid", "email", "int64", "weird")
		case 4:
			s["minLength"], s["maxLength"] = 1, 9
		case 5:
			s["minimum"], s["exclusiveMaximum"] = 0, 10.5
		case 6:
			s["exclusiveMinimum"], s["multipleOf"] = 1, 2
		case 7:
			if depth < 4 {
				s["items"] = genPortable(r, depth+1)
			}
		case 8:
			s["items"] = []any{map[string]any{"type": "string"}}
		case 9, 10:
			if depth < 4 {
				props := map[string]any{}
				for range 1 + r.next()%3 {
					props[r.pick(names...)] = genPortable(r, depth+1)
				}
				s["properties"] = props
			}
		case 11:
			s["required"] = []any{r.pick(names...)}
		case 12:
			s["additionalProperties"] = r.next()%2 == 0
		case 13:
			if depth < 4 {
				s["additionalProperties"] = genPortable(r, depth+1)
			}
		case 14, 15:
			if depth < 3 {
				kw := r.pick("anyOf", "oneOf", "allOf")
				s[kw] = []any{genPortable(r, depth+1), genPortable(r, depth+1)}
			}
		case 16:
			s["anyOf"] = []any{map[string]any{"type": r.pick(types...)}, map[string]any{"type": "null"}}
		case 17:
			s["anyOf"] = []any{map[string]any{"required": []any{r.pick(names...)}}, map[string]any{"required": []any{r.pick(names...)}}}
		case 18:
			s["$ref"] = r.pick("#", "#/$defs/d", "#/$defs/e")
		case 19:
			if depth == 0 {
				s["$defs"] = map[string]any{
					"d": map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string"}, "next": map[string]any{"$ref": "#/$defs/d"}}},
					"e": map[string]any{"type": []any{"string", "null"}, "maxLength": 3},
				}
			}
		case 20:
			s["default"] = r.pick("d", "1")
		case 21:
			s["nullable"] = true
		case 22:
			s[r.pick("not", "if", "then")] = map[string]any{"type": "string"}
		case 23:
			s["patternProperties"] = map[string]any{"^x": map[string]any{"type": "integer"}}
		case 24:
			s["description"], s["x-mcp-header"], s["examples"] = "d", "H", []any{1}
		case 25:
			s["minItems"], s["maxProperties"], s["uniqueItems"] = 1, 3, true
		}
	}
	return s
}
