package main

import (
	"log/slog"
	"testing"

	"github.com/mcpkit/mcpkit/mcpkittest"
)

// TestToolsLocked checks the quickstart's tools, as clients list them,
// against testdata/tools.lock.json: a tool whose definition changes needs
// a new version, and a breaking change a new major version. After a
// deliberate change, record it:
//
//	MCPKIT_UPDATE_LOCK=1 go test ./examples/quickstart
func TestToolsLocked(t *testing.T) {
	srv, err := newServer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	mcpkittest.CheckLock(t, srv, "testdata/tools.lock.json")
}
