package mcpkittest_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/mcpkittest"
)

var fingerprintForm = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// TestFingerprintMapOrder fingerprints a definition whose schema is a map
// with many keys, many times: Go ranges over maps in a random order.
func TestFingerprintMapOrder(t *testing.T) {
	props := map[string]any{}
	for i := range 50 {
		props["p"+strconv.Itoa(i)] = map[string]any{"type": "string", "description": strconv.Itoa(i)}
	}
	newDef := func() *mcp.Tool {
		return &mcp.Tool{
			Name:        "t",
			InputSchema: map[string]any{"type": "object", "properties": props},
			Meta:        mcp.Meta{"z": 1, "a": 2, "m": map[string]any{"y": true, "b": false}},
		}
	}
	want := mcpkittest.Fingerprint(newDef())
	if !fingerprintForm.MatchString(want) {
		t.Fatalf("Fingerprint = %q", want)
	}
	for range 20 {
		if got := mcpkittest.Fingerprint(newDef()); got != want {
			t.Fatalf("Fingerprint = %s, then %s", want, got)
		}
	}
}

// TestFingerprintForms checks that the writing of a definition does not
// count: numbers, whitespace, key order, the Go type of the schema, hints
// at their defaults.
func TestFingerprintForms(t *testing.T) {
	same := [][]*mcp.Tool{
		{ // numbers
			{Name: "t", InputSchema: json.RawMessage(`{"type":"object","maximum":1}`)},
			{Name: "t", InputSchema: json.RawMessage(`{"type":"object","maximum":1.0}`)},
			{Name: "t", InputSchema: json.RawMessage(`{"type":"object","maximum":1e0}`)},
			{Name: "t", InputSchema: json.RawMessage(`{"type":"object","maximum":10E-1}`)},
			{Name: "t", InputSchema: map[string]any{"type": "object", "maximum": 1}},
			{Name: "t", InputSchema: map[string]any{"type": "object", "maximum": 1.0}},
			{Name: "t", InputSchema: map[string]any{"type": "object", "maximum": json.Number("1.00")}},
			{Name: "t", InputSchema: &jsonschema.Schema{Type: "object", Maximum: jsonschema.Ptr(1.0)}},
		},
		{ // whitespace and key order
			{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)},
			{Name: "t", InputSchema: json.RawMessage("{\n\t\"properties\" : { \"a\" : { \"type\" : \"string\" } } ,\r\n \"type\":\"object\" }\n")},
		},
		{ // hints at their defaults
			{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{}},
			{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{DestructiveHint: bptr(true), OpenWorldHint: bptr(true)}},
		},
		{ // empty _meta and icons are left out by the SDK
			{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: mcp.Meta{}, Icons: []mcp.Icon{}},
		},
	}
	for i, group := range same {
		want := mcpkittest.Fingerprint(group[0])
		for j, d := range group[1:] {
			if got := mcpkittest.Fingerprint(d); got != want {
				t.Errorf("group %d: form %d has fingerprint %s, form 0 %s", i, j+1, got, want)
			}
		}
	}
}

// TestFingerprintCovers checks that each part of the definition counts.
func TestFingerprintCovers(t *testing.T) {
	base := &mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}
	seen := map[string]string{mcpkittest.Fingerprint(base): "base"}
	for name, f := range map[string]func(*mcp.Tool){
		"name":          func(d *mcp.Tool) { d.Name = "u" },
		"title":         func(d *mcp.Tool) { d.Title = "T" },
		"description":   func(d *mcp.Tool) { d.Description = "D" },
		"input schema":  func(d *mcp.Tool) { d.InputSchema = json.RawMessage(`{"type":"object","required":[]}`) },
		"output schema": func(d *mcp.Tool) { d.OutputSchema = json.RawMessage(`{"type":"object"}`) },
		"annotations":   func(d *mcp.Tool) { d.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true} },
		"icons":         func(d *mcp.Tool) { d.Icons = []mcp.Icon{{Source: "https://example.com/i.png"}} },
		"_meta":         func(d *mcp.Tool) { d.Meta = mcp.Meta{"k": "v"} },
		"number": func(d *mcp.Tool) {
			d.InputSchema = json.RawMessage(`{"type":"object","maxProperties":9007199254740993}`)
		},
		"number + 1": func(d *mcp.Tool) {
			d.InputSchema = json.RawMessage(`{"type":"object","maxProperties":9007199254740992}`)
		},
		"array order":   func(d *mcp.Tool) { d.InputSchema = json.RawMessage(`{"type":"object","required":["a","b"]}`) },
		"array order 2": func(d *mcp.Tool) { d.InputSchema = json.RawMessage(`{"type":"object","required":["b","a"]}`) },
	} {
		d := with(base, f)
		fp := mcpkittest.Fingerprint(d)
		if other, ok := seen[fp]; ok {
			t.Errorf("%s: same fingerprint as %s", name, other)
		}
		seen[fp] = name
	}
}

func TestFingerprintNil(t *testing.T) {
	if got := mcpkittest.Fingerprint(nil); got != "" {
		t.Errorf("Fingerprint(nil) = %q", got)
	}
}

func ExampleFingerprint() {
	a := &mcp.Tool{
		Name:        "add",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number", "maximum": 1e3}}},
	}
	// The same definition, written otherwise.
	b := &mcp.Tool{
		Name:        "add",
		InputSchema: json.RawMessage(`{ "properties": { "a": { "maximum": 1000.0, "type": "number" } }, "type": "object" }`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false},
	}
	// The SHA-256 of the canonical JSON
	// {"inputSchema":{"properties":{"a":{"maximum":1000,"type":"number"}},"type":"object"},"name":"add"}
	fmt.Println(mcpkittest.Fingerprint(a))
	fmt.Println(mcpkittest.Fingerprint(a) == mcpkittest.Fingerprint(b))
	// Output:
	// sha256:acdf46207ff76ea1df0f00b7f92c785b6f6dc07b32f9d47c86f2895a00e3d23a
	// true
}
