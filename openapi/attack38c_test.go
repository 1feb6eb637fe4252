package openapi_test

// Attacks on the work of issue 38, third round, each named
// TestAttack38c...: the schemas that operations share, written inline in
// components or path items, as entries of $defs named by JSON Pointers. A
// test that fails shows a defect; one that passes shows what held.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/openapi"
	"github.com/mcpkit/mcpkit/transform"
)

// naiveRefs returns the $refs of the JSON schema js that a naive client
// cannot resolve: one that percent-decodes the fragment, splits it on
// "/", unescapes each token (~1, then ~0) and walks the document.
func naiveRefs(t *testing.T, js json.RawMessage) []string {
	t.Helper()
	var root any
	if err := json.Unmarshal(js, &root); err != nil {
		t.Fatal(err)
	}
	var bad []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if ref, ok := e.(string); ok && k == "$ref" {
					if resolveNaive(root, ref) == nil {
						bad = append(bad, ref)
					}
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(root)
	return bad
}

func resolveNaive(root any, ref string) any {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	frag, err := url.PathUnescape(frag)
	if err != nil || frag == "" {
		return nil
	}
	v := root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if v, ok = m[tok]; !ok {
			return nil
		}
	}
	return v
}

// hasRef reports whether the JSON js has a "$ref" key.
func hasRef(js json.RawMessage) bool { return strings.Contains(string(js), `"$ref"`) }

// oddSpec is a document whose shared schemas sit at places with names
// that need escaping as JSON Pointer tokens and as URI fragments: a
// request body and a response named with "~", "/", "%", "{", "}", a
// space, unicode and ":", under media types with parameters, and a path
// item's parameter under a path with the same. The shared schemas are
// long (shared entries) and refer to a component, Leaf.
func oddSpec(name string) string {
	big := func(extra string) string {
		props := []string{`"leaf":{"$ref":"#/components/schemas/Leaf"}`}
		for i := range 12 {
			props = append(props, fmt.Sprintf(`"p%d":{"type":"string","description":"property %d of a shared schema"}`, i, i))
		}
		return `{"type":"object","properties":{` + strings.Join(props, ",") + `}` + extra + `}`
	}
	esc := (&url.URL{Fragment: strings.NewReplacer("~", "~0", "/", "~1").Replace(name)}).EscapedFragment()
	path := "/v1/" + name + "/{id}"
	js := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{` + js(path) + `:{
	"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}},{"name":"filter","in":"query","content":{"application/json; profile=\"urn:x:y\"":{"schema":` + big(``) + `}}}],
	"post":{"operationId":"create","requestBody":{"$ref":"#/components/requestBodies/` + esc + `"},"responses":{"200":{"$ref":"#/components/responses/` + esc + `"}}},
	"put":{"operationId":"replace","requestBody":{"$ref":"#/components/requestBodies/` + esc + `"},"responses":{"200":{"$ref":"#/components/responses/` + esc + `"}}}}},
	"components":{"schemas":{"Leaf":{"type":"object","required":["n"],"properties":{"n":{"type":"integer","description":"a number, described at length so that the leaf is long enough to be trimmed"}}}},
	"requestBodies":{` + js(name) + `:{"required":true,"content":{"application/vnd.api+json; charset=utf-8":{"schema":` + big(`,"required":["p0"]`) + `}}}},
	"responses":{` + js(name) + `:{"description":"x","content":{"application/problem+json; q=\"a b\"":{"schema":` + big(``) + `}}}}}}`
}

// oddNames are the names oddSpec is tried with.
var oddNames = []string{"a~b", "a/b", "a~1b", "100%", "a%41", "{x}", "a b", "çà€😀", "urn:a:b", "a~01/%7E~/"}

// TestAttack38cOddNamesResolve: every $ref of every tool's schemas,
// whole and trimmed, resolves for a naive client, for the server's own
// validator (a value the shared schema refuses is refused, one it takes
// reaches the API as sent), for middleware.Deref (no $ref left, no
// warning) and for transform.Portable (Gemini and OpenAI's strict mode).
func TestAttack38cOddNamesResolve(t *testing.T) {
	for _, name := range oddNames {
		t.Run(name, func(t *testing.T) {
			doc, err := openapi.Load([]byte(oddSpec(name)))
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int{0, 1500} {
				backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, `{"p0":"x","leaf":{"n":1}}` }}
				tools, err := doc.Tools(&openapi.Options{Handler: backend, MaxInputSchemaBytes: limit, MaxOutputSchemaBytes: limit})
				if err != nil {
					t.Fatal(err)
				}
				if len(tools) != 2 {
					t.Fatalf("%d tools", len(tools))
				}
				for _, tl := range tools {
					in, _ := json.Marshal(tl.InputSchema)
					out, _ := json.Marshal(tl.OutputSchema)
					if !strings.Contains(string(in), `"$defs":{"/`) {
						t.Errorf("limit %d: %s: no shared entry in %.300s", limit, tl.Name, in)
					}
					for _, js := range []json.RawMessage{in, out} {
						if bad := naiveRefs(t, js); len(bad) > 0 {
							t.Errorf("limit %d: %s: a naive client cannot resolve %q", limit, tl.Name, bad)
						}
					}
				}
				serveOdd(t, tools, backend, limit)
			}
		})
	}
}

// serveOdd serves the tools of oddSpec and checks what the server, Deref
// and Portable make of them.
func serveOdd(t *testing.T, tools []*mcpkit.Tool, backend *api, limit int) {
	t.Helper()
	ctx := context.Background()
	var warned strings.Builder
	logger := slog.New(slog.NewTextHandler(&warned, nil))
	for _, setup := range []struct {
		name string
		add  func(*mcpkit.Server) error
	}{
		{"plain", func(*mcpkit.Server) error { return nil }},
		{"deref", func(s *mcpkit.Server) error { s.UseList(middleware.Deref(&middleware.DerefOptions{Logger: logger})); return nil }},
		{"gemini", func(s *mcpkit.Server) error { return s.Transform(transform.Portable(transform.Gemini, nil)) }},
		{"openai", func(s *mcpkit.Server) error { return s.Transform(transform.Portable(transform.OpenAIStrict, nil)) }},
	} {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "odd"}, nil)
		if err := srv.Add(tools...); err != nil {
			t.Fatal(err)
		}
		if err := setup.add(srv); err != nil {
			t.Errorf("limit %d: %s: %v", limit, setup.name, err)
			continue
		}
		cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			in, _ := json.Marshal(tl.InputSchema)
			if setup.name != "plain" && hasRef(in) {
				t.Errorf("limit %d: %s: %s still has a $ref: %.300s", limit, setup.name, tl.Name, in)
			}
			if bad := naiveRefs(t, in); len(bad) > 0 {
				t.Errorf("limit %d: %s: %s: a naive client cannot resolve %q", limit, setup.name, tl.Name, bad)
			}
		}
		if warned.Len() > 0 {
			t.Errorf("limit %d: deref warned: %s", limit, warned.String())
			warned.Reset()
		}
		body := map[string]any{"p0": "x", "p1": "y", "leaf": map[string]any{"n": 2}}
		filter := map[string]any{"p3": "z"}
		args := map[string]any{"id": "7", "body": body, "filter": filter}
		if setup.name == "openai" {
			// Every property is required, optional ones nullable.
			b := map[string]any{"leaf": map[string]any{"n": 2}}
			f := map[string]any{"leaf": nil}
			for i := range 12 {
				b[fmt.Sprintf("p%d", i)], f[fmt.Sprintf("p%d", i)] = nil, nil
			}
			b["p0"], b["p1"], f["p3"] = "x", "y", "z"
			args = map[string]any{"id": "7", "body": b, "filter": f}
		}
		res := call(t, cs, "create", args)
		if res.IsError {
			t.Errorf("limit %d: %s: a valid call refused: %s", limit, setup.name, clipText(text(res)))
		} else if reqs := backend.requests(); len(reqs) != 1 || reqs[0].body != `{"leaf":{"n":2},"p0":"x","p1":"y"}` ||
			reqs[0].query != "filter="+url.QueryEscape(`{"p3":"z"}`) {
			t.Errorf("limit %d: %s: the API received %+v", limit, setup.name, reqs)
		}
		// p0 is required by the shared body and a string.
		for _, b := range []map[string]any{{"p1": "y"}, {"p0": 1}} {
			bad := map[string]any{"id": "7", "body": b}
			if res := call(t, cs, "create", bad); !res.IsError {
				t.Errorf("limit %d: %s: a body the shared schema refuses (%v) was sent", limit, setup.name, b)
			}
		}
		backend.requests()
	}
}
