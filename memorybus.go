package mcpkit

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// memoryQueue is how many payloads a [MemoryBus] subscription holds while
// its fn is busy.
const memoryQueue = 256

// A MemoryBus is an [EventBus] within one process: for tests, and for
// several Servers in one process that should share their changes.
//
// Publish never blocks: it copies the payload into the queue of each
// subscription to the topic and returns. Each subscription has a goroutine
// of its own that calls fn with the queued payloads, in the order they were
// published (one order for every subscriber, also across publishers). A
// queue holds 256 payloads. When a subscriber is so slow that its queue is
// full, payloads published for it from then on are dropped, until fn has
// been given every payload queued before the first drop; then fn is called
// once with nil, as a bus calls it after a reconnection, so that the
// subscriber resynchronises. A slow subscriber thus loses events, never
// delays the publisher or the other subscribers, and always learns that
// it lost some.
//
// The zero value is not usable; call [NewMemoryBus]. A MemoryBus is safe
// for concurrent use.
type MemoryBus struct {
	mu   sync.Mutex
	subs map[string][]*memorySub // by topic, in the order they subscribed
}

// NewMemoryBus returns an empty MemoryBus.
func NewMemoryBus() *MemoryBus {
	return &MemoryBus{subs: make(map[string][]*memorySub)}
}

// Publish queues a copy of payload for every current subscriber of topic
// and returns without waiting for them. It fails only when ctx is done. An
// empty payload is delivered as an empty, non-nil slice, so that it is not
// taken for the nil of a resynchronisation.
func (b *MemoryBus) Publish(ctx context.Context, topic string, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Holding b.mu while queueing gives every subscriber the same order.
	for _, s := range b.subs[topic] {
		p := make([]byte, len(payload))
		copy(p, payload)
		s.push(p)
	}
	return nil
}

// Subscribe calls fn, from a goroutine of the subscription's own, with
// each payload published on topic after Subscribe returns, until
// unsubscribe is called or ctx is done; see [MemoryBus] for what happens
// when fn falls behind. fn may keep the payload.
//
// unsubscribe may be called any number of times, from any goroutine but
// fn's own: it returns once fn has returned for the last time, so that fn
// is never called after it. When ctx is done the subscription ends on its
// own; a later unsubscribe does nothing. Subscribe fails if fn is nil or
// ctx is done.
func (b *MemoryBus) Subscribe(ctx context.Context, topic string, fn func(payload []byte)) (unsubscribe func(), err error) {
	if fn == nil {
		return nil, errors.New("mcpkit: MemoryBus.Subscribe: nil fn")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &memorySub{
		fn:   fn,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	b.mu.Lock()
	b.subs[topic] = append(b.subs[topic], s)
	b.mu.Unlock()
	go func() {
		defer close(s.done)
		defer b.remove(topic, s)
		s.run(ctx)
	}()
	var once sync.Once
	return func() {
		// Callers after the first wait on the channel, not on a lock, so
		// that a synctest bubble sees them durably blocked.
		once.Do(func() { close(s.stop) })
		<-s.done
	}, nil
}

// remove takes s off topic's subscribers.
func (b *MemoryBus) remove(topic string, s *memorySub) {
	b.mu.Lock()
	defer b.mu.Unlock()
	subs := slices.DeleteFunc(b.subs[topic], func(x *memorySub) bool { return x == s })
	if len(subs) == 0 {
		delete(b.subs, topic)
		return
	}
	b.subs[topic] = subs
}

// memorySub is one subscription of a MemoryBus.
type memorySub struct {
	fn   func([]byte)
	wake chan struct{} // holds a token when the queue may not be empty
	stop chan struct{} // closed by unsubscribe
	done chan struct{} // closed when the goroutine calling fn has returned

	mu    sync.Mutex
	queue [][]byte // waiting for fn, oldest first
	lost  bool     // payloads were dropped since the queue was last empty
}

// push queues p, or drops it when the queue is full or has been since it
// was last emptied.
func (s *memorySub) push(p []byte) {
	s.mu.Lock()
	switch {
	case s.lost:
	case len(s.queue) == memoryQueue:
		s.lost = true
	default:
		s.queue = append(s.queue, p)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next returns the payload for fn's next call: the oldest queued one, or
// nil once the queue is empty if payloads were dropped; ok is false when
// there is nothing to deliver.
func (s *memorySub) next() (p []byte, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		p = s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		return p, true
	}
	if s.lost {
		s.lost = false
		return nil, true
	}
	return nil, false
}

// run calls fn with what is queued until the subscription ends.
func (s *memorySub) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		case <-s.wake:
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.stop:
				return
			default:
			}
			p, ok := s.next()
			if !ok {
				break
			}
			s.fn(p)
		}
	}
}
