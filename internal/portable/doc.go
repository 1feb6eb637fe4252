// Package portable provides the rewriting of tool input schemas into the
// subsets of JSON Schema that model providers accept, and the checking of
// schemas against those subsets.
//
// [Rewrite] takes a schema as JSON and a [Profile] and returns a schema the
// profile accepts, with what it takes to serve calls made against it:
//
//	res, err := portable.Rewrite(schema, portable.Gemini, nil)
//	// res.Schema: what clients list
//	// res.Validate: what calls are checked against, when the provider reads
//	//   res.Schema otherwise than JSON Schema does (Gemini's nullable)
//	// res.Exact: false when something was left out, and calls must also
//	//   be checked against the input schema
//	// res.Plan: how a call's arguments map back (OpenAI strict mode)
//
// [Check] reports where a schema breaks a profile's rules, with the JSON
// Pointer of each place. Rewrite checks its own output with it.
//
// # What a rewrite keeps
//
// A rewritten schema admits no call that the input refuses, unless Exact
// is false; then the server checks each call against the input schema too,
// so that what reaches the tool is always what the input admits. It may
// admit fewer calls than the input: a schema that lists properties but no
// type is written as an object; null items of an array where the profile
// cannot say "null" there are left out; an object OpenAI's strict mode
// must close is closed. Annotations the provider does not take (examples,
// $comment, x-... such as x-mcp-header, formats it refuses) are dropped:
// the server's validator ignores them too.
//
// References are inlined ([deref]); a recursive one is kept as a $ref by a
// profile that has them (OpenAI strict), and otherwise written out
// [Options.Depth] times inside itself, beyond which the property that
// recurses is left out of the advertised schema (it is still accepted, and
// checked against the input schema), or, when it is required, the rewrite
// fails.
//
// What a profile cannot express at all (any JSON value, for a provider
// that needs a type; an array whose items can be anything; a map, for
// OpenAI strict mode; several types inside an array's items, for Gemini)
// makes Rewrite fail with an [*UnsupportedError], unless [Options.Omit]
// lets it leave out an optional property or one of several alternatives
// instead.
//
// # The profiles and their sources
//
// Gemini ([Gemini]): the function declarations' parameters are a "select
// subset of an OpenAPI 3.0 schema object" (the Schema type of the Gemini
// API, as github.com/googleapis/go-genai types.go documents it, and
// https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Schema).
// Its fields are type (one of STRING, NUMBER, INTEGER, BOOLEAN, ARRAY,
// OBJECT, NULL), format, title, description, nullable, enum (strings),
// properties, required, items, minItems, maxItems, minLength, maxLength,
// pattern, minimum, maximum, minProperties, maxProperties, anyOf, default,
// example and propertyOrdering. Parameter names "must start with a letter
// or an underscore and must only contain chars a-z, A-Z, 0-9, or
// underscores with a maximum length of 64" (go-genai, FunctionDeclaration).
// The API refuses the whole request when one declaration breaks a rule, as
// these reports show:
//
//   - any other keyword: "Invalid JSON payload received. Unknown name
//     "additionalProperties" ... Cannot find field" (also for $schema,
//     const, exclusiveMinimum, propertyNames): github.com/openswarm-ai/openswarm
//     issue 24, zed-industries/zed 44875, nanbingxyz/5ire 42;
//   - a list as type: "Proto field is not repeating, cannot start list":
//     voocel/litellm 9, WordPress/ai-provider-for-google 33; the same
//     report (aoci-spec/aoci-code 61) found {"type": "string", "nullable":
//     true} and {"anyOf": [{"type": "string"}, {"type": "null"}]} both
//     accepted by a 2026 Gemini model;
//   - no type: "type: must be specified when not using one_of, any_of or
//     all_of fields": danny-avila/LibreChat 6971;
//   - an object without properties: "properties: should be non-empty for
//     OBJECT type": agno-agi/agno 2112, vercel/ai 3371 (for the root,
//     bug-ops/zeph 1641 reports the API accepts it now; clients leave the
//     parameters out of a tool without arguments);
//   - required on a schema that is not an object: "required: only allowed
//     for OBJECT type": anomalyco/opencode 34130;
//   - siblings of anyOf: "When using any_of, it must be the only field set"
//     (Vertex AI, Gemini 3): patlux/pi-commandcode-provider 103;
//   - formats: the Gemini Developer API takes only "enum" and "date-time"
//     for strings, "otherwise requests will fail" (Firebase AI Logic's
//     Schema reference); a format is an annotation, so others are dropped;
//   - anyOf directly inside items, arrays without items and boolean
//     subschemas: the reports this package was written from.
//
// The Gemini profile writes null the OpenAPI way, "nullable": true, which
// JSON Schema does not read: Result.Validate then holds the schema with
// null among the types, for the server to check calls against.
//
// OpenAI strict mode ([OpenAIStrict]): the Structured Outputs guide,
// "Supported schemas" (https://platform.openai.com/docs/guides/structured-outputs),
// which function calling with "strict": true follows. Types string,
// number, integer, boolean, object, array, enum and anyOf; for strings,
// pattern and format (date-time, time, date, duration, email, hostname,
// ipv4, ipv6, uuid); for numbers, multipleOf, maximum, exclusiveMaximum,
// minimum, exclusiveMinimum; for arrays, minItems and maxItems; definitions
// ($defs) and recursion ("#", "#/$defs/...") are supported. The root must
// be an object, not anyOf; "all fields must be required", an optional one
// being written as a union with null ("type": ["string", "null"], or anyOf
// with {"type": "null"} for a reference, as the guide's linked list does);
// "additionalProperties: false must always be set in objects"; allOf, not,
// dependentRequired, dependentSchemas, if, then and else are not
// supported; "If you turn on Structured Outputs by supplying strict: true
// and call the API with an unsupported JSON Schema, you will receive an
// error." Limits: 5000 object properties, 10 levels of nesting, 1000 enum
// values, 120,000 characters of property names, definition names, enum
// and const values, and 15,000 characters for one enum of more than 250
// strings. default is refused ("'default' is not permitted", reported at
// https://zenn.dev/nicopin/scraps/a8d8f53f5faebb); minLength, maxLength,
// minProperties and maxProperties are not among the supported keywords.
// Without strict mode, OpenAI still refuses an array without items
// ("array schema missing items": streamnative/streamnative-mcp-server 26,
// digitalocean-labs/mcp-digitalocean 265).
//
// AllProviders ([AllProviders]): the intersection. The keywords both Gemini and
// OpenAI's strict subset know (type, title, description, enum, format,
// pattern, minimum, maximum, items, minItems, maxItems, properties,
// required, anyOf), used as both allow them: one type name per schema,
// enum only of strings, anyOf alone in its schema and never directly in
// items, no $ref, formats only date-time, an object below the root with
// properties, OpenAI's size limits, and Gemini's argument names. Null is
// written {"anyOf": [..., {"type": "null"}]}, which Gemini, OpenAI and
// JSON Schema all read alike. The root is never anyOf, oneOf or allOf,
// which Anthropic refuses too ("input_schema does not support oneOf, allOf,
// or anyOf at the top level": anthropics/claude-code 5973, 40075). OpenAI's
// strict mode is the one rule left out: it requires additionalProperties,
// which Gemini refuses, so no schema satisfies both; a client that turns
// strict mode on is served the OpenAIStrict profile.
package portable
