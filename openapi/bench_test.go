package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit"

	"github.com/mcpkit/mcpkit/openapi"
)

// BenchmarkGitHubTools measures turning GitHub's REST API description
// (1,223 operations, 13 MB of JSON) into tools: parsing it with
// kin-openapi (Load), building the tools (Tools, the part this package
// adds), both, and registering the tools on a server. Compare the
// sub-benchmarks of one run.
func BenchmarkGitHubTools(b *testing.B) {
	data, err := githubSpec()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Load", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := openapi.Load(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Load+Tools", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		var schemaBytes int
		for b.Loop() {
			doc, err := openapi.Load(data)
			if err != nil {
				b.Fatal(err)
			}
			tools, err := doc.Tools(&openapi.Options{Handler: http.NotFoundHandler()})
			if err != nil {
				b.Fatal(err)
			}
			schemaBytes = 0
			for _, t := range tools {
				schemaBytes += len(t.InputSchema.(json.RawMessage))
			}
		}
		b.ReportMetric(float64(schemaBytes), "input-schema-bytes")
	})
	// Building the tools alone, from a freshly parsed document each time
	// (a Document caches its converted components).
	b.Run("Tools", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			doc, err := openapi.Load(data)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := doc.Tools(&openapi.Options{Handler: http.NotFoundHandler()}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Registering the tools on a server: compiling their schemas for
	// validation, mcpkit's cost rather than this package's.
	b.Run("Server.Add", func(b *testing.B) {
		doc, err := openapi.Load(data)
		if err != nil {
			b.Fatal(err)
		}
		tools, err := doc.Tools(&openapi.Options{Handler: http.NotFoundHandler()})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "github"}, nil)
			if err := srv.Add(tools...); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCall compares a call of a generated tool, served by an
// in-process handler, with the same request made by hand to the same
// handler: the difference is what the tool adds (reading the arguments,
// building the request, reading the answer into a result).
func BenchmarkCall(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pet/{petId}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%s,"name":"Rex","photoUrls":[],"status":"available"}`, r.PathValue("petId"))
	})
	var api http.Handler = mux
	doc, err := openapi.Load(readSpec(b, "petstore-3.0.json"))
	if err != nil {
		b.Fatal(err)
	}
	tools, err := doc.Tools(&openapi.Options{Handler: api, OperationIDs: []string{"getPetById"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := httptest.NewRequest(http.MethodGet, "/pet/1", nil)
			r.Header.Set("Accept", "application/json")
			w := httptest.NewRecorder()
			api.ServeHTTP(w, r)
			if w.Code != http.StatusOK || !json.Valid(w.Body.Bytes()) {
				b.Fatal(w.Code)
			}
		}
	})
	b.Run("tool", func(b *testing.B) {
		b.ReportAllocs()
		req := &mcpkit.Request{Tool: tools[0], Arguments: json.RawMessage(`{"petId":1}`)}
		for b.Loop() {
			res, err := tools[0].Handler.ServeTool(context.Background(), req)
			if err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStripe measures a large and connected document: Stripe's API
// (452 operations whose answers reach most of its 775 components).
// Load parses it; Tools builds the tools; Server.Add registers them,
// compiling their schemas; List is one tools/list of them all on an
// in-memory transport, the server's answer read as JSON-RPC (its size
// reported), ListPage50 a client's first page on a server whose pages
// have 50 tools, and ListClient the whole list through the SDK's client,
// which decodes every schema. Tools reports the schemas' sizes.
func BenchmarkStripe(b *testing.B) {
	data := realSpec(b, stripeDoc)
	opts := &openapi.Options{Handler: http.NotFoundHandler(), OnSkip: func(*openapi.Operation, error) {}}
	build := func() []*mcpkit.Tool {
		doc, err := openapi.Load(data)
		if err != nil {
			b.Fatal(err)
		}
		tools, err := doc.Tools(opts)
		if err != nil {
			b.Fatal(err)
		}
		return tools
	}
	b.Run("Load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := openapi.Load(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Tools", func(b *testing.B) {
		b.ReportAllocs()
		var tools []*mcpkit.Tool
		for b.Loop() {
			b.StopTimer()
			doc, err := openapi.Load(data)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if tools, err = doc.Tools(opts); err != nil {
				b.Fatal(err)
			}
		}
		var in, out int
		for _, t := range tools {
			in += len(t.InputSchema.(json.RawMessage))
			if t.OutputSchema != nil {
				out += len(t.OutputSchema.(json.RawMessage))
			}
		}
		b.ReportMetric(float64(in), "input-schema-bytes")
		b.ReportMetric(float64(out), "output-schema-bytes")
	})
	b.Run("Server.Add", func(b *testing.B) {
		tools := build()
		b.ReportAllocs()
		for b.Loop() {
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "stripe"}, nil)
			if err := srv.Add(tools...); err != nil {
				b.Fatal(err)
			}
		}
	})
	// list measures one tools/list: the first page, of pageSize tools (0:
	// the SDK's default of 1,000, so the whole catalog).
	list := func(b *testing.B, pageSize int) {
		tools := build()
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "stripe"}, &mcpkit.ServerOptions{SDKOptions: &mcp.ServerOptions{PageSize: pageSize}})
		if err := srv.Add(tools...); err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		conn, err := ct.Connect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		id := int64(0)
		roundTrip := func(method, params string) json.RawMessage {
			id++
			rid, _ := jsonrpc.MakeID(float64(id))
			if err := conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(params)}); err != nil {
				b.Fatal(err)
			}
			msg, err := conn.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			resp, ok := msg.(*jsonrpc.Response)
			if !ok || resp.Error != nil {
				b.Fatalf("%s: %#v", method, msg)
			}
			return resp.Result
		}
		roundTrip("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
		if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
			b.Fatal(err)
		}
		var size int
		b.ReportAllocs()
		for b.Loop() {
			size = len(roundTrip("tools/list", `{}`))
		}
		b.ReportMetric(float64(size), "list-bytes")
	}
	b.Run("List", func(b *testing.B) { list(b, 0) })
	b.Run("ListPage50", func(b *testing.B) { list(b, 50) })
	b.Run("ListClient", func(b *testing.B) {
		tools := build()
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "stripe"}, nil)
		if err := srv.Add(tools...); err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Tools) != len(tools) {
				b.Fatalf("%d tools listed, want %d", len(res.Tools), len(tools))
			}
		}
	})
}
