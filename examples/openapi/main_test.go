package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// connect serves the whole program (REST API and MCP) on a loopback port
// and connects an SDK client to its MCP endpoint over streamable HTTP.
func connect(t *testing.T) (*mcp.ClientSession, string) {
	t.Helper()
	h, err := newHandler(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ts.URL
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

func TestPetstoreTools(t *testing.T) {
	cs, base := connect(t)

	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"addPet", "getPetById", "findPetsByStatus", "getInventory", "placeOrder"} {
		if !slices.Contains(names, want) {
			t.Errorf("no tool %q in %v", want, names)
		}
	}
	if slices.Contains(names, "loginUser") {
		t.Errorf("the user operations are served, but only the pet and store tags were selected")
	}

	// Add a pet through MCP; the REST API has it.
	res := call(t, cs, "addPet", map[string]any{"body": map[string]any{"name": "Kit", "photoUrls": []string{}, "status": "available"}})
	if res.IsError {
		t.Fatalf("addPet: %s", text(res))
	}
	var added struct{ ID int64 }
	if err := json.Unmarshal([]byte(text(res)), &added); err != nil || added.ID == 0 {
		t.Fatalf("addPet answered %q", text(res))
	}
	resp, err := http.Get(base + "/api/v3/pet/" + jsonNumber(added.ID))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"name":"Kit"`) {
		t.Errorf("REST GET of the new pet: %d %s", resp.StatusCode, body)
	}

	res = call(t, cs, "getPetById", map[string]any{"petId": added.ID})
	if sc, _ := res.StructuredContent.(map[string]any); res.IsError || sc["name"] != "Kit" {
		t.Errorf("getPetById: isError %v %v", res.IsError, res.StructuredContent)
	}

	res = call(t, cs, "findPetsByStatus", map[string]any{"status": []string{"available"}})
	sc, _ := res.StructuredContent.(map[string]any)
	if pets, _ := sc["result"].([]any); res.IsError || len(pets) != 2 {
		t.Errorf("findPetsByStatus: isError %v %v, want Rex and Kit under result", res.IsError, res.StructuredContent)
	}

	res = call(t, cs, "getPetById", map[string]any{"petId": 404})
	if !res.IsError || !strings.Contains(text(res), "HTTP 404") || !strings.Contains(text(res), "Pet not found") {
		t.Errorf("missing pet: isError %v %q", res.IsError, text(res))
	}

	res = call(t, cs, "getPetById", map[string]any{"petId": "Kit"})
	if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable || !strings.Contains(text(res), "petId") {
		t.Errorf("a name for an id: isError %v %q", res.IsError, text(res))
	}

	res = call(t, cs, "placeOrder", map[string]any{"body": map[string]any{"petId": 1, "quantity": 1}})
	if res.IsError || !strings.Contains(text(res), `"status":"placed"`) {
		t.Errorf("placeOrder: isError %v %q", res.IsError, text(res))
	}
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
