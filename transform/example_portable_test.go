package transform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/transform"
)

// findTool is the tool of the Portable examples: its schema uses what the
// go-sdk and many servers write, and providers refuse some of it.
func findTool() *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{
			Name: "search",
			InputSchema: json.RawMessage(`{
				"type": "object",
				"properties": {
					"query": {"type": "string", "description": "Words to look for.", "minLength": 1},
					"since": {"type": ["string", "null"], "format": "date-time", "description": "Only newer results; null for all."},
					"limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
					"tags":  {"type": "array", "items": {"type": "string"}}
				},
				"required": ["query", "since"],
				"additionalProperties": false
			}`),
		},
		Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Arguments)}}}, nil
		}),
	}
}

// printSchema prints the input schema of the tool the server lists.
func printSchema(srv *mcpkit.Server, name string) {
	for _, t := range srv.Tools() {
		if t.Name == name {
			var b bytes.Buffer
			json.Indent(&b, t.InputSchema.(json.RawMessage), "", "  ")
			fmt.Println(b.String())
		}
	}
}

// A Gemini client gets nullable: true for null, no additionalProperties
// (which it refuses) and no type list. The server still refuses an
// argument the tool does not have.
func ExamplePortable() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "search"}, nil)
	if err := srv.Add(findTool()); err != nil {
		log.Fatal(err)
	}
	if err := srv.Transform(transform.Portable(transform.Gemini, nil)); err != nil {
		log.Fatal(err)
	}
	printSchema(srv, "search")
	// Output:
	// {
	//   "type": "object",
	//   "properties": {
	//     "query": {
	//       "type": "string",
	//       "description": "Words to look for.",
	//       "minLength": 1
	//     },
	//     "since": {
	//       "type": "string",
	//       "nullable": true,
	//       "description": "Only newer results; null for all.",
	//       "format": "date-time"
	//     },
	//     "limit": {
	//       "type": "integer",
	//       "default": 10,
	//       "minimum": 1,
	//       "maximum": 100
	//     },
	//     "tags": {
	//       "type": "array",
	//       "items": {
	//         "type": "string"
	//       }
	//     }
	//   },
	//   "required": [
	//     "query",
	//     "since"
	//   ]
	// }
}

// For OpenAI's strict mode every property is required and every object
// closed: an optional argument is nullable, and a null for it reaches the
// tool as an absent argument, with its default. The server still checks
// minLength, which strict mode refuses.
func ExamplePortable_openAIStrict() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "search"}, nil)
	if err := srv.Add(findTool()); err != nil {
		log.Fatal(err)
	}
	if err := srv.Transform(transform.Portable(transform.OpenAIStrict, nil)); err != nil {
		log.Fatal(err)
	}
	printSchema(srv, "search")

	h, _ := srv.Handler("search")
	t, _ := srv.Lookup("search")
	res, err := h.ServeTool(context.Background(), &mcpkit.Request{Tool: t,
		Arguments: json.RawMessage(`{"query":"go","since":null,"limit":null,"tags":null}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the tool got", res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// {
	//   "type": "object",
	//   "properties": {
	//     "query": {
	//       "type": "string",
	//       "description": "Words to look for."
	//     },
	//     "since": {
	//       "type": [
	//         "string",
	//         "null"
	//       ],
	//       "description": "Only newer results; null for all.",
	//       "format": "date-time"
	//     },
	//     "limit": {
	//       "type": [
	//         "integer",
	//         "null"
	//       ],
	//       "minimum": 1,
	//       "maximum": 100
	//     },
	//     "tags": {
	//       "type": [
	//         "array",
	//         "null"
	//       ],
	//       "items": {
	//         "type": "string"
	//       }
	//     }
	//   },
	//   "required": [
	//     "query",
	//     "since",
	//     "limit",
	//     "tags"
	//   ],
	//   "additionalProperties": false
	// }
	// the tool got {"query":"go","since":null,"limit":10}
}

// The portable profile writes what Gemini, OpenAI and Anthropic all accept
// as it is, and read alike: null as an alternative of its own.
func ExamplePortable_allProviders() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "search"}, nil)
	if err := srv.Add(findTool()); err != nil {
		log.Fatal(err)
	}
	if err := srv.Transform(transform.Portable(transform.AllProviders, nil)); err != nil {
		log.Fatal(err)
	}
	printSchema(srv, "search")
	// Output:
	// {
	//   "type": "object",
	//   "properties": {
	//     "query": {
	//       "type": "string",
	//       "description": "Words to look for."
	//     },
	//     "since": {
	//       "anyOf": [
	//         {
	//           "type": "string",
	//           "description": "Only newer results; null for all.",
	//           "format": "date-time"
	//         },
	//         {
	//           "type": "null"
	//         }
	//       ]
	//     },
	//     "limit": {
	//       "type": "integer",
	//       "minimum": 1,
	//       "maximum": 100
	//     },
	//     "tags": {
	//       "type": "array",
	//       "items": {
	//         "type": "string"
	//       }
	//     }
	//   },
	//   "required": [
	//     "query",
	//     "since"
	//   ]
	// }
}

func ExampleCheckPortable() {
	search := findTool()
	for _, p := range []transform.Profile{transform.AllProviders, transform.Gemini, transform.OpenAIStrict} {
		fmt.Println(p)
		for _, pb := range transform.CheckPortable(p, &search.Tool) {
			fmt.Println(" ", pb)
		}
	}
	// Output:
	// AllProviders
	//   search: /properties/query/minLength: AllProviders does not take "minLength"
	//   search: /properties/since/type: "type" is a list; AllProviders takes one type name (anyOf with {"type": "null"} admits null)
	//   search: /properties/limit/default: AllProviders does not take "default"
	//   search: /additionalProperties: AllProviders does not take "additionalProperties"
	// Gemini
	//   search: /properties/since/type: "type" is a list; Gemini takes one type name (nullable: true admits null)
	//   search: /additionalProperties: Gemini does not take "additionalProperties"
	// OpenAIStrict
	//   search: /properties/query/minLength: OpenAIStrict does not take "minLength"
	//   search: /properties/limit/default: OpenAIStrict does not take "default"
	//   search: (root): every property must be required in OpenAIStrict (a nullable type stands for an optional one); not required: limit, tags
}
