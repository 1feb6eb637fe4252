package mcpkit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

// strOrInt is a typed tool's result that describes itself with a schema
// without a top-level type.
type strOrInt struct{ v any }

func (strOrInt) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}}
}

func (s strOrInt) MarshalJSON() ([]byte, error) { return json.Marshal(s.v) }

// TestListedOutputSchemaAdmitsTheValue calls tools whose output schemas
// say more or less about objects, through a real client of each protocol
// version, and checks that the structured content the client gets is valid
// against the output schema it was listed: a client that needs objects
// gets {"result": value} and the schema of that object for every tool
// whose values are not all objects (a schema without a type, anyOf, a type
// that admits null), objects included; only a schema whose type admits
// objects alone is listed, and its value sent, as they are.
func TestListedOutputSchemaAdmitsTheValue(t *testing.T) {
	type call struct {
		tool, value string
		wrapped     bool // for a client that needs objects
	}
	calls := []call{
		{"schemaer", `7`, true},
		{"any_of", `"x"`, true},
		{"typeless", `{"a":1}`, true},
		{"object_or_null_object", `{"a":1}`, true},
		{"object_or_null_null", `null`, true},
		{"object", `{"a":1}`, false},
		{"object_list", `{"a":1}`, false},
		{"integer", `7`, true},
	}
	newServer := func(t *testing.T) *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "outputs"}, nil)
		schemaer := tools.Must(tools.New("schemaer", func(context.Context, struct{}) (strOrInt, error) {
			return strOrInt{7}, nil
		}, nil))
		schemas := map[string]any{
			"any_of":                map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}},
			"typeless":              map[string]any{"description": "anything"},
			"object_or_null_object": &jsonschema.Schema{Types: []string{"object", "null"}},
			"object_or_null_null":   json.RawMessage(`{"type":["object","null"]}`),
			"object":                &jsonschema.Schema{Type: "object"},
			"object_list":           map[string]any{"type": []any{"object"}},
			"integer":               &jsonschema.Schema{Type: "integer"},
		}
		add := []*mcpkit.Tool{schemaer}
		for _, c := range calls[1:] {
			value := json.RawMessage(c.value)
			tl := tool(c.tool, func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{StructuredContent: value}, nil
			})
			tl.OutputSchema = schemas[c.tool]
			add = append(add, tl)
		}
		if err := srv.Add(add...); err != nil {
			t.Fatal(err)
		}
		return srv
	}
	mcpkittest.ForEachTransport(t, newServer, func(t *testing.T, ts *mcpkittest.Server) {
		objects := ts.Session.InitializeResult().ProtocolVersion < "2026-07-28"
		listed := map[string]*jsonschema.Resolved{}
		lres, err := ts.Session.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range lres.Tools {
			b, _ := json.Marshal(tl.OutputSchema)
			var s jsonschema.Schema
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatalf("%s: listed output schema %s: %v", tl.Name, b, err)
			}
			r, err := s.Resolve(nil)
			if err != nil {
				t.Fatalf("%s: listed output schema %s: %v", tl.Name, b, err)
			}
			listed[tl.Name] = r
		}
		for _, c := range calls {
			res, err := ts.CallTool(t.Context(), c.tool, nil)
			if err != nil || res.IsError {
				t.Fatalf("%s: %+v, %v", c.tool, res, err)
			}
			got, _ := json.Marshal(res.StructuredContent)
			want := c.value
			if objects && c.wrapped {
				want = `{"result":` + c.value + `}`
			}
			if string(got) != want {
				t.Errorf("%s: structured content %s, want %s", c.tool, got, want)
			}
			if err := listed[c.tool].Validate(res.StructuredContent); err != nil {
				b, _ := json.Marshal(listed[c.tool].Schema())
				t.Errorf("%s: structured content %s is not valid against the listed output schema %s: %v", c.tool, got, b, err)
			}
		}
	}, nil)
}
