package openapi_test

// Attacks on the work of issue 38, second round, each named
// TestAttack38b...: where the items meet each other and the rest
// of mcpkit. A test that fails shows a defect; one that passes shows what
// held.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
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
// update the API made into a fatal error ("no structured content"). 31
// of GitHub's operations document a 2xx without a body beside one with
// JSON. Such an operation now has no output schema, and OnDegrade says
// why.
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

// deployment is a Deployment as a cluster answers it (kubectl get -o
// json), with the null creationTimestamp that Kubernetes writes in every
// pod template.
const deployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"deployment.kubernetes.io/revision":"1"},
"creationTimestamp":"2026-11-01T10:00:00Z","generation":1,"labels":{"app":"web"},"name":"web","namespace":"default",
"resourceVersion":"1234","uid":"0f8d3c1e-1111-2222-3333-444455556666","managedFields":[{"apiVersion":"apps/v1","fieldsType":"FieldsV1",
"fieldsV1":{"f:spec":{"f:replicas":{}}},"manager":"kubectl-create","operation":"Update","time":"2026-11-01T10:00:00Z"}]},
"spec":{"progressDeadlineSeconds":600,"replicas":2,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"web"}},
"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":1},"type":"RollingUpdate"},
"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.27","imagePullPolicy":"IfNotPresent",
"name":"nginx","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":{"cpu":"500m","memory":"128Mi"}},
"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always",
"schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}},
"status":{"availableReplicas":2,"conditions":[{"lastTransitionTime":"2026-11-01T10:00:05Z","lastUpdateTime":"2026-11-01T10:00:05Z",
"message":"Deployment has minimum availability.","reason":"MinimumReplicasAvailable","status":"True","type":"Available"}],
"observedGeneration":1,"readyReplicas":2,"replicas":2,"updatedReplicas":2}}`

// TestAttack38bRealDeploymentAnswer: a Deployment as a cluster answers
// it, read with readAppsV1NamespacedDeployment, whole and with the
// default limit, is a fatal output validation error: Kubernetes writes
// "creationTimestamp": null in every pod template, and its document
// says that a Time is a string. The default limit keeps ObjectMeta (the
// Deployment's own metadata), so it checks the template's too.
func TestAttack38bRealDeploymentAnswer(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, deployment }}
	for _, limit := range []int{0, -1} {
		cs, _ := serveReal(t, kubernetesDoc, backend, &openapi.Options{MaxOutputSchemaBytes: limit}, "readAppsV1NamespacedDeployment")
		res := call(t, cs, "readAppsV1NamespacedDeployment", map[string]any{"namespace": "default", "name": "web"})
		if res.IsError {
			t.Errorf("MaxOutputSchemaBytes %d: a real Deployment is refused: %s", limit, clipText(text(res)))
		}
	}
}

// TestAttack38bDefaultAgainstAllOfSibling: a base schema gives kind a
// default; the schema that extends it through allOf allows other values
// only. The default fits its own schema, and Load kept it; the server
// fills in the defaults of every schema an allOf brings together, and
// refused every truck without kind. Load now drops a default that a
// sibling's property refuses.
func TestAttack38bDefaultAgainstAllOfSibling(t *testing.T) {
	const spec = `
openapi: 3.0.3
info: {title: inherit, version: "1"}
paths:
  /vehicles:
    post:
      operationId: createTruck
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Truck"}
      responses:
        "204": {description: created}
components:
  schemas:
    Vehicle:
      type: object
      properties:
        name: {type: string}
        kind: {type: string, default: car}
    Truck:
      allOf:
        - $ref: "#/components/schemas/Vehicle"
        - type: object
          properties:
            kind: {type: string, enum: [truck, lorry]}
            axles: {type: integer}
`
	backend := &api{}
	cs, _ := serveSpec(t, spec, backend)
	if res := call(t, cs, "createTruck", map[string]any{"body": map[string]any{"name": "t", "axles": 3}}); res.IsError {
		t.Errorf("a truck without kind is refused: %s", clipText(text(res)))
	}
}

// TestAttack38bDiscriminatorOddNames: a discriminator without a mapping
// whose branches are components named with "~" and ".": the implicit
// value of a branch was its $ref's text after the prefix ("pet~0cat"),
// not the component's name ("pet~cat"), so the right value was refused
// and the escaped one accepted.
func TestAttack38bDiscriminatorOddNames(t *testing.T) {
	const spec = `{"openapi":"3.0.3","info":{"title":"d","version":"1"},"paths":{"/pets":{"post":{"operationId":"createPet",
		"requestBody":{"required":true,"content":{"application/json":{"schema":{"oneOf":[
		{"$ref":"#/components/schemas/pet~0cat"},{"$ref":"#/components/schemas/pet.dog"}],"discriminator":{"propertyName":"kind"}}}}},
		"responses":{"204":{"description":"x"}}}}},"components":{"schemas":{
		"pet~cat":{"type":"object","required":["kind"],"properties":{"kind":{"type":"string"},"name":{"type":"string"}}},
		"pet.dog":{"type":"object","required":["kind"],"properties":{"kind":{"type":"string"},"name":{"type":"string"}}}}}}`
	backend := &api{}
	cs, skipped := serveSpec(t, spec, backend)
	if len(skipped) > 0 {
		t.Fatalf("skipped: %v", skipped)
	}
	for _, kind := range []string{"pet~cat", "pet.dog"} {
		if res := call(t, cs, "createPet", map[string]any{"body": map[string]any{"kind": kind, "name": "n"}}); res.IsError {
			t.Errorf("kind %q is refused: %s", kind, clipText(text(res)))
		}
	}
	if res := call(t, cs, "createPet", map[string]any{"body": map[string]any{"kind": "pet~0cat"}}); !res.IsError {
		t.Errorf("kind %q, the escaped $ref, is accepted", "pet~0cat")
	}
}

// TestAttack38bSharedInlineSchemaUnbounded: MaxInputSchemaBytes bounds
// what a tool carries of the component schemas it reaches, but a schema
// written inline in a shared request body (components/requestBodies) or
// parameter (components/parameters) was taken as written in the operation
// and never cut: each operation that refers to it carried it whole. 200
// operations sharing a body of 1,000 properties (a 48 KB document) made
// 5.0 MB of input schemas, each past the limit: the square of the
// document's size, as before input schemas were bounded. The body's
// schema is now one $defs entry, trimmed as a component is: 47 KB in all
// (TestSharedInlineSchemas has each kind of shared schema).
func TestAttack38bSharedInlineSchemaUnbounded(t *testing.T) {
	var props, paths []string
	for i := range 1000 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"string"}`, i))
	}
	for i := range 200 {
		paths = append(paths, fmt.Sprintf(`"/o%d":{"post":{"requestBody":{"$ref":"#/components/requestBodies/Big"},"responses":{"204":{"description":"x"}}}}`, i))
	}
	spec := `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{` + strings.Join(paths, ",") +
		`},"components":{"requestBodies":{"Big":{"content":{"application/json":{"schema":{"type":"object","properties":{` +
		strings.Join(props, ",") + `}}}}}}}}`
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
		total += len(tool.InputSchema.(json.RawMessage))
	}
	if total > len(tools)*openapi.DefaultMaxInputSchemaBytes {
		t.Errorf("%d tools carry %d KB of input schemas for a document of %d KB, each past MaxInputSchemaBytes", len(tools), total>>10, len(spec)>>10)
	}
}

// TestAttack38bOtherSuccessSchema: GitHub's repos/create-deployment
// answers 201 with the deployment, or 202 with {"message": ...} when it
// merged the default branch first. The tool's output schema was the
// 201's, which requires a deployment's id, url, ...: every 202 answer, a
// deployment request the API accepted, was a fatal error. 12 operations
// of the real documents (GitHub 9, Linode 3) answer 2xx in two schemas.
func TestAttack38bOtherSuccessSchema(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusAccepted, `{"message":"Auto-merged main into topic-branch on deployment."}`
	}}
	cs, degraded := serveReal(t, githubDoc, backend, nil, "repos/create-deployment")
	res := call(t, cs, "repos_create-deployment", map[string]any{"owner": "o", "repo": "r", "body": map[string]any{"ref": "topic-branch"}})
	if res.IsError {
		t.Errorf("a 202 answer, as documented: %s", clipText(text(res)))
	}
	if len(degraded) != 1 || !strings.Contains(degraded[0].Error(), "201 and 202 answers have different schemas") {
		t.Errorf("OnDegrade heard %v", degraded)
	}
}

// TestAttack38bComponentChainQuadratic: fitting a schema to its limit
// measured the whole schema again for each level it gave up, so a chain
// of components (each refers to the next: a linked list written out, a
// generated document's nesting) cost the square of its length per tool:
// 40 operations reaching 6,000 components (a 650 KB document) took 31 s.
// Each level's length is now summed once, and they take under a second.
// The bound is a safety net.
func TestAttack38bComponentChainQuadratic(t *testing.T) {
	skipWholeDocumentsUnderRace(t)
	const n, ops = 6000, 40
	var comps, paths []string
	for i := range n {
		comps = append(comps, fmt.Sprintf(`"C%d":{"type":"object","properties":{"p%d":{"type":"string"},"next":{"$ref":"#/components/schemas/C%d"}}}`, i, i, (i+1)%n))
	}
	for i := range ops {
		paths = append(paths, fmt.Sprintf(`"/o%d":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/C0"}}}},"responses":{"204":{"description":"x"}}}}`, i))
	}
	spec := `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{` + strings.Join(paths, ",") +
		`},"components":{"schemas":{` + strings.Join(comps, ",") + `}}}`
	doc, err := openapi.Load([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tools, err := doc.Tools(&openapi.Options{Handler: http.NotFoundHandler()})
	if err != nil || len(tools) != ops {
		t.Fatalf("%d tools: %v", len(tools), err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Tools of %d operations reaching a chain of %d components took %v", ops, n, d)
	}
}

// TestAttack38bDiscriminatorTrimmedBranches (held): Ory's login body with
// its nine methods trimmed to {} (MaxInputSchemaBytes 2,500) still tells
// the methods apart by the discriminator: a password login is accepted
// and reaches the API as given, a method that none of the branches names
// is refused, and the advertised schema lists the methods.
func TestAttack38bDiscriminatorTrimmedBranches(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"session":{"id":"s1"},"session_token":"t1"}`
	}}
	cs, degraded := serveReal(t, oryDoc, backend, &openapi.Options{MaxInputSchemaBytes: 2500, NoOutputSchema: true}, "updateLoginFlow")
	if len(degraded) == 0 || !strings.Contains(degraded[0].Error(), "accept any value") {
		t.Fatalf("OnDegrade heard %v", degraded)
	}
	listedIn := string(listed(t, cs, "updateLoginFlow", false))
	if !strings.Contains(listedIn, `"password"`) || !strings.Contains(listedIn, `"oidc"`) {
		t.Errorf("the trimmed schema does not list the methods: %s", clipText(listedIn))
	}
	login := map[string]any{"method": "password", "identifier": "a@example.com", "password": "s3cret!"}
	if res := call(t, cs, "updateLoginFlow", map[string]any{"flow": "f1", "body": login}); res.IsError {
		t.Fatalf("a password login: %s", clipText(text(res)))
	}
	if reqs := backend.requests(); len(reqs) != 1 || reqs[0].body != `{"identifier":"a@example.com","method":"password","password":"s3cret!"}` {
		t.Errorf("the API received %+v", reqs)
	}
	if res := call(t, cs, "updateLoginFlow", map[string]any{"flow": "f1", "body": map[string]any{"method": "telepathy"}}); !res.IsError {
		t.Errorf("a login by telepathy is accepted")
	}
}

// TestAttack38bDeepObjectReservedCharacters (held): Stripe's metadata is
// a deepObject whose keys are the caller's: a key with a space, brackets
// or non-ASCII letters and a value with "+", "&" and "=" reach the API
// as given, percent-encoded, brackets included.
func TestAttack38bDeepObjectReservedCharacters(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"id":"cus_1","object":"customer","created":1700000000,"livemode":false}`
	}}
	cs, _ := serveReal(t, stripeDoc, backend, nil, "PostCustomers")
	meta := map[string]any{"order id": "a+b&c=d", "x[y]": "1", "clé": "ü"}
	if res := call(t, cs, "PostCustomers", map[string]any{"body": map[string]any{"metadata": meta}}); res.IsError {
		t.Fatalf("PostCustomers: %s", clipText(text(res)))
	}
	reqs := backend.requests()
	if len(reqs) != 1 {
		t.Fatalf("the API received %+v", reqs)
	}
	if strings.ContainsAny(reqs[0].body, "[] ") {
		t.Errorf("the form %q has brackets or spaces not percent-encoded", reqs[0].body)
	}
	form, err := url.ParseQuery(reqs[0].body)
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{"metadata[order id]": {"a+b&c=d"}, "metadata[x[y]]": {"1"}, "metadata[clé]": {"ü"}}
	if !reflect.DeepEqual(form, want) {
		t.Errorf("the API received %v, want %v", form, want)
	}
}

// TestAttack38bTrimmedOneOfDeeper: the branches of a oneOf are told apart
// by a property whose enum is a component of its own (as generators
// write them); past the limit those enums are stubbed while the branches
// are kept. The branches then both match every value, and the oneOf,
// which referred to no stub itself, was kept: it refused every answer.
// Now a oneOf that reaches a stub through its branches' $refs becomes
// an anyOf too.
func TestAttack38bTrimmedOneOfDeeper(t *testing.T) {
	enum := func(first string) string {
		values := []string{`"` + first + `"`}
		for i := range 100 {
			values = append(values, fmt.Sprintf(`"%s_variant_%d"`, first, i))
		}
		return `{"type":"string","enum":[` + strings.Join(values, ",") + `]}`
	}
	spec := `{"openapi":"3.0.3","info":{"title":"w","version":"1"},"paths":{"/a":{"get":{"operationId":"a",
		"responses":{"200":{"description":"x","content":{"application/json":{"schema":{"type":"object","properties":{"item":{"oneOf":[
		{"$ref":"#/components/schemas/Cat"},{"$ref":"#/components/schemas/Dog"}]}}}}}}}}}},
		"components":{"schemas":{
		"Cat":{"type":"object","required":["kind"],"properties":{"kind":{"$ref":"#/components/schemas/CatKind"},"name":{"type":"string"}}},
		"Dog":{"type":"object","required":["kind"],"properties":{"kind":{"$ref":"#/components/schemas/DogKind"},"name":{"type":"string"}}},
		"CatKind":` + enum("cat") + `,"DogKind":` + enum("dog") + `}}}`
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"item":{"kind":"cat","name":"Tom"}}`
	}}
	doc, err := openapi.Load([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	var degraded []error
	tools, err := doc.Tools(&openapi.Options{Handler: backend, MaxOutputSchemaBytes: 1000, OnDegrade: func(_ *openapi.Operation, err error) { degraded = append(degraded, err) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(degraded) != 1 || !strings.Contains(degraded[0].Error(), "the 2 components reached through more than 1 $refs") {
		t.Fatalf("OnDegrade heard %v", degraded)
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

// TestAttack38bTrimmedNot: a not of a component that the limit stubs is
// a not of {}, which refused every answer. A not (or an if) that reaches
// a stub is now left out.
func TestAttack38bTrimmedNot(t *testing.T) {
	var props []string
	for i := range 60 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"integer","description":"a property of some length, %d"}`, i, i))
	}
	spec := `{"openapi":"3.0.3","info":{"title":"n","version":"1"},"paths":{"/a":{"get":{"operationId":"a",
		"responses":{"200":{"description":"x","content":{"application/json":{"schema":{"type":"object","properties":{"item":{
		"type":"object","not":{"$ref":"#/components/schemas/Legacy"}}}}}}}}}}},
		"components":{"schemas":{"Legacy":{"type":"object","required":["p0"],"properties":{` + strings.Join(props, ",") + `}}}}}`
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, `{"item":{"name":"new"}}` }}
	doc, err := openapi.Load([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := doc.Tools(&openapi.Options{Handler: backend, MaxOutputSchemaBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "n"}, nil)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	if res := call(t, cs, "a", nil); res.IsError {
		t.Errorf("an item that is not legacy is refused: %s", clipText(text(res)))
	}
}

// TestAttack38bDefaultsThroughMount (held): the same partial update
// served by a child server mounted under "do", with a parent that runs
// middleware of its own, called directly and through call_tool: the
// parent does not fill in the defaults before the tool's own middleware
// records what was given.
func TestAttack38bDefaultsThroughMount(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"key":{"name":"new-key-name","access_key":"DOKEY","grants":[{"bucket":"b","permission":"read"}],"created_at":"2018-07-19T15:04:16Z"}}`
	}}
	tools, err := realDoc(t, doDoc).Tools(&openapi.Options{Handler: backend, OperationIDs: []string{"spacesKey_patch"}})
	if err != nil || len(tools) != 1 {
		t.Fatalf("%d tools: %v", len(tools), err)
	}
	child := mcpkit.NewServer(&mcp.Implementation{Name: "do"}, nil)
	if err := child.Add(tools...); err != nil {
		t.Fatal(err)
	}
	parent := mcpkit.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
	var (
		mu   sync.Mutex
		seen []string // the arguments the parent's middleware sees
	)
	parent.Use(func(next mcpkit.Handler) mcpkit.Handler {
		return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			mu.Lock()
			seen = append(seen, string(req.Arguments))
			mu.Unlock()
			return next.ServeTool(ctx, req)
		})
	})
	if _, err := parent.Mount("do", child); err != nil {
		t.Fatal(err)
	}
	if err := transform.Discovery(parent, nil); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewStatelessServer(t, parent, nil).Session
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
	mu.Lock()
	defer mu.Unlock()
	for _, r := range reqs {
		if r.body != `{"name":"new-key-name"}` {
			t.Errorf("the API received %+v (the parent's middleware saw %q)", r, seen)
		}
	}
}

// charge is a card charge as Stripe's API reference shows one, with the
// nulls a real charge has.
const charge = `{"id":"ch_3MmlLrLkdIwHu7ix0snN0B15","object":"charge","amount":1099,"amount_captured":1099,"amount_refunded":0,
"application":null,"application_fee":null,"application_fee_amount":null,"balance_transaction":"txn_3MmlLrLkdIwHu7ix0uke3Ezy",
"billing_details":{"address":{"city":null,"country":null,"line1":null,"line2":null,"postal_code":null,"state":null},"email":null,"name":null,"phone":null},
"calculated_statement_descriptor":"Stripe","captured":true,"created":1679090539,"currency":"usd","customer":null,"description":null,
"disputed":false,"failure_balance_transaction":null,"failure_code":null,"failure_message":null,"fraud_details":{},"invoice":null,
"livemode":false,"metadata":{},"on_behalf_of":null,"outcome":{"network_status":"approved_by_network","reason":null,"risk_level":"normal",
"risk_score":32,"seller_message":"Payment complete.","type":"authorized"},"paid":true,"payment_intent":null,
"payment_method":"card_1MmlLrLkdIwHu7ixIJwEWSNR","payment_method_details":{"card":{"brand":"visa","checks":{"address_line1_check":null,
"address_postal_code_check":null,"cvc_check":null},"country":"US","exp_month":3,"exp_year":2024,"fingerprint":"mToisGZ01V71BCos",
"funding":"credit","installments":null,"last4":"4242","mandate":null,"network":"visa","three_d_secure":null,"wallet":null},"type":"card"},
"receipt_email":null,"receipt_number":null,"receipt_url":"https://pay.stripe.com/receipts/payment/CAcaFwoVYWNjdF8xTTJKVGtMa2RJd0h1N2l4KOvG06AGMgZfBXyr1aw6LBa9vaaSRWU96d8qBwz9z2J_CObiV_H2-e8RezSK_sw0KISesp4czsOUlVKY",
"refunded":false,"review":null,"shipping":null,"source_transfer":null,"statement_descriptor":null,"statement_descriptor_suffix":null,
"status":"succeeded","transfer_data":null,"transfer_group":null}`

// TestAttack38bRealChargeAnswer (held): a whole Stripe charge, with its nulls,
// read with GetChargesCharge, whole and with the default limit.
func TestAttack38bRealChargeAnswer(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, charge }}
	for _, limit := range []int{0, -1} {
		cs, _ := serveReal(t, stripeDoc, backend, &openapi.Options{MaxOutputSchemaBytes: limit}, "GetChargesCharge")
		if res := call(t, cs, "GetChargesCharge", map[string]any{"charge": "ch_1"}); res.IsError {
			t.Errorf("MaxOutputSchemaBytes %d: a real charge is refused: %s", limit, clipText(text(res)))
		}
	}
}

// TestAttack38bReadOnlyRequiredBySibling: the base declares id readOnly;
// the schema that extends it through allOf requires it (the API always
// answers it). A create without the id, which the API assigns, was
// refused: only a required list beside the readOnly property lost it.
// Now the required lists of an allOf lose what another of its schemas
// declares readOnly.
func TestAttack38bReadOnlyRequiredBySibling(t *testing.T) {
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
        "201":
          description: created
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
components:
  schemas:
    Base:
      type: object
      properties:
        id: {type: string, readOnly: true}
        name: {type: string}
    Thing:
      allOf:
        - $ref: "#/components/schemas/Base"
        - type: object
          required: [id, name]
`
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusCreated, `{"id":"t1","name":"n"}` }}
	cs, _ := serveSpec(t, spec, backend)
	if res := call(t, cs, "createThing", map[string]any{"body": map[string]any{"name": "n"}}); res.IsError {
		t.Errorf("a thing without its readOnly id is refused: %s", clipText(text(res)))
	}
}

// TestAttack38bJSONAnswerWithBOM: an API that starts its JSON answers
// with a byte order mark (some Windows-hosted APIs do) got "the answer
// is not valid JSON", a fatal error. RFC 8259 lets a parser ignore the
// mark, and the tool now does.
func TestAttack38bJSONAnswerWithBOM(t *testing.T) {
	backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprint(w, "\ufeff"+`{"object":"balance","livemode":false,"available":[],"pending":[]}`)
	})
	cs, _ := serveReal(t, stripeDoc, backend, nil, "GetBalance")
	res := call(t, cs, "GetBalance", nil)
	if res.IsError || structured(t, res)["object"] != "balance" || strings.HasPrefix(text(res), "\ufeff") {
		t.Errorf("a balance after a byte order mark: %s", clipText(text(res)))
	}
}

// TestAttack38bThroughToolTransform: transform.Tool derives a tool from a
// generated one, renaming an argument, hiding one that the server fills
// in, and giving a required one a default. The tool's own middleware
// records the arguments as the client gave them, under the derived
// tool's names; the derived handler maps them back to the operation's
// names and adds the hidden one, and the operation then left out every
// argument the record does not have: Stripe received no limit, no email
// and no customer. (Wrong data to the API, without an error, for a query
// argument; "missing path parameter" for a path one.) Now, for a tool
// whose input schema is not the operation's, every top-level argument
// the handler gets is sent, and only what lies below them is matched
// with what the call gave.
func TestAttack38bThroughToolTransform(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"object":"list","data":[],"has_more":false,"url":"/v1/customers"}`
	}}
	tools, err := realDoc(t, stripeDoc).Tools(&openapi.Options{Handler: backend, OperationIDs: []string{"GetCustomers", "GetCustomersCustomer"}})
	if err != nil || len(tools) != 2 {
		t.Fatalf("%d tools: %v", len(tools), err)
	}
	list, err := transform.Tool(tools[0], transform.Spec{
		Name: "find_customers",
		Arguments: map[string]transform.Arg{
			"limit": {Name: "page_size"},
			"email": {Hide: true, Value: "ada@example.com"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	get, err := transform.Tool(tools[1], transform.Spec{
		Name:      "my_customer",
		Arguments: map[string]transform.Arg{"customer": {Default: "cus_me", Required: transform.Optional}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "stripe"}, nil)
	if err := srv.Add(list, get); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	if res := call(t, cs, "find_customers", map[string]any{"page_size": 3}); res.IsError {
		t.Errorf("find_customers: %s", clipText(text(res)))
	}
	backend.answer = func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"id":"cus_me","object":"customer","created":1700000000,"livemode":false}`
	}
	if res := call(t, cs, "my_customer", map[string]any{}); res.IsError {
		t.Errorf("my_customer: %s", clipText(text(res)))
	}
	reqs := backend.requests()
	if len(reqs) < 1 || reqs[0].query != "email=ada%40example.com&limit=3" {
		t.Errorf("find_customers: the API received %+v, want the query email=ada%%40example.com&limit=3", reqs)
	}
	if len(reqs) < 2 || reqs[1].path != "/v1/customers/cus_me" {
		t.Errorf("my_customer: the API received %+v, want the path /v1/customers/cus_me", reqs)
	}
}

// TestAttack38bDerivedPatchSendsGiven: DigitalOcean's spacesKey_patch
// derived with transform.Tool (its access_key renamed key) and rewritten
// for Gemini by transform.Portable: the renamed argument reaches the
// API, and the grants' default, which the server fills in below the
// body, does not (the top-level arguments are mapped by the derived
// tool; what lies below them is the caller's).
func TestAttack38bDerivedPatchSendsGiven(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"key":{"name":"new-key-name","access_key":"DOKEY","grants":[{"bucket":"b","permission":"read"}],"created_at":"2018-07-19T15:04:16Z"}}`
	}}
	tools, err := realDoc(t, doDoc).Tools(&openapi.Options{Handler: backend, OperationIDs: []string{"spacesKey_patch"}})
	if err != nil || len(tools) != 1 {
		t.Fatalf("%d tools: %v", len(tools), err)
	}
	derived, err := transform.Tool(tools[0], transform.Spec{Name: "rename_key", Arguments: map[string]transform.Arg{"access_key": {Name: "key"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "do"}, nil)
	if err := srv.Add(tools[0], derived); err != nil {
		t.Fatal(err)
	}
	if err := srv.Transform(transform.Portable(transform.Gemini, nil)); err != nil {
		t.Fatal(err)
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	body := map[string]any{"name": "new-key-name"}
	if res := call(t, cs, "spacesKey_patch", map[string]any{"access_key": "DOKEY", "body": body}); res.IsError {
		t.Fatalf("spacesKey_patch: %s", clipText(text(res)))
	}
	if res := call(t, cs, "rename_key", map[string]any{"key": "DOKEY", "body": body}); res.IsError {
		t.Fatalf("rename_key: %s", clipText(text(res)))
	}
	reqs := backend.requests()
	if len(reqs) != 2 {
		t.Fatalf("the API received %+v", reqs)
	}
	for _, r := range reqs {
		if r.path != "/v2/spaces/keys/DOKEY" || r.body != `{"name":"new-key-name"}` {
			t.Errorf("the API received %+v", r)
		}
	}
}
