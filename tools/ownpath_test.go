package tools_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/tools"
)

// decodeCount counts how often a countedString is decoded.
var decodeCount atomic.Int32

// countedString is a string that counts its decodings.
type countedString string

func (s *countedString) UnmarshalJSON(b []byte) error {
	decodeCount.Add(1)
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = countedString(v)
	return nil
}

// JSONSchema says it is a string.
func (countedString) JSONSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }

// A typed tool's arguments are decoded into its input once per call, from
// the bytes validation checked: no second parse, over any transport.
func TestTypedArgumentsDecodedOnce(t *testing.T) {
	type in struct {
		Query countedString `json:"query"`
		Limit int           `json:"limit" default:"10"`
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "once"}, nil)
	srv.Add(tools.Must(tools.New("search", func(ctx context.Context, in in) (string, error) {
		return string(in.Query), nil
	}, nil)))
	for _, version := range []string{mcpkittest.StatefulVersion, mcpkittest.StatelessVersion} {
		t.Run(version, func(t *testing.T) {
			cs, err := mcpkittest.ConnectInMemory(context.Background(), srv, &mcpkittest.Options{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			decodeCount.Store(0)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "paris"}})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			if n := decodeCount.Load(); n != 1 {
				t.Errorf("the query was decoded %d times, want 1", n)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; text != "paris" {
				t.Errorf("result %q, want paris", text)
			}
		})
	}
}
