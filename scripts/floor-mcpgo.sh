#!/usr/bin/env bash
# Runs BenchmarkFloorMCPGo (benchmarks/mcpgo, a module of its own): what the
# server spends on one tools/call over streamable HTTP, per mode, for the raw
# go-sdk, mcpkit with a typed tool, and mark3labs/mcp-go (its defaults, and
# with input and output schema validation on). Prints, per mode and
# tool, the median ns/op, cpu-ns/op (CPU time per call, which other load on
# the machine hardly inflates), B/op and allocs/op of COUNT runs and each
# one's ratio to the raw go-sdk. The table is scripts/floor-table.awk's.
#
#   bash scripts/floor-mcpgo.sh                   # COUNT=5
#   COUNT=10 bash scripts/floor-mcpgo.sh
#   SDK_PATCHED=1 bash scripts/floor-mcpgo.sh     # go-sdk v1.8.0 + sdkpatches/*.patch
#
# With SDK_PATCHED=1 the go-sdk (under sdk-raw and mcpkit) is a copy of
# v1.8.0 from the module cache with sdkpatches/*.patch applied, used through
# a temporary go.work outside the repository, as scripts/sdkpatches.sh does;
# no go.mod or go.sum is touched.
set -euo pipefail
scripts=$(cd "$(dirname "$0")" && pwd)
cd "$(dirname "$0")/../benchmarks/mcpgo"
count=${COUNT:-5}
if [ -n "${SDK_PATCHED:-}" ]; then
	sdk=github.com/modelcontextprotocol/go-sdk
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/floor-mcpgo.XXXXXX")
	trap 'chmod -R u+w "$tmp" 2>/dev/null || true; rm -rf "$tmp"' EXIT
	version=$(GOWORK=off go list -m -f '{{.Version}}' "$sdk")
	dir=$(cd "$tmp" && GOWORK=off go mod download -json "$sdk@$version" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
	cp -R "$dir" "$tmp/go-sdk"
	chmod -R u+w "$tmp/go-sdk"
	for p in "$PWD"/../../sdkpatches/*.patch; do
		(cd "$tmp/go-sdk" && GIT_CEILING_DIRECTORIES=$tmp git apply --whitespace=error-all "$p")
	done
	printf 'go %s\n\nuse %s\n\nreplace %s => %s\n' "$(GOWORK=off go list -m -f '{{.GoVersion}}')" "$PWD" "$sdk" "$tmp/go-sdk" >"$tmp/go.work"
	export GOWORK=$tmp/go.work
	echo "# go-sdk $version patched with sdkpatches/*.patch"
fi
echo "# $(go version), $(getconf _NPROCESSORS_ONLN) CPUs, $(go list -m -f '{{.Path}} {{.Version}}' github.com/mark3labs/mcp-go github.com/modelcontextprotocol/go-sdk | paste -sd, -), medians of $count runs"
go test -run '^$' -bench '^BenchmarkFloorMCPGo$' -benchmem -count "$count" -timeout 60m . |
awk -v bench=BenchmarkFloorMCPGo -v order="sdk-raw mcpkit mcp-go mcp-go+validation" -f "$scripts/floor-table.awk" | { read -r header; echo "$header"; sort; }
