package mcpkittest_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/mcpkittest"
)

// kinds are the kinds Compare may report.
var kinds = map[mcpkittest.ChangeKind]bool{
	mcpkittest.ToolAdded: true, mcpkittest.ToolRemoved: true, mcpkittest.ToolRenamed: true,
	mcpkittest.MetadataChanged: true, mcpkittest.HintChanged: true,
	mcpkittest.PropertyAdded: true, mcpkittest.PropertyRemoved: true,
	mcpkittest.RequiredAdded: true, mcpkittest.RequiredRemoved: true,
	mcpkittest.TypeNarrowed: true, mcpkittest.TypeWidened: true, mcpkittest.TypeChanged: true,
	mcpkittest.EnumNarrowed: true, mcpkittest.EnumWidened: true, mcpkittest.EnumChanged: true,
	mcpkittest.ConstraintTightened: true, mcpkittest.ConstraintLoosened: true, mcpkittest.ConstraintChanged: true,
	mcpkittest.DefaultChanged: true, mcpkittest.SchemaAdded: true, mcpkittest.SchemaRemoved: true,
	mcpkittest.Equivalent: true, mcpkittest.Unclassified: true,
}

// FuzzCompare compares tools whose schemas are two arbitrary JSON texts,
// each way round. Compare must not panic, must be deterministic, must
// agree with Fingerprint, must report changes that read well, and must
// find none between a definition and itself.
func FuzzCompare(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"type":"object","properties":{"b":{"type":"string"}}}`)
	f.Add(`{"type":["string","null"],"enum":["a",1,1.0,null],"minimum":1e400}`, `{"type":"string","enum":["a"],"minimum":-0}`)
	f.Add(`{"not":{"anyOf":[true,false,{"$ref":"#"}]},"items":[{}]}`, `{"not":{"anyOf":[false,true,{"$ref":"#/$defs/x"}]},"$defs":{"x":{}}}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		x := &mcp.Tool{Name: "t", InputSchema: json.RawMessage(a), OutputSchema: json.RawMessage(b)}
		y := &mcp.Tool{Name: "t", InputSchema: json.RawMessage(b), OutputSchema: json.RawMessage(a)}
		if !json.Valid([]byte(a)) || !json.Valid([]byte(b)) {
			// The schemas do not marshal: one Unclassified change, no fingerprint.
			if cs := mcpkittest.Compare(x, y); len(cs) != 1 || cs[0].Kind != mcpkittest.Unclassified || !cs[0].Breaking {
				t.Fatalf("Compare of unmarshallable definitions = %v", cs)
			}
			if fp := mcpkittest.Fingerprint(x); fp != "" {
				t.Fatalf("Fingerprint of an unmarshallable definition = %q", fp)
			}
			return
		}
		for _, p := range [][2]*mcp.Tool{{x, y}, {y, x}, {x, x}, {x, nil}, {nil, y}} {
			cs := mcpkittest.Compare(p[0], p[1])
			if again := mcpkittest.Compare(p[0], p[1]); !reflect.DeepEqual(cs, again) {
				t.Fatalf("Compare is not deterministic:\n%v\n%v", cs, again)
			}
			if p[0] != nil && p[1] != nil {
				same := mcpkittest.Fingerprint(p[0]) == mcpkittest.Fingerprint(p[1])
				if same != (len(cs) == 0) {
					t.Fatalf("same fingerprint: %v, but changes %v", same, cs)
				}
			}
			for _, c := range cs {
				if !kinds[c.Kind] || c.Description == "" || len(c.Description) > 1000 ||
					c.Path != "" && !strings.HasPrefix(c.Path, "/") || c.Kind == mcpkittest.Unclassified && !c.Breaking {
					t.Fatalf("bad change %#v", c)
				}
				for _, v := range []string{c.Old, c.New} {
					if v != "" && !json.Valid([]byte(v)) {
						t.Fatalf("change %#v: old or new value is not JSON", c)
					}
				}
			}
		}
	})
}
