#!/usr/bin/env bash
# Starts the scale-out demonstration in the foreground: one Redis, three
# replicas of the scaleout server sharing it, and nginx in front of them,
# round-robin, on one address. Ctrl-C (or SIGTERM) stops all of it and exits
# 0; nothing is left running and the temporary directory is removed.
#
#   bash examples/scaleout/run.sh
#   KEEP_SERVING=1 bash examples/scaleout/run.sh    # survive a replica's death
#
# SIGUSR1 makes it restart the replicas one by one, each drained first
# (SIGTERM: it finishes its calls and hands its tasks over, while nginx
# sends new requests to the others), and print "scaleout: rolling restart
# done" when the last is serving again. rolling-restart.sh does that while
# clients call, and counts the calls that failed.
#
# Needs Go, redis-server and nginx (Debian: apt-get install redis-server
# nginx). Settings come from the environment:
#   LB_PORT        nginx, where clients connect            (default 8090)
#   REPLICA_PORTS  the three replicas, space-separated      (default "8091 8092 8093")
#   REDIS_PORT     the Redis of the demonstration           (default 6390)
#   PER_MINUTE     limited_echo calls a minute, all callers together (default 5)
#   KEEP_SERVING   1: when a replica dies, say so and keep serving through
#                  the others (nginx fails over); by default any process
#                  that exits stops the demonstration
#   LOG_DIR        where the logs are kept when the demonstration fails
#                  (default: a new directory under ${TMPDIR:-/tmp})
#
# It refuses to start when a port is taken, and exits non-zero, keeping every
# log (named redis.log, r1.log, ..., nginx.log) and printing where, when
# something fails to start or stops unasked.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lb_port=${LB_PORT:-8090}
read -r -a replica_ports <<<"${REPLICA_PORTS:-8091 8092 8093}"
redis_port=${REDIS_PORT:-6390}
per_minute=${PER_MINUTE:-5}
keep_serving=${KEEP_SERVING:-0}

for cmd in go redis-server nginx; do
	command -v "$cmd" >/dev/null || { echo "run.sh: $cmd is not installed" >&2; exit 1; }
done

# in_use PORT: whether something accepts connections on PORT.
in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in "$lb_port" "${replica_ports[@]}" "$redis_port"; do
	if in_use "$port"; then
		echo "run.sh: port $port is in use by another process; free it, or choose other ports with LB_PORT, REPLICA_PORTS and REDIS_PORT" >&2
		exit 1
	fi
done

work=$(mktemp -d)
pids=()
failed=0
cleanup() {
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [ "$failed" = 1 ]; then
		logs=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/scaleout-logs.XXXXXX")}
		mkdir -p "$logs"
		cp "$work"/*.log "$logs"/ 2>/dev/null || true
		echo "scaleout: failed; the logs are kept in $logs" >&2
	fi
	rm -rf "$work"
	echo "scaleout: stopped" >&2
}
# fail MESSAGE: report, keep the logs, exit 1.
fail() {
	echo "run.sh: $1" >&2
	failed=1
	exit 1
}
trap cleanup EXIT
trap 'exit 0' INT TERM

# wait_port PORT NAME: until something accepts connections on PORT (10 s at most).
wait_port() {
	for _ in $(seq 100); do
		if in_use "$1"; then return 0; fi
		sleep 0.1
	done
	echo "run.sh: $2 did not start on port $1; its log:" >&2
	cat "$work/$2.log" >&2 || true
	fail "$2 did not start"
}

echo "scaleout: building" >&2
(cd "$here" && go build -o "$work/scaleout" .)

redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
pids+=($!)
wait_port "$redis_port" redis

# start_replica I: starts replica I (from 0) on its port, its log appended to.
start_replica() {
	local i=$1
	local name="r$((i + 1))"
	"$work/scaleout" -addr "127.0.0.1:${replica_ports[$i]}" -redis "127.0.0.1:$redis_port" -name "$name" \
		-per-minute "$per_minute" >>"$work/$name.log" 2>&1 &
	pids+=($!)
	replicas[i]=$!
}

upstreams=""
replicas=()
for i in "${!replica_ports[@]}"; do
	start_replica "$i"
	# max_fails=0: a draining replica's 503 does not set it aside (see the
	# location below); a stopped one refuses connections at once.
	upstreams+="        server 127.0.0.1:${replica_ports[$i]} max_fails=0;"$'\n'
done
for i in "${!replica_ports[@]}"; do wait_port "${replica_ports[$i]}" "r$((i + 1))"; done

cat >"$work/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    upstream replicas {
$upstreams    }
    server {
        listen 127.0.0.1:$lb_port;
        location / {
            proxy_pass http://replicas;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # The replicas refuse a loopback request whose Host is not a
            # loopback name (DNS rebinding protection): pass the client's.
            proxy_set_header Host \$host;
            # MCP answers and listen streams are event streams: pass each
            # event on as it comes, and keep idle streams open.
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 1h;
            # A draining replica answers 503 before any work, a stopped one
            # refuses the connection: either way, try the next replica.
            # MCP requests are POSTs, which nginx retries only with
            # non_idempotent.
            proxy_next_upstream error http_503 non_idempotent;
            proxy_next_upstream_tries 3;
            proxy_next_upstream_timeout 10s;
            add_header X-Upstream \$upstream_addr always;
        }
    }
}
EOF
nginx -c "$work/nginx.conf" -p "$work" >"$work/nginx-out.log" 2>&1 &
pids+=($!)
wait_port "$lb_port" nginx

echo "scaleout: pids ${pids[*]}"
for i in "${!replicas[@]}"; do
	echo "scaleout: replica r$((i + 1)) pid ${replicas[$i]} port ${replica_ports[$i]}"
done
echo "scaleout: serving MCP on http://127.0.0.1:$lb_port/mcp (replicas on ports ${replica_ports[*]}, Redis on $redis_port)"
# Until asked to stop. A process that exits unasked stops the rest, unless
# KEEP_SERVING=1 and it is a replica: then nginx sends its share to the
# others. (Polled: a child that exits before "wait -n" is called is reaped
# and forgotten, and wait -n would miss it.)
# roll: restarts the replicas one by one. Each drains on SIGTERM and
# exits; the next starts once this one serves again.
roll_requested=0
trap 'roll_requested=1' USR1
roll() {
	echo "scaleout: rolling restart" >&2
	for i in "${!replicas[@]}"; do
		local pid=${replicas[$i]}
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		start_replica "$i"
		wait_port "${replica_ports[$i]}" "r$((i + 1))"
		echo "scaleout: replica r$((i + 1)) restarted, pid ${replicas[$i]}; it drained: $(grep 'msg=drained' "$work/r$((i + 1)).log" | tail -n 1 | grep -o 'took=[^ ]*' || echo '?')" >&2
	done
	alive=("${replicas[@]}")
	echo "scaleout: tasks taken up from a draining replica: $(cat "$work"/r*.log | grep -c 'took over a task' || true)" >&2
	echo "scaleout: rolling restart done"
}

alive=("${replicas[@]}")
while :; do
	if [ "$roll_requested" = 1 ]; then
		roll_requested=0
		roll
	fi
	for pid in "${pids[0]}" "${pids[-1]}"; do
		kill -0 "$pid" 2>/dev/null || fail "Redis or nginx exited unasked; stopping the rest"
	done
	still=()
	for i in "${!replicas[@]}"; do
		pid=${replicas[$i]}
		if kill -0 "$pid" 2>/dev/null; then
			still+=("$pid")
		elif [[ " ${alive[*]} " == *" $pid "* ]]; then
			[ "$keep_serving" = 1 ] || fail "replica r$((i + 1)) (pid $pid) exited unasked; stopping the rest"
			echo "scaleout: replica r$((i + 1)) (pid $pid) exited; serving through the others" >&2
		fi
	done
	alive=("${still[@]}")
	[ "${#alive[@]}" -gt 0 ] || fail "every replica exited"
	sleep 0.5 &
	wait $! || true
done
