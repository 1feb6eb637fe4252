package schema_test

import (
	"fmt"

	"github.com/mcpkit/mcpkit/internal/schema"
)

const searchSchema = `{
	"type": "object",
	"properties": {
		"query": {"type": "string", "minLength": 1},
		"limit": {"type": "integer", "minimum": 1, "default": 10},
		"tags":  {"type": "array", "items": {"type": "string"}}
	},
	"required": ["query"],
	"additionalProperties": false
}`

func ExampleCompile() {
	v, err := schema.Compile([]byte(searchSchema))
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Validate([]byte(`{"query":"go","limit":5}`)))
	fmt.Println(v.Validate([]byte(`{"limit":0,"tags":["a",1],"sort":"asc"}`)))
	// Output:
	// <nil>
	// schema: invalid value: limit: want >= 1, got 0; tags/1: want string, got number; sort: unexpected property; query: required property is missing
}

func ExampleValidator_Process() {
	v, err := schema.Compile([]byte(searchSchema))
	if err != nil {
		panic(err)
	}
	args, err := v.Process([]byte(`{"query":"go","tags":"[\"x\"]"}`), true)
	fmt.Printf("%s %v\n", args, err)
	_, err = v.Process([]byte(`{"query":"go","limit":"ten"}`), true)
	fmt.Println(err)
	// Output:
	// {"query":"go","tags":["x"],"limit":10} <nil>
	// schema: invalid value: limit: want integer, got string
}

func ExampleValidator_Coerce() {
	v, err := schema.Compile([]byte(searchSchema))
	if err != nil {
		panic(err)
	}
	out, changed, err := v.Coerce([]byte(`{"query":"7","limit":"7"}`))
	fmt.Printf("%s %v %v\n", out, changed, err)
	// Output:
	// {"query":"7","limit":7} true <nil>
}

func ExampleValidator_ApplyDefaults() {
	v, err := schema.Compile([]byte(searchSchema))
	if err != nil {
		panic(err)
	}
	out, changed, err := v.ApplyDefaults([]byte(`{"query":"go"}`))
	fmt.Printf("%s %v %v\n", out, changed, err)
	// Output:
	// {"query":"go","limit":10} true <nil>
}

func ExampleValidator_Fallbacks() {
	v, err := schema.Compile([]byte(`{"properties":{"opts":{"properties":{"a":{}},"unevaluatedProperties":false}}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Fallbacks())
	// Output:
	// [/properties/opts: unevaluatedProperties]
}
