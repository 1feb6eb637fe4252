package oauth

import (
	"container/list"
	"sync"
	"time"
)

// An lru is a bounded cache of values that expire: when it is full, the
// least recently used value goes first. It is safe for concurrent use.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	size  int
	order *list.List // of *lruEntry[K, V], the most recently used first
	byKey map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key   K
	val   V
	until time.Time
}

func newLRU[K comparable, V any](size int) *lru[K, V] {
	return &lru[K, V]{size: size, order: list.New(), byKey: map[K]*list.Element{}}
}

// get returns the value of key while now is before its expiry.
func (c *lru[K, V]) get(key K, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	ent := e.Value.(*lruEntry[K, V])
	if !now.Before(ent.until) {
		c.order.Remove(e)
		delete(c.byKey, key)
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return ent.val, true
}

// put keeps val for key until until, dropping the least recently used
// value when full.
func (c *lru[K, V]) put(key K, val V, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ent := &lruEntry[K, V]{key: key, val: val, until: until}
	if e, ok := c.byKey[key]; ok {
		e.Value = ent
		c.order.MoveToFront(e)
		return
	}
	c.byKey[key] = c.order.PushFront(ent)
	for c.order.Len() > c.size {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.byKey, old.Value.(*lruEntry[K, V]).key)
	}
}

// len returns how many values are kept, expired ones included.
func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
