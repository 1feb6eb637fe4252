package openapi_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/openapi"
)

// greeterAPI is a small OpenAPI 3.1 document.
const greeterAPI = `
openapi: 3.1.0
info: {title: Greeter, version: "1.0"}
paths:
  /greetings/{name}:
    get:
      operationId: getGreeting
      summary: Greet someone by name.
      tags: [greetings]
      parameters:
        - {name: name, in: path, required: true, schema: {type: string}}
        - {name: lang, in: query, schema: {type: string, enum: [en, fr], default: en}}
      responses:
        "200":
          description: The greeting.
          content:
            application/json:
              schema:
                type: object
                properties: {text: {type: string}}
  /admin/reset:
    post:
      operationId: reset
      tags: [admin]
      responses:
        "204": {description: Done.}
`

// greeter implements the document on net/http's ServeMux.
func greeter() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /greetings/{name}", func(w http.ResponseWriter, r *http.Request) {
		hello := map[string]string{"en": "Hello", "fr": "Bonjour"}[r.URL.Query().Get("lang")]
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"text": hello + ", " + r.PathValue("name") + "!"})
	})
	return mux
}

// Serve the operations tagged "greetings" of an API that runs in the same
// process as MCP tools.
func Example() {
	doc, err := openapi.Load([]byte(greeterAPI))
	if err != nil {
		log.Fatal(err)
	}
	tools, err := doc.Tools(&openapi.Options{Tags: []string{"greetings"}, Handler: greeter()})
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "greeter"}, nil)
	if err := srv.Add(tools...); err != nil {
		log.Fatal(err)
	}

	cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name:      "getGreeting",
		Arguments: map[string]any{"name": "Ada", "lang": "fr"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(tools), tools[0].Name)
	fmt.Println(res.StructuredContent)
	// Output:
	// 1 getGreeting
	// map[text:Bonjour, Ada!]
}

// Call an API over HTTP with credentials of its own: the MCP client's
// token never reaches it.
func ExampleOptions_prepare() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("the API got", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer api.Close()

	doc, err := openapi.Load([]byte(greeterAPI))
	if err != nil {
		log.Fatal(err)
	}
	tools, err := doc.Tools(&openapi.Options{
		OperationIDs: []string{"reset"},
		Client:       api.Client(),
		BaseURL:      api.URL,
		Prepare: func(ctx context.Context, call *mcpkit.Request, out *http.Request) error {
			out.Header.Set("Authorization", "Bearer service-account-key")
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := tools[0].Handler.ServeTool(context.Background(), mcpkittest.NewRequest(tools[0], nil))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// the API got POST /admin/reset Bearer service-account-key
	// HTTP 204 No Content
}

// An operation's answer other than 2xx is a tool error that says the
// status and the start of the body.
func ExampleHTTPError() {
	doc, err := openapi.Load([]byte(greeterAPI))
	if err != nil {
		log.Fatal(err)
	}
	tools, err := doc.Tools(&openapi.Options{
		OperationIDs: []string{"reset"},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30")
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = tools[0].Handler.ServeTool(context.Background(), mcpkittest.NewRequest(tools[0], nil))
	fmt.Println(err)
	// Output:
	// POST /admin/reset: HTTP 503 Service Unavailable (retry after 30s): maintenance
}

// List a document's operations, to choose what to serve.
func ExampleDocument_Operations() {
	doc, err := openapi.Load([]byte(greeterAPI))
	if err != nil {
		log.Fatal(err)
	}
	for _, op := range doc.Operations() {
		fmt.Println(op.Method, op.Path, op.OperationID, op.Tags)
	}
	// Output:
	// POST /admin/reset reset [admin]
	// GET /greetings/{name} getGreeting [greetings]
}

// Build the tools of a real document, Linode's API, hearing which
// operations cannot be served and which tools serve less than the
// document says, and why.
func ExampleOptions_onDegrade() {
	doc, err := openapi.Load(gunzip("testdata/linode.com.json.gz"))
	if err != nil {
		log.Fatal(err)
	}
	tools, err := doc.Tools(&openapi.Options{
		Handler:      http.NotFoundHandler(),
		OperationIDs: []string{"createUser", "setClientThumbnail"},
		OnSkip: func(op *openapi.Operation, err error) {
			fmt.Println("skipped:", op.OperationID)
		},
		OnDegrade: func(op *openapi.Operation, err error) {
			fmt.Println("degraded:", err)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(tools), "tools")
	// Output:
	// skipped: setClientThumbnail
	// degraded: openapi: POST /account/users: input schema: pattern "^[a-zA-Z0-9]((?![_-]{2,})[a-zA-Z0-9-_])+[a-zA-Z0-9]$" is not checked: Go's regexp cannot compile it
	// degraded: openapi: POST /account/users: output schema: pattern "^[a-zA-Z0-9]((?![_-]{2,})[a-zA-Z0-9-_])+[a-zA-Z0-9]$" is not checked: Go's regexp cannot compile it
	// 1 tools
}

// Load a Swagger 2.0 document: Load refuses it with ErrSwagger2, and
// kin-openapi's openapi2conv converts it to OpenAPI 3.
func ExampleErrSwagger2() {
	data, err := os.ReadFile("testdata/petstore-2.0.json")
	if err != nil {
		log.Fatal(err)
	}
	doc, err := openapi.Load(data)
	if errors.Is(err, openapi.ErrSwagger2) {
		doc, err = openapi.Load(toV3(data))
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(doc.Operations()), "operations")
	// Output: 20 operations
}

// toV3 converts a Swagger 2.0 document to OpenAPI 3.
func toV3(data []byte) []byte {
	var v2 openapi2.T
	if err := json.Unmarshal(data, &v2); err != nil {
		log.Fatal(err)
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		log.Fatal(err)
	}
	converted, err := json.Marshal(v3)
	if err != nil {
		log.Fatal(err)
	}
	return converted
}

// gunzip returns the content of a gzipped file.
func gunzip(name string) []byte {
	f, err := os.Open(name)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		log.Fatal(err)
	}
	return data
}
