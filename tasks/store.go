package tasks

import (
	"context"
	"errors"
)

// Errors of a [Store].
var (
	// ErrNotFound is returned for a task the store does not hold (never
	// created, or expired).
	ErrNotFound = errors.New("tasks: task not found")
	// ErrExists is returned by Create for an ID the store already holds.
	ErrExists = errors.New("tasks: task exists")
	// ErrStoreFull is returned by Create when the store cannot take
	// another task (of this size, or of this principal); the call that
	// would have created it gets a retryable tool error. Update returns it
	// when the store has no room for what the task grew by; for a result
	// that does not fit, the Manager ends the task as failed.
	ErrStoreFull = errors.New("tasks: store full")
)

// A Store keeps tasks where every replica of a server can read them, so
// that any replica answers tasks/get and tasks/cancel for a task another
// replica runs. The in-memory [MemoryStore] serves one process; a shared
// implementation (Redis) serves several.
//
// A Store is safe for concurrent use. It keeps a task at least until its
// ExpiresAt (when set) and may forget it after; it never changes a task on
// its own: leases, statuses and ownership are the [Manager]'s, which works
// alike on every store.
//
// A Task marshals to JSON and back unchanged, so a shared store can keep
// it as a string: on Redis, Create as SET NX with PXAT ExpiresAt (after
// WAIT, or on a primary read back by Get, so that the task is durable before
// the call is answered), Get as GET, and Update as an optimistic
// transaction (WATCH, GET, MULTI, SET KEEPTTL, EXEC, retried on conflict).
type Store interface {
	// Create stores t, durably: once Create returns nil, Get from any
	// replica finds t. It fails with ErrExists if t.ID is taken and with
	// ErrStoreFull if the store has no room. It may keep the bytes of t's
	// JSON fields rather than copy them: nobody writes them.
	Create(ctx context.Context, t *Task) error

	// Get returns a copy of the task with the given ID, or ErrNotFound.
	// The copy may share the bytes of its JSON fields with the store's:
	// nobody writes them (see [Task]).
	Get(ctx context.Context, id string) (*Task, error)

	// Update atomically replaces the task with the given ID by what fn
	// makes of a copy of it, and returns the new task. If fn returns an
	// error, nothing is stored and Update returns that error. Update
	// returns ErrNotFound for a task it does not hold, and may return
	// ErrStoreFull for a task that grew beyond its room. An implementation
	// may call fn more than once (an optimistic transaction that retries
	// on conflict), so fn must depend only on the task it is given.
	Update(ctx context.Context, id string, fn func(*Task) error) (*Task, error)
}
