package openapi_test

// Attacks on the work of issue 38, second round, each named
// TestAttack38b...: where the items meet each other and the rest
// of mcpkit. A test that fails shows a defect; one that passes shows what
// held.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/openapi"
	"github.com/mcpkit/mcpkit/transform"
)

const githubDoc = "api.github.com.json.gz" // OpenAPI 3.0, 1,223 operations

// TestAttack38bEmptyAnswerFatal: GitHub's create-or-update-org-secret
// answers 201 with a JSON object when it creates the secret and 204, no
// body, when it updates it. The tool's output schema was the 201's; the
// 204 answer has no structured content, and the server turned every
// update the API made into a fatal error ("no structured content"). 35
// of GitHub's operations document a 2xx without a body beside one with.
// Such an operation now has no output schema, and OnDegrade says why.
func TestAttack38bEmptyAnswerFatal(t *testing.T) {
	status := http.StatusNoContent
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		if status == http.StatusCreated {
			return status, `{}`
		}
		return status, ""
	}}
	cs, degraded := serveReal(t, githubDoc, backend, nil, "actions/create-or-update-org-secret")
	args := map[string]any{
		"org": "acme", "secret_name": "TOKEN", "body": map[string]any{"encrypted_value": "c2VjcmV0", "key_id": "k1", "visibility": "all"},
	}
	for _, status = range []int{http.StatusNoContent, http.StatusCreated} {
		res := call(t, cs, "actions_create-or-update-org-secret", args)
		if n := len(backend.requests()); n != 1 {
			t.Fatalf("the API received %d requests", n)
		}
		if res.IsError {
			t.Errorf("HTTP %d, which the API documents, is an error: %s", status, clipText(text(res)))
		}
	}
	if len(degraded) != 1 || !strings.Contains(degraded[0].Error(), "no output schema: its 204 answer has no JSON body") {
		t.Errorf("OnDegrade heard %v", degraded)
	}
}

// TestAttack38bJSONAnswerOtherContentType: an API that answers its
// documented JSON with another Content-Type (text/plain, as some
// frameworks do by default) got a text result, without structured
// content, which a tool with an output schema must send: a fatal error.
// A tool with an output schema now reads a valid JSON answer as JSON,
// and validates it.
func TestAttack38bJSONAnswerOtherContentType(t *testing.T) {
	answer := `{"object":"balance","livemode":false,"available":[],"pending":[]}`
	backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, answer)
	})
	cs, _ := serveReal(t, stripeDoc, backend, nil, "GetBalance")
	res := call(t, cs, "GetBalance", nil)
	if res.IsError || structured(t, res)["object"] != "balance" {
		t.Errorf("a balance answered as text/plain: %s", clipText(text(res)))
	}
	answer = `{"object":"balance","livemode":"no","available":[],"pending":[]}`
	if res := call(t, cs, "GetBalance", nil); !res.IsError || !strings.Contains(text(res), "livemode") {
		t.Errorf("an invalid balance answered as text/plain: %s", clipText(text(res)))
	}
}

// TestAttack38bNumberAsWritten: the server's validator admits 1e3 and
// 2.0 as integers, and a form or query value was sent as the number was
// written: Stripe received balance=1e3, which is not an integer's text.
// A whole number is now written as an integer in URLs and forms (a JSON
// body still sends what the caller wrote).
func TestAttack38bNumberAsWritten(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"id":"cus_1","object":"customer","created":1700000000,"livemode":false}`
	}}
	cs, _ := serveReal(t, stripeDoc, backend, nil, "PostCustomers")
	res := call(t, cs, "PostCustomers", json.RawMessage(`{"body":{"balance":1e3,"invoice_settings":{"rendering_options":{"amount_tax_display":"exclude_tax"}},"preferred_locales":["fr"],"tax":{"validate_location":"deferred"},"address":{"line1":"1 rue"}, "cash_balance":{"settings":{"reconciliation_mode":"automatic"}}}}`))
	if res.IsError {
		t.Fatalf("PostCustomers: %s", clipText(text(res)))
	}
	reqs := backend.requests()
	if len(reqs) != 1 {
		t.Fatalf("the API received %+v", reqs)
	}
	form, _ := url.ParseQuery(reqs[0].body)
	if form.Get("balance") != "1000" {
		t.Errorf("the API received balance=%q, want 1000", form.Get("balance"))
	}
}

// TestAttack38bDefaultsThroughCallTool (held): DigitalOcean's
// spacesKey_patch, whose grants have a default, served under a namespace
// and called directly and through Discovery's call_tool, on both eras:
// the API receives what the caller gave, not the defaults the server
// fills in, at the path of the renamed tool's operation.
func TestAttack38bDefaultsThroughCallTool(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"key":{"name":"new-key-name","access_key":"DOKEY","grants":[{"bucket":"b","permission":"read"}],"created_at":"2018-07-19T15:04:16Z"}}`
	}}
	tools, err := realDoc(t, doDoc).Tools(&openapi.Options{Handler: backend, OperationIDs: []string{"spacesKey_patch"}})
	if err != nil || len(tools) != 1 {
		t.Fatalf("%d tools: %v", len(tools), err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "do"}, nil)
	isAPI := func(t *mcpkit.Tool) bool { return t.Meta[openapi.MetaKeyOperation] != nil }
	if err := srv.Transform(transform.Select(isAPI, transform.Namespace("do", "_"))); err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	if err := transform.Discovery(srv, nil); err != nil {
		t.Fatal(err)
	}
	for _, era := range []struct {
		name  string
		serve func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{{mcpkittest.StatelessVersion, mcpkittest.NewStatelessServer}, {mcpkittest.StatefulVersion, mcpkittest.NewServer}} {
		t.Run(era.name, func(t *testing.T) {
			cs := era.serve(t, srv, nil).Session
			args := map[string]any{"access_key": "DOKEY", "body": map[string]any{"name": "new-key-name"}}
			if res := call(t, cs, "do_spacesKey_patch", args); res.IsError {
				t.Fatalf("direct: %s", clipText(text(res)))
			}
			if res := call(t, cs, transform.CallToolName, map[string]any{"name": "do_spacesKey_patch", "arguments": args}); res.IsError {
				t.Fatalf("call_tool: %s", clipText(text(res)))
			}
			reqs := backend.requests()
			if len(reqs) != 2 {
				t.Fatalf("the API received %+v", reqs)
			}
			for _, r := range reqs {
				if r.body != `{"name":"new-key-name"}` || r.path != "/v2/spaces/keys/DOKEY" {
					t.Errorf("the API received %+v", r)
				}
			}
		})
	}
}

// TestAttack38bAllOfCycle (held): components that include each other
// through allOf, one with a default that Load checks against them. The
// parser's validator and the server's could recurse without end, which
// overflows the stack: a crash no recover catches, so Load and Tools run
// in a child process. The operation is reported to OnSkip.
func TestAttack38bAllOfCycle(t *testing.T) {
	const spec = `{"openapi":"3.0.3","info":{"title":"c","version":"1"},"paths":{"/a":{"post":{"operationId":"a",
		"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}},
		"responses":{"200":{"description":"x","content":{"application/json":{"schema":{"$ref":"#/components/schemas/B"}}}}}}}},
		"components":{"schemas":{
		"A":{"allOf":[{"$ref":"#/components/schemas/B"}],"default":{"x":1}},
		"B":{"allOf":[{"$ref":"#/components/schemas/A"}],"properties":{"x":{"type":"integer"}}}}}}`
	if os.Getenv("ATTACK38B_CHILD") == "cycle" {
		doc, err := openapi.Load([]byte(spec))
		if err != nil {
			fmt.Println("Load:", err)
			return
		}
		var skipped []error
		tools, err := doc.Tools(&openapi.Options{Handler: &api{}, OnSkip: func(_ *openapi.Operation, err error) { skipped = append(skipped, err) }})
		fmt.Println("Tools:", len(tools), err, skipped)
		if len(tools) == 1 {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "c"}, nil)
			if err := srv.Add(tools...); err != nil {
				fmt.Println("Add:", err)
				return
			}
			cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
			res := call(t, cs, "a", map[string]any{"body": map[string]any{"x": 1}})
			fmt.Println("call:", res.IsError, text(res))
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAttack38bAllOfCycle$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "ATTACK38B_CHILD=cycle")
	out := make(chan []byte, 1)
	var errc = make(chan error, 1)
	go func() { b, err := cmd.CombinedOutput(); out <- b; errc <- err }()
	select {
	case b := <-out:
		if err := <-errc; err != nil || !strings.Contains(string(b), "applies itself to the same value without end") {
			t.Errorf("the child: %v\n%s", err, clipText(string(b)))
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Errorf("not done after 60 s")
	}
}

// TestAttack38bTrimmedOneOfWrapped: a oneOf whose branches wrap a
// component in an allOf (to add a description beside the $ref, as 3.0
// documents must, and as Kubernetes does everywhere) was not made an
// anyOf when the components were trimmed to {}: only a branch that is
// the $ref itself was recognised. Both branches matched every value, and
// the oneOf refused every answer.
func TestAttack38bTrimmedOneOfWrapped(t *testing.T) {
	var props []string
	for i := range 60 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"string","description":"a property of some length, %d"}`, i, i))
	}
	big := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	spec := `{"openapi":"3.0.3","info":{"title":"w","version":"1"},"paths":{"/a":{"get":{"operationId":"a",
		"responses":{"200":{"description":"x","content":{"application/json":{"schema":{"type":"object","properties":{"item":{"oneOf":[
		{"allOf":[{"$ref":"#/components/schemas/Cat"}],"description":"a cat"},
		{"allOf":[{"$ref":"#/components/schemas/Dog"}],"description":"a dog"}]}}}}}}}}}},
		"components":{"schemas":{"Cat":` + big + `,"Dog":` + big + `}}}`
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, `{"item":{"p1":"x"}}` }}
	doc, err := openapi.Load([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	var degraded []error
	tools, err := doc.Tools(&openapi.Options{Handler: backend, MaxOutputSchemaBytes: 1000, OnDegrade: func(_ *openapi.Operation, err error) { degraded = append(degraded, err) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(degraded) != 1 {
		t.Errorf("OnDegrade heard %v", degraded)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "w"}, nil)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	if res := call(t, cs, "a", nil); res.IsError {
		t.Errorf("a cat is refused: %s", clipText(text(res)))
	}
}

// TestAttack38bSwagger2Versions: a Swagger 2.0 document whose version is
// a JSON number, has a YAML comment after it, or starts with a byte order
// mark was not recognised: Load said `version "": want an OpenAPI 3.0 or
// 3.1 document`, not how to convert it.
func TestAttack38bSwagger2Versions(t *testing.T) {
	for _, doc := range []string{
		`{"swagger":2.0,"info":{"title":"s","version":"1"},"paths":{}}`,
		"swagger: \"2.0\" # converted by hand\ninfo: {title: s, version: \"1\"}\npaths: {}\n",
		"\ufeff{\"swagger\":\"2.0\",\"info\":{\"title\":\"s\",\"version\":\"1\"},\"paths\":{}}",
		"---\nswagger: '2.0'\ninfo: {title: s, version: \"1\"}\npaths: {}\n",
	} {
		_, err := openapi.Load([]byte(doc))
		if err != openapi.ErrSwagger2 {
			t.Errorf("%q: %v, want ErrSwagger2", clipText(doc), err)
		}
	}
}
