// Package openapi provides MCP tools built from the operations of an
// OpenAPI 3.0 or 3.1 document: one tool per operation, served by the API's
// own http.Handler in process or by an *http.Client against its base URL.
//
//	doc, err := openapi.Load(specJSON) // or YAML
//	...
//	tools, err := doc.Tools(&openapi.Options{
//		Tags:    []string{"pet"}, // select operations; empty selects all
//		Handler: router,          // or Client and BaseURL
//	})
//	...
//	err = srv.Add(tools...) // an *mcpkit.Server: validation, middleware, ...
//
// The tools are ordinary [mcpkit.Tool]s: the server validates their
// arguments against their input schemas, runs its middleware around them
// and applies its transforms and visibility rules, as for any other tool.
//
// # Names
//
// A tool is named after its operation's operationId. Characters that MCP
// does not allow in a name (outside A-Z a-z 0-9 _ - .) become '_', and a
// name longer than 128 characters keeps its first 119 and a hash of the
// whole. An operation without an operationId is named after its method and
// path: GET /pets/{petId} is "get_pets_petId". When two operations get the
// same name, the one whose path (then method) sorts later gets "_2", then
// "_3", so that a document always gives the same names.
//
// # Arguments
//
// The input schema is an object with one property per parameter (path,
// query, header and cookie), named as the parameter, and the request body,
// if the operation takes one as JSON or as a form, under "body". The body
// is never merged into the parameters, so a body property cannot collide
// with a parameter. When two parameters share a name (a query "id" and a
// header "id"), or one is named "body", the later one is named
// "<in>.<name>" ("header.id"). Path parameters are required, and so are
// the parameters and the body the document marks required. Header
// parameters named Accept, Content-Type or Authorization are ignored, as
// the OpenAPI specification says. Unknown arguments are refused.
//
// Parameters are serialised by their style and explode settings, with the
// specification's defaults: form (exploded) for query and cookie, simple
// for path and header. Path values are escaped, so an argument cannot
// change the path; header values with control characters are refused.
//
// # Schemas
//
// Schemas are converted to JSON Schema 2020-12, as MCP writes tool
// schemas. $refs to the document's component schemas become refs into the
// tool schema's $defs, which hold every component the tool needs (a
// recursive schema is one entry that refers to itself); $refs to other
// documents are never fetched, and [Load] refuses them. From OpenAPI 3.0,
// nullable becomes a "null" type, boolean exclusiveMinimum and
// exclusiveMaximum become numbers; OpenAPI's example, xml, externalDocs,
// discriminator and x- extensions are dropped. OpenAPI 3.1 schemas (type
// arrays, const, prefixItems, $defs) are kept as written. A property
// marked readOnly is left out of the input schema (the server would
// otherwise fill in its default and send it), and one marked writeOnly out
// of the output schema.
//
// The output schema comes from the first 2xx response with a JSON body.
// MCP wants an object there: an answer that is not an object (an array of
// pets, a number) is wrapped, both in the schema and in the structured
// content, as {"result": answer}. A tool whose API answers outside its
// document can go without output schemas: [Options.NoOutputSchema].
//
// # Results and errors
//
// A 2xx answer with a JSON body is the result's structured content and its
// text. An answer with another status is a tool error (isError) of type
// [*HTTPError], which says the status and the first 4 KiB of the body; it
// is retryable for 4xx statuses and for 408, 429, 502, 503 and 504, fatal
// otherwise, and a 429 or 503 answer's Retry-After delay travels in the
// result's _meta under middleware.MetaKeyRetryAfter, as the rate limiting
// middleware sends its own. An answer longer than
// [Options.MaxResponseBytes] fails the call without being read further.
// An API that cannot be reached is a retryable tool error. The call's
// context is the request's: cancelling the call cancels the request.
//
// # Credentials
//
// The request to the API carries nothing of the MCP request: the client's
// headers and bearer token are never forwarded (MCP's authorization rules
// forbid passing a token through). Set the API's own credentials in
// [Options.Prepare], which sees each outgoing request and the call it
// serves.
//
// # Parsing
//
// Documents are parsed by github.com/getkin/kin-openapi, which reads
// OpenAPI 3.0 and 3.1 (with JSON Schema 2020-12's type arrays, const,
// prefixItems and $defs) with few dependencies; it lives in this module of
// its own so that mcpkit's core does not depend on it.
package openapi
