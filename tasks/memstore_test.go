package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestMemoryStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := NewMemoryStore(&MemoryStoreOptions{MaxTasks: 2, MaxTasksPerOwner: 2})
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

// TestMemoryStoreBytes: the store counts a task's bytes, its arguments
// above all, from its creation to its end and its expiry.
func TestMemoryStoreBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := NewMemoryStore(nil)
		now := time.Now()
		args := json.RawMessage(`"` + strings.Repeat("a", 100_000) + `"`)
		task := &Task{ID: "a", Owner: "alice", Tool: "report", Status: Working, CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(time.Hour), Arguments: args}
		if err := s.Create(ctx, task); err != nil {
			t.Fatal(err)
		}
		if got := s.Bytes(); got < int64(len(args)) || got > int64(len(args))+1024 {
			t.Errorf("a task with %d bytes of arguments counts %d bytes", len(args), got)
		}
		if got, _ := s.Get(ctx, "a"); &got.Arguments[0] != &args[0] {
			t.Error("the store copied the arguments")
		}
		before := s.Bytes()
		result := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("r", 50_000) + `"}]}`)
		if _, err := s.Update(ctx, "a", func(t *Task) error {
			t.Status, t.Result, t.Arguments = Completed, result, nil
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got, want := s.Bytes(), before+int64(len(result)-len(args)); got != want {
			t.Errorf("after the task ended: %d bytes, want %d", got, want)
		}
		time.Sleep(time.Hour)
		if err := s.Create(ctx, &Task{ID: "b", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if got, want := s.Bytes(), (&Task{ID: "b"}).size(); got != want || s.Len() != 1 {
			t.Errorf("after the first task expired: %d tasks, %d bytes, want 1 and %d", s.Len(), got, want)
		}
	})
}

// TestMemoryStoreOwnerQuota: one principal cannot take more than its share
// of the store; when it has used it up with running tasks, its calls are
// refused and another principal's are not. Its own terminal tasks make
// room for it, not those of others.
func TestMemoryStoreOwnerQuota(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts MemoryStoreOptions
		args int // bytes of arguments of each task
	}{
		// A quarter of each, by default: two tasks of 100 kB, or two
		// tasks.
		{"bytes", MemoryStoreOptions{MaxBytes: 1 << 20}, 100_000},
		{"tasks", MemoryStoreOptions{MaxTasks: 8}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := NewMemoryStore(&tc.opts)
			mk := func(id, owner string) *Task {
				return &Task{ID: id, Owner: owner, Status: Working, CreatedAt: time.Now(),
					Arguments: json.RawMessage(`"` + strings.Repeat("a", tc.args) + `"`)}
			}
			end := func(id string) {
				t.Helper()
				if _, err := s.Update(ctx, id, func(t *Task) error { t.Status = Completed; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range []string{"alice-1", "alice-2", "bob-1"} {
				if err := s.Create(ctx, mk(id, "sub:"+id[:len(id)-2])); err != nil {
					t.Fatalf("%s: %v", id, err)
				}
			}
			if err := s.Create(ctx, mk("alice-3", "sub:alice")); !errors.Is(err, ErrStoreFull) {
				t.Fatalf("alice over her quota: %v, want ErrStoreFull", err)
			}
			if err := s.Create(ctx, mk("bob-2", "sub:bob")); err != nil {
				t.Fatalf("bob, within his quota: %v", err)
			}
			// Callers no verifier vouched for share one quota, whatever
			// token each made up: two fill it, a third is refused.
			for i, owner := range []string{"tok:0001", "", "tok:0002"} {
				err := s.Create(ctx, mk(fmt.Sprint("anon-", i), owner))
				if full := errors.Is(err, ErrStoreFull); full != (i == 2) || err != nil && !full {
					t.Fatalf("unverified caller %d (%q): %v", i, owner, err)
				}
			}
			end("bob-1")
			end("alice-1")
			if err := s.Create(ctx, mk("alice-3", "sub:alice")); err != nil {
				t.Fatalf("alice, once a task of hers ended: %v", err)
			}
			for id, kept := range map[string]bool{"alice-1": false, "alice-2": true, "alice-3": true, "bob-1": true, "bob-2": true} {
				if _, err := s.Get(ctx, id); (err == nil) != kept {
					t.Errorf("%s: kept %t, want %t", id, err == nil, kept)
				}
			}
		})
	}
}

// TestMemoryStoreFull: a store full of running tasks refuses a new one and
// drops nothing; terminal tasks make room, those that ended first first,
// as few as it takes.
func TestMemoryStoreFull(t *testing.T) {
	ctx := t.Context()
	const args = 100_000
	// Room for three tasks, and no quota of principals.
	s := NewMemoryStore(&MemoryStoreOptions{MaxBytes: 3*args + 3*1024, MaxBytesPerOwner: 1 << 30})
	mk := func(id string) *Task {
		return &Task{ID: id, Status: Working, Arguments: json.RawMessage(`"` + strings.Repeat("a", args) + `"`)}
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := s.Create(ctx, mk(id)); err != nil {
			t.Fatal(err)
		}
	}
	before := s.Bytes()
	if err := s.Create(ctx, mk("d")); !errors.Is(err, ErrStoreFull) {
		t.Fatalf("full of running tasks: %v", err)
	}
	if s.Len() != 3 || s.Bytes() != before {
		t.Errorf("a refused Create changed the store: %d tasks, %d bytes", s.Len(), s.Bytes())
	}
	for _, id := range []string{"c", "a"} { // c ends first
		if _, err := s.Update(ctx, id, func(t *Task) error { t.Status = Cancelled; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, mk("d")); err != nil {
		t.Fatal(err)
	}
	for id, kept := range map[string]bool{"a": true, "b": true, "c": false, "d": true} {
		if _, err := s.Get(ctx, id); (err == nil) != kept {
			t.Errorf("%s: kept %t, want %t", id, err == nil, kept)
		}
	}
}

// TestMemoryStoreUpdateGrowth: an Update that makes a task larger than the
// store has room for fails with ErrStoreFull and changes nothing; one that
// does not make it larger succeeds in a full store.
func TestMemoryStoreUpdateGrowth(t *testing.T) {
	ctx := t.Context()
	s := NewMemoryStore(&MemoryStoreOptions{MaxBytes: 200_000, MaxBytesPerOwner: 200_000})
	big := json.RawMessage(`"` + strings.Repeat("a", 150_000) + `"`)
	if err := s.Create(ctx, &Task{ID: "a", Status: Working, Arguments: big}); err != nil {
		t.Fatal(err)
	}
	before := s.Bytes()
	if _, err := s.Update(ctx, "a", func(t *Task) error {
		t.Status, t.Result = Completed, big
		return nil
	}); !errors.Is(err, ErrStoreFull) {
		t.Fatalf("growing past the store: %v", err)
	}
	if got, _ := s.Get(ctx, "a"); got.Status != Working || got.Result != nil || s.Bytes() != before {
		t.Errorf("a refused Update changed the task: %+v, %d bytes", got, s.Bytes())
	}
	if _, err := s.Update(ctx, "a", func(t *Task) error { t.LeaseUntil = time.Now(); return nil }); err != nil {
		t.Errorf("an Update that does not grow the task: %v", err)
	}
	if _, err := s.Update(ctx, "a", func(t *Task) error {
		t.Status, t.Result, t.Arguments = Completed, big, nil
		return nil
	}); err != nil {
		t.Errorf("an Update that trades the arguments for a result of their size: %v", err)
	}
}

// TestMemoryStoreBookkeeping runs random operations on a small store and
// checks after each that its counts, lists and expiry queue agree with the
// tasks it holds and stay within its bounds.
func TestMemoryStoreBookkeeping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		rng := rand.New(rand.NewPCG(1, 2))
		s := NewMemoryStore(&MemoryStoreOptions{MaxTasks: 12, MaxBytes: 20_000, MaxTasksPerOwner: 6, MaxBytesPerOwner: 9_000})
		owners := []string{"", "sub:alice", "sub:bob", "tok:0001"}
		statuses := []Status{Working, InputRequired, Completed, Failed, Cancelled}
		blob := func() json.RawMessage { return json.RawMessage(strings.Repeat("x", rng.IntN(3000))) }
		for i := range 2000 {
			id := fmt.Sprint(rng.IntN(30))
			switch rng.IntN(4) {
			case 0, 1:
				task := &Task{ID: id, Owner: owners[rng.IntN(len(owners))], Status: statuses[rng.IntN(len(statuses))], Arguments: blob()}
				if rng.IntN(4) > 0 {
					task.ExpiresAt = time.Now().Add(time.Duration(rng.IntN(60)) * time.Second)
				}
				s.Create(ctx, task)
			case 2:
				s.Update(ctx, id, func(t *Task) error {
					switch rng.IntN(4) {
					case 0:
						t.Status = statuses[rng.IntN(len(statuses))]
					case 1:
						t.Result = blob()
					case 2:
						t.ExpiresAt = time.Now().Add(time.Duration(rng.IntN(60)) * time.Second)
					case 3:
						t.Owner = owners[rng.IntN(len(owners))]
					}
					return nil
				})
			case 3:
				s.Get(ctx, id)
				time.Sleep(time.Second)
			}
			checkBookkeeping(t, s, i)
		}
	})
}

func checkBookkeeping(t *testing.T, s *MemoryStore, step int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]*usage{}
	var all usage
	queued := 0
	for id, e := range s.tasks {
		if e.task.ID != id || e.size != e.task.size() || e.owner != s.owners[quotaOf(e.task.Owner)] {
			t.Fatalf("step %d: entry %s is inconsistent", step, id)
		}
		if (e.ended != nil) != e.task.Status.Terminal() || (e.ownerEnded != nil) != (e.ended != nil) {
			t.Fatalf("step %d: %s (%s) listed as ended: %t", step, id, e.task.Status, e.ended != nil)
		}
		if (e.index >= 0) != !e.task.ExpiresAt.IsZero() || e.index >= 0 && s.expiry[e.index] != e {
			t.Fatalf("step %d: %s misplaced in the expiry queue", step, id)
		}
		if e.index >= 0 {
			queued++
		}
		u := want[quotaOf(e.task.Owner)]
		if u == nil {
			u = &usage{}
			want[quotaOf(e.task.Owner)] = u
		}
		u.count(e, 1)
		all.count(e, 1)
	}
	same := func(a, b *usage) bool {
		return a.tasks == b.tasks && a.bytes == b.bytes && a.endedTasks == b.endedTasks && a.endedBytes == b.endedBytes && b.ended.Len() == a.endedTasks
	}
	if !same(&all, &s.all) || queued != len(s.expiry) || len(want) != len(s.owners) {
		t.Fatalf("step %d: counts %+v, want %+v", step, s.all, all)
	}
	for owner, u := range want {
		if !same(u, s.owners[owner]) {
			t.Fatalf("step %d: counts of %q %+v, want %+v", step, owner, s.owners[owner], u)
		}
		if u.tasks > s.ownerTasks || u.bytes > s.ownerBytes {
			t.Fatalf("step %d: %q over quota: %d tasks, %d bytes", step, owner, u.tasks, u.bytes)
		}
	}
	if all.tasks > s.maxTasks || all.bytes > s.maxBytes {
		t.Fatalf("step %d: over the bounds: %d tasks, %d bytes", step, all.tasks, all.bytes)
	}
	for i := 1; i < len(s.expiry); i++ {
		if s.expiry[i].task.ExpiresAt.Before(s.expiry[(i-1)/2].task.ExpiresAt) {
			t.Fatalf("step %d: expiry queue out of order", step)
		}
	}
}
