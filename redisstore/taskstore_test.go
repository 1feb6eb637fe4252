package redisstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
	"github.com/mcpkit/mcpkit/tasks"
)

// testTaskStoreContract checks the behaviour every [tasks.Store] shares
// (the in-memory one's tests in the tasks package, less what is its own:
// MaxTasks), against stores made by newStore, each empty. Expiry is
// waited for on the wall clock, in short bounded polls.
func testTaskStoreContract(t *testing.T, newStore func(t *testing.T) tasks.Store) {
	ctx := context.Background()
	now := time.Now()
	mk := func(id string, ttl time.Duration) *tasks.Task {
		return &tasks.Task{ID: id, Owner: "alice", Tool: "report", Status: tasks.Working,
			CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(ttl), LeaseUntil: now.Add(time.Minute)}
	}
	asJSON := func(t *testing.T, task *tasks.Task) string {
		t.Helper()
		b, err := json.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		full := mk("full", time.Hour)
		full.ToolVersion, full.StatusMessage, full.PollInterval = "2.1.0", "half way", 2*time.Second
		full.Result = json.RawMessage(`{"content":[]}`)
		full.Error = &jsonrpc.Error{Code: -32603, Message: "boom", Data: json.RawMessage(`{"x":1}`)}
		full.Arguments, full.ProtocolVersion = json.RawMessage(`{"q":"a"}`), "2026-07-28"
		full.ClientCapabilities = json.RawMessage(`{"extensions":{}}`)
		full.InputRequests, full.InputResponses, full.RequestState = json.RawMessage(`{"a":{}}`), json.RawMessage(`{"b":{}}`), "state"
		if err := s.Create(ctx, full); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "full")
		if err != nil {
			t.Fatal(err)
		}
		if asJSON(t, got) != asJSON(t, full) {
			t.Errorf("Get = %s\nwant %s", asJSON(t, got), asJSON(t, full))
		}
	})

	t.Run("CreateOnce", func(t *testing.T) {
		s := newStore(t)
		if err := s.Create(ctx, mk("a", time.Hour)); err != nil {
			t.Fatal(err)
		}
		again := mk("a", time.Hour)
		again.Owner = "mallory"
		if err := s.Create(ctx, again); !errors.Is(err, tasks.ErrExists) {
			t.Errorf("Create of a taken ID: %v, want ErrExists", err)
		}
		if got, _ := s.Get(ctx, "a"); got == nil || got.Owner != "alice" {
			t.Errorf("a second Create replaced the task: %+v", got)
		}
	})

	t.Run("Unknown", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("Get: %v, want ErrNotFound", err)
		}
		called := false
		if _, err := s.Update(ctx, "nope", func(*tasks.Task) error { called = true; return nil }); !errors.Is(err, tasks.ErrNotFound) || called {
			t.Errorf("Update: %v (fn called: %v), want ErrNotFound", err, called)
		}
	})

	// A store keeps and returns copies of a task's fields; the bytes of
	// its JSON fields may be shared, since nobody writes them (see
	// tasks.Task), so they are replaced here, never written.
	t.Run("Copies", func(t *testing.T) {
		s := newStore(t)
		task := mk("a", time.Hour)
		task.Arguments = json.RawMessage(`{"q":1}`)
		task.Error = &jsonrpc.Error{Code: -32603, Message: "boom"}
		if err := s.Create(ctx, task); err != nil {
			t.Fatal(err)
		}
		task.Status, task.Arguments, task.Error.Message = tasks.Failed, json.RawMessage(`{"q":2}`), "changed"
		got, _ := s.Get(ctx, "a")
		if got.Status != tasks.Working || string(got.Arguments) != `{"q":1}` || got.Error.Message != "boom" {
			t.Fatalf("Create kept the caller's task: %+v", got)
		}
		got.Status, got.Arguments, got.Error.Message = tasks.Failed, json.RawMessage(`{"q":2}`), "changed"
		if again, _ := s.Get(ctx, "a"); again.Status != tasks.Working || string(again.Arguments) != `{"q":1}` || again.Error.Message != "boom" {
			t.Errorf("Get returned the stored task itself: %+v", again)
		}
	})

	t.Run("Update", func(t *testing.T) {
		s := newStore(t)
		if err := s.Create(ctx, mk("a", time.Hour)); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		if _, err := s.Update(ctx, "a", func(t *tasks.Task) error { t.Status = tasks.Failed; return boom }); err != boom {
			t.Errorf("Update whose fn fails: %v, want fn's error itself", err)
		}
		if got, _ := s.Get(ctx, "a"); got.Status != tasks.Working {
			t.Error("a failed Update stored its change")
		}
		res := json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`)
		upd, err := s.Update(ctx, "a", func(t *tasks.Task) error {
			if t.ID != "a" || t.Owner != "alice" {
				return fmt.Errorf("fn got %+v", t)
			}
			t.ID = "other" // ignored: the ID is the key
			t.Status, t.Result = tasks.Completed, res
			return nil
		})
		if err != nil || upd.ID != "a" || upd.Status != tasks.Completed || !bytes.Equal(upd.Result, res) {
			t.Fatalf("Update = %+v, %v", upd, err)
		}
		got, _ := s.Get(ctx, "a")
		if asJSON(t, got) != asJSON(t, upd) {
			t.Errorf("Get after Update = %s\nUpdate returned %s", asJSON(t, got), asJSON(t, upd))
		}
		if _, err := s.Get(ctx, "other"); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("fn's change of ID made a task: %v", err)
		}
	})

	t.Run("Atomic", func(t *testing.T) {
		const writers, each = 8, 5
		s := newStore(t)
		if err := s.Create(ctx, mk("a", time.Hour)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				for range each {
					if _, err := s.Update(ctx, "a", func(t *tasks.Task) error { t.PollInterval++; return nil }); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if got, _ := s.Get(ctx, "a"); got.PollInterval != writers*each {
			t.Errorf("after %d increments: %d; an update was lost", writers*each, got.PollInterval)
		}
	})

	t.Run("Expiry", func(t *testing.T) {
		s := newStore(t)
		now := time.Now()
		short := mk("short", 300*time.Millisecond)
		short.CreatedAt, short.ExpiresAt = now, now.Add(300*time.Millisecond)
		forever := mk("forever", 0)
		forever.ExpiresAt = time.Time{}
		for _, task := range []*tasks.Task{short, forever, mk("long", time.Hour)} {
			if err := s.Create(ctx, task); err != nil {
				t.Fatal(err)
			}
		}
		// An update (a renewal, a status) keeps the task's expiry.
		if _, err := s.Update(ctx, "short", func(t *tasks.Task) error { t.Status = tasks.Completed; return nil }); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := s.Get(ctx, "short")
			if errors.Is(err, tasks.ErrNotFound) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatal("the task was kept 10s past its ExpiresAt")
			}
			time.Sleep(10 * time.Millisecond) // pacing, not an assertion
		}
		if time.Now().Before(short.ExpiresAt) {
			t.Errorf("the task was forgotten before its ExpiresAt")
		}
		if _, err := s.Update(ctx, "short", func(*tasks.Task) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("Update of an expired task: %v", err)
		}
		for _, id := range []string{"long", "forever"} {
			if _, err := s.Get(ctx, id); err != nil {
				t.Errorf("%s: %v", id, err)
			}
		}
	})
}

func TestTaskStoreContract(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		testTaskStoreContract(t, func(*testing.T) tasks.Store { return tasks.NewMemoryStore(nil) })
	})
	t.Run("Redis", func(t *testing.T) {
		testTaskStoreContract(t, func(t *testing.T) tasks.Store {
			s := redistest.Shared(t)
			return redisstore.NewTaskStore(s.Client(t), &redisstore.TaskStoreOptions{Prefix: s.Prefix(t)})
		})
	})
}

// TestTaskStoreKeys: a task is one key under the prefix, expiring at the
// task's ExpiresAt, whose value starts with a version byte; a value that
// is not a task is reported, not misread.
func TestTaskStoreKeys(t *testing.T) {
	ctx := context.Background()
	s := redistest.Shared(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	store := redisstore.NewTaskStore(c, &redisstore.TaskStoreOptions{Prefix: prefix})
	now := time.Now()
	if err := store.Create(ctx, &tasks.Task{ID: "t1", Status: tasks.Working, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	key := prefix + "task:t1"
	ttl, err := c.PTTL(ctx, key).Result()
	if err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("PTTL %s = %v, %v; want about an hour", key, ttl, err)
	}
	v, err := c.Get(ctx, key).Bytes()
	if err != nil || len(v) == 0 || v[0] != 1 || !json.Valid(v[1:]) {
		t.Errorf("value %q, %v; want version 1 and JSON", v, err)
	}

	def := redisstore.NewTaskStore(c, nil)
	if _, err := def.Get(ctx, "t1"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("another prefix sees the task: %v", err)
	}

	for name, v := range map[string]string{"empty": "", "newer": "\x02{}", "not JSON": "\x01{"} {
		if err := c.Set(ctx, prefix+"task:bad", v, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Get(ctx, "bad"); !errors.Is(err, redisstore.ErrMalformedTask) {
			t.Errorf("Get of a %s value: %v", name, err)
		}
		if _, err := store.Update(ctx, "bad", func(*tasks.Task) error { return nil }); !errors.Is(err, redisstore.ErrMalformedTask) {
			t.Errorf("Update of a %s value: %v", name, err)
		}
	}
}

// TestTaskStoreRedisDown: with Redis away, every method fails with an
// error that is not one of the store's answers about tasks.
func TestTaskStoreRedisDown(t *testing.T) {
	ctx := context.Background()
	store := redisstore.NewTaskStore(closedPortClient(t), nil)
	now := time.Now()
	err := store.Create(ctx, &tasks.Task{ID: "t", CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	_, gerr := store.Get(ctx, "t")
	_, uerr := store.Update(ctx, "t", func(*tasks.Task) error { return nil })
	for _, err := range []error{err, gerr, uerr} {
		if err == nil || errors.Is(err, tasks.ErrNotFound) || errors.Is(err, tasks.ErrExists) {
			t.Errorf("with Redis down: %v", err)
		}
	}
}

// TestTaskStoreFull: a Redis out of memory (maxmemory reached, policy
// noeviction) refuses a new task with tasks.ErrStoreFull, which the caller
// turns into a retryable error.
func TestTaskStoreFull(t *testing.T) {
	if os.Getenv("MCPKIT_REDIS_ADDR") != "" {
		t.Skip("changes the server's maxmemory: not on the external server MCPKIT_REDIS_ADDR")
	}
	ctx := context.Background()
	s := redistest.Start(t)
	c := s.Client(t)
	store := redisstore.NewTaskStore(c, &redisstore.TaskStoreOptions{Prefix: s.Prefix(t)})
	if err := c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	err := store.Create(ctx, &tasks.Task{ID: "t", CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	if !errors.Is(err, tasks.ErrStoreFull) {
		t.Errorf("Create with Redis out of memory: %v, want ErrStoreFull", err)
	}
}

// TestTaskStoreConflicts: an Update whose task another writer changes
// during each attempt gives up after a bounded number of attempts with
// ErrTaskConflict, having stored nothing; one that conflicts once is
// retried and succeeds.
func TestTaskStoreConflicts(t *testing.T) {
	ctx := context.Background()
	s := redistest.Shared(t)
	c := s.Client(t)
	prefix := s.Prefix(t)
	store := redisstore.NewTaskStore(s.Client(t), &redisstore.TaskStoreOptions{Prefix: prefix})
	now := time.Now()
	if err := store.Create(ctx, &tasks.Task{ID: "t", Status: tasks.Working, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// rewrite writes the task again, unchanged, as another replica's
	// lease renewal would.
	rewrite := func() {
		v, err := c.Get(ctx, prefix+"task:t").Result()
		if err == nil {
			err = c.Set(ctx, prefix+"task:t", v, redis.KeepTTL).Err()
		}
		if err != nil {
			t.Error(err)
		}
	}

	calls := 0
	_, err := store.Update(ctx, "t", func(t *tasks.Task) error {
		calls++
		rewrite()
		t.Status = tasks.Failed
		return nil
	})
	if !errors.Is(err, redisstore.ErrTaskConflict) || calls < 2 {
		t.Errorf("Update always in conflict: %v after %d attempts", err, calls)
	}
	if got, _ := store.Get(ctx, "t"); got.Status != tasks.Working {
		t.Errorf("an Update that gave up stored %s", got.Status)
	}

	calls = 0
	got, err := store.Update(ctx, "t", func(t *tasks.Task) error {
		calls++
		if calls == 1 {
			rewrite()
		}
		t.Status = tasks.Completed
		return nil
	})
	if err != nil || calls != 2 || got.Status != tasks.Completed {
		t.Errorf("Update in conflict once: %+v, %v after %d attempts", got, err, calls)
	}
}
