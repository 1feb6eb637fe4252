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
// Prompts and resources are built the same way: [NewPrompt] decodes a
// prompt's arguments into a struct, [NewTemplate] the variables of a URI
// template; [TextResource] and [BlobResource] serve fixed contents.
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
//	header:"Region"      mirror the argument into the Mcp-Param-Region HTTP header (SEP-2243; see below)
//	deprecated:"true"    mark the field deprecated
//
// The keys are bare, as in most Go schema libraries, because the go-sdk's
// own jsonschema:"..." tag holds only a description and cannot carry a
// bound or a default; a field that another library also tags with one of
// these names gets a schema from both readings, so such a field is better
// described through [Options.InputSchema].
// A header tag asks 2026-07-28 clients to send the argument's value in an
// HTTP header as well, for proxies and load balancers to route on (the
// server checks that header and body agree; middleware reads the value with
// [mcpkit.Request.ParamHeader]). The tool fails to build, instead of the
// argument being silently dropped, unless the field is a string, integer or
// boolean reached through struct fields alone (not in a slice or map), the
// name is an HTTP token, and no two names differ only in case.
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
// See [New] for how Out becomes a result. Content blocks are the SDK's own
// types (&mcp.ImageContent{...}, &mcp.EmbeddedResource{...}), which a
// function may return alone, as its concrete type or as mcp.Content, or as
// a mixed []mcp.Content.
//
// Structured content is json.RawMessage in the result a tool's handler
// returns, which is what in-process callers ([mcpkit.Server.Handler],
// mcpkittest.ServeTool) see; over the wire, clients decode it like any
// JSON (a map[string]any for an object, with the SDK's client).
//
// # Errors
//
// A function reports failure with the errors of package mcpkit:
// [mcpkit.ToolErrorf] or [mcpkit.NewToolError] for errors the model should
// see, [mcpkit.NewProtocolError] for a JSON-RPC error; any other error is
// shown unless error masking is in the chain. The server validates the
// arguments against the tool's schema before the function runs, so the
// function sees only arguments that fit it (and the schema's defaults);
// arguments that still do not decode into In (with validation turned off)
// are an [ArgumentError], a retryable tool error naming the field.
package tools
