#!/usr/bin/env bash
# fdw_bench.sh: the benchmark of the foreign-table scan engine, in one
# command, as root on the machine that runs the tests:
#
#   bash test/bench/fdw_bench.sh [--reps N]
#
#   1. installs missing packages and builds and installs the extension and
#      the sandbox, as test/run_tests.sh does; builds test/bench/fetch_floor,
#   2. starts a sandbox and a throw-away cluster preloading partner_svc, both
#      on loopback; saves the sandbox's 1,000 pages of bench-100k themes as
#      static files and starts nginx (Debian's nginx-light, as the postgres
#      user, its own configuration in the work directory, not as a daemon)
#      serving them on loopback, the cursor of the query string naming the
#      file, for the measure of part (n),
#   3. runs the measurements (test/bench/fdw_bench.pl) and prints their
#      figures, ratios and PASS/MISS against each target,
#   4. stops everything it started and removes its files.
#
# --reps N: repetitions per figure (default 7); the figures are medians.
# --parts nabcd: only the parts named; --verbose: every run's time too.
# A missed target does not change the exit status, which is non-zero only
# when the benchmark could not run.  Not part of run_tests.sh: it takes a
# minute or two and its figures depend on the machine.  What it measures,
# and the figures of a run: docs/performance.md.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source test/lib.sh

if [ "$(id -u)" -ne 0 ]; then
	echo "fdw_bench.sh: run as root (the cluster and the sandbox run as postgres)" >&2
	exit 2
fi

bash test/setup.sh || exit 1
echo "== build and install"
build_install "$root" || { echo "build failed"; exit 1; }
make -C test/bench -s >/dev/null || { echo "build of test/bench failed"; exit 1; }

start_stack --key sandbox-key=standard --seed 1 || exit 1
# the request path is what is measured: the response cache (on by default
# for movie content) would answer every repeated read from shared memory
export PGOPTIONS='-c partner_svc.cache=off'

# start_nginx: the 1,000 pages of bench-100k themes, as the sandbox serves
# them, written to files and served by nginx on a free loopback port, the
# path of the list and the cursor of the query string naming the file
# (no cursor: first.json).  Sets NGINX_PID and NGINX_URL.
start_nginx()
{
	local dir=$work/nginx port
	mkdir -p "$dir/themes"
	"$root/test/bench/fetch_floor" --url "$SANDBOX_URL" --path /v1/movies/bench-100k/content/themes \
		--limit 100 --save "$dir/themes" >/dev/null || return 1
	port=$(free_port)
	cat >"$dir/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $dir/tmp_body;
	proxy_temp_path $dir/tmp_proxy;
	fastcgi_temp_path $dir/tmp_fastcgi;
	uwsgi_temp_path $dir/tmp_uwsgi;
	scgi_temp_path $dir/tmp_scgi;
	keepalive_requests 1000000;
	keepalive_timeout 600s;
	types { }
	default_type application/json;
	map \$arg_cursor \$page { "" first; default \$arg_cursor; }
	server {
		listen 127.0.0.1:$port;
		root $dir;
		location = /v1/movies/bench-100k/content/themes {
			try_files /themes/\$page.json =404;
		}
		location / { return 404; }
	}
}
CONF
	chown -R postgres: "$dir"
	setpriv --reuid=postgres --regid=postgres --init-groups nginx -p "$dir" -e "$dir/error.log" \
		-c "$dir/nginx.conf" >"$dir/nginx.out" 2>&1 &
	NGINX_PID=$!
	NGINX_URL="http://127.0.0.1:$port"
	for _ in $(seq 1 100); do
		curl -s -f -o /dev/null "$NGINX_URL/v1/movies/bench-100k/content/themes?limit=100" && return 0
		kill -0 "$NGINX_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$dir/nginx.out" "$dir/error.log" >&2 2>/dev/null
	return 1
}

stop_nginx()
{
	if [ -n "${NGINX_PID:-}" ]; then
		kill "$NGINX_PID" 2>/dev/null || true
		wait "$NGINX_PID" 2>/dev/null || true
		NGINX_PID=
	fi
}

trap 'stop_nginx; stop_cluster; stop_sandbox; rm -rf "$work"' EXIT
command -v nginx >/dev/null || { echo "fdw_bench.sh: nginx is missing (test/setup.sh installs it)" >&2; exit 1; }
start_nginx || { echo "fdw_bench.sh: nginx did not start" >&2; exit 1; }

echo "== measure"
perl test/bench/fdw_bench.pl --sandbox "$SANDBOX_URL" --sandbox-pid "$SANDBOX_PID" \
	--nginx "$NGINX_URL" --floor "$root/test/bench/fetch_floor" --pglog "$work/postgres.log" "$@"
