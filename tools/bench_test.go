package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"

	"github.com/mcpkit/mcpkit/tools"
)

type EchoItem struct {
	ID   int      `json:"id"`
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

type EchoIn struct {
	Items []EchoItem `json:"items"`
	Q     string     `json:"q"`
}

type EchoOut struct {
	Count int    `json:"count"`
	Q     string `json:"q"`
}

type SumOut struct {
	Sum int `json:"sum"`
}

func echoObj(ctx context.Context, in EchoIn) (EchoOut, error) {
	return EchoOut{Count: len(in.Items), Q: in.Q}, nil
}

func addInts(ctx context.Context, in AddIn) (SumOut, error) {
	return SumOut{Sum: in.A + in.B}, nil
}

// echoArgs is the benchmark's argument: 50 objects and a string.
func echoArgs() map[string]any {
	items := make([]map[string]any, 50)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": fmt.Sprintf("item-%d", i), "tags": []string{"a", "b", "c"}}
	}
	return map[string]any{"items": items, "q": "find"}
}

// rawHandler is what a hand-written SDK handler does: decode, call, encode,
// no validation.
func rawHandler[In, Out any](fn func(context.Context, In) (Out, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
			StructuredContent: json.RawMessage(b),
		}, nil
	}
}

// sdkTyped adapts fn to the SDK's generic mcp.AddTool, which validates the
// arguments and the output against inferred schemas.
func sdkTyped[In, Out any](fn func(context.Context, In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := fn(ctx, in)
		return nil, out, err
	}
}

func BenchmarkEchoObj(b *testing.B) {
	benchTool(b, "echo_obj", echoArgs(), echoObj)
}

func BenchmarkAdd(b *testing.B) {
	benchTool(b, "add", map[string]any{"a": 20, "b": 22}, addInts)
}

// benchTool compares, over in-memory transports, one tool served several
// ways: by a raw SDK handler (decode, no validation), by the SDK's
// mcp.AddTool (which validates), and by mcpkit's typed tools with each
// validation mode (strict is the default).
func benchTool[In, Out any](b *testing.B, name string, args map[string]any, fn func(context.Context, In) (Out, error)) {
	b.Run("raw", func(b *testing.B) {
		s := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
		in, err := jsonschema.For[In](nil)
		if err != nil {
			b.Fatal(err)
		}
		s.AddTool(&mcp.Tool{Name: name, InputSchema: in}, rawHandler(fn))
		runCalls(b, s, name, args)
	})
	b.Run("sdk", func(b *testing.B) {
		s := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: name}, sdkTyped(fn))
		runCalls(b, s, name, args)
	})
	for _, v := range []struct {
		name string
		mode mcpkit.ValidationMode
	}{
		{"mcpkit+novalidation", mcpkit.NoValidation},
		{"mcpkit", mcpkit.Strict},
		{"mcpkit+lenient", mcpkit.Lenient},
	} {
		b.Run(v.name, func(b *testing.B) {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "bench"}, &mcpkit.ServerOptions{Validation: v.mode})
			if err := srv.Add(tools.Must(tools.New(name, fn, nil))); err != nil {
				b.Fatal(err)
			}
			runCalls(b, srv.MCPServer(), name, args)
		})
	}
}

func runCalls(b *testing.B, s *mcp.Server, name string, args map[string]any) {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { cs.Close(); ss.Close() }()
	// Encode the arguments once, as a client would have them.
	raw, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(raw)}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError || res.StructuredContent == nil {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkHandler measures a typed tool's own work (decode, call, encode)
// on the echo_obj arguments, without a transport.
func BenchmarkHandler(b *testing.B) {
	tl := tools.Must(tools.New("echo_obj", echoObj, nil))
	raw, err := json.Marshal(echoArgs())
	if err != nil {
		b.Fatal(err)
	}
	req := mcpkittest.NewRequest(tl, json.RawMessage(raw))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tl.Handler.ServeTool(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
