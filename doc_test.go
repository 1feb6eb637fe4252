package mcpkit_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPackageDocIsAMap checks that the package documentation, the front
// door (go doc github.com/mcpkit/mcpkit), stays a short map: under 400
// words, naming every public package of the module and every module of
// the repository with its packages. A package or module added without a
// line there fails it.
func TestPackageDocIsAMap(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	if n := len(strings.Fields(doc)); n >= 400 {
		t.Errorf("the package documentation has %d words; keep it a map of under 400 (the long parts go to docs/concepts.md)", n)
	}

	modules := []string{"."}
	packages := map[string]bool{} // the directories of Go packages
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (name == "internal" || name == "testdata" || name == "examples" || name == "benchmarks" ||
			name == "docs" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if path != "." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				modules = append(modules, path)
			}
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(entries, func(e fs.DirEntry) bool {
			return strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go")
		}) {
			packages[filepath.ToSlash(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modules[1:] {
		if !strings.Contains(doc, "github.com/mcpkit/mcpkit/"+filepath.ToSlash(m)+":") {
			t.Errorf("the module %s is not named (as github.com/mcpkit/mcpkit/%s: ...)", m, m)
		}
	}
	for dir := range packages {
		inModule := slices.ContainsFunc(modules[1:], func(m string) bool { return dir == m || strings.HasPrefix(dir, m+"/") })
		switch {
		case dir == ".":
			if !strings.Contains(doc, "- mcpkit:") {
				t.Error("the root package is not named (as - mcpkit: ...)")
			}
		case slices.Contains(modules, dir):
			// Named as its module.
		case inModule:
			if !strings.Contains(doc, dir) {
				t.Errorf("the package %s of a module of its own is not named", dir)
			}
		default:
			if !strings.Contains(doc, "- "+dir+":") {
				t.Errorf("the package %s is not named (as - %s: ...)", dir, dir)
			}
		}
	}
	if len(packages) < 10 || len(modules) < 4 {
		t.Errorf("found %d packages and %d modules: the walk is wrong", len(packages), len(modules))
	}
}
