package tasks

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// principal returns who is calling, for binding a task to its creator:
// the verified token's user ID; else "token:" and the SHA-256 of the
// bearer token the request carried (a token whose verifier gives no user
// ID, or a server without a verifier); else "" (stdio, in-memory, or no
// credentials: every such caller is the same principal).
//
// It stands in for mcpkit.Principal, which is on its way; when that lands,
// this should call it, so that one rule names callers everywhere.
func principal(info *auth.TokenInfo, h http.Header) string {
	if info != nil && info.UserID != "" {
		return "user:" + info.UserID
	}
	if v, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer "); ok && v != "" {
		sum := sha256.Sum256([]byte(v))
		return "token:" + hex.EncodeToString(sum[:])
	}
	return ""
}
