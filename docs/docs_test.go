// Package docs_test checks the guides in this directory: every Go snippet
// builds, is formatted, and every page is linked. The conventions the
// snippets follow are written at the top of README.md here.
package docs_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// implied maps the package names a fragment may use without importing them
// to their import paths. Keep it in step with README.md.
var implied = map[string]string{
	"context":      "context",
	"errors":       "errors",
	"fmt":          "fmt",
	"io":           "io",
	"json":         "encoding/json",
	"log":          "log",
	"slog":         "log/slog",
	"http":         "net/http",
	"httptest":     "net/http/httptest",
	"os":           "os",
	"exec":         "os/exec",
	"signal":       "os/signal",
	"slices":       "slices",
	"strings":      "strings",
	"sync":         "sync",
	"syscall":      "syscall",
	"testing":      "testing",
	"time":         "time",
	"rate":         "golang.org/x/time/rate",
	"jsonschema":   "github.com/google/jsonschema-go/jsonschema",
	"auth":         "github.com/modelcontextprotocol/go-sdk/auth",
	"jsonrpc":      "github.com/modelcontextprotocol/go-sdk/jsonrpc",
	"mcp":          "github.com/modelcontextprotocol/go-sdk/mcp",
	"otel":         "go.opentelemetry.io/otel",
	"propagation":  "go.opentelemetry.io/otel/propagation",
	"sdkmetric":    "go.opentelemetry.io/otel/sdk/metric",
	"sdktrace":     "go.opentelemetry.io/otel/sdk/trace",
	"stdoutmetric": "go.opentelemetry.io/otel/exporters/stdout/stdoutmetric",
	"stdouttrace":  "go.opentelemetry.io/otel/exporters/stdout/stdouttrace",
	"tracetest":    "go.opentelemetry.io/otel/sdk/trace/tracetest",
	"mcpkit":       "github.com/mcpkit/mcpkit",
	"apps":         "github.com/mcpkit/mcpkit/apps",
	"mcpkittest":   "github.com/mcpkit/mcpkit/mcpkittest",
	"middleware":   "github.com/mcpkit/mcpkit/middleware",
	"otelmcp":      "github.com/mcpkit/mcpkit/otelmcp",
	"proxy":        "github.com/mcpkit/mcpkit/proxy",
	"requeststate": "github.com/mcpkit/mcpkit/requeststate",
	"skills":       "github.com/mcpkit/mcpkit/skills",
	"tasks":        "github.com/mcpkit/mcpkit/tasks",
	"tools":        "github.com/mcpkit/mcpkit/tools",
	"transform":    "github.com/mcpkit/mcpkit/transform",
	"visibility":   "github.com/mcpkit/mcpkit/visibility",
}

// notCompiledPages are the pages that may hold "go not-compiled" blocks:
// code of other libraries, which this module does not depend on.
var notCompiledPages = []string{"migrating.md"}

// A kind is how a Go block is checked.
type kind int

const (
	wholeFile   kind = iota // starts with a package clause: built as it is
	fragment                // declarations: built with a package clause and implied imports
	notCompiled             // "go not-compiled": code of another library, shown only
)

// A snippet is one fenced Go block of a page.
type snippet struct {
	page string // file name, "tools.md"
	line int    // line of the block's first line of code, from 1
	kind kind
	code string
	file string // for a whole file that names itself ("// File: main_test.go"), that path
}

func (s snippet) String() string { return fmt.Sprintf("%s:%d", s.page, s.line) }

// fileComment matches the first line of a whole file that says where it
// is saved, "// File: main_test.go": the files a page names this way are
// built together, one package per directory.
var fileComment = regexp.MustCompile(`^// File: (\S+)\n`)

// fence matches a line that opens or closes a fenced code block, with its
// indentation and info string.
var fence = regexp.MustCompile("^( *)```(.*)$")

// extract returns the Go blocks of a page, or an error for a block this test
// cannot check: an indented or unclosed Go fence, or an unknown info string.
func extract(page string, content []byte) ([]snippet, error) {
	var (
		out    []snippet
		open   bool // inside a fenced block
		isGo   bool // ... of Go
		start  int
		k      kind
		byCode bool // the kind is decided by the code: whole file or declarations
		body   strings.Builder
	)
	lines := strings.Split(string(content), "\n")
	for i, line := range lines {
		m := fence.FindStringSubmatch(line)
		switch {
		case !open && m != nil:
			open, start = true, i+2
			info := strings.Fields(m[2])
			isGo = len(info) > 0 && (info[0] == "go" || info[0] == "golang")
			if !isGo {
				continue
			}
			if m[1] != "" {
				return nil, fmt.Errorf("%s:%d: an indented Go block; write it at the start of the line so that it is checked", page, i+1)
			}
			switch {
			case info[0] == "golang":
				return nil, fmt.Errorf("%s:%d: write ```go, not ```golang", page, i+1)
			case len(info) == 1:
				byCode = true
			case len(info) == 2 && info[1] == "not-compiled":
				if !slices.Contains(notCompiledPages, page) {
					return nil, fmt.Errorf("%s:%d: a not-compiled block outside %v; the code of this module must build", page, i+1, notCompiledPages)
				}
				k, byCode = notCompiled, false
			default:
				return nil, fmt.Errorf("%s:%d: unknown info string %q: use ```go, or ```go not-compiled for another library's code", page, i+1, m[2])
			}
			body.Reset()
		case open && m != nil && strings.TrimSpace(m[2]) == "":
			open = false
			if !isGo {
				continue
			}
			s := snippet{page: page, line: start, kind: k, code: body.String()}
			if byCode {
				s.kind = fragment
				if _, err := parser.ParseFile(token.NewFileSet(), "", s.code, parser.PackageClauseOnly); err == nil {
					s.kind = wholeFile
				}
			}
			if m := fileComment.FindStringSubmatch(s.code); m != nil {
				if s.kind != wholeFile {
					return nil, fmt.Errorf("%v: only a whole file (with a package clause) can name its file", s)
				}
				s.file = m[1]
				if !filepath.IsLocal(s.file) || !strings.HasSuffix(s.file, ".go") {
					return nil, fmt.Errorf("%v: %q is not a relative path to a .go file", s, s.file)
				}
				if slices.ContainsFunc(out, func(o snippet) bool { return o.file == s.file }) {
					return nil, fmt.Errorf("%v: a second block names %s", s, s.file)
				}
			}
			out = append(out, s)
		case open && isGo:
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if open {
		return nil, fmt.Errorf("%s:%d: the block opened here is not closed", page, start-1)
	}
	return out, nil
}

func TestExtract(t *testing.T) {
	const (
		whole     = "```go\npackage main\n\nfunc main() {}\n```\n"
		decls     = "```go\nfunc f() {}\n```\n"
		named     = "```go\n// File: cmd/main.go\n\npackage main\n```\n"
		other     = "```go not-compiled\ns := server.NewMCPServer(\"x\", \"1\")\n```\n"
		shell     = "```sh\ngo test ./...\n```\n"
		indented  = "1. a list\n\n   ```go\n   func f() {}\n   ```\n"
		unclosed  = "```go\nfunc f() {}\n"
		golang    = "```golang\nfunc f() {}\n```\n"
		unknownAt = "```go run\nfunc f() {}\n```\n"
	)
	for _, tt := range []struct {
		name, page, content string
		kinds               []kind
		file                string
		err                 string
	}{
		{name: "whole file", page: "a.md", content: whole, kinds: []kind{wholeFile}},
		{name: "declarations", page: "a.md", content: "# A\n\n" + decls, kinds: []kind{fragment}},
		{name: "named file", page: "a.md", content: named, kinds: []kind{wholeFile}, file: "cmd/main.go"},
		{name: "another library", page: "migrating.md", content: other, kinds: []kind{notCompiled}},
		{name: "not Go", page: "a.md", content: shell + decls, kinds: []kind{fragment}},
		{name: "another library elsewhere", page: "a.md", content: other, err: "a.md:1: a not-compiled block outside"},
		{name: "indented", page: "a.md", content: indented, err: "a.md:3: an indented Go block"},
		{name: "unclosed", page: "a.md", content: unclosed, err: "a.md:1: the block opened here is not closed"},
		{name: "golang", page: "a.md", content: golang, err: "a.md:1: write ```go"},
		{name: "unknown info", page: "a.md", content: unknownAt, err: `a.md:1: unknown info string "go run"`},
		{name: "named twice", page: "a.md", content: named + named, err: "a.md:7: a second block names cmd/main.go"},
		{name: "named declarations", page: "a.md", content: "```go\n// File: x.go\nfunc f() {}\n```\n", err: "a.md:2: only a whole file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := extract(tt.page, []byte(tt.content))
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("got error %v, want one starting %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kinds []kind
			for _, s := range got {
				kinds = append(kinds, s.kind)
			}
			if !slices.Equal(kinds, tt.kinds) {
				t.Errorf("kinds %v, want %v", kinds, tt.kinds)
			}
			if tt.file != "" && got[0].file != tt.file {
				t.Errorf("file %q, want %q", got[0].file, tt.file)
			}
		})
	}
}

// pages returns the Markdown pages of this directory.
func pages(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob("*.md")
	if err != nil || len(names) == 0 {
		t.Fatalf("no pages: %v", err)
	}
	return names
}

// snippets returns every Go block of every page.
func snippets(t *testing.T) []snippet {
	t.Helper()
	var all []snippet
	for _, page := range pages(t) {
		content, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		s, err := extract(page, content)
		if err != nil {
			t.Error(err)
			continue
		}
		all = append(all, s...)
	}
	return all
}

// source returns the Go file that s becomes, and its path in the module:
// a directory per block, or per page for the files a page names. The
// //line directive makes the compiler report positions as page:line.
func source(s snippet, pageDir string) (path, src string, err error) {
	directive := fmt.Sprintf("//line %s:%d:1\n", filepath.Join(pageDir, s.page), s.line)
	dir := strings.NewReplacer(".", "_", "-", "_").Replace(s.page)
	if s.file != "" {
		return filepath.Join(dir, s.file), directive + s.code, nil
	}
	dir = fmt.Sprintf("%s_L%d", dir, s.line)
	if s.kind == wholeFile {
		f, err := parser.ParseFile(token.NewFileSet(), "", s.code, parser.ImportsOnly)
		if err != nil {
			return "", "", fmt.Errorf("%v: %v", s, err)
		}
		name := "snippet.go"
		if strings.HasSuffix(f.Name.Name, "_test") || importsTesting(f) {
			name = "snippet_test.go"
		}
		return filepath.Join(dir, name), directive + s.code, nil
	}

	f, err := parser.ParseFile(token.NewFileSet(), "", "package snippet\n"+s.code, parser.AllErrors)
	if err != nil {
		return "", "", fmt.Errorf("%v: not a Go file, nor declarations (statements belong in a function): %v", s, err)
	}
	// The names a fragment uses without declaring them are exactly those it
	// needs imported.
	var imports []string
	unresolved := f.Unresolved
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && slices.Contains(unresolved, id) {
			if path, ok := implied[id.Name]; ok && !slices.Contains(imports, path) {
				imports = append(imports, path)
			}
		}
		return true
	})
	slices.Sort(imports)
	importName := make(map[string]string, len(implied))
	for name, path := range implied {
		importName[path] = name
	}
	var b strings.Builder
	b.WriteString("package snippet\n\nimport (\n")
	for _, path := range imports {
		name := importName[path]
		if name == pathpkg.Base(path) {
			name = ""
		}
		fmt.Fprintf(&b, "\t%s %q\n", name, path)
	}
	b.WriteString(")\n\n")
	b.WriteString(directive)
	b.WriteString(s.code)
	name := "snippet.go"
	if slices.Contains(imports, "testing") {
		name = "snippet_test.go"
	}
	return filepath.Join(dir, name), b.String(), nil
}

func importsTesting(f *ast.File) bool {
	for _, imp := range f.Imports {
		if imp.Path.Value == `"testing"` {
			return true
		}
	}
	return false
}

// TestSnippetsFormatted checks that every Go block is as gofmt writes it,
// so that what readers copy is formatted.
func TestSnippetsFormatted(t *testing.T) {
	for _, s := range snippets(t) {
		got, err := format.Source([]byte(s.code))
		if err != nil {
			t.Errorf("%v: does not parse: %v", s, err)
			continue
		}
		if !bytes.Equal(got, []byte(s.code)) {
			t.Errorf("%v: not gofmt-formatted; gofmt writes it as\n%s", s, got)
		}
	}
}

// TestSnippetsBuild builds every Go block of every page, but those marked
// not-compiled, in one temporary module that requires this one (through a
// replace directive) with the same dependencies, and runs go vet on it:
// one go command for all, offline, with the module cache this module's own
// build filled.
func TestSnippetsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command over every snippet; skipped with -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	pageDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(pageDir)

	dir := t.TempDir()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module := regexp.MustCompile(`(?m)^module .*$`)
	if !module.Match(gomod) {
		t.Fatal("go.mod has no module line")
	}
	gomod = module.ReplaceAll(gomod, []byte("module mcpkit.test/docsnippets"))
	gomod = fmt.Appendf(gomod, "\nrequire github.com/mcpkit/mcpkit v0.0.0\n\nreplace github.com/mcpkit/mcpkit => %s\n", root)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "go.mod"), gomod)
	write(t, filepath.Join(dir, "go.sum"), gosum)

	// The go command below reads this module's Go files where the test
	// cache cannot see it. Stat them here, so that the cache sees them and
	// never reuses a pass for code the snippets were not built against.
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	built := 0
	for _, s := range snippets(t) {
		if s.kind == notCompiled {
			continue
		}
		path, src, err := source(s, pageDir)
		if err != nil {
			t.Error(err)
			continue
		}
		write(t, filepath.Join(dir, path), []byte(src))
		built++
	}
	if t.Failed() {
		return
	}

	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	cmd := exec.Command(goCmd, "vet", "./...")
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		report := strings.ReplaceAll(string(out), root+string(filepath.Separator), "")
		t.Fatalf("go vet of the %d snippets failed (%v); positions are page:line:\n%s", built, err, report)
	}
	t.Logf("built %d snippets", built)

	// The tests in the snippets are built above; running them too takes
	// longer (a binary per page), so it is for those who edit the pages.
	if os.Getenv("MCPKIT_DOCS_RUN") != "" {
		cmd := exec.Command(goCmd, "test", "-count=1", "./...")
		cmd.Dir = dir
		cmd.Env = append(env, "MCPKIT_UPDATE_LOCK=1") // lockfiles are written, not checked, in the temporary module
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go test of the snippets failed (%v):\n%s", err, strings.ReplaceAll(string(out), root+string(filepath.Separator), ""))
		}
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// link matches a Markdown link's target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headings returns the anchors GitHub gives the headings of a Markdown
// file: lower case, punctuation dropped, spaces as hyphens, a repeated
// heading suffixed -1, -2, ...
func headings(content string) []string {
	var out []string
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(content, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor = fmt.Sprintf("%s-%d", anchor, n)
		} else {
			seen[anchor] = 1
		}
		out = append(out, anchor)
	}
	return out
}

// TestLinks checks that every page is linked from this directory's
// README.md (the index) and from the repository's README.md, and that the
// relative links of every page lead to files, and headings, that exist.
func TestLinks(t *testing.T) {
	type target struct{ path, anchor string }
	targets := func(path string) []target {
		content, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []target
		for _, m := range link.FindAllStringSubmatch(string(content), -1) {
			file, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(file, "://") || strings.HasPrefix(file, "mailto:") {
				continue
			}
			if file == "" {
				file = filepath.Base(path)
			}
			out = append(out, target{filepath.Clean(filepath.Join(filepath.Dir(path), file)), anchor})
		}
		return out
	}
	linked := func(ts []target, path string) bool {
		return slices.ContainsFunc(ts, func(t target) bool { return t.path == path })
	}
	index, readme := targets("README.md"), targets(filepath.Join("..", "README.md"))
	for _, page := range pages(t) {
		if page != "README.md" && !linked(index, page) {
			t.Errorf("docs/README.md does not link %s", page)
		}
		if !linked(readme, filepath.Join("..", "docs", page)) {
			t.Errorf("README.md does not link docs/%s", page)
		}
	}
	for _, page := range append(pages(t), filepath.Join("..", "README.md")) {
		for _, target := range targets(page) {
			content, err := os.ReadFile(target.path)
			if err != nil {
				if _, err := os.Stat(target.path); err != nil { // a directory, say
					t.Errorf("%s links %s, which does not exist", page, target.path)
				}
				continue
			}
			if target.anchor != "" && strings.HasSuffix(target.path, ".md") && !slices.Contains(headings(string(content)), target.anchor) {
				t.Errorf("%s links %s#%s, a heading that does not exist", page, target.path, target.anchor)
			}
		}
	}
}

// TestImpliedDocumented checks that README.md here lists every package name
// that fragments may use without importing it.
func TestImpliedDocumented(t *testing.T) {
	content, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, path := range implied {
		if !strings.Contains(string(content), "`"+name+"`") || (name != path && !strings.Contains(string(content), "`"+path+"`")) {
			t.Errorf("README.md does not list the implied import %s (%s)", name, path)
		}
	}
}
