package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// maxJWKSBytes bounds a JWKS document read from an issuer.
const maxJWKSBytes = 1 << 20

// keySet is the JWKS of an issuer, fetched when first needed and cached:
// a token signed with a key it does not hold (the issuer rotated its keys)
// makes it fetch the set again, at most once per minRefresh however many
// such tokens arrive (concurrent ones wait for the one fetch), so that
// tokens with made-up key IDs cannot make the server fetch per request; a
// token signed with a key it holds never waits for a fetch. A
// set older than maxAge is fetched again on the next verification, so that
// keys the issuer withdrew stop verifying; while the issuer does not
// answer, the keys it last gave keep verifying, and it is asked again
// after minRefresh. It implements go-oidc's KeySet.
type keySet struct {
	url        string
	client     *http.Client
	now        func() time.Time
	minRefresh time.Duration
	maxAge     time.Duration

	fetchMu sync.Mutex // held across a fetch: concurrent misses wait for it
	mu      sync.Mutex // guards what follows; never held across a fetch
	keys    []jose.JSONWebKey
	fetched time.Time // when keys were fetched; zero before the first fetch
	tried   time.Time // when a fetch was last attempted
}

// errNoKey is the answer for a token whose key the issuer does not have.
var errNoKey = errors.New("no key of the issuer verifies the token")

// VerifySignature verifies the signature of the compact JWS jwt with the
// issuer's key that its header names (or, without a key ID, any key of the
// set fit for its algorithm), and returns its payload.
func (s *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(jwt, allAlgorithms)
	if err != nil {
		return nil, fmt.Errorf("malformed JWS: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("not one signature")
	}
	h := jws.Signatures[0].Header
	keys, err := s.candidates(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if payload, err := jws.Verify(k.Key); err == nil {
			return payload, nil
		}
	}
	return nil, errors.New("bad signature")
}

// candidates returns the keys that may have signed a token with key ID kid
// and algorithm alg, fetching the set again when it has none (or is older
// than maxAge) and the last attempt to fetch it was minRefresh ago or more.
func (s *keySet) candidates(ctx context.Context, kid, alg string) ([]jose.JSONWebKey, error) {
	if ks, ok := s.known(kid, alg); ok {
		return ks, nil // the common case: a verification never waits for a fetch
	}
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	if ks, ok := s.known(kid, alg); ok {
		return ks, nil // fetched while this one waited
	}
	s.mu.Lock()
	now := s.now()
	if !s.tried.IsZero() && now.Sub(s.tried) < s.minRefresh {
		// Asked lately: the key is not there, or the issuer did not
		// answer; keep to what we have.
		defer s.mu.Unlock()
		if ks := match(s.keys, kid, alg); len(ks) > 0 {
			return ks, nil
		}
		return nil, errNoKey
	}
	s.tried = now
	s.mu.Unlock()
	keys, err := s.get(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.keys, s.fetched = keys, now
	}
	if ks := match(s.keys, kid, alg); len(ks) > 0 {
		return ks, nil // with an unreachable issuer, the keys we had
	}
	if err != nil {
		return nil, err
	}
	return nil, errNoKey
}

// known returns the keys of the set, fetched less than maxAge ago, that
// may have signed a token with key ID kid and algorithm alg, and whether
// there are any.
func (s *keySet) known(kid, alg string) ([]jose.JSONWebKey, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fetched.IsZero() || s.now().Sub(s.fetched) >= s.maxAge {
		return nil, false
	}
	ks := match(s.keys, kid, alg)
	return ks, len(ks) > 0
}

func (s *keySet) get(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching the issuer's keys: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the issuer's keys: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the issuer's keys: HTTP %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fetching the issuer's keys: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("the issuer's key set exceeds %d bytes", maxJWKSBytes)
	}
	return parseJWKS(body)
}

// parseJWKS returns the public signing keys of a JWKS document. Keys of
// other uses, symmetric keys and keys go-jose cannot read are left out (a
// set holding one bad key still serves its good ones): a symmetric key in
// a public document is no secret, so a token "signed" with it proves
// nothing.
func parseJWKS(body []byte) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the issuer's key set is not a JWKS: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if k.UnmarshalJSON(raw) != nil || !k.Valid() || !k.IsPublic() || k.Use != "" && k.Use != "sig" {
			continue
		}
		switch k.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// match returns the keys of ks that may verify a signature by key kid
// (any key when kid is empty) with algorithm alg.
func match(ks []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range ks {
		if kid != "" && k.KeyID != kid || k.Algorithm != "" && k.Algorithm != alg || !fits(k.Key, alg) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// fits reports whether a public key of key's type signs with alg.
func fits(key any, alg string) bool {
	switch key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		return strings.HasPrefix(alg, "ES")
	case ed25519.PublicKey:
		return alg == string(jose.EdDSA)
	}
	return false
}
