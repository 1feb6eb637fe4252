package tasks

import (
	"context"
	"sync"
	"time"
)

// MemoryStoreOptions configures [NewMemoryStore]. A nil
// *MemoryStoreOptions means the defaults.
type MemoryStoreOptions struct {
	// MaxTasks bounds the number of tasks kept. When it is reached,
	// Create drops the terminal task that ended first, and fails with
	// [ErrStoreFull] when every task kept is still running. Zero means
	// 10000.
	MaxTasks int

	// Now is the store's clock, for tests. Nil means time.Now.
	Now func() time.Time
}

// A MemoryStore is a [Store] in the memory of one process: for a server
// that runs as a single replica, and for tests. Expired tasks are dropped
// when they are next looked at or when room is needed.
type MemoryStore struct {
	max int
	now func() time.Time

	mu    sync.Mutex
	tasks map[string]*Task
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	s := &MemoryStore{max: 10000, now: time.Now, tasks: map[string]*Task{}}
	if opts != nil {
		if opts.MaxTasks > 0 {
			s.max = opts.MaxTasks
		}
		if opts.Now != nil {
			s.now = opts.Now
		}
	}
	return s
}

// Create implements [Store].
func (s *MemoryStore) Create(_ context.Context, t *Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live(t.ID); ok {
		return ErrExists
	}
	if len(s.tasks) >= s.max {
		s.makeRoom()
	}
	if len(s.tasks) >= s.max {
		return ErrStoreFull
	}
	s.tasks[t.ID] = t.clone()
	return nil
}

// Get implements [Store].
func (s *MemoryStore) Get(_ context.Context, id string) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.live(id)
	if !ok {
		return nil, ErrNotFound
	}
	return t.clone(), nil
}

// Update implements [Store].
func (s *MemoryStore) Update(_ context.Context, id string, fn func(*Task) error) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.live(id)
	if !ok {
		return nil, ErrNotFound
	}
	t2 := t.clone()
	if err := fn(t2); err != nil {
		return nil, err
	}
	t2.ID = id
	s.tasks[id] = t2
	return t2.clone(), nil
}

// Len returns the number of tasks the store holds, expired ones included
// until they are dropped.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}

// live returns the task with the given ID unless it expired, which it
// drops. s.mu is held.
func (s *MemoryStore) live(id string) (*Task, bool) {
	t, ok := s.tasks[id]
	if !ok {
		return nil, false
	}
	if s.expired(t, s.now()) {
		delete(s.tasks, id)
		return nil, false
	}
	return t, true
}

func (s *MemoryStore) expired(t *Task, now time.Time) bool {
	return !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt)
}

// makeRoom drops every expired task, and if none was, the terminal task
// updated least recently. s.mu is held.
func (s *MemoryStore) makeRoom() {
	now := s.now()
	n := len(s.tasks)
	var oldest *Task
	for id, t := range s.tasks {
		if s.expired(t, now) {
			delete(s.tasks, id)
			continue
		}
		if t.Status.Terminal() && (oldest == nil || t.UpdatedAt.Before(oldest.UpdatedAt)) {
			oldest = t
		}
	}
	if len(s.tasks) == n && oldest != nil {
		delete(s.tasks, oldest.ID)
	}
}
