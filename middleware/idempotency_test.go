package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// withKey is the request option of a call with idempotency key k.
func withKey(k any) mcpkittest.RequestOption {
	return mcpkittest.WithMeta(mcp.Meta{middleware.MetaKeyIdempotencyKey: k})
}

// outcome describes what a call got, for comparing with a want string:
// "call N" (the Nth run of the handler), "replay N" (a replay of it),
// or the text of an error.
func outcome(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	if res == nil || len(res.Content) != 1 {
		return fmt.Sprintf("result %+v", res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return "isError: " + text
	}
	if res.Meta[middleware.MetaKeyIdempotent] == "replayed" {
		return strings.Replace(text, "call", "replay", 1)
	}
	return text
}

func TestIdempotent(t *testing.T) {
	ada := asAda
	bob := mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "bob"})
	anonymous := mcpkittest.WithTokenInfo(nil)
	token := func(tok string) mcpkittest.RequestOption {
		return mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer " + tok}})
	}
	pay := newTool("pay", nil)
	payV2 := newTool("pay", nil)
	payV2.Version = "2"
	refund := newTool("refund", nil)
	type call struct {
		tool *mcpkit.Tool
		args string
		opts []mcpkittest.RequestOption // after ada's
		want string
	}
	reused := `error: tool "pay": this idempotency key was used for a call with other arguments, to another version of the tool or by another name; use a new key for a new call`
	refused := `error: tool "pay": an idempotency key needs an authenticated caller (a bearer token): anonymous callers cannot be told apart`
	invalid := `error: the idempotency key (_meta "io.github.mcpkit/idempotencyKey") must be a string of 1 to 256 bytes`
	tests := []struct {
		name  string
		opts  *middleware.IdempotencyOptions
		calls []call
	}{
		{"replay", nil, []call{
			{pay, `{"amount":10}`, []mcpkittest.RequestOption{withKey("k1")}, "call 1"},
			{pay, `{"amount":10}`, []mcpkittest.RequestOption{withKey("k1")}, "replay 1"},
			{pay, `{ "amount" : 10 }`, []mcpkittest.RequestOption{withKey("k1")}, "replay 1"},
			{pay, `{"amount":10}`, []mcpkittest.RequestOption{withKey("k2")}, "call 2"},
			{pay, `{"amount":10}`, nil, "call 3"},
			{pay, `{"amount":10}`, nil, "call 4"},
		}},
		{"key reused", nil, []call{
			{pay, `{"amount":10}`, []mcpkittest.RequestOption{withKey("k1")}, "call 1"},
			{pay, `{"amount":20}`, []mcpkittest.RequestOption{withKey("k1")}, reused},
			{payV2, `{"amount":10}`, []mcpkittest.RequestOption{withKey("k1")}, reused},
			{pay, `{"amount":10}`, []mcpkittest.RequestOption{withKey("k1")}, "replay 1"},
		}},
		{"keys are per tool and principal", nil, []call{
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), ada}, "call 1"},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), bob}, "call 2"},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), anonymous, token("t1")}, "call 3"},
			{refund, `{}`, []mcpkittest.RequestOption{withKey("k1"), ada}, "call 4"},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), ada}, "replay 1"},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), bob}, "replay 2"},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), anonymous, token("t1")}, "replay 3"},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), anonymous, token("t2")}, "call 5"},
		}},
		{"anonymous callers", nil, []call{
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), anonymous}, refused},
			{pay, `{}`, []mcpkittest.RequestOption{withKey(42), anonymous}, refused},
			{pay, `{}`, []mcpkittest.RequestOption{anonymous}, "call 1"},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), anonymous}, refused},
		}},
		{"anonymous callers, required", &middleware.IdempotencyOptions{Require: true}, []call{
			{pay, `{}`, []mcpkittest.RequestOption{anonymous}, refused},
		}},
		{"anonymous callers, with a key option", &middleware.IdempotencyOptions{Key: func(*mcpkit.Request) string { return "" }}, []call{
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), anonymous}, "call 1"},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), anonymous}, "replay 1"},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k1"), ada}, "replay 1"},
		}},
		{"invalid keys", nil, []call{
			{pay, `{}`, []mcpkittest.RequestOption{withKey(42)}, invalid},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("")}, invalid},
			{pay, `{}`, []mcpkittest.RequestOption{withKey(strings.Repeat("k", 257))}, invalid},
			{pay, `{}`, []mcpkittest.RequestOption{withKey(strings.Repeat("k", 256))}, "call 1"},
		}},
		{"required", &middleware.IdempotencyOptions{Require: true}, []call{
			{pay, `{}`, nil, `error: tool "pay" needs an idempotency key: a string in the request's _meta under "io.github.mcpkit/idempotencyKey"`},
			{pay, `{}`, []mcpkittest.RequestOption{withKey("k")}, "call 1"},
		}},
		{"arguments without a canonical form", nil, []call{
			{pay, `{"a":1,"a":2}`, []mcpkittest.RequestOption{withKey("k")}, "call 1"},
			{pay, `{"a":1,"a":2}`, []mcpkittest.RequestOption{withKey("k")}, "replay 1"},
			{pay, `{"a":2,"a":1}`, []mcpkittest.RequestOption{withKey("k")}, reused},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &counter{}
			mw := middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), tt.opts)(h)
			for i, c := range tt.calls {
				opts := append([]mcpkittest.RequestOption{ada}, c.opts...)
				res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(c.tool, json.RawMessage(c.args), opts...))
				if got := outcome(res, err); got != c.want {
					t.Errorf("call %d: got %q, want %q", i, got, c.want)
				}
			}
		})
	}
}

// TestIdempotentErrorClasses checks the sentinels and classes of the
// rejections.
func TestIdempotentErrorClasses(t *testing.T) {
	s := middleware.NewMemoryIdempotencyStore(nil)
	started, release := make(chan struct{}), make(chan struct{})
	mw := middleware.Idempotent(s, &middleware.IdempotencyOptions{RetryAfter: 2 * time.Second})(mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		close(started)
		<-release
		return textResult("done"), nil
	}))
	tool := newTool("pay", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, map[string]int{"a": 1}, withKey("k"), asAda))
	}()
	<-started
	_, inProgress := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, map[string]int{"a": 1}, withKey("k"), asAda))
	_, reused := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, map[string]int{"a": 2}, withKey("k"), asAda))
	_, invalid := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, nil, withKey(1), asAda))
	_, anonymous := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, nil, withKey("k")))
	close(release)
	<-done
	for _, tt := range []struct {
		err      error
		sentinel error
		class    mcpkit.ErrorClass
	}{
		{inProgress, middleware.ErrIdempotencyInProgress, mcpkit.Retryable},
		{reused, middleware.ErrIdempotencyKeyReused, mcpkit.Fatal},
		{invalid, middleware.ErrIdempotencyKeyInvalid, mcpkit.Fatal},
		{anonymous, middleware.ErrIdempotencyAnonymous, mcpkit.Fatal},
	} {
		if o, c := mcpkit.Classify(nil, tt.err); !errors.Is(tt.err, tt.sentinel) || o != mcpkit.OutcomeToolError || c != tt.class {
			t.Errorf("%v: outcome %s, class %s; want a tool error of class %s wrapping %v", tt.err, o, c, tt.class, tt.sentinel)
		}
	}
	if want := `tool "pay": a call with this idempotency key is in progress: try again in 2s`; inProgress.Error() != want {
		t.Errorf("in progress: %q, want %q", inProgress, want)
	}
	var rme mcpkit.ResultMetaError
	if !errors.As(inProgress, &rme) || rme.ResultMeta()[middleware.MetaKeyRetryAfter] != int64(2000) {
		t.Errorf("in progress: no retry delay in _meta")
	}
}

// TestIdempotentReleases checks that failures, requests for input and
// panics release the key, so that a retry runs the tool again, and that
// they are never replayed.
func TestIdempotentReleases(t *testing.T) {
	tests := []struct {
		name  string
		first func() (*mcp.CallToolResult, error)
	}{
		{"Go error", func() (*mcp.CallToolResult, error) { return nil, errDB }},
		{"tool error", func() (*mcp.CallToolResult, error) { return nil, mcpkit.ToolErrorf("card declined") }},
		{"isError result", func() (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "declined"}}}, nil
		}},
		{"input_required", func() (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Message: "Pay?"}}}, nil
		}},
		{"panic", func() (*mcp.CallToolResult, error) { panic("boom") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &counter{respond: func(n int32, req *mcpkit.Request) (*mcp.CallToolResult, error) {
				if n == 1 {
					return tt.first()
				}
				return textResult(fmt.Sprintf("call %d", n)), nil
			}}
			mw := mcpkit.Chain(middleware.Recover(nil), middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil))(h)
			req := func() *mcpkit.Request {
				return mcpkittest.NewRequest(newTool("pay", nil), map[string]int{"a": 1}, withKey("k"), asAda)
			}
			if res, _ := mw.ServeTool(t.Context(), req()); res != nil && res.Meta[middleware.MetaKeyIdempotent] != nil {
				t.Fatal("the first call was a replay")
			}
			for i, want := range []string{"call 2", "replay 2"} {
				if got := outcome(mw.ServeTool(t.Context(), req())); got != want {
					t.Errorf("retry %d: %q, want %q", i, got, want)
				}
			}
		})
	}
}

// TestIdempotentConcurrent sends one key from many goroutines at once: the
// handler runs once, the others are told it is in progress, and every call
// afterwards gets the replay.
func TestIdempotentConcurrent(t *testing.T) {
	const n = 32
	var runs atomic.Int32
	release := make(chan struct{})
	mw := middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil)(mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		runs.Add(1)
		<-release
		return textResult("paid"), nil
	}))
	tool := newTool("pay", nil)
	var wg sync.WaitGroup
	var ran, busy atomic.Int32
	for range n {
		wg.Go(func() {
			res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, map[string]int{"amount": 10}, withKey("k"), asAda))
			switch {
			case errors.Is(err, middleware.ErrIdempotencyInProgress):
				if busy.Add(1) == n-1 {
					close(release) // every other call has been turned away
				}
			case err == nil && outcome(res, err) == "paid":
				ran.Add(1)
			default:
				t.Errorf("got %q", outcome(res, err))
			}
		})
	}
	wg.Wait()
	if runs.Load() != 1 || ran.Load() != 1 || busy.Load() != n-1 {
		t.Fatalf("handler ran %d times; %d calls answered, %d in progress", runs.Load(), ran.Load(), busy.Load())
	}
	for range n {
		wg.Go(func() {
			res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(tool, map[string]int{"amount": 10}, withKey("k"), asAda))
			if err != nil || res.Meta[middleware.MetaKeyIdempotent] != "replayed" {
				t.Errorf("after the call: %q, want a replay", outcome(res, err))
			}
		})
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times", runs.Load())
	}
}

// TestIdempotentExpiry checks, in fake time, that an outcome is replayed
// for its TTL only, and that a claim whose process died frees its key when
// the lease ends.
func TestIdempotentExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := middleware.NewMemoryIdempotencyStore(nil)
		h := &counter{}
		mw := middleware.Idempotent(s, &middleware.IdempotencyOptions{TTL: time.Hour, Lease: time.Minute})(h)
		call := func(key string) string {
			return outcome(mw.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("pay", nil), nil, withKey(key), asAda)))
		}
		if got := call("k"); got != "call 1" {
			t.Fatalf("first call: %q", got)
		}
		time.Sleep(time.Hour - time.Second)
		if got := call("k"); got != "replay 1" {
			t.Errorf("within the TTL: %q", got)
		}
		time.Sleep(time.Second)
		if got := call("k"); got != "call 2" {
			t.Errorf("after the TTL: %q", got)
		}

		// A process claimed "dead" for this call and died: the key is
		// held until the lease ends.
		other := middleware.Idempotent(&claimSpy{IdempotencyStore: s, died: true}, &middleware.IdempotencyOptions{Lease: time.Minute})(h)
		other.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("pay", nil), nil, withKey("dead"), asAda))
		if got := call("dead"); !strings.Contains(got, "in progress") {
			t.Errorf("while the lease runs: %q", got)
		}
		time.Sleep(time.Minute)
		if got := call("dead"); got != "call 3" {
			t.Errorf("after the lease: %q", got)
		}
	})
}

// claimSpy wraps a store. With died set, it claims and then reports an
// error, which leaves the claim in place as a process that died after
// claiming would: nothing completes or releases it.
type claimSpy struct {
	middleware.IdempotencyStore
	died      bool
	completed chan struct{} // if not nil, receives after each Complete
}

func (s *claimSpy) Claim(ctx context.Context, key string, rec middleware.IdempotencyRecord, lease time.Duration) (middleware.IdempotencyRecord, bool, error) {
	existing, claimed, err := s.IdempotencyStore.Claim(ctx, key, rec, lease)
	if s.died && claimed {
		return middleware.IdempotencyRecord{}, false, errStore
	}
	return existing, claimed, err
}

func (s *claimSpy) Complete(ctx context.Context, key, token string, result []byte, ttl time.Duration) error {
	err := s.IdempotencyStore.Complete(ctx, key, token, result, ttl)
	if s.completed != nil {
		s.completed <- struct{}{}
	}
	return err
}

// TestIdempotentStoreFails checks both fail modes: by default the tool does
// not run and the caller is told to retry, with the store's error kept for
// outer middleware but not shown; with FailOpen the tool runs and a warning
// is logged, once a minute.
func TestIdempotentStoreFails(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		h := &counter{}
		mw := middleware.Idempotent(&failingStore{}, nil)(h)
		_, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("pay", nil), nil, withKey("k"), asAda))
		if h.n.Load() != 0 {
			t.Error("the tool ran")
		}
		if o, c := mcpkit.Classify(nil, err); o != mcpkit.OutcomeToolError || c != mcpkit.Retryable ||
			!errors.Is(err, middleware.ErrIdempotencyUnavailable) || !errors.Is(err, errStore) {
			t.Errorf("got %v (%s, %s), want a retryable tool error wrapping the store's", err, o, c)
		}
		if want := `tool "pay": idempotency store unavailable: try again later`; err.Error() != want {
			t.Errorf("text %q, want %q", err, want)
		}
		// Without a key nothing asks the store.
		if _, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("pay", nil), nil, asAda)); err != nil || h.n.Load() != 1 {
			t.Errorf("a call without a key: %v", err)
		}
	})
	t.Run("open", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var logs logBuffer
			h := &counter{}
			mw := middleware.Idempotent(&failingStore{}, &middleware.IdempotencyOptions{FailOpen: true, Logger: logs.logger()})(h)
			for i := range 3 {
				res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("pay", nil), nil, withKey("k"), asAda))
				if got, want := outcome(res, err), fmt.Sprintf("call %d", i+1); got != want {
					t.Errorf("call %d: %q, want %q", i, got, want)
				}
			}
			recs := logs.records(t)
			if len(recs) != 1 || recs[0]["level"] != "WARN" || recs[0]["msg"] != "middleware: idempotency store unavailable, calling the tool without the guarantee" || recs[0]["error"] != errStore.Error() {
				t.Errorf("records: %v", recs)
			}
		})
	})
	t.Run("complete fails", func(t *testing.T) {
		var logs logBuffer
		h := &counter{}
		s := &completeFailing{IdempotencyStore: middleware.NewMemoryIdempotencyStore(nil)}
		mw := middleware.Idempotent(s, &middleware.IdempotencyOptions{Logger: logs.logger()})(h)
		res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("pay", nil), nil, withKey("k"), asAda))
		if got := outcome(res, err); got != "call 1" {
			t.Errorf("got %q: the caller must get the result anyway", got)
		}
		if recs := logs.records(t); len(recs) != 1 || !strings.Contains(recs[0]["msg"].(string), "a repeat will run the tool again") {
			t.Errorf("records: %v", recs)
		}
	})
}

// completeFailing is a store whose Complete fails as after a lost lease.
type completeFailing struct{ middleware.IdempotencyStore }

func (completeFailing) Complete(context.Context, string, string, []byte, time.Duration) error {
	return middleware.ErrClaimLost
}

// TestIdempotentLargeResult checks that a result too large to keep is not
// run again on a repeat: the repeat is told the call ran.
func TestIdempotentLargeResult(t *testing.T) {
	h := &counter{respond: func(n int32, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		return textResult(strings.Repeat("x", 100)), nil
	}}
	mw := middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), &middleware.IdempotencyOptions{MaxResultBytes: 50})(h)
	for range 2 {
		mw.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("pay", nil), nil, withKey("k"), asAda))
	}
	res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("pay", nil), nil, withKey("k"), asAda))
	want := `isError: tool "pay" already ran for this idempotency key; its result (139 bytes) was too large to keep for a repeat`
	if got := outcome(res, err); got != want || h.n.Load() != 1 || mcpkit.ErrorClassOf(res) != mcpkit.Fatal {
		t.Errorf("got %q (ran %d times), want %q", got, h.n.Load(), want)
	}
}

// TestIdempotentKeepsNoMarks checks that a cache hit kept for replay is
// replayed without the cache's mark, and with the other _meta it had.
func TestIdempotentKeepsNoMarks(t *testing.T) {
	mw := middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil)(&counter{respond: func(int32, *mcpkit.Request) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{}, Meta: mcp.Meta{middleware.MetaKeyCache: "hit", "k": "v"}}, nil
	}})
	for range 2 {
		res, err := mw.ServeTool(t.Context(), mcpkittest.NewRequest(newTool("pay", nil), nil, withKey("k"), asAda))
		if err != nil || res.Meta["k"] != "v" {
			t.Fatalf("%+v, %v", res, err)
		}
		if res.Meta[middleware.MetaKeyIdempotent] == "replayed" && res.Meta[middleware.MetaKeyCache] != nil {
			t.Errorf("the replay carries the cache's mark: %v", res.Meta)
		}
	}
}

func TestIdempotentOptions(t *testing.T) {
	if h := mcpkit.HandlerFunc(ok); fmt.Sprint(middleware.Idempotent(nil, nil)(h)) != fmt.Sprint(h) {
		t.Error("a nil store adds a layer")
	}
	for _, opts := range []*middleware.IdempotencyOptions{{TTL: -1}, {Lease: -1}, {RetryAfter: -1}, {MaxResultBytes: -1}} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.HasPrefix(fmt.Sprint(v), "middleware: Idempotent: ") {
					t.Errorf("%+v: recover() = %v", opts, v)
				}
			}()
			middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), opts)
		}()
	}
}

func TestMemoryIdempotencyStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		s := middleware.NewMemoryIdempotencyStore(nil)
		rec := middleware.IdempotencyRecord{Fingerprint: "f", Token: "t1", Done: true, Result: []byte("ignored")}
		got, claimed, err := s.Claim(ctx, "k", rec, time.Minute)
		if err != nil || !claimed || got.Done || got.Result != nil || got.Token != "t1" {
			t.Fatalf("first Claim = %+v, %v, %v", got, claimed, err)
		}
		got, claimed, _ = s.Claim(ctx, "k", middleware.IdempotencyRecord{Fingerprint: "g", Token: "t2"}, time.Minute)
		if claimed || got.Token != "t1" || got.Fingerprint != "f" || got.Done {
			t.Errorf("second Claim = %+v, %v", got, claimed)
		}
		if err := s.Complete(ctx, "k", "t2", nil, time.Hour); !errors.Is(err, middleware.ErrClaimLost) {
			t.Errorf("Complete with another token: %v", err)
		}
		if err := s.Release(ctx, "k", "t2"); !errors.Is(err, middleware.ErrClaimLost) {
			t.Errorf("Release with another token: %v", err)
		}
		result := []byte("result")
		if err := s.Complete(ctx, "k", "t1", result, time.Hour); err != nil {
			t.Fatal(err)
		}
		result[0] = 'X' // the store keeps a copy
		got, claimed, _ = s.Claim(ctx, "k", middleware.IdempotencyRecord{Token: "t3"}, time.Minute)
		if claimed || !got.Done || string(got.Result) != "result" {
			t.Errorf("Claim of a done key = %+v, %v", got, claimed)
		}
		if err := s.Release(ctx, "k", "t1"); !errors.Is(err, middleware.ErrClaimLost) {
			t.Errorf("Release of a done record: %v", err)
		}

		// A lease that ends loses the claim.
		s.Claim(ctx, "l", middleware.IdempotencyRecord{Token: "t1"}, time.Minute)
		time.Sleep(time.Minute)
		if err := s.Complete(ctx, "l", "t1", nil, time.Hour); !errors.Is(err, middleware.ErrClaimLost) {
			t.Errorf("Complete after the lease: %v", err)
		}
		if _, claimed, _ := s.Claim(ctx, "l", middleware.IdempotencyRecord{Token: "t2"}, time.Minute); !claimed {
			t.Error("an expired claim still holds its key")
		}
		if err := s.Release(ctx, "l", "t2"); err != nil {
			t.Errorf("Release: %v", err)
		}
		if _, claimed, _ := s.Claim(ctx, "l", middleware.IdempotencyRecord{Token: "t3"}, time.Minute); !claimed {
			t.Error("a released key is still held")
		}
	})
}

// TestMemoryIdempotencyStoreClaimIsAtomic claims one key from many
// goroutines: exactly one succeeds.
func TestMemoryIdempotencyStoreClaimIsAtomic(t *testing.T) {
	s := middleware.NewMemoryIdempotencyStore(nil)
	for round := range 20 {
		key := fmt.Sprint(round)
		var claims atomic.Int32
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				if _, claimed, _ := s.Claim(t.Context(), key, middleware.IdempotencyRecord{Token: fmt.Sprint(g)}, time.Hour); claimed {
					claims.Add(1)
				}
			})
		}
		wg.Wait()
		if claims.Load() != 1 {
			t.Fatalf("round %d: %d claims", round, claims.Load())
		}
	}
}

// TestIdempotentEndToEnd calls through real SDK clients, with the key in
// the request's _meta, on every transport: a repeat is replayed with the
// mark in _meta; then, behind a time limit shorter than the call, the
// client that timed out retries, is told the call is in progress, and once
// the handler has finished gets its result. The in-memory transport
// carries no identity: the server has one client, as over stdio, and says
// so with a Key.
func TestIdempotentEndToEnd(t *testing.T) {
	var runs atomic.Int32
	var release chan struct{}
	var spy *claimSpy
	newSrv := func(t *testing.T) *mcpkit.Server {
		runs.Store(0)
		release = make(chan struct{})
		spy = &claimSpy{IdempotencyStore: middleware.NewMemoryIdempotencyStore(nil), completed: make(chan struct{}, 10)}
		handler := func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
			n := runs.Add(1)
			if req.Tool.Name == "slow_transfer" {
				<-release // ignores ctx: it runs on after the time limit
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("transfer %d", n)}},
				StructuredContent: map[string]any{"id": n},
			}, nil
		}
		// Only the slow tool has a time limit, so that nothing else
		// depends on how fast the machine is.
		return newServer(t, []mcpkit.Middleware{
			middleware.Recover(nil),
			mcpkit.ForTools(mcpkit.Named("slow_transfer"), middleware.Timeout(20*time.Millisecond, nil)),
			middleware.Idempotent(spy, &middleware.IdempotencyOptions{Key: func(*mcpkit.Request) string { return "the one client" }}),
		}, newTool("transfer", handler), newTool("slow_transfer", handler))
	}
	mcpkittest.ForEachTransport(t, newSrv, func(t *testing.T, ts *mcpkittest.Server) {
		callTool := func(tool, key string, args map[string]any) *mcp.CallToolResult {
			t.Helper()
			res, err := ts.Session.CallTool(t.Context(), &mcp.CallToolParams{
				Meta: mcp.Meta{middleware.MetaKeyIdempotencyKey: key}, Name: tool, Arguments: args,
			})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		callKey := func(key string, args map[string]any) *mcp.CallToolResult {
			t.Helper()
			return callTool("transfer", key, args)
		}
		first := callKey("k1", map[string]any{"to": "bob", "amount": 10})
		again := callKey("k1", map[string]any{"amount": 10, "to": "bob"})
		<-spy.completed
		if first.IsError || again.IsError || again.Meta[middleware.MetaKeyIdempotent] != "replayed" || runs.Load() != 1 {
			t.Fatalf("first %+v, repeat %+v, %d runs", first, again, runs.Load())
		}
		if got := again.Content[0].(*mcp.TextContent).Text; got != "transfer 1" || fmt.Sprint(again.StructuredContent) != "map[id:1]" {
			t.Errorf("replay: %q, %v", got, again.StructuredContent)
		}
		other := callKey("k1", map[string]any{"to": "eve", "amount": 10})
		if !other.IsError || mcpkit.ErrorClassOf(other) != mcpkit.Fatal {
			t.Errorf("same key, other arguments: %+v", other)
		}

		slow := map[string]any{"to": "bob", "amount": 20}
		timedOut := callTool("slow_transfer", "k2", slow)
		if !timedOut.IsError || !strings.Contains(timedOut.Content[0].(*mcp.TextContent).Text, "timed out") {
			t.Fatalf("slow call: %+v", timedOut)
		}
		busy := callTool("slow_transfer", "k2", slow)
		if !busy.IsError || mcpkit.ErrorClassOf(busy) != mcpkit.Retryable || busy.Meta[middleware.MetaKeyRetryAfter] != float64(1000) {
			t.Fatalf("retry while the call runs: %+v", busy)
		}
		close(release)
		<-spy.completed // the handler returned and its result is kept
		replay := callTool("slow_transfer", "k2", slow)
		if replay.IsError || replay.Meta[middleware.MetaKeyIdempotent] != "replayed" || replay.Content[0].(*mcp.TextContent).Text != "transfer 2" {
			t.Errorf("retry after the call finished: %+v", replay)
		}
		if runs.Load() != 2 {
			t.Errorf("the tool ran %d times, want 2", runs.Load())
		}
	}, nil)
}

// TestInputRequiredNeverKept asks the client for input (an input_required
// result, SEP-2322) through CacheResults and Idempotent, on both protocol
// eras: neither keeps the request for input, the call completes with the
// answer, and only the final result is replayed.
func TestInputRequiredNeverKept(t *testing.T) {
	var asked, answered atomic.Int32
	confirm := withHandler(annotated("delete", &mcp.ToolAnnotations{IdempotentHint: true}), func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		answer, ok := mcpkit.InputResponse[*mcp.ElicitResult](req, "confirm")
		if !ok {
			asked.Add(1)
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"confirm": &mcp.ElicitParams{Message: "Delete?", RequestedSchema: objectSchema},
			}}, nil
		}
		answered.Add(1)
		return textResult("deleted: " + answer.Action), nil
	})
	opts := verified("ada")
	opts.Client = &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}
	for _, connect := range []func(testing.TB, *mcpkit.Server, *mcpkittest.Options) *mcpkittest.Server{
		mcpkittest.NewStatelessServer, mcpkittest.NewServer,
	} {
		asked.Store(0)
		answered.Store(0)
		srv := newServer(t, []mcpkit.Middleware{
			middleware.CacheResults(middleware.NewMemoryCache(1<<20), nil),
			middleware.Idempotent(middleware.NewMemoryIdempotencyStore(nil), nil),
		}, confirm)
		ts := connect(t, srv, opts)
		version := ts.Session.InitializeResult().ProtocolVersion
		call := func(key string) *mcp.CallToolResult {
			params := &mcp.CallToolParams{Name: "delete", Arguments: map[string]any{"path": "/tmp/x"}}
			if key != "" {
				params.Meta = mcp.Meta{middleware.MetaKeyIdempotencyKey: key}
			}
			res, err := ts.Session.CallTool(t.Context(), params)
			if err != nil {
				t.Fatalf("%s: %v", version, err)
			}
			return res
		}
		if res := call("k"); res.IsError || onlyText(res) != "deleted: accept" || res.Meta[middleware.MetaKeyIdempotent] != nil {
			t.Errorf("%s: first call %+v", version, res)
		}
		if res := call("k"); onlyText(res) != "deleted: accept" || res.Meta[middleware.MetaKeyIdempotent] != "replayed" {
			t.Errorf("%s: repeat %+v", version, res)
		}
		if asked.Load() != 1 || answered.Load() != 1 {
			t.Errorf("%s: asked %d times, answered %d; want once each", version, asked.Load(), answered.Load())
		}
		// Without a key, the cache has nothing: the request for input
		// was not kept, and the answered round bypasses it.
		if res := call(""); onlyText(res) != "deleted: accept" || res.Meta[middleware.MetaKeyCache] != nil || asked.Load() != 2 {
			t.Errorf("%s: call without a key %+v, asked %d times", version, res, asked.Load())
		}
	}
}

func onlyText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) != 1 {
		return fmt.Sprintf("%+v", res)
	}
	tc, _ := res.Content[0].(*mcp.TextContent)
	if tc == nil {
		return fmt.Sprintf("%+v", res)
	}
	return tc.Text
}
