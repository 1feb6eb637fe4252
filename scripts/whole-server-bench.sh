#!/usr/bin/env bash
# Measures what a whole MCP server process spends per tools/call over HTTP,
# with a real client (benchmarks/mcpgo/cmd/wholeserver; docs/performance.md,
# "What a whole server process sees over HTTP"). Builds the command twice,
# against go-sdk v1.8.0 as released and against a copy of it with
# sdkpatches/*.patch applied (through a temporary go.work outside the
# repository, as scripts/sdkpatches.sh does; no go.mod or go.sum is
# touched), then runs, ROUNDS times, each server in its own process on
# loopback: mcpkit on the stock go-sdk, mcpkit on the patched go-sdk,
# mark3labs/mcp-go, and mcp-go with schema validation on. A go-sdk client
# makes CALLS calls per mode (stateless 2026-07-28, stateless 2025-11-25,
# stateful 2025-11-25) and tool (add, obj50); the server's CPU time and heap
# allocations over them, divided by CALLS, are the result. Prints every
# sample as a benchmark line, then the medians and the ratios.
#
# Slow (about a minute per round on a 2-core machine) and not run by CI,
# which only vets and tests the command.
#
#   bash scripts/whole-server-bench.sh                  # ROUNDS=5 CALLS=2000
#   ROUNDS=7 CALLS=3000 bash scripts/whole-server-bench.sh
#   OUT=dir bash scripts/whole-server-bench.sh          # also keep the samples, for benchstat
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rounds=${ROUNDS:-5}
calls=${CALLS:-2000}
sdk=github.com/modelcontextprotocol/go-sdk

tmp=$(mktemp -d "${TMPDIR:-/tmp}/whole-server-bench.XXXXXX")
cleanup() {
	# Files copied from the module cache are read-only.
	chmod -R u+w "$tmp" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cd benchmarks/mcpgo
version=$(GOWORK=off go list -m -f '{{.Version}}' "$sdk")
echo "== build: go-sdk $version, and $version with sdkpatches/*.patch"
dir=$(cd "$tmp" && GOWORK=off go mod download -json "$sdk@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
	echo "whole-server-bench: go mod download gave no directory for $sdk@$version" >&2
	exit 1
fi
cp -R "$dir" "$tmp/go-sdk"
chmod -R u+w "$tmp/go-sdk"
for p in "$root"/sdkpatches/*.patch; do
	(cd "$tmp/go-sdk" && GIT_CEILING_DIRECTORIES=$tmp git apply --whitespace=error-all "$p")
done
printf 'go %s\n\nuse %s\n\nreplace %s => %s\n' "$(GOWORK=off go list -m -f '{{.GoVersion}}')" "$PWD" "$sdk" "$tmp/go-sdk" >"$tmp/go.work"
GOWORK=off go build -o "$tmp/stock" ./cmd/wholeserver
GOWORK=$tmp/go.work go build -o "$tmp/patched" ./cmd/wholeserver
# The patched build must really use the copy.
GOWORK=$tmp/go.work go list -m -f '{{.Path}} {{.Version}} => {{.Replace.Path}}' "$sdk"

raw=()
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	raw=(-raw "$OUT/whole-server.txt")
fi
echo "# $(go version), $(getconf _NPROCESSORS_ONLN) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
echo "# $(go list -m -f '{{.Path}} {{.Version}}' github.com/mark3labs/mcp-go "$sdk" | paste -sd, -), $rounds rounds of $calls calls per cell"
"$tmp/stock" run -rounds "$rounds" -calls "$calls" "${raw[@]}" \
	-server "mcpkit-stock=mcpkit@$tmp/stock" \
	-server "mcpkit-patched=mcpkit@$tmp/patched" \
	-server "mcp-go=mcp-go@$tmp/stock" \
	-server "mcp-go+validation=mcp-go+validation@$tmp/stock" \
	-ratio mcpkit-stock/mcpkit-patched \
	-ratio mcp-go+validation/mcpkit-patched \
	-ratio mcp-go/mcpkit-patched \
	-ratio mcp-go+validation/mcpkit-stock
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
