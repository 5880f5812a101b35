#!/usr/bin/env bash
# cache_bench.sh: the benchmark of the response cache (issue 12).  One
# command, as root, that
#   1. builds and installs the extension and the sandbox as
#      test/run_tests.sh does (unless --no-build),
#   2. starts a sandbox and a throw-away cluster preloading partner_svc with
#      partner_svc.cache_size = CACHE_SIZE (default 2MB), both on loopback;
#      the rate limits are off on both sides (the sandbox's table allows 50
#      GET /products per minute: the benchmark measures the request path,
#      not the partner's quota),
#   3. runs, interleaved, REPS times, each in a session of its own whose
#      first WARMUP (20) scans are not timed (plpgsql compiles the loop,
#      the query is planned, and the backend loads the catalogue entries
#      and the library's own state once: over 200 timed scans that one-time
#      cost was up to a third of a cached scan's figure), then SCANS (1000)
#      scans timed with clock_timestamp() around the loop:
#        uncached  scans of products (every column) with
#                  partner_svc.cache = off: each sends GET /public/products;
#        cached    scans of the same with the cache on; the first warm-up
#                  scan fills the entry, and no timed scan sends anything,
#      each checked against the sandbox's own count of the route (every
#      scan's request, then only the fill), so a cached figure that still
#      went to the service, or an uncached one that did not, cannot pass;
#   4. prints every run, the medians in microseconds per scan, the ratio
#      uncached / cached, and PASS when it is at least TARGET (20), MISS
#      otherwise; the same for count(*) scans (no column decoded), shown
#      for reference, not judged;
#   5. for reference, not judged: the same every-column comparison (fewer
#      scans) against a partner LATENCY ms away (default 20; the sandbox's
#      latency fault on GET /public/products; 0 skips it), which is what the
#      cache saves against a real service rather than a loopback one;
#   6. fills the cache past its size (FILL distinct pages of movies, 0.3 to
#      33 kB each) and prints partner_svc.cache_usage: what the cache took
#      of shared memory against partner_svc.cache_size, and the blocks its
#      entries hold; FAIL if either is over the setting,
# and stops everything it started.  A MISS does not make the exit status
# non-zero (timing on a shared machine is no test); a failed check does.
#
# Usage: [PG_BIN=...] bash test/bench/cache_bench.sh [--reps N] [--scans N]
#        [--cache-size SIZE] [--fill N] [--latency MS] [--no-build]
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source test/lib.sh

reps=5
scans=1000
warmup=20
cache_size=2MB
fill=600
latency=20
build=1
target=20

while [ $# -gt 0 ]; do
	case $1 in
		--reps) reps=$2; shift 2 ;;
		--scans) scans=$2; shift 2 ;;
		--cache-size) cache_size=$2; shift 2 ;;
		--fill) fill=$2; shift 2 ;;
		--latency) latency=$2; shift 2 ;;
		--no-build) build=0; shift ;;
		-h|--help) sed -n '2,39p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "cache_bench.sh: unknown argument \"$1\"" >&2; exit 2 ;;
	esac
done
case "$reps$scans$fill$latency" in
	*[!0-9]*) echo "cache_bench.sh: --reps, --scans and --fill take positive integers" >&2; exit 2 ;;
esac
[ "$reps" -ge 1 ] && [ "$scans" -ge 1 ] ||
	{ echo "cache_bench.sh: --reps and --scans must be positive" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
	echo "cache_bench.sh: run as root (the cluster and the sandbox run as postgres)" >&2
	exit 2
fi

if [ "$build" -eq 1 ]; then
	bash test/setup.sh || exit 1
	echo "== build and install"
	build_install "$root" || { echo "build failed" >&2; exit 1; }
fi

start_stack --key sandbox-key=standard --seed 1 || exit 1
cat >>"$work/data/postgresql.conf" <<CONF
partner_svc.cache_size = '$cache_size'
partner_svc.rate_limit = off
CONF
runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$work/data" -l "$work/postgres.log" -w restart >/dev/null ||
	{ cat "$work/postgres.log" >&2; exit 1; }
curl -s -f -X POST -H 'Content-Type: application/json' --data-binary '{"rate_limits": false}' \
	"$SANDBOX_URL/_sandbox/config" >/dev/null || { echo "sandbox config failed" >&2; exit 1; }

psql_q()
{
	psql -X -q -A -t -v ON_ERROR_STOP=1 -d postgres "$@"
}

# requests the sandbox counted for one route since the last reset
route_count()
{
	curl -s -f "$SANDBOX_URL/_sandbox/stats" | perl -MJSON::PP -e '
		my $s = decode_json(join "", <STDIN>);
		my $n = 0;
		for my $r (@{ $s->{routes} }) { $n = $r->{count} if $r->{method} eq "GET" && $r->{route} eq $ARGV[0] }
		print $n' "$1"
}
reset_stats()
{
	curl -s -f -X POST "$SANDBOX_URL/_sandbox/stats/reset" >/dev/null
}

psql_q <<SQL || exit 1
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$SANDBOX_URL');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$SANDBOX_URL');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key');
IMPORT FOREIGN SCHEMA orders LIMIT TO (products) FROM SERVER orders INTO public;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movies) FROM SERVER movies INTO public;
-- n scans of products, every column; microseconds per scan
CREATE FUNCTION bench_scans(n int) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; rows int;
BEGIN
  t0 := clock_timestamp();
  FOR i IN 1..n LOOP
    SELECT count(*) INTO rows FROM (SELECT * FROM products) p;
  END LOOP;
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / n;
END \$\$;
-- the same with count(*): no column is decoded
CREATE FUNCTION bench_counts(n int) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; rows int;
BEGIN
  t0 := clock_timestamp();
  FOR i IN 1..n LOOP
    SELECT count(*) INTO rows FROM products;
  END LOOP;
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / n;
END \$\$;
SQL

route=/public/products
products=$(psql_q -c "SELECT count(*) FROM products") || exit 1
echo "== products: $products rows per scan, $scans scans per run, $reps runs each, cache_size $cache_size"

unc=()
cac=()
uncc=()
cacc=()
for r in $(seq 1 "$reps"); do
	for fn in bench_scans bench_counts; do
		reset_stats
		u=$(psql_q -c "SET partner_svc.cache = off" -c "SELECT $fn($warmup)" \
			-c "SELECT round($fn($scans)::numeric, 1)" | tail -1) || exit 1
		sent=$(route_count "$route")
		[ "$sent" -eq $((scans + warmup)) ] ||
			{ echo "FAIL: uncached run sent $sent requests for $((scans + warmup)) scans" >&2; exit 1; }
		psql_q -c "SELECT partner_svc.cache_reset()" >/dev/null || exit 1
		reset_stats
		c=$(psql_q -c "SET partner_svc.cache = on" -c "SELECT $fn($warmup)" \
			-c "SELECT round($fn($scans)::numeric, 1)" | tail -1) || exit 1
		sent=$(route_count "$route")
		[ "$sent" -eq 1 ] ||
			{ echo "FAIL: cached run sent $sent requests (1 expected: the fill)" >&2; exit 1; }
		if [ "$fn" = bench_scans ]; then
			echo "run $r, every column: uncached $u us/scan, cached $c us/scan"
			unc+=("$u")
			cac+=("$c")
		else
			echo "run $r, count(*):     uncached $u us/scan, cached $c us/scan"
			uncc+=("$u")
			cacc+=("$c")
		fi
	done
done

median()
{
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
mu=$(median "${unc[@]}")
mc=$(median "${cac[@]}")
ratio=$(awk -v u="$mu" -v c="$mc" 'BEGIN { printf "%.1f", u / c }')
verdict=$(awk -v r="$ratio" -v t="$target" 'BEGIN { print (r >= t) ? "PASS" : "MISS" }')
echo "== medians, every column: uncached $mu us/scan, cached $mc us/scan"
echo "== ratio uncached / cached, every column: ${ratio}x (target >= ${target}x): $verdict"
muc=$(median "${uncc[@]}")
mcc=$(median "${cacc[@]}")
ratioc=$(awk -v u="$muc" -v c="$mcc" 'BEGIN { printf "%.1f", u / c }')
echo "== medians, count(*): uncached $muc us/scan, cached $mcc us/scan, ratio ${ratioc}x (reference)"

if [ "$latency" -gt 0 ]; then
	curl -s -f -X POST -H 'Content-Type: application/json' \
		--data-binary "{\"route\": \"GET $route\", \"kind\": \"latency\", \"value\": $latency}" \
		"$SANDBOX_URL/_sandbox/faults" >/dev/null || { echo "sandbox fault failed" >&2; exit 1; }
	n=$(( scans / 10 > 0 ? scans / 10 : 1 ))
	reset_stats
	u=$(psql_q -c "SET partner_svc.cache = off" -c "SELECT round(bench_scans($n)::numeric, 1)") || exit 1
	sent=$(route_count "$route")
	[ "$sent" -eq "$n" ] || { echo "FAIL: uncached run sent $sent requests for $n scans" >&2; exit 1; }
	psql_q -c "SELECT partner_svc.cache_reset()" >/dev/null || exit 1
	c=$(psql_q -c "SET partner_svc.cache = on" -c "SELECT count(*) FROM products" \
		-c "SELECT round(bench_scans($scans)::numeric, 1)" | tail -1) || exit 1
	curl -s -f -X DELETE "$SANDBOX_URL/_sandbox/faults" >/dev/null
	echo "== reference, a partner $latency ms away: uncached $u us/scan ($n scans), cached $c us/scan, ratio $(awk -v u="$u" -v c="$c" 'BEGIN { printf "%.0f", u / c }')x"
fi

echo "== memory: $fill distinct pages of movies (LIMIT 1..100, each genre) through the cache"
psql_q <<SQL || exit 1
SET partner_svc.cache = on;
DO \$\$
DECLARE genres text[] := ARRAY[NULL, 'drama', 'comedy', 'documentary', 'war',
                               'science-fiction', 'horror', 'romance'];
  g text; d int;
BEGIN
  FOR k IN 0..$fill - 1 LOOP
    g := genres[(k / 100) % array_length(genres, 1) + 1];
    IF g IS NULL THEN
      EXECUTE format('SELECT count(*) FROM (SELECT * FROM movies LIMIT %s) m', k % 100 + 1) INTO d;
    ELSE
      EXECUTE format('SELECT count(*) FROM (SELECT * FROM movies WHERE genre = %L LIMIT %s) m',
                     g, k % 100 + 1) INTO d;
    END IF;
  END LOOP;
END \$\$;
SQL
psql -X -d postgres -c "SELECT pg_size_pretty(size_limit) AS cache_size, pg_size_pretty(shared_bytes) AS shared,
  pg_size_pretty(bytes_used) AS held_by_entries, pg_size_pretty(bytes_cached) AS answers,
  entries, max_entries, pg_size_pretty(max_entry_bytes) AS max_entry, stores, evictions, not_stored
  FROM partner_svc.cache_usage" || exit 1
within=$(psql_q -c "SELECT shared_bytes <= size_limit AND bytes_used <= shared_bytes FROM partner_svc.cache_usage") || exit 1
if [ "$within" != t ]; then
	echo "FAIL: the cache holds more than partner_svc.cache_size" >&2
	exit 1
fi
echo "== memory within partner_svc.cache_size: yes"
