package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/middleware"
)

// targetServer returns a server with mw in its chain, a resource
// memo://r, a template memo://t/{id} and a prompt greet, each answering
// after serve returns.
func targetServer(t *testing.T, serve func(ctx context.Context) error, mw ...mcpkit.Middleware) *mcpkit.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "kinds"}, nil)
	srv.Use(mw...)
	read := mcpkit.ResourceHandlerFunc(func(ctx context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
		if err := serve(ctx); err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "text of " + req.URI}}}, nil
	})
	if err := srv.AddResources(&mcpkit.Resource{Resource: mcp.Resource{URI: "memo://r", Name: "r"}, Handler: read}); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResourceTemplates(&mcpkit.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "memo://t/{id}", Name: "t"}, Handler: read}); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrompts(&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "greet"}, Handler: mcpkit.PromptHandlerFunc(func(ctx context.Context, _ *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
		if err := serve(ctx); err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})}); err != nil {
		t.Fatal(err)
	}
	return srv
}

func answer(context.Context) error { return nil }

// read reads uri on ts.
func read(ts *mcpkittest.Server, ctx context.Context, uri string) error {
	_, err := ts.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	return err
}

// getPrompt gets the prompt name on ts.
func getPrompt(ts *mcpkittest.Server, ctx context.Context, name string) error {
	_, err := ts.Session.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
	return err
}

// refusal returns the message and data of the JSON-RPC error err, which
// must be an internal error.
func refusal(t *testing.T, err error) (string, map[string]any) {
	t.Helper()
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInternalError {
		t.Fatalf("%v: want a JSON-RPC internal error", err)
	}
	var data map[string]any
	if err := json.Unmarshal(wire.Data, &data); err != nil {
		t.Fatalf("data %s: %v", wire.Data, err)
	}
	return wire.Message, data
}

// TestRateLimitTargets: with a budget of two per caller, a verified
// caller's third read of a resource is refused, naming the URI, retryable,
// with the delay in the error's data, while another caller still reads;
// the caller's prompt and each template have budgets of their own.
func TestRateLimitTargets(t *testing.T) {
	bucket := middleware.NewTokenBucket(rate.Every(time.Hour), 2, nil)
	srv := targetServer(t, answer, middleware.RateLimit(bucket, nil))
	alice := mcpkittest.NewStatelessServer(t, srv, verified("alice"))
	bob := mcpkittest.NewStatelessServer(t, srv, verified("bob"))
	ctx := t.Context()
	for i := range 2 {
		if err := read(alice, ctx, "memo://r"); err != nil {
			t.Fatalf("alice's read %d: %v", i+1, err)
		}
	}
	msg, data := refusal(t, read(alice, ctx, "memo://r"))
	if !strings.HasPrefix(msg, `resource "memo://r" is rate limited: try again in `) {
		t.Errorf("message %q", msg)
	}
	if ms, _ := data[middleware.MetaKeyRetryAfter].(float64); ms <= 0 || ms > float64(time.Hour/time.Millisecond) {
		t.Errorf("retry after %v ms in %v", data[middleware.MetaKeyRetryAfter], data)
	}
	if data[mcpkit.MetaKeyErrorClass] != string(mcpkit.Retryable) {
		t.Errorf("class in %v, want retryable", data)
	}
	if err := read(bob, ctx, "memo://r"); err != nil {
		t.Errorf("bob's read, refused by alice's budget: %v", err)
	}
	for i := range 2 {
		if err := getPrompt(alice, ctx, "greet"); err != nil {
			t.Fatalf("alice's prompt %d, under the resource's budget: %v", i+1, err)
		}
		if err := read(alice, ctx, "memo://t/"+string(rune('a'+i))); err != nil {
			t.Fatalf("alice's template read %d: %v", i+1, err)
		}
	}
	if msg, _ := refusal(t, getPrompt(alice, ctx, "greet")); !strings.HasPrefix(msg, `prompt "greet" is rate limited`) {
		t.Errorf("third prompt: %q", msg)
	}
	// Another URI of the template is no fresh budget.
	if msg, _ := refusal(t, read(alice, ctx, "memo://t/z")); !strings.HasPrefix(msg, `resource "memo://t/{id}" is rate limited`) {
		t.Errorf("third template read: %q", msg)
	}
	var rle *middleware.RateLimitError
	if err := (&mcpkit.ToolError{Err: &middleware.RateLimitError{Tool: "greet", Kind: mcpkit.KindPrompt}}); !errors.As(err, &rle) || !errors.Is(err, middleware.ErrRateLimited) {
		t.Error("RateLimitError does not unwrap")
	}
}

// TestRateLimitTargetKey: a TargetKey puts the reads of every caller under
// one budget of the user's choosing.
func TestRateLimitTargetKey(t *testing.T) {
	bucket := middleware.NewTokenBucket(rate.Every(time.Hour), 1, nil)
	var keys []string
	srv := targetServer(t, answer, middleware.RateLimit(bucket, &middleware.RateLimitOptions{
		TargetKey: func(tg mcpkit.Target, c mcpkit.Caller) string {
			keys = append(keys, tg.Kind().String()+" "+tg.Key()+" "+mcpkit.VerifiedPrincipal(c))
			return "reads"
		},
	}))
	ctx := t.Context()
	if err := read(mcpkittest.NewStatelessServer(t, srv, verified("alice")), ctx, "memo://r"); err != nil {
		t.Fatal(err)
	}
	if err := read(mcpkittest.NewStatelessServer(t, srv, verified("bob")), ctx, "memo://t/1"); err == nil {
		t.Error("bob's read under the shared key was let through")
	}
	if got := strings.Join(keys, ", "); got != "resource memo://r sub:alice, resource memo://t/{id} sub:bob" {
		t.Errorf("TargetKey asked about %s", got)
	}
}

// TestConcurrencyLimitReads: with one slot, a read that finds it held by a
// read still running is refused at once, naming the URI, with a retry
// hint; a prompt waits for the slot, and takes it once the read returns.
func TestConcurrencyLimitReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var running atomic.Int32
		block := func(ctx context.Context) error {
			running.Add(1)
			defer running.Add(-1)
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		srv := targetServer(t, block, middleware.ConcurrencyLimit(1, nil))
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)
		ctx := t.Context()
		first := make(chan error, 1)
		go func() { first <- read(ts, ctx, "memo://r") }()
		synctest.Wait()
		if running.Load() != 1 {
			t.Fatalf("%d reads running, want 1", running.Load())
		}
		msg, data := refusal(t, read(ts, ctx, "memo://t/7"))
		if want := `resource "memo://t/{id}" is busy: the limit of 1 concurrent calls is reached; try again later`; msg != want {
			t.Errorf("message %q, want %q", msg, want)
		}
		if data[middleware.MetaKeyRetryAfter] != float64(middleware.DefaultBusyRetryAfter/time.Millisecond) {
			t.Errorf("retry hint in %v", data)
		}
		if msg, _ := refusal(t, getPrompt(ts, ctx, "greet")); !strings.HasPrefix(msg, `prompt "greet" is busy`) {
			t.Errorf("prompt while the slot is held: %q", msg)
		}
		close(release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		if err := getPrompt(ts, ctx, "greet"); err != nil {
			t.Errorf("prompt once the slot is free: %v", err)
		}
	})
}

// TestCircuitBreakerReads: a resource that keeps failing opens its own
// circuit; its reads are then refused, naming the URI, while the prompt,
// which answers, is served.
func TestCircuitBreakerReads(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	var states []string
	srv := targetServer(t, func(context.Context) error {
		if fail.Load() {
			return errors.New("disk gone")
		}
		return nil
	}, middleware.CircuitBreaker(&middleware.CircuitBreakerOptions{Window: 2, MinCalls: 2, Cooldown: time.Hour,
		OnStateChange: func(key string, _, to middleware.CircuitState) { states = append(states, key+" "+to.String()) }}))
	ts := mcpkittest.NewInMemoryServer(t, srv, nil)
	ctx := t.Context()
	for range 2 {
		if msg, _ := refusal(t, read(ts, ctx, "memo://r")); msg != "disk gone" {
			t.Errorf("failing read: %q", msg)
		}
	}
	fail.Store(false)
	msg, data := refusal(t, read(ts, ctx, "memo://r"))
	if !strings.HasPrefix(msg, `resource "memo://r" is unavailable after repeated failures: try again in `) || data[middleware.MetaKeyRetryAfter] == nil {
		t.Errorf("open circuit: %q %v", msg, data)
	}
	if err := getPrompt(ts, ctx, "greet"); err != nil {
		t.Errorf("the prompt shares the resource's circuit: %v", err)
	}
	if got := strings.Join(states, ", "); got != "resource:memo://r open" {
		t.Errorf("state changes %s", got)
	}
}

// TestBulkheadTargets: TargetPool puts a resource in a tool's pool, whose
// slot a read then takes; without it, prompts and reads are in no pool.
func TestBulkheadTargets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		block := func(ctx context.Context) error {
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		srv := targetServer(t, block, middleware.Bulkhead(map[string]int{"files": 1}, &middleware.BulkheadOptions{
			TargetPool: func(tg mcpkit.Target) string {
				if tg.Kind() == mcpkit.KindResource {
					return "files"
				}
				return ""
			},
		}))
		if layers, _ := srv.PromptPipeline("greet"); len(layers) != 1 || !layers[0].Skipped || layers[0].Reason != "not selected by mcpkit.For" {
			t.Errorf("prompt pipeline %+v: want the pool skipped", layers)
		}
		if layers, _ := srv.ResourcePipeline("memo://r"); len(layers) != 1 || layers[0].Skipped || layers[0].Name != "middleware.Bulkhead" {
			t.Errorf("resource pipeline %+v: want the pool applied", layers)
		}
		ts := mcpkittest.NewInMemoryServer(t, srv, nil)
		ctx := t.Context()
		first := make(chan error, 1)
		go func() { first <- read(ts, ctx, "memo://r") }()
		synctest.Wait()
		if msg, _ := refusal(t, read(ts, ctx, "memo://t/1")); !strings.HasPrefix(msg, `resource "memo://t/{id}" is busy`) {
			t.Errorf("read with the pool full: %q", msg)
		}
		second := make(chan error, 1)
		go func() { second <- getPrompt(ts, ctx, "greet") }()
		synctest.Wait()
		close(release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		if err := <-second; err != nil {
			t.Errorf("the prompt, in no pool: %v", err)
		}
	})
}

// cachedTargets returns a server whose resources and prompt answer with
// the caller's principal and a count of their runs, behind CacheResults
// with opts: memo://r, public; memo://mine, marked private; greet, with an
// argument.
func cachedTargets(t *testing.T, runs *atomic.Int32, opts *middleware.CacheOptions) *mcpkit.Server {
	t.Helper()
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "cached"}, nil)
	srv.Use(middleware.CacheResults(middleware.NewMemoryCache(1<<20), opts))
	read := func(scope string) mcpkit.ResourceHandlerFunc {
		return func(_ context.Context, req *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
			text := fmt.Sprintf("%s for %s, run %d", req.URI, mcpkit.Principal(req), runs.Add(1))
			return &mcp.ReadResourceResult{Cacheable: mcp.Cacheable{CacheScope: scope}, Contents: []*mcp.ResourceContents{{URI: req.URI, Text: text}}}, nil
		}
	}
	if err := srv.AddResources(
		&mcpkit.Resource{Resource: mcp.Resource{URI: "memo://r", Name: "r"}, Handler: read("public")},
		&mcpkit.Resource{Resource: mcp.Resource{URI: "memo://mine", Name: "mine"}, Handler: read("private")},
	); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddPrompts(&mcpkit.Prompt{Prompt: mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who"}}},
		Handler: mcpkit.PromptHandlerFunc(func(_ context.Context, req *mcpkit.PromptRequest) (*mcp.GetPromptResult, error) {
			text := fmt.Sprintf("hello %s, run %d", req.Arguments["who"], runs.Add(1))
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		})}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// readResult reads uri on ts and returns its text and whether it was a
// cache hit.
func readResult(t *testing.T, ts *mcpkittest.Server, uri string) (string, bool) {
	t.Helper()
	res, err := ts.Session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("%s: %+v, %v", uri, res, err)
	}
	return res.Contents[0].Text, res.Meta[middleware.MetaKeyCache] == "hit"
}

// TestCacheResultsTargets: a selected resource's second read by one
// caller is a hit, and another caller's read is not; a prompt is a hit
// for the same arguments only; an anonymous read is never kept; without
// Targets, prompts and resources are not cached, and the pipeline says
// so.
func TestCacheResultsTargets(t *testing.T) {
	var runs atomic.Int32
	srv := cachedTargets(t, &runs, &middleware.CacheOptions{Targets: func(mcpkit.Target) bool { return true }})
	alice := mcpkittest.NewStatelessServer(t, srv, verified("alice"))
	bob := mcpkittest.NewStatelessServer(t, srv, verified("bob"))
	first, hit := readResult(t, alice, "memo://r")
	if hit || first != "memo://r for sub:alice, run 1" {
		t.Fatalf("first read: %q, hit %v", first, hit)
	}
	if again, hit := readResult(t, alice, "memo://r"); !hit || again != first {
		t.Errorf("second read: %q, hit %v; want %q from the cache", again, hit, first)
	}
	if other, hit := readResult(t, bob, "memo://r"); hit || other != "memo://r for sub:bob, run 2" {
		t.Errorf("bob's read: %q, hit %v; want a run of his own", other, hit)
	}
	get := func(who string) (string, bool) {
		res, err := alice.Session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": who}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Messages[0].Content.(*mcp.TextContent).Text, res.Meta[middleware.MetaKeyCache] == "hit"
	}
	p1, _ := get("ann")
	if p2, hit := get("ann"); !hit || p2 != p1 {
		t.Errorf("the prompt again: %q, hit %v; want %q", p2, hit, p1)
	}
	if p3, hit := get("ben"); hit || p3 == p1 {
		t.Errorf("the prompt with other arguments: %q, hit %v", p3, hit)
	}
	anon := mcpkittest.NewInMemoryServer(t, srv, nil)
	readResult(t, anon, "memo://r")
	if _, hit := readResult(t, anon, "memo://r"); hit {
		t.Error("an anonymous read was kept")
	}

	plain := cachedTargets(t, &runs, nil)
	ts := mcpkittest.NewStatelessServer(t, plain, verified("alice"))
	readResult(t, ts, "memo://r")
	if _, hit := readResult(t, ts, "memo://r"); hit {
		t.Error("a resource was cached without Targets")
	}
	if layers, _ := plain.ResourcePipeline("memo://r"); len(layers) != 1 || !layers[0].Skipped || layers[0].Name != "middleware.CacheResults" {
		t.Errorf("pipeline without Targets: %+v, want CacheResults skipped", layers)
	}
}

// TestCacheResultsPrivateRead: under a TargetKey that every caller shares,
// a public read is shared, and a read marked private is never answered to
// another principal, nor kept; under the default key, a private read is
// kept for its own caller alone.
func TestCacheResultsPrivateRead(t *testing.T) {
	var runs atomic.Int32
	shared := cachedTargets(t, &runs, &middleware.CacheOptions{
		Targets:   func(mcpkit.Target) bool { return true },
		TargetKey: func(mcpkit.Target, mcpkit.Caller) string { return "everyone" },
	})
	alice := mcpkittest.NewStatelessServer(t, shared, verified("alice"))
	bob := mcpkittest.NewStatelessServer(t, shared, verified("bob"))
	readResult(t, alice, "memo://r")
	if text, hit := readResult(t, bob, "memo://r"); !hit || !strings.Contains(text, "sub:alice") {
		t.Errorf("a public read under a shared key: %q, hit %v; want alice's, shared", text, hit)
	}
	readResult(t, alice, "memo://mine")
	if text, hit := readResult(t, bob, "memo://mine"); hit || !strings.Contains(text, "for sub:bob") {
		t.Errorf("bob's private read: %q, hit %v; want his own", text, hit)
	}
	if _, hit := readResult(t, alice, "memo://mine"); hit {
		t.Error("a private read was kept under a shared key")
	}

	own := cachedTargets(t, &runs, &middleware.CacheOptions{Targets: func(mcpkit.Target) bool { return true }})
	alice = mcpkittest.NewStatelessServer(t, own, verified("alice"))
	bob = mcpkittest.NewStatelessServer(t, own, verified("bob"))
	first, _ := readResult(t, alice, "memo://mine")
	if text, hit := readResult(t, alice, "memo://mine"); !hit || text != first {
		t.Errorf("alice's private read again: %q, hit %v; want hers from the cache", text, hit)
	}
	if text, hit := readResult(t, bob, "memo://mine"); hit || !strings.Contains(text, "for sub:bob") {
		t.Errorf("bob's private read: %q, hit %v; want his own", text, hit)
	}
}

// TestTargetLimitsOutsideServer: the limits serve a resources/read built
// by hand, with neither resource nor template, keyed by its URI.
func TestTargetLimitsOutsideServer(t *testing.T) {
	final := struct {
		mcpkit.HandlerFunc
		mcpkit.ResourceHandlerFunc
	}{ok, func(context.Context, *mcpkit.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}}
	h := mcpkit.Chain(
		middleware.CircuitBreaker(nil),
		middleware.RateLimit(middleware.NewTokenBucket(rate.Every(time.Hour), 1, nil), nil),
		middleware.ConcurrencyLimit(1, nil),
	)(final).(mcpkit.ResourceHandler)
	req := &mcpkit.ResourceRequest{URI: "memo://by-hand"}
	if _, err := h.ServeResource(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ServeResource(t.Context(), req); err == nil || !strings.HasPrefix(err.Error(), `resource "memo://by-hand" is rate limited`) {
		t.Errorf("second read: %v", err)
	}
}
