package openapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/openapi"
)

// styles is a document whose parameters use every serialisation style,
// whose names collide, and whose schemas use OpenAPI 3.0's own keywords
// and a recursive component.
const styles = `
openapi: 3.0.3
info: {title: styles, version: "1"}
paths:
  /items/{id}/{label}/{matrix}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: array, items: {type: string}}}
    post:
      operationId: "style test/ü"
      parameters:
        - {name: label, in: path, required: true, style: label, explode: true, schema: {type: array, items: {type: integer}}}
        - {name: matrix, in: path, required: true, style: matrix, schema: {type: object, additionalProperties: {type: string}}}
        - {name: tags, in: query, schema: {type: array, items: {type: string}}}
        - {name: csv, in: query, explode: false, schema: {type: array, items: {type: string}}}
        - {name: pipes, in: query, style: pipeDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: filter, in: query, style: deepObject, schema: {type: object, properties: {color: {type: string}, size: {type: integer}}}}
        - {name: id, in: query, schema: {type: integer, nullable: true}}
        - {name: body, in: query, schema: {type: string}}
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: Authorization, in: header, schema: {type: string}}
        - {name: session, in: cookie, schema: {type: string}}
        - {name: q, in: query, content: {application/json: {schema: {type: object}}}}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Tree"}
      responses:
        "201":
          description: ok
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Tree"}}
  /items:
    get:
      parameters:
        - {name: min, in: query, schema: {type: number, minimum: 5, exclusiveMinimum: true}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Tree"}}}}
  /items/list:
    get:
      operationId: get_items
      responses:
        "204": {description: none}
components:
  schemas:
    Tree:
      type: object
      required: [name, id]
      properties:
        name: {type: string, example: oak}
        id: {type: string, readOnly: true}
        secret: {type: string, writeOnly: true}
        kind: {type: string, enum: [a, b], nullable: true}
        children: {type: array, items: {$ref: "#/components/schemas/Tree"}}
`

// recorder is an API that answers 201 [] and remembers the last request.
type recorder struct {
	r    *http.Request
	body string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.r = r
	var b strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	rec.body = b.String()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	w.Write([]byte(`[{"name":"x","id":"1"}]`))
}

func toolsOf(t *testing.T, spec string, opts *openapi.Options) map[string]*mcpkit.Tool {
	t.Helper()
	doc, err := openapi.Load([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := doc.Tools(opts)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]*mcpkit.Tool)
	for _, tool := range tools {
		m[tool.Name] = tool
	}
	return m
}

func TestNames(t *testing.T) {
	tools := toolsOf(t, styles, &openapi.Options{Handler: &recorder{}})
	for _, want := range []string{"style_test__", "get_items", "get_items_2"} {
		if tools[want] == nil {
			t.Errorf("no tool %q among %v", want, keys(tools))
		}
	}
	// GET /items has no operationId: named after its method and path; the
	// later operation whose own name is the same gets "_2".
	if op := tools["get_items"].Meta[openapi.MetaKeyOperation].(map[string]any); op["path"] != "/items" {
		t.Errorf("get_items is %v, want GET /items (sorted first)", op)
	}
	// A name does not depend on the selection: alone, the second keeps "_2".
	alone := toolsOf(t, styles, &openapi.Options{Handler: &recorder{}, Paths: []string{"/items/list"}})
	if len(alone) != 1 || alone["get_items_2"] == nil {
		t.Errorf("GET /items/list selected alone: %v, want get_items_2", keys(alone))
	}
}

func keys(m map[string]*mcpkit.Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestInputSchema(t *testing.T) {
	tool := toolsOf(t, styles, &openapi.Options{Handler: &recorder{}})["style_test__"]
	var s struct {
		Properties map[string]json.RawMessage
		Required   []string
		Defs       map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(tool.InputSchema.(json.RawMessage), &s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"id", "query.id", "query.body", "body", "X-Trace", "session", "q"} {
		if _, ok := s.Properties[want]; !ok {
			t.Errorf("no argument %q in %s", want, tool.InputSchema)
		}
	}
	if _, ok := s.Properties["Authorization"]; ok {
		t.Errorf("the Authorization header is an argument; OpenAPI says to ignore it")
	}
	if got := string(s.Properties["query.id"]); got != `{"type":["integer","null"]}` {
		t.Errorf("nullable integer = %s", got)
	}
	if got := string(s.Defs["Tree"]); !strings.Contains(got, `"$ref":"#/$defs/Tree"`) || strings.Contains(got, "example") || !strings.Contains(got, `"enum":["a","b",null]`) {
		t.Errorf("$defs/Tree = %s", got)
	}
	out := string(tool.OutputSchema.(json.RawMessage))
	if !strings.Contains(out, `"required":["result"]`) {
		t.Errorf("an array answer's output schema is not wrapped: %s", out)
	}
	// readOnly properties are not arguments, writeOnly ones are not answers.
	if in, out := string(s.Defs["Tree"]), string(tool.OutputSchema.(json.RawMessage)); strings.Contains(in, `"id"`) || !strings.Contains(in, `"required":["name"]`) || !strings.Contains(in, `"secret"`) ||
		!strings.Contains(out, `"id"`) || strings.Contains(out, `"secret"`) {
		t.Errorf("readOnly/writeOnly: input $defs/Tree %s, output %s", in, out)
	}
	getItems := toolsOf(t, styles, &openapi.Options{Handler: &recorder{}})["get_items"]
	if in, out := string(getItems.InputSchema.(json.RawMessage)), string(getItems.OutputSchema.(json.RawMessage)); strings.Contains(in, "$defs") || !strings.Contains(out, `"$defs":{"Tree"`) {
		t.Errorf("$defs belong to the schema that uses them: input %s, output %s", in, out)
	}
	if got := string(getItems.InputSchema.(json.RawMessage)); !strings.Contains(got, `"exclusiveMinimum":5`) || strings.Contains(got, `"minimum"`) {
		t.Errorf("3.0 exclusiveMinimum not converted: %s", got)
	}
}

// TestRequestSerialisation checks the request a call makes, parameter
// style by parameter style, through an mcpkit server that validates the
// arguments first.
func TestRequestSerialisation(t *testing.T) {
	rec := &recorder{}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "styles"}, nil)
	tools := toolsOf(t, styles, &openapi.Options{Handler: rec, BaseURL: "/api/"})
	for _, tool := range tools {
		if err := srv.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	res := call(t, ts.Session, "style_test__", map[string]any{
		"id":         []string{"a/b", "c"},
		"label":      []int{1, 2},
		"matrix":     map[string]string{"y": "2", "x": "1"},
		"tags":       []string{"t1", "t 2"},
		"csv":        []string{"a", "b"},
		"pipes":      []string{"a", "b"},
		"filter":     map[string]any{"color": "red", "size": 3},
		"query.id":   7,
		"query.body": "b",
		"X-Trace":    "tr-1",
		"session":    "s 1",
		"q":          map[string]any{"k": "v"},
		"body":       map[string]any{"name": "root", "children": []any{map[string]any{"name": "leaf"}}},
	})
	if res.IsError {
		t.Fatalf("error: %s", text(res))
	}
	r := rec.r
	if got, want := r.URL.EscapedPath(), "/api/items/a%2Fb,c/.1.2/;matrix=x,1,y,2"; got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
	wantQuery := "tags=t1&tags=t+2&csv=a,b&pipes=a|b&filter%5Bcolor%5D=red&filter%5Bsize%5D=3&id=7&body=b&q=%7B%22k%22%3A%22v%22%7D"
	if got := r.URL.RawQuery; got != wantQuery {
		t.Errorf("query =\n %s\nwant\n %s", got, wantQuery)
	}
	if r.Header.Get("X-Trace") != "tr-1" || r.Header.Get("Cookie") != "session=s%201" || r.Header.Get("Authorization") != "" {
		t.Errorf("headers = %v", r.Header)
	}
	if rec.body != `{"children":[{"name":"leaf"}],"name":"root"}` {
		t.Errorf("body = %s", rec.body)
	}
	if got := structured(t, res)["result"]; got == nil {
		t.Errorf("structured content = %v", res.StructuredContent)
	}

	// A recursive body is validated all the way down.
	res = call(t, ts.Session, "style_test__", map[string]any{
		"id": []string{"a"}, "label": []int{1}, "matrix": map[string]string{},
		"body": map[string]any{"name": "root", "children": []any{map[string]any{"children": []any{}}}},
	})
	if !res.IsError || !strings.Contains(text(res), "children/0") {
		t.Errorf("a nested child without a name: isError %v %q", res.IsError, text(res))
	}
	// A header value with a line break is refused, also without validation.
	tool := tools["style_test__"]
	_, err := tool.Handler.ServeTool(context.Background(), mcpkittest.NewRequest(tool, map[string]any{
		"id": []string{"a"}, "label": []int{1}, "matrix": map[string]string{}, "X-Trace": "a\r\nX-Evil: 1",
	}))
	var te *mcpkit.ToolError
	if !errors.As(err, &te) {
		t.Errorf("header with CRLF: err = %v, want a tool error", err)
	}
}

func TestLoadRefusesExternalRefs(t *testing.T) {
	fetched := make(chan string, 1)
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fetched <- r.URL.Path }))
	defer remote.Close()
	for _, ref := range []string{remote.URL + "/schema.json#/Pet", "other.yaml#/Pet", "/etc/passwd"} {
		spec := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/p":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"` + ref + `"}}}}}}}}}`
		if _, err := openapi.Load([]byte(spec)); err == nil {
			t.Errorf("$ref %s: Load succeeded", ref)
		}
	}
	select {
	case p := <-fetched:
		t.Errorf("Load fetched %s", p)
	default:
	}
}

// TestPathTraversalRefused: a path parameter cannot make the call reach
// another path of the API.
func TestPathTraversalRefused(t *testing.T) {
	store := newPetstore()
	ts := petstoreClient(t, "petstore-3.0.json", store)
	for _, user := range []string{"..", ".", ""} {
		res := call(t, ts.Session, "getUserByName", map[string]any{"username": user})
		if !res.IsError || !strings.Contains(text(res), "path parameter") {
			t.Errorf("username %q: isError %v %q", user, res.IsError, text(res))
		}
	}
	res := call(t, ts.Session, "getUserByName", map[string]any{"username": "../store/inventory"})
	r, _ := store.last()
	if r.URL.Path != "/user/../store/inventory" || r.URL.RawPath != "/user/..%2Fstore%2Finventory" {
		t.Errorf("username ../store/inventory reached %s (%v)", r.URL.Path, text(res))
	}
}

// TestPathTemplateEscaped: a path template with characters to escape
// keeps a value's escaped slash escaped.
func TestPathTemplateEscaped(t *testing.T) {
	const spec = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a b/{id}/c":{"get":{"operationId":"get","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"204":{"description":"none"}}}}}}`
	rec := &recorder{}
	tool := toolsOf(t, spec, &openapi.Options{Handler: rec})["get"]
	if _, err := tool.Handler.ServeTool(context.Background(), mcpkittest.NewRequest(tool, map[string]any{"id": "x/../y"})); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.r.URL.EscapedPath(), "/a%20b/x%2F..%2Fy/c"; got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
}

// TestOpenAPI31Schemas: JSON Schema 2020-12 as OpenAPI 3.1 writes it (type
// arrays, const, prefixItems) is kept, and the server enforces it.
func TestOpenAPI31Schemas(t *testing.T) {
	const spec = `
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /things:
    post:
      operationId: put
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [kind, note, pair]
              properties:
                kind: {const: thing}
                note: {type: [string, "null"]}
                pair: {type: array, prefixItems: [{type: string}, {type: integer}], items: false}
      responses:
        "201": {description: ok, content: {application/json: {schema: {type: [object, "null"]}}}}
`
	rec := &recorder{}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "t"}, nil)
	for _, tool := range toolsOf(t, spec, &openapi.Options{Handler: rec, NoOutputSchema: true}) {
		if err := srv.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	for _, tc := range []struct {
		body map[string]any
		ok   bool
	}{
		{map[string]any{"kind": "thing", "note": nil, "pair": []any{"a", 1}}, true},
		{map[string]any{"kind": "thing", "note": "n", "pair": []any{"a", 1}}, true},
		{map[string]any{"kind": "other", "note": nil, "pair": []any{"a", 1}}, false},
		{map[string]any{"kind": "thing", "note": 3, "pair": []any{"a", 1}}, false},
		{map[string]any{"kind": "thing", "note": nil, "pair": []any{1, "a"}}, false},
		{map[string]any{"kind": "thing", "note": nil, "pair": []any{"a", 1, 2}}, false},
	} {
		res := call(t, cs, "put", map[string]any{"body": tc.body})
		if res.IsError == tc.ok {
			t.Errorf("%v: isError %v: %s", tc.body, res.IsError, text(res))
		}
	}
}

// TestSentArgumentsAreTheGivenOnes: the request carries what the caller
// gave, at any depth, and none of the defaults the server filled in; a
// value the caller gave that equals its default is sent.
func TestSentArgumentsAreTheGivenOnes(t *testing.T) {
	const spec = `
openapi: 3.0.3
info: {title: given, version: "1"}
paths:
  /keys/{id}:
    patch:
      operationId: patchKey
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: dry, in: query, schema: {type: boolean, default: false}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string}
                grants: {type: array, items: {type: string}, default: []}
                limits:
                  type: object
                  properties:
                    rate: {type: integer, default: 10}
                    burst: {type: integer, default: 20}
      responses:
        "204": {description: patched}
`
	for _, tc := range []struct {
		args      map[string]any
		wantBody  string
		wantQuery string
	}{
		{map[string]any{"id": "k", "body": map[string]any{"name": "n"}}, `{"name":"n"}`, ""},
		{map[string]any{"id": "k", "body": map[string]any{"grants": []any{}, "limits": map[string]any{"rate": 5}}}, `{"grants":[],"limits":{"rate":5}}`, ""},
		{map[string]any{"id": "k", "dry": false}, "", "dry=false"},
	} {
		backend := &api{}
		cs, _ := serveSpec(t, spec, backend)
		if res := call(t, cs, "patchKey", tc.args); res.IsError {
			t.Fatalf("%v: %s", tc.args, text(res))
		}
		if reqs := backend.requests(); len(reqs) != 1 || reqs[0].body != tc.wantBody || reqs[0].query != tc.wantQuery {
			t.Errorf("%v: the API received %+v, want the body %q and the query %q", tc.args, reqs, tc.wantBody, tc.wantQuery)
		}
	}
}
