#!/usr/bin/env bash
# Runs the shape of the published I/O-bound MCP server benchmark on this
# machine (benchmarks/iobound; docs/performance.md, "An I/O-bound server
# under load"): three tools that read and write a real redis-server and call
# an HTTP API, 50 virtual users that each open a session per call, for
# mcpkit with its recommended chain, the go-sdk alone and mark3labs/mcp-go,
# each server in its own process with GOMAXPROCS=2, GOMEMLIMIT=2GiB and
# taskset. Servers are measured in turn (A B C, A B C, ...), ROUNDS times;
# prints every sample, then the medians and the ratios to the go-sdk.
#
# Needs Linux and redis-server (Debian: apt-get install redis-server).
# About 25 seconds per sample: 9 samples per round with the three modes,
# so about 12 minutes for ROUNDS=3. CI only vets and tests the command.
#
#   bash scripts/iobound-bench.sh                       # ROUNDS=3 DURATION=20s WARMUP=5s
#   ROUNDS=5 DURATION=60s bash scripts/iobound-bench.sh
#   OUT=file bash scripts/iobound-bench.sh              # also append the samples to file
#   ARGS='-modes stateless-2026 -api-delay 2ms' bash scripts/iobound-bench.sh
set -euo pipefail
raw=()
if [ -n "${OUT:-}" ]; then
  touch "$OUT"
  raw=(-raw "$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")")
fi
cd "$(dirname "$0")/../benchmarks/iobound"
command -v redis-server >/dev/null || { echo "redis-server is not installed (Debian: apt-get install redis-server)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/iobound.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/iobound" .
# shellcheck disable=SC2086
"$tmp/iobound" run -rounds "${ROUNDS:-3}" -duration "${DURATION:-20s}" -warmup "${WARMUP:-5s}" "${raw[@]}" ${ARGS:-}
