package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/middleware"
)

// A record is stored as one string value:
//
//	version   1 byte, recordVersion
//	token     uvarint length, then the bytes
//	state     1 byte: stateRunning or stateDone
//	fingerprint  uvarint length, then the bytes
//	result    the rest of the value (empty while running)
//
// The token and the state come first so that the scripts can check that a
// record is running and carries the caller's token by comparing the value's
// beginning with what they encode to, without decoding anything; Complete
// then decodes only the fingerprint's length, to keep the fingerprint. A new
// layout gets a new version byte.
const (
	recordVersion = 1
	stateRunning  = 0
	stateDone     = 1
)

// claimScript creates KEYS[1] with the encoded record ARGV[1], expiring in
// ARGV[2] ms, if there is no such key, and returns nil; otherwise it changes
// nothing and returns the key's value.
const claimScript = `
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`

// completeScript, if KEYS[1] holds a running record that starts with
// ARGV[1] (the version, the caller's token and the running state, encoded),
// marks it done with result ARGV[2], keeps it for ARGV[3] ms and returns 1;
// otherwise it changes nothing and returns 0.
const completeScript = `
local v = redis.call('GET', KEYS[1])
local head = ARGV[1]
if not v or string.sub(v, 1, #head) ~= head then return 0 end
local i, n, shift = #head + 1, 0, 1
while true do
  local b = string.byte(v, i)
  if b == nil then return redis.error_reply('redisstore: malformed idempotency record') end
  i = i + 1
  if b < 128 then n = n + b * shift break end
  n = n + (b - 128) * shift
  shift = shift * 128
end
local fp = string.sub(v, #head + 1, i + n - 1)
redis.call('SET', KEYS[1], string.sub(head, 1, #head - 1) .. '\1' .. fp .. ARGV[2], 'PX', ARGV[3])
return 1
`

// releaseScript deletes KEYS[1] and returns 1 if it holds a running record
// that starts with ARGV[1] (the version, the caller's token and the running
// state, encoded); otherwise it returns 0.
const releaseScript = `
local v = redis.call('GET', KEYS[1])
local head = ARGV[1]
if not v or string.sub(v, 1, #head) ~= head then return 0 end
redis.call('DEL', KEYS[1])
return 1
`

var (
	claim    = redis.NewScript(claimScript)
	complete = redis.NewScript(completeScript)
	release  = redis.NewScript(releaseScript)
)

// ErrMalformedRecord is returned, wrapped, when a key of an
// [IdempotencyStore] holds a value that is not a record this package
// wrote (another program's key under the same prefix, or a newer version's
// record).
var ErrMalformedRecord = errors.New("redisstore: malformed idempotency record")

// IdempotencyOptions configures [NewIdempotencyStore]. A nil
// *IdempotencyOptions means the defaults.
type IdempotencyOptions struct {
	// Prefix starts every key the store writes (then "idem:", then the
	// middleware's key). Empty means [DefaultPrefix].
	Prefix string
}

// An IdempotencyStore is a [middleware.IdempotencyStore] on Redis: every
// store with the same prefix, in any process, sees the same records, so a
// repeated call runs once across all replicas. It is safe for concurrent
// use.
//
// Each method is one round trip: a Lua script that reads the key and
// writes it atomically. A record is one string value, in a compact binary
// form with a version byte; a running record expires with its lease, a done
// one with its ttl.
type IdempotencyStore struct {
	c      redis.UniversalClient
	prefix string
}

// NewIdempotencyStore returns an IdempotencyStore that keeps its records in
// Redis through c.
func NewIdempotencyStore(c redis.UniversalClient, opts *IdempotencyOptions) *IdempotencyStore {
	s := &IdempotencyStore{c: c, prefix: DefaultPrefix + "idem:"}
	if opts != nil && opts.Prefix != "" {
		s.prefix = opts.Prefix + "idem:"
	}
	return s
}

// Claim creates rec under key, running (rec.Done and rec.Result are
// ignored), for lease, rounded up to a whole millisecond, if key holds no
// record; otherwise it returns the record key holds. A lease of zero or
// less is an error.
func (s *IdempotencyStore) Claim(ctx context.Context, key string, rec middleware.IdempotencyRecord, lease time.Duration) (middleware.IdempotencyRecord, bool, error) {
	if lease <= 0 {
		return middleware.IdempotencyRecord{}, false, fmt.Errorf("redisstore: idempotency claim: lease %v is not positive", lease)
	}
	v := encodeRecord(rec.Token, stateRunning, rec.Fingerprint, nil)
	old, err := claim.Run(ctx, s.c, []string{s.prefix + key}, v, roundUpMillis(lease).Milliseconds()).Text()
	if errors.Is(err, redis.Nil) {
		return middleware.IdempotencyRecord{}, true, nil
	}
	if err != nil {
		return middleware.IdempotencyRecord{}, false, fmt.Errorf("redisstore: idempotency claim: %w", err)
	}
	existing, err := decodeRecord(old)
	if err != nil {
		return middleware.IdempotencyRecord{}, false, fmt.Errorf("redisstore: idempotency claim: key %q: %w", key, err)
	}
	return existing, false, nil
}

// Complete marks key's record done with result, and keeps it for ttl,
// rounded up to a whole millisecond, if it is running and carries token;
// otherwise (the lease ran out, another call holds the key, or the call was
// completed already) it returns [middleware.ErrClaimLost]. A ttl of zero or
// less is an error.
func (s *IdempotencyStore) Complete(ctx context.Context, key, token string, result []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("redisstore: idempotency complete: ttl %v is not positive", ttl)
	}
	n, err := complete.Run(ctx, s.c, []string{s.prefix + key}, tokenHead(token), result, roundUpMillis(ttl).Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("redisstore: idempotency complete: %w", err)
	}
	if n == 0 {
		return middleware.ErrClaimLost
	}
	return nil
}

// Release deletes key's record if it is running and carries token;
// otherwise it returns [middleware.ErrClaimLost], and a completed record
// stays.
func (s *IdempotencyStore) Release(ctx context.Context, key, token string) error {
	n, err := release.Run(ctx, s.c, []string{s.prefix + key}, tokenHead(token)).Int()
	if err != nil {
		return fmt.Errorf("redisstore: idempotency release: %w", err)
	}
	if n == 0 {
		return middleware.ErrClaimLost
	}
	return nil
}

// tokenHead returns how every running record that carries token begins.
func tokenHead(token string) string {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+len(token))
	b = append(b, recordVersion)
	b = binary.AppendUvarint(b, uint64(len(token)))
	b = append(b, token...)
	return string(append(b, stateRunning))
}

func encodeRecord(token string, state byte, fingerprint string, result []byte) string {
	b := make([]byte, 0, 2+2*binary.MaxVarintLen64+len(token)+len(fingerprint)+len(result))
	b = append(b, recordVersion)
	b = binary.AppendUvarint(b, uint64(len(token)))
	b = append(b, token...)
	b = append(b, state)
	b = binary.AppendUvarint(b, uint64(len(fingerprint)))
	b = append(b, fingerprint...)
	return string(append(b, result...))
}

func decodeRecord(v string) (middleware.IdempotencyRecord, error) {
	var rec middleware.IdempotencyRecord
	if len(v) == 0 {
		return rec, fmt.Errorf("%w: empty", ErrMalformedRecord)
	}
	if v[0] != recordVersion {
		return rec, fmt.Errorf("%w: version %d, want %d", ErrMalformedRecord, v[0], recordVersion)
	}
	rest := v[1:]
	var ok bool
	if rec.Token, rest, ok = cutString(rest); !ok || len(rest) == 0 {
		return rec, fmt.Errorf("%w: truncated", ErrMalformedRecord)
	}
	switch rest[0] {
	case stateRunning:
	case stateDone:
		rec.Done = true
	default:
		return rec, fmt.Errorf("%w: state %d", ErrMalformedRecord, rest[0])
	}
	if rec.Fingerprint, rest, ok = cutString(rest[1:]); !ok {
		return rec, fmt.Errorf("%w: truncated", ErrMalformedRecord)
	}
	if rec.Done {
		rec.Result = []byte(rest)
	} else if len(rest) > 0 {
		return rec, fmt.Errorf("%w: a result while running", ErrMalformedRecord)
	}
	return rec, nil
}

// cutString reads a uvarint length and that many bytes from the front of s.
func cutString(s string) (field, rest string, ok bool) {
	n, k := binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
	if k <= 0 || n > uint64(len(s)-k) {
		return "", "", false
	}
	return s[k : k+int(n)], s[k+int(n):], true
}
