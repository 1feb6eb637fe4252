package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// shBlock matches a fenced sh block of a Markdown file.
var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// TestReadmeSetUp checks the repository's README: its first commands are
// the set-up alone (one runs the main example, one runs the tests), and it
// gives a quicker command for a first look whose packages exist.
func TestReadmeSetUp(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlock.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("README.md has no sh block")
	}
	var setUp []string
	for _, line := range strings.Split(strings.TrimSpace(blocks[0][1]), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		setUp = append(setUp, strings.TrimSpace(cmd))
	}
	if want := []string{"go run ./examples/quickstart", "go test -race ./..."}; !slices.Equal(setUp, want) {
		t.Errorf("README.md's first commands are %q, want the set-up alone: %q", setUp, want)
	}
	quick := slices.IndexFunc(blocks[1:], func(b []string) bool {
		return strings.HasPrefix(b[1], "go test ./") && !strings.Contains(b[1], "...")
	})
	if quick < 0 {
		t.Fatal("README.md gives no quicker command for a first look (go test of a few packages)")
	}
	for _, pkg := range strings.Fields(blocks[1+quick][1])[2:] {
		if _, err := os.Stat(filepath.Join("..", pkg)); err != nil {
			t.Errorf("the first-look command names %s: %v", pkg, err)
		}
	}
	if !strings.Contains(string(readme), "9 minutes") {
		t.Error("README.md does not say how long the whole suite takes")
	}
}
