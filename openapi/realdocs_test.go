package openapi_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/openapi"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Real public documents in testdata (testdata/README.md says where each
// comes from and under which license), gzipped.
const (
	stripeDoc     = "stripe.com.json.gz"         // OpenAPI 3.0, 452 operations; form bodies, deepObject
	linodeDoc     = "linode.com.json.gz"         // OpenAPI 3.0, 350 operations; lookahead patterns
	kubernetesDoc = "kubernetes-apps-v1.json.gz" // OpenAPI 3.0, 77 operations; default {} over required fields
	oryDoc        = "ory-kratos.json.gz"         // OpenAPI 3.0, 60 operations; discriminated bodies
	openaiDoc     = "openai.json.gz"             // OpenAPI 3.1, 288 operations; $recursiveRef, max_items
	doDoc         = "digitalocean.json.gz"       // OpenAPI 3.0, 659 operations; discriminated bodies
)

var (
	realMu   sync.Mutex
	realData = map[string][]byte{}
	realDocs = map[string]*openapi.Document{}
)

// realSpec returns the JSON of a gzipped document in testdata, read once
// per test binary.
func realSpec(t testing.TB, name string) []byte {
	t.Helper()
	realMu.Lock()
	defer realMu.Unlock()
	if data, ok := realData[name]; ok {
		return data
	}
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	realData[name] = data
	return data
}

// realDoc returns the loaded document, loaded once per test binary: a
// Document is not safe for concurrent use, so a test that uses one does
// not run in parallel with another that uses the same.
func realDoc(t testing.TB, name string) *openapi.Document {
	t.Helper()
	data := realSpec(t, name)
	realMu.Lock()
	defer realMu.Unlock()
	if doc, ok := realDocs[name]; ok {
		return doc
	}
	doc, err := openapi.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	realDocs[name] = doc
	return doc
}

// TestRealDocumentsServable builds every operation of real documents into
// tools and registers them all on a server: each tool that Tools hands out
// is one the server accepts (its schemas compile for validation), and
// every operation is a tool but those named, which are reported to OnSkip.
func TestRealDocumentsServable(t *testing.T) {
	skipWholeDocumentsUnderRace(t)
	for _, tc := range []struct {
		doc     string
		skipped []string
	}{
		{stripeDoc, nil},
		{linodeDoc, []string{"setClientThumbnail"}}, // an image/png body
		{kubernetesDoc, nil},
		{oryDoc, nil},
		{openaiDoc, nil},
		{doDoc, []string{"inference_upload_batch_file"}}, // an application/octet-stream body
	} {
		t.Run(tc.doc, func(t *testing.T) {
			doc := realDoc(t, tc.doc)
			var skipped []string
			tools, err := doc.Tools(&openapi.Options{
				Handler: http.NotFoundHandler(),
				OnSkip:  func(op *openapi.Operation, _ error) { skipped = append(skipped, op.OperationID) },
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(skipped, tc.skipped) {
				t.Errorf("skipped %q, want %q", skipped, tc.skipped)
			}
			if got, want := len(tools)+len(skipped), len(doc.Operations()); got != want {
				t.Errorf("%d tools and %d skipped, want %d operations", len(tools), len(skipped), want)
			}
			srv := mcpkit.NewServer(&mcp.Implementation{Name: "real"}, nil)
			if err := srv.Add(tools...); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// skipWholeDocumentsUnderRace skips a test that converts whole documents,
// which runs on one goroutine, under the race detector: it would take
// minutes and find nothing. The tests also run without it.
func skipWholeDocumentsUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("converts whole documents on one goroutine: run without -race")
	}
}
