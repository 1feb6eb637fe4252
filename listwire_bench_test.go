package mcpkit

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkListMarshal marshals a page of 1,000 tools whose schemas are
// *jsonschema.Schema values (as tools.New makes them): as registered (what
// a list cost before, a walk of every schema each time), and with the
// schemas marshalled once per entry (wireDef).
func BenchmarkListMarshal(b *testing.B) {
	srv := NewServer(&mcp.Implementation{Name: "wire"}, nil)
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"query": {Type: "string", Description: "What to look for.", MinLength: new(int)},
		"limit": {Type: "integer", Description: "The most results.", Default: json.RawMessage("10")},
		"tags":  {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
		"since": {Type: "string", Format: "date-time"},
	}, Required: []string{"query"}}
	var tools []*Tool
	for i := range 1000 {
		tools = append(tools, &Tool{Tool: mcp.Tool{Name: fmt.Sprintf("t%04d", i), InputSchema: schema},
			Handler: HandlerFunc(func(context.Context, *Request) (*mcp.CallToolResult, error) { return nil, nil })})
	}
	if err := srv.Add(tools...); err != nil {
		b.Fatal(err)
	}
	st := srv.state.Load()
	page := st.registeredPage(context.Background(), nil, shelfTools, "", 0, false).tools()
	for _, mode := range []string{"as-registered", "marshalled-once"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			defs := make([]*mcp.Tool, len(page))
			for b.Loop() {
				for i, t := range page {
					if mode == "as-registered" {
						defs[i] = &t.Tool
					} else {
						defs[i] = st.wireDef(t)
					}
				}
				if _, err := json.Marshal(&mcp.ListToolsResult{Tools: defs}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
