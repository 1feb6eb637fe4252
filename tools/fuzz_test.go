package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

type fuzzIn struct {
	Name  string            `json:"name"`
	Count int8              `json:"count"`
	Tags  []string          `json:"tags,omitempty"`
	Tree  *Tree             `json:"tree,omitempty"`
	Extra map[string]any    `json:"extra,omitempty"`
	Pairs map[int]float64   `json:"pairs,omitempty"`
	Raw   json.RawMessage   `json:"raw,omitempty"`
	Opt   *struct{ X bool } `json:"opt,omitempty"`
}

type Tree struct {
	Value    int     `json:"value"`
	Children []*Tree `json:"children,omitempty"`
}

// FuzzArguments feeds arbitrary bytes to a typed tool as its arguments:
// the handler never panics, and either succeeds with a structured result or
// fails with a retryable tool error naming what is wrong.
func FuzzArguments(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `{"name":"a","count":3}`, `{"count":300}`, `{"count":"3"}`, `{"tags":[1]}`,
		`{"tree":{"value":1,"children":[{"value":2},null]}}`, `{"pairs":{"1":2.5,"x":1}}`, `[1,2]`, `"str"`,
		`{"raw":{"any":[true]}}`, `{"opt":{"X":1}}`, `{"name":"\ud800"}`, `{`, `{"extra":{"a":{"b":[]}}}`,
		`{"count":1e2}`, `{"count":10.0,"name":"1.0"}`, `{"count":1e400}`, `{"count":-1.5e1,"tags":["\"1.0"]}`,
	} {
		f.Add([]byte(s))
	}
	tool := tools.Must(tools.New("fuzz", func(ctx context.Context, in fuzzIn) (fuzzIn, error) { return in, nil }, nil))
	f.Fuzz(func(t *testing.T, args []byte) {
		res, err := tool.Handler.ServeTool(context.Background(), mcpkittest.NewRequest(tool, json.RawMessage(args)))
		if err != nil {
			var te *mcpkit.ToolError
			var ae *tools.ArgumentError
			if !errors.As(err, &te) || !errors.As(err, &ae) || te.ErrorClass() != mcpkit.Retryable {
				t.Fatalf("args %q: error %v (%T), want a retryable *ArgumentError", args, err, err)
			}
			if n := len(err.Error()); n == 0 || n > 300 {
				t.Fatalf("args %q: error text of %d bytes: %.400s", args, n, err)
			}
			return
		}
		if res == nil || res.StructuredContent == nil || len(res.Content) != 1 {
			t.Fatalf("args %q: result %+v", args, res)
		}
		if !json.Valid(res.StructuredContent.(json.RawMessage)) {
			t.Fatalf("args %q: structured content is not JSON", args)
		}
	})
}
