package deref_test

import (
	"fmt"

	"github.com/mcpkit/mcpkit/internal/deref"
)

func ExampleDereference() {
	schema := []byte(`{
		"type": "object",
		"properties": {
			"from": {"$ref": "#/$defs/Point", "description": "start"},
			"to":   {"$ref": "#/$defs/Point"},
			"tree": {"$ref": "#/$defs/Tree"}
		},
		"$defs": {
			"Point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}},
			"Tree":  {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
		}
	}`)
	out, err := deref.Dereference(schema, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// {"type":"object","properties":{"from":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"description":"start"},"to":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}}},"tree":{"$ref":"#/$defs/Tree"}},"$defs":{"Tree":{"type":"array","items":{"$ref":"#/$defs/Tree"}}}}
}
