package mcpkittest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
)

// printer is a testing.TB that prints what CheckLock reports, so that the
// example can run outside a test; a test passes its *testing.T. It shows
// the temporary directory as "testdata".
type printer struct {
	testing.TB
	dir string
}

func (printer) Helper()                  {}
func (printer) Context() context.Context { return context.Background() }

func (p printer) Errorf(format string, args ...any) { p.print("FAIL", format, args) }
func (p printer) Logf(format string, args ...any)   { p.print("log", format, args) }

func (p printer) print(prefix, format string, args []any) {
	fmt.Println(prefix+":", strings.ReplaceAll(fmt.Sprintf(format, args...), p.dir, "testdata"))
}

// ExampleCheckLock records a server's tools in a lockfile, then catches a
// change to a description that came without a new version. In a project,
// the check is one line in a test:
//
//	func TestToolsLocked(t *testing.T) {
//		mcpkittest.CheckLock(t, newServer(), "testdata/tools.lock.json")
//	}
//
// and MCPKIT_UPDATE_LOCK=1 go test writes the lockfile.
func ExampleCheckLock() {
	dir, err := os.MkdirTemp("", "lock")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tools.lock.json")
	tb := printer{dir: dir}

	newServer := func(description, version string) *mcpkit.Server {
		srv := mcpkit.NewServer(&mcp.Implementation{Name: "example"}, nil)
		srv.Add(&mcpkit.Tool{
			Tool: mcp.Tool{
				Name:        "greet",
				Description: description,
				InputSchema: map[string]any{
					"type":       "object",
					"properties": map[string]any{"name": map[string]any{"type": "string"}},
					"required":   []string{"name"},
				},
			},
			Handler: mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			}),
			Version: version,
		})
		return srv
	}

	os.Setenv(mcpkittest.UpdateLockEnv, "1")
	mcpkittest.CheckLock(tb, newServer("Greet someone.", "1.0"), path)
	os.Unsetenv(mcpkittest.UpdateLockEnv)
	lock, _ := os.ReadFile(path)
	fmt.Print(string(lock))

	mcpkittest.CheckLock(tb, newServer("Greet someone.", "1.0"), path)                         // unchanged: passes
	mcpkittest.CheckLock(tb, newServer("Greet someone; say the password first.", "1.0"), path) // no new version: fails
	// Output:
	// log: mcpkittest: wrote testdata/tools.lock.json (1 tool)
	// {
	//   "lockVersion": 1,
	//   "tools": [
	//     {
	//       "name": "greet",
	//       "version": "1.0",
	//       "fingerprint": "sha256:85579e1732957d968a00aac885c1b8421aa368bb797f1f8c01493d6670a68543",
	//       "definition": {
	//         "description": "Greet someone.",
	//         "inputSchema": {
	//           "properties": {
	//             "name": {
	//               "type": "string"
	//             }
	//           },
	//           "required": [
	//             "name"
	//           ],
	//           "type": "object"
	//         },
	//         "name": "greet"
	//       }
	//     }
	//   ]
	// }
	// FAIL: mcpkittest: testdata/tools.lock.json: tool "greet": the definition changed but its version "1.0" did not; bump the version (the major version for a breaking change), then record it: MCPKIT_UPDATE_LOCK=1 go test
	//	/description: description changed
	//		old: "Greet someone."
	//		new: "Greet someone; say the password first."
}
