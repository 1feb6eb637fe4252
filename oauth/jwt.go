package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Defaults of [JWTOptions].
const (
	// DefaultMinRefreshInterval is how long a JWTVerifier waits, after
	// fetching the issuer's keys, before a token signed with a key it does
	// not know makes it fetch them again.
	DefaultMinRefreshInterval = time.Minute
	// DefaultMaxKeyAge is how long a JWTVerifier uses the keys it fetched
	// before fetching them again.
	DefaultMaxKeyAge = time.Hour
)

// maxTokenBytes bounds the tokens a verifier reads: real access tokens have
// a few KiB at most.
const maxTokenBytes = 16 << 10

// allAlgorithms are the signature algorithms a JWTVerifier may accept:
// the asymmetric ones. HMAC (a shared secret) has no place in a token that
// many resource servers verify with the issuer's public keys, and "none"
// is no signature.
var allAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// JWTOptions configures [NewJWTVerifier]. A nil *JWTOptions means the
// defaults.
type JWTOptions struct {
	// JWKSURL is where the issuer publishes its signing keys. Empty means
	// the jwks_uri of the issuer's metadata, discovered as the MCP
	// authorization spec says (RFC 8414, then OpenID Connect discovery)
	// by the SDK's auth.GetAuthServerMetadata, which also requires what
	// MCP clients require of the metadata (PKCE with S256 advertised).
	JWKSURL string

	// Algorithms are the signature algorithms accepted; nil means RS256
	// and ES256. Only asymmetric algorithms (RS*, PS*, ES*, EdDSA) may be
	// named: NewJWTVerifier refuses "none" and HS256, HS384, HS512.
	Algorithms []string

	// ClockSkew is the leeway given to the token's exp and nbf claims
	// against the verifier's clock: a token is accepted until exp +
	// ClockSkew, and from nbf - ClockSkew. Zero means none.
	ClockSkew time.Duration

	// MinRefreshInterval is the least time between two fetches of the
	// issuer's keys, however many tokens signed with keys not in the set
	// arrive, once the issuer gave some; before that, failed attempts back
	// off from a second up to it. Zero means [DefaultMinRefreshInterval].
	MinRefreshInterval time.Duration

	// MaxKeyAge is how long fetched keys are used before they are fetched
	// again; zero means [DefaultMaxKeyAge].
	MaxKeyAge time.Duration

	// Timeout bounds each fetch of the issuer's metadata and keys, and so
	// the time a token waits for one; zero means [DefaultTimeout].
	Timeout time.Duration

	// AcceptPlainJWT accepts, besides tokens typed at+jwt, those typed JWT
	// and untyped ones: for issuers that do not type their access tokens
	// as RFC 9068 asks (zitadel/oidc's OP, among others). Tokens of other
	// types (id_token+jwt, dpop+jwt, ...) are refused either way.
	AcceptPlainJWT bool

	// HTTPClient fetches the issuer's metadata and keys; nil means a
	// client with a time limit of Timeout.
	HTTPClient *http.Client

	// CacheSize bounds how many verified tokens are kept (the least
	// recently used go first), so that a token presented again is not
	// verified again; zero means [DefaultCacheSize].
	CacheSize int

	// CacheBytes bounds the memory the kept tokens take, as estimated from
	// their claims; zero means [DefaultCacheBytes].
	CacheBytes int

	// Now is the verifier's clock; nil means time.Now.
	Now func() time.Time
}

// A JWTVerifier verifies JWT access tokens (RFC 9068) of one issuer for one
// resource server. Its [JWTVerifier.Verify] is an auth.TokenVerifier for
// the SDK's auth.RequireBearerToken. It is safe for concurrent use.
type JWTVerifier struct {
	issuer, audience string
	plain            bool // AcceptPlainJWT
	skew             time.Duration
	now              func() time.Time
	keys             *keySet
	oidc             *oidc.IDTokenVerifier
	cache            *lru[digest, verified] // by the token's SHA-256: the token itself is not kept
}

// verified is a token's verification: what it grants, and the key that
// verified it.
type verified struct {
	info   *auth.TokenInfo
	signer keyID
}

// NewJWTVerifier returns a verifier of the JWT access tokens that issuer
// issues for audience, the canonical URI of this MCP server (the resource
// clients name in their token requests, RFC 8707): a token is accepted
// when
//
//   - it is a JWS signed with one of the issuer's keys (JWKS, fetched and
//     cached: see [JWTOptions]) by an allowed algorithm;
//   - its iss is issuer, and its aud is, or contains, audience: a token
//     issued for another resource is refused, so it cannot be passed
//     through;
//   - its typ header is at+jwt (RFC 9068), or JWT or none with
//     AcceptPlainJWT: an ID token or a DPoP proof is no access token;
//   - it has an exp, and the verifier's clock is within exp and nbf,
//     give or take the ClockSkew.
//
// A token verified is kept, by its SHA-256, until exp + ClockSkew, while
// the key that verified it is in the issuer's set, and within CacheSize
// and CacheBytes: presented again, it costs no signature check. Refused
// tokens are not kept.
//
// NewJWTVerifier fetches nothing: the issuer's metadata (when opts has no
// JWKSURL) and keys are fetched when the first token needs them, so a
// verifier can be made while the issuer is down, and tokens verify once
// it answers. The fetches run on a context of the verifier's own, which
// keeps ctx's values but not its cancellation. NewJWTVerifier returns an
// error when issuer or audience is empty, when a URL cannot be fetched
// (the JWKSURL, or an issuer to discover that is not https or loopback),
// or when an option is out of range.
func NewJWTVerifier(ctx context.Context, issuer, audience string, opts *JWTOptions) (*JWTVerifier, error) {
	if issuer == "" || audience == "" {
		return nil, errors.New("oauth: NewJWTVerifier: issuer and audience are required")
	}
	var o JWTOptions
	if opts != nil {
		o = *opts
	}
	algs := o.Algorithms
	if algs == nil {
		algs = []string{string(jose.RS256), string(jose.ES256)}
	}
	for _, a := range algs {
		if !slices.Contains(allAlgorithms, jose.SignatureAlgorithm(a)) {
			return nil, fmt.Errorf("oauth: NewJWTVerifier: algorithm %q is not allowed: only asymmetric signatures (RS*, PS*, ES*, EdDSA)", clip(a))
		}
	}
	if o.ClockSkew < 0 || o.Timeout < 0 || o.CacheSize < 0 || o.CacheBytes < 0 {
		return nil, errors.New("oauth: NewJWTVerifier: negative ClockSkew, Timeout, CacheSize or CacheBytes")
	}
	if o.JWKSURL != "" {
		if err := checkURL("JWKSURL", o.JWKSURL, false); err != nil {
			return nil, fmt.Errorf("oauth: NewJWTVerifier: %w", err)
		}
	} else if err := checkURL("issuer", issuer, true); err != nil {
		return nil, fmt.Errorf("oauth: NewJWTVerifier: %w", err)
	}
	timeout := timeoutOr(o.Timeout)
	now := o.Now
	if now == nil {
		now = time.Now
	}
	minRefresh := cmpOr(o.MinRefreshInterval, DefaultMinRefreshInterval)
	ks := &keySet{
		issuer:  issuer,
		url:     o.JWKSURL,
		client:  httpClient(o.HTTPClient, timeout),
		now:     now,
		maxAge:  cmpOr(o.MaxKeyAge, DefaultMaxKeyAge),
		fetches: newFetcher(ctx, timeout, minRefresh, now),
	}
	v := &JWTVerifier{
		issuer:   issuer,
		audience: audience,
		plain:    o.AcceptPlainJWT,
		skew:     o.ClockSkew,
		now:      now,
		keys:     ks,
		oidc: oidc.NewVerifier(issuer, ks, &oidc.Config{
			ClientID:             audience,
			SupportedSigningAlgs: slices.Clone(algs),
			SkipExpiryCheck:      true, // checked in Verify, with ClockSkew
			Now:                  now,
		}),
		cache: newLRU[digest, verified](cmpOr(o.CacheSize, DefaultCacheSize), cmpOr(o.CacheBytes, DefaultCacheBytes)),
	}
	ks.dropped = v.forget
	return v, nil
}

// forget drops the cached tokens that the keys ids verified.
func (v *JWTVerifier) forget(ids []keyID) {
	v.cache.removeIf(func(t verified) bool { return slices.Contains(ids, t.signer) })
}

func cmpOr[T time.Duration | int](d, def T) T {
	if d > 0 {
		return d
	}
	return def
}

// Verify verifies token as [NewJWTVerifier] says, and returns what it
// grants: its scopes (the scope claim, space-separated, or an scp claim,
// a list or a string), its exp as Expiration, its sub as UserID, and every
// claim in Extra (iss included, under mcpkit.TokenIssuerKey, so that the
// principal of the caller names the issuer; JSON numbers as float64) for
// visibility predicates and requirements to read. An error wraps
// auth.ErrInvalidToken, so that auth.RequireBearerToken answers 401; its
// text is short and echoes no more than a clipped claim. A token whose
// keys cannot be had (the issuer down or hung, before its first keys or
// for a key not yet known) is refused so too, within the Timeout.
//
// A token verified before is taken from the cache (see
// [NewJWTVerifier]), its exp and nbf checked again: the TokenInfo is
// shared by the requests that present the token, so do not modify it.
//
// It has the signature of an auth.TokenVerifier; r is not used.
func (v *JWTVerifier) Verify(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	if len(token) > maxTokenBytes {
		return nil, invalid("the token exceeds %d bytes", maxTokenBytes)
	}
	key := digestOf(token)
	now := v.now()
	if t, ok := v.cache.get(key, now); ok {
		if v.keys.holds(t.signer) {
			if err := checkTimes(t.info, now, v.skew); err != nil {
				return nil, err
			}
			return t.info, nil
		}
		v.cache.remove(key) // its key was withdrawn since: verify it again
	}
	t, err := v.verify(ctx, token)
	if err != nil {
		return nil, err
	}
	v.cache.put(key, t, cachedUntil(t.info.Expiration, v.skew), infoBytes(t.info))
	return t.info, nil
}

// verify verifies token, as Verify does without its cache.
func (v *JWTVerifier) verify(ctx context.Context, token string) (verified, error) {
	if err := checkSpelling(token); err != nil {
		return verified{}, err
	}
	if err := checkType(token, v.plain); err != nil {
		return verified{}, err
	}
	var signer keyID
	idt, err := v.oidc.Verify(context.WithValue(ctx, signerKey{}, &signer), token)
	if err != nil {
		if v.keys.never() {
			// No key of the issuer's was ever had (it is down or hung since
			// start): nothing says the token is bad, and a 401 would make
			// clients throw it away. auth.RequireBearerToken answers 500.
			return verified{}, ErrIssuerUnavailable
		}
		return verified{}, invalid("%s", clip(strings.TrimPrefix(err.Error(), "oidc: ")))
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return verified{}, invalid("claims: %s", clip(err.Error()))
	}
	if idt.Expiry.IsZero() {
		return verified{}, invalid("the token has no exp")
	}
	info := &auth.TokenInfo{
		Scopes:     scopesOf(claims),
		Expiration: idt.Expiry,
		UserID:     idt.Subject,
		Extra:      claims,
	}
	if err := checkTimes(info, v.now(), v.skew); err != nil {
		return verified{}, err
	}
	return verified{info, signer}, nil
}

// ErrIssuerUnavailable is the error of a token that cannot be verified
// because the issuer's keys were never had: the issuer has been down, or
// hung, since the verifier was made. It does not wrap
// auth.ErrInvalidToken, so auth.RequireBearerToken answers 500, and a
// client keeps its token and tries again, rather than 401, which would
// make it throw the token away and send its user to an issuer that is
// down.
var ErrIssuerUnavailable = errors.New("oauth: the token's issuer cannot be reached to verify it")

// checkSpelling refuses a compact JWS a part of which ends in a base64url
// character whose bits past the part's last byte are not zero, as no
// encoder writes them and RFC 4648 (section 3.5) lets a decoder refuse.
// Decoders here ignore those bits, so most tokens have
// several spellings that verify alike (16 of an RS256 signature); the
// cache, keyed by the token's bytes, would keep each apart, and a caller
// with one valid token could fill it with its spellings.
func checkSpelling(token string) error {
	for part := range strings.SplitSeq(token, ".") {
		if part == "" {
			continue
		}
		v := strings.IndexByte(base64url, part[len(part)-1])
		if v < 0 {
			continue // not base64url at all: the parsers refuse it
		}
		switch len(part) % 4 {
		case 2: // 12 bits for one byte
			v &= 0xf
		case 3: // 18 bits for two bytes
			v &= 0x3
		default:
			v = 0
		}
		if v != 0 {
			return invalid("malformed token: not canonical base64url")
		}
	}
	return nil
}

const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// checkType refuses a token whose typ header is not at+jwt (RFC 9068,
// section 4: "application/" may precede it, and media types have no case),
// or, with plain, JWT or none. A header that cannot be read is refused
// here, so that no parser more lenient than this one sees it.
func checkType(token string, plain bool) error {
	head, _, ok := strings.Cut(token, ".")
	if !ok {
		return invalid("malformed token: not a JWS")
	}
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return invalid("malformed token: its header is not base64url")
	}
	// The header's names are matched exactly, as JOSE says (encoding/json
	// would match "TYP" and "Typ" too).
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return invalid("malformed token: its header is not a JSON object")
	}
	var h struct{ Typ any }
	if raw, ok := fields["typ"]; ok {
		if err := json.Unmarshal(raw, &h.Typ); err != nil {
			return invalid("malformed token: its typ cannot be read")
		}
	}
	if h.Typ == nil {
		if plain {
			return nil
		}
		return invalid("the token has no typ; an access token's is at+jwt (RFC 9068)")
	}
	typ, _ := h.Typ.(string)
	t := strings.ToLower(typ)
	t = strings.TrimPrefix(t, "application/")
	if t == "at+jwt" || plain && t == "jwt" {
		return nil
	}
	return invalid("the token's typ is %q, not at+jwt (RFC 9068)", clip(fmt.Sprint(h.Typ)))
}

// scopesOf returns the scopes a token's claims grant: "scope", a string
// of space-separated scopes (RFC 9068, RFC 8693), or else "scp", a list of
// strings or one string of them, as some issuers write it.
func scopesOf(claims map[string]any) []string {
	if s, ok := claims["scope"].(string); ok {
		return strings.Fields(s)
	}
	switch scp := claims["scp"].(type) {
	case string:
		return strings.Fields(scp)
	case []any:
		out := make([]string, 0, len(scp))
		for _, e := range scp {
			if s, ok := e.(string); ok && s != "" && !strings.ContainsAny(s, " \t\n") {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// invalid returns an error that wraps auth.ErrInvalidToken.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", auth.ErrInvalidToken, fmt.Sprintf(format, args...))
}

// clip returns s cut to 200 bytes at a character boundary, with "..."
// when cut: what errors echo of a token is bounded.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
