package openapi_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/openapi"
)

// bigObject is an inline object schema of n string properties, each
// described: about 60 bytes a property once converted.
func bigObject(n int) string {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"type":"string","description":"property %d of a shared schema"}`, i, i)
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
}

// TestSharedInlineSchemas: a schema written inline in a component that
// operations share (a request body, a parameter by its schema or its
// content, a response), in a path item's parameter, or in a path item
// that paths share with a $ref (OpenAPI 3.1) becomes one $defs entry, named by where it is in the document, which the size limits trim
// as they trim component schemas: every tool of the document keeps within
// the limit, where each carried a copy that was never cut. The server
// validates what it advertises: the entry trimmed to {} accepts a value
// the whole one refuses. A short shared schema (a page size) stays
// inline.
func TestSharedInlineSchemas(t *testing.T) {
	const limit = 1000
	big := bigObject(100) // 6 KB converted
	page := `"Limit":{"name":"limit","in":"query","schema":{"type":"integer"}}`
	ops := func(n int, op string) string {
		paths := make([]string, n)
		for i := range paths {
			paths[i] = fmt.Sprintf(`"/o%d":{"post":%s}`, i, op)
		}
		return strings.Join(paths, ",")
	}
	limitRef := `{"$ref":"#/components/parameters/Limit"}`
	for _, tc := range []struct {
		name       string
		version    string // of OpenAPI, 3.0.3 if empty
		paths      string
		components string
		entry      string // the $defs entry of the shared schema
		output     bool
		arg        string // the argument it describes (input)
	}{{
		name:       "requestBodies",
		paths:      ops(20, `{"parameters":[`+limitRef+`],"requestBody":{"$ref":"#/components/requestBodies/Big"},"responses":{"204":{"description":"x"}}}`),
		components: `"requestBodies":{"Big":{"content":{"application/json":{"schema":` + big + `}}}},"parameters":{` + page + `}`,
		entry:      "/components/requestBodies/Big/content/application~1json/schema",
		arg:        "body",
	}, {
		name:       "parameters",
		paths:      ops(20, `{"parameters":[`+limitRef+`,{"$ref":"#/components/parameters/Filter"}],"responses":{"204":{"description":"x"}}}`),
		components: `"parameters":{` + page + `,"Filter":{"name":"filter","in":"query","schema":` + big + `}}`,
		entry:      "/components/parameters/Filter/schema",
		arg:        "filter",
	}, {
		name:       "parameters/content",
		paths:      ops(20, `{"parameters":[`+limitRef+`,{"$ref":"#/components/parameters/Filter"}],"responses":{"204":{"description":"x"}}}`),
		components: `"parameters":{` + page + `,"Filter":{"name":"filter","in":"query","content":{"application/json":{"schema":` + big + `}}}}`,
		entry:      "/components/parameters/Filter/content/application~1json/schema",
		arg:        "filter",
	}, {
		name: "path item parameters",
		paths: `"/items/{id}":{"parameters":[` + limitRef + `,{"name":"filter","in":"query","schema":` + big + `},{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],` +
			`"get":{"responses":{"204":{"description":"x"}}},"put":{"responses":{"204":{"description":"x"}}},"post":{"responses":{"204":{"description":"x"}}},` +
			`"patch":{"responses":{"204":{"description":"x"}}},"delete":{"responses":{"204":{"description":"x"}}}}`,
		components: `"parameters":{` + page + `}`,
		entry:      "/paths/~1items~1{id}/parameters/1/schema",
		arg:        "filter",
	}, {
		name:       "path items",
		version:    "3.1.0",
		paths:      strings.ReplaceAll(ops(20, `{}`), `"post":{}`, `"$ref":"#/components/pathItems/P"`),
		components: `"pathItems":{"P":{"parameters":[` + limitRef + `],"post":{"requestBody":{"content":{"application/json":{"schema":` + big + `}}},"responses":{"204":{"description":"x"}}}}},"parameters":{` + page + `}`,
		entry:      "/components/pathItems/P/post/requestBody/content/application~1json/schema",
		arg:        "body",
	}, {
		name:       "responses",
		paths:      ops(20, `{"parameters":[`+limitRef+`],"responses":{"200":{"$ref":"#/components/responses/Big"}}}`),
		components: `"responses":{"Big":{"description":"x","content":{"application/json":{"schema":` + big + `}}}},"parameters":{` + page + `}`,
		entry:      "/components/responses/Big/content/application~1json/schema",
		output:     true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := `{"openapi":"` + cmp.Or(tc.version, "3.0.3") + `","info":{"title":"x","version":"1"},"paths":{` + tc.paths + `},"components":{` + tc.components + `}}`
			doc, err := openapi.Load([]byte(spec))
			if err != nil {
				t.Fatal(err)
			}
			// serve lists the tools fitted to max (-1: no limit) through a
			// client, and calls the first with a value that the whole
			// shared schema refuses, or has the API answer one: p0 is not
			// a string.
			serve := func(max int) (schemas []map[string]any, res *mcp.CallToolResult) {
				backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, `{"p0":1}` }}
				opts := &openapi.Options{Handler: backend}
				if tc.output {
					opts.MaxOutputSchemaBytes = max
				} else {
					opts.MaxInputSchemaBytes, opts.NoOutputSchema = max, true
				}
				tools, err := doc.Tools(opts)
				if err != nil {
					t.Fatal(err)
				}
				srv := mcpkit.NewServer(&mcp.Implementation{Name: "shared"}, nil)
				if err := srv.Add(tools...); err != nil {
					t.Fatal(err)
				}
				cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
				list, err := cs.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, tool := range list.Tools {
					s := tool.InputSchema
					if tc.output {
						s = tool.OutputSchema
					}
					data, _ := json.Marshal(s)
					if max > 0 && len(data) > max {
						t.Errorf("%s: a schema of %d bytes, past the limit of %d", tool.Name, len(data), max)
					}
					var m map[string]any
					if err := json.Unmarshal(data, &m); err != nil {
						t.Fatal(err)
					}
					schemas = append(schemas, m)
				}
				args := map[string]any{"limit": 10}
				if strings.Contains(tc.paths, "{id}") {
					args["id"] = "x"
				}
				if !tc.output {
					args[tc.arg] = map[string]any{"p0": 1}
				}
				return schemas, call(t, cs, list.Tools[0].Name, args)
			}

			schemas, res := serve(-1)
			for _, s := range schemas {
				entry, ok := asObject(s["$defs"])[tc.entry]
				if !ok || len(asObject(asObject(entry)["properties"])) != 100 {
					t.Fatalf("$defs %.300v: want the shared schema whole, as %q", s["$defs"], tc.entry)
				}
				if got := asObject(asObject(s["properties"])["limit"])["type"]; !tc.output && got != "integer" {
					t.Errorf("the shared page size is %v, want it inline", asObject(s["properties"])["limit"])
				}
			}
			if !res.IsError || !strings.Contains(text(res), "p0") {
				t.Errorf("whole, p0 of 1 is not refused: %s", clipText(text(res)))
			}

			schemas, res = serve(limit)
			for _, s := range schemas {
				if entry, ok := asObject(s["$defs"])[tc.entry]; !ok || len(asObject(entry)) != 0 {
					t.Fatalf("$defs %.300v: want %q trimmed to {}", s["$defs"], tc.entry)
				}
			}
			if res.IsError {
				t.Errorf("trimmed to {}, p0 of 1 is refused: %s", clipText(text(res)))
			}
		})
	}
}

// TestSharedPathItemWithSiblings: a path item that is a $ref with an
// operation beside it, which replaces the one it points to, is not the
// shared one: its body is its own, and so is what the server checks.
func TestSharedPathItemWithSiblings(t *testing.T) {
	body := func(typ string) string {
		return `{"requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{"p0":{"type":"` + typ + `"}},"description":"` +
			strings.Repeat("a shared body. ", 50) + `"}}}},"responses":{"204":{"description":"x"}}}`
	}
	spec := `{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":{` +
		`"/a":{"$ref":"#/components/pathItems/P"},"/b":{"$ref":"#/components/pathItems/P","post":` + body("integer") + `}},` +
		`"components":{"pathItems":{"P":{"post":` + body("string") + `}}}}`
	cs, skipped := serveSpec(t, spec, &api{})
	if len(skipped) > 0 {
		t.Fatal(skipped)
	}
	for _, tc := range []struct {
		tool   string
		p0     any
		refuse bool
	}{
		{"post_a", "x", false}, {"post_a", 1, true},
		{"post_b", 1, false}, {"post_b", "x", true},
	} {
		if res := call(t, cs, tc.tool, map[string]any{"body": map[string]any{"p0": tc.p0}}); res.IsError != tc.refuse {
			t.Errorf("%s with p0 %v: isError %v: %s", tc.tool, tc.p0, res.IsError, clipText(text(res)))
		}
	}
	if in := listed(t, cs, "post_a", false); !strings.Contains(string(in), `"/components/pathItems/P/post/requestBody/content/application~1json/schema"`) {
		t.Errorf("post_a's input schema: %s", clipText(string(in)))
	}
}

func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// TestSharedResponseTrimmed: DigitalOcean's components/responses write
// their schemas inline (211 of 301); databases_list_backups answers
// database_backups, 1,433 bytes of output schema with its descriptions.
// The response's schema is the $defs entry named by where it is, and
// MaxOutputSchemaBytes trims it as it trims a component: at 600 bytes it
// keeps its own checks (backups is an array), and the backup component
// below it accepts any value, for the server as for the client. Before,
// the response's schema was copied whole into the root and never cut, and
// the output schema passed the limit.
func TestSharedResponseTrimmed(t *testing.T) {
	const entry = "/components/responses/database_backups/content/application~1json/schema"
	answer := ""
	backend := &api{answer: func(*http.Request, []byte) (int, string) { return http.StatusOK, answer }}
	args := map[string]any{"database_cluster_uuid": "9cc10173-e9ea-4176-9dbc-a4cee4c4ff30"}
	oddSize := `{"backups":[{"created_at":"2019-01-31T19:25:22Z","size_gigabytes":"0.03"}]}`

	cs, degraded := serveReal(t, doDoc, backend, &openapi.Options{MaxOutputSchemaBytes: 600}, "databases_list_backups")
	out := listed(t, cs, "databases_list_backups", true)
	var s map[string]any
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	defs := asObject(s["$defs"])
	if len(out) > 600 || len(asObject(defs[entry])) == 0 || len(asObject(defs["backup"])) != 0 {
		t.Errorf("listed output schema of %d bytes: %s", len(out), clipText(string(out)))
	}
	if len(degraded) != 1 || !strings.Contains(degraded[0].Error(), "accept any value") {
		t.Errorf("OnDegrade heard %v", degraded)
	}
	for _, tc := range []struct {
		answer string
		refuse bool
	}{
		{`{"backups":[{"created_at":"2019-01-31T19:25:22Z","size_gigabytes":0.03357696}]}`, false},
		{`{"backups":"none"}`, true}, // the response's own check holds
		{oddSize, false},             // the backup component is {}
	} {
		answer = tc.answer
		if res := call(t, cs, "databases_list_backups", args); res.IsError != tc.refuse {
			t.Errorf("answer %s: isError %v: %s", tc.answer, res.IsError, clipText(text(res)))
		}
	}

	cs, _ = serveReal(t, doDoc, backend, &openapi.Options{MaxOutputSchemaBytes: -1}, "databases_list_backups")
	answer = oddSize
	if res := call(t, cs, "databases_list_backups", args); !res.IsError || !strings.Contains(text(res), "size_gigabytes") {
		t.Errorf("whole, a size that is a string: %s", clipText(text(res)))
	}
}
