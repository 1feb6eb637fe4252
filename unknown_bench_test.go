package mcpkit_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// BenchmarkHiddenVsNeverRegistered measures, in one loop, what the server
// spends answering a tools/call of a tool hidden from the caller whose input
// schema has 2000 properties, and one of a name never registered, replayed
// into the HTTP handler on each protocol era. Both get the same answer;
// hidden/never is the ratio of their times (ns/op counts both). On 2026-07-28 the SDK's HTTP
// layer looks for x-mcp-header bindings in the input schema of every tool
// it has by the requested name, before any middleware can see the request;
// mcpkit gives the SDK its tools without their schemas, so that the pass
// costs nothing and a hidden tool takes the time of an unknown name.
func BenchmarkHiddenVsNeverRegistered(b *testing.B) {
	props := map[string]any{}
	for i := range 2000 {
		props[fmt.Sprintf("p%04d", i)] = map[string]any{"type": "string", "description": "One of many properties."}
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "hidden"}, nil)
	srv.SetVisibility(hideFromAll("wide"))
	if err := srv.Add(&mcpkit.Tool{
		Tool: mcp.Tool{Name: "wide", InputSchema: map[string]any{"type": "object", "properties": props}},
		Handler: mcpkit.HandlerFunc(func(context.Context, *mcpkit.Request) (*mcp.CallToolResult, error) {
			b.Error("the hidden tool ran")
			return nil, nil
		}),
	}); err != nil {
		b.Fatal(err)
	}
	h := srv.HTTPHandler(&mcpkit.HTTPOptions{SDK: &mcp.StreamableHTTPOptions{JSONResponse: true}})
	serve := func(header http.Header, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header = header.Clone()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(version, func(b *testing.B) {
			hh, hb := callWire(version, "wide")
			nh, nb := callWire(version, "none") // the same length: the same answer but for the name
			hw, nw := serve(hh, hb), serve(nh, nb)
			if hw.Code != nw.Code || !bytes.Equal(hw.Body.Bytes(), bytes.Replace(nw.Body.Bytes(), []byte("none"), []byte("wide"), 1)) {
				b.Fatalf("hidden: HTTP %d %s; never registered: HTTP %d %s", hw.Code, hw.Body, nw.Code, nw.Body)
			}
			b.ReportAllocs()
			var hidden, never time.Duration
			timed := func(header http.Header, body []byte) time.Duration {
				t0 := time.Now()
				serve(header, body)
				return time.Since(t0)
			}
			// Each goes first in every other round, so that neither pays
			// more of the garbage the other left.
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					hidden += timed(hh, hb)
					never += timed(nh, nb)
				} else {
					never += timed(nh, nb)
					hidden += timed(hh, hb)
				}
			}
			b.ReportMetric(float64(hidden.Nanoseconds())/float64(b.N), "hidden-ns/call")
			b.ReportMetric(float64(never.Nanoseconds())/float64(b.N), "never-ns/call")
			b.ReportMetric(float64(hidden)/float64(never), "hidden/never")
		})
	}
}
