package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit/openapi"
)

// listed returns the schema of the named tool as a client lists it:
// the input schema, or the output schema when output is true.
func listed(t *testing.T, cs *mcp.ClientSession, name string, output bool) []byte {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != name {
			continue
		}
		s := tool.InputSchema
		if output {
			s = tool.OutputSchema
		}
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	t.Fatalf("%s is not listed", name)
	return nil
}

// TestTrimmedProseBeforeChecks: past its limit, a schema leaves out
// descriptions before it leaves out a check. Stripe's balance answer is
// 3,158 bytes whole and 1,079 without descriptions: at 1,500 bytes every
// component is still checked (an amount that is not an integer is
// refused; the components past the first $ref used to accept anything),
// and no description is left in the listed schema's $defs.
func TestTrimmedProseBeforeChecks(t *testing.T) {
	answer := `{}`
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, answer }}
	cs, degraded := serveReal(t, stripeDoc, backend, &openapi.Options{MaxOutputSchemaBytes: 1500}, "GetBalance")
	if len(degraded) != 1 || !strings.Contains(degraded[0].Error(), "descriptions") || strings.Contains(degraded[0].Error(), "any value") {
		t.Fatalf("OnDegrade heard %v, want descriptions left out and nothing cut", degraded)
	}
	out := listed(t, cs, "GetBalance", true)
	if len(out) > 1500 || bytes.Contains(out, []byte(`"description"`)) || !bytes.Contains(out, []byte(`"balance_amount_by_source_type"`)) {
		t.Errorf("listed output schema of %d bytes: %s", len(out), clipText(string(out)))
	}
	answer = `{"object":"balance","livemode":false,"available":[{"amount":"ten","currency":"eur"}],"pending":[]}`
	if res := call(t, cs, "GetBalance", nil); !res.IsError || !strings.Contains(text(res), "amount") {
		t.Errorf("an answer whose amount is a string: %s", clipText(text(res)))
	}
	answer = `{"object":"balance","livemode":false,"available":[{"amount":10,"currency":"eur","source_types":{"card":10}}],"pending":[]}`
	if res := call(t, cs, "GetBalance", nil); res.IsError {
		t.Errorf("a valid answer: %s", clipText(text(res)))
	}
}

// TestTrimmedInputSchema: a Kubernetes Deployment reaches 119 components
// (an input schema of 199 KB, most of it descriptions). Within
// MaxInputSchemaBytes, it keeps the Deployment, its metadata, its spec and
// the pod template without descriptions, and leaves the pod's own spec as
// {}. The listed schema says so, and the server enforces just that: a
// metadata name that is not a string is refused, a pod spec the document
// would refuse reaches the API, which checks it. Without a limit the pod
// spec is checked.
func TestTrimmedInputSchema(t *testing.T) {
	const podSpec = "io.k8s.api.core.v1.PodSpec"
	deployment := func(name any, podSpec map[string]any) map[string]any {
		return map[string]any{"namespace": "default", "body": map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"spec": podSpec},
			},
		}}
	}
	odd := map[string]any{"containers": "one, please"}

	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusCreated, `{}` }}
	const limit = 8 << 10 // the default keeps the pod spec's structure: see below
	cs, degraded := serveReal(t, kubernetesDoc, backend, &openapi.Options{NoOutputSchema: true, MaxInputSchemaBytes: limit}, "createAppsV1NamespacedDeployment")
	if len(degraded) != 1 || !strings.Contains(degraded[0].Error(), "MaxInputSchemaBytes") || !strings.Contains(degraded[0].Error(), "accept any value") {
		t.Fatalf("OnDegrade heard %v", degraded)
	}
	in := listed(t, cs, "createAppsV1NamespacedDeployment", false)
	var schema struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(in, &schema); err != nil {
		t.Fatal(err)
	}
	if len(in) > limit || string(schema.Defs[podSpec]) != `{}` || len(schema.Defs["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]) < 100 {
		t.Errorf("listed input schema of %d bytes, %s: %s", len(in), podSpec, schema.Defs[podSpec])
	}
	if res := call(t, cs, "createAppsV1NamespacedDeployment", deployment(5, nil)); !res.IsError || !strings.Contains(text(res), "name") {
		t.Errorf("a Deployment named 5: %s", clipText(text(res)))
	}
	if res := call(t, cs, "createAppsV1NamespacedDeployment", deployment("web", odd)); res.IsError {
		t.Errorf("a pod spec past the limit is refused: %s", clipText(text(res)))
	}
	if reqs := backend.requests(); len(reqs) != 1 || !strings.Contains(reqs[0].body, "one, please") {
		t.Errorf("the API received %+v", reqs)
	}

	def, _ := serveReal(t, kubernetesDoc, backend, &openapi.Options{NoOutputSchema: true}, "createAppsV1NamespacedDeployment")
	if err := json.Unmarshal(listed(t, def, "createAppsV1NamespacedDeployment", false), &schema); err != nil {
		t.Fatal(err)
	}
	if len(schema.Defs[podSpec]) < 1000 {
		t.Errorf("at the default limit, %s is %s", podSpec, schema.Defs[podSpec])
	}

	whole, _ := serveReal(t, kubernetesDoc, backend, &openapi.Options{NoOutputSchema: true, MaxInputSchemaBytes: -1}, "createAppsV1NamespacedDeployment")
	if res := call(t, whole, "createAppsV1NamespacedDeployment", deployment("web", odd)); !res.IsError || !strings.Contains(text(res), "containers") {
		t.Errorf("without a limit, a pod spec whose containers are a string: %s", clipText(text(res)))
	}
}
