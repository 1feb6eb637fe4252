package schema_test

import (
	"errors"
	"fmt"
	"strings"

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

func ExampleSchemaError() {
	_, err := schema.Compile([]byte(`{"type":"object","properties":{"n":{"type":"int"}}}`))
	var se *schema.SchemaError
	if errors.As(err, &se) {
		fmt.Printf("%s | %s\n", se.Pointer, se.Msg)
	}
	fmt.Println(err)
	// Output:
	// /properties/n/type | unknown type "int"
	// schema: invalid schema: /properties/n/type: unknown type "int"
}

func ExampleValidationError() {
	v, err := schema.Compile([]byte(`{"type":"array","items":{"type":"integer"}}`))
	if err != nil {
		panic(err)
	}
	err = v.Validate([]byte(`["a",2.5,3,1e400` + strings.Repeat(`,"x"`, 20) + `]`))
	var ve *schema.ValidationError
	if errors.As(err, &ve) {
		fmt.Println(len(ve.Issues), ve.Omitted)
		fmt.Println(ve.Issues[1])
		fmt.Println(ve.Issues[2])
	}
	// Output:
	// 10 13
	// 1: want integer, got number 2.5
	// 3: want a number within the range of a 64-bit float (about ±1.8e308), got 1e400
}
