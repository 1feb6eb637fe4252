package visibility

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"

	"github.com/mcpkit/mcpkit"
)

// A Predicate decides, for one request, whether its caller may see and call
// the tools a [Require] rule selects. It reads what the request carries:
// c's verified bearer token ([mcpkit.Caller.TokenInfo]), its HTTP headers,
// its protocol version and client capabilities, and ctx, which holds what
// the embedding service put in the request's context. It must never key on
// the session.
//
// A Predicate is called for every tool the request touches that a Require
// rule selects (one for a tools/call, up to a page of tools for a
// tools/list), from many goroutines at once: it must be fast, must not
// block, and should not allocate.
//
// On stdio and in-memory transports a request has no headers and no token;
// the predicates of this package that read them then answer as they would
// for a stranger (false), and so should yours.
type Predicate func(ctx context.Context, c mcpkit.Caller) bool

// Authenticated returns a Predicate that holds for requests with a
// verified bearer token (behind the SDK's auth.RequireBearerToken, or any
// middleware that sets the token info the SDK reads).
func Authenticated() Predicate {
	return func(_ context.Context, c mcpkit.Caller) bool { return c.TokenInfo() != nil }
}

// Scopes returns a Predicate that holds for requests whose verified bearer
// token grants every one of scopes. It panics if scopes is empty.
func Scopes(scopes ...string) Predicate {
	if len(scopes) == 0 {
		panic("visibility: Scopes: no scope")
	}
	scopes = slices.Clone(scopes)
	return func(_ context.Context, c mcpkit.Caller) bool {
		info := c.TokenInfo()
		if info == nil {
			return false
		}
		for _, s := range scopes {
			if !slices.Contains(info.Scopes, s) {
				return false
			}
		}
		return true
	}
}

// Users returns a Predicate that holds for requests whose verified bearer
// token's user (its subject, auth.TokenInfo.UserID) is one of ids. A token
// without a user never matches. It panics if ids is empty.
func Users(ids ...string) Predicate {
	if len(ids) == 0 {
		panic("visibility: Users: no user")
	}
	ids = slices.Clone(ids)
	return func(_ context.Context, c mcpkit.Caller) bool {
		info := c.TokenInfo()
		return info != nil && info.UserID != "" && slices.Contains(ids, info.UserID)
	}
}

// Claim returns a Predicate that holds for requests whose verified bearer
// token has the claim name (a key of auth.TokenInfo.Extra) with one of
// values: a string, a bool, or a number of any Go numeric type. A claim
// that is a list (a JSON array: []any, []string) holds when one of its
// elements does. Numbers compare by value, whatever their Go type (a JSON
// number decoded into Extra is a float64, or a json.Number). With no
// values, Claim holds when the claim is present and not null; note that
// this includes a claim that is false.
//
// A value matches a claim of another JSON type that it spells, since
// issuers differ in how they write a flag or a level: the string "true"
// matches the boolean true (and "false" false), a string that is a JSON
// number ("42", "1.5") matches that number, and the other way round, true
// matches the string "true" and 42 the string "42". Claim("admin", "true")
// and Claim("admin", true) hold alike for {"admin": true} and for
// {"admin": "true"}. No other text is taken for a boolean or a number:
// "yes", "1" for true, " 42".
//
// Claim panics if a value is not a string, a bool or a number.
func Claim(name string, values ...any) Predicate {
	var want claimValues
	for i, v := range values {
		switch v := v.(type) {
		case string:
			want.strings = append(want.strings, v)
		case bool:
			want.bools[boolIndex(v)] = true
		default:
			f, ok := number(v)
			if !ok {
				panic(fmt.Sprintf("visibility: Claim: value %d is a %T, not a string, bool or number", i, v))
			}
			want.numbers = append(want.numbers, f)
		}
		if s, ok := v.(string); ok {
			// The boolean or number the string spells, if any, for claims
			// of that type (a claim that is a string is matched by text).
			if b, ok := jsonBool(s); ok {
				want.spelledBools[boolIndex(b)] = true
			} else if f, ok := jsonNumber(s); ok {
				want.spelled = append(want.spelled, f)
			}
		}
	}
	present := len(values) == 0
	return func(_ context.Context, c mcpkit.Caller) bool {
		info := c.TokenInfo()
		if info == nil {
			return false
		}
		v, ok := info.Extra[name]
		if !ok || v == nil {
			return false
		}
		if present {
			return true
		}
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				if want.match(e) {
					return true
				}
			}
			return false
		case []string:
			for _, e := range v {
				if want.match(e) {
					return true
				}
			}
			return false
		}
		return want.match(v)
	}
}

// claimValues are the values a Claim accepts, by kind, so that matching
// needs no allocation. A string that spells a boolean or a number is also
// held as that boolean or number.
//
// A string is matched against a string by its text alone: two strings
// that spell the same number in other ways ("42" and "42.0") or that
// spell numbers too large for a float64 to tell apart (IDs past 2^53)
// are different strings.
type claimValues struct {
	strings      []string
	numbers      []float64 // given as numbers
	bools        [2]bool   // given as booleans: [false, true]
	spelled      []float64 // spelled by the strings given
	spelledBools [2]bool   // spelled by the strings given
}

func (w *claimValues) match(v any) bool {
	switch v := v.(type) {
	case string:
		if slices.Contains(w.strings, v) {
			return true
		}
		// A claim that spells a boolean or a number matches the value
		// given as that boolean or number.
		if b, ok := jsonBool(v); ok {
			return w.bools[boolIndex(b)]
		}
		f, ok := jsonNumber(v)
		return ok && slices.Contains(w.numbers, f)
	case bool:
		return w.bools[boolIndex(v)] || w.spelledBools[boolIndex(v)]
	}
	f, ok := number(v)
	return ok && (slices.Contains(w.numbers, f) || slices.Contains(w.spelled, f))
}

// jsonBool returns the boolean s spells as a JSON literal: "true" or
// "false", nothing else.
func jsonBool(s string) (b, ok bool) {
	switch s {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// jsonNumber returns the number s spells as a JSON number: an optional
// minus, digits without a leading zero, an optional fraction and
// exponent; no blanks, no "+", no hex, no "NaN" or "Inf". A number a
// float64 cannot hold exactly as an integer (past 2^53) is not taken
// for one: such strings are IDs, which must not match their neighbours.
func jsonNumber(s string) (float64, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	start := i
	if n := digits(); n == 0 || n > 1 && s[start] == '0' {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Abs(f) >= 1<<53 {
		return 0, false
	}
	return f, true
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// number returns v as a float64 if it is a number.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case int:
		return float64(v), true
	case int8:
		return float64(v), true
	case int16:
		return float64(v), true
	case int32:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint:
		return float64(v), true
	case uint8:
		return float64(v), true
	case uint16:
		return float64(v), true
	case uint32:
		return float64(v), true
	case uint64:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

// Header returns a Predicate that holds for requests whose HTTP header name
// has one of values (compared exactly, each value of a repeated header on
// its own; a comma-separated list is one value). With no values, it holds
// when the header is present. Requests without HTTP (stdio, in-memory)
// have no headers.
//
// A header is what the client says, not what it proves: use it for what a
// trusted proxy in front of the server sets, or for preferences, and a
// token ([Scopes], [Claim], [Users]) for permissions.
func Header(name string, values ...string) Predicate {
	key := http.CanonicalHeaderKey(name)
	values = slices.Clone(values)
	return func(_ context.Context, c mcpkit.Caller) bool {
		got := c.Header()[key]
		if len(values) == 0 {
			return len(got) > 0
		}
		for _, v := range got {
			if slices.Contains(values, v) {
				return true
			}
		}
		return false
	}
}

// ProtocolAtLeast returns a Predicate that holds for requests made with
// MCP protocol version version or a later one ("2026-07-28", say: protocol
// versions are dates and compare as strings). A request whose version is
// not known does not hold.
func ProtocolAtLeast(version string) Predicate {
	return func(_ context.Context, c mcpkit.Caller) bool {
		v := c.ProtocolVersion()
		return v != "" && v >= version
	}
}

// Any returns a Predicate that holds when at least one of ps does, asking
// them in order. It panics if one of ps is nil.
func Any(ps ...Predicate) Predicate {
	for i, p := range ps {
		if p == nil {
			panic(fmt.Sprintf("visibility: Any: predicate %d is nil", i))
		}
	}
	ps = slices.Clone(ps)
	return func(ctx context.Context, c mcpkit.Caller) bool {
		for _, p := range ps {
			if p(ctx, c) {
				return true
			}
		}
		return false
	}
}
