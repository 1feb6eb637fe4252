// Package redisstore provides Redis implementations of the stores that
// mcpkit keeps shared state in, so that the replicas of one server behind a
// load balancer share one rate limit, one result cache, one record of
// idempotent calls and one stream of registry changes:
//
//   - [Limiter], a [middleware.Limiter] (GCRA, on Redis's clock),
//   - [Cache], a [middleware.Cache],
//   - [IdempotencyStore], a [middleware.IdempotencyStore],
//   - [EventBus], an [mcpkit.EventBus] on Redis pub/sub,
//   - [TaskStore], a [tasks.Store], where the replicas keep the tasks
//     (background tool calls) they run.
//
// It is a module of its own, so that servers that keep their state in
// memory do not depend on a Redis client. It needs Redis 3.2 or later (Lua
// scripts that read TIME and then write); it is tested with Redis 7.0.
//
// Every constructor takes a [redis.UniversalClient], which may be a single
// node, a cluster or a sentinel-managed failover client, and an options
// struct where nil means the defaults. The caller owns the client: closing
// it is the caller's job, after the stores are no longer used.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	srv.Use(middleware.RateLimit(redisstore.NewLimiter(rdb, 10, 20, nil), nil))
//
// # Keys
//
// Every key a store writes starts with its Prefix (default [DefaultPrefix]),
// then a short name for the kind of store ("rl:", "cache:", "idem:",
// "task:", "ev:" for pub/sub channels), then the key the middleware (or the
// task's ID) chose. Stores of one kind with the same prefix share their
// keys; that is how replicas share state, and also why two Limiters with
// different rates need different prefixes. Every key written has an
// expiry, so nothing is left behind when keys fall out of use (a task
// expires at its ExpiresAt, which [tasks.Manager] always sets).
//
// # Errors
//
// An error from Redis (down, unreachable, timed out) is returned to the
// caller, wrapped, except by a [Limiter] that has a fallback
// ([LimiterOptions.FailOpen]). The middleware decides what an error means
// for the call: see [middleware.RateLimit] for instance. How long a call
// takes to fail while Redis is away is the client's to bound (DialTimeout,
// ReadTimeout, MaxRetries in [redis.Options]).
//
// The stores log through the *slog.Logger of their options, if any; go-redis
// itself logs some connection failures through its own logger, which
// [redis.SetLogger] replaces.
//
// # Adding the module
//
// Until mcpkit is published, go get github.com/mcpkit/mcpkit/redisstore fails
// (403 Forbidden from the module proxy). With a checkout of the repository
// at ../mcpkit, require this module and the root module with replace
// directives of their own:
//
//	go mod edit -require=github.com/mcpkit/mcpkit@v0.0.0 -replace=github.com/mcpkit/mcpkit=../mcpkit
//	go mod edit -require=github.com/mcpkit/mcpkit/redisstore@v0.0.0 -replace=github.com/mcpkit/mcpkit/redisstore=../mcpkit/redisstore
//	go mod tidy # once your code imports it
//
// The repository's README.md ("Use it in your module") has the go.work
// alternative and its limits.
package redisstore

import (
	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
)

var (
	_ middleware.Limiter          = (*Limiter)(nil)
	_ middleware.Cache            = (*Cache)(nil)
	_ middleware.IdempotencyStore = (*IdempotencyStore)(nil)
	_ mcpkit.EventBus             = (*EventBus)(nil)
)

// DefaultPrefix is the key prefix of the stores whose options do not set one.
const DefaultPrefix = "mcpkit:"
