package tasks

import (
	"container/heap"
	"container/list"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MemoryStoreOptions configures [NewMemoryStore]. A nil
// *MemoryStoreOptions means the defaults.
type MemoryStoreOptions struct {
	// MaxTasks bounds the number of tasks kept, and MaxBytes the memory
	// they take: the bytes of their arguments, results, input requests
	// and answers, and of their other strings, plus about 512 bytes each.
	// When a new task would take the store beyond either, Create drops
	// terminal tasks, those that ended first first, and fails with
	// [ErrStoreFull] when dropping every terminal task would not make
	// room: running and waiting tasks are never dropped. Zero means 10000
	// tasks and 64 MiB.
	MaxTasks int
	MaxBytes int64

	// MaxTasksPerOwner and MaxBytesPerOwner bound alike the tasks of one
	// verified user (a [Task.Owner] of the form "sub:..."), so that one
	// user cannot fill the store and lock the others out: Create drops the
	// user's own terminal tasks to make room, and fails with ErrStoreFull
	// when that would not do. Zero means a quarter of MaxTasks and of
	// MaxBytes. Every caller no verifier vouched for (anonymous, or with a
	// bearer token nobody checked) shares one such quota, so that a client
	// cannot buy a fresh one by making up a token (its tasks are still its
	// own, by its token). A server whose only client is on stdio can give
	// it the whole store by setting them to MaxTasks and MaxBytes.
	MaxTasksPerOwner int
	MaxBytesPerOwner int64

	// Now is the store's clock, for tests. Nil means time.Now.
	Now func() time.Time
}

// The defaults of [MemoryStoreOptions].
const (
	defaultMaxTasks = 10000
	defaultMaxBytes = 64 << 20
	ownerShare      = 4 // a principal may have 1/ownerShare of the store
)

// A MemoryStore is a [Store] in the memory of one process: for a server
// that runs as a single replica, and for tests. It is bounded in tasks and
// in bytes, in all and for each principal (see [MemoryStoreOptions]).
// Expired tasks are dropped when they are next looked at or when a task is
// created.
//
// An Update that makes a task larger (a result, answers to its input
// requests) fails with [ErrStoreFull] when the store has no room for the
// difference and dropping terminal tasks would not make it; an Update
// that does not never fails for want of room.
//
// The store keeps the JSON fields of a task (its arguments, above all) as
// they are given, without copying them: see [Task].
type MemoryStore struct {
	maxTasks, ownerTasks int
	maxBytes, ownerBytes int64
	now                  func() time.Time

	mu     sync.Mutex
	tasks  map[string]*entry
	all    usage             // every task
	owners map[string]*usage // the tasks of each principal
	expiry expiryQueue       // the tasks with an ExpiresAt, soonest first

	managers atomic.Int32 // the Managers using the store (see Manager.alone)
}

// An entry is a task in a MemoryStore.
type entry struct {
	task  *Task
	size  int64  // task.size()
	owner *usage // the usage of task.Owner
	// ended and ownerEnded are, once the task is terminal, its elements in
	// the ended lists of MemoryStore.all and of owner.
	ended, ownerEnded *list.Element
	index             int // in MemoryStore.expiry; -1 when not in it
}

// A usage counts tasks and their bytes, and lists the terminal ones in the
// order they ended, which is the order they are dropped in.
type usage struct {
	tasks, endedTasks int
	bytes, endedBytes int64
	ended             list.List // of *entry
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	s := &MemoryStore{maxTasks: defaultMaxTasks, maxBytes: defaultMaxBytes, now: time.Now,
		tasks: map[string]*entry{}, owners: map[string]*usage{}}
	if opts != nil {
		if opts.MaxTasks > 0 {
			s.maxTasks = opts.MaxTasks
		}
		if opts.MaxBytes > 0 {
			s.maxBytes = opts.MaxBytes
		}
		s.ownerTasks, s.ownerBytes = opts.MaxTasksPerOwner, opts.MaxBytesPerOwner
		if opts.Now != nil {
			s.now = opts.Now
		}
	}
	if s.ownerTasks <= 0 {
		s.ownerTasks = max(s.maxTasks/ownerShare, 1)
	}
	if s.ownerBytes <= 0 {
		s.ownerBytes = s.maxBytes / ownerShare
	}
	s.ownerTasks, s.ownerBytes = min(s.ownerTasks, s.maxTasks), min(s.ownerBytes, s.maxBytes)
	return s
}

// Create implements [Store].
func (s *MemoryStore) Create(_ context.Context, t *Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live(t.ID); ok {
		return ErrExists
	}
	e := &entry{task: t.clone(), index: -1}
	e.size = e.task.size()
	s.dropExpired()
	if !s.makeRoom(e.task.Owner, e.size) {
		return ErrStoreFull
	}
	s.add(e)
	return nil
}

// Get implements [Store].
func (s *MemoryStore) Get(_ context.Context, id string) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live(id)
	if !ok {
		return nil, ErrNotFound
	}
	return e.task.clone(), nil
}

// Update implements [Store].
func (s *MemoryStore) Update(_ context.Context, id string, fn func(*Task) error) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live(id)
	if !ok {
		return nil, ErrNotFound
	}
	t := e.task.clone()
	if err := fn(t); err != nil {
		return nil, err
	}
	t.ID = id
	size := t.size()
	if size <= e.size && quotaOf(t.Owner) == quotaOf(e.task.Owner) {
		s.replace(e, t, size)
		return t.clone(), nil
	}
	// The task grows: it needs room, which must not be made by dropping
	// the task itself.
	s.remove(e)
	s.dropExpired()
	n := &entry{task: t, size: size, index: -1}
	if !s.makeRoom(t.Owner, size) {
		s.add(e)
		return nil, ErrStoreFull
	}
	s.add(n)
	return t.clone(), nil
}

// Len returns the number of tasks the store holds, expired ones included
// until they are dropped.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}

// Bytes returns the memory the store counts its tasks as taking, against
// [MemoryStoreOptions].MaxBytes, expired ones included until they are
// dropped.
func (s *MemoryStore) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all.bytes
}

// live returns the task with the given ID unless it expired, which it
// drops. s.mu is held.
func (s *MemoryStore) live(id string) (*entry, bool) {
	e, ok := s.tasks[id]
	if !ok {
		return nil, false
	}
	if s.expired(e.task, s.now()) {
		s.remove(e)
		return nil, false
	}
	return e, true
}

func (s *MemoryStore) expired(t *Task, now time.Time) bool {
	return !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt)
}

// dropExpired drops every expired task. s.mu is held.
func (s *MemoryStore) dropExpired() {
	now := s.now()
	for len(s.expiry) > 0 && s.expired(s.expiry[0].task, now) {
		s.remove(s.expiry[0])
	}
}

// makeRoom drops as few terminal tasks as it takes, those that ended first
// first, for a new task of size bytes owned by owner to fit in the store's
// bounds, and reports whether it fits. It drops nothing when dropping every
// terminal task would not make room. s.mu is held.
func (s *MemoryStore) makeRoom(owner string, size int64) bool {
	o := s.owners[quotaOf(owner)]
	if o == nil {
		o = &usage{}
	}
	if !s.all.couldFit(size, s.maxTasks, s.maxBytes) || !o.couldFit(size, s.ownerTasks, s.ownerBytes) {
		return false
	}
	for !o.fits(size, s.ownerTasks, s.ownerBytes) {
		s.remove(o.ended.Front().Value.(*entry))
	}
	for !s.all.fits(size, s.maxTasks, s.maxBytes) {
		s.remove(s.all.ended.Front().Value.(*entry))
	}
	return true
}

// add puts e in the store. s.mu is held.
func (s *MemoryStore) add(e *entry) {
	s.tasks[e.task.ID] = e
	e.owner = s.owners[quotaOf(e.task.Owner)]
	if e.owner == nil {
		e.owner = &usage{}
		s.owners[quotaOf(e.task.Owner)] = e.owner
	}
	s.all.count(e, 1)
	e.owner.count(e, 1)
	if e.task.Status.Terminal() {
		s.ended(e)
	}
	if !e.task.ExpiresAt.IsZero() {
		heap.Push(&s.expiry, e)
	}
}

// remove takes e out of the store. s.mu is held.
func (s *MemoryStore) remove(e *entry) {
	delete(s.tasks, e.task.ID)
	s.all.count(e, -1)
	e.owner.count(e, -1)
	if e.ended != nil {
		s.all.ended.Remove(e.ended)
		e.owner.ended.Remove(e.ownerEnded)
		e.ended, e.ownerEnded = nil, nil
	}
	if e.owner.tasks == 0 {
		delete(s.owners, quotaOf(e.task.Owner))
	}
	if e.index >= 0 {
		heap.Remove(&s.expiry, e.index)
	}
}

// replace makes t, of the same owner as e's task, e's task, in its place
// among the terminal tasks if e's was one. s.mu is held.
func (s *MemoryStore) replace(e *entry, t *Task, size int64) {
	s.all.count(e, -1)
	e.owner.count(e, -1)
	old := e.task
	e.task, e.size = t, size
	s.all.count(e, 1)
	e.owner.count(e, 1)
	switch {
	case !old.Status.Terminal() && t.Status.Terminal():
		s.ended(e)
	case old.Status.Terminal() && !t.Status.Terminal(): // not a Manager's doing
		s.all.ended.Remove(e.ended)
		e.owner.ended.Remove(e.ownerEnded)
		e.ended, e.ownerEnded = nil, nil
	}
	switch {
	case t.ExpiresAt.Equal(old.ExpiresAt):
	case e.index >= 0 && t.ExpiresAt.IsZero():
		heap.Remove(&s.expiry, e.index)
	case e.index >= 0:
		heap.Fix(&s.expiry, e.index)
	case !t.ExpiresAt.IsZero():
		heap.Push(&s.expiry, e)
	}
}

// ended lists e, whose task is terminal, among the terminal tasks, last.
// s.mu is held.
func (s *MemoryStore) ended(e *entry) {
	e.ended = s.all.ended.PushBack(e)
	e.ownerEnded = e.owner.ended.PushBack(e)
}

// count adds e to u's counts (sign 1) or takes it away (sign -1).
func (u *usage) count(e *entry, sign int) {
	u.tasks += sign
	u.bytes += int64(sign) * e.size
	if e.task.Status.Terminal() {
		u.endedTasks += sign
		u.endedBytes += int64(sign) * e.size
	}
}

// fits reports whether one more task of size bytes stays within maxTasks
// and maxBytes.
func (u *usage) fits(size int64, maxTasks int, maxBytes int64) bool {
	return u.tasks < maxTasks && u.bytes+size <= maxBytes
}

// couldFit reports whether one more task of size bytes would stay within
// maxTasks and maxBytes once every terminal task is dropped.
func (u *usage) couldFit(size int64, maxTasks int, maxBytes int64) bool {
	return u.tasks-u.endedTasks < maxTasks && u.bytes-u.endedBytes+size <= maxBytes
}

// An expiryQueue is a heap of entries, the one that expires first on top
// (container/heap).
type expiryQueue []*entry

func (q expiryQueue) Len() int { return len(q) }
func (q expiryQueue) Less(i, j int) bool {
	return q[i].task.ExpiresAt.Before(q[j].task.ExpiresAt)
}
func (q expiryQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *expiryQueue) Push(x any) {
	e := x.(*entry)
	e.index = len(*q)
	*q = append(*q, e)
}
func (q *expiryQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*q = old[:len(old)-1]
	return e
}

// quotaOf returns the quota an owner's tasks count against: a verified
// user's own (the owner, "sub:..." by mcpkit.Principal's rule), else the
// one quota of every caller no verifier vouched for, "".
func quotaOf(owner string) string {
	if strings.HasPrefix(owner, "sub:") {
		return owner
	}
	return ""
}
