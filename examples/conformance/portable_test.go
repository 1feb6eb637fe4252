package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/transform"
)

var profiles = []transform.Profile{transform.AllProviders, transform.Gemini, transform.OpenAIStrict}

// TestPortable checks that every model provider takes the conformance
// catalog once transform.Portable rewrites it, and that the 2020-12 tool,
// whose conditions no provider can express, still gets only what its
// schema admits.
func TestPortable(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.String(), func(t *testing.T) {
			srv, err := newServer(options{})
			if err != nil {
				t.Fatal(err)
			}
			// The conformance server coerces arguments (Lenient).
			if err := srv.Transform(transform.Portable(p, &transform.PortableOptions{Validation: mcpkit.Lenient})); err != nil {
				t.Fatal(err)
			}
			ts := mcpkittest.NewInMemoryServer(t, srv, nil)
			res, err := ts.Session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, pb := range transform.CheckPortable(p, res.Tools...) {
				t.Error(pb)
			}

			args := map[string]any{"name": "Ada", "email": "ada@example.com"}
			if p == transform.OpenAIStrict {
				// Strict mode requires every argument; null stands for
				// one left out.
				args = map[string]any{"name": "Ada", "email": "ada@example.com", "phone": nil, "contactMethod": nil, "address": nil}
			}
			call, err := ts.CallTool(t.Context(), "json_schema_2020_12_tool", args)
			want := `JSON Schema 2020-12 tool called with: {"email":"ada@example.com","name":"Ada"}`
			if err != nil || call.IsError || len(call.Content) != 1 || contentText(call.Content[0]) != want {
				t.Errorf("json_schema_2020_12_tool: %+v, %v", call, err)
			}

			// contactMethod "phone" requires a phone (if/then), which the
			// listed schema cannot say; the server still refuses.
			args = map[string]any{"name": "Ada", "email": "ada@example.com", "contactMethod": "phone"}
			if p == transform.OpenAIStrict {
				args["phone"], args["address"] = nil, nil
			}
			call, err = ts.CallTool(t.Context(), "json_schema_2020_12_tool", args)
			if err != nil || !call.IsError || !strings.Contains(contentText(call.Content[0]), "phone") {
				t.Errorf("contactMethod phone without a phone: %+v, %v", call, err)
			}
		})
	}
}

// TestPortableRaw records which tools of the conformance catalog, as
// written, each profile refuses: the 2020-12 tool for all (Gemini and the
// portable profile refuse $ref, $defs, $schema, additionalProperties,
// allOf, if, then and else; Anthropic refuses a root allOf too), the typed
// x-mcp-header tool (a closed struct: additionalProperties), and for
// OpenAI's strict mode every tool, whose objects are not closed.
func TestPortableRaw(t *testing.T) {
	srv, err := newServer(options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res, err := ts.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, tool := range res.Tools {
		all = append(all, tool.Name)
	}
	want := map[transform.Profile][]string{
		transform.AllProviders: {"json_schema_2020_12_tool", "test_x_mcp_header"},
		transform.Gemini:       {"json_schema_2020_12_tool", "test_x_mcp_header"},
		transform.OpenAIStrict: all,
	}
	for _, p := range profiles {
		var refused []string
		for _, pb := range transform.CheckPortable(p, res.Tools...) {
			if !slices.Contains(refused, pb.Tool) {
				refused = append(refused, pb.Tool)
			}
		}
		if !slices.Equal(refused, want[p]) {
			t.Errorf("%v refuses %v, want %v", p, refused, want[p])
		}
	}
}

// contentText returns the text of a text content block, or "".
func contentText(c mcp.Content) string {
	if tc, ok := c.(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}
