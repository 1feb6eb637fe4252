// Package redistest provides a redis-server for the tests of redisstore.
//
// [Start] starts a redis-server of the test's own on a free loopback port,
// with no persistence, and stops it when the test ends; [Server.Stop] and
// [Server.Restart] (same port) let a test take Redis away and bring it back.
// [Shared] returns one server for the whole test binary, started on first
// use and stopped by [Main], for tests that only need a Redis.
//
// When the environment variable MCPKIT_REDIS_ADDR is set, both return that
// server instead (host:port), and tests that would stop it are skipped. When
// redis-server is not installed, tests that need it are skipped, except when
// CI=true or MCPKIT_REQUIRE_REDIS=1: then they fail, so that CI runs them.
//
// Tests sharing a server keep apart by key prefix: [Prefix].
package redistest
