package docs_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// subModules are the modules of their own in this repository, by directory.
var subModules = []string{"oauth", "openapi", "redisstore"}

// addRoot and addModule are the commands that add mcpkit's modules to a
// module of yours while mcpkit is unpublished, as the pages give them, with
// a checkout of the repository at ../mcpkit.
const addRoot = "go mod edit -require=github.com/mcpkit/mcpkit@v0.0.0 -replace=github.com/mcpkit/mcpkit=../mcpkit"

func addModule(m string) string {
	return fmt.Sprintf("go mod edit -require=github.com/mcpkit/mcpkit/%s@v0.0.0 -replace=github.com/mcpkit/mcpkit/%[1]s=../mcpkit/%[1]s", m)
}

// addWorkspace is the go.work alternative of README.md.
const addWorkspace = "go work init . ../mcpkit ../mcpkit/openapi"

// TestModulePagesGiveTheRecipe checks that each module's pages give the
// commands that add it today, the root's and its own, and that README.md
// gives them all.
func TestModulePagesGiveTheRecipe(t *testing.T) {
	pages := map[string][]string{
		"../README.md":            append([]string{addRoot, addWorkspace}, mapped(subModules, addModule)...),
		"openapi.md":              {addRoot, addModule("openapi")},
		"authorization.md":        {addRoot, addModule("oauth")},
		"../oauth/doc.go":         {addRoot, addModule("oauth")},
		"../redisstore/doc.go":    {addRoot, addModule("redisstore")},
		"../redisstore/README.md": {addRoot, addModule("redisstore")},
	}
	for page, cmds := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), "//\t", "") // a doc comment's code block
		for _, cmd := range cmds {
			if !strings.Contains(text, cmd) {
				t.Errorf("%s does not give %q", page, cmd)
			}
		}
	}
}

func mapped(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// TestModuleRecipes runs the commands of the pages in a module beside a
// checkout (this one), as a user would, and builds a program that imports
// every module: with replace directives and go mod tidy, and with the
// go.work of README.md. The go command runs offline, on the module cache;
// the test skips when the cache lacks a dependency of the modules (a
// machine that never built them).
func TestModuleRecipes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped with -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// The modules' checksums, so that no checksum database is asked.
	var sums []byte
	for _, dir := range append([]string{"."}, subModules...) {
		b, err := os.ReadFile(filepath.Join(root, dir, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, b...)
	}
	offline := []string{"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS="}

	// run runs a command of the pages in dir, with ../mcpkit standing for
	// this checkout.
	run := func(t *testing.T, dir, cmd string, env ...string) {
		t.Helper()
		rel, err := filepath.Rel(dir, root)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Fields(strings.ReplaceAll(cmd, "../mcpkit", filepath.ToSlash(rel)))
		c := exec.Command(goCmd, args[1:]...)
		c.Dir = dir
		c.Env = append(append(os.Environ(), offline...), env...)
		out, err := c.CombinedOutput()
		if err == nil {
			return
		}
		if strings.Contains(string(out), "GOPROXY=off") && !missesMcpkit(string(out)) {
			t.Skipf("%s: the module cache lacks a dependency of mcpkit's modules (the recipe needs the network then):\n%s", cmd, out)
		}
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	app := func(t *testing.T, imports ...string) string {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "go.mod"), []byte("module example.com/app\n\ngo 1.25.0\n"))
		write(t, filepath.Join(dir, "go.sum"), sums)
		var src strings.Builder
		src.WriteString("package main\n\nimport (\n")
		for _, imp := range imports {
			fmt.Fprintf(&src, "\t_ %q\n", imp)
		}
		src.WriteString(")\n\nfunc main() {}\n")
		write(t, filepath.Join(dir, "main.go"), []byte(src.String()))
		return dir
	}
	every := []string{
		"github.com/mcpkit/mcpkit", "github.com/mcpkit/mcpkit/oauth", "github.com/mcpkit/mcpkit/oauth/oauthtest",
		"github.com/mcpkit/mcpkit/openapi", "github.com/mcpkit/mcpkit/redisstore",
	}

	t.Run("replace", func(t *testing.T) {
		dir := app(t, every...)
		run(t, dir, addRoot, "GOWORK=off")
		for _, m := range subModules {
			run(t, dir, addModule(m), "GOWORK=off")
		}
		run(t, dir, "go mod tidy", "GOWORK=off")
		run(t, dir, "go build ./...", "GOWORK=off")
	})
	t.Run("go.work", func(t *testing.T) {
		dir := app(t, "github.com/mcpkit/mcpkit", "github.com/mcpkit/mcpkit/openapi")
		run(t, dir, addWorkspace, "GOWORK=")
		run(t, dir, "go build ./...", "GOWORK=")
	})
}

// missesMcpkit reports whether the go command's output says that it looked
// for one of mcpkit's own modules on the network: the recipe did not
// reach it, which no module cache excuses.
func missesMcpkit(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "github.com/mcpkit/mcpkit") && strings.Contains(line, "GOPROXY=off") {
			return true
		}
	}
	return false
}
