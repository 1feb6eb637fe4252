package redisstore_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// waitGone waits until Redis has dropped key, or fails t after a bound far
// above any expiry the tests set.
func waitGone(t *testing.T, c redis.UniversalClient, key string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := c.Exists(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("key %q still there after 10s", key)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// closedPortClient returns a client of a loopback port that nothing listens
// on, that does not retry.
func closedPortClient(t *testing.T) *redis.Client {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}
