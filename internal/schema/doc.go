// Package schema provides a compiled JSON Schema validator for tool
// arguments: strict validation, lenient coercion and defaults, working on
// the raw JSON bytes.
//
// A schema is compiled once, with [Compile], into a graph of validator
// nodes; [Validator.Validate] then checks a document in one pass over its
// bytes, without decoding it into maps and slices, and allocates nothing
// when the document is valid. The semantics are those of
// github.com/google/jsonschema-go (JSON Schema 2020-12 as it implements
// it), which also resolves the schema and is used, on a decoded value, for
// the few keywords the fast path does not implement (see
// [Validator.Fallbacks]).
//
//	v, err := schema.Compile(tool.InputSchema) // once, at registration
//	...
//	args, err := v.Process(req.Arguments, lenient) // per call
//	if err != nil {
//		return nil, err // a *ValidationError names the failing fields
//	}
//
// [Validator.Process] is what a validating middleware calls: coercion (if
// lenient), then defaults, then validation. [Validator.Coerce],
// [Validator.ApplyDefaults] and [Validator.Validate] are the steps alone.
//
// # Semantics
//
// Numbers are compared as the float64 values encoding/json decodes, as
// jsonschema-go compares them: "integer" admits 1.0, 10.0 and 1e2, and
// coercion leaves them as they are written. A number beyond the range of a
// float64 (1e400), which encoding/json cannot decode, fails validation
// wherever it is, with an issue that says so. minLength and maxLength count
// Unicode code points. pattern uses Go's regexp (RE2) syntax, unanchored.
// format is an annotation and is not checked, and so are unknown keywords.
//
// Where this package differs from decoding with encoding/json and
// validating with jsonschema-go:
//
//   - an object with the same property name twice is a [*SyntaxError]:
//     encoding/json keeps the last (or merges, for a struct), so the
//     validator and the handler could read different values;
//   - a number beyond the range of a float64 is an issue at its path,
//     where encoding/json fails to decode the whole document;
//   - empty data and a bare null are validated as {}, as the MCP SDK treats
//     missing arguments;
//   - a schema that applies itself to the same value without end (such as
//     {"$ref": "#"} at its root) does not compile ([ErrCircular]), where
//     jsonschema-go overflows its stack when validating;
//   - validation work is bounded ([ErrTooComplex]) so that a crafted
//     document cannot make nested alternatives take exponential time;
//   - multipleOf divides exactly, by the decimal values written in the
//     JSON: 19.99 is a multiple of 0.01 and 1e21 is not a multiple of 3,
//     where jsonschema-go's float64 division says the opposite;
//   - [Validator.ApplyDefaults] also follows $ref and allOf and descends
//     into arrays, which jsonschema-go does not.
//
// # Schemas
//
// [Compile] rejects, with a [*SchemaError] that points at the keyword, what
// it could compile but would not enforce as written: a "type" that names
// no type, a $ref to nothing or to another document, a pattern that is not
// a regular expression, and keywords of other drafts that 2020-12 does not
// enforce (the array form of items, additionalItems and dependencies,
// unless $schema says draft-07; $recursiveRef). format and unknown keywords
// are annotations: they compile and are not checked.
//
// # Errors
//
// A document that fails its schema gets a [*ValidationError] listing the
// first [MaxIssues] failures, each with the path of the value and a message
// ("want integer, got string", "required property is missing"), and
// counting the others. Its size is
// bounded whatever the document's: text taken from the document (a
// property name, a number, a string) is clipped to 40 bytes, a path to 200,
// and once the list is full further failures are only counted, allocating
// nothing.
package schema
