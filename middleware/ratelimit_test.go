package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

func TestTokenBucket(t *testing.T) {
	type step struct {
		at        time.Duration // since the start
		key       string
		ok        bool
		wantAfter time.Duration // if !ok
	}
	tests := []struct {
		name  string
		limit rate.Limit
		burst int
		steps []step
	}{
		{"burst then refill", 1, 2, []step{
			{0, "", true, 0},
			{0, "", true, 0},
			{0, "", false, time.Second},
			{500 * time.Millisecond, "", false, 500 * time.Millisecond},
			{time.Second, "", true, 0},
			{time.Second, "", false, time.Second},
		}},
		{"keys are separate", 1, 1, []step{
			{0, "ann", true, 0},
			{0, "ann", false, time.Second},
			{0, "bob", true, 0},
		}},
		{"slow rate", rate.Every(time.Hour), 1, []step{
			{0, "", true, 0},
			{time.Minute, "", false, 59 * time.Minute},
		}},
		{"infinite rate", rate.Inf, 0, []step{
			{0, "", true, 0},
			{0, "", true, 0},
		}},
		{"zero rate", 0, 1, []step{
			{0, "", true, 0},
			{time.Hour, "", false, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := middleware.NewTokenBucket(tt.limit, tt.burst, nil)
				start := time.Now()
				for i, s := range tt.steps {
					time.Sleep(time.Until(start.Add(s.at)))
					ok, after, err := b.Allow(t.Context(), s.key)
					if err != nil || ok != s.ok || !ok && after != s.wantAfter {
						t.Errorf("step %d: Allow = %v, %v, %v; want %v, %v", i, ok, after, err, s.ok, s.wantAfter)
					}
				}
			})
		})
	}
}

func TestNewTokenBucketPanics(t *testing.T) {
	defer func() {
		if v := recover(); v != "middleware: NewTokenBucket: burst 0 allows no call" {
			t.Errorf("recover() = %v", v)
		}
	}()
	middleware.NewTokenBucket(1, 0, nil)
}

func TestRateLimitError(t *testing.T) {
	tests := []struct {
		after time.Duration
		want  string
	}{
		{0, `tool "t" is rate limited: try again later`},
		{1500 * time.Millisecond, `tool "t" is rate limited: try again in 1.5s`},
		{333333333 * time.Nanosecond, `tool "t" is rate limited: try again in 334ms`},
		{time.Hour, `tool "t" is rate limited: try again in 1h0m0s`},
	}
	for _, tt := range tests {
		t.Run(tt.after.String(), func(t *testing.T) {
			err := &middleware.RateLimitError{Tool: "t", RetryAfter: tt.after}
			if err.Error() != tt.want {
				t.Errorf("got %q, want %q", err.Error(), tt.want)
			}
			if !errors.Is(err, middleware.ErrRateLimited) {
				t.Error("not ErrRateLimited")
			}
		})
	}
}

var errStore = errors.New("store unreachable")

func TestRateLimit(t *testing.T) {
	// denyAll rejects every key but "vip", asking for a retry in a second.
	denyAll := middleware.LimiterFunc(func(ctx context.Context, key string) (bool, time.Duration, error) {
		return key == "vip", time.Second, nil
	})
	allowAll := middleware.LimiterFunc(func(ctx context.Context, key string) (bool, time.Duration, error) {
		return true, 0, nil
	})
	broken := middleware.LimiterFunc(func(ctx context.Context, key string) (bool, time.Duration, error) {
		return false, 0, errStore
	})
	byUser := func(r *mcpkit.Request) string { return string(r.Arguments) }
	tests := []struct {
		name    string
		l       middleware.Limiter
		opts    *middleware.RateLimitOptions
		tool    string
		args    string
		wantErr error // nil, ErrRateLimited or errStore
	}{
		{"allowed", allowAll, nil, "t", "", nil},
		{"rejected", denyAll, nil, "t", "", middleware.ErrRateLimited},
		{"key", denyAll, &middleware.RateLimitOptions{Key: byUser}, "t", "vip", nil},
		{"no limiter", nil, nil, "t", "", nil},
		{"limiter error", broken, nil, "t", "", errStore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := middleware.RateLimit(tt.l, tt.opts)(mcpkit.HandlerFunc(ok))
			var args any
			if tt.args != "" {
				args = []byte(tt.args)
			}
			res, err := call(t, h, newTool(tt.tool, nil), args)
			switch tt.wantErr {
			case nil:
				if err != nil || resultText(t, res) != "ok" {
					t.Errorf("got %v, %v; want success", res, err)
				}
			case middleware.ErrRateLimited:
				var te *mcpkit.ToolError
				var rl *middleware.RateLimitError
				if !errors.As(err, &te) || te.ErrorClass() != mcpkit.Retryable || !errors.As(err, &rl) || rl.RetryAfter != time.Second {
					t.Fatalf("got %#v, want a retryable tool error with a *RateLimitError", err)
				}
				if want := fmt.Sprintf("tool %q is rate limited: try again in 1s", tt.tool); err.Error() != want {
					t.Errorf("text = %q, want %q", err.Error(), want)
				}
			default:
				var te *mcpkit.ToolError
				if !errors.Is(err, tt.wantErr) || errors.As(err, &te) {
					t.Errorf("got %#v, want an internal error wrapping %v", err, tt.wantErr)
				}
				// The store may be back on the next try: retryable, and
				// still an internal error, which MaskErrors hides.
				if outcome, class := mcpkit.Classify(nil, err); outcome != mcpkit.OutcomeError || class != mcpkit.Retryable {
					t.Errorf("Classify = %s, %s; want %s, %s", outcome, class, mcpkit.OutcomeError, mcpkit.Retryable)
				}
			}
		})
	}
}

func TestRateLimitEndToEnd(t *testing.T) {
	transports(t, func(t *testing.T, connect func(*mcpkit.Server) *mcpkittest.Server) {
		bucket := middleware.NewTokenBucket(rate.Every(time.Hour), 2, nil)
		srv := newServer(t, []mcpkit.Middleware{middleware.RateLimit(bucket, nil)}, newTool("t", ok))
		ts := connect(srv)
		for i := range 2 {
			if res, err := ts.CallTool(t.Context(), "t", nil); err != nil || res.IsError {
				t.Fatalf("call %d: %v, %+v", i, err, res)
			}
		}
		res, err := ts.CallTool(t.Context(), "t", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || mcpkit.ErrorClassOf(res) != mcpkit.Retryable {
			t.Fatalf("got %+v (class %q), want a retryable tool error", res, mcpkit.ErrorClassOf(res))
		}
		// About an hour, less the time the calls took, whatever that was:
		// in _meta in milliseconds, and the same delay in the text.
		ms, _ := res.Meta[middleware.MetaKeyRetryAfter].(float64)
		if ms < 50*60*1000 || ms > 60*60*1000 {
			t.Fatalf("_meta retry delay = %v", res.Meta[middleware.MetaKeyRetryAfter])
		}
		after, found := strings.CutPrefix(resultText(t, res), `tool "t" is rate limited: try again in `)
		if d, err := time.ParseDuration(after); !found || err != nil || d != time.Duration(ms)*time.Millisecond {
			t.Errorf("text %q does not give the delay of _meta, %vms", resultText(t, res), ms)
		}
	})
}

// TestRateLimitDefaultKey checks that without a Key each verified user has
// a budget per tool, and that every other caller, anonymous or with a
// token no verifier checked, shares one per tool.
func TestRateLimitDefaultKey(t *testing.T) {
	var keys []string
	record := middleware.LimiterFunc(func(ctx context.Context, key string) (bool, time.Duration, error) {
		keys = append(keys, key)
		return true, 0, nil
	})
	h := middleware.RateLimit(record, nil)(mcpkit.HandlerFunc(ok))
	ada := mcpkittest.WithTokenInfo(&auth.TokenInfo{UserID: "ada"})
	bob := mcpkittest.WithHeader(http.Header{"Authorization": {"Bearer bob-token"}})
	for _, c := range []struct {
		tool string
		opts []mcpkittest.RequestOption
	}{
		{"search", []mcpkittest.RequestOption{ada}},
		{"fetch", []mcpkittest.RequestOption{ada}},
		{"search", []mcpkittest.RequestOption{bob}},
		{"search", nil},
		{"fetch", nil},
		{"search", nil},
	} {
		if _, err := h.ServeTool(t.Context(), mcpkittest.NewRequest(newTool(c.tool, nil), nil, c.opts...)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"sub:ada\x00search", "sub:ada\x00fetch", "\x00search", "\x00search", "\x00fetch", "\x00search"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys = %q, want %q", keys, want)
	}

	// End to end, a budget of one call: each user has it for each tool.
	bucket := middleware.NewTokenBucket(rate.Every(time.Hour), 1, nil)
	srv := newServer(t, []mcpkit.Middleware{middleware.RateLimit(bucket, nil)}, newTool("search", ok), newTool("fetch", ok))
	for _, user := range []string{"ada", "bob"} {
		ts := mcpkittest.NewStatelessServer(t, srv, &mcpkittest.Options{
			Tokens: map[string]*auth.TokenInfo{"tok-" + user: {UserID: user}},
			Token:  "tok-" + user,
		})
		for i, tool := range []string{"search", "fetch", "search"} {
			res, err := ts.CallTool(t.Context(), tool, nil)
			if err != nil {
				t.Fatal(err)
			}
			if wantLimited := i == 2; res.IsError != wantLimited {
				t.Errorf("%s, call %d to %s: isError = %v, want %v", user, i, tool, res.IsError, wantLimited)
			}
		}
	}
}
