package mcpkit

import (
	"bufio"
	"strings"
	"testing"
)

// TestLayerName checks how a layer is named from its symbol and file: a
// command's own middleware is "main" in the program and in its tests,
// inlined or not, also from a -trimpath binary without its source, and a
// library's constructor inlined into a command keeps its package's name.
func TestLayerName(t *testing.T) {
	clauses := map[string]string{
		"/src/gateway/main.go":                 "main",
		"/src/gateway/audit.go":                "main",
		"/src/lib/authz/authz.go":              "authz",
		"/mod/github.com/acme/mw@v1.2.0/mw.go": "mw",
		"audit.go":                             "main", // read in the working directory
	}
	clause := func(file string) string { return clauses[file] }
	for _, tt := range []struct {
		name, sym, file, mainPath, want string
	}{
		{"command", "main.audit.func1", "/src/gateway/audit.go", "example.com/gateway", "main.audit"},
		{"command, own constructor inlined into main", "main.main.audit.func1", "/src/gateway/audit.go", "example.com/gateway", "main.audit"},
		{"command in its tests", "example.com/gateway.TestX.audit.func1", "/src/gateway/audit.go", "example.com/gateway", "main.audit"},
		{"command in its tests, not inlined", "example.com/gateway.audit.func1", "/src/gateway/audit.go", "example.com/gateway", "main.audit"},
		{"command from -trimpath, no source", "main.main.audit.func1", "example.com/gateway/audit.go", "example.com/gateway", "main.audit"},
		{"command in its tests from -trimpath", "example.com/gateway.audit.func1", "example.com/gateway/audit.go", "example.com/gateway", "main.audit"},
		{"command in its tests from -trimpath, inlined", "example.com/gateway.TestX.audit.func1", "example.com/gateway/audit.go", "example.com/gateway", "main.audit"},
		{"library tested from -trimpath", "example.com/gateway/authz.Require.func1", "example.com/gateway/authz/authz.go", "example.com/gateway/authz", "authz.Require"},
		{"command run as a file", "main.main.audit.func1", "/src/gateway/main.go", "command-line-arguments", "main.audit"},
		{"library inlined into a command", "main.main.Timeout.func1", "/src/lib/authz/authz.go", "example.com/gateway", "authz.Timeout"},
		{"module cache library inlined", "main.main.Wrap.func2", "/mod/github.com/acme/mw@v1.2.0/mw.go", "example.com/gateway", "mw.Wrap"},
		{"library inlined into a library", "example.com/app/x.setup.Timeout.func1", "/src/lib/authz/authz.go", "example.com/gateway", "authz.Timeout"},
		{"library's own closure", "github.com/mcpkit/mcpkit/middleware.Timeout.func1", "/src/mw/timeout.go", "example.com/gateway", "middleware.Timeout"},
		{"library tested", "github.com/acme/authz.Require.func1", "/src/lib/authz/authz.go", "github.com/acme/authz", "authz.Require"},
		{"method value", "example.com/app/x.(*T).Wrap-fm", "/src/x/x.go", "example.com/gateway", "x.Wrap"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := layerName(tt.sym, tt.file, tt.mainPath, clause); got != tt.want {
				t.Errorf("layerName(%q, %q) = %q, want %q", tt.sym, tt.file, got, tt.want)
			}
		})
	}
}

func TestReadPackageClause(t *testing.T) {
	for src, want := range map[string]string{
		"package main\n": "main",
		"// Copyright\n\n//go:build linux\n\npackage x_test": "x_test",
		"/* a\n * license */\npackage\tauthz // the doc\n":   "authz",
		"package":              "",
		"func main() {}\n":     "",
		"// only a comment\n":  "",
		"packages main\n":      "",
		"/ package main\n":     "",
		"/* never closed\n":    "",
		"\ufeffpackage main\n": "",
	} {
		if got := readPackageClause(bufio.NewReader(strings.NewReader(src))); got != want {
			t.Errorf("readPackageClause(%q) = %q, want %q", src, got, want)
		}
	}
}
