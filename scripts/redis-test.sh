#!/usr/bin/env bash
# Tests the redisstore module (the Redis stores: a Go module of its own, so
# the root's go vet, staticcheck and go test ./... do not reach it): vet,
# staticcheck, the tests with the race detector, then several times without
# it. The tests start their own redis-server on a free loopback port (or use
# MCPKIT_REDIS_ADDR if set); here they fail, rather than skip, if
# redis-server is not installed.
#
#   bash scripts/redis-test.sh
set -euo pipefail
cd "$(dirname "$0")/../redisstore"
export MCPKIT_REQUIRE_REDIS=1

go vet ./...
GOFLAGS= go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
go test -race ./...
go test -count=3 ./...
