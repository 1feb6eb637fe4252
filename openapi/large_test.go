package openapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/openapi"
)

// githubSpec returns GitHub's REST API description (testdata/README.md
// says where it comes from), read once per test binary: 13 MB of JSON.
var githubSpec = sync.OnceValues(func() ([]byte, error) {
	f, err := gzip.NewReader(bytes.NewReader(must(readFile("testdata/api.github.com.json.gz"))))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(f)
})

// githubOperations is how many operations the description has.
const githubOperations = 1223

// TestGitHubDescription turns every operation of a large real-world
// description into a tool, and checks that an mcpkit server accepts them
// all: valid, distinct names, and schemas its validator compiles.
func TestGitHubDescription(t *testing.T) {
	skipWholeDocumentsUnderRace(t)
	data, err := githubSpec()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(doc.Operations()); n != githubOperations {
		t.Fatalf("%d operations, want %d", n, githubOperations)
	}
	var skipped []string
	tools, err := doc.Tools(&openapi.Options{
		Handler: http.NotFoundHandler(),
		OnSkip:  func(op *openapi.Operation, err error) { skipped = append(skipped, err.Error()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) > 0 {
		t.Errorf("%d operations skipped, first: %s", len(skipped), skipped[0])
	}
	names := make(map[string]bool)
	for _, tool := range tools {
		if err := mcpkit.ValidateToolName(tool.Name); err != nil {
			t.Error(err)
		}
		if names[tool.Name] {
			t.Errorf("duplicate name %q", tool.Name)
		}
		names[tool.Name] = true
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "github"}, nil)
	if err := srv.Add(tools...); err != nil {
		t.Fatal(err)
	}
	if len(tools)+len(skipped) != githubOperations {
		t.Errorf("%d tools and %d skipped, want %d", len(tools), len(skipped), githubOperations)
	}
}

func readFile(name string) ([]byte, error) { return os.ReadFile(name) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
