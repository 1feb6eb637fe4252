package mcpkit_test

import (
	"context"
	"fmt"
	"log"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// switchboard is a Visibility of switches by tool name: a name switched
// off is not served, nor are the tools derived from it.
type switchboard struct {
	mu  sync.Mutex
	off map[string]bool
}

func (s *switchboard) Enabled(t *mcpkit.Tool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for o := range t.Lineage() {
		if s.off[o.Name] {
			return false
		}
	}
	return true
}
func (s *switchboard) PerRequest() bool                                          { return false }
func (s *switchboard) Allowed(context.Context, *mcpkit.Tool, mcpkit.Caller) bool { return true }

// A Visibility whose answers change for named tools alone tells the server
// which with RefreshTools: the server asks again about those tools only,
// at a cost that does not grow with the catalog.
func ExampleServer_RefreshTools() {
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "ops"}, nil)
	purge := versionOf("")
	purge.Name = "purge"
	if err := srv.Add(versionOf(""), purge); err != nil {
		log.Fatal(err)
	}
	board := &switchboard{off: map[string]bool{}}
	srv.SetVisibility(board)

	board.mu.Lock()
	board.off["purge"] = true
	board.mu.Unlock()
	srv.RefreshTools("purge")

	cs := connect(srv)
	defer cs.Close()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range list.Tools {
		fmt.Println("listed:", t.Name)
	}
	// Output:
	// listed: report
}
