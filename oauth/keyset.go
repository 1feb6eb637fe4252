package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// maxJWKSBytes bounds a JWKS document read from an issuer.
const maxJWKSBytes = 1 << 20

// keySet is the JWKS of an issuer, fetched when first needed and cached.
// A fetch runs apart from the requests that need it (see fetcher): on the
// verifier's own context, with a deadline, one at a time.
//
//   - A token signed with a key the set holds never waits for a fetch: when
//     the set is older than maxAge, the token is verified with it while
//     the set is fetched again (stale-while-revalidate), so that keys the
//     issuer withdrew stop verifying once the issuer answers; while it does
//     not, the keys it last gave keep verifying.
//   - A token signed with a key the set does not hold (the issuer rotated
//     its keys) has the set fetched again and waits for that one fetch, at
//     most its timeout; fetches are minRefresh apart however many such
//     tokens arrive, so that made-up key IDs cannot make the server fetch
//     per request, and a token that finds none allowed is refused at once.
//   - Before the first keys were had, the JWKS URL is discovered from the
//     issuer's metadata if it was not given, and failed attempts back off
//     from a second up to minRefresh: an issuer down at start is asked again
//     soon after, and tokens verify once it answers.
//
// It implements go-oidc's KeySet.
type keySet struct {
	issuer  string // whose metadata names the JWKS, when url is empty
	client  *http.Client
	now     func() time.Time
	maxAge  time.Duration
	fetches *fetcher

	// dropped, when not nil, is told the keys that a fetch found withdrawn,
	// so that what they verified can be forgotten.
	dropped func(ids []keyID)
	checks  atomic.Int64 // for tests: signatures checked

	mu      sync.Mutex // guards what follows; never held across a fetch
	url     string
	keys    []heldKey
	ids     map[keyID]bool // of keys
	fetched time.Time      // when keys were fetched; zero before the first fetch
}

// A keyID names a key of the set by the SHA-256 of its JWK, kid, alg and
// use included: a key the issuer publishes changed in any of them is
// another key.
type keyID = [sha256.Size]byte

// A heldKey is a key of the set with its keyID.
type heldKey struct {
	jose.JSONWebKey
	id keyID
}

// signerKey is the context key under which the caller of VerifySignature
// may give a *keyID, set to the key that verified the token: go-oidc's
// KeySet, between the two, returns only the payload.
type signerKey struct{}

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
		s.checks.Add(1)
		if payload, err := jws.Verify(k.Key); err == nil {
			if id, ok := ctx.Value(signerKey{}).(*keyID); ok {
				*id = k.id
			}
			return payload, nil
		}
	}
	return nil, errors.New("bad signature")
}

// candidates returns the keys that may have signed a token with key ID kid
// and algorithm alg, as keySet says: from the set, or after the one fetch
// that a key not in it may start or join.
func (s *keySet) candidates(ctx context.Context, kid, alg string) ([]heldKey, error) {
	if ks, fresh := s.lookup(kid, alg); len(ks) > 0 {
		if !fresh {
			s.fetches.start(s.fetch) // the token need not wait for it
		}
		return ks, nil
	}
	if done := s.fetches.start(s.fetch); done != nil {
		if err := await(ctx, done); err != nil {
			return nil, fmt.Errorf("waiting for the issuer's keys: %w", err)
		}
	}
	if ks, _ := s.lookup(kid, alg); len(ks) > 0 {
		return ks, nil // fetched now, or by a fetch that ended meanwhile
	}
	if err := s.fetches.lastErr(); err != nil {
		return nil, err
	}
	return nil, errNoKey
}

// never reports whether no key was ever had, after a fetch that failed.
func (s *keySet) never() bool {
	s.mu.Lock()
	fetched := s.fetched
	s.mu.Unlock()
	return fetched.IsZero() && s.fetches.lastErr() != nil
}

// lookup returns the keys of the set that may have signed a token with key
// ID kid and algorithm alg, and whether the set is younger than maxAge.
func (s *keySet) lookup(kid, alg string) (ks []heldKey, fresh bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return match(s.keys, kid, alg), s.fresh()
}

// fresh reports whether the set is younger than maxAge. s.mu is held.
func (s *keySet) fresh() bool {
	return !s.fetched.IsZero() && s.now().Sub(s.fetched) < s.maxAge
}

// holds reports whether the set holds the key id. Like a token verified
// with the set, it starts a fetch in the background when the set is older
// than maxAge, so that a key the issuer withdrew goes though every token
// it signed is cached.
func (s *keySet) holds(id keyID) bool {
	s.mu.Lock()
	held, fresh := s.ids[id], s.fresh()
	s.mu.Unlock()
	if held && !fresh {
		s.fetches.start(s.fetch)
	}
	return held
}

// fetch fetches the set, discovering where it is first if need be; the
// fetcher runs one at a time.
func (s *keySet) fetch(ctx context.Context) error {
	s.mu.Lock()
	u := s.url
	s.mu.Unlock()
	if u == "" {
		var err error
		u, err = discover(ctx, s.client, s.issuer, "jwks_uri", func(m *oauthex.AuthServerMeta) string { return m.JWKSURI })
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.url = u
		s.mu.Unlock()
	}
	keys, err := s.get(ctx, u)
	if err != nil {
		return err
	}
	ids := make(map[keyID]bool, len(keys))
	for _, k := range keys {
		ids[k.id] = true
	}
	s.mu.Lock()
	var gone []keyID
	for id := range s.ids {
		if !ids[id] {
			gone = append(gone, id)
		}
	}
	s.keys, s.ids, s.fetched = keys, ids, s.now()
	s.mu.Unlock()
	if len(gone) > 0 && s.dropped != nil {
		s.dropped(gone)
	}
	return nil
}

func (s *keySet) get(ctx context.Context, u string) ([]heldKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
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
// nothing. A document with no "keys" array, or none of whose keys can
// sign, is an error, so that the keys in hand keep verifying: an issuer's
// error page answered with 200 is no rotation.
func parseJWKS(body []byte) ([]heldKey, error) {
	var doc struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the issuer's key set is not a JWKS: %w", err)
	}
	if doc.Keys == nil {
		return nil, errors.New(`the issuer's key set is not a JWKS: no "keys" array`)
	}
	var keys []heldKey
	for _, raw := range *doc.Keys {
		var k jose.JSONWebKey
		if k.UnmarshalJSON(raw) != nil || !k.Valid() || !k.IsPublic() || k.Use != "" && k.Use != "sig" {
			continue
		}
		switch k.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			// The JWK as go-jose writes it, not as published: the same
			// key in another member order or spacing is the same key.
			canonical, err := k.MarshalJSON()
			if err != nil {
				continue
			}
			keys = append(keys, heldKey{k, sha256.Sum256(canonical)})
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("the issuer's key set has no public signing key")
	}
	return keys, nil
}

// match returns the keys of ks that may verify a signature by key kid
// (any key when kid is empty) with algorithm alg.
func match(ks []heldKey, kid, alg string) []heldKey {
	var out []heldKey
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
