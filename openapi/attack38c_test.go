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
	"sync"
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
		{"deref", func(s *mcpkit.Server) error {
			s.UseList(middleware.Deref(&middleware.DerefOptions{Logger: logger}))
			return nil
		}},
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

// sharedDoc is a document of ops operations sharing, by $ref, the
// request body Shared written inline as body (and the response Answer,
// answer, if given), with the component schemas comps.
func sharedDoc(ops int, body, answer, comps string) string {
	resp := `{"204":{"description":"x"}}`
	extra := ""
	if answer != "" {
		resp = `{"200":{"$ref":"#/components/responses/Answer"}}`
		extra = `,"responses":{"Answer":{"description":"x","content":{"application/json":{"schema":` + answer + `}}}}`
	}
	paths := make([]string, ops)
	for i := range paths {
		paths[i] = fmt.Sprintf(`"/o%d":{"post":{"operationId":"op%d","requestBody":{"$ref":"#/components/requestBodies/Shared"},"responses":%s}}`, i, i, resp)
	}
	return `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{` + strings.Join(paths, ",") + `},"components":{"schemas":{` + comps + `},` +
		`"requestBodies":{"Shared":{"required":true,"content":{"application/json":{"schema":` + body + `}}}}` + extra + `}}`
}

// described is n string properties, each described, as JSON object members.
func described(prefix string, n int) string {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"%s%d":{"type":"string","description":"property %d, described at some length"}`, prefix, i, i)
	}
	return strings.Join(props, ",")
}

// serveTools serves tools on backend through an mcpkit server to an SDK
// client in memory.
func serveTools(t *testing.T, tools []*mcpkit.Tool) *mcp.ClientSession {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "attack"}, nil)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	return mcpkittest.NewInMemoryServer(t, srv, nil).Session
}

func sharedTools(t *testing.T, spec string, opts *openapi.Options) []*mcpkit.Tool {
	t.Helper()
	doc, err := openapi.Load([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := doc.Tools(opts)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// TestAttack38cSharedBothDirections: a request body's inline schema,
// shared, with a readOnly id and a writeOnly password, is also the
// schema of the answer (a $ref to the place in the document): the input
// schema has no id, the output schema no password, although both name the
// same $defs entry; a call with a password reaches the API as sent, and
// the answer with an id and no password is accepted.
func TestAttack38cSharedBothDirections(t *testing.T) {
	body := `{"type":"object","required":["id","name","password"],"properties":{"id":{"type":"integer","readOnly":true},"password":{"type":"string","writeOnly":true},` +
		`"name":{"type":"string"},` + described("p", 10) + `}}`
	answer := `{"$ref":"#/components/requestBodies/Shared/content/application~1json/schema"}`
	for _, order := range []string{"body first", "answer first"} {
		t.Run(order, func(t *testing.T) {
			spec := sharedDoc(2, body, answer, `"Unused":{"type":"string"}`)
			if order == "answer first" {
				// A GET that answers the same schema, sorted before the POSTs.
				spec = strings.Replace(spec, `"paths":{`, `"paths":{"/a":{"get":{"operationId":"get","responses":{"200":{"$ref":"#/components/responses/Answer"}}}},`, 1)
			}
			backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, `{"id":1,"name":"Rex"}` }}
			tools := sharedTools(t, spec, &openapi.Options{Handler: backend})
			for _, tl := range tools {
				in, _ := json.Marshal(tl.InputSchema)
				out, _ := json.Marshal(tl.OutputSchema)
				if strings.Contains(string(in), `"id"`) {
					t.Errorf("%s: the input schema has the readOnly id: %.400s", tl.Name, in)
				}
				if strings.Contains(string(out), `"password"`) {
					t.Errorf("%s: the output schema has the writeOnly password: %.400s", tl.Name, out)
				}
			}
			cs := serveTools(t, tools)
			res := call(t, cs, "op0", map[string]any{"body": map[string]any{"name": "Rex", "password": "s"}})
			if res.IsError {
				t.Fatalf("op0: %s", clipText(text(res)))
			}
			if reqs := backend.requests(); len(reqs) != 1 || reqs[0].body != `{"name":"Rex","password":"s"}` {
				t.Errorf("the API received %+v", reqs)
			}
		})
	}
}

// TestAttack38cSharedDiscriminator: a shared body, inline, a oneOf of
// two components told apart by a discriminator only: a valid cat is
// accepted and reaches the API as sent, a cat that is not a pet is
// refused.
func TestAttack38cSharedDiscriminator(t *testing.T) {
	body := `{"oneOf":[{"$ref":"#/components/schemas/Cat"},{"$ref":"#/components/schemas/Dog"}],"discriminator":{"propertyName":"kind"},"description":"` + strings.Repeat("a pet, ", 80) + `"}`
	comps := `"Cat":{"type":"object","required":["kind"],"properties":{"kind":{"type":"string"},"name":{"type":"string"}}},` +
		`"Dog":{"type":"object","required":["kind"],"properties":{"kind":{"type":"string"},"name":{"type":"string"}}}`
	backend := &api{}
	tools := sharedTools(t, sharedDoc(2, body, "", comps), &openapi.Options{Handler: backend})
	in, _ := json.Marshal(tools[0].InputSchema)
	if !strings.Contains(string(in), `"$defs":{"/components/requestBodies/Shared`) {
		t.Errorf("no shared entry: %.300s", in)
	}
	cs := serveTools(t, tools)
	if res := call(t, cs, "op1", map[string]any{"body": map[string]any{"kind": "Cat", "name": "Tom"}}); res.IsError {
		t.Fatalf("a valid cat refused: %s", clipText(text(res)))
	}
	if reqs := backend.requests(); len(reqs) != 1 || reqs[0].body != `{"kind":"Cat","name":"Tom"}` {
		t.Errorf("the API received %+v", reqs)
	}
	if res := call(t, cs, "op1", map[string]any{"body": map[string]any{"kind": "Cow"}}); !res.IsError {
		t.Errorf("a cow was sent as a pet")
	}
}

// TestAttack38cSharedDefaultsNullable: a shared body whose properties
// have defaults and one nullable (OpenAPI 3.0) property: the API
// receives what the call gave, no default added, and a null is accepted.
func TestAttack38cSharedDefaultsNullable(t *testing.T) {
	body := `{"type":"object","properties":{"size":{"type":"integer","default":10},"opts":{"type":"object","properties":{"deep":{"type":"boolean","default":true}}},` +
		`"note":{"type":"string","nullable":true},` + described("p", 10) + `}}`
	backend := &api{}
	tools := sharedTools(t, sharedDoc(2, body, "", `"Unused":{"type":"string"}`), &openapi.Options{Handler: backend})
	in, _ := json.Marshal(tools[0].InputSchema)
	if !strings.Contains(string(in), `"$defs":{"/components/requestBodies/Shared`) {
		t.Errorf("no shared entry: %.300s", in)
	}
	cs := serveTools(t, tools)
	for _, b := range []map[string]any{{"note": nil}, {"opts": map[string]any{}}, {"p0": "x"}} {
		if res := call(t, cs, "op0", map[string]any{"body": b}); res.IsError {
			t.Errorf("%v refused: %s", b, clipText(text(res)))
			continue
		}
		want, _ := json.Marshal(b)
		if reqs := backend.requests(); len(reqs) != 1 || reqs[0].body != string(want) {
			t.Errorf("sent %s, the API received %+v", want, reqs)
		}
	}
}

// TestAttack38cSharedAtLimit: a shared schema whose conversion is
// exactly 512 bytes stays inline, one of 513 bytes is a $defs entry, as
// the docs say ("512 bytes or less").
func TestAttack38cSharedAtLimit(t *testing.T) {
	for _, n := range []int{512, 513} {
		// {"description":"...","type":"string"} is 34 bytes and the text.
		body := `{"type":"string","description":"` + strings.Repeat("d", n-34) + `"}`
		tools := sharedTools(t, sharedDoc(2, body, "", `"Unused":{"type":"string"}`), &openapi.Options{Handler: &api{}})
		in, _ := json.Marshal(tools[0].InputSchema)
		if shared := strings.Contains(string(in), `"$defs"`); shared != (n > 512) {
			t.Errorf("%d bytes: shared entry %v: %.200s", n, shared, in)
		}
	}
}

// TestAttack38cSharedOneOfTrimmed: a shared body, a oneOf of two long
// components that the limit leaves as {}: the oneOf, in the $defs entry,
// becomes an anyOf, so that a valid call is not refused for matching
// both.
func TestAttack38cSharedOneOfTrimmed(t *testing.T) {
	body := `{"type":"object","required":["pet"],"properties":{"pet":{"oneOf":[{"$ref":"#/components/schemas/Cat"},{"$ref":"#/components/schemas/Dog"}]},` + described("p", 10) + `}}`
	comps := `"Cat":{"type":"object","properties":{"cat":{"$ref":"#/components/schemas/Big"}}},"Dog":{"type":"object","properties":{"dog":{"$ref":"#/components/schemas/Big"}}},` +
		`"Big":{"type":"object","properties":{` + described("b", 60) + `}}`
	backend := &api{}
	var notes []string
	tools := sharedTools(t, sharedDoc(2, body, "", comps), &openapi.Options{Handler: backend, MaxInputSchemaBytes: 1500,
		OnDegrade: func(_ *openapi.Operation, err error) { notes = append(notes, err.Error()) }})
	in, _ := json.Marshal(tools[0].InputSchema)
	if !strings.Contains(string(in), `"$defs":{"/components/requestBodies/Shared`) || len(in) > 1500 {
		t.Errorf("%d bytes, no shared entry: %.300s", len(in), in)
	}
	cs := serveTools(t, tools)
	b := map[string]any{"pet": map[string]any{"cat": map[string]any{"b0": "x"}}}
	if res := call(t, cs, "op0", map[string]any{"body": b}); res.IsError {
		t.Errorf("a valid cat refused (%q): %s\n%s", notes, clipText(text(res)), in)
	}
}

// TestAttack38cTrimmedBodyThroughMountEras: a shared body trimmed to {}
// (any value) by the limit, and one kept whole, in tools renamed by
// transform.Namespace on a child server mounted under a parent, called
// through an SDK client on both protocol eras (in memory on 2025-11-25,
// stateless HTTP on 2026-07-28), directly and through Discovery's
// call_tool: the API receives exactly the body sent.
func TestAttack38cTrimmedBodyThroughMountEras(t *testing.T) {
	body := `{"type":"object","required":["p0"],"properties":{"n":{"type":"array","items":{"type":"number"}},` + described("p", 20) + `}}`
	backend := &api{}
	for _, limit := range []int{300, 0} {
		var notes []string
		tools := sharedTools(t, sharedDoc(3, body, "", `"Unused":{"type":"string"}`), &openapi.Options{Handler: backend, MaxInputSchemaBytes: limit,
			OnDegrade: func(_ *openapi.Operation, err error) { notes = append(notes, err.Error()) }})
		if limit > 0 && len(notes) == 0 {
			t.Fatalf("limit %d: nothing trimmed", limit)
		}
		eras := []struct {
			name  string
			serve func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
		}{{mcpkittest.StatefulVersion, mcpkittest.NewInMemoryServer}, {mcpkittest.StatelessVersion, mcpkittest.NewStatelessServer}}
		for _, era := range eras {
			t.Run(fmt.Sprintf("%s/limit %d", era.name, limit), func(t *testing.T) {
				child := mcpkit.NewServer(&mcp.Implementation{Name: "api"}, nil)
				if err := child.Add(tools...); err != nil {
					t.Fatal(err)
				}
				if err := child.Transform(transform.Namespace("shop", "_")); err != nil {
					t.Fatal(err)
				}
				parent := mcpkit.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
				if _, err := parent.Mount("gw", child); err != nil {
					t.Fatal(err)
				}
				if err := transform.Discovery(parent, nil); err != nil {
					t.Fatal(err)
				}
				cs := era.serve(t, parent, &mcpkittest.Options{ProtocolVersion: era.name}).Session
				// Discovery lists its own tools only; the others are called by name.
				const name = "gw_shop_op1"
				if res := call(t, cs, transform.DescribeToolName, map[string]any{"name": name}); res.IsError || naiveRefs(t, json.RawMessage(describedSchema(t, text(res)))) != nil {
					t.Errorf("describe_tool %s: %s", name, clipText(text(res)))
				}
				sent := map[string]any{"p0": "x", "p19": "y", "n": []any{1.5, 2}}
				args := map[string]any{"body": sent}
				if res := call(t, cs, name, args); res.IsError {
					t.Fatalf("%s: %s", name, clipText(text(res)))
				}
				if res := call(t, cs, transform.CallToolName, map[string]any{"name": name, "arguments": args}); res.IsError {
					t.Fatalf("call_tool %s: %s", name, clipText(text(res)))
				}
				const want = `{"n":[1.5,2],"p0":"x","p19":"y"}`
				reqs := backend.requests()
				if len(reqs) != 2 || reqs[0].body != want || reqs[1].body != want || reqs[0].path != "/o1" {
					t.Errorf("the API received %+v, want %s twice", reqs, want)
				}
				res := call(t, cs, name, map[string]any{"body": map[string]any{"p0": 1}})
				if refused := res.IsError; refused != (limit == 0) {
					t.Errorf("a body with p0 a number: refused %v (notes %q)", refused, notes)
				}
				backend.requests()
			})
		}
	}
}

// TestAttack38cSharedParameterRequiredDiffers: the schema of a shared
// parameter (components/parameters Filter, optional) is also the schema
// of another operation's own required parameter, by a $ref to it: both
// name the same $defs entry, and each operation keeps its own required.
func TestAttack38cSharedParameterRequiredDiffers(t *testing.T) {
	filter := `{"type":"object","properties":{` + described("f", 12) + `}}`
	spec := `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{
	"/a":{"get":{"operationId":"a","parameters":[{"$ref":"#/components/parameters/Filter"}],"responses":{"204":{"description":"x"}}}},
	"/b":{"get":{"operationId":"b","parameters":[{"name":"filter","in":"query","required":true,"content":{"application/json":{"schema":{"$ref":"#/components/parameters/Filter/content/application~1json/schema"}}}}],"responses":{"204":{"description":"x"}}}},
	"/c":{"get":{"operationId":"c","parameters":[{"$ref":"#/components/parameters/Filter"}],"responses":{"204":{"description":"x"}}}}},
	"components":{"parameters":{"Filter":{"name":"filter","in":"query","content":{"application/json":{"schema":` + filter + `}}}}}}`
	backend := &api{}
	tools := sharedTools(t, spec, &openapi.Options{Handler: backend})
	for _, tl := range tools {
		in, _ := json.Marshal(tl.InputSchema)
		if bad := naiveRefs(t, in); len(bad) > 0 || !strings.Contains(string(in), `"/components/parameters/Filter/content/application~1json/schema"`) {
			t.Errorf("%s: %q unresolved in %.300s", tl.Name, bad, in)
		}
	}
	cs := serveTools(t, tools)
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		refused bool
	}{
		{"a", map[string]any{}, false},
		{"b", map[string]any{}, true},
		{"b", map[string]any{"filter": map[string]any{"f1": "x"}}, false},
		{"b", map[string]any{"filter": map[string]any{"f1": 1}}, true},
		{"c", map[string]any{"filter": map[string]any{"f1": 1}}, true},
	} {
		if res := call(t, cs, tc.tool, tc.args); res.IsError != tc.refused {
			t.Errorf("%s %v: refused %v: %s", tc.tool, tc.args, res.IsError, clipText(text(res)))
		}
	}
	if reqs := backend.requests(); len(reqs) != 2 || reqs[1].query != "filter="+url.QueryEscape(`{"f1":"x"}`) {
		t.Errorf("the API received %+v", reqs)
	}
}

// describedSchema returns the input schema in describe_tool's answer.
func describedSchema(t *testing.T, answer string) string {
	t.Helper()
	var d struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte(answer), &d); err != nil || len(d.InputSchema) == 0 {
		t.Fatalf("describe_tool answered %s", clipText(answer))
	}
	return string(d.InputSchema)
}

// TestAttack38cLimitEscapedNames: a shared body under a media type whose
// parameter holds characters that JSON escapes ("<" is written \u003c):
// the entry's name, a key of $defs, is longer in the schema than as a Go
// string. The limit is met where trimming can meet it (descriptions left
// out: 1,681 bytes), and OnDegrade does not say that the operation's own
// schema passed it. Was: fit measured names unescaped, found the whole
// schema (2,751 bytes) within limits up to 2,700 and served it past them,
// with a note blaming the operation's own schema.
func TestAttack38cLimitEscapedNames(t *testing.T) {
	body := `{"type":"object","properties":{` + described("p", 20) + `}}`
	media := `application/json; p=\"` + strings.Repeat("<", 100) + `\"`
	spec := strings.Replace(sharedDoc(2, body, "", `"Unused":{"type":"string"}`), `"application/json":{"schema":`, `"`+media+`":{"schema":`, 1)
	for _, limit := range []int{1800, 2300, 2700} {
		var notes []string
		tools := sharedTools(t, spec, &openapi.Options{Handler: &api{}, MaxInputSchemaBytes: limit,
			OnDegrade: func(_ *openapi.Operation, err error) { notes = append(notes, err.Error()) }})
		in, _ := json.Marshal(tools[0].InputSchema)
		if !strings.Contains(string(in), `\u003c`) {
			t.Fatalf("the name is not escaped: %.300s", in)
		}
		if len(in) > limit || strings.Contains(strings.Join(notes, "\n"), "past") {
			t.Errorf("limit %d: %d bytes; notes %q", limit, len(in), notes)
		}
	}
}

// auditSink keeps the records an Audit writes.
type auditSink struct {
	mu   sync.Mutex
	recs []*middleware.AuditRecord
}

func (s *auditSink) WriteAudit(_ context.Context, rec *middleware.AuditRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, rec)
	return nil
}

// TestAttack38cAuditRedactsSharedBody: a shared body with a writeOnly
// password, under "application/json; charset=utf-8" (a space in the
// entry's name, %20 in its $ref) and under application/json (no escape):
// middleware.Audit, which redacts what the input schema marks writeOnly,
// records the password as "[redacted]" in both (Audit's planner
// percent-decodes a $ref's fragment, and redacts whole a value whose $ref
// it cannot follow).
func TestAttack38cAuditRedactsSharedBody(t *testing.T) {
	body := `{"type":"object","properties":{"password":{"type":"string","writeOnly":true},` + described("p", 10) + `}}`
	for _, media := range []string{"application/json", "application/json; charset=utf-8"} {
		t.Run(media, func(t *testing.T) {
			spec := strings.Replace(sharedDoc(1, body, "", `"Unused":{"type":"string"}`), `"application/json":{"schema":`, `"`+media+`":{"schema":`, 1)
			tools := sharedTools(t, spec, &openapi.Options{Handler: &api{}})
			in, _ := json.Marshal(tools[0].InputSchema)
			if !strings.Contains(string(in), `"$defs":{"/components/requestBodies/Shared`) {
				t.Fatalf("no shared entry: %.300s", in)
			}
			sink := &auditSink{}
			audit := middleware.NewAudit(sink, nil)
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "audited"}, nil)
			srv.Observe(audit)
			if err := srv.Add(tools...); err != nil {
				t.Fatal(err)
			}
			cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
			if res := call(t, cs, "op0", map[string]any{"body": map[string]any{"password": "hunter2", "p0": "x"}}); res.IsError {
				t.Fatalf("op0: %s", clipText(text(res)))
			}
			if err := audit.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			sink.mu.Lock()
			defer sink.mu.Unlock()
			found := false
			for _, r := range sink.recs {
				if strings.Contains(string(r.Arguments), "hunter2") {
					t.Errorf("the audit recorded the password: %s", r.Arguments)
				}
				found = found || strings.Contains(string(r.Arguments), `"p0":"x"`)
			}
			if !found {
				t.Errorf("no record of the call among %d", len(sink.recs))
			}
		})
	}
}

// TestAttack38cPathItemSharedByPaths (held): an OpenAPI 3.1 path item,
// with a long query parameter and body written inline, that three paths
// refer to with a $ref: the tools share one $defs entry per schema, each
// request goes to its own path with its own id (escaped), and the body
// and the query reach the API as sent.
func TestAttack38cPathItemSharedByPaths(t *testing.T) {
	big := `{"type":"object","required":["p0"],"properties":{` + described("p", 12) + `}}`
	spec := `{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":{
	"/users/{id}":{"$ref":"#/components/pathItems/P"},
	"/groups/{id}":{"$ref":"#/components/pathItems/P"},
	"/teams/{id}":{"$ref":"#/components/pathItems/P"}},
	"components":{"pathItems":{"P":{"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}},{"name":"filter","in":"query","content":{"application/json":{"schema":` + big + `}}}],
	"put":{"requestBody":{"required":true,"content":{"application/json":{"schema":` + big + `}}},"responses":{"204":{"description":"x"}}}}}}}`
	backend := &api{}
	tools := sharedTools(t, spec, &openapi.Options{Handler: backend})
	if len(tools) != 3 {
		t.Fatalf("%d tools", len(tools))
	}
	cs := serveTools(t, tools)
	for _, tl := range tools {
		in, _ := json.Marshal(tl.InputSchema)
		if bad := naiveRefs(t, in); len(bad) > 0 || !strings.Contains(string(in), `"/components/pathItems/P/put/requestBody/content/application~1json/schema"`) {
			t.Errorf("%s: %q unresolved, or no shared body, in %.400s", tl.Name, bad, in)
		}
		args := map[string]any{"id": "a/b c", "filter": map[string]any{"p0": "f"}, "body": map[string]any{"p0": "x", "p11": "y"}}
		if res := call(t, cs, tl.Name, args); res.IsError {
			t.Errorf("%s: %s", tl.Name, clipText(text(res)))
			continue
		}
		var meta struct{ Path string }
		if m, _ := json.Marshal(tl.Meta[openapi.MetaKeyOperation]); json.Unmarshal(m, &meta) != nil || meta.Path == "" {
			t.Fatalf("%s: no operation meta: %v", tl.Name, tl.Meta)
		}
		want := strings.Replace(meta.Path, "{id}", "a/b c", 1)
		reqs := backend.requests()
		if len(reqs) != 1 || reqs[0].path != want || reqs[0].body != `{"p0":"x","p11":"y"}` || reqs[0].query != "filter="+url.QueryEscape(`{"p0":"f"}`) {
			t.Errorf("%s: the API received %+v, want the path %s", tl.Name, reqs, want)
		}
		if res := call(t, cs, tl.Name, map[string]any{"id": "1", "body": map[string]any{"p1": "x"}}); !res.IsError {
			t.Errorf("%s: a body without p0 was sent", tl.Name)
		}
		backend.requests()
	}
}

// TestAttack38cPathItemRefToPath: OpenAPI 3.1 lets a path item be a $ref
// to any path item, another path's included: "/teams/{id}" as
// "#/paths/~1users~1{id}", itself a $ref to components/pathItems/P. The
// parser leaves such an item (a $ref to a $ref) empty, and its
// operations are dropped unheard: neither a tool nor a word to OnSkip.
// (Load builds operations from what the parser resolved; one $ref to a
// path written out is resolved.) Load now follows the chain of $refs
// between paths itself.
func TestAttack38cPathItemRefToPath(t *testing.T) {
	spec := `{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":{
	"/users/{id}":{"$ref":"#/components/pathItems/P"},
	"/teams/{id}":{"$ref":"#/paths/~1users~1%7Bid%7D"}},
	"components":{"pathItems":{"P":{"put":{"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"204":{"description":"x"}}}}}}}`
	var skipped []error
	tools := sharedTools(t, spec, &openapi.Options{Handler: &api{}, OnSkip: func(_ *openapi.Operation, err error) { skipped = append(skipped, err) }})
	if len(tools)+len(skipped) != 2 {
		names := []string{}
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		t.Errorf("tools %q, OnSkip heard %v: PUT /teams/{id} is neither", names, skipped)
	}
}

// TestAttack38cRecursiveSharedEntry (held): a shared body that is a tree
// (its children are $refs to its own place in the document), under a
// media type with a space, so that its $ref is percent-encoded: listed
// plain, through middleware.Deref (which keeps the cycle under $defs),
// and rewritten by transform.Portable for Gemini (written out a few
// levels) and OpenAI's strict mode (kept as a $ref), every $ref resolves
// for a naive client and a tree two levels deep reaches the API as sent.
func TestAttack38cRecursiveSharedEntry(t *testing.T) {
	const media = "application/json; charset=utf-8"
	body := `{"type":"object","required":["name"],"description":"` + strings.Repeat("a tree of names. ", 30) + `","properties":{"name":{"type":"string"},` +
		`"children":{"type":"array","items":{"$ref":"#/components/requestBodies/Shared/content/application~1json;%20charset=utf-8/schema"}}}}`
	spec := strings.Replace(sharedDoc(1, body, "", `"Unused":{"type":"string"}`), `"application/json":{"schema":`, `"`+media+`":{"schema":`, 1)
	backend := &api{}
	tools := sharedTools(t, spec, &openapi.Options{Handler: backend})
	in, _ := json.Marshal(tools[0].InputSchema)
	if !strings.Contains(string(in), `%20charset`) {
		t.Fatalf("no percent-encoded shared entry: %.300s", in)
	}
	tree := map[string]any{"name": "a", "children": []any{map[string]any{"name": "b", "children": []any{map[string]any{"name": "c"}}}}}
	strict := map[string]any{"name": "a", "children": []any{map[string]any{"name": "b", "children": []any{map[string]any{"name": "c", "children": nil}}}}}
	for _, setup := range []struct {
		name string
		add  func(*mcpkit.Server) error
		args map[string]any
	}{
		{"plain", func(*mcpkit.Server) error { return nil }, tree},
		{"deref", func(s *mcpkit.Server) error { s.UseList(middleware.Deref(nil)); return nil }, tree},
		{"gemini", func(s *mcpkit.Server) error { return s.Transform(transform.Portable(transform.Gemini, nil)) }, tree},
		{"openai", func(s *mcpkit.Server) error { return s.Transform(transform.Portable(transform.OpenAIStrict, nil)) }, strict},
	} {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "tree"}, nil)
		if err := srv.Add(tools...); err != nil {
			t.Fatal(err)
		}
		if err := setup.add(srv); err != nil {
			t.Errorf("%s: %v", setup.name, err)
			continue
		}
		cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		listed, _ := json.Marshal(list.Tools[0].InputSchema)
		if bad := naiveRefs(t, listed); len(bad) > 0 {
			t.Errorf("%s: a naive client cannot resolve %q in %.400s", setup.name, bad, listed)
		}
		if res := call(t, cs, "op0", map[string]any{"body": setup.args}); res.IsError {
			t.Errorf("%s: %s", setup.name, clipText(text(res)))
			continue
		}
		const want = `{"children":[{"children":[{"name":"c"}],"name":"b"}],"name":"a"}`
		if reqs := backend.requests(); len(reqs) != 1 || reqs[0].body != want {
			t.Errorf("%s: the API received %+v, want %s", setup.name, reqs, want)
		}
	}
}

// TestAttack38cRealSharedResponsesEras (held): DigitalOcean's five
// operations whose answers are shared responses written inline
// (components/responses), trimmed at 600 bytes, served by a child server
// renamed by transform.Namespace and mounted under a parent whose
// tools/list goes through middleware.Deref, on both protocol eras: each
// listed output schema has no $ref left, and databases_list_backups
// returns the API's answer as its structured content, unchanged.
func TestAttack38cRealSharedResponsesEras(t *testing.T) {
	const answer = `{"backups":[{"created_at":"2019-01-31T19:25:22Z","size_gigabytes":0.03357696}]}`
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, answer }}
	ids := []string{"apps_validate_rollback", "billingInsights_list", "databases_list_backups", "dedicatedInferences_list", "droplets_list_associatedResources"}
	tools, err := realDoc(t, doDoc).Tools(&openapi.Options{Handler: backend, OperationIDs: ids, MaxOutputSchemaBytes: 600})
	if err != nil || len(tools) != len(ids) {
		t.Fatalf("%d tools: %v", len(tools), err)
	}
	for _, tl := range tools {
		out, _ := json.Marshal(tl.OutputSchema)
		if !strings.Contains(string(out), `"$defs":{"/components/responses/`) || len(out) > 600 {
			t.Errorf("%s: %d bytes, no shared entry: %.300s", tl.Name, len(out), out)
		}
	}
	eras := []struct {
		name  string
		serve func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server
	}{{mcpkittest.StatefulVersion, mcpkittest.NewInMemoryServer}, {mcpkittest.StatelessVersion, mcpkittest.NewStatelessServer}}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			child := mcpkit.NewServer(&mcp.Implementation{Name: "do"}, nil)
			if err := child.Add(tools...); err != nil {
				t.Fatal(err)
			}
			if err := child.Transform(transform.Namespace("v2", "_")); err != nil {
				t.Fatal(err)
			}
			parent := mcpkit.NewServer(&mcp.Implementation{Name: "gateway"}, nil)
			if _, err := parent.Mount("do", child); err != nil {
				t.Fatal(err)
			}
			parent.UseList(middleware.Deref(nil))
			cs := era.serve(t, parent, &mcpkittest.Options{ProtocolVersion: era.name}).Session
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			for _, tl := range list.Tools {
				out, _ := json.Marshal(tl.OutputSchema)
				if hasRef(out) {
					t.Errorf("%s: a $ref left after Deref: %.300s", tl.Name, out)
				}
				if strings.HasSuffix(tl.Name, "databases_list_backups") {
					name = tl.Name
				}
			}
			if len(list.Tools) != len(ids) || name == "" {
				t.Fatalf("%d tools listed, none ending in databases_list_backups", len(list.Tools))
			}
			res := call(t, cs, name, map[string]any{"database_cluster_uuid": "9cc10173-e9ea-4176-9dbc-a4cee4c4ff30"})
			if res.IsError {
				t.Fatalf("%s: %s", name, clipText(text(res)))
			}
			got, _ := json.Marshal(res.StructuredContent)
			if string(got) != answer {
				t.Errorf("structured content %s, want %s", got, answer)
			}
			if reqs := backend.requests(); len(reqs) != 1 || reqs[0].path != "/v2/databases/9cc10173-e9ea-4176-9dbc-a4cee4c4ff30/backups" {
				t.Errorf("the API received %+v", reqs)
			}
		})
	}
}

// TestAttack38cSharedFormBody (held): a shared form body, long enough to
// be a $defs entry and trimmed to {} by the limit, with a nested object
// sent in the deepObject style by its encoding: the API receives the
// same form whether the entry is whole or trimmed.
func TestAttack38cSharedFormBody(t *testing.T) {
	body := `{"type":"object","properties":{"address":{"type":"object","properties":{"city":{"type":"string"}}},"tags":{"type":"array","items":{"type":"string"}},` + described("p", 12) + `}}`
	spec := strings.Replace(sharedDoc(2, body, "", `"Unused":{"type":"string"}`), `"application/json":{"schema":`+body+`}`,
		`"application/x-www-form-urlencoded":{"schema":`+body+`,"encoding":{"address":{"style":"deepObject","explode":true}}}`, 1)
	for _, limit := range []int{0, 200} {
		backend := &api{}
		tools := sharedTools(t, spec, &openapi.Options{Handler: backend, MaxInputSchemaBytes: limit})
		in, _ := json.Marshal(tools[0].InputSchema)
		if !strings.Contains(string(in), `"$defs":{"/components/requestBodies/Shared/content/application~1x-www-form-urlencoded/schema"`) {
			t.Fatalf("limit %d: no shared entry: %.300s", limit, in)
		}
		cs := serveTools(t, tools)
		args := map[string]any{"body": map[string]any{"address": map[string]any{"city": "Paris"}, "tags": []any{"a", "b"}, "p0": "x"}}
		if res := call(t, cs, "op0", args); res.IsError {
			t.Fatalf("limit %d: %s", limit, clipText(text(res)))
		}
		const want = "address%5Bcity%5D=Paris&p0=x&tags=a&tags=b"
		if reqs := backend.requests(); len(reqs) != 1 || reqs[0].body != want {
			t.Errorf("limit %d: the API received %+v, want %s", limit, reqs, want)
		}
	}
}

// TestAttack38cCheckPortablePercentRef: transform.CheckPortable for
// OpenAI's strict mode takes a tool whose shared body is under
// "application/json" as it is, and should take the same tool with the body
// under "application/json; charset=utf-8" too. Fails: the check matches
// "#/$defs/<name>" without percent-decoding the fragment, and reports the
// %20 in the name as a $ref to no definition (internal/portable, outside
// this module; transform.Portable itself renames the entries and holds).
func TestAttack38cCheckPortablePercentRef(t *testing.T) {
	body := `{"type":"object","required":["name"],"additionalProperties":false,"properties":{"name":{"type":"string","description":"` + strings.Repeat("a name ", 80) + `"}}}`
	for _, media := range []string{"application/json", "application/json; charset=utf-8"} {
		spec := strings.Replace(sharedDoc(1, body, "", `"Unused":{"type":"string"}`), `"application/json":{"schema":`, `"`+media+`":{"schema":`, 1)
		tools := sharedTools(t, spec, &openapi.Options{Handler: &api{}, NoOutputSchema: true})
		if problems := transform.CheckPortable(transform.OpenAIStrict, &tools[0].Tool); len(problems) > 0 {
			t.Errorf("%s: %v", media, problems)
		}
	}
}

// TestAttack38cLoosenPastLimit: a shared body whose pet is a oneOf of two
// components beside an anyOf; at a limit that stubs what the components
// reach, loosen turns the oneOf into an anyOf and moves the anyOf into an
// allOf, a few bytes longer. The schema keeps within every limit that a
// shorter trim could meet (261 bytes), and OnDegrade never says the
// operation's own schema passed it. Was: fit counted the schema before
// loosen, and from 652 to 673 bytes served 663 bytes, "past" the limit.
func TestAttack38cLoosenPastLimit(t *testing.T) {
	body := `{"type":"object","properties":{"pet":{"anyOf":[{"required":["a"]},{"required":["b"]}],"oneOf":[{"$ref":"#/components/schemas/Cat"},{"$ref":"#/components/schemas/Dog"}]},` + described("p", 10) + `}}`
	comps := `"Cat":{"type":"object","properties":{"cat":{"$ref":"#/components/schemas/Big"}}},"Dog":{"type":"object","properties":{"dog":{"$ref":"#/components/schemas/Big"}}},` +
		`"Big":{"type":"object","properties":{` + described("b", 30) + `}}`
	doc, err := openapi.Load([]byte(sharedDoc(1, body, "", comps)))
	if err != nil {
		t.Fatal(err)
	}
	for limit := 640; limit < 690; limit++ {
		var notes []string
		tools, err := doc.Tools(&openapi.Options{Handler: &api{}, NoOutputSchema: true, MaxInputSchemaBytes: limit,
			OnDegrade: func(_ *openapi.Operation, err error) { notes = append(notes, err.Error()) }})
		if err != nil {
			t.Fatal(err)
		}
		in, _ := json.Marshal(tools[0].InputSchema)
		if len(in) > limit || strings.Contains(strings.Join(notes, "\n"), "past") {
			t.Errorf("limit %d: %d bytes; notes %q", limit, len(in), notes)
		}
	}
}
