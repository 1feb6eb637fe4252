package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// DefaultTimeout bounds each request to the issuer that a verifier or a
// [TokenExchange] makes (metadata, keys, introspection, exchange), and so
// the time a request of a client waits for the issuer.
const DefaultTimeout = 10 * time.Second

// firstBackoff is the wait after a first failed attempt, before anything
// was had from the issuer; each further failure doubles it.
const firstBackoff = time.Second

// A fetcher runs the attempts to fetch one thing from an issuer (its keys,
// an endpoint of its metadata) one at a time, each in a goroutine of its
// own, on the component's context with a deadline, never on a request's: a
// request that gives up cancels nothing that others wait for, and a hung
// issuer holds a request for one timeout at most.
//
// It spaces the attempts. Before any succeeded, a failure is followed by a
// backoff that doubles from firstBackoff up to calm, so that an issuer down
// at start is found soon after it comes up; once one succeeded, attempts
// are at least calm apart, whatever their outcome, however many requests
// ask for one.
type fetcher struct {
	ctx     context.Context // the component's own: never cancelled
	timeout time.Duration
	now     func() time.Time
	calm    time.Duration

	mu        sync.Mutex
	running   chan struct{} // closed when the attempt under way ends; nil when none is
	ended     time.Time     // when the last attempt ended; zero before the first
	failures  int           // attempts failed in a row
	succeeded bool          // whether an attempt ever succeeded
	err       error         // why the last attempt failed
}

func newFetcher(ctx context.Context, timeout, calm time.Duration, now func() time.Time) *fetcher {
	return &fetcher{ctx: context.WithoutCancel(ctx), timeout: timeout, now: now, calm: calm}
}

// start begins an attempt to run fetch, unless one is under way or the
// last one ended too lately, and returns a channel that is closed when the
// attempt under way ends, or nil when there is none.
func (f *fetcher) start(fetch func(ctx context.Context) error) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running != nil {
		return f.running
	}
	if !f.ended.IsZero() && f.now().Sub(f.ended) < f.spacing() {
		return nil
	}
	done := make(chan struct{})
	f.running = done
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(f.ctx, f.timeout)
		err := fetch(ctx)
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (no answer within %s)", err, f.timeout)
		}
		cancel()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.running, f.ended, f.err = nil, f.now(), err
		if err != nil {
			f.failures++
		} else {
			f.failures, f.succeeded = 0, true
		}
	}()
	return done
}

// spacing is the least time between the end of the last attempt and the
// start of the next. f.mu is held.
func (f *fetcher) spacing() time.Duration {
	if f.failures == 0 || f.succeeded {
		return f.calm
	}
	d := firstBackoff
	for i := 1; i < f.failures && d < f.calm; i++ {
		d *= 2
	}
	return min(d, f.calm)
}

// lastErr returns why the last attempt failed, or nil if it succeeded.
func (f *fetcher) lastErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// idle waits for the attempt under way, if any, to end.
func (f *fetcher) idle() {
	f.mu.Lock()
	done := f.running
	f.mu.Unlock()
	if done != nil {
		<-done
	}
}

// await waits for done to be closed, or for ctx to end.
func await(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// discover returns the URL that pick takes from the metadata of issuer
// (RFC 8414, then OpenID Connect discovery, as the SDK's
// auth.GetAuthServerMetadata finds it); field names it in errors.
func discover(ctx context.Context, client *http.Client, issuer, field string, pick func(*oauthex.AuthServerMeta) string) (string, error) {
	meta, err := auth.GetAuthServerMetadata(ctx, issuer, client)
	if err != nil {
		return "", fmt.Errorf("the issuer's metadata: %w", err)
	}
	if meta == nil || pick(meta) == "" {
		return "", fmt.Errorf("the issuer %q publishes no metadata with a %s", issuer, field)
	}
	return pick(meta), nil
}

// An endpoint is a URL of the issuer's: given, or found in its metadata
// when first needed, by one attempt at a time, with backoff while it
// cannot be had (see fetcher).
type endpoint struct {
	issuer, field string
	pick          func(*oauthex.AuthServerMeta) string
	client        *http.Client
	attempts      *fetcher

	mu  sync.Mutex
	url string
}

// get returns the endpoint's URL, finding it first if need be: a request
// waits for the attempt under way (ending within its timeout) or for ctx,
// and is refused at once while the last attempt failed lately.
func (e *endpoint) get(ctx context.Context) (string, error) {
	if u := e.known(); u != "" {
		return u, nil
	}
	if done := e.attempts.start(e.find); done != nil {
		if err := await(ctx, done); err != nil {
			return "", err
		}
	}
	if u := e.known(); u != "" {
		return u, nil
	}
	if err := e.attempts.lastErr(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("the issuer's %s is not known yet", e.field)
}

func (e *endpoint) known() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.url
}

func (e *endpoint) find(ctx context.Context) error {
	u, err := discover(ctx, e.client, e.issuer, e.field, e.pick)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.url = u
	e.mu.Unlock()
	return nil
}

// newEndpoint returns the endpoint at u, or, when u is empty, the one
// that pick takes from the issuer's metadata.
func newEndpoint(ctx context.Context, issuer, u, field string, pick func(*oauthex.AuthServerMeta) string, client *http.Client, timeout time.Duration, now func() time.Time) *endpoint {
	return &endpoint{
		issuer: issuer, field: field, pick: pick, client: client, url: u,
		attempts: newFetcher(ctx, timeout, DefaultMinRefreshInterval, now),
	}
}

// checkURL refuses what cannot be fetched: a URL that is not absolute
// http(s). With discovery, the issuer must also be https or on a loopback
// host, as the SDK's discovery requires: an error known at start is
// reported at start, not on every request.
func checkURL(what, s string, discovery bool) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s %q: %w", what, clip(s), err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("%s %q is not an absolute http(s) URL", what, clip(s))
	}
	if discovery {
		if u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("%s %q has a query or fragment (RFC 8414)", what, clip(s))
		}
		if u.Scheme == "http" && !isLoopback(u.Hostname()) {
			return fmt.Errorf("%s %q: discovery needs https (plain http only on a loopback host)", what, clip(s))
		}
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpClient returns c, or a client with timeout for an issuer when c is
// nil: never http.DefaultClient, which has no time limit.
func httpClient(c *http.Client, timeout time.Duration) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: timeout}
}

// timeoutOr returns d, or DefaultTimeout when d is zero.
func timeoutOr(d time.Duration) time.Duration { return cmpOr(d, DefaultTimeout) }
