package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultHealthCheckInterval is how long an [EventBus] subscription waits
// for traffic before it pings Redis, when its options do not say.
const DefaultHealthCheckInterval = 5 * time.Second

// ErrBusClosed is returned by the methods of an [EventBus] after
// [EventBus.Close].
var ErrBusClosed = errors.New("redisstore: event bus closed")

const (
	// confirmTimeout bounds the wait for Redis to confirm a new
	// subscription (less if the context has an earlier deadline).
	confirmTimeout = 10 * time.Second
	// A subscription whose connection failed tries again after a delay
	// that doubles from minBackoff to maxBackoff while Redis stays away.
	minBackoff = 50 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// EventBusOptions configures [NewEventBus]. A nil *EventBusOptions means
// the defaults.
type EventBusOptions struct {
	// Prefix starts every channel the bus publishes and subscribes to
	// (then "ev:", then the topic). Empty means [DefaultPrefix].
	Prefix string

	// Logger receives a warning when a subscription loses its connection
	// (once per outage) and a message when it is back. Nil means no
	// logging.
	Logger *slog.Logger

	// HealthCheckInterval is how long a subscription waits for traffic
	// before it pings Redis; a connection that answers neither within a
	// second interval is replaced, which finds a dead connection that the
	// network did not close. Zero means [DefaultHealthCheckInterval].
	HealthCheckInterval time.Duration
}

// An EventBus is an [mcpkit.EventBus] on Redis pub/sub: Publish is one
// PUBLISH, and each subscription has a connection of its own (SUBSCRIBE)
// and a goroutine that reads it and calls the subscriber's function. Buses
// with the same prefix, in any process, reach each other's subscribers.
// It is safe for concurrent use.
//
// Redis pub/sub delivers at most once: what is published while a
// subscription's connection is down is lost. A subscription reconnects on
// its own (go-redis resubscribes, and this package retries with a backoff
// while Redis is away and replaces a connection that stops answering
// pings), and once Redis has confirmed the subscription again it calls the
// function with a nil payload, once, so that the subscriber can
// resynchronise. A payload published is never nil when delivered, even if
// it was published nil or empty.
type EventBus struct {
	c      redis.UniversalClient
	prefix string
	logger *slog.Logger
	health time.Duration

	mu     sync.Mutex
	closed bool
	subs   map[*subscription]struct{}
}

// NewEventBus returns an EventBus on Redis pub/sub through c. The caller
// still owns c; [EventBus.Close] ends the subscriptions but does not close
// c.
func NewEventBus(c redis.UniversalClient, opts *EventBusOptions) *EventBus {
	b := &EventBus{
		c:      c,
		prefix: DefaultPrefix + "ev:",
		health: DefaultHealthCheckInterval,
		subs:   make(map[*subscription]struct{}),
	}
	if opts != nil {
		if opts.Prefix != "" {
			b.prefix = opts.Prefix + "ev:"
		}
		b.logger = opts.Logger
		if opts.HealthCheckInterval > 0 {
			b.health = opts.HealthCheckInterval
		}
	}
	return b
}

// Publish sends payload to every subscriber of topic, in every process
// whose bus has the same prefix. It returns once Redis has taken the
// message, not when it has been delivered.
func (b *EventBus) Publish(ctx context.Context, topic string, payload []byte) error {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return ErrBusClosed
	}
	if err := b.c.Publish(ctx, b.prefix+topic, payload).Err(); err != nil {
		return fmt.Errorf("redisstore: publish: %w", err)
	}
	return nil
}

// Subscribe calls fn with each payload published on topic from the time it
// returns until unsubscribe is called or ctx is done, and with nil after it
// had to reconnect (see [EventBus]). It returns once Redis has confirmed
// the subscription, or an error if Redis could not be reached, ctx is done
// or fn is nil.
//
// fn is called from one goroutine, the subscription's, one call at a time,
// in the order Redis delivers, and must not block for long: while it runs,
// the subscription's messages wait (in Redis, which disconnects a
// subscriber that falls too far behind). unsubscribe may be called more
// than once, and from fn. It returns after the subscription's goroutine
// has exited, unless a call of fn is running at the time (from fn itself,
// for instance): then that call is the last.
func (b *EventBus) Subscribe(ctx context.Context, topic string, fn func(payload []byte)) (unsubscribe func(), err error) {
	if fn == nil {
		return nil, errors.New("redisstore: EventBus.Subscribe: nil fn")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, ErrBusClosed
	}
	channel := b.prefix + topic
	ps := b.c.Subscribe(ctx, channel)
	if err := confirm(ctx, ps, channel); err != nil {
		ps.Close()
		return nil, fmt.Errorf("redisstore: subscribe: %w", err)
	}
	s := &subscription{
		bus:     b,
		ctx:     ctx,
		channel: channel,
		fn:      fn,
		ps:      ps,
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		ps.Close()
		return nil, ErrBusClosed
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	s.stopAfter = context.AfterFunc(ctx, s.halt)
	go s.run()
	return s.unsubscribe, nil
}

// Close ends every subscription of the bus, as their unsubscribe functions
// would, and makes later calls of Publish and Subscribe return
// [ErrBusClosed]. It does not close the client. It may be called more than
// once.
func (b *EventBus) Close() error {
	b.mu.Lock()
	b.closed = true
	subs := b.subs
	b.subs = make(map[*subscription]struct{})
	b.mu.Unlock()
	for s := range subs {
		s.unsubscribe()
	}
	return nil
}

func (b *EventBus) remove(s *subscription) {
	b.mu.Lock()
	delete(b.subs, s)
	b.mu.Unlock()
}

// confirm waits for Redis to confirm the subscription to channel.
func confirm(ctx context.Context, ps *redis.PubSub, channel string) error {
	deadline := time.Now().Add(confirmTimeout)
	for {
		wait := time.Until(deadline)
		if wait <= 0 { // a zero timeout would wait for ever
			return fmt.Errorf("no subscription confirmation within %v", confirmTimeout)
		}
		msg, err := ps.ReceiveTimeout(ctx, wait)
		if err != nil {
			return err
		}
		if m, ok := msg.(*redis.Subscription); ok && m.Kind == "subscribe" && m.Channel == channel {
			return nil
		}
	}
}

type subscription struct {
	bus       *EventBus
	ctx       context.Context // Subscribe's: fn is not called once it is done
	channel   string
	fn        func([]byte)
	stopAfter func() bool // stops the context.AfterFunc

	mu      sync.Mutex
	ps      *redis.PubSub // replaced by renew
	once    sync.Once
	stopped atomic.Bool
	stop    chan struct{} // closed with stopped set
	inFn    atomic.Bool   // the goroutine is calling fn, or about to
	done    chan struct{} // closed when the goroutine has exited
}

// halt stops the subscription: its goroutine calls fn no more and exits.
func (s *subscription) halt() {
	s.once.Do(func() {
		s.stopped.Store(true)
		close(s.stop)
		s.mu.Lock()
		s.ps.Close() // ends a Receive in progress
		s.mu.Unlock()
	})
}

func (s *subscription) unsubscribe() {
	s.halt()
	s.bus.remove(s)
	// From fn, waiting would deadlock. Otherwise fn is not running, and
	// deliver sees stopped before it calls fn again: see deliver.
	if !s.inFn.Load() {
		<-s.done
	}
}

// deliver calls fn, unless the subscription has stopped. inFn is set
// before stopped is read, and unsubscribe sets stopped before it reads
// inFn: either unsubscribe sees inFn and does not wait, or deliver sees
// stopped and does not call fn. The context is read too: the AfterFunc
// that stops the subscription when it is done runs later, and a payload
// published after ctx is done must not reach fn meanwhile.
func (s *subscription) deliver(payload []byte) {
	s.inFn.Store(true)
	defer s.inFn.Store(false)
	if s.stopped.Load() || s.ctx.Err() != nil {
		return
	}
	s.fn(payload)
}

func (s *subscription) pubSub() *redis.PubSub {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ps
}

// renew replaces the connection, which stopped answering. The new one's
// subscription confirmation makes run call fn(nil).
func (s *subscription) renew() {
	s.mu.Lock()
	if s.stopped.Load() {
		s.mu.Unlock()
		return
	}
	old := s.ps
	s.ps = s.bus.c.Subscribe(context.Background(), s.channel)
	s.mu.Unlock()
	old.Close()
}

// run reads the subscription's connection until the subscription stops.
// go-redis reconnects and resubscribes a PubSub whose connection failed on
// the next read; Redis confirms the subscription again, which is how run
// knows that messages may have been lost.
func (s *subscription) run() {
	defer close(s.done)
	defer s.bus.remove(s)
	defer s.stopAfter()
	ctx := context.Background()
	backoff := minBackoff
	var pinged, lost bool
	for !s.stopped.Load() {
		ps := s.pubSub()
		msg, err := ps.ReceiveTimeout(ctx, s.bus.health)
		if s.stopped.Load() {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if pinged {
					if !lost && s.bus.logger != nil {
						s.bus.logger.Warn("redisstore: event bus subscription's connection stopped answering; replacing it",
							slog.String("channel", s.channel))
					}
					lost = true
					s.renew()
					pinged = false
				} else {
					// An error here shows on the next read.
					pinged = ps.Ping(ctx) == nil
				}
				continue
			}
			if !lost {
				lost = true
				if s.bus.logger != nil {
					s.bus.logger.Warn("redisstore: event bus subscription lost its connection; reconnecting",
						slog.String("channel", s.channel), slog.Any("error", err))
				}
			}
			select {
			case <-s.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		backoff, pinged = minBackoff, false
		switch m := msg.(type) {
		case *redis.Message:
			if m.Channel != s.channel {
				continue
			}
			p := []byte(m.Payload)
			if p == nil {
				p = []byte{}
			}
			s.deliver(p)
		case *redis.Subscription:
			// Subscribe read the first confirmation: this one follows a
			// reconnection.
			if m.Kind == "subscribe" && m.Channel == s.channel {
				if lost && s.bus.logger != nil {
					s.bus.logger.Info("redisstore: event bus subscription reconnected", slog.String("channel", s.channel))
				}
				lost = false
				s.deliver(nil)
			}
		}
	}
}
