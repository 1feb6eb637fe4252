package mcpkit

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Principal returns who is calling (a tools/call, a prompts/get, a
// resources/read: any [Caller]), as a string to key the records of a
// caller by, in state shared across calls and server replicas (a result
// cache, idempotency records, sealed request state):
//
//   - "sub:" and the user id, when the transport verified a bearer token
//     whose [auth.TokenInfo] has a UserID (the SDK's
//     auth.RequireBearerToken puts it on the request), preceded by the
//     issuer when the verifier gave one (see [TokenIssuerKey]);
//   - otherwise, when the HTTP request carries "Authorization: Bearer
//     <token>", "tok:" and the first 32 hexadecimal digits of the token's
//     SHA-256: the token identifies the caller, and is never itself
//     returned, so that it does not end up in a store or a log;
//   - otherwise "": the anonymous principal. Every call over stdio or
//     in-memory transports, and every unauthenticated HTTP call, has it, so
//     such callers are all one principal.
//
// A token that no verifier checked identifies a caller only as far as the
// caller wants: it separates the records of whoever holds it from
// everyone else's (it is a secret, like a session cookie), but anyone can
// send a new token on each call and be a new principal. So Principal must
// not key what bounds callers (a rate limit, a quota): that is
// [VerifiedPrincipal]'s job. And since every anonymous caller is the same
// principal, a store keyed by Principal alone would show one anonymous
// caller's records to another: the middleware package's CacheResults and
// Idempotent keep no records for "" unless told how to tell such callers
// apart.
//
// Principal never uses the session: on the 2026-07-28 protocol and on
// stateless servers a session lasts one request, and replicas share none.
//
// [auth.TokenInfo]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#TokenInfo
func Principal(c Caller) string {
	if p := VerifiedPrincipal(c); p != "" {
		return p
	}
	if tok, ok := bearerToken(c.Header().Get("Authorization")); ok {
		sum := sha256.Sum256([]byte(tok))
		var b [4 + 32]byte
		copy(b[:], "tok:")
		hex.Encode(b[4:], sum[:16])
		return string(b[:])
	}
	return ""
}

// VerifiedPrincipal returns who is calling (any [Caller]) as far as a
// token verifier vouches for it: "sub:" and the user id when the transport verified a
// bearer token whose [auth.TokenInfo] has a UserID, qualified by the
// issuer when the verifier gave one ([TokenIssuerKey]), as [Principal] does,
// and otherwise "", for a bearer token that no verifier checked as for no
// token at all.
//
// It is the key of what bounds callers: a rate limit per caller, a quota.
// A caller cannot choose it, so a caller cannot buy a fresh budget by
// sending a new token on each call; every caller it returns "" for shares
// one budget. To give unverified callers budgets of their own, verify their
// tokens (auth.RequireBearerToken), or key on something the caller does not
// choose either, such as a header that a proxy you trust sets.
//
// [auth.TokenInfo]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#TokenInfo
func VerifiedPrincipal(c Caller) string {
	if info := c.TokenInfo(); info != nil && info.UserID != "" {
		if iss, _ := info.Extra[TokenIssuerKey].(string); iss != "" {
			return "iss:" + strconv.Quote(iss) + " sub:" + info.UserID
		}
		return "sub:" + info.UserID
	}
	return ""
}

// TokenIssuerKey is the key of [auth.TokenInfo].Extra under which a token
// verifier puts the issuer of the token (its "iss" claim, a string), as the
// verifiers of the mcpkit/oauth module do. With it, [VerifiedPrincipal] and
// [Principal] return `iss:"<issuer>" sub:<user id>` instead of
// "sub:<user id>", so that the same subject at two issuers is two
// principals; the issuer is quoted (Go syntax), so no issuer and subject
// can spell another pair's principal.
//
// [auth.TokenInfo]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#TokenInfo
const TokenIssuerKey = "iss"

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

// principalOf is [Principal]: a listener's, a list's.
func principalOf(c Caller) string { return Principal(c) }
