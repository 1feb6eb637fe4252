package openapi_test

// Attacks on the work of issue 38 (OpenAPI on real APIs), each named
// TestAttack38...: a test that fails shows a defect; one that passes shows
// what held. Real documents come from testdata; documents written here are
// the smallest that show a defect.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/openapi"
	"github.com/mcpkit/mcpkit/transform"
	"github.com/mcpkit/mcpkit/visibility"
)

// serveSpec serves every operation of a document written in the test on
// backend, through an mcpkit server to an SDK client; it returns the
// client and what OnSkip heard.
func serveSpec(t *testing.T, spec string, backend http.Handler) (*mcp.ClientSession, []error) {
	t.Helper()
	doc, err := openapi.Load([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	var skipped []error
	tools, err := doc.Tools(&openapi.Options{
		Handler: backend,
		OnSkip:  func(_ *openapi.Operation, err error) { skipped = append(skipped, err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "attack"}, nil)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	return mcpkittest.NewInMemoryServer(t, srv, nil).Session, skipped
}

// TestAttack38TrimmedOneOfRefusesRealAnswer: trimming an output schema
// turns the components past the limit into {}, which accepts anything.
// Inside a oneOf, two such branches both match every value, so the oneOf
// refuses every answer. OpenAI's listConversationItems answers a list of
// ConversationItem, a oneOf of 28 components: with the default limit, a
// real answer is a fatal output validation error (14 of OpenAI's tools,
// 16 of Box's, Adyen's donations and transactions are trimmed so).
func TestAttack38TrimmedOneOfRefusesRealAnswer(t *testing.T) {
	const answer = `{"object":"list","data":[{"type":"message","id":"msg_1","status":"completed","role":"user",` +
		`"content":[{"type":"input_text","text":"hi"}]}],"first_id":"msg_1","last_id":"msg_1","has_more":false}`
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, answer }}
	for _, limit := range []int{-1, 0} { // whole, then trimmed to the default
		cs, _ := serveReal(t, openaiDoc, backend, &openapi.Options{MaxOutputSchemaBytes: limit}, "listConversationItems")
		res := call(t, cs, "listConversationItems", map[string]any{"conversation_id": "conv_1"})
		if res.IsError {
			t.Errorf("MaxOutputSchemaBytes %d: a real list of conversation items is refused: %s", limit, clipText(text(res)))
		}
	}
}

// TestAttack38QueryDeepObjectArray: Stripe's GET operations take expand as
// a query parameter in the deepObject style. A form body sends an array
// in that style as expand[0]=a (TestFormEncoding), the form Stripe
// reads; the query sends expand=a&expand=b, which Stripe does not read as
// a list. Nearly every Stripe GET has expand.
func TestAttack38QueryDeepObjectArray(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"id":"cus_1","object":"customer","created":1700000000,"livemode":false}`
	}}
	cs, _ := serveReal(t, stripeDoc, backend, nil, "GetCustomersCustomer")
	res := call(t, cs, "GetCustomersCustomer", map[string]any{"customer": "cus_1", "expand": []any{"default_source", "tax"}})
	if res.IsError {
		t.Fatalf("GetCustomersCustomer: %s", clipText(text(res)))
	}
	reqs := backend.requests()
	if len(reqs) != 1 {
		t.Fatalf("the API received %+v", reqs)
	}
	q, err := url.ParseQuery(reqs[0].query)
	if err != nil {
		t.Fatal(err)
	}
	if _, plain := q["expand"]; plain || q.Get("expand[0]") != "default_source" || q.Get("expand[1]") != "tax" {
		t.Errorf("the API received the query %q, want expand[0]=default_source&expand[1]=tax as the form bodies send it", reqs[0].query)
	}
}

// TestAttack38QueryDeepObjectNested: a deepObject query parameter whose
// properties are objects or arrays (Stripe's upcoming invoice lines:
// customer_details[address][city], subscription_items[0][price]) is sent
// with JSON text inside: customer_details[address]={"city":"Paris"}.
func TestAttack38QueryDeepObjectNested(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"object":"list","data":[],"has_more":false,"url":"/v1/invoices/upcoming/lines"}`
	}}
	cs, _ := serveReal(t, stripeDoc, backend, nil, "GetInvoicesUpcomingLines")
	call(t, cs, "GetInvoicesUpcomingLines", map[string]any{
		"customer_details":   map[string]any{"address": map[string]any{"city": "Paris"}},
		"subscription_items": []any{map[string]any{"price": "price_1", "quantity": 2}},
	})
	reqs := backend.requests()
	if len(reqs) != 1 {
		t.Fatalf("the API received %+v", reqs)
	}
	q, err := url.ParseQuery(reqs[0].query)
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{
		"customer_details[address][city]": {"Paris"},
		"subscription_items[0][price]":    {"price_1"}, "subscription_items[0][quantity]": {"2"},
	}
	for k, v := range want {
		if q.Get(k) != v[0] {
			t.Errorf("the API received the query %q, want %s", reqs[0].query, want.Encode())
			break
		}
	}
}

// TestAttack38PathValueTakesOtherParameter: path values are put into the
// escaped template one parameter after the other, so a value holding
// another parameter's placeholder ("{file}", escaped %7Bfile%7D) is
// replaced by that parameter's value: the API receives
// /users/secret/files/secret for user "{file}".
func TestAttack38PathValueTakesOtherParameter(t *testing.T) {
	const spec = `{"openapi":"3.0.3","info":{"title":"p","version":"1"},"paths":{"/users/{user}/files/{file}":{"get":{
		"operationId":"getFile","parameters":[
		{"name":"user","in":"path","required":true,"schema":{"type":"string"}},
		{"name":"file","in":"path","required":true,"schema":{"type":"string"}}],
		"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object"}}}}}}}}}`
	backend := &api{}
	cs, _ := serveSpec(t, spec, backend)
	call(t, cs, "getFile", map[string]any{"user": "{file}", "file": "secret"})
	if reqs := backend.requests(); len(reqs) != 1 || reqs[0].path != "/users/{file}/files/secret" {
		t.Errorf("the API received %+v, want the path /users/{file}/files/secret", reqs)
	}
}

// nestedDefault is a document of 330 bytes: a oneOf of three recursive
// branches, and a default nested depth arrays deep. Load checks each
// default against its schema with the parser's validator, which tries
// every branch at every level: 3^depth visits.
func nestedDefault(depth int) string {
	def := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	branch := `{"type":"array","items":{"$ref":"#/components/schemas/N"}}`
	return `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{},"components":{"schemas":{"N":{"default":` +
		def + `,"oneOf":[` + branch + `,` + branch + `,` + branch + `]}}}}`
}

// TestAttack38DefaultCheckExponential: Load of nestedDefault(20), a
// document of 340 bytes, does not end (depth 18 took 200 s on this
// machine, three times longer per level). Load runs in a child process,
// killed after a bound a hundred times what loading such a document
// should take.
func TestAttack38DefaultCheckExponential(t *testing.T) {
	if os.Getenv("ATTACK38_CHILD") == "load" {
		if _, err := openapi.Load([]byte(nestedDefault(20))); err != nil {
			fmt.Println("Load:", err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAttack38DefaultCheckExponential$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ATTACK38_CHILD=load")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the child: %v", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("Load of a %d-byte document has not returned after 20 s", len(nestedDefault(20)))
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestAttack38DeepSchemaQuadratic: a schema is marshalled whole before
// its depth is checked, and the parser's marshalling re-reads each
// level's text at every level above it: quadratic in the depth. Two
// operations whose shared request body is 2,000 arrays deep (a 50 KB
// document) make Tools allocate hundreds of MB to skip them; 9,500 deep,
// 2.4 GB and 13 s per operation. The bound here is a thousand times the
// document.
func TestAttack38DeepSchemaQuadratic(t *testing.T) {
	const depth = 2000
	schema := strings.Repeat(`{"type":"array","items":`, depth) + `{"type":"string"}` + strings.Repeat("}", depth)
	spec := `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{` +
		`"/a":{"post":{"requestBody":{"$ref":"#/components/requestBodies/Deep"},"responses":{"204":{"description":"x"}}}},` +
		`"/b":{"post":{"requestBody":{"$ref":"#/components/requestBodies/Deep"},"responses":{"204":{"description":"x"}}}}},` +
		`"components":{"requestBodies":{"Deep":{"content":{"application/json":{"schema":` + schema + `}}}}}}`
	doc, err := openapi.Load([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	var skipped int
	n := allocated(func() {
		if _, err := doc.Tools(&openapi.Options{Handler: http.NotFoundHandler(), OnSkip: func(*openapi.Operation, error) { skipped++ }}); err != nil {
			t.Fatal(err)
		}
	})
	if skipped != 2 {
		t.Errorf("%d operations skipped, want both (nested past the limit)", skipped)
	}
	if limit := uint64(1000 * len(spec)); n > limit {
		t.Errorf("Tools allocated %d MB for a document of %d KB", n>>20, len(spec)>>10)
	}
}

// TestAttack38InputSchemasQuadratic: each tool's input schema carries its
// own copy of the components it reaches, so a document of N operations
// that share one large component made N copies of it: 100 operations and
// a component of 500 properties (a 41 KB document) made 2.6 MB of input
// schemas; 300 and 1,000 (143 KB), 22.8 MB: quadratic in the document's
// size. Input schemas are now bounded by MaxInputSchemaBytes, which makes
// the total linear in the number of operations.
func TestAttack38InputSchemasQuadratic(t *testing.T) {
	var props, paths []string
	for i := range 500 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"string","description":"property %d"}`, i, i))
	}
	for i := range 100 {
		paths = append(paths, fmt.Sprintf(`"/o%d":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Big"}}}},"responses":{"204":{"description":"x"}}}}`, i))
	}
	spec := `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{` + strings.Join(paths, ",") +
		`},"components":{"schemas":{"Big":{"type":"object","properties":{` + strings.Join(props, ",") + `}}}}}`
	doc, err := openapi.Load([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := doc.Tools(&openapi.Options{Handler: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, tool := range tools {
		n := len(tool.InputSchema.(json.RawMessage))
		if n > openapi.DefaultMaxInputSchemaBytes {
			t.Errorf("%s carries %d bytes of input schema, past the limit", tool.Name, n)
		}
		total += n
	}
	// Each tool's copy bounded, the total grows with the number of
	// operations, not with operations times components.
	if total > len(tools)*openapi.DefaultMaxInputSchemaBytes {
		t.Errorf("%d tools carry %d KB of input schemas for a document of %d KB", len(tools), total>>10, len(spec)>>10)
	}
}

// defaultsSpec has operations whose bodies are valid without a property
// that has, or holds, a default that the server's validator refuses once
// it is filled in.
const defaultsSpec = `
openapi: 3.0.3
info: {title: defaults, version: "1"}
paths:
  /jobs:
    post:
      operationId: createJob
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string}
                options:
                  type: object
                  required: [level]
                  properties:
                    level: {type: integer}
                    mode: {type: string, default: fast}
      responses:
        "204": {description: created}
  /codes:
    post:
      operationId: createCode
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string}
                code: {type: string, pattern: "^[A-Z]{3}$", default: ""}
      responses:
        "204": {description: created}
`

// TestAttack38DefaultBuildsInvalidObject: options is optional; the server
// fills in a missing object whose properties have defaults, so a job
// without options becomes {"options": {"mode": "fast"}}, which lacks the
// required level: a valid call is refused. Load only drops defaults that
// their own schema refuses. (Seen in Box's post_tasks, Linode's
// createObjectStorageBucket, Azure's WebApps_Restore when the optional
// body or envelope is left out.)
func TestAttack38DefaultBuildsInvalidObject(t *testing.T) {
	backend := &api{}
	cs, _ := serveSpec(t, defaultsSpec, backend)
	if res := call(t, cs, "createJob", map[string]any{"body": map[string]any{"name": "nightly"}}); res.IsError {
		t.Errorf("a job without options is refused: %s", clipText(text(res)))
	}
}

// TestAttack38DefaultRefusedByOwnPattern: Load keeps a default that its
// own pattern refuses, because it checks defaults with pattern validation
// off; the server fills it in and its validator checks the pattern, so
// every call without code is refused.
func TestAttack38DefaultRefusedByOwnPattern(t *testing.T) {
	backend := &api{}
	cs, _ := serveSpec(t, defaultsSpec, backend)
	if res := call(t, cs, "createCode", map[string]any{"body": map[string]any{"name": "x"}}); res.IsError {
		t.Errorf("a body without code is refused: %s", clipText(text(res)))
	}
}

// TestAttack38ReadOnlyThroughRef: a readOnly property is left out of the
// input schema only when readOnly is written in the property itself; one
// whose schema is a $ref to a readOnly component stays, required, so a
// create without the id the API assigns is refused.
func TestAttack38ReadOnlyThroughRef(t *testing.T) {
	const spec = `
openapi: 3.0.3
info: {title: ro, version: "1"}
paths:
  /things:
    post:
      operationId: createThing
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Thing"}
      responses:
        "204": {description: created}
components:
  schemas:
    Id: {type: string, readOnly: true}
    Thing:
      type: object
      required: [id, name]
      properties:
        id: {$ref: "#/components/schemas/Id"}
        name: {type: string}
`
	backend := &api{}
	cs, _ := serveSpec(t, spec, backend)
	if res := call(t, cs, "createThing", map[string]any{"body": map[string]any{"name": "n"}}); res.IsError {
		t.Errorf("a thing without its readOnly id is refused: %s", clipText(text(res)))
	}
}

// TestAttack38DiscriminatorNobodyDeclares: Linode's PaymentMethod.data is
// a oneOf with discriminator "type", a property none of its branches
// declares (it is PaymentMethod's own). Each branch is made to require
// "type" with its component's name, so every real payment method is a
// fatal output validation error ("data/type: required property is
// missing").
func TestAttack38DiscriminatorNobodyDeclares(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"created":"2018-01-15T00:00:00","data":{"email":"a@example.com","paypal_id":"ABC"},` +
			`"id":123,"is_default":true,"type":"paypal"}`
	}}
	cs, _ := serveReal(t, linodeDoc, backend, nil, "getPaymentMethod")
	if res := call(t, cs, "getPaymentMethod", map[string]any{"paymentMethodId": 123}); res.IsError {
		t.Errorf("a real PayPal payment method is refused: %s", clipText(text(res)))
	}
}

// TestAttack38RefThroughRef: a $ref to a place inside a component is
// looked up in the document's text, without following the $refs on its
// way; the parser resolves it, and the operation is skipped.
func TestAttack38RefThroughRef(t *testing.T) {
	const spec = `{"openapi":"3.0.3","info":{"title":"r","version":"1"},"paths":{"/a":{"post":{"operationId":"a",
		"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A/properties/b/properties/c"}}}},
		"responses":{"204":{"description":"x"}}}}},"components":{"schemas":{
		"A":{"type":"object","properties":{"b":{"$ref":"#/components/schemas/B"}}},
		"B":{"type":"object","properties":{"c":{"type":"integer"}}}}}}`
	backend := &api{}
	cs, skipped := serveSpec(t, spec, backend)
	if len(skipped) > 0 {
		t.Fatalf("skipped: %v", skipped)
	}
	if res := call(t, cs, "a", map[string]any{"body": 5}); res.IsError {
		t.Errorf("a: %s", clipText(text(res)))
	}
}

// TestAttack38CookieSpace: cookie values are escaped as query values, a
// space as "+", which a cookie does not decode: the API receives
// "a+b" for "a b".
func TestAttack38CookieSpace(t *testing.T) {
	const spec = `{"openapi":"3.0.3","info":{"title":"c","version":"1"},"paths":{"/a":{"get":{"operationId":"a",
		"parameters":[{"name":"sess","in":"cookie","schema":{"type":"string"}}],
		"responses":{"204":{"description":"x"}}}}}}`
	var got string
	cs, _ := serveSpec(t, spec, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sess"); err == nil {
			got = c.Value
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	call(t, cs, "a", map[string]any{"sess": "a b"})
	if v, err := url.PathUnescape(got); err != nil || v != "a b" {
		t.Errorf("the API received the cookie %q, which reads as %q", got, v)
	}
}

// clipText keeps a failure message short.
func clipText(s string) string {
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}

// TestAttack38ThroughMountDiscoveryEras (held): Stripe's PostCustomers, a
// form body in the deepObject style, served by a child server mounted
// under "stripe", behind a scope requirement, a visibility rule on the
// OpenAPI tools and Discovery, on both protocol eras: called directly and
// through call_tool, the API receives the same form; a caller without
// the scope neither sees the tool nor reaches it through call_tool.
func TestAttack38ThroughMountDiscoveryEras(t *testing.T) {
	skipWholeDocumentsUnderRace(t)
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"id":"cus_1","object":"customer","created":1700000000,"livemode":false}`
	}}
	tools, err := realDoc(t, stripeDoc).Tools(&openapi.Options{Handler: backend, OperationIDs: []string{"PostCustomers"}})
	if err != nil || len(tools) != 1 {
		t.Fatalf("%d tools: %v", len(tools), err)
	}
	isAPI := func(t *mcpkit.Tool) bool { return t.Meta[openapi.MetaKeyOperation] != nil }
	eras := []struct {
		name  string
		serve func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{{mcpkittest.StatelessVersion, mcpkittest.NewStatelessServer}, {mcpkittest.StatefulVersion, mcpkittest.NewServer}}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "stripe"}, nil)
			if err := child.Add(tools...); err != nil {
				t.Fatal(err)
			}
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
			parent.Use(mcpkit.RequireScopes("mcp"))
			visibility.New(visibility.Require(isAPI, visibility.Scopes("stripe:write"))).Attach(parent)
			if _, err := parent.Mount("stripe", child); err != nil {
				t.Fatal(err)
			}
			if err := transform.Discovery(parent, nil); err != nil {
				t.Fatal(err)
			}
			tokens := map[string]*auth.TokenInfo{
				"writer": {UserID: "w", Scopes: []string{"mcp", "stripe:write"}},
				"reader": {UserID: "r", Scopes: []string{"mcp"}},
			}
			args := map[string]any{"body": map[string]any{"name": "Ada", "address": map[string]any{"city": "Paris"}, "expand": []any{"tax"}}}
			const wantForm = "address%5Bcity%5D=Paris&expand%5B0%5D=tax&name=Ada"

			writer := era.serve(t, parent, &mcpkittest.Options{Tokens: tokens, Token: "writer"})
			if res := call(t, writer.Session, "stripe_PostCustomers", args); res.IsError {
				t.Fatalf("direct call: %s", clipText(text(res)))
			}
			if res := call(t, writer.Session, transform.CallToolName, map[string]any{"name": "stripe_PostCustomers", "arguments": args}); res.IsError {
				t.Fatalf("call_tool: %s", clipText(text(res)))
			}
			reqs := backend.requests()
			if len(reqs) != 2 || reqs[0].body != wantForm || reqs[1].body != wantForm {
				t.Fatalf("the API received %+v, want the form %s twice", reqs, wantForm)
			}
			res := call(t, writer.Session, transform.DescribeToolName, map[string]any{"name": "stripe_PostCustomers"})
			if res.IsError || !strings.Contains(text(res), `"address"`) {
				t.Errorf("describe_tool: %s", clipText(text(res)))
			}

			reader := era.serve(t, parent, &mcpkittest.Options{Tokens: tokens, Token: "reader"})
			if res := call(t, reader.Session, transform.CallToolName, map[string]any{"name": "stripe_PostCustomers", "arguments": args}); !res.IsError {
				t.Errorf("a caller without stripe:write reached the tool through call_tool")
			}
			if n := len(backend.requests()); n != 0 {
				t.Errorf("the API received %d requests from a caller without the scope", n)
			}
		})
	}
}

// TestAttack38PatchSendsDefaults: the server fills in the defaults of the
// input schema before the handler runs, and the tool sends what it gets:
// DigitalOcean's spacesKey_patch, whose document's own example renames a
// key with {"name": "new-key-name"} ("you can only update the name"),
// sends {"name":"new-key-name","grants":[]}, asking to clear the key's
// grants. A default says what the API assumes when a value is absent; a
// partial update (PATCH) that sends it changes what the caller left alone.
// (netbox's 132 partial updates, edrv's patchLocation active=true,
// daniweb's memberships moderator=false do the same.)
func TestAttack38PatchSendsDefaults(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"key":{"name":"new-key-name","access_key":"DOKEY","grants":[{"bucket":"b","permission":"read"}],"created_at":"2018-07-19T15:04:16Z"}}`
	}}
	cs, _ := serveReal(t, doDoc, backend, nil, "spacesKey_patch")
	res := call(t, cs, "spacesKey_patch", map[string]any{"access_key": "DOKEY", "body": map[string]any{"name": "new-key-name"}})
	if res.IsError {
		t.Fatalf("spacesKey_patch: %s", clipText(text(res)))
	}
	if reqs := backend.requests(); len(reqs) != 1 || reqs[0].method != http.MethodPatch || reqs[0].body != `{"name":"new-key-name"}` {
		t.Errorf("the API received %+v, want the body {\"name\":\"new-key-name\"}", reqs)
	}
}
