package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/tasks"
)

// A task is stored as one string value: the version byte taskVersion, then
// the [tasks.Task] as JSON. A new layout gets a new version byte, so that a
// replica never misreads what a newer one wrote.
const taskVersion = 1

// taskUpdateAttempts bounds the optimistic transactions of one
// [TaskStore.Update]: a task is written by the replica that runs it (a
// lease renewal every third of the lease) and by the requests about it, so
// conflicts are rare and short.
const taskUpdateAttempts = 50

// ErrMalformedTask is returned, wrapped, when a key of a [TaskStore] holds
// a value that is not a task this package wrote (another program's key
// under the same prefix, or a newer version's task).
var ErrMalformedTask = errors.New("redisstore: malformed task")

// ErrTaskConflict is returned, wrapped, by [TaskStore.Update] when other
// writers changed the task at each of its attempts.
var ErrTaskConflict = errors.New("redisstore: task update conflicts")

// TaskStoreOptions configures [NewTaskStore]. A nil *TaskStoreOptions means
// the defaults.
type TaskStoreOptions struct {
	// Prefix starts every key the store writes (then "task:", then the
	// task's ID). Empty means [DefaultPrefix].
	Prefix string
}

// A TaskStore is a [tasks.Store] on Redis: every TaskStore with the same
// prefix, in any process, holds the same tasks, so that any replica answers
// tasks/get and tasks/cancel for a task another runs. It is safe for
// concurrent use.
//
// A task is one string value with a version byte, expiring at the task's
// ExpiresAt (a task without one never expires; [tasks.Manager] always sets
// it). Create is SET NX, Get is GET, and Update is an optimistic
// transaction (WATCH, GET, MULTI, SET, EXEC) retried on conflict, a
// bounded number of times. Expiry deadlines are converted to Redis
// expiries with the local clock.
//
// Once Create returns, every replica finds the task, provided they all
// read from the Redis primary that Create wrote to: the go-redis clients
// do unless told to read from Redis replicas (ReadOnly, RouteByLatency,
// RouteRandomly), which a TaskStore's client must not be. Redis
// replicates asynchronously, so a failover just after Create may lose the
// task; the client's next tasks/get then finds none.
//
// Create never returns [tasks.ErrStoreFull] on its own: Redis's maxmemory
// bounds the store, and when Redis refuses a write for want of memory
// (maxmemory-policy noeviction), Create reports [tasks.ErrStoreFull].
type TaskStore struct {
	c      redis.UniversalClient
	prefix string
}

var _ tasks.Store = (*TaskStore)(nil)

// NewTaskStore returns a TaskStore that keeps its tasks in Redis through c.
func NewTaskStore(c redis.UniversalClient, opts *TaskStoreOptions) *TaskStore {
	s := &TaskStore{c: c, prefix: DefaultPrefix + "task:"}
	if opts != nil && opts.Prefix != "" {
		s.prefix = opts.Prefix + "task:"
	}
	return s
}

// Create implements [tasks.Store]. A task whose ExpiresAt has passed is
// not stored.
func (s *TaskStore) Create(ctx context.Context, t *tasks.Task) error {
	v, err := encodeTask(t)
	if err != nil {
		return fmt.Errorf("redisstore: task create: %w", err)
	}
	ttl, live := taskTTL(t)
	if !live {
		return nil
	}
	ok, err := s.c.SetNX(ctx, s.prefix+t.ID, v, ttl).Result()
	switch {
	case err != nil && strings.HasPrefix(err.Error(), "OOM "):
		return fmt.Errorf("redisstore: task create: %w (%w)", tasks.ErrStoreFull, err)
	case err != nil:
		return fmt.Errorf("redisstore: task create: %w", err)
	case !ok:
		return tasks.ErrExists
	}
	return nil
}

// Get implements [tasks.Store].
func (s *TaskStore) Get(ctx context.Context, id string) (*tasks.Task, error) {
	v, err := s.c.Get(ctx, s.prefix+id).Result()
	if errors.Is(err, redis.Nil) {
		return nil, tasks.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: task get: %w", err)
	}
	t, err := decodeTask(v)
	if err != nil {
		return nil, fmt.Errorf("redisstore: task get: key %q: %w", id, err)
	}
	return t, nil
}

// Update implements [tasks.Store]: fn runs once per attempt, on a task
// read afresh inside the transaction. The new task is stored with the
// expiry its ExpiresAt gives (deleted if that has passed).
func (s *TaskStore) Update(ctx context.Context, id string, fn func(*tasks.Task) error) (*tasks.Task, error) {
	key := s.prefix + id
	var out *tasks.Task
	var final error // an error of the transaction's own, returned as it is
	txn := func(tx *redis.Tx) error {
		v, err := tx.Get(ctx, key).Result()
		switch {
		case errors.Is(err, redis.Nil):
			final = tasks.ErrNotFound
			return final
		case err != nil:
			return err
		}
		t, err := decodeTask(v)
		if err != nil {
			final = fmt.Errorf("redisstore: task update: key %q: %w", id, err)
			return final
		}
		if err := fn(t); err != nil {
			final = err
			return final
		}
		t.ID = id
		nv, err := encodeTask(t)
		if err != nil {
			final = fmt.Errorf("redisstore: task update: %w", err)
			return final
		}
		ttl, live := taskTTL(t)
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if live {
				p.Set(ctx, key, nv, ttl)
			} else {
				p.Del(ctx, key)
			}
			return nil
		})
		out = t
		return err
	}
	for attempt := range taskUpdateAttempts {
		final = nil
		err := s.c.Watch(ctx, txn, key)
		switch {
		case err == nil:
			return out, nil
		case final != nil:
			return nil, final
		case !errors.Is(err, redis.TxFailedErr):
			return nil, fmt.Errorf("redisstore: task update: %w", err)
		}
		// Another writer won: back off a little, by a random amount, so
		// that writers who collided do not collide again.
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("redisstore: task update: %w", context.Cause(ctx))
		case <-time.After(time.Duration(rand.Int64N(int64(min(attempt+1, 10)) * int64(time.Millisecond)))):
		}
	}
	return nil, fmt.Errorf("%w: task %q, %d attempts", ErrTaskConflict, id, taskUpdateAttempts)
}

// taskTTL returns the Redis expiry of t (zero: none), and whether t is
// still to be kept at all.
func taskTTL(t *tasks.Task) (time.Duration, bool) {
	if t.ExpiresAt.IsZero() {
		return 0, true
	}
	d := time.Until(t.ExpiresAt)
	if d <= 0 {
		return 0, false
	}
	return roundUpMillis(d), true
}

func encodeTask(t *tasks.Task) (string, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	return string(append([]byte{taskVersion}, b...)), nil
}

func decodeTask(v string) (*tasks.Task, error) {
	if len(v) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrMalformedTask)
	}
	if v[0] != taskVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrMalformedTask, v[0], taskVersion)
	}
	var t tasks.Task
	if err := json.Unmarshal([]byte(v[1:]), &t); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedTask, err)
	}
	return &t, nil
}
