package mcpkit

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// These tests guard mcpkit's own part of a tools/call, between the SDK's
// parsed request and the SDK's marshalling of the result: the arguments the
// SDK parsed reach the handler without a copy and without a second parse
// into Go values, and structured content is marshalled once. They call the
// handler mcpkit registers on the SDK server directly, with the request the
// SDK would pass, so that nothing of the SDK's own cost is measured.

// ownPathSchema is an object with a few typed properties and no defaults,
// so that validation has work to do but nothing to add.
var ownPathSchema = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"query": {Type: "string"},
		"limit": {Type: "integer", Minimum: jsonschema.Ptr(0.0)},
		"tags":  {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
	},
	Required:             []string{"query"},
	AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
}

var ownPathArgs = json.RawMessage(`{"query":"weather in Paris","limit":5,"tags":["a","b","c"]}`)

// ownPathCall returns what serves a tools/call of the tool name on s once
// the SDK has parsed it (the route, then the handler mcpkit registers on
// the SDK server), and a tools/call request for it with args, as the SDK
// builds it.
func ownPathCall(t testing.TB, s *Server, name string, args json.RawMessage) (mcp.ToolHandler, *mcp.CallToolRequest) {
	t.Helper()
	if _, ok := s.Lookup(name); !ok {
		t.Fatalf("tool %q not registered", name)
	}
	sdk := func(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
		return s.serveRouted(ctx, req.(*mcp.CallToolRequest))
	}
	h := func(ctx context.Context, call *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := s.call(ctx, call, sdk)
		r, _ := res.(*mcp.CallToolResult)
		return r, err
	}
	return h, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name, Arguments: args}}
}

func TestOwnPathHandsOnTheSDKsArguments(t *testing.T) {
	var same atomic.Bool
	s := NewServer(&mcp.Implementation{Name: "own"}, nil)
	s.Use(func(next Handler) Handler { return next }) // a chain is no reason to copy either
	err := s.Add(&Tool{
		Tool: mcp.Tool{Name: "search", InputSchema: ownPathSchema},
		Handler: HandlerFunc(func(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
			same.Store(unsafe.SliceData(req.Arguments) == unsafe.SliceData(ownPathArgs) && len(req.Arguments) == len(ownPathArgs))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	h, call := ownPathCall(t, s, "search", ownPathArgs)
	res, err := h(context.Background(), call)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	if !same.Load() {
		t.Error("the handler got a copy of the arguments the SDK parsed; valid arguments that need no defaults must be handed on as they are")
	}
}

// countingValue counts how often it is marshalled.
type countingValue struct {
	n     *atomic.Int32
	Items []int `json:"items"`
}

func (v countingValue) MarshalJSON() ([]byte, error) {
	v.n.Add(1)
	type plain countingValue
	return json.Marshal(plain(v))
}

func TestOwnPathMarshalsStructuredContentOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		output any
		want   int32
	}{
		// finish marshals to check the value can be sent, and hands those
		// bytes to the SDK, which sends them as they are.
		{"no output schema", nil, 1},
		// Validation marshals once more, to check the output schema; the
		// middleware outside it still see the handler's Go value.
		{"output schema", &jsonschema.Schema{Type: "object"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			s := NewServer(&mcp.Implementation{Name: "own"}, nil)
			err := s.Add(&Tool{
				Tool: mcp.Tool{Name: "items", InputSchema: &jsonschema.Schema{Type: "object"}, OutputSchema: tc.output},
				Handler: HandlerFunc(func(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{StructuredContent: countingValue{n: &n, Items: []int{1, 2, 3}}}, nil
				}),
			})
			if err != nil {
				t.Fatal(err)
			}
			h, call := ownPathCall(t, s, "items", json.RawMessage(`{}`))
			res, err := h(context.Background(), call)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			// Marshalling the result, as the SDK does to send it.
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if got := n.Load(); got != tc.want {
				t.Errorf("structured content marshalled %d times, want %d", got, tc.want)
			}
			var wire struct {
				StructuredContent map[string]any `json:"structuredContent"`
				Content           []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			if err := json.Unmarshal(b, &wire); err != nil {
				t.Fatal(err)
			}
			if len(wire.StructuredContent["items"].([]any)) != 3 || wire.Content[0].Text != `{"items":[1,2,3]}` {
				t.Errorf("wire result = %s", b)
			}
		})
	}
}

// TestOwnPathAllocations bounds the allocations mcpkit adds to a call with
// validated arguments, over a handler that allocates nothing: three, the
// Request, the routed call (the entry the route reached) and the context
// value that carries it through the SDK to the SDK's handler. A change
// that copies or re-parses the arguments raises it, and fails here.
func TestOwnPathAllocations(t *testing.T) {
	if raceOn {
		t.Skip("the race detector changes allocation counts")
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	s := NewServer(&mcp.Implementation{Name: "own"}, nil)
	if err := s.Add(&Tool{
		Tool: mcp.Tool{Name: "search", InputSchema: ownPathSchema},
		Handler: HandlerFunc(func(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
			return res, nil
		}),
	}); err != nil {
		t.Fatal(err)
	}
	h, call := ownPathCall(t, s, "search", ownPathArgs)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := h(ctx, call); err != nil {
			t.Fatal(err)
		}
	})
	const limit = 3 // the Request, the routed call and its context
	if allocs > limit {
		t.Errorf("mcpkit's path allocates %v times per call, want at most %d", allocs, limit)
	}
}

// BenchmarkOwnPath is mcpkit's share of a tools/call, without transport
// and without the SDK: "bare" calls the handler alone, "mcpkit" the handler
// mcpkit registers on the SDK (lookup, Request, validation of the
// arguments, result checks). Compare them in one run; the difference is
// what mcpkit adds per call.
func BenchmarkOwnPath(b *testing.B) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	handler := HandlerFunc(func(ctx context.Context, req *Request) (*mcp.CallToolResult, error) {
		return res, nil
	})
	ctx := context.Background()
	b.Run("bare", func(b *testing.B) {
		req := &Request{Arguments: ownPathArgs}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := handler(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcpkit", func(b *testing.B) {
		s := NewServer(&mcp.Implementation{Name: "own"}, nil)
		if err := s.Add(&Tool{Tool: mcp.Tool{Name: "search", InputSchema: ownPathSchema}, Handler: handler}); err != nil {
			b.Fatal(err)
		}
		h, call := ownPathCall(b, s, "search", ownPathArgs)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	})
}
