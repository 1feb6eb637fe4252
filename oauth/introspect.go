package oauth

import (
	"context"
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
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/sync/singleflight"
)

// DefaultCacheTTL is how long an IntrospectionVerifier reuses an answer.
const DefaultCacheTTL = time.Minute

// maxIntrospectionBytes bounds an introspection response.
const maxIntrospectionBytes = 64 << 10

// IntrospectionOptions configures [NewIntrospectionVerifier]. ClientID
// and ClientSecret are required: an introspection endpoint authenticates
// the resource servers that ask it (RFC 7662, section 2.1).
type IntrospectionOptions struct {
	// Endpoint is the issuer's introspection endpoint; empty means the
	// introspection_endpoint of its metadata (see JWTOptions.JWKSURL),
	// found when the first token needs it.
	Endpoint string

	// ClientID and ClientSecret are this server's credentials at the
	// issuer, sent with HTTP Basic authentication.
	ClientID, ClientSecret string

	// CacheSize bounds how many answers that grant are kept (the least
	// recently used go first), and how many refusals, kept apart; zero
	// means [DefaultCacheSize].
	CacheSize int

	// CacheBytes bounds the memory the answers that grant take, as
	// estimated from their members, and that of the refusals, apart; zero
	// means [DefaultCacheBytes].
	CacheBytes int

	// CacheTTL is how long an answer is reused, never past the token's
	// exp; zero means [DefaultCacheTTL]. A token revoked at the issuer is
	// accepted for up to CacheTTL more.
	CacheTTL time.Duration

	// ClockSkew is the leeway given to exp and nbf; zero means none.
	ClockSkew time.Duration

	// Timeout bounds each request to the issuer (its metadata, a
	// question), and so the time a token waits for an answer; zero means
	// [DefaultTimeout].
	Timeout time.Duration

	// HTTPClient asks the issuer; nil means a client with a time limit of
	// Timeout.
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
	endpoint         *endpoint
	id, secret       string
	client           *http.Client
	ctx              context.Context // the verifier's own, for its questions
	timeout          time.Duration
	now              func() time.Time
	ttl, skew        time.Duration

	cache   *lru[digest, verdict] // answers that grant, by the token's SHA-256: the token itself is not kept
	refused *lru[digest, verdict] // answers that refuse, apart, so that made-up tokens cannot evict good answers
	asking  chan struct{}         // a slot per question in flight (see maxQuestions)
	flights singleflight.Group    // the questions under way, by the token's SHA-256

	mu    sync.Mutex
	asked int // for tests: how many times the issuer was asked
}

// verdict is one answer: a token's info, or the error it was refused with.
type verdict struct {
	info *auth.TokenInfo
	err  error
}

// NewIntrospectionVerifier returns a verifier of the tokens that issuer
// issues for audience (this MCP server's canonical URI), which asks the
// issuer's introspection endpoint about each token it has no answer for.
// A token is accepted when the answer says it is active, names issuer
// (when it names an issuer) and has audience in its aud (an answer
// without aud is refused: a token must be bound to this server), and the
// clock is within its exp and nbf, give or take the ClockSkew.
//
// NewIntrospectionVerifier asks the issuer nothing: without an Endpoint,
// its metadata is fetched when the first token needs it, so a verifier
// can be made while the issuer is down. Questions run on a context of the
// verifier's own (ctx's values without its cancellation), with a deadline
// of Timeout. It returns an error for a missing argument or credential, a
// URL that cannot be fetched, or an option out of range.
func NewIntrospectionVerifier(ctx context.Context, issuer, audience string, opts *IntrospectionOptions) (*IntrospectionVerifier, error) {
	if issuer == "" || audience == "" {
		return nil, errors.New("oauth: NewIntrospectionVerifier: issuer and audience are required")
	}
	if opts == nil || opts.ClientID == "" || opts.ClientSecret == "" {
		return nil, errors.New("oauth: NewIntrospectionVerifier: ClientID and ClientSecret are required")
	}
	if opts.CacheSize < 0 || opts.CacheBytes < 0 || opts.CacheTTL < 0 || opts.ClockSkew < 0 || opts.Timeout < 0 {
		return nil, errors.New("oauth: NewIntrospectionVerifier: negative CacheSize, CacheBytes, CacheTTL, ClockSkew or Timeout")
	}
	if opts.Endpoint != "" {
		if err := checkURL("Endpoint", opts.Endpoint, false); err != nil {
			return nil, fmt.Errorf("oauth: NewIntrospectionVerifier: %w", err)
		}
	} else if err := checkURL("issuer", issuer, true); err != nil {
		return nil, fmt.Errorf("oauth: NewIntrospectionVerifier: %w", err)
	}
	timeout := timeoutOr(opts.Timeout)
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	size, bytes := cmpOr(opts.CacheSize, DefaultCacheSize), cmpOr(opts.CacheBytes, DefaultCacheBytes)
	client := httpClient(opts.HTTPClient, timeout)
	return &IntrospectionVerifier{
		issuer:   issuer,
		audience: audience,
		endpoint: newEndpoint(ctx, issuer, opts.Endpoint, "introspection_endpoint",
			func(m *oauthex.AuthServerMeta) string { return m.IntrospectionEndpoint }, client, timeout, now),
		id:      opts.ClientID,
		secret:  opts.ClientSecret,
		client:  client,
		ctx:     context.WithoutCancel(ctx),
		timeout: timeout,
		now:     now,
		ttl:     cmpOr(opts.CacheTTL, DefaultCacheTTL),
		skew:    opts.ClockSkew,
		cache:   newLRU[digest, verdict](size, bytes),
		refused: newLRU[digest, verdict](size, bytes),
		asking:  make(chan struct{}, maxQuestions),
	}, nil
}

// maxQuestions bounds the questions to the issuer in flight at once, over
// all tokens: past it, a token that is not cached is refused (500) at
// once, rather than hold one more connection to an issuer that may hang.
const maxQuestions = 128

// Verify verifies token as [NewIntrospectionVerifier] says, from the cache
// or by asking the issuer, and returns what it grants: the scope of the
// answer, its exp, its sub as UserID, and every member of the answer in
// Extra (iss under mcpkit.TokenIssuerKey). The TokenInfo of a cached
// answer is shared by the requests that present the token: do not modify
// it. A refused token's error wraps auth.ErrInvalidToken (401); an issuer
// that cannot be asked, or does not answer within the Timeout, gives
// another error (500), which is not cached. Requests that present one
// token at once share one question; a request that gives up does not
// cancel it, so its answer is cached for the next. A request that has
// given up already asks nothing, and at most 128 questions are in flight
// at once (past that, a token not cached is refused with a 500).
//
// It has the signature of an auth.TokenVerifier; r is not used.
func (v *IntrospectionVerifier) Verify(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	if len(token) > maxTokenBytes {
		return nil, invalid("the token exceeds %d bytes", maxTokenBytes)
	}
	key := digestOf(token)
	now := v.now()
	c, ok := v.cache.get(key, now)
	if !ok {
		c, ok = v.refused.get(key, now)
	}
	if ok {
		if c.err != nil {
			return nil, c.err
		}
		if err := checkTimes(c.info, now, v.skew); err != nil {
			return nil, err
		}
		return c.info, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("oauth: introspection: %w", err) // gone: ask nothing for it
	}
	u, err := v.endpoint.get(ctx)
	if err != nil {
		return nil, fmt.Errorf("oauth: introspection: %w", err)
	}
	asked := key // the question's own: key stays on the stack of a cached token
	answer := v.flights.DoChan(string(asked[:]), func() (any, error) {
		select {
		case v.asking <- struct{}{}:
			defer func() { <-v.asking }()
		default:
			return nil, fmt.Errorf("oauth: introspection: %d questions to the issuer are in flight already", cap(v.asking))
		}
		ctx, cancel := context.WithTimeout(v.ctx, v.timeout)
		defer cancel()
		a, err := v.ask(ctx, u, token)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("%w (no answer within %s)", err, v.timeout)
			}
			return nil, err
		}
		now := v.now()
		info, err := v.judge(a, now)
		until := now.Add(v.ttl)
		if info != nil && !info.Expiration.IsZero() {
			until = minTime(until, cachedUntil(info.Expiration, v.skew))
		}
		c := verdict{info, err}
		if err != nil {
			v.refused.put(asked, c, until, entryBytes+len(err.Error()))
		} else {
			v.cache.put(asked, c, until, infoBytes(info))
		}
		return c, nil
	})
	select {
	case res := <-answer:
		if res.Err != nil {
			return nil, res.Err
		}
		c := res.Val.(verdict)
		return c.info, c.err
	case <-ctx.Done():
		return nil, fmt.Errorf("oauth: introspection: %w", ctx.Err())
	}
}

// ask posts token to the introspection endpoint u and returns its answer.
func (v *IntrospectionVerifier) ask(ctx context.Context, u, token string) (map[string]any, error) {
	v.mu.Lock()
	v.asked++
	v.mu.Unlock()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
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
	if err := checkTimes(info, now, v.skew); err != nil {
		return nil, err
	}
	if _, ok := a["iss"]; !ok {
		a["iss"] = v.issuer // for the principal: the issuer answered for it
	}
	return info, nil
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
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
