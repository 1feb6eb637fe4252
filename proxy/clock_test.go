package proxy_test

import (
	"sync"
	"testing"
	"time"
)

// fakeClock is a proxy.Clock whose time moves only when the test moves it.
// It records each delay After is asked for, and fires a timer only when
// the test moves the time past it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer     // pending, in the order they were asked for
	asked  []time.Duration // every delay asked for
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.asked = append(c.asked, d)
	c.timers = append(c.timers, fakeTimer{c.now.Add(d), ch})
	return ch
}

// delays returns the delays asked for so far.
func (c *fakeClock) delays() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.asked...)
}

// waitTimer waits until a timer is pending, and reports whether one was
// within a safety net of ten seconds of real time.
func (c *fakeClock) waitTimer() bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		c.mu.Lock()
		n := len(c.timers)
		c.mu.Unlock()
		if n > 0 {
			return true
		}
	}
	return false
}

// fire moves the time to the earliest pending timer's, fires every timer
// due by then, and returns how far the time moved.
func (c *fakeClock) fire(t *testing.T) time.Duration {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		t.Fatal("fire: no timer is pending")
	}
	next := c.timers[0].at
	for _, tm := range c.timers[1:] {
		if tm.at.Before(next) {
			next = tm.at
		}
	}
	moved := max(next.Sub(c.now), 0)
	c.now = c.now.Add(moved)
	pending := c.timers[:0]
	for _, tm := range c.timers {
		if tm.at.After(c.now) {
			pending = append(pending, tm)
			continue
		}
		tm.ch <- c.now
	}
	c.timers = pending
	return moved
}
