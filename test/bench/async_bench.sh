#!/usr/bin/env bash
# async_bench.sh: the benchmark of asynchronous foreign scans (issue 21,
# option async_capable, src/fdw/fdw_scan.c).  One command, as root,
# that
#   1. builds and installs the extension and the sandbox as
#      test/run_tests.sh does (unless --no-build),
#   2. starts a sandbox and a throw-away cluster preloading partner_svc, both
#      on loopback; the rate limits are off on both sides and so is the
#      response cache (the request path is what is measured),
#   3. makes two servers of the sandbox's movie service, one without the
#      option and one with async_capable 'true', and on each a view that is
#      the UNION ALL of the four content lists of one movie (themes,
#      characters, faqs and timeline of inception: one page each),
#   4. puts the sandbox's latency fault on every route: each request is
#      answered LATENCY ms (default 20) after it arrives,
#   5. runs, interleaved, REPS times (default 5), each in a session of its
#      own whose first 3 queries are not timed, QUERIES (default 50) reads of
#      the whole view, timed with clock_timestamp() around the loop, on the
#      synchronous server, then the same on the asynchronous one; each run
#      is checked against the sandbox's count of requests (4 per read) and
#      the rows against each other, and the plans must show the four scans
#      "Async Foreign Scan" on the one server and on the other not,
#   6. prints every run, the medians in ms per query, the ratio
#      synchronous / asynchronous of the same run, and PASS when it is at
#      least TARGET (3.5), MISS otherwise,
# and stops everything it started.  A MISS does not make the exit status
# non-zero (timing on a shared machine is no test); a failed check does.
#
# The reads are "WITH c AS MATERIALIZED (SELECT * FROM content) SELECT
# count(*) FROM c": a plain count(*) over the view would use none of its
# columns, and PostgreSQL would put a Subquery Scan over each branch, which
# it never runs asynchronously (docs/foreign-tables.md).
#
# Usage: [PG_BIN=...] bash test/bench/async_bench.sh [--reps N] [--queries N]
#        [--latency MS] [--no-build]
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source test/lib.sh

reps=5
queries=50
warmup=3
latency=20
build=1
target=3.5

while [ $# -gt 0 ]; do
	case $1 in
		--reps) reps=$2; shift 2 ;;
		--queries) queries=$2; shift 2 ;;
		--latency) latency=$2; shift 2 ;;
		--no-build) build=0; shift ;;
		-h|--help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "async_bench.sh: unknown argument \"$1\"" >&2; exit 2 ;;
	esac
done
case "$reps$queries$latency" in
	*[!0-9]*) echo "async_bench.sh: --reps, --queries and --latency take positive integers" >&2; exit 2 ;;
esac
[ "$reps" -ge 1 ] && [ "$queries" -ge 1 ] ||
	{ echo "async_bench.sh: --reps and --queries must be positive" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
	echo "async_bench.sh: run as root (the cluster and the sandbox run as postgres)" >&2
	exit 2
fi

if [ "$build" -eq 1 ]; then
	bash test/setup.sh || exit 1
	echo "== build and install"
	build_install "$root" || { echo "build failed" >&2; exit 1; }
fi

start_stack --key sandbox-key=standard --seed 1 || exit 1
cat >>"$work/data/postgresql.conf" <<CONF
partner_svc.rate_limit = off
partner_svc.cache = off
CONF
runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$work/data" -l "$work/postgres.log" -w restart >/dev/null ||
	{ cat "$work/postgres.log" >&2; exit 1; }
curl -s -f -X POST -H 'Content-Type: application/json' --data-binary '{"rate_limits": false}' \
	"$SANDBOX_URL/_sandbox/config" >/dev/null || { echo "sandbox config failed" >&2; exit 1; }

psql_q()
{
	psql -X -q -A -t -v ON_ERROR_STOP=1 -d postgres "$@"
}

# requests the sandbox answered since the last reset, every route
sandbox_count()
{
	curl -s -f "$SANDBOX_URL/_sandbox/stats" | perl -MJSON::PP -e '
		my $s = decode_json(join "", <STDIN>);
		my $n = 0;
		$n += $_->{count} for @{ $s->{routes} };
		print $n'
}
reset_stats()
{
	curl -s -f -X POST "$SANDBOX_URL/_sandbox/stats/reset" >/dev/null
}

psql_q <<SQL || exit 1
CREATE EXTENSION partner_svc;
CREATE SERVER movies_sync FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$SANDBOX_URL');
CREATE SERVER movies_async FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$SANDBOX_URL', async_capable 'true');
CREATE USER MAPPING FOR PUBLIC SERVER movies_sync OPTIONS (api_key 'sandbox-key');
CREATE USER MAPPING FOR PUBLIC SERVER movies_async OPTIONS (api_key 'sandbox-key');
CREATE SCHEMA s;
CREATE SCHEMA a;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes, movie_characters, movie_faqs, movie_timeline)
  FROM SERVER movies_sync INTO s;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes, movie_characters, movie_faqs, movie_timeline)
  FROM SERVER movies_async INTO a;
SQL
for sch in s a; do
	psql_q <<SQL || exit 1
CREATE VIEW $sch.content AS
  SELECT 'theme' AS kind, "position", title FROM $sch.movie_themes WHERE movie = 'inception'
  UNION ALL SELECT 'character', "position", name FROM $sch.movie_characters WHERE movie = 'inception'
  UNION ALL SELECT 'faq', "position", question FROM $sch.movie_faqs WHERE movie = 'inception'
  UNION ALL SELECT 'event', "position", title FROM $sch.movie_timeline WHERE movie = 'inception';
SQL
done
psql_q <<'SQL' || exit 1
-- n reads of the view of schema sch; ms per read, and the rows of the last
CREATE FUNCTION bench_reads(sch text, n int, OUT ms float8, OUT rows bigint)
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz;
BEGIN
  t0 := clock_timestamp();
  FOR i IN 1..n LOOP
    EXECUTE format('WITH c AS MATERIALIZED (SELECT * FROM %I.content) SELECT count(*) FROM c', sch)
      INTO rows;
  END LOOP;
  ms := extract(epoch FROM clock_timestamp() - t0) * 1e3 / n;
END $$;
SQL

plan_async=$(psql_q -c "EXPLAIN (COSTS OFF) WITH c AS MATERIALIZED (SELECT * FROM a.content) SELECT count(*) FROM c" |
	grep -c 'Async Foreign Scan')
plan_sync=$(psql_q -c "EXPLAIN (COSTS OFF) WITH c AS MATERIALIZED (SELECT * FROM s.content) SELECT count(*) FROM c" |
	grep -c 'Async Foreign Scan')
if [ "$plan_async" -ne 4 ] || [ "$plan_sync" -ne 0 ]; then
	echo "FAIL: $plan_async asynchronous scans with async_capable (4 expected), $plan_sync without (0 expected)" >&2
	exit 1
fi

curl -s -f -X POST -H 'Content-Type: application/json' \
	--data-binary "{\"route\": \"*\", \"kind\": \"latency\", \"value\": $latency}" \
	"$SANDBOX_URL/_sandbox/faults" >/dev/null || { echo "sandbox fault failed" >&2; exit 1; }
echo "== four content lists of one movie, UNION ALL; every request answered $latency ms after it arrives"
echo "== $queries reads per run, $reps runs each, interleaved"

# one timed run: prints "ms rows", after checking the sandbox's count
run()
{
	local sch=$1 out ms rows sent
	reset_stats
	out=$(psql_q -c "SELECT bench_reads('$sch', $warmup)" \
		-c "SELECT round(ms::numeric, 2) || ' ' || rows FROM bench_reads('$sch', $queries)" | tail -1) || return 1
	sent=$(sandbox_count)
	[ "$sent" -eq $((4 * (queries + warmup))) ] ||
		{ echo "FAIL: schema $sch sent $sent requests for $((queries + warmup)) reads" >&2; return 1; }
	echo "$out"
}

syn=()
asy=()
ratios=()
for r in $(seq 1 "$reps"); do
	read -r s srows < <(run s) || exit 1
	read -r a arows < <(run a) || exit 1
	[ -n "$s" ] && [ -n "$a" ] || { echo "FAIL: a run did not complete" >&2; exit 1; }
	[ "$srows" = "$arows" ] || { echo "FAIL: $srows rows without async_capable, $arows with" >&2; exit 1; }
	ratio=$(awk -v s="$s" -v a="$a" 'BEGIN { printf "%.2f", s / a }')
	echo "run $r: synchronous $s ms/read, asynchronous $a ms/read ($arows rows each): ${ratio}x"
	syn+=("$s")
	asy+=("$a")
	ratios+=("$ratio")
done

median()
{
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ms=$(median "${syn[@]}")
ma=$(median "${asy[@]}")
ratio=$(awk -v s="$ms" -v a="$ma" 'BEGIN { printf "%.2f", s / a }')
verdict=$(awk -v r="$ratio" -v t="$target" 'BEGIN { print (r >= t) ? "PASS" : "MISS" }')
echo "== medians: synchronous $ms ms/read, asynchronous $ma ms/read"
echo "== ratio synchronous / asynchronous: ${ratio}x (target >= ${target}x): $verdict"
