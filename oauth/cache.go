package oauth

import (
	"container/list"
	"crypto/sha256"
	"sync"
	"time"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Defaults of the caches of [JWTOptions], [IntrospectionOptions] and
// [TokenExchangeOptions].
const (
	// DefaultCacheSize is how many verified tokens a JWTVerifier keeps,
	// how many answers an IntrospectionVerifier keeps, and how many
	// exchanged tokens a TokenExchange keeps.
	DefaultCacheSize = 10000
	// DefaultCacheBytes bounds the memory, as estimated from their claims,
	// that the tokens a JWTVerifier keeps, or the answers an
	// IntrospectionVerifier keeps, take: room for DefaultCacheSize tokens
	// of 3 KiB each (a JWT of 600 bytes takes some 900).
	DefaultCacheBytes = 32 << 20
)

// A digest is a token's SHA-256: the caches of verified tokens are keyed by
// it, compared whole, so that a token is not kept in memory longer than
// the request that presented it.
type digest = [sha256.Size]byte

// digestOf returns the SHA-256 of token. The hash reads the token's bytes
// in place and keeps none of them: converting the token would allocate a
// copy of it on each request.
func digestOf(token string) digest {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
}

// An lru is a bounded cache of values that expire: when it holds more than
// size values, or values that cost more than maxBytes in all, the least
// recently used go first. It is safe for concurrent use.
type lru[K comparable, V any] struct {
	size     int
	maxBytes int // zero means no bound

	mu    sync.Mutex
	bytes int        // the costs of the values kept
	order *list.List // of *lruEntry[K, V], the most recently used first
	byKey map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key   K
	val   V
	until time.Time
	cost  int
}

// newLRU returns a cache of at most size values that cost at most maxBytes
// in all; zero maxBytes bounds only the count.
func newLRU[K comparable, V any](size, maxBytes int) *lru[K, V] {
	return &lru[K, V]{size: size, maxBytes: maxBytes, order: list.New(), byKey: map[K]*list.Element{}}
}

// get returns the value of key while now is before its expiry.
func (c *lru[K, V]) get(key K, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	ent := e.Value.(*lruEntry[K, V])
	if !now.Before(ent.until) {
		c.drop(e)
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return ent.val, true
}

// put keeps val for key until until, dropping the least recently used
// values while the cache is over its bounds. A value that costs more than
// maxBytes alone is not kept, and a value key had before goes.
func (c *lru[K, V]) put(key K, val V, until time.Time, cost int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.drop(e)
	}
	if c.maxBytes > 0 && cost > c.maxBytes {
		return
	}
	c.byKey[key] = c.order.PushFront(&lruEntry[K, V]{key: key, val: val, until: until, cost: cost})
	c.bytes += cost
	for c.order.Len() > c.size || c.maxBytes > 0 && c.bytes > c.maxBytes {
		c.drop(c.order.Back())
	}
}

// remove drops the value of key, if any.
func (c *lru[K, V]) remove(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.drop(e)
	}
}

// removeIf drops the values for which gone returns true.
func (c *lru[K, V]) removeIf(gone func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.order.Front(); e != nil; {
		next := e.Next()
		if gone(e.Value.(*lruEntry[K, V]).val) {
			c.drop(e)
		}
		e = next
	}
}

// drop removes e. c.mu is held.
func (c *lru[K, V]) drop(e *list.Element) {
	ent := c.order.Remove(e).(*lruEntry[K, V])
	delete(c.byKey, ent.key)
	c.bytes -= ent.cost
}

// len returns how many values are kept, expired ones included, and what
// they cost.
func (c *lru[K, V]) len() (n, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}

// cachedUntil returns when the cached verification of a token that
// expires at exp ends: just past exp + skew, the last instant at which the
// token is accepted.
func cachedUntil(exp time.Time, skew time.Duration) time.Time {
	return exp.Add(skew + time.Nanosecond)
}

// checkTimes refuses a token past its exp or before its nbf (read from
// info.Extra), give or take skew: a token verified once is checked so
// again each time it is taken from a cache.
func checkTimes(info *auth.TokenInfo, now time.Time, skew time.Duration) error {
	if !info.Expiration.IsZero() && now.After(info.Expiration.Add(skew)) {
		return invalid("the token expired at %s", info.Expiration.UTC().Format(time.RFC3339))
	}
	if nbf, ok := info.Extra["nbf"].(float64); ok {
		if t := time.Unix(int64(nbf), 0); now.Add(skew).Before(t) {
			return invalid("the token is not valid before %s", t.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// entryBytes is the heap a cache entry takes besides what its value
// holds: the list element, the map slot, the entry and its TokenInfo.
const entryBytes = 400

// infoBytes estimates the heap that a cached TokenInfo holds, its claims
// included.
func infoBytes(info *auth.TokenInfo) int {
	n := entryBytes + len(info.UserID) + 16*len(info.Scopes) + valueBytes(info.Extra)
	for _, s := range info.Scopes {
		n += len(s)
	}
	return n
}

// valueBytes estimates the heap that v, a value decoded from JSON, holds.
func valueBytes(v any) int {
	switch v := v.(type) {
	case string:
		return 16 + len(v)
	case map[string]any:
		n := 48
		for k, e := range v {
			n += 40 + len(k) + valueBytes(e) // a slot: key, value, control
		}
		return n
	case []any:
		n := 24
		for _, e := range v {
			n += 16 + valueBytes(e)
		}
		return n
	}
	return 8 // a number, a bool, null
}
