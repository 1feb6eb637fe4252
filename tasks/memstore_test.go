package tasks

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestMemoryStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := NewMemoryStore(&MemoryStoreOptions{MaxTasks: 2})
		now := time.Now()
		mk := func(id string, st Status, ttl time.Duration) *Task {
			return &Task{ID: id, Status: st, CreatedAt: now, UpdatedAt: time.Now(), ExpiresAt: now.Add(ttl)}
		}
		if err := s.Create(ctx, mk("a", Working, time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, mk("a", Working, time.Hour)); !errors.Is(err, ErrExists) {
			t.Errorf("duplicate: %v", err)
		}
		if err := s.Create(ctx, mk("b", Working, time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, mk("c", Working, time.Hour)); !errors.Is(err, ErrStoreFull) {
			t.Errorf("full of running tasks: %v", err)
		}

		// Copies in, copies out.
		got, _ := s.Get(ctx, "a")
		got.Status = Failed
		if again, _ := s.Get(ctx, "a"); again.Status != Working {
			t.Error("Get returned the stored task itself")
		}
		boom := errors.New("boom")
		if _, err := s.Update(ctx, "a", func(t *Task) error { t.Status = Failed; return boom }); err != boom {
			t.Errorf("Update: %v", err)
		}
		if again, _ := s.Get(ctx, "a"); again.Status != Working {
			t.Error("a failed Update stored its change")
		}
		if _, err := s.Update(ctx, "zz", func(*Task) error { return nil }); !errors.Is(err, ErrNotFound) {
			t.Errorf("Update of unknown task: %v", err)
		}

		// A terminal task makes room for a new one.
		if _, err := s.Update(ctx, "a", func(t *Task) error { t.Status = Completed; return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, mk("c", Working, time.Hour)); err != nil {
			t.Errorf("after a task ended: %v", err)
		}
		if _, err := s.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("the ended task was kept: %v", err)
		}

		// Expiry.
		time.Sleep(time.Minute)
		if _, err := s.Get(ctx, "b"); !errors.Is(err, ErrNotFound) {
			t.Errorf("expired task: %v", err)
		}
		if s.Len() != 1 {
			t.Errorf("Len = %d, want 1", s.Len())
		}
	})
}
