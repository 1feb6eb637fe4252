package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/sync/singleflight"

	"github.com/mcpkit/mcpkit"
)

// DefaultExpiryMargin is how long before its expiry a [TokenExchange]
// stops reusing an exchanged token.
const DefaultExpiryMargin = 30 * time.Second

// The token types and the grant of RFC 8693.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	accessTokenType    = "urn:ietf:params:oauth:token-type:access_token"
)

// maxExchangeBytes bounds a token endpoint's response.
const maxExchangeBytes = 64 << 10

// TokenExchangeOptions configures [NewTokenExchange]. ClientID is
// required, and one of Resource and Audience.
type TokenExchangeOptions struct {
	// TokenURL is the issuer's token endpoint; empty means the
	// token_endpoint of its metadata, found when the first call needs it.
	TokenURL string

	// ClientID and ClientSecret are this gateway's credentials at the
	// issuer, sent with HTTP Basic authentication. Without a secret,
	// client_id is sent in the request body instead, for a client that
	// HTTPClient authenticates (mutual TLS).
	ClientID, ClientSecret string

	// Resource is the canonical URI of the upstream server (RFC 8707),
	// which the exchanged tokens are for; Audience is the upstream's name
	// at the issuer (RFC 8693). Both are sent when both are set.
	Resource, Audience string

	// Scopes are the scopes asked for; nil asks for none, and the issuer
	// decides.
	Scopes []string

	// CacheSize bounds how many exchanged tokens are kept, one per
	// caller's token (the least recently used go first); zero means
	// [DefaultCacheSize].
	CacheSize int

	// ExpiryMargin is how long before its expiry an exchanged token stops
	// being reused; zero means [DefaultExpiryMargin]. A token that expires
	// sooner serves one call. The expiry is the issuer's expires_in, or
	// else the exp of a JWT, or else [DefaultUnknownLifetime] from the
	// exchange.
	ExpiryMargin time.Duration

	// Timeout bounds each request to the issuer (its metadata, an
	// exchange), and so the time a call waits for one; zero means
	// [DefaultTimeout].
	Timeout time.Duration

	// HTTPClient asks the issuer; nil means a client with a time limit of
	// Timeout.
	HTTPClient *http.Client

	// Now is the clock of the cache; nil means time.Now.
	Now func() time.Time
}

// A TokenExchange gets the tokens a gateway sends to one upstream server
// on behalf of its callers: it exchanges the caller's access token for one
// for the upstream at the issuer's token endpoint (OAuth 2.0 Token
// Exchange, RFC 8693), and caches it per caller. Its
// [TokenExchange.Credentials] is a proxy.Options.Credentials. It is safe
// for concurrent use.
type TokenExchange struct {
	issuer             string
	endpoint           *endpoint
	id, secret         string
	resource, audience string
	scope              string
	client             *http.Client
	timeout, margin    time.Duration
	now                func() time.Time

	cache   *lru[string, exchanged] // by principal and subject token (see exchangeKey)
	flights singleflight.Group      // the exchanges under way, by the same key
}

// exchanged is a token the issuer gave, with when it expires.
type exchanged struct {
	token string
	exp   time.Time // zero when the issuer did not say
}

// NewTokenExchange returns a TokenExchange at issuer, the issuer of the
// callers' tokens, for the upstream that opts names. It asks the issuer
// nothing: without a TokenURL, the metadata is fetched when the first
// call needs it, with backoff while the issuer is down. It returns an
// error when issuer, ClientID or both of Resource and Audience are
// missing, when a URL cannot be fetched, or when an option is out of
// range.
func NewTokenExchange(issuer string, opts *TokenExchangeOptions) (*TokenExchange, error) {
	if issuer == "" || opts == nil || opts.ClientID == "" {
		return nil, errors.New("oauth: NewTokenExchange: issuer and ClientID are required")
	}
	if opts.Resource == "" && opts.Audience == "" {
		return nil, errors.New("oauth: NewTokenExchange: Resource or Audience is required")
	}
	if opts.CacheSize < 0 || opts.ExpiryMargin < 0 || opts.Timeout < 0 {
		return nil, errors.New("oauth: NewTokenExchange: negative CacheSize, ExpiryMargin or Timeout")
	}
	if opts.TokenURL != "" {
		if err := checkURL("TokenURL", opts.TokenURL, false); err != nil {
			return nil, fmt.Errorf("oauth: NewTokenExchange: %w", err)
		}
	} else if err := checkURL("issuer", issuer, true); err != nil {
		return nil, fmt.Errorf("oauth: NewTokenExchange: %w", err)
	}
	if opts.Resource != "" {
		if _, err := checkResource(opts.Resource); err != nil {
			return nil, fmt.Errorf("oauth: NewTokenExchange: %w", err)
		}
	}
	timeout := timeoutOr(opts.Timeout)
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	size := opts.CacheSize
	if size == 0 {
		size = DefaultCacheSize
	}
	client := httpClient(opts.HTTPClient, timeout)
	return &TokenExchange{
		issuer: issuer,
		endpoint: newEndpoint(context.Background(), issuer, opts.TokenURL, "token_endpoint",
			func(m *oauthex.AuthServerMeta) string { return m.TokenEndpoint }, client, timeout, now),
		id:       opts.ClientID,
		secret:   opts.ClientSecret,
		resource: opts.Resource,
		audience: opts.Audience,
		scope:    strings.Join(opts.Scopes, " "),
		client:   client,
		timeout:  timeout,
		margin:   cmpOr(opts.ExpiryMargin, DefaultExpiryMargin),
		now:      now,
		cache:    newLRU[string, exchanged](size, 0),
	}, nil
}

// errNoSubject is the error of a call that has no verified token to
// exchange.
var errNoSubject = errors.New("oauth: token exchange: the call has no verified bearer token")

// Credentials returns "Authorization: Bearer <token>" with a token for
// the upstream, exchanged for the caller's: the bearer token of the call's
// HTTP request, which auth.RequireBearerToken verified, and which is
// never sent anywhere but to the issuer. A call without a verified
// principal ([mcpkit.VerifiedPrincipal]) or without that token (stdio,
// in-memory) gets an error, and so does a token its verifier says another
// issuer issued (under [mcpkit.TokenIssuerKey]): it is not sent to this
// one. A TokenExchange never lets a call through with no one's
// credentials.
//
// The exchanged token is reused for the calls that present the same token
// as the caller's, until ExpiryMargin before its expiry: a caller that
// presents another token (a narrower one from another client, a wider one
// after a step-up) gets a token exchanged for that one. The first calls
// with a token at once share one exchange, which a call that gives up
// does not cancel. An exchange that fails is not cached: the next call
// tries again.
//
// It has the signature of proxy.Options.Credentials.
func (x *TokenExchange) Credentials(ctx context.Context, req *mcpkit.Request) (http.Header, error) {
	principal := mcpkit.VerifiedPrincipal(req)
	subject, ok := bearerToken(req.Header().Get("Authorization"))
	if principal == "" || !ok {
		return nil, errNoSubject
	}
	if info := req.TokenInfo(); info != nil {
		if iss, _ := info.Extra[mcpkit.TokenIssuerKey].(string); iss != "" && strings.TrimSuffix(iss, "/") != strings.TrimSuffix(x.issuer, "/") {
			return nil, fmt.Errorf("oauth: token exchange: the caller's token was issued by %q, not by the exchange's issuer", clip(iss))
		}
	}
	key := exchangeKey(principal, subject)
	if t, ok := x.cache.get(key, x.now()); ok {
		return bearerHeader(t.token), nil
	}
	res := x.flights.DoChan(key, func() (any, error) {
		// Its own context: the calls that wait for it may give up.
		ctx, cancel := context.WithTimeout(context.Background(), x.timeout)
		defer cancel()
		t, err := x.exchange(ctx, subject)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("%w (no answer within %s)", err, x.timeout)
			}
			return nil, err
		}
		if until := t.exp.Add(-x.margin); !t.exp.IsZero() && x.now().Before(until) {
			x.cache.put(key, t, until, 0)
		}
		return t, nil
	})
	select {
	case r := <-res:
		if r.Err != nil {
			return nil, r.Err
		}
		return bearerHeader(r.Val.(exchanged).token), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("oauth: token exchange: %w", ctx.Err())
	}
}

// exchange asks the issuer for a token for the upstream in exchange for
// subject.
func (x *TokenExchange) exchange(ctx context.Context, subject string) (exchanged, error) {
	u, err := x.endpoint.get(ctx)
	if err != nil {
		return exchanged{}, fmt.Errorf("oauth: token exchange: %w", err)
	}
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {accessTokenType},
		"requested_token_type": {accessTokenType},
	}
	if x.resource != "" {
		form.Set("resource", x.resource)
	}
	if x.audience != "" {
		form.Set("audience", x.audience)
	}
	if x.scope != "" {
		form.Set("scope", x.scope)
	}
	if x.secret == "" {
		form.Set("client_id", x.id)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return exchanged{}, fmt.Errorf("oauth: token exchange: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if x.secret != "" {
		req.SetBasicAuth(url.QueryEscape(x.id), url.QueryEscape(x.secret)) // RFC 6749, section 2.3.1
	}
	sent := x.now()
	resp, err := x.client.Do(req)
	if err != nil {
		return exchanged{}, fmt.Errorf("oauth: token exchange: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxExchangeBytes+1))
	if err != nil {
		return exchanged{}, fmt.Errorf("oauth: token exchange: %w", err)
	}
	if len(body) > maxExchangeBytes {
		return exchanged{}, fmt.Errorf("oauth: token exchange: the answer exceeds %d bytes", maxExchangeBytes)
	}
	var a struct {
		AccessToken     string  `json:"access_token"`
		IssuedTokenType string  `json:"issued_token_type"`
		TokenType       string  `json:"token_type"`
		ExpiresIn       float64 `json:"expires_in"`
		Error           string  `json:"error"`
		Description     string  `json:"error_description"`
	}
	jsonErr := json.Unmarshal(body, &a)
	if resp.StatusCode != http.StatusOK {
		if jsonErr == nil && a.Error != "" {
			return exchanged{}, fmt.Errorf("oauth: token exchange: the issuer refused: %s", clip(strings.TrimSuffix(a.Error+": "+a.Description, ": ")))
		}
		return exchanged{}, fmt.Errorf("oauth: token exchange: HTTP %s", resp.Status)
	}
	switch {
	case jsonErr != nil:
		return exchanged{}, fmt.Errorf("oauth: token exchange: the answer is not a token response: %s", clip(jsonErr.Error()))
	case a.AccessToken == "":
		return exchanged{}, errors.New("oauth: token exchange: the answer has no access_token")
	case a.AccessToken == subject:
		return exchanged{}, errors.New("oauth: token exchange: the issuer gave back the caller's own token")
	case !strings.EqualFold(a.TokenType, "bearer"):
		return exchanged{}, fmt.Errorf("oauth: token exchange: token_type %q, want Bearer", clip(a.TokenType))
	case a.IssuedTokenType != "" && a.IssuedTokenType != accessTokenType:
		return exchanged{}, fmt.Errorf("oauth: token exchange: issued_token_type %q, want an access token", clip(a.IssuedTokenType))
	}
	t := exchanged{token: a.AccessToken}
	const year = 365 * 24 * 3600 // no token is reused longer; nor does a Duration overflow
	switch exp, ok := jwtExpiry(a.AccessToken); {
	case a.ExpiresIn > 0:
		t.exp = sent.Add(time.Duration(min(a.ExpiresIn, year)) * time.Second)
	case ok:
		t.exp = exp
	default:
		t.exp = sent.Add(DefaultUnknownLifetime)
	}
	return t, nil
}

// DefaultUnknownLifetime is how long an exchanged token is taken to live
// when the issuer does not say (no expires_in) and the token does not
// either (not a JWT with exp).
const DefaultUnknownLifetime = time.Minute

// jwtExpiry returns the exp claim of token when it is a JWT that has one.
// The token is read, not verified: it is for the upstream to verify, and
// its expiry only bounds how long the gateway reuses it.
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp float64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp <= 0 || claims.Exp > 1<<40 {
		return time.Time{}, false
	}
	return time.Unix(int64(claims.Exp), 0), true
}

// exchangeKey is the key of the exchanges for a caller's token: the
// principal and a digest of the token, so that no token is kept as a key.
func exchangeKey(principal, subject string) string {
	d := sha256.Sum256([]byte(subject))
	return principal + "\x00" + hex.EncodeToString(d[:])
}

func bearerHeader(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// bearerToken returns the token of an Authorization header value
// "Bearer <token>", read as auth.RequireBearerToken reads it.
func bearerToken(v string) (string, bool) {
	f := strings.Fields(v)
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return "", false
	}
	return f[1], true
}
