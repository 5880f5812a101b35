#!/usr/bin/env bash
# func_bench.sh: the benchmark of the SQL functions (issue 4).  One command,
# as root, that
#   1. builds and installs the extension and the sandbox as
#      test/run_tests.sh does, and builds test/bench/call_floor,
#   2. starts a sandbox and a throw-away cluster preloading partner_svc,
#      both on loopback,
#   3. runs, side by side and interleaved, REPS times:
#        raw       call_floor: CALLS GETs of the route over one reused
#                  libcurl easy handle (the floor);
#        plpgsql   CALLS calls of partner_svc.movie_summary('inception') in
#                  ONE session, a PL/pgSQL loop timed with clock_timestamp();
#        pgbench   the same call as CALLS statements of pgbench -n -c 1
#                  (adds the client round trip and the statement's parse and
#                  plan; shown for reference, not judged), and
#        select1   pgbench running SELECT 1, that round trip alone,
#   4. prints every run, the medians in microseconds per call, the ratio
#      of the medians plpgsql / raw and PASS when it is within TARGET
#      (2.0), MISS otherwise; also the median of each repetition's own
#      ratio, less sensitive to a load that comes and goes between
#      repetitions,
# and stops everything it started.  Each timed run is checked against the
# sandbox's own count of the route, so a call that sent nothing cannot
# pass.  A MISS is reported, not hidden, and does not make the exit status
# non-zero: the benchmark is not part of test/run_tests.sh, and timing on
# a shared machine is no test.  A failure to build, start or call is.
#
# Usage: [PG_BIN=...] bash test/bench/func_bench.sh [--reps N] [--calls N]
#        [--no-build] [--no-pgbench]
# The route, GET /v1/movies/{movie}/content/summary, has no rate limit.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source test/lib.sh

reps=5
calls=5000
build=1
use_pgbench=1
target=2.0
route_path=/v1/movies/inception/content/summary
route_template=/v1/movies/{movie}/content/summary

while [ $# -gt 0 ]; do
	case $1 in
		--reps) reps=$2; shift 2 ;;
		--calls) calls=$2; shift 2 ;;
		--no-build) build=0; shift ;;
		--no-pgbench) use_pgbench=0; shift ;;
		-h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "func_bench.sh: unknown argument \"$1\"" >&2; exit 2 ;;
	esac
done
case "$reps$calls" in
	*[!0-9]*) echo "func_bench.sh: --reps and --calls take positive integers" >&2; exit 2 ;;
esac
[ "$reps" -ge 1 ] && [ "$calls" -ge 1 ] ||
	{ echo "func_bench.sh: --reps and --calls must be positive" >&2; exit 2; }

if [ "$build" -eq 1 ]; then
	bash test/setup.sh || exit 1
	echo "== build and install"
	build_install "$root" || { echo "build failed" >&2; exit 1; }
fi
make -s -C test/bench call_floor >/dev/null || { echo "call_floor: build failed" >&2; exit 1; }

start_stack --key sandbox-key=standard --seed 1 || exit 1
# the request path is what is measured: the response cache (on by default
# for movie content) would answer every repeated read from shared memory
export PGOPTIONS='-c partner_svc.cache=off'

psql_q()
{
	psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"
}

psql_q <<SQL || exit 1
CREATE EXTENSION partner_svc;
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$SANDBOX_URL');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key');
-- n calls in this one session; microseconds per call.  As in call_floor,
-- the first timed call makes the connection (a new backend per run, a new
-- process per run of call_floor).
CREATE FUNCTION bench_loop(n int) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE
  t0 timestamptz;
BEGIN
  t0 := clock_timestamp();
  FOR i IN 1..n LOOP
    PERFORM partner_svc.movie_summary('inception');
  END LOOP;
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / n;
END \$\$;
SQL
echo "SELECT partner_svc.movie_summary('inception');" >"$work/call.sql"
echo "SELECT 1;" >"$work/select1.sql"
chown postgres: "$work/call.sql" "$work/select1.sql"

# the sandbox's count of GET route_template since the last reset
sandbox_count()
{
	curl -s -S -f "$SANDBOX_URL/_sandbox/stats.tsv" |
		awk -F'\t' -v r="$route_template" '$1 == "GET" && $2 == r { n = $3 } END { print n + 0 }'
}

sandbox_reset()
{
	curl -s -S -f -X POST "$SANDBOX_URL/_sandbox/stats/reset" >/dev/null
}

# check_count NAME: the sandbox saw exactly $calls requests since the reset
check_count()
{
	local n
	n=$(sandbox_count)
	if [ "$n" -ne "$calls" ]; then
		echo "$1: the sandbox counted $n requests of GET $route_template, expected $calls" >&2
		exit 1
	fi
}

median()
{
	sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# pgbench_us SCRIPT: average latency of $calls runs of SCRIPT, in µs
pgbench_us()
{
	local out
	out=$(pgbench -n -c 1 -t "$calls" -f "$1" postgres 2>&1) || { echo "$out" >&2; return 1; }
	# "latency average = 0.123 ms"
	echo "$out" | awk '/^latency average/ { printf "%.1f", $4 * 1000; found = 1 }
		END { if (!found) exit 1 }' || { echo "$out" >&2; return 1; }
}

echo "== $reps repetitions of $calls calls of GET $route_path, µs per call"
echo "   load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %9s %9s %9s %9s %7s\n' rep raw plpgsql pgbench select1 ratio
: >"$work/raw" ; : >"$work/plpgsql" ; : >"$work/pgbench" ; : >"$work/select1" ; : >"$work/ratio"
for rep in $(seq 1 "$reps"); do
	sandbox_reset
	raw=$(test/bench/call_floor --url "$SANDBOX_URL" --path "$route_path" \
		--count "$calls" | awk '$1 == "raw" { print $4 }')
	[ -n "$raw" ] || { echo "call_floor failed" >&2; exit 1; }
	check_count raw

	sandbox_reset
	loop=$(psql_q -At -c "SELECT round(bench_loop($calls)::numeric, 1)") ||
		{ echo "the PL/pgSQL loop failed" >&2; exit 1; }
	check_count plpgsql

	bench=-
	select1=-
	if [ "$use_pgbench" -eq 1 ]; then
		sandbox_reset
		bench=$(pgbench_us "$work/call.sql") || exit 1
		check_count pgbench
		select1=$(pgbench_us "$work/select1.sql") || exit 1
		echo "$bench" >>"$work/pgbench"
		echo "$select1" >>"$work/select1"
	fi
	ratio=$(awk -v a="$loop" -v b="$raw" 'BEGIN { printf "%.2f", a / b }')
	echo "$raw" >>"$work/raw"
	echo "$loop" >>"$work/plpgsql"
	echo "$ratio" >>"$work/ratio"
	printf '%-6s %9s %9s %9s %9s %7s\n' "$rep" "$raw" "$loop" "$bench" "$select1" "$ratio"
done

m_raw=$(median <"$work/raw")
m_loop=$(median <"$work/plpgsql")
m_ratio=$(median <"$work/ratio")
m_bench=-
m_select1=-
if [ "$use_pgbench" -eq 1 ]; then
	m_bench=$(median <"$work/pgbench")
	m_select1=$(median <"$work/select1")
fi
printf '%-6s %9s %9s %9s %9s %7s\n' median "$m_raw" "$m_loop" "$m_bench" "$m_select1" "$m_ratio"
echo "   load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

awk -v raw="$m_raw" -v loop="$m_loop" -v pr="$m_ratio" -v bench="$m_bench" \
	-v select1="$m_select1" -v target="$target" 'BEGIN {
	ratio = loop / raw
	printf "function vs raw request: %.2fx (median plpgsql / median raw; target <= %.1fx): %s\n",
		ratio, target, ratio <= target ? "PASS" : "MISS"
	printf "median of the repetitions'"'"' own ratios: %.2fx\n", pr
	if (bench != "-")
		printf "pgbench, one statement a call: %.2fx raw; less its SELECT 1 round trip: %.2fx\n",
			bench / raw, (bench - select1) / raw
}'
exit 0
