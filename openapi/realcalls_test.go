package openapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/openapi"
)

// An api is the backend of a real document's tools in these tests: it
// remembers each request it receives and answers with answer (or 200 {}).
type api struct {
	mu     sync.Mutex
	reqs   []apiRequest
	answer func(r *http.Request, body []byte) (int, string)
}

type apiRequest struct {
	method, path, query, contentType, body string
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.reqs = append(a.reqs, apiRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), string(body)})
	a.mu.Unlock()
	status, answer := http.StatusOK, `{}`
	if a.answer != nil {
		status, answer = a.answer(r, body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, answer)
}

// requests returns what the API received, and forgets it.
func (a *api) requests() []apiRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.reqs
	a.reqs = nil
	return out
}

// serveReal serves the tools of the named operations of a real document,
// called on backend, through an mcpkit server to an SDK client; it
// returns the client and what OnDegrade heard.
func serveReal(t *testing.T, doc string, backend http.Handler, opts *openapi.Options, operationIDs ...string) (*mcp.ClientSession, []error) {
	t.Helper()
	var degraded []error
	if opts == nil {
		opts = &openapi.Options{}
	}
	opts.Handler, opts.OperationIDs = backend, operationIDs
	opts.OnDegrade = func(_ *openapi.Operation, err error) { degraded = append(degraded, err) }
	tools, err := realDoc(t, doc).Tools(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != len(operationIDs) {
		t.Fatalf("%d tools for %d operations", len(tools), len(operationIDs))
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "real"}, nil)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	return mcpkittest.NewInMemoryServer(t, srv, nil).Session, degraded
}

// TestPatternGoCannotCompile: Linode's username pattern uses a lookahead,
// which Go's regexp does not have. The tool is served without the
// pattern, OnDegrade says so, and the schema's other limits still hold.
func TestPatternGoCannotCompile(t *testing.T) {
	backend := &api{}
	cs, degraded := serveReal(t, linodeDoc, backend, nil, "createUser")
	if len(degraded) == 0 || !errors.Is(degraded[0], openapi.ErrDegraded) || !strings.Contains(degraded[0].Error(), "pattern") {
		t.Fatalf("OnDegrade heard %v, want the pattern", degraded)
	}
	res := call(t, cs, "createUser", map[string]any{"body": map[string]any{"username": "alice_1", "email": "a@example.com"}})
	if res.IsError {
		t.Fatalf("a valid user is refused: %s", text(res))
	}
	if reqs := backend.requests(); len(reqs) != 1 || !strings.Contains(reqs[0].body, `"alice_1"`) {
		t.Fatalf("the API received %v", reqs)
	}
	res = call(t, cs, "createUser", map[string]any{"body": map[string]any{"username": "al", "email": "a@example.com"}})
	if !res.IsError || !strings.Contains(text(res), "username") {
		t.Errorf("a username under minLength: %s", text(res))
	}
	if reqs := backend.requests(); len(reqs) != 0 {
		t.Errorf("the API received %v", reqs)
	}
}

// TestOpenAI31Keywords: OpenAI's 3.1 document nests compound filters with
// $recursiveRef and writes a boolean exclusiveMinimum; both are enforced
// as meant.
func TestOpenAI31Keywords(t *testing.T) {
	backend := &api{}
	cs, _ := serveReal(t, openaiDoc, backend, &openapi.Options{NoOutputSchema: true}, "searchVectorStore", "createFineTuningJob")
	filter := func(innerType string) map[string]any {
		return map[string]any{"vector_store_id": "vs_1", "body": map[string]any{
			"query": "q",
			"filters": map[string]any{"type": "and", "filters": []any{
				map[string]any{"type": innerType, "filters": []any{map[string]any{"type": "eq", "key": "k", "value": "v"}}},
			}},
		}}
	}
	if res := call(t, cs, "searchVectorStore", filter("or")); res.IsError {
		t.Fatalf("a nested compound filter is refused: %s", text(res))
	}
	if res := call(t, cs, "searchVectorStore", filter("xor")); !res.IsError {
		t.Errorf("a nested compound filter of type xor is accepted")
	}
	job := func(rate float64) map[string]any {
		return map[string]any{"body": map[string]any{"model": "gpt-4o-mini", "training_file": "file-1",
			"hyperparameters": map[string]any{"learning_rate_multiplier": rate}}}
	}
	if res := call(t, cs, "createFineTuningJob", job(0.5)); res.IsError {
		t.Fatalf("learning_rate_multiplier 0.5 is refused: %s", text(res))
	}
	if res := call(t, cs, "createFineTuningJob", job(0)); !res.IsError {
		t.Errorf("learning_rate_multiplier 0 is accepted (exclusiveMinimum: true over minimum: 0)")
	}
	if n := len(backend.requests()); n != 2 {
		t.Errorf("the API received %d requests, want 2", n)
	}
}

// TestConnectedDocumentBounded: Stripe's answers reach most of its
// components, which made every output schema carry them all (171 MB for
// 451 tools). Each output schema is now trimmed to MaxOutputSchemaBytes,
// keeping the components the answer refers to directly, and OnDegrade
// says which were trimmed.
func TestConnectedDocumentBounded(t *testing.T) {
	skipWholeDocumentsUnderRace(t)
	trimmed := 0
	tools, err := realDoc(t, stripeDoc).Tools(&openapi.Options{
		Handler:   http.NotFoundHandler(),
		OnSkip:    func(*openapi.Operation, error) {},
		OnDegrade: func(_ *openapi.Operation, err error) { trimmed += strings.Count(err.Error(), "trimmed") },
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, tool := range tools {
		if tool.OutputSchema == nil {
			continue
		}
		n := len(tool.OutputSchema.(json.RawMessage))
		total += n
		// The answer's own component is always kept: Stripe's largest,
		// invoice, is 24 KB.
		if n > openapi.DefaultMaxOutputSchemaBytes+32<<10 {
			t.Errorf("%s: output schema of %d bytes", tool.Name, n)
		}
	}
	if total > 8<<20 {
		t.Errorf("output schemas of %d bytes in all", total)
	}
	if trimmed < len(tools)/2 {
		t.Errorf("OnDegrade heard of %d trimmed output schemas among %d tools", trimmed, len(tools))
	}
}

// TestTrimmedOutputSchema: a trimmed output schema still checks the
// answer's own fields, and accepts anything where it was cut. (800 bytes
// keep the balance, without descriptions, and cut what it refers to.)
func TestTrimmedOutputSchema(t *testing.T) {
	answer := `{}`
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, answer }}
	cs, degraded := serveReal(t, stripeDoc, backend, &openapi.Options{MaxOutputSchemaBytes: 800}, "GetBalance")
	if len(degraded) != 1 || !strings.Contains(degraded[0].Error(), "trimmed") {
		t.Fatalf("OnDegrade heard %v", degraded)
	}
	// balance_amount is past the limit: any value is accepted in its place.
	answer = `{"object":"balance","livemode":false,"available":[{"cut":"anything"}],"pending":[]}`
	if res := call(t, cs, "GetBalance", nil); res.IsError {
		t.Errorf("an answer with what was cut: %s", text(res))
	}
	answer = `{"object":"balance","livemode":"no","available":[],"pending":[]}`
	if res := call(t, cs, "GetBalance", nil); !res.IsError || !strings.Contains(text(res), "livemode") {
		t.Errorf("an answer whose livemode is a string: %s", text(res))
	}
}

// TestNullableWithoutType: Stripe writes nullable: true beside anyOf,
// without a type, which OpenAPI 3.0.3 says to ignore; its authors mean
// that null is allowed, and a real charge has "application": null.
func TestNullableWithoutType(t *testing.T) {
	application := `null`
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"id":"ch_1","object":"charge","amount":100,"amount_captured":100,"amount_refunded":0,` +
			`"billing_details":{"address":null,"email":null,"name":null,"phone":null},"captured":true,` +
			`"created":1700000000,"currency":"eur","disputed":false,"livemode":false,"metadata":{},"paid":true,` +
			`"refunded":false,"status":"succeeded","application":` + application + `}`
	}}
	// Untrimmed, so that the application component is checked.
	cs, _ := serveReal(t, stripeDoc, backend, &openapi.Options{MaxOutputSchemaBytes: -1}, "GetChargesCharge")
	if res := call(t, cs, "GetChargesCharge", map[string]any{"charge": "ch_1"}); res.IsError {
		t.Errorf("a charge whose application is null: %s", text(res))
	}
	application = `"ca_1"`
	if res := call(t, cs, "GetChargesCharge", map[string]any{"charge": "ch_1"}); res.IsError {
		t.Errorf("a charge whose application is an ID: %s", text(res))
	}
	application = `5`
	if res := call(t, cs, "GetChargesCharge", map[string]any{"charge": "ch_1"}); !res.IsError || !strings.Contains(text(res), "application") {
		t.Errorf("a charge whose application is 5: %s", text(res))
	}
}

// TestDiscriminatedBody: Ory's login body is a oneOf of ten methods told
// apart only by the discriminator "method"; every branch accepts a
// password login, so it matched none as a oneOf ("want exactly one").
// The discriminator picks the branch: in the advertised schema, and in
// validation, and the API receives the login.
func TestDiscriminatedBody(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"session":{"id":"s1"},"session_token":"t1"}`
	}}
	cs, _ := serveReal(t, oryDoc, backend, nil, "updateLoginFlow")
	login := func(body map[string]any) *mcp.CallToolResult {
		return call(t, cs, "updateLoginFlow", map[string]any{"flow": "f1", "body": body})
	}
	res := login(map[string]any{"method": "password", "identifier": "a@example.com", "password": "s3cret"})
	if res.IsError {
		t.Fatalf("a password login is refused: %s", text(res))
	}
	reqs := backend.requests()
	if len(reqs) != 1 || reqs[0].method != http.MethodPost || reqs[0].path != "/self-service/login" || reqs[0].query != "flow=f1" ||
		reqs[0].contentType != "application/json" || !strings.Contains(reqs[0].body, `"method":"password"`) {
		t.Fatalf("the API received %+v", reqs)
	}
	// The branch the discriminator picks is the one checked.
	if res := login(map[string]any{"method": "password", "identifier": "a@example.com"}); !res.IsError {
		t.Errorf("a password login without a password is accepted")
	}
	if res := login(map[string]any{"method": "telepathy", "identifier": "a@example.com"}); !res.IsError || !strings.Contains(text(res), "body/method") {
		t.Errorf("an unknown method: %s", text(res))
	}
	if n := len(backend.requests()); n != 0 {
		t.Errorf("the API received %d invalid logins", n)
	}
	// The advertised schema says which value picks which branch.
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := json.Marshal(list.Tools[0].InputSchema)
	if !strings.Contains(string(schema), `"enum":["password"]`) {
		t.Errorf("the input schema does not say that method password picks the password branch")
	}
}

// TestDiscriminatedBodyManyValues: DigitalOcean's droplet actions by tag
// are a oneOf of two branches, the second an allOf of the first, and
// seven discriminator values pick the first: every action matched both.
func TestDiscriminatedBodyManyValues(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusCreated, `{"actions":[]}` }}
	cs, _ := serveReal(t, doDoc, backend, nil, "dropletActions_post_byTag")
	for _, body := range []map[string]any{{"type": "power_on"}, {"type": "snapshot", "name": "nightly"}} {
		res := call(t, cs, "dropletActions_post_byTag", map[string]any{"tag_name": "web", "body": body})
		if res.IsError {
			t.Fatalf("%v: %s", body, text(res))
		}
		reqs := backend.requests()
		if len(reqs) != 1 || reqs[0].path != "/v2/droplets/actions" || reqs[0].query != "tag_name=web" || !strings.Contains(reqs[0].body, `"type":"`+body["type"].(string)+`"`) {
			t.Fatalf("the API received %+v", reqs)
		}
	}
	// reboot is an action of a single droplet, which no value here picks.
	if res := call(t, cs, "dropletActions_post_byTag", map[string]any{"tag_name": "web", "body": map[string]any{"type": "reboot"}}); !res.IsError || !strings.Contains(text(res), "body/type") {
		t.Errorf("a reboot by tag: %s", text(res))
	}
}

// TestDefaultThatCannotHold: Kubernetes gives status a default of {} over
// a schema that requires replicas. The server fills in defaults before it
// validates, so creating a ReplicaSet without a status was refused; such
// a default is not filled, and the API receives the ReplicaSet as sent.
func TestDefaultThatCannotHold(t *testing.T) {
	backend := &api{answer: func(_ *http.Request, body []byte) (int, string) {
		var rs map[string]any
		if err := json.Unmarshal(body, &rs); err != nil || rs["kind"] != "ReplicaSet" {
			return http.StatusBadRequest, `{"kind":"Status","message":"not a ReplicaSet"}`
		}
		if _, ok := rs["status"]; ok {
			return http.StatusUnprocessableEntity, `{"kind":"Status","message":"status is the server's"}`
		}
		return http.StatusCreated, string(body)
	}}
	cs, _ := serveReal(t, kubernetesDoc, backend, nil, "createAppsV1NamespacedReplicaSet")
	rs := map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{
			"replicas": 2,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27"}}},
			},
		},
	}
	res := call(t, cs, "createAppsV1NamespacedReplicaSet", map[string]any{"namespace": "default", "body": rs})
	if res.IsError {
		t.Fatalf("creating a ReplicaSet: %s", text(res))
	}
	if got := structured(t, res)["metadata"]; got == nil {
		t.Errorf("the answer is %s", text(res))
	}
	if reqs := backend.requests(); len(reqs) != 1 || reqs[0].path != "/apis/apps/v1/namespaces/default/replicasets" {
		t.Errorf("the API received %+v", reqs)
	}
}

// TestFormEncoding: Stripe's bodies are forms whose encoding object sends
// nested values in the deepObject style; the API receives
// address[city]=Paris, not JSON text.
func TestFormEncoding(t *testing.T) {
	backend := &api{answer: func(*http.Request, []byte) (int, string) {
		return http.StatusOK, `{"id":"cus_1","object":"customer","created":1700000000,"livemode":false}`
	}}
	cs, _ := serveReal(t, stripeDoc, backend, nil, "PostCustomers")
	res := call(t, cs, "PostCustomers", map[string]any{"body": map[string]any{
		"name":              "Ada",
		"address":           map[string]any{"city": "Paris", "country": "FR"},
		"metadata":          map[string]any{"order": "6735"},
		"expand":            []any{"tax"},
		"preferred_locales": []any{"fr", "en"},
		"tax_id_data":       []any{map[string]any{"type": "eu_vat", "value": "FR123"}},
	}})
	if res.IsError {
		t.Fatalf("PostCustomers: %s", text(res))
	}
	reqs := backend.requests()
	if len(reqs) != 1 || reqs[0].contentType != "application/x-www-form-urlencoded" {
		t.Fatalf("the API received %+v", reqs)
	}
	got, err := url.ParseQuery(reqs[0].body)
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{
		"name": {"Ada"}, "address[city]": {"Paris"}, "address[country]": {"FR"}, "metadata[order]": {"6735"},
		"expand[0]": {"tax"}, "preferred_locales[0]": {"fr"}, "preferred_locales[1]": {"en"},
		"tax_id_data[0][type]": {"eu_vat"}, "tax_id_data[0][value]": {"FR123"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the API received the form %s, want %s", reqs[0].body, want.Encode())
	}
}

// TestMultipartBody: OpenAI's file upload and Stripe's are multipart
// bodies. A file (format binary) is a file part of its own, other values
// are parts named after them, and Stripe's deepObject encoding holds in
// multipart as in forms.
func TestMultipartBody(t *testing.T) {
	var parts map[string]string
	var fileName string
	backend := &api{answer: func(r *http.Request, body []byte) (int, string) {
		parts, fileName = map[string]string{}, ""
		_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			parts[p.FormName()] = string(b)
			if p.FileName() != "" {
				fileName = p.FormName() + ":" + p.FileName()
			}
		}
		switch r.URL.Path {
		case "/files":
			return http.StatusOK, `{"id":"file-1","object":"file","bytes":11,"created_at":1700000000,"filename":"file","purpose":"fine-tune","status":"uploaded"}`
		}
		return http.StatusOK, `{"id":"file_1","object":"file","created":1700000000,"purpose":"dispute_evidence","size":5}`
	}}
	openai, _ := serveReal(t, openaiDoc, backend, nil, "createFile")
	res := call(t, openai, "createFile", map[string]any{"body": map[string]any{"file": `{"a":1}` + "\n", "purpose": "fine-tune"}})
	if res.IsError {
		t.Fatalf("createFile: %s", text(res))
	}
	if reqs := backend.requests(); len(reqs) != 1 || !strings.HasPrefix(reqs[0].contentType, "multipart/form-data; boundary=") {
		t.Fatalf("the API received %+v", reqs)
	}
	if want := map[string]string{"file": `{"a":1}` + "\n", "purpose": "fine-tune"}; !reflect.DeepEqual(parts, want) || fileName != "file:file" {
		t.Errorf("the API received the parts %q (file %q), want %q as the file part file", parts, fileName, want)
	}

	stripe, _ := serveReal(t, stripeDoc, backend, nil, "PostFiles")
	res = call(t, stripe, "PostFiles", map[string]any{"body": map[string]any{
		"file": "hello", "purpose": "dispute_evidence", "file_link_data": map[string]any{"create": true},
	}})
	if res.IsError {
		t.Fatalf("PostFiles: %s", text(res))
	}
	if want := map[string]string{"file": "hello", "purpose": "dispute_evidence", "file_link_data[create]": "true"}; !reflect.DeepEqual(parts, want) {
		t.Errorf("the API received the parts %q, want %q", parts, want)
	}
}

// TestRefIntoComponent: Linode's answers refer to the properties of a
// component ("#/components/schemas/PaginationEnvelope/properties/page"),
// which left 104 of its 350 operations without a tool. Such a $ref is
// followed like one to a component, and checked (TestRealDocumentsServable
// checks that only one of Linode's operations is skipped now).
func TestRefIntoComponent(t *testing.T) {
	answer := `{"data":[],"page":1,"pages":1,"results":0}`
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, answer }}
	cs, _ := serveReal(t, linodeDoc, backend, nil, "getEvents")
	if res := call(t, cs, "getEvents", nil); res.IsError {
		t.Fatalf("getEvents: %s", text(res))
	}
	answer = `{"data":[],"page":"first","pages":1,"results":0}`
	if res := call(t, cs, "getEvents", nil); !res.IsError || !strings.Contains(text(res), "page") {
		t.Errorf("an answer whose page is a string: %s", text(res))
	}
}
