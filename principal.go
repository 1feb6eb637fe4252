package mcpkit

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Principal returns who is calling, as a string to key state shared across
// calls and server replicas (rate limits, caches, idempotency records) by:
//
//   - "sub:" and the user id, when the transport verified a bearer token
//     whose [auth.TokenInfo] has a UserID (the SDK's
//     auth.RequireBearerToken puts it on the request);
//   - otherwise, when the HTTP request carries "Authorization: Bearer
//     <token>", "tok:" and the first 32 hexadecimal digits of the token's
//     SHA-256: the token identifies the caller, and is never itself
//     returned, so that it does not end up in a store or a log;
//   - otherwise "": the anonymous principal. Every call over stdio or
//     in-memory transports, and every unauthenticated HTTP call, has it, so
//     such callers all share one key.
//
// A token that no verifier checked identifies a caller only as far as the
// caller wants: anyone can send a new token on each call and be a new
// principal. Behind such a transport, limits keyed on Principal are limits
// per claimed identity; verify tokens (or key on something else) where that
// matters.
//
// Principal never uses the session: on the 2026-07-28 protocol and on
// stateless servers a session lasts one request, and replicas share none.
//
// [auth.TokenInfo]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#TokenInfo
func Principal(req *Request) string {
	if info := req.TokenInfo(); info != nil && info.UserID != "" {
		return "sub:" + info.UserID
	}
	if tok, ok := bearerToken(req.Header().Get("Authorization")); ok {
		sum := sha256.Sum256([]byte(tok))
		var b [4 + 32]byte
		copy(b[:], "tok:")
		hex.Encode(b[4:], sum[:16])
		return string(b[:])
	}
	return ""
}

// bearerToken returns the token of an Authorization header value of the
// form "Bearer <token>", read as the SDK's auth.RequireBearerToken reads it
// (two fields, the scheme in any case), and whether there is one.
func bearerToken(v string) (string, bool) {
	if v == "" {
		return "", false
	}
	f := strings.Fields(v)
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return "", false
	}
	return f[1], true
}
