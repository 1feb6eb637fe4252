package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

const sharedDefsSchema = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {"type": "object", "properties": {"street": {"type": "string"}, "title": {"type": "string"}},
			"additionalProperties": false}
	},
	"properties": {
		"home": {"$ref": "#/$defs/address"},
		"work": {"$ref": "#/$defs/address", "description": "Where they work."},
		"title": {"type": "string", "x-mcp-header": "Title"}
	},
	"additionalProperties": false
}`

const recursiveSchema = `{
	"type": "object",
	"$defs": {
		"node": {"type": "object", "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}},
		"label": {"type": "string", "maxLength": 10}
	},
	"properties": {"root": {"$ref": "#/$defs/node"}, "label": {"$ref": "#/$defs/label"}}
}`

func rawTool(name, schema string) *mcpkit.Tool {
	return &mcpkit.Tool{
		Tool: mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}),
	}
}

func decode(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDerefEndToEnd(t *testing.T) {
	for _, connect := range []func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server{
		mcpkittest.NewServer, mcpkittest.NewStatelessServer,
	} {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "deref"}, nil)
		verbatim := rawTool("verbatim", sharedDefsSchema)
		verbatim.Tags = []string{"keep-refs"}
		if err := srv.Add(rawTool("shared", sharedDefsSchema), rawTool("recursive", recursiveSchema), verbatim); err != nil {
			t.Fatal(err)
		}
		srv.UseList(middleware.Deref(&middleware.DerefOptions{
			Skip: func(t *mcpkit.Tool) bool { return t.HasTag("keep-refs") },
		}))
		ts := connect(t, srv, nil)
		res, err := ts.Session.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]map[string]any{}
		for _, tl := range res.Tools {
			got[tl.Name] = decode(t, tl.InputSchema)
		}

		shared := got["shared"]
		if strings.Contains(mustJSON(t, shared), `"$ref"`) || shared["$defs"] != nil {
			t.Errorf("shared: references remain: %s", mustJSON(t, shared))
		}
		props := shared["properties"].(map[string]any)
		home := props["home"].(map[string]any)
		if home["type"] != "object" || home["additionalProperties"] != false || home["properties"].(map[string]any)["title"] == nil {
			t.Errorf("shared: home not inlined faithfully: %v", home)
		}
		if work := props["work"].(map[string]any); work["description"] != "Where they work." {
			t.Errorf("shared: sibling description lost: %v", work)
		}
		if shared["$schema"] != "https://json-schema.org/draft/2020-12/schema" || shared["additionalProperties"] != false ||
			props["title"].(map[string]any)["x-mcp-header"] != "Title" {
			t.Errorf("shared: keywords not preserved: %s", mustJSON(t, shared))
		}

		rec := mustJSON(t, got["recursive"])
		if !strings.Contains(rec, `"#/$defs/node"`) || strings.Contains(rec, `"#/$defs/label"`) || strings.Contains(rec, `"label":{"maxLength"`) == false {
			t.Errorf("recursive: want only the cycle kept under $defs, got %s", rec)
		}

		var want map[string]any
		json.Unmarshal([]byte(sharedDefsSchema), &want)
		if !reflect.DeepEqual(got["verbatim"], want) {
			t.Errorf("skipped tool not verbatim: %s", mustJSON(t, got["verbatim"]))
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDerefCachesAndNeverMutates(t *testing.T) {
	original := json.RawMessage(sharedDefsSchema)
	before := bytes.Clone(original)
	tools := []*mcpkit.Tool{rawTool("a", sharedDefsSchema), rawTool("b", `{"type":"object"}`)}
	tools[0].InputSchema = original
	rewrites := 0
	lister := middleware.Deref(&middleware.DerefOptions{Skip: func(*mcpkit.Tool) bool { rewrites++; return false }})(
		mcpkit.ListerFunc(func(context.Context, *mcpkit.ListRequest) ([]*mcpkit.Tool, error) { return tools, nil }))

	first, err := lister.ServeList(t.Context(), &mcpkit.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, _ := lister.ServeList(t.Context(), &mcpkit.ListRequest{})
		if &again[0] != &first[0] {
			t.Fatal("an unchanged list was rewritten again")
		}
	}
	if rewrites != 2 {
		t.Errorf("schemas rewritten %d times for 2 tools over 6 lists", rewrites)
	}
	if first[1] != tools[1] {
		t.Error("a tool without references was copied")
	}
	if first[0] == tools[0] || strings.Contains(string(first[0].InputSchema.(json.RawMessage)), "$ref") {
		t.Error("a tool with references was not rewritten")
	}
	if !bytes.Equal(original, before) || !reflect.DeepEqual(tools[0].InputSchema, original) {
		t.Error("the registered schema changed")
	}

	// A new list (a tool added) reuses the rewrites of the tools it keeps.
	tools = append(tools[:2:2], rawTool("c", `{"type":"object"}`))
	third, _ := lister.ServeList(t.Context(), &mcpkit.ListRequest{})
	if len(third) != 3 || third[0] != first[0] || rewrites != 3 {
		t.Errorf("after an Add: %d tools, reused=%v, %d rewrites", len(third), third[0] == first[0], rewrites)
	}
}

func TestDerefKeepsBrokenSchemas(t *testing.T) {
	var logs bytes.Buffer
	broken := rawTool("broken", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`)
	lister := middleware.Deref(&middleware.DerefOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})(
		mcpkit.ListerFunc(func(context.Context, *mcpkit.ListRequest) ([]*mcpkit.Tool, error) {
			return []*mcpkit.Tool{broken}, nil
		}))
	got, err := lister.ServeList(t.Context(), &mcpkit.ListRequest{})
	if err != nil || got[0] != broken {
		t.Fatalf("broken schema: %v, %v", got, err)
	}
	if !strings.Contains(logs.String(), "broken") {
		t.Errorf("no warning logged: %s", logs.String())
	}
}
