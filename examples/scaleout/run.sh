#!/usr/bin/env bash
# Starts the scale-out demonstration in the foreground: one Redis, three
# replicas of the scaleout server sharing it, and nginx in front of them,
# round-robin, on one address. Ctrl-C (or SIGTERM) stops all of it; nothing
# is left running and the temporary directory is removed.
#
#   bash examples/scaleout/run.sh
#
# Needs Go, redis-server and nginx (Debian: apt-get install redis-server
# nginx). Ports come from the environment:
#   LB_PORT        nginx, where clients connect            (default 8080)
#   REPLICA_PORTS  the three replicas, space-separated      (default "8081 8082 8083")
#   REDIS_PORT     the Redis of the demonstration           (default 6390)
#   PER_MINUTE     limited_echo calls a minute, all callers together (default 5)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lb_port=${LB_PORT:-8080}
read -r -a replica_ports <<<"${REPLICA_PORTS:-8081 8082 8083}"
redis_port=${REDIS_PORT:-6390}
per_minute=${PER_MINUTE:-5}

for cmd in go redis-server nginx; do
	command -v "$cmd" >/dev/null || { echo "run.sh: $cmd is not installed" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
cleanup() {
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$work"
	echo "scaleout: stopped" >&2
}
trap cleanup EXIT
trap 'exit 0' INT TERM

# wait_port PORT NAME: until something accepts connections on PORT (10 s at most).
wait_port() {
	for _ in $(seq 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "run.sh: $2 did not start on port $1; its log:" >&2
	cat "$work/$2.log" >&2 || true
	exit 1
}

echo "scaleout: building" >&2
(cd "$here" && go build -o "$work/scaleout" .)

redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
pids+=($!)
wait_port "$redis_port" redis

upstreams=""
for i in "${!replica_ports[@]}"; do
	port=${replica_ports[$i]}
	name="r$((i + 1))"
	"$work/scaleout" -addr "127.0.0.1:$port" -redis "127.0.0.1:$redis_port" -name "$name" \
		-per-minute "$per_minute" >"$work/$name.log" 2>&1 &
	pids+=($!)
	upstreams+="        server 127.0.0.1:$port;"$'\n'
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
            add_header X-Upstream \$upstream_addr always;
        }
    }
}
EOF
nginx -c "$work/nginx.conf" -p "$work" >"$work/nginx-out.log" 2>&1 &
pids+=($!)
wait_port "$lb_port" nginx

echo "scaleout: pids ${pids[*]}"
echo "scaleout: serving MCP on http://127.0.0.1:$lb_port/mcp (replicas on ports ${replica_ports[*]}, Redis on $redis_port)"
# Wait until asked to stop; a process that dies stops the rest.
wait -n "${pids[@]}" || true
echo "scaleout: a process exited; stopping" >&2
