package mcpkit

import "context"

// An EventBus carries events between the replicas of one server, so that a
// change made on one replica reaches the clients of every replica (see
// [Server.ShareChanges]). [NewMemoryBus] is an in-process implementation
// (for tests, and for several Servers in one process); the redisstore module
// has one on Redis pub/sub.
//
// Publish sends payload to every subscriber of topic, in every process,
// including the publisher's own subscribers; delivery is at most once, in
// order for one publisher. Subscribe calls fn for each payload published on
// topic from then on until unsubscribe is called or ctx is done; fn is called
// from one goroutine at a time per subscription and must not block for long.
// A bus that lost its connection and may have missed events calls fn with a
// nil payload once it is back, so that subscribers can resynchronise.
type EventBus interface {
	Publish(ctx context.Context, topic string, payload []byte) error
	Subscribe(ctx context.Context, topic string, fn func(payload []byte)) (unsubscribe func(), err error)
}
