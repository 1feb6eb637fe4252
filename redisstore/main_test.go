package redisstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	// go-redis logs its dial failures to stderr; the tests cause many.
	redis.SetLogger(quiet{})
	os.Exit(redistest.Main(m))
}
