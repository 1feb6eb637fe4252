#!/usr/bin/env bash
# Runs the floor benchmarks (BenchmarkFloor in floor_bench_test.go): what
# the server spends on one tools/call over streamable HTTP, per mode, for
# the raw go-sdk, a typed go-sdk tool, and mcpkit with and without the
# recommended chain. Prints, per mode and tool, the median ns/op, cpu-ns/op
# (CPU time per call, which other load on the machine hardly inflates), B/op
# and allocs/op of COUNT runs and each one's ratio to the raw go-sdk.
#
#   bash scripts/floor.sh          # COUNT=5
#   COUNT=10 bash scripts/floor.sh
set -euo pipefail
scripts=$(cd "$(dirname "$0")" && pwd)
cd "$(dirname "$0")/.."
count=${COUNT:-5}
go test -run '^$' -bench '^BenchmarkFloor$' -benchmem -count "$count" . |
awk -v bench=BenchmarkFloor -v order="sdk-raw sdk-typed mcpkit mcpkit+recommended" -f "$scripts/floor-table.awk" | { read -r header; echo "$header"; sort; }
