package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// TestResourceLayers reads resources through Logging, Recover, MaskErrors
// and Timeout inside a Server: none is skipped, Logging writes one record
// per resources/read, with the real text of a masked error and the
// outcome of a panic, and the client sees neither.
func TestResourceLayers(t *testing.T) {
	var buf bytes.Buffer
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "layers"}, nil)
	srv.Use(middleware.Logging(&middleware.LoggingOptions{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}),
		middleware.Recover(nil), middleware.MaskErrors(nil), middleware.Timeout(time.Minute, nil))
	resource := func(uri string, f func() (*mcp.ReadResourceResult, error)) *mcpkit.Resource {
		return &mcpkit.Resource{Resource: mcp.Resource{URI: uri, Name: uri}, Handler: mcpkit.ResourceHandlerFunc(func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return f()
		})}
	}
	err := srv.AddResources(
		resource("memo://ok", func() (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "hi"}}}, nil
		}),
		resource("memo://boom", func() (*mcp.ReadResourceResult, error) { panic("secret") }),
		resource("memo://db", func() (*mcp.ReadResourceResult, error) { return nil, errors.New("dial db:5432") }),
	)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := srv.ResourcePipeline("memo://ok")
	if len(layers) != 4 {
		t.Errorf("layers %+v, want 4", layers)
	}
	for _, l := range layers {
		if l.Skipped {
			t.Errorf("%s skipped in a resource's chain: %s", l.Name, l.Reason)
		}
	}
	cs := mcpkittest.NewInMemoryServer(t, srv, nil).Session
	for _, uri := range []string{"memo://ok", "memo://boom", "memo://db"} {
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if (err == nil) != (uri == "memo://ok") {
			t.Errorf("%s: %v", uri, err)
		}
		if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "5432")) {
			t.Errorf("%s: the client sees %v", uri, err)
		}
	}
	var got []string
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{rec["msg"].(string), str(rec["resource"]), rec["outcome"].(string), str(rec["error"])}, "|"))
	}
	want := "resource read|memo://ok|ok| resource read|memo://boom|panic|panic: secret resource read|memo://db|error|dial db:5432"
	if strings.Join(got, " ") != want {
		t.Errorf("records:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

// TestResourceLayerOutsideServer checks that a layer built by hand around
// a Handler that serves no resources answers ServeResource with an error.
func TestResourceLayerOutsideServer(t *testing.T) {
	for name, m := range map[string]mcpkit.Middleware{
		"Recover":    middleware.Recover(nil),
		"MaskErrors": middleware.MaskErrors(nil),
		"Timeout":    middleware.Timeout(time.Minute, nil),
	} {
		h := m(mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) { return nil, nil }))
		r, ok := h.(mcpkit.ResourceHandler)
		if !ok {
			t.Errorf("%s's Handler does not serve resources", name)
			continue
		}
		if _, err := r.ServeResource(t.Context(), &mcpkit.ResourceRequest{URI: "memo://x"}); err == nil {
			t.Errorf("%s: no error from a chain without a resource handler", name)
		}
	}
}
