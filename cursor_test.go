package mcpkit

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func FuzzCursor(f *testing.F) {
	for _, s := range []string{"", "a", "tool.name-1", "\x00", "ünï"} {
		f.Add(s, encodeCursor(s))
	}
	f.Add("", "not base64!")
	f.Add("", "bWNwa2l0") // "mcpkit" without the colon
	f.Fuzz(func(t *testing.T, name, cursor string) {
		// Every cursor the server hands out decodes to where it stopped.
		after, err := decodeCursor(encodeCursor(name))
		if err != nil || after != name {
			t.Fatalf("round trip of %q: %q, %v", name, after, err)
		}
		// A cursor from the client is either ours or an invalid-params
		// error, never a panic.
		if _, err := decodeCursor(cursor); err != nil {
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("decodeCursor(%q) = %v, want -32602", cursor, err)
			}
		}
	})
}
