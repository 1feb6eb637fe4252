package openapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/openapi"
)

// BenchmarkGitHubTools measures turning GitHub's REST API description
// (1,223 operations, 13 MB of JSON) into tools: parsing it with
// kin-openapi (Load), then building the tools (Tools), the part this
// package adds. Compare the two sub-benchmarks of one run.
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
}
