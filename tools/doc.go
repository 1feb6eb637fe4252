// Package tools provides typed MCP tools built from ordinary Go functions.
//
// [New] turns a func(context.Context, In) (Out, error) into an
// [mcpkit.Tool]: the input schema is inferred from In, the arguments are
// decoded into an In, and Out becomes the result (structured content, text,
// images, ...). [NewWithRequest] also passes the [mcpkit.Request], for
// progress, client logging, sampling and elicitation.
//
//	type AddIn struct {
//		A int `json:"a" description:"The first addend."`
//		B int `json:"b" description:"The second addend."`
//	}
//	add := func(ctx context.Context, in AddIn) (int, error) { return in.A + in.B, nil }
//	srv.Add(tools.Must(tools.New("add", add, &tools.Options{Description: "Add two integers."})))
//
// Options are an [Options] struct; nil means the defaults.
//
// # Schemas
//
// Fields are named and omitted as encoding/json does (json tags, embedded
// structs, "-"). A field is required unless it is a pointer, is tagged
// omitempty or omitzero, or has a default. Structs do not admit other
// properties (additionalProperties: false). These struct tags refine a
// field's schema; their values are checked when the tool is built:
//
//	description:"..."    the field's description (jsonschema:"..." works too, as in the SDK)
//	title:"..."          its title
//	default:"10"         its default (JSON, or the literal text for strings); makes it optional
//	enum:"a,b,c"         the allowed values, comma-separated (for a slice: of its items)
//	minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf:"..."  numeric bounds
//	minLength, maxLength:"..."  string length (of the items, for a slice of strings)
//	pattern:"^[a-z]+$"   a regular expression the string must match
//	format:"email"       a format annotation
//	minItems, maxItems, uniqueItems, minProperties, maxProperties  list and map bounds
//	required:"true|false"  overrides the rule above
//	nullable:"true"      also admit null
//	deprecated:"true"    mark the field deprecated
//
// Nested structs are inlined. A type that contains itself (a tree) is
// emitted once under $defs and referred to with $ref. time.Time is a
// date-time string, time.Duration an integer of nanoseconds (as
// encoding/json writes it), []byte a base64 string, json.RawMessage and
// interfaces any value. A type with its own JSON encoding describes itself
// by implementing [Schemaer], or through [Options.TypeSchemas].
//
// Input schemas are written for portability: clients that reject
// "type": ["null", "array"] never see it unless a field is tagged
// nullable. Output schemas say what encoding/json really writes, so a nil
// slice or map field that is not omitempty may be null there.
//
// # Results
//
// See [New] for how Out becomes a result, and [Text], [Image], [Audio],
// [File], [TextResource] and [ResourceLink] for content blocks, which a
// function may return alone or as a mixed []mcp.Content.
//
// # Errors
//
// A function reports failure with the errors of package mcpkit:
// [mcpkit.ToolErrorf], [mcpkit.RetryableError] or [mcpkit.FatalError] for
// errors the model should see, [mcpkit.NewProtocolError] for a JSON-RPC
// error; any other error is shown unless error masking is in the chain.
// Arguments that do not decode into In are an [ArgumentError], a
// retryable tool error naming the field. Decoding does not validate the
// arguments against the schema: put validation middleware in the chain
// for that.
package tools
