#!/usr/bin/env bash
# A rolling restart under load, measured: starts the demonstration of
# run.sh (Redis, three replicas, nginx), starts clients that call the
# replicas through nginx (the callers command: calls of both protocol eras,
# and tasks), restarts the replicas one by one while they call, lets the
# clients finish, and prints what they saw:
#
#   callers: calls=412 failed=0 tasks=38 completed=38 lost=0
#
# It exits 0 when no call failed and no task was lost, 1 otherwise.
#
#   bash examples/scaleout/rolling-restart.sh
#
# Needs what run.sh needs (Go, redis-server, nginx). Settings, from the
# environment, besides run.sh's own (LB_PORT, REPLICA_PORTS, REDIS_PORT):
#   CALLERS       clients calling the work tool at once   (default 6)
#   TASK_CALLERS  clients creating tasks at once           (default 4)
#   TASK_MILLIS   how long each task works                 (default 3000)
#   WARMUP        seconds of calls before the restart      (default 2)
#   COOLDOWN      seconds of calls after it                (default 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lb_port=${LB_PORT:-8090}
callers=${CALLERS:-6}
task_callers=${TASK_CALLERS:-4}
task_millis=${TASK_MILLIS:-3000}
warmup=${WARMUP:-2}
cooldown=${COOLDOWN:-2}

work=$(mktemp -d)
run_pid=""
callers_pid=""
cleanup() {
	trap - EXIT INT TERM
	[ -z "$callers_pid" ] || kill -TERM "$callers_pid" 2>/dev/null || true
	if [ -n "$run_pid" ]; then
		kill -TERM "$run_pid" 2>/dev/null || true
		wait "$run_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# wait_line FILE TEXT SECONDS: until FILE holds a line with TEXT.
wait_line() {
	for _ in $(seq $(($3 * 10))); do
		if grep -q "$2" "$1" 2>/dev/null; then return 0; fi
		kill -0 "$run_pid" 2>/dev/null || { echo "rolling-restart: run.sh exited:" >&2; cat "$work/run.err" >&2; exit 1; }
		sleep 0.1
	done
	echo "rolling-restart: no \"$2\" after $3 s; run.sh said:" >&2
	cat "$work/run.err" >&2
	exit 1
}

echo "rolling-restart: building the callers" >&2
(cd "$here" && go build -o "$work/callers" ./callers)

bash "$here/run.sh" >"$work/run.out" 2>"$work/run.err" &
run_pid=$!
wait_line "$work/run.out" "scaleout: serving MCP" 180

"$work/callers" -url "http://127.0.0.1:$lb_port/mcp" -callers "$callers" -task-callers "$task_callers" -task-millis "$task_millis" \
	>"$work/callers.out" &
callers_pid=$!
sleep "$warmup"

echo "rolling-restart: restarting the replicas one by one" >&2
start=$(date +%s%N)
kill -USR1 "$run_pid"
wait_line "$work/run.out" "scaleout: rolling restart done" 180
end=$(date +%s%N)
grep "restarted\|taken up" "$work/run.err" >&2 || true
echo "rolling-restart: the restart took $(((end - start) / 1000000)) ms" >&2
sleep "$cooldown"

kill -INT "$callers_pid"
status=0
wait "$callers_pid" || status=$?
callers_pid=""
cat "$work/callers.out"
exit "$status"
