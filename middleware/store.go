package middleware

import (
	"context"
	"errors"
	"time"
)

// The store interfaces below are what [CacheResults] and [Idempotent] keep
// their state in. Each has an in-memory implementation in this package, the
// default for one process; implementations on a store shared by server
// replicas (the redisstore module has Redis ones) plug in through the same
// interfaces, so that every replica behind a load balancer sees one cache and
// one record of idempotent calls. [Limiter] is the third such interface.
//
// Keys are built by the middleware: opaque strings, already scoped to the
// principal and tool they belong to. A store may prefix them (to share one
// database between deployments) but must not interpret them.

// A Cache holds byte values under string keys, each for a limited time.
// Get and Set are called concurrently. An error means the store could not
// answer (a shared store is down, for instance); a missing or expired key is
// ok == false with a nil error.
type Cache interface {
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// An IdempotencyRecord is what an [IdempotencyStore] holds for one
// idempotency key.
type IdempotencyRecord struct {
	// Fingerprint identifies the call the key was first used for (the
	// route it came in by, the tool's version and the canonical
	// arguments); a repeat with another fingerprint is refused.
	Fingerprint string
	// Token identifies the claim: the one call that runs. Complete and
	// Release act only while the record still carries it.
	Token string
	// Done reports that the call finished and Result holds its outcome.
	Done bool
	// Result is the stored outcome of the call, when Done.
	Result []byte
}

// An IdempotencyStore records which idempotent calls have run, so that a
// repeat runs nothing and answers what the first call answered.
//
// Claim atomically creates rec under key, in the running state (Done false),
// when the key holds no record, and reports claimed == true; the claim
// expires after lease, so that a call whose process died does not block its
// key for ever. When the key holds a record, Claim creates nothing and
// returns that record with claimed == false.
//
// Complete marks the record done with result and keeps it for ttl; Release
// deletes it, so that the call may run again. Both act only while the record
// carries token, and otherwise return [ErrClaimLost] (the lease expired and
// another call may have claimed the key).
//
// All methods are called concurrently.
type IdempotencyStore interface {
	Claim(ctx context.Context, key string, rec IdempotencyRecord, lease time.Duration) (existing IdempotencyRecord, claimed bool, err error)
	Complete(ctx context.Context, key, token string, result []byte, ttl time.Duration) error
	Release(ctx context.Context, key, token string) error
}

// ErrClaimLost is returned by an [IdempotencyStore]'s Complete and Release
// when the record no longer carries the caller's token.
var ErrClaimLost = errors.New("middleware: idempotency claim lost")
