package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/middleware"
)

// gcraScript is the whole decision of [Limiter.Allow], one round trip, on
// Redis's clock (TIME), so that replicas whose clocks differ still count
// against one schedule.
//
// It is the generic cell rate algorithm: KEYS[1] holds the theoretical
// arrival time (TAT, in microseconds of Redis's clock) of the next call if
// calls came exactly once per emission interval ARGV[1] (µs, 1/rate). A call
// is allowed when it arrives no earlier than TAT - ARGV[2], the burst
// tolerance (µs, burst/rate); then TAT moves one interval on, and the key
// expires when TAT is reached, for a key gone is the same as a TAT in the
// past (a full budget). A refused call changes nothing. It returns
// {1, 0} when the call is allowed, {0, µs to wait} when it is not.
//
// TIME makes the script non-deterministic; Redis 5 and later replicate a
// script's effects, not the script, and replicate_commands asks Redis 3.2
// and 4 to do so.
const gcraScript = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local allowAt = tat + interval - tolerance
if now < allowAt then
  return {0, math.ceil(allowAt - now)}
end
local newTat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', newTat), 'PX', math.ceil((newTat - now) / 1000))
return {1, 0}
`

var gcra = redis.NewScript(gcraScript)

// LimiterOptions configures [NewLimiter]. A nil *LimiterOptions means the
// defaults.
type LimiterOptions struct {
	// Prefix starts every key the Limiter writes (then "rl:", then the
	// key it is asked about). Empty means [DefaultPrefix]. Limiters with
	// the same prefix share their budgets, which is what replicas need
	// and what two limits with different rates must avoid.
	Prefix string

	// Logger receives a warning when Redis fails and the Limiter falls back
	// to FailOpen (at most one every ten seconds, with the number of calls
	// decided by the fallback since the last one) and a message when Redis
	// answers again. Nil means no logging.
	Logger *slog.Logger

	// FailOpen, if set, decides the calls that Redis cannot: when asking
	// Redis fails, Allow asks FailOpen instead (typically an in-memory
	// [middleware.TokenBucket] with a share of the budget, as each
	// replica then counts alone). From then on, until Redis answers
	// again, calls go straight to FailOpen, but for one a second that
	// asks Redis, so that an outage does not cost every call the client's
	// timeouts. A call whose context is done is not decided by FailOpen:
	// Allow returns the error.
	//
	// Nil means fail closed: Allow returns Redis's error, which
	// [middleware.RateLimit] turns into an internal error for the call, so
	// that nothing runs unlimited while Redis is down; each call then
	// costs what the client takes to fail (its dial and read timeouts and
	// retries, which its redis.Options set).
	FailOpen middleware.Limiter
}

const (
	// warnEvery is how often, at most, a Limiter falling back to
	// FailOpen logs that it does.
	warnEvery = 10 * time.Second
	// probeEvery is how often a Limiter falling back to FailOpen asks
	// Redis whether it is back; other calls meanwhile go straight to the
	// fallback, so that an outage does not cost every call a timeout.
	probeEvery = time.Second
)

// A Limiter is a [middleware.Limiter] on Redis: every Limiter with the
// same prefix, in any process, counts calls against one budget per key.
// It is safe for concurrent use.
//
// Each Allow is one round trip: a Lua script (sent once, then run by its
// SHA-1) that reads the key's state, decides and updates it atomically, on
// Redis's clock. The algorithm is GCRA, which allows the same calls as a
// token bucket of burst tokens refilled at rate per second and stores one
// number per key; a key expires as soon as its budget is full again.
type Limiter struct {
	c        redis.UniversalClient
	prefix   string
	args     []any // the script's ARGV: µs between calls at the steady rate, µs of burst
	fallback middleware.Limiter
	logger   *slog.Logger
	now      func() time.Time // the clock of the fallback's warnings and probes

	degraded atomic.Bool // Redis failed and has not answered since; mu guards the rest
	mu       sync.Mutex
	lastTry  time.Time // when Redis was last asked while degraded
	lastErr  error     // Redis's last error
	lastWarn time.Time // of the last warning; never reset, to bound the warnings
	warned   bool      // a warning was logged and no recovery message since
	fellBack int       // calls decided by the fallback since the last warning
}

// NewLimiter returns a Limiter that allows rate calls per second per key
// on average, with bursts of up to burst calls, counted in Redis through c.
// It panics unless rate is positive and finite and burst is at least 1; for
// no limit, give [middleware.RateLimit] a nil Limiter.
//
// Redis's clock decides, not the clocks of the processes, so replicas
// share one schedule even when their clocks differ. When Redis cannot be
// asked, Allow fails closed (returns the error) unless opts.FailOpen is
// set; see [LimiterOptions].
func NewLimiter(c redis.UniversalClient, rate float64, burst int, opts *LimiterOptions) *Limiter {
	if !(rate > 0) || math.IsInf(rate, 1) {
		panic(fmt.Sprintf("redisstore: NewLimiter: rate %v is not a positive, finite number of calls per second", rate))
	}
	if burst < 1 {
		panic(fmt.Sprintf("redisstore: NewLimiter: burst %d allows no call", burst))
	}
	interval := 1e6 / rate
	l := &Limiter{
		c:      c,
		prefix: DefaultPrefix + "rl:",
		args: []any{
			strconv.FormatFloat(interval, 'f', -1, 64),
			strconv.FormatFloat(interval*float64(burst), 'f', -1, 64),
		},
		now: time.Now,
	}
	if opts != nil {
		if opts.Prefix != "" {
			l.prefix = opts.Prefix + "rl:"
		}
		l.fallback = opts.FailOpen
		l.logger = opts.Logger
	}
	return l
}

// Allow counts one call under key if the budget allows it now, and
// otherwise reports how long until it will, on Redis's clock. When Redis
// cannot be asked, it returns the error, or asks the FailOpen limiter if
// there is one.
func (l *Limiter) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	if l.degraded.Load() && !l.probe() {
		if err := ctx.Err(); err != nil {
			return false, 0, err
		}
		return l.fallBack(ctx, key, nil)
	}
	res, err := gcra.Run(ctx, l.c, []string{l.prefix + key}, l.args...).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("unexpected script reply %v", res)
	}
	if err != nil {
		err = fmt.Errorf("redisstore: limiter: %w", err)
		// A call whose context ended has nobody to answer, and says
		// nothing about Redis.
		if l.fallback == nil || ctx.Err() != nil {
			return false, 0, err
		}
		return l.fallBack(ctx, key, err)
	}
	if l.degraded.Load() {
		l.recovered(ctx)
	}
	if res[0] == 1 {
		return true, 0, nil
	}
	return false, time.Duration(res[1]) * time.Microsecond, nil
}

// probe reports whether a call, while Redis is failing, should ask Redis
// anyway, to find out whether it is back: one call per probeEvery does.
func (l *Limiter) probe() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.lastTry) < probeEvery {
		return false
	}
	l.lastTry = now
	return true
}

// fallBack has the FailOpen limiter decide a call, after Redis failed with
// err, or without asking Redis (err == nil) while it is failing.
func (l *Limiter) fallBack(ctx context.Context, key string, err error) (bool, time.Duration, error) {
	l.mu.Lock()
	now := l.now()
	if err != nil {
		l.degraded.Store(true)
		l.lastTry, l.lastErr = now, err
	}
	l.fellBack++
	var n int
	if l.lastWarn.IsZero() || now.Sub(l.lastWarn) >= warnEvery {
		n, l.fellBack, l.lastWarn, l.warned = l.fellBack, 0, now, true
	}
	err = l.lastErr
	l.mu.Unlock()
	if n > 0 && l.logger != nil {
		l.logger.WarnContext(ctx, "redisstore: Redis unavailable, rate limits are per process (fail open)",
			slog.Any("error", err), slog.Int("fallbackCalls", n))
	}
	return l.fallback.Allow(ctx, key)
}

// recovered notes that Redis answers again after calls fell back. It says
// so in the log if the failure was logged: there is at most one such
// message per warning, so a flapping connection logs no more than one
// warning and one recovery every ten seconds.
func (l *Limiter) recovered(ctx context.Context) {
	l.mu.Lock()
	l.degraded.Store(false)
	warned, n := l.warned, l.fellBack
	if warned {
		l.warned, l.fellBack = false, 0
	}
	l.mu.Unlock()
	if warned && l.logger != nil {
		l.logger.InfoContext(ctx, "redisstore: Redis available again, rate limits are shared",
			slog.Int("fallbackCallsSinceWarning", n))
	}
}
