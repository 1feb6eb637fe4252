#!/usr/bin/env bash
# Tests the redisstore module (the Redis stores: a Go module of its own, so
# the root's go test ./... does not reach it): vet, the tests with the race
# detector, then several times without it. The tests start their own
# redis-server on a free loopback port (or use MCPKIT_REDIS_ADDR if set);
# here they fail, rather than skip, if redis-server is not installed.
#
#   bash scripts/redis-test.sh
set -euo pipefail
cd "$(dirname "$0")/../redisstore"
export MCPKIT_REQUIRE_REDIS=1

go vet ./...
go test -race ./...
go test -count=3 ./...
