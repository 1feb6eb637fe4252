package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cachedSchemas returns how many compiled schemas v holds, and their text.
func (v *validators) cachedSchemas() (n, text int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, m := range []map[textKey]compiled{v.cur, v.prev} {
		for _, c := range m {
			n++
			text += c.size
		}
	}
	return n, text
}

// schemaTool returns a tool of its own schema: an integer argument named
// after i, required, of at most i+1.
func schemaTool(name string, i int) *Tool {
	schema := fmt.Sprintf(`{"type":"object","properties":{"n%d":{"type":"integer","maximum":%d}},"required":["n%d"]}`, i, i+1, i)
	return &Tool{
		Tool: mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)},
		Handler: HandlerFunc(func(context.Context, *Request) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}),
	}
}

// callArgs calls the tool name of s with args, and returns the error of
// its chain (a *ValidationError within a *ToolError when they fail).
func callArgs(t *testing.T, s *Server, name, args string) error {
	t.Helper()
	h, ok := s.Handler(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	tl, _ := s.Lookup(name)
	_, err := h.ServeTool(context.Background(), &Request{Tool: tl, Arguments: json.RawMessage(args)})
	return err
}

// TestSchemaCompiledOnFirstCall checks that Add checks a schema without
// keeping a compiled validator, and that the first call compiles it and
// enforces it.
func TestSchemaCompiledOnFirstCall(t *testing.T) {
	s := NewServer(&mcp.Implementation{Name: "lazy"}, nil)
	if err := s.Add(schemaTool("t", 1)); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.validators.cachedSchemas(); n != 0 {
		t.Fatalf("after Add: %d compiled schemas, want none", n)
	}
	if err := callArgs(t, s, "t", `{"n1":2}`); err != nil {
		t.Errorf("valid arguments: %v", err)
	}
	if n, _ := s.validators.cachedSchemas(); n != 1 {
		t.Errorf("after a call: %d compiled schemas, want 1", n)
	}
	var ve *ValidationError
	if err := callArgs(t, s, "t", `{"n1":3}`); !errors.As(err, &ve) || len(ve.Issues) != 1 || ve.Issues[0].Path != "n1" {
		t.Errorf("arguments beyond the maximum: %v, want a validation error naming n1", err)
	}
}

// TestSchemaCompiledAtAddIsKept checks that a schema Add had to compile to
// check it (one with unevaluatedProperties) is kept for the first call.
func TestSchemaCompiledAtAddIsKept(t *testing.T) {
	s := NewServer(&mcp.Implementation{Name: "kept"}, nil)
	tl := schemaTool("t", 1)
	tl.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}},"unevaluatedProperties":false}`)
	if err := s.Add(tl); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.validators.cachedSchemas(); n != 1 {
		t.Fatalf("after Add: %d compiled schemas, want the one compiled to check it", n)
	}
	if err := callArgs(t, s, "t", `{"a":"x"}`); !errors.Is(err, ErrValidation) {
		t.Errorf(`{"a":"x"}: %v, want a validation error`, err)
	}
}

// TestSameSchemaCompiledOnce checks that tools whose schemas have the same
// text share one compiled validator.
func TestSameSchemaCompiledOnce(t *testing.T) {
	s := NewServer(&mcp.Implementation{Name: "same"}, nil)
	for _, name := range []string{"a", "b", "c"} {
		if err := s.Add(schemaTool(name, 7)); err != nil { // each its own copy of the text
			t.Fatal(err)
		}
		if err := callArgs(t, s, name, `{"n7":1}`); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := s.validators.cachedSchemas(); n != 1 {
		t.Errorf("%d compiled schemas for one text, want 1", n)
	}
}

// TestValidatorCacheBounded checks that the compiled schemas kept stay
// within the cache's bound whatever the number of tools called, and that
// a tool whose validator was dropped is still checked.
func TestValidatorCacheBounded(t *testing.T) {
	s := NewServer(&mcp.Implementation{Name: "bounded"}, nil)
	size := len(schemaTool("t", 10).InputSchema.(json.RawMessage))
	s.validators.limit = 6 * size // three schemas in each half
	for i := 10; i < 40; i++ {
		name := fmt.Sprintf("t%d", i)
		if err := s.Add(schemaTool(name, i)); err != nil {
			t.Fatal(err)
		}
		if err := callArgs(t, s, name, fmt.Sprintf(`{"n%d":1}`, i)); err != nil {
			t.Fatal(err)
		}
		if n, text := s.validators.cachedSchemas(); text > s.validators.limit || n > 6 {
			t.Fatalf("after %d tools: %d schemas kept, %d bytes of text, want at most %d", i-9, n, text, s.validators.limit)
		}
	}
	if err := callArgs(t, s, "t10", `{"n10":12}`); !errors.Is(err, ErrValidation) {
		t.Errorf("the first tool, compiled again: %v, want a validation error", err)
	}
	if err := callArgs(t, s, "t10", `{"n10":11}`); err != nil {
		t.Errorf("the first tool, valid arguments: %v", err)
	}
}
