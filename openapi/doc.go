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
// The guide, docs/openapi.md in mcpkit's repository, says all of what
// follows at length.
//
// # Names and arguments
//
// A tool is named after its operation's operationId, made to fit MCP's
// rules (or after its method and path: "get_pets_petId"); see
// [Document.Tools]. Its arguments are the operation's parameters by name
// and its request body (JSON, a form or multipart/form-data) as "body".
// Parameters are serialised by their style and explode settings, and a
// form or multipart body's properties as its encoding object says
// (deepObject: address[city]=Paris). Path values are escaped, so that an
// argument cannot change the path.
//
// # Schemas
//
// Schemas are converted to JSON Schema 2020-12, in the form mcpkit's
// validator enforces as written: $refs inside the document point into the
// tool schema's $defs, OpenAPI 3.0's nullable and boolean exclusive bounds
// take their 2020-12 forms, a discriminator picks its oneOf branch, a
// default its own schema refuses is dropped, and keywords of no JSON
// Schema vocabulary are dropped. $refs to other documents are never
// fetched: [Load] refuses them, and [ErrSwagger2] says how to convert a
// Swagger 2.0 document. An answer that is not an object is wrapped as
// {"result": answer}. Each schema is bounded, by
// [Options.MaxInputSchemaBytes] and [Options.MaxOutputSchemaBytes]: past
// its limit it leaves out descriptions first, then the components reached
// through the most $refs, which accept any value.
//
// # Skipped and degraded
//
// Every tool Tools returns is one a server accepts: it registers each on a
// server of its own first. An operation that cannot be served is reported
// to [Options.OnSkip]; a tool served with less than its operation says (a
// pattern Go's regexp cannot compile is not checked; a schema is trimmed)
// to [Options.OnDegrade].
//
// # Results, errors and credentials
//
// A 2xx answer with a JSON body is the result's structured content and its
// text; another status is a tool error of type [*HTTPError], retryable for
// 4xx and for 408, 429, 502, 503 and 504, with a Retry-After delay in the
// result's _meta. The call's context is the request's. The request to the
// API carries nothing of the MCP request (MCP forbids passing a client's
// token through): set the API's own credentials in [Options.Prepare].
//
// # Parsing
//
// Documents are parsed by github.com/getkin/kin-openapi, which reads
// OpenAPI 3.0 and 3.1 with few dependencies; it lives in this module of
// its own so that mcpkit's core does not depend on it.
//
// # Adding the module
//
// Until mcpkit is published, go get github.com/mcpkit/mcpkit/openapi
// fails (403 Forbidden from the module proxy). With a checkout of the
// repository at ../mcpkit, require this module and the root module with
// replace directives of their own:
//
//	go mod edit -require=github.com/mcpkit/mcpkit@v0.0.0 -replace=github.com/mcpkit/mcpkit=../mcpkit
//	go mod edit -require=github.com/mcpkit/mcpkit/openapi@v0.0.0 -replace=github.com/mcpkit/mcpkit/openapi=../mcpkit/openapi
//	go mod tidy # once your code imports it
//
// The repository's README.md ("Use it in your module") has the go.work
// alternative and its limits.
package openapi
