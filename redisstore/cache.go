package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultMaxValueSize is the largest value a [Cache] stores when its
// options do not say: 1 MiB.
const DefaultMaxValueSize = 1 << 20

// ErrValueTooLarge is returned, wrapped, by [Cache.Set] for a value larger
// than the Cache's MaxValueSize.
var ErrValueTooLarge = errors.New("redisstore: value too large")

// CacheOptions configures [NewCache]. A nil *CacheOptions means the
// defaults.
type CacheOptions struct {
	// Prefix starts every key the Cache writes (then "cache:", then the
	// middleware's key). Empty means [DefaultPrefix].
	Prefix string

	// MaxValueSize is the largest value, in bytes, that Set stores; it
	// refuses larger ones with [ErrValueTooLarge]. A value travels whole
	// on every Get, into a buffer of that size, and Redis keeps it in
	// memory until it expires: a bound keeps one huge result from costing
	// every replica and Redis itself more than the call was worth. Zero
	// means [DefaultMaxValueSize]; Redis refuses values over 512 MB.
	MaxValueSize int
}

// A Cache is a [middleware.Cache] on Redis: one GET per Get, one SET with
// the value's expiry per Set. Every Cache with the same prefix,
// in any process, sees the same values. It is safe for concurrent use.
type Cache struct {
	c       redis.UniversalClient
	prefix  string
	maxSize int
}

// NewCache returns a Cache that keeps its values in Redis through c.
func NewCache(c redis.UniversalClient, opts *CacheOptions) *Cache {
	cc := &Cache{c: c, prefix: DefaultPrefix + "cache:", maxSize: DefaultMaxValueSize}
	if opts != nil {
		if opts.Prefix != "" {
			cc.prefix = opts.Prefix + "cache:"
		}
		if opts.MaxValueSize > 0 {
			cc.maxSize = opts.MaxValueSize
		}
	}
	return cc
}

// Get returns the value stored under key, if it has not expired.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := c.c.Get(ctx, c.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("redisstore: cache get: %w", err)
	}
	return v, true, nil
}

// Set stores value under key for ttl, rounded up to a whole millisecond,
// replacing what key held. A ttl of zero or less removes key (the value
// would be expired at once), and so does a value larger than the Cache's
// MaxValueSize, which Set refuses with [ErrValueTooLarge]: after a Set, Get
// never returns what key held before.
func (c *Cache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	var tooLarge error
	if len(value) > c.maxSize {
		tooLarge = fmt.Errorf("%w: %d bytes, more than %d", ErrValueTooLarge, len(value), c.maxSize)
	}
	if tooLarge != nil || ttl <= 0 {
		if err := c.c.Del(ctx, c.prefix+key).Err(); err != nil {
			return errors.Join(tooLarge, fmt.Errorf("redisstore: cache set: %w", err))
		}
		return tooLarge
	}
	if err := c.c.Set(ctx, c.prefix+key, value, roundUpMillis(ttl)).Err(); err != nil {
		return fmt.Errorf("redisstore: cache set: %w", err)
	}
	return nil
}

// roundUpMillis rounds a positive d up to a whole number of milliseconds,
// Redis's precision: go-redis would round it down, and a sub-millisecond
// one to 1ms with a log line.
func roundUpMillis(d time.Duration) time.Duration {
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}
