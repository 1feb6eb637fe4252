package mcpkittest_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/mcpkittest"
)

// def returns a tool definition with the input schema in (JSON) and, if
// out is not empty, the output schema out.
func def(in, out string) *mcp.Tool {
	t := &mcp.Tool{Name: "t", Description: "A tool.", InputSchema: json.RawMessage(in)}
	if out != "" {
		t.OutputSchema = json.RawMessage(out)
	}
	return t
}

// with returns a copy of t changed by f.
func with(t *mcp.Tool, f func(*mcp.Tool)) *mcp.Tool {
	c := *t
	f(&c)
	return &c
}

const (
	ab         = `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a"]}`
	outSum     = `{"type":"object","properties":{"sum":{"type":"number"},"unit":{"type":"string"}},"required":["sum"]}`
	nestedAddr = `{"type":"object","properties":{"addr":{"type":"object","properties":{"zip":{"type":"string"},"city":{"type":"string"}}},"tags":{"type":"array","items":{"type":"string"}}}}`
)

func bptr(b bool) *bool { return &b }

// TestCompare is the classification table: each row is one kind of change,
// with the changes Compare must report, as "path kind" and "!" for a
// breaking one.
func TestCompare(t *testing.T) {
	base := def(ab, outSum)
	for _, tt := range []struct {
		name     string
		old, new *mcp.Tool
		want     []string
	}{
		// Breaking changes to the input schema.
		{"removed argument", base, def(`{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`, outSum),
			[]string{"/inputSchema/properties/b property-removed !"}},
		{"renamed argument", base, def(`{"type":"object","properties":{"a":{"type":"number"},"c":{"type":"number"}},"required":["a"]}`, outSum),
			[]string{"/inputSchema/properties/b property-removed !", "/inputSchema/properties/c property-added"}},
		{"renamed required argument", base, def(`{"type":"object","properties":{"z":{"type":"number"},"b":{"type":"number"}},"required":["z"]}`, outSum),
			[]string{"/inputSchema/properties/a property-removed !", "/inputSchema/properties/z property-added !"}},
		{"new required argument", base, def(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"c":{"type":"string"}},"required":["a","c"]}`, outSum),
			[]string{"/inputSchema/properties/c property-added !"}},
		{"optional to required", base, def(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`, outSum),
			[]string{"/inputSchema/required required-added !"}},
		{"nullable to not", def(`{"type":"object","properties":{"s":{"type":["string","null"]}}}`, ""), def(`{"type":"object","properties":{"s":{"type":"string"}}}`, ""),
			[]string{"/inputSchema/properties/s/type type-narrowed !"}},
		{"number to integer", base, def(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"number"}},"required":["a"]}`, outSum),
			[]string{"/inputSchema/properties/a/type type-narrowed !"}},
		{"string to number", def(`{"type":"object","properties":{"s":{"type":"string"}}}`, ""), def(`{"type":"object","properties":{"s":{"type":"number"}}}`, ""),
			[]string{"/inputSchema/properties/s/type type-changed !"}},
		{"enum value removed", def(`{"type":"object","properties":{"u":{"enum":["c","f","k"]}}}`, ""), def(`{"type":"object","properties":{"u":{"enum":["c","f"]}}}`, ""),
			[]string{"/inputSchema/properties/u/enum enum-narrowed !"}},
		{"enum added", def(`{"type":"object","properties":{"u":{"type":"string"}}}`, ""), def(`{"type":"object","properties":{"u":{"type":"string","enum":["c"]}}}`, ""),
			[]string{"/inputSchema/properties/u/enum enum-narrowed !"}},
		{"const changed", def(`{"type":"object","properties":{"u":{"const":"c"}}}`, ""), def(`{"type":"object","properties":{"u":{"const":"f"}}}`, ""),
			[]string{"/inputSchema/properties/u/const enum-changed !"}},
		{"minimum raised", def(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`, ""), def(`{"type":"object","properties":{"n":{"type":"integer","minimum":5}}}`, ""),
			[]string{"/inputSchema/properties/n/minimum constraint-tightened !"}},
		{"maximum added", def(`{"type":"object","properties":{"n":{"type":"integer"}}}`, ""), def(`{"type":"object","properties":{"n":{"type":"integer","maximum":5}}}`, ""),
			[]string{"/inputSchema/properties/n/maximum constraint-tightened !"}},
		{"maxLength lowered", def(`{"type":"object","properties":{"s":{"type":"string","maxLength":10}}}`, ""), def(`{"type":"object","properties":{"s":{"type":"string","maxLength":5}}}`, ""),
			[]string{"/inputSchema/properties/s/maxLength constraint-tightened !"}},
		{"pattern changed", def(`{"type":"object","properties":{"s":{"type":"string","pattern":"^[a-z]+$"}}}`, ""), def(`{"type":"object","properties":{"s":{"type":"string","pattern":"^[a-z0-9]+$"}}}`, ""),
			[]string{"/inputSchema/properties/s/pattern constraint-changed !"}},
		{"pattern added", def(`{"type":"object","properties":{"s":{"type":"string"}}}`, ""), def(`{"type":"object","properties":{"s":{"type":"string","pattern":"^a"}}}`, ""),
			[]string{"/inputSchema/properties/s/pattern constraint-tightened !"}},
		{"additionalProperties true to false", def(`{"type":"object","additionalProperties":true}`, ""), def(`{"type":"object","additionalProperties":false}`, ""),
			[]string{"/inputSchema/additionalProperties constraint-tightened !"}},
		{"additionalProperties absent to false", def(`{"type":"object"}`, ""), def(`{"type":"object","additionalProperties":false}`, ""),
			[]string{"/inputSchema/additionalProperties constraint-tightened !"}},
		{"nested property removed", def(nestedAddr, ""), def(strings.Replace(nestedAddr, `"zip":{"type":"string"},`, "", 1), ""),
			[]string{"/inputSchema/properties/addr/properties/zip property-removed !"}},
		{"array items narrowed", def(nestedAddr, ""), def(strings.Replace(nestedAddr, `"items":{"type":"string"}`, `"items":{"type":"string","maxLength":3}`, 1), ""),
			[]string{"/inputSchema/properties/tags/items/maxLength constraint-tightened !"}},
		{"default changed", def(`{"type":"object","properties":{"n":{"type":"integer","default":1}}}`, ""), def(`{"type":"object","properties":{"n":{"type":"integer","default":2}}}`, ""),
			[]string{"/inputSchema/properties/n/default default-changed !"}},
		{"uniqueItems added", def(`{"type":"object","properties":{"l":{"type":"array"}}}`, ""), def(`{"type":"object","properties":{"l":{"type":"array","uniqueItems":true}}}`, ""),
			[]string{"/inputSchema/properties/l/uniqueItems constraint-tightened !"}},
		{"not widened", def(`{"type":"object","properties":{"s":{"not":{"type":"string"}}}}`, ""), def(`{"type":"object","properties":{"s":{"not":{"type":["string","number"]}}}}`, ""),
			[]string{"/inputSchema/properties/s/not/type type-widened !"}},

		// Differences the classifier cannot reason about.
		{"anyOf grows", def(`{"type":"object","properties":{"x":{"anyOf":[{"type":"string"}]}}}`, ""), def(`{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`, ""),
			[]string{"/inputSchema/properties/x/anyOf unclassified !"}},
		{"oneOf changed", def(`{"type":"object","properties":{"x":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`, ""), def(`{"type":"object","properties":{"x":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`, ""),
			[]string{"/inputSchema/properties/x/oneOf unclassified !"}},
		{"$ref changed", def(`{"type":"object","properties":{"x":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"string"},"B":{"type":"number"}}}`, ""), def(`{"type":"object","properties":{"x":{"$ref":"#/$defs/B"}},"$defs":{"A":{"type":"string"},"B":{"type":"number"}}}`, ""),
			[]string{"/inputSchema/properties/x/$ref unclassified !"}},
		{"unknown keyword", def(`{"type":"object","x-order":["a"]}`, ""), def(`{"type":"object","x-order":["b"]}`, ""),
			[]string{"/inputSchema/x-order unclassified !"}},
		{"schema not a schema", def(`{"type":"object","properties":{"x":{"type":"string"}}}`, ""), def(`{"type":"object","properties":{"x":7}}`, ""),
			[]string{"/inputSchema/properties/x unclassified !"}},

		// Compatible changes to the input schema.
		{"new optional argument", base, def(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"c":{"type":"string"}},"required":["a"]}`, outSum),
			[]string{"/inputSchema/properties/c property-added"}},
		{"required to optional", base, def(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`, outSum),
			[]string{"/inputSchema/required required-removed"}},
		{"wider enum", def(`{"type":"object","properties":{"u":{"enum":["c","f"]}}}`, ""), def(`{"type":"object","properties":{"u":{"enum":["c","f","k"]}}}`, ""),
			[]string{"/inputSchema/properties/u/enum enum-widened"}},
		{"wider type", def(`{"type":"object","properties":{"s":{"type":"integer"}}}`, ""), def(`{"type":"object","properties":{"s":{"type":["number","null"]}}}`, ""),
			[]string{"/inputSchema/properties/s/type type-widened"}},
		{"loosened bounds", def(`{"type":"object","properties":{"n":{"minimum":5,"exclusiveMaximum":10},"s":{"maxLength":5,"minLength":2}}}`, ""),
			def(`{"type":"object","properties":{"n":{"minimum":1.5},"s":{"maxLength":50,"minLength":2.0}}}`, ""),
			[]string{"/inputSchema/properties/n/exclusiveMaximum constraint-loosened", "/inputSchema/properties/n/minimum constraint-loosened", "/inputSchema/properties/s/maxLength constraint-loosened"}},
		{"additionalProperties false to true", def(`{"type":"object","additionalProperties":false}`, ""), def(`{"type":"object"}`, ""),
			[]string{"/inputSchema/additionalProperties constraint-loosened"}},
		{"argument description", base, def(strings.Replace(ab, `"a":{"type":"number"}`, `"a":{"type":"number","description":"The first."}`, 1), outSum),
			[]string{"/inputSchema/properties/a/description metadata-changed"}},
		{"default added", def(`{"type":"object","properties":{"n":{"type":"integer"}}}`, ""), def(`{"type":"object","properties":{"n":{"type":"integer","default":2}}}`, ""),
			[]string{"/inputSchema/properties/n/default default-changed"}},
		{"required reordered", def(`{"type":"object","properties":{"a":{},"b":{}},"required":["a","b"]}`, ""), def(`{"type":"object","properties":{"a":{},"b":{}},"required":["b","a"]}`, ""),
			[]string{"/inputSchema/required equivalent"}},
		{"type spelled differently", def(`{"type":"object","properties":{"n":{"type":"number"}}}`, ""), def(`{"type":"object","properties":{"n":{"type":["integer","number"]}}}`, ""),
			[]string{"/inputSchema/properties/n/type equivalent"}},
		{"empty properties", def(`{"type":"object","properties":{}}`, ""), def(`{"type":"object"}`, ""),
			[]string{"/inputSchema/properties equivalent"}},
		{"$defs entry narrowed", def(`{"type":"object","$defs":{"A":{"type":"string"}}}`, ""), def(`{"type":"object","$defs":{"A":{"type":"string","minLength":1}}}`, ""),
			[]string{"/inputSchema/$defs/A/minLength constraint-tightened !"}},

		// The output schema: what widens breaks consumers.
		{"output property removed", base, def(ab, `{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`),
			[]string{"/outputSchema/properties/unit property-removed !"}},
		{"output property type changed", base, def(ab, strings.Replace(outSum, `"unit":{"type":"string"}`, `"unit":{"type":"integer"}`, 1)),
			[]string{"/outputSchema/properties/unit/type type-changed !"}},
		{"output type widened", base, def(ab, strings.Replace(outSum, `"unit":{"type":"string"}`, `"unit":{"type":["string","null"]}`, 1)),
			[]string{"/outputSchema/properties/unit/type type-widened !"}},
		{"output field may be absent", base, def(ab, strings.Replace(outSum, `"required":["sum"]`, `"required":[]`, 1)),
			[]string{"/outputSchema/required required-removed !"}},
		{"output enum widened", def(ab, `{"type":"object","properties":{"s":{"enum":["ok"]}}}`), def(ab, `{"type":"object","properties":{"s":{"enum":["ok","failed"]}}}`),
			[]string{"/outputSchema/properties/s/enum enum-widened !"}},
		{"output schema removed", base, def(ab, ""),
			[]string{"/outputSchema schema-removed !"}},
		{"output type narrowed", base, def(ab, strings.Replace(outSum, `"sum":{"type":"number"}`, `"sum":{"type":"integer"}`, 1)),
			[]string{"/outputSchema/properties/sum/type type-narrowed"}},
		{"output property added", base, def(ab, strings.Replace(outSum, `"unit":{"type":"string"}`, `"unit":{"type":"string"},"at":{"type":"string"}`, 1)),
			[]string{"/outputSchema/properties/at property-added"}},
		{"output schema added", def(ab, ""), base,
			[]string{"/outputSchema schema-added"}},

		// The tool itself.
		{"tool removed", base, nil, []string{" tool-removed !"}},
		{"tool added", nil, base, []string{" tool-added"}},
		{"tool renamed", base, with(base, func(t *mcp.Tool) { t.Name = "u" }), []string{"/name tool-renamed !"}},
		{"description", base, with(base, func(t *mcp.Tool) { t.Description = "Another." }), []string{"/description metadata-changed"}},
		{"title", base, with(base, func(t *mcp.Tool) { t.Title = "T" }), []string{"/title metadata-changed"}},
		{"icons", base, with(base, func(t *mcp.Tool) { t.Icons = []mcp.Icon{{Source: "https://example.com/i.png"}} }), []string{"/icons metadata-changed"}},
		{"_meta", with(base, func(t *mcp.Tool) { t.Meta = mcp.Meta{"a": 1, "ui/resourceUri": "ui://x"} }),
			with(base, func(t *mcp.Tool) { t.Meta = mcp.Meta{"a": 1.0, "ui/resourceUri": "ui://y"} }),
			[]string{"/_meta/ui~1resourceUri metadata-changed"}},

		// Hints: promising less breaks.
		{"readOnly true to false", with(base, func(t *mcp.Tool) { t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true} }), base,
			[]string{"/annotations/readOnlyHint hint-changed !"}},
		{"readOnly false to true", base, with(base, func(t *mcp.Tool) { t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true} }),
			[]string{"/annotations/readOnlyHint hint-changed"}},
		{"destructive false to true", with(base, func(t *mcp.Tool) { t.Annotations = &mcp.ToolAnnotations{DestructiveHint: bptr(false)} }),
			with(base, func(t *mcp.Tool) { t.Annotations = &mcp.ToolAnnotations{DestructiveHint: bptr(true)} }),
			[]string{"/annotations/destructiveHint hint-changed !"}},
		{"destructive default to false", base, with(base, func(t *mcp.Tool) { t.Annotations = &mcp.ToolAnnotations{DestructiveHint: bptr(false)} }),
			[]string{"/annotations/destructiveHint hint-changed"}},
		{"idempotent true to false", with(base, func(t *mcp.Tool) { t.Annotations = &mcp.ToolAnnotations{IdempotentHint: true} }), base,
			[]string{"/annotations/idempotentHint hint-changed !"}},
		{"openWorld false to true", with(base, func(t *mcp.Tool) { t.Annotations = &mcp.ToolAnnotations{OpenWorldHint: bptr(false)} }), base,
			[]string{"/annotations/openWorldHint hint-changed !"}},
		{"annotations title", base, with(base, func(t *mcp.Tool) { t.Annotations = &mcp.ToolAnnotations{Title: "Adder"} }),
			[]string{"/annotations/title metadata-changed"}},
		{"hints spelled at their defaults", base, with(base, func(t *mcp.Tool) {
			t.Annotations = &mcp.ToolAnnotations{DestructiveHint: bptr(true), OpenWorldHint: bptr(true)}
		}), nil},

		// No change.
		{"same", base, def(ab, outSum), nil},
		{"same, other forms", def(`{"type":"object","properties":{"n":{"maximum":10}}}`, ""),
			&mcp.Tool{Name: "t", Description: "A tool.", InputSchema: map[string]any{"properties": map[string]any{"n": map[string]any{"maximum": 10.0}}, "type": "object"}}, nil},
		{"both nil", nil, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := mcpkittest.Compare(tt.old, tt.new)
			var got []string
			for _, c := range cs {
				s := c.Path + " " + string(c.Kind)
				if c.Breaking {
					s += " !"
				}
				got = append(got, s)
				if c.Description == "" {
					t.Errorf("%s: no description", s)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Compare =\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
				for _, c := range cs {
					t.Logf("%s", c)
				}
			}
			// Changes and fingerprints agree.
			if tt.old != nil && tt.new != nil {
				same := mcpkittest.Fingerprint(tt.old) == mcpkittest.Fingerprint(tt.new)
				if same != (len(cs) == 0) {
					t.Errorf("same fingerprint: %v, but %d changes", same, len(cs))
				}
			}
		})
	}
}

// TestCompareDescriptions checks the words of the changes that the brief
// of a lockfile failure shows.
func TestCompareDescriptions(t *testing.T) {
	for _, tt := range []struct {
		old, new string
		want     string
	}{
		{ab, `{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`,
			`/inputSchema/properties/b: argument "b" removed (breaking)`},
		{ab, `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
			`/inputSchema/required: argument "b" is now required (breaking)`},
		{`{"type":"object","properties":{"s":{"type":["string","null"]}}}`, `{"type":"object","properties":{"s":{"type":"string"}}}`,
			`/inputSchema/properties/s/type: type narrowed from ["string","null"] to "string" (breaking)`},
		{`{"type":"object","properties":{"u":{"enum":["c","f","k"]}}}`, `{"type":"object","properties":{"u":{"enum":["c","f"]}}}`,
			`/inputSchema/properties/u/enum: enum narrowed: "k" removed (breaking)`},
		{`{"type":"object","properties":{"n":{"minimum":1}}}`, `{"type":"object","properties":{"n":{"minimum":5}}}`,
			`/inputSchema/properties/n/minimum: minimum raised from 1 to 5 (breaking)`},
		{`{"type":"object","properties":{"s":{"maxLength":10}}}`, `{"type":"object","properties":{"s":{"maxLength":5}}}`,
			`/inputSchema/properties/s/maxLength: maxLength lowered from 10 to 5 (breaking)`},
		{`{"type":"object","properties":{"n":{"maximum":5}}}`, `{"type":"object","properties":{"n":{"maximum":50}}}`,
			`/inputSchema/properties/n/maximum: maximum raised from 5 to 50`},
		{`{"type":"object"}`, `{"type":"object","additionalProperties":false}`,
			`/inputSchema/additionalProperties: the schema now accepts no value (false) (breaking)`},
		{`{"type":"object","properties":{"a":{"type":"number"}}}`, `{"type":"object","properties":{"a":{"type":"number"},"c":{"type":"number"}}}`,
			`/inputSchema/properties/c: new optional argument "c"`},
		{`{"type":"object","properties":{"x":{"type":"object","properties":{"a":{}}}}}`, `{"type":"object","properties":{"x":{"type":"object","properties":{}}}}`,
			`/inputSchema/properties/x/properties/a: property "a" removed (breaking)`},
	} {
		cs := mcpkittest.Compare(def(tt.old, ""), def(tt.new, ""))
		if len(cs) != 1 || cs[0].String() != tt.want {
			t.Errorf("Compare(%s, %s) = %v\nwant [%s]", tt.old, tt.new, cs, tt.want)
		}
	}
}

func TestCompareOldNew(t *testing.T) {
	cs := mcpkittest.Compare(def(ab, ""), def(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"number"}},"required":["a"]}`, ""))
	want := mcpkittest.Change{
		Path:        "/inputSchema/properties/a/type",
		Kind:        mcpkittest.TypeNarrowed,
		Breaking:    true,
		Old:         `"number"`,
		New:         `"integer"`,
		Description: `type narrowed from "number" to "integer"`,
	}
	if len(cs) != 1 || cs[0] != want {
		t.Errorf("Compare = %#v, want %#v", cs, want)
	}
	cs = mcpkittest.Compare(def(ab, ""), def(`{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`, ""))
	if len(cs) != 1 || cs[0].Old != `{"type":"number"}` || cs[0].New != "" {
		t.Errorf("removed argument: %#v", cs)
	}
}

// TestCompareSchemaForms compares a *jsonschema.Schema, a map and JSON text
// of the same schema: no change.
func TestCompareSchemaForms(t *testing.T) {
	forms := []any{
		&jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer", Minimum: jsonschema.Ptr(1.0)}}},
		map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 1}}},
		json.RawMessage("{\n  \"properties\": {\"n\": {\"minimum\": 1.0, \"type\": \"integer\"}},\n  \"type\": \"object\"\n}"),
	}
	for i, a := range forms {
		for j, b := range forms {
			if cs := mcpkittest.Compare(&mcp.Tool{Name: "t", InputSchema: a}, &mcp.Tool{Name: "t", InputSchema: b}); len(cs) != 0 {
				t.Errorf("forms %d and %d: %v", i, j, cs)
			}
		}
	}
}

func TestCompareUnmarshallable(t *testing.T) {
	bad := &mcp.Tool{Name: "t", InputSchema: map[string]any{"f": func() {}}}
	for _, cs := range [][]mcpkittest.Change{mcpkittest.Compare(bad, def(ab, "")), mcpkittest.Compare(def(ab, ""), bad)} {
		if len(cs) != 1 || cs[0].Kind != mcpkittest.Unclassified || !cs[0].Breaking {
			t.Errorf("Compare with an unmarshallable schema = %v", cs)
		}
	}
	if got := mcpkittest.Fingerprint(bad); got != "" {
		t.Errorf("Fingerprint(unmarshallable) = %q", got)
	}
}

func ExampleCompare() {
	old := &mcp.Tool{
		Name:        "weather",
		Description: "Current weather for a city.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"city":  {"type": "string"},
				"units": {"enum": ["metric", "imperial", "kelvin"]}
			},
			"required": ["city"]
		}`),
	}
	new := &mcp.Tool{
		Name:        "weather",
		Description: "Current weather for a city or a postcode.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"city":  {"type": "string", "maxLength": 100},
				"units": {"enum": ["metric", "imperial"]},
				"days":  {"type": "integer", "minimum": 1}
			},
			"required": ["city"]
		}`),
	}
	for _, c := range mcpkittest.Compare(old, new) {
		fmt.Println(c)
	}
	// Output:
	// /description: description changed
	// /inputSchema/properties/city/maxLength: maxLength 100 added (breaking)
	// /inputSchema/properties/days: new optional argument "days"
	// /inputSchema/properties/units/enum: enum narrowed: "kelvin" removed (breaking)
}
