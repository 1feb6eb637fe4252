package openapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/openapi"
)

// inventory serves the Petstore's getInventory operation (GET
// /store/inventory) with h, over HTTP (client true: an *http.Client
// against an httptest server) or in process, behind an mcpkit server with
// the given middleware, and returns a client session to it.
func inventory(t *testing.T, h http.HandlerFunc, client bool, opts *openapi.Options, mw ...mcpkit.Middleware) *mcp.ClientSession {
	t.Helper()
	doc, err := openapi.Load(readSpec(t, "petstore-3.1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = &openapi.Options{}
	}
	opts.OperationIDs = []string{"getInventory"}
	if client {
		api := httptest.NewServer(h)
		t.Cleanup(api.Close)
		opts.Client, opts.BaseURL = api.Client(), api.URL
	} else {
		opts.Handler = h
	}
	tools, err := doc.Tools(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 {
		t.Fatalf("%d tools, want getInventory alone", len(tools))
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "inventory"}, nil)
	srv.Use(mw...)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	return mcpkittest.NewInMemoryServer(t, srv, nil).Session
}

var backends = []struct {
	name   string
	client bool
}{{"handler", false}, {"client", true}}

func TestHugeAnswerBounded(t *testing.T) {
	huge := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"available":`))
		chunk := []byte(strings.Repeat("1", 64<<10))
		for range 160 { // 10 MiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Write([]byte(`}`))
	}
	hugeError := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(strings.Repeat("e", 10<<20)))
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			cs := inventory(t, huge, be.client, &openapi.Options{MaxResponseBytes: 64 << 10})
			res := call(t, cs, "getInventory", nil)
			if !res.IsError || !strings.Contains(text(res), "longer than 65536 bytes") {
				t.Errorf("isError %v, %q", res.IsError, text(res))
			}
			cs = inventory(t, hugeError, be.client, nil)
			res = call(t, cs, "getInventory", nil)
			if !res.IsError || !strings.Contains(text(res), "HTTP 500") {
				t.Fatalf("isError %v, %.100q", res.IsError, text(res))
			}
			if n := len(text(res)); n > 5<<10 {
				t.Errorf("the error shows %d bytes of the body, want at most about 4 KiB", n)
			}
			if c := mcpkit.ErrorClassOf(res); c != mcpkit.Fatal {
				t.Errorf("HTTP 500: class %q, want fatal", c)
			}
		})
	}
}

func TestInvalidJSONAnswer(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			cs := inventory(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"available": 3,`))
			}, be.client, nil)
			res := call(t, cs, "getInventory", nil)
			if !res.IsError || !strings.Contains(text(res), "not valid JSON") {
				t.Errorf("isError %v, %q", res.IsError, text(res))
			}
		})
	}
}

// TestAnswerOutsideTheDocument: an API that answers other than its
// document says fails output validation, unless the tools go without
// output schemas.
func TestAnswerOutsideTheDocument(t *testing.T) {
	wrong := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"available": "many"}`))
	}
	res := call(t, inventory(t, wrong, false, nil), "getInventory", nil)
	if !res.IsError {
		t.Errorf("an answer against the output schema passed: %q", text(res))
	}
	res = call(t, inventory(t, wrong, false, &openapi.Options{NoOutputSchema: true}), "getInventory", nil)
	if res.IsError || res.StructuredContent != nil || text(res) != `{"available": "many"}` {
		t.Errorf("without output schema: isError %v %v %q", res.IsError, res.StructuredContent, text(res))
	}
}

func TestUpstreamDiesMidCall(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"before answering": func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		},
		"in the body": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte(`{"available":`))
			http.NewResponseController(w).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			res := call(t, inventory(t, h, true, nil), "getInventory", nil)
			if !res.IsError || !strings.Contains(text(res), "GET /store/inventory") {
				t.Errorf("isError %v, %q", res.IsError, text(res))
			}
			if c := mcpkit.ErrorClassOf(res); c != mcpkit.Retryable {
				t.Errorf("class %q, want retryable", c)
			}
		})
	}
}

// TestCancelReachesAPI: a client that gives up on its call cancels the
// request to the API, in process and over HTTP.
func TestCancelReachesAPI(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			entered, cancelled := make(chan struct{}), make(chan struct{})
			cs := inventory(t, func(w http.ResponseWriter, r *http.Request) {
				close(entered)
				<-r.Context().Done()
				close(cancelled)
			}, be.client, nil)
			ctx, cancel := context.WithCancel(t.Context())
			go func() { <-entered; cancel() }()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getInventory"}); err == nil {
				t.Error("the cancelled call returned no error")
			}
			<-cancelled // the API's request context ends; a hang fails the test
		})
	}
}

// TestSlowUpstreamTimesOut: the Timeout middleware bounds a call to a slow
// API, and the API's request is cancelled with it (synctest: no real
// waiting).
func TestSlowUpstreamTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gone := make(chan error, 1)
		cs := inventory(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
				gone <- r.Context().Err()
			case <-time.After(time.Hour):
				gone <- nil
			}
		}, false, nil, middleware.Timeout(5*time.Second, nil))
		res := call(t, cs, "getInventory", nil)
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
			t.Errorf("isError %v class %q: %q", res.IsError, mcpkit.ErrorClassOf(res), text(res))
		}
		if err := <-gone; !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			t.Errorf("the API's request ended with %v, want its context cancelled", err)
		}
		cs.Close()
	})
}

func TestUnreachableAPI(t *testing.T) {
	api := httptest.NewServer(http.NotFoundHandler())
	url := api.URL
	api.Close() // nothing listens there now
	doc, err := openapi.Load(readSpec(t, "petstore-3.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := doc.Tools(&openapi.Options{Client: &http.Client{}, BaseURL: url, OperationIDs: []string{"getInventory"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tools[0].Handler.ServeTool(context.Background(), mcpkittest.NewRequest(tools[0], nil))
	var te *mcpkit.ToolError
	if !errors.As(err, &te) || te.ErrorClass() != mcpkit.Retryable {
		t.Errorf("err = %v, want a retryable tool error", err)
	}
}

func TestOptionsErrors(t *testing.T) {
	doc, err := openapi.Load(readSpec(t, "petstore-3.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts *openapi.Options
		want error
	}{
		{nil, openapi.ErrNoBackend},
		{&openapi.Options{Handler: http.NotFoundHandler(), Client: http.DefaultClient, BaseURL: "http://x"}, openapi.ErrNoBackend},
		{&openapi.Options{Client: http.DefaultClient}, openapi.ErrBaseURL},
		{&openapi.Options{Client: http.DefaultClient, BaseURL: "/v2"}, openapi.ErrBaseURL},
		{&openapi.Options{Client: http.DefaultClient, BaseURL: "ftp://x"}, openapi.ErrBaseURL},
	} {
		if _, err := doc.Tools(tc.opts); !errors.Is(err, tc.want) {
			t.Errorf("%+v: err = %v, want %v", tc.opts, err, tc.want)
		}
	}
}
