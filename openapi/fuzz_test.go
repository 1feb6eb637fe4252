package openapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/openapi"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxErrorText bounds what any error of this package says, whatever the
// size of the input it is about.
const maxErrorText = 8 << 10

// FuzzLoad feeds documents to Load and Tools: neither may panic, and their
// errors stay bounded. The seed corpus (testdata/fuzz/FuzzLoad) holds
// small documents with recursive schemas, odd refs and odd names.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(styles))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := openapi.Load(data)
		if err != nil {
			if len(err.Error()) > maxErrorText {
				t.Errorf("Load error of %d bytes", len(err.Error()))
			}
			return
		}
		tools, err := doc.Tools(&openapi.Options{Handler: http.NotFoundHandler(), OnSkip: func(_ *openapi.Operation, err error) {
			if len(err.Error()) > maxErrorText {
				t.Errorf("skip reason of %d bytes", len(err.Error()))
			}
		}})
		if err != nil {
			t.Fatalf("Tools with OnSkip: %v", err)
		}
		for _, tool := range tools {
			if err := mcpkit.ValidateToolName(tool.Name); err != nil {
				t.Error(err)
			}
			if !json.Valid(tool.InputSchema.(json.RawMessage)) {
				t.Errorf("%s: input schema is not JSON", tool.Name)
			}
		}
		// Every tool handed out is one a server accepts.
		if err := mcpkit.NewServer(&mcp.Implementation{Name: "fuzz"}, nil).Add(tools...); err != nil {
			t.Errorf("a server refuses the tools: %v", err)
		}
	})
}

// FuzzCall feeds arguments to the styles document's operation, and
// answers of any status, type and body back: building the request and
// reading the answer may fail but not panic, and what they say is
// bounded.
func FuzzCall(f *testing.F) {
	f.Add([]byte(`{"id":["a"],"label":[1],"matrix":{"k":"v"},"tags":["x"],"body":{"name":"n"}}`), 201, "application/json", []byte(`[{"name":"x"}]`))
	f.Add([]byte(`{"id":"{label}","X-Trace":"a\nb"}`), 429, "text/plain", []byte("slow down"))
	f.Fuzz(func(t *testing.T, args []byte, status int, ctype string, body []byte) {
		if status < 100 || status > 999 {
			status = 200
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Retry-After", ctype) // any text
			w.WriteHeader(status)
			w.Write(body)
		})
		doc, err := openapi.Load([]byte(styles))
		if err != nil {
			t.Fatal(err)
		}
		tools, err := doc.Tools(&openapi.Options{Handler: h, MaxResponseBytes: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools {
			res, err := tool.Handler.ServeTool(context.Background(), &mcpkit.Request{Tool: tool, Arguments: args})
			if err != nil {
				var te *mcpkit.ToolError
				if !errors.As(err, &te) {
					t.Errorf("%s: error %v is not a tool error", tool.Name, err)
				}
				if len(err.Error()) > maxErrorText {
					t.Errorf("%s: error of %d bytes", tool.Name, len(err.Error()))
				}
				continue
			}
			if res == nil {
				t.Fatalf("%s: nil result and nil error", tool.Name)
			}
		}
	})
}

// FuzzBody feeds arguments to the tools of real form and multipart
// bodies (Stripe's customers, with deepObject fields, and its file
// upload; OpenAI's): building the body may fail but not panic, and what
// it says is bounded.
func FuzzBody(f *testing.F) {
	f.Add([]byte(`{"body":{"name":"Ada","address":{"city":"Paris"},"expand":["tax"],"tax_id_data":[{"type":"eu_vat","value":"x"}]}}`))
	f.Add([]byte(`{"body":{"file":"hello","purpose":"dispute_evidence","file_link_data":{"create":true,"metadata":{"a":[1,{"b":null}]}}}}`))
	f.Add([]byte(`{"body":["not","an","object"]}`))
	var tools []*mcpkit.Tool
	for doc, ids := range map[string][]string{stripeDoc: {"PostCustomers", "PostFiles"}, openaiDoc: {"createFile"}} {
		ts, err := realDoc(f, doc).Tools(&openapi.Options{Handler: &api{}, OperationIDs: ids})
		if err != nil {
			f.Fatal(err)
		}
		tools = append(tools, ts...)
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		for _, tool := range tools {
			res, err := tool.Handler.ServeTool(context.Background(), &mcpkit.Request{Tool: tool, Arguments: args})
			if err != nil {
				var te *mcpkit.ToolError
				if !errors.As(err, &te) {
					t.Errorf("%s: error %v is not a tool error", tool.Name, err)
				}
				if len(err.Error()) > maxErrorText {
					t.Errorf("%s: error of %d bytes", tool.Name, len(err.Error()))
				}
				continue
			}
			if res == nil {
				t.Fatalf("%s: nil result and nil error", tool.Name)
			}
		}
	})
}
