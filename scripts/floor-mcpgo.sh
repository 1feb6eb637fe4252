#!/usr/bin/env bash
# Runs BenchmarkFloorMCPGo (benchmarks/mcpgo, a module of its own): what the
# server spends on one tools/call over streamable HTTP, per mode, for the raw
# go-sdk, mcpkit with a typed tool, and mark3labs/mcp-go (its defaults, and
# with input and output schema validation on). Prints, per mode and
# tool, the median ns/op, cpu-ns/op (CPU time per call, which other load on
# the machine hardly inflates), B/op and allocs/op of COUNT runs and each
# one's ratio to the raw go-sdk. The awk is scripts/floor.sh's.
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
awk '
/^BenchmarkFloorMCPGo\// {
	split($1, p, "/"); sub(/-[0-9]+$/, "", p[4])
	key = p[2] "/" p[3] "/" p[4]
	n[key]++
	for (i = 3; i < NF; i += 2) {
		if ($(i + 1) == "ns/op") ns[key, n[key]] = $i
		if ($(i + 1) == "cpu-ns/op") cpu[key, n[key]] = $i
		if ($(i + 1) == "B/op") by[key, n[key]] = $i
		if ($(i + 1) == "allocs/op") al[key, n[key]] = $i
	}
	keys[key] = 1; group[p[2] "/" p[3]] = 1
}
function median(a, k, m,    v, i, j, t) {
	for (i = 1; i <= m; i++) v[i] = a[k, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
END {
	printf "%-22s %-18s %12s %7s %10s %7s %10s %7s %8s %7s\n", "mode/tool", "server", "ns/op", "x", "cpu-ns/op", "x", "B/op", "x", "allocs", "x"
	for (g in group) {
		base = g "/sdk-raw"
		bns = median(ns, base, n[base]); bcpu = median(cpu, base, n[base]); bby = median(by, base, n[base]); bal = median(al, base, n[base])
		split("sdk-raw mcpkit mcp-go mcp-go+validation", order, " ")
		for (i = 1; i <= 4; i++) {
			k = g "/" order[i]
			if (!(k in keys)) continue
			mns = median(ns, k, n[k]); mcpu = median(cpu, k, n[k]); mby = median(by, k, n[k]); mal = median(al, k, n[k])
			printf "%-22s %-18s %12.0f %7.2f %10.0f %7.2f %10.0f %7.2f %8.0f %7.2f\n", g, order[i], mns, mns / bns, mcpu, (bcpu ? mcpu / bcpu : 0), mby, mby / bby, mal, mal / bal
		}
	}
}' | { read -r header; echo "$header"; sort; }
