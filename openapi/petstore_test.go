package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/openapi"
)

// A petstore is a small implementation of the Petstore document's API on
// net/http's ServeMux, which records what it was sent.
type petstore struct {
	mu   sync.Mutex
	pets map[int64]map[string]any
	next int64
	seen []*http.Request // requests served, bodies read into seenBody
	body []string
}

func newPetstore() *petstore {
	return &petstore{pets: map[int64]map[string]any{
		1: {"id": 1, "name": "Rex", "photoUrls": []any{}, "status": "available"},
		2: {"id": 2, "name": "Tom", "photoUrls": []any{}, "status": "sold"},
	}, next: 3}
}

func (p *petstore) record(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, r.Clone(context.Background()))
	p.body = append(p.body, string(b))
	return b
}

func (p *petstore) last() (*http.Request, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[len(p.seen)-1], p.body[len(p.body)-1]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (p *petstore) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		http.NotFound(w, r)
	})
	mux.HandleFunc("POST /pet", func(w http.ResponseWriter, r *http.Request) {
		var pet map[string]any
		if err := json.Unmarshal(p.record(r), &pet); err != nil || r.Header.Get("Content-Type") != "application/json" {
			writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"code": 405, "message": "Invalid input"})
			return
		}
		p.mu.Lock()
		pet["id"] = p.next
		p.pets[p.next] = pet
		p.next++
		p.mu.Unlock()
		writeJSON(w, http.StatusOK, pet)
	})
	mux.HandleFunc("GET /pet/findByStatus", func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		want := r.URL.Query()["status"]
		p.mu.Lock()
		out := []any{}
		for id := int64(1); id < p.next; id++ {
			if pet, ok := p.pets[id]; ok && slices.Contains(want, pet["status"].(string)) {
				out = append(out, pet)
			}
		}
		p.mu.Unlock()
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET /pet/{petId}", func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		id, _ := strconv.ParseInt(r.PathValue("petId"), 10, 64)
		p.mu.Lock()
		pet, ok := p.pets[id]
		p.mu.Unlock()
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"code": 404, "message": "Pet not found"})
			return
		}
		writeJSON(w, http.StatusOK, pet)
	})
	mux.HandleFunc("DELETE /pet/{petId}", func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		id, _ := strconv.ParseInt(r.PathValue("petId"), 10, 64)
		p.mu.Lock()
		_, ok := p.pets[id]
		delete(p.pets, id)
		p.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /store/inventory", func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		counts := map[string]int{}
		p.mu.Lock()
		for _, pet := range p.pets {
			counts[pet["status"].(string)]++
		}
		p.mu.Unlock()
		writeJSON(w, http.StatusOK, counts)
	})
	mux.HandleFunc("GET /user/login", func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		if r.URL.Query().Get("username") == "throttled" {
			w.Header().Set("Retry-After", "7")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		writeJSON(w, http.StatusOK, "logged in user session: "+r.URL.Query().Get("username"))
	})
	return mux
}

func readSpec(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// petstoreClient builds the Petstore's tools on store, serves them with an
// mcpkit server over HTTP to a client whose bearer token the server
// requires, and returns the client.
func petstoreClient(t *testing.T, spec string, store *petstore) *mcpkittest.Server {
	t.Helper()
	return petstoreClientOn(t, mcpkittest.NewStatelessServer, spec, store)
}

// petstoreClientOn is petstoreClient with the harness's constructor: one
// per protocol era.
func petstoreClientOn(t *testing.T, serve func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server, spec string, store *petstore) *mcpkittest.Server {
	t.Helper()
	doc, err := openapi.Load(readSpec(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := doc.Tools(&openapi.Options{
		Handler: store.handler(),
		Prepare: func(ctx context.Context, call *mcpkit.Request, out *http.Request) error {
			out.Header.Set("Authorization", "Bearer upstream-key-for-"+call.TokenInfo().UserID)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "petstore"}, nil)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	return serve(t, srv, &mcpkittest.Options{
		Tokens: map[string]*auth.TokenInfo{"client-secret": {UserID: "alice"}},
		Token:  "client-secret",
	})
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

// TestPetstoreEndToEnd serves the Petstore 3.0 and 3.1 documents' tools
// from an in-process net/http implementation through an mcpkit server, and
// calls them with the SDK's client over HTTP, on both protocol eras
// (2026-07-28 stateless, 2025-11-25 with a session).
func TestPetstoreEndToEnd(t *testing.T) {
	eras := []struct {
		name  string
		serve func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{{mcpkittest.StatelessVersion, mcpkittest.NewStatelessServer}, {mcpkittest.StatefulVersion, mcpkittest.NewServer}}
	for _, era := range eras {
		for _, spec := range []string{"petstore-3.0.json", "petstore-3.1.json"} {
			t.Run(era.name+"/"+spec, func(t *testing.T) { testPetstore(t, era.serve, spec) })
		}
	}
}

func testPetstore(t *testing.T, serve func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server, spec string) {
	store := newPetstore()
	ts := petstoreClientOn(t, serve, spec, store)

	list, err := ts.Session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"addPet", "getPetById", "findPetsByStatus", "deletePet", "getInventory", "loginUser", "updatePetWithForm"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %q: %v", want, names)
		}
	}
	if len(names) != 20 {
		t.Errorf("got %d tools, want one per operation (20): %v", len(names), names)
	}

	t.Run("object answer", func(t *testing.T) {
		res := call(t, ts.Session, "getPetById", map[string]any{"petId": 1})
		if res.IsError {
			t.Fatalf("error: %s", text(res))
		}
		if got := structured(t, res); got["name"] != "Rex" {
			t.Errorf("structured content = %v, want the pet Rex", got)
		}
		r, _ := store.last()
		if r.URL.Path != "/pet/1" || r.Method != "GET" || r.Header.Get("Accept") != "application/json" {
			t.Errorf("request = %s %s Accept %q", r.Method, r.URL.Path, r.Header.Get("Accept"))
		}
		if got := r.Header.Get("Authorization"); got != "Bearer upstream-key-for-alice" {
			t.Errorf("the API got Authorization %q, want only what Prepare set (never the client's token)", got)
		}
	})
	t.Run("client token never forwarded", func(t *testing.T) {
		call(t, ts.Session, "getInventory", nil)
		store.mu.Lock()
		defer store.mu.Unlock()
		for _, r := range store.seen {
			for k, vs := range r.Header {
				for _, v := range vs {
					if strings.Contains(v, "client-secret") {
						t.Errorf("the API got the client's token in %s: %q", k, v)
					}
				}
			}
		}
	})
	t.Run("array answer wrapped", func(t *testing.T) {
		res := call(t, ts.Session, "findPetsByStatus", map[string]any{"status": []string{"available", "sold"}})
		if res.IsError {
			t.Fatalf("error: %s", text(res))
		}
		got, ok := structured(t, res)["result"].([]any)
		if !ok || len(got) != 2 {
			t.Errorf("structured content = %v, want {result: [2 pets]}", res.StructuredContent)
		}
		r, _ := store.last()
		if q := r.URL.Query()["status"]; !slices.Equal(q, []string{"available", "sold"}) {
			t.Errorf("query status = %q, want both values, exploded (form style)", q)
		}
	})
	t.Run("JSON body", func(t *testing.T) {
		res := call(t, ts.Session, "addPet", map[string]any{"body": map[string]any{"name": "Kit", "photoUrls": []string{"u"}, "status": "pending"}})
		if res.IsError {
			t.Fatalf("error: %s", text(res))
		}
		r, body := store.last()
		if r.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"name":"Kit"`) || strings.Contains(body, `"id"`) {
			t.Errorf("request: Content-Type %q body %s", r.Header.Get("Content-Type"), body)
		}
	})
	t.Run("header parameter", func(t *testing.T) {
		res := call(t, ts.Session, "deletePet", map[string]any{"petId": 2, "api_key": "k-123"})
		if res.IsError {
			t.Fatalf("error: %s", text(res))
		}
		r, _ := store.last()
		if r.Header.Get("api_key") != "k-123" || r.URL.Path != "/pet/2" {
			t.Errorf("request: %s api_key %q", r.URL.Path, r.Header.Get("api_key"))
		}
	})
	t.Run("404 is a tool error with the body", func(t *testing.T) {
		res := call(t, ts.Session, "getPetById", map[string]any{"petId": 99})
		if !res.IsError || !strings.Contains(text(res), "HTTP 404") || !strings.Contains(text(res), "Pet not found") {
			t.Errorf("result: isError %v %q", res.IsError, text(res))
		}
		if c := mcpkit.ErrorClassOf(res); c != mcpkit.Retryable {
			t.Errorf("class %q, want retryable (the model may change the id)", c)
		}
	})
	t.Run("429 carries Retry-After", func(t *testing.T) {
		res := call(t, ts.Session, "loginUser", map[string]any{"username": "throttled", "password": "x"})
		if !res.IsError || !strings.Contains(text(res), "HTTP 429") {
			t.Fatalf("result: isError %v %q", res.IsError, text(res))
		}
		if c := mcpkit.ErrorClassOf(res); c != mcpkit.Retryable {
			t.Errorf("class %q, want retryable", c)
		}
		if got := fmt.Sprint(res.Meta[middleware.MetaKeyRetryAfter]); got != "7000" {
			t.Errorf("_meta %s = %s, want 7000", middleware.MetaKeyRetryAfter, got)
		}
	})
	t.Run("string answer", func(t *testing.T) {
		res := call(t, ts.Session, "loginUser", map[string]any{"username": "bob", "password": "x"})
		if res.IsError {
			t.Fatalf("error: %s", text(res))
		}
		if got := structured(t, res)["result"]; got != "logged in user session: bob" {
			t.Errorf("result = %v", got)
		}
	})
	t.Run("arguments validated against the schema", func(t *testing.T) {
		store.mu.Lock()
		before := len(store.seen)
		store.mu.Unlock()
		for _, args := range []map[string]any{
			{"petId": "one"},            // not an integer
			{},                          // missing path parameter
			{"petId": 1, "extra": true}, // unknown argument
		} {
			res := call(t, ts.Session, "getPetById", args)
			if !res.IsError {
				t.Errorf("%v: not an error: %s", args, text(res))
			}
		}
		store.mu.Lock()
		defer store.mu.Unlock()
		if len(store.seen) != before {
			t.Errorf("invalid calls reached the API")
		}
	})
}
