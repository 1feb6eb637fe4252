package oauth

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Defaults of [IntrospectionOptions].
const (
	// DefaultCacheSize is how many answers an IntrospectionVerifier keeps.
	DefaultCacheSize = 10000
	// DefaultCacheTTL is how long an IntrospectionVerifier reuses an answer.
	DefaultCacheTTL = time.Minute
)

// maxIntrospectionBytes bounds an introspection response.
const maxIntrospectionBytes = 64 << 10

// IntrospectionOptions configures [NewIntrospectionVerifier]. ClientID
// and ClientSecret are required: an introspection endpoint authenticates
// the resource servers that ask it (RFC 7662, section 2.1).
type IntrospectionOptions struct {
	// Endpoint is the issuer's introspection endpoint; empty means the
	// introspection_endpoint of its metadata (see JWTOptions.JWKSURL).
	Endpoint string

	// ClientID and ClientSecret are this server's credentials at the
	// issuer, sent with HTTP Basic authentication.
	ClientID, ClientSecret string

	// CacheSize bounds how many answers are kept (the least recently
	// used go first); zero means [DefaultCacheSize].
	CacheSize int

	// CacheTTL is how long an answer is reused, never past the token's
	// exp; zero means [DefaultCacheTTL]. A token revoked at the issuer is
	// accepted for up to CacheTTL more.
	CacheTTL time.Duration

	// ClockSkew is the leeway given to exp and nbf; zero means none.
	ClockSkew time.Duration

	// HTTPClient asks the issuer; nil means http.DefaultClient.
	HTTPClient *http.Client

	// Now is the verifier's clock; nil means time.Now.
	Now func() time.Time
}

// An IntrospectionVerifier verifies opaque access tokens by asking the
// issuer (RFC 7662), and caches the answers. Its
// [IntrospectionVerifier.Verify] is an auth.TokenVerifier. It is safe for
// concurrent use.
type IntrospectionVerifier struct {
	issuer, audience string
	endpoint         string
	id, secret       string
	client           *http.Client
	now              func() time.Time
	ttl, skew        time.Duration

	mu    sync.Mutex
	size  int
	lru   *list.List // of *cached, most recent first
	byKey map[[sha256.Size]byte]*list.Element
	asked int // for tests: how many times the issuer was asked
}

// cached is one answer: a token's info, or the error it was refused with.
type cached struct {
	key   [sha256.Size]byte // the token's SHA-256: the token itself is not kept
	info  *auth.TokenInfo
	err   error
	until time.Time
}

// NewIntrospectionVerifier returns a verifier of the tokens that issuer
// issues for audience (this MCP server's canonical URI), which asks the
// issuer's introspection endpoint about each token it has no answer for.
// A token is accepted when the answer says it is active, names issuer
// (when it names an issuer) and has audience in its aud (an answer
// without aud is refused: a token must be bound to this server), and the
// clock is within its exp and nbf, give or take the ClockSkew.
func NewIntrospectionVerifier(ctx context.Context, issuer, audience string, opts *IntrospectionOptions) (*IntrospectionVerifier, error) {
	if issuer == "" || audience == "" {
		return nil, errors.New("oauth: NewIntrospectionVerifier: issuer and audience are required")
	}
	if opts == nil || opts.ClientID == "" || opts.ClientSecret == "" {
		return nil, errors.New("oauth: NewIntrospectionVerifier: ClientID and ClientSecret are required")
	}
	if opts.CacheSize < 0 || opts.CacheTTL < 0 || opts.ClockSkew < 0 {
		return nil, errors.New("oauth: NewIntrospectionVerifier: negative CacheSize, CacheTTL or ClockSkew")
	}
	v := &IntrospectionVerifier{
		issuer:   issuer,
		audience: audience,
		endpoint: opts.Endpoint,
		id:       opts.ClientID,
		secret:   opts.ClientSecret,
		client:   opts.HTTPClient,
		now:      opts.Now,
		ttl:      cmpOr(opts.CacheTTL, DefaultCacheTTL),
		skew:     opts.ClockSkew,
		size:     opts.CacheSize,
		lru:      list.New(),
		byKey:    map[[sha256.Size]byte]*list.Element{},
	}
	if v.size == 0 {
		v.size = DefaultCacheSize
	}
	if v.client == nil {
		v.client = http.DefaultClient
	}
	if v.now == nil {
		v.now = time.Now
	}
	if v.endpoint == "" {
		meta, err := auth.GetAuthServerMetadata(ctx, issuer, v.client)
		if err != nil {
			return nil, fmt.Errorf("oauth: NewIntrospectionVerifier: the issuer's metadata: %w", err)
		}
		if meta == nil || meta.IntrospectionEndpoint == "" {
			return nil, fmt.Errorf("oauth: NewIntrospectionVerifier: the issuer %q publishes no metadata with an introspection_endpoint", issuer)
		}
		v.endpoint = meta.IntrospectionEndpoint
	}
	return v, nil
}

// Verify verifies token as [NewIntrospectionVerifier] says, from the cache
// or by asking the issuer, and returns what it grants: the scope of the
// answer, its exp, its sub as UserID, and every member of the answer in
// Extra (iss under mcpkit.TokenIssuerKey). The TokenInfo of a cached
// answer is shared by the requests that present the token: do not modify
// it. A refused token's error wraps auth.ErrInvalidToken (401); an issuer
// that cannot be asked gives another error (500), which is not cached.
//
// It has the signature of an auth.TokenVerifier; r is not used.
func (v *IntrospectionVerifier) Verify(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	if len(token) > maxTokenBytes {
		return nil, invalid("the token exceeds %d bytes", maxTokenBytes)
	}
	key := sha256.Sum256([]byte(token))
	now := v.now()
	if c, ok := v.lookup(key, now); ok {
		if c.err != nil {
			return nil, c.err
		}
		if err := v.checkTimes(c.info, now); err != nil {
			return nil, err
		}
		return c.info, nil
	}
	answer, err := v.ask(ctx, token)
	if err != nil {
		return nil, err
	}
	info, err := v.judge(answer, now)
	until := now.Add(v.ttl)
	if info != nil && info.Expiration.Add(v.skew).Before(until) {
		until = info.Expiration.Add(v.skew)
	}
	v.store(&cached{key: key, info: info, err: err, until: until})
	return info, err
}

// lookup returns the unexpired answer for key.
func (v *IntrospectionVerifier) lookup(key [sha256.Size]byte, now time.Time) (*cached, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.byKey[key]
	if !ok {
		return nil, false
	}
	c := e.Value.(*cached)
	if !now.Before(c.until) {
		v.lru.Remove(e)
		delete(v.byKey, key)
		return nil, false
	}
	v.lru.MoveToFront(e)
	return c, true
}

// store keeps c, dropping the least recently used answer when full.
func (v *IntrospectionVerifier) store(c *cached) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.byKey[c.key]; ok {
		e.Value = c
		v.lru.MoveToFront(e)
		return
	}
	v.byKey[c.key] = v.lru.PushFront(c)
	for v.lru.Len() > v.size {
		old := v.lru.Back()
		v.lru.Remove(old)
		delete(v.byKey, old.Value.(*cached).key)
	}
}

// ask posts token to the introspection endpoint and returns its answer.
func (v *IntrospectionVerifier) ask(ctx context.Context, token string) (map[string]any, error) {
	v.mu.Lock()
	v.asked++
	v.mu.Unlock()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("oauth: introspection: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(v.id), url.QueryEscape(v.secret)) // RFC 6749, section 2.3.1
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauth: introspection: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("oauth: introspection: HTTP %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIntrospectionBytes+1))
	if err != nil {
		return nil, fmt.Errorf("oauth: introspection: %w", err)
	}
	if len(body) > maxIntrospectionBytes {
		return nil, fmt.Errorf("oauth: introspection: the answer exceeds %d bytes", maxIntrospectionBytes)
	}
	var answer map[string]any
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("oauth: introspection: the answer is not a JSON object: %s", clip(err.Error()))
	}
	return answer, nil
}

// judge turns an introspection answer into the token's info, or the
// reason it is refused.
func (v *IntrospectionVerifier) judge(a map[string]any, now time.Time) (*auth.TokenInfo, error) {
	if active, _ := a["active"].(bool); !active {
		return nil, invalid("the token is not active")
	}
	if iss, ok := a["iss"]; ok && iss != v.issuer {
		return nil, invalid("the token was issued by %q, not %q", clip(fmt.Sprint(iss)), v.issuer)
	}
	if !hasAudience(a["aud"], v.audience) {
		return nil, invalid("the token is not for audience %q", v.audience)
	}
	info := &auth.TokenInfo{Extra: a}
	if s, ok := a["scope"].(string); ok {
		info.Scopes = strings.Fields(s)
	}
	info.UserID, _ = a["sub"].(string)
	if exp, ok := a["exp"].(float64); ok {
		info.Expiration = time.Unix(int64(exp), 0)
	}
	if err := v.checkTimes(info, now); err != nil {
		return nil, err
	}
	if _, ok := a["iss"]; !ok {
		a["iss"] = v.issuer // for the principal: the issuer answered for it
	}
	return info, nil
}

// checkTimes refuses a token past its exp or before its nbf.
func (v *IntrospectionVerifier) checkTimes(info *auth.TokenInfo, now time.Time) error {
	if !info.Expiration.IsZero() && now.After(info.Expiration.Add(v.skew)) {
		return invalid("the token expired at %s", info.Expiration.UTC().Format(time.RFC3339))
	}
	if nbf, ok := info.Extra["nbf"].(float64); ok {
		if t := time.Unix(int64(nbf), 0); now.Add(v.skew).Before(t) {
			return invalid("the token is not valid before %s", t.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// hasAudience reports whether aud, a string or a list of them, is or
// holds want.
func hasAudience(aud any, want string) bool {
	switch aud := aud.(type) {
	case string:
		return aud == want
	case []any:
		return slices.Contains(aud, any(want))
	}
	return false
}

// askedCount returns how many times the issuer was asked.
func (v *IntrospectionVerifier) askedCount() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.asked
}
