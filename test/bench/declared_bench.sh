#!/usr/bin/env bash
# declared_bench.sh: a declared table against the built-in one over the same
# pages (issue 28): what the one engine costs when the endpoint is built
# from a table's options (docs/declared-endpoints.md) instead of read from
# the catalogue.  One command, as root, that
#   1. builds and installs the extension and the sandbox as
#      test/run_tests.sh does (unless --no-build),
#   2. starts a sandbox and a throw-away cluster preloading partner_svc, both
#      on loopback, the rate limits off on both sides and the response cache
#      off (every scan walks the service),
#   3. makes movie_themes (IMPORT FOREIGN SCHEMA movies) and themes_declared,
#      the same route declared in SQL with the same columns (endpoint
#      'GET /v1/movies/{movie}/content/themes', items 'data', paging
#      'cursor'), and checks that both give the same rows,
#   4. runs, interleaved in one run, REPS times, each in a session of its own
#      whose first WARMUP (5) scans are not timed, SCANS (20) scans of each
#      table for MOVIE (epic-saga: 10,000 themes, 100 cursor pages of 100),
#      timed with clock_timestamp() around the loop, the table that goes
#      first alternating from run to run, each checked against
#      the sandbox's own count of the route (both send the same requests),
#   5. prints every run, the medians in milliseconds per scan, the ratio
#      declared / built-in, and PASS when it is at most TARGET (1.1), MISS
#      otherwise; the same for a one-page movie (crimson-garden, 41 themes),
#      where the fixed cost of a scan (planning, the endpoint) weighs most,
# and stops everything it started.  A MISS does not make the exit status
# non-zero (timing on a shared machine is no test); a failed check does.
#
# Usage: [PG_BIN=...] bash test/bench/declared_bench.sh [--reps N] [--scans N]
#        [--no-build]
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source test/lib.sh

reps=5
scans=20
warmup=5
build=1
target=1.1

while [ $# -gt 0 ]; do
	case $1 in
		--reps) reps=$2; shift 2 ;;
		--scans) scans=$2; shift 2 ;;
		--no-build) build=0; shift ;;
		-h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "declared_bench.sh: unknown argument \"$1\"" >&2; exit 2 ;;
	esac
done
case "$reps$scans" in
	*[!0-9]*) echo "declared_bench.sh: --reps and --scans take positive integers" >&2; exit 2 ;;
esac
[ "$reps" -ge 1 ] && [ "$scans" -ge 1 ] ||
	{ echo "declared_bench.sh: --reps and --scans must be positive" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
	echo "declared_bench.sh: run as root (the cluster and the sandbox run as postgres)" >&2
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

# requests the sandbox counted for the themes route since the last reset
route_count()
{
	curl -s -f "$SANDBOX_URL/_sandbox/stats" | perl -MJSON::PP -e '
		my $s = decode_json(join "", <STDIN>);
		my $n = 0;
		for my $r (@{ $s->{routes} }) { $n += $r->{count} if $r->{method} eq "GET" && $r->{route} eq $ARGV[0] }
		print $n' "/v1/movies/{movie}/content/themes"
}
reset_stats()
{
	curl -s -f -X POST "$SANDBOX_URL/_sandbox/stats/reset" >/dev/null
}

psql_q <<SQL || exit 1
CREATE EXTENSION partner_svc;
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$SANDBOX_URL');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key');
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER movies INTO public;
CREATE FOREIGN TABLE themes_declared (
  movie text OPTIONS (param 'path'),
  position integer, title text, emoji text, explanation text
) SERVER movies OPTIONS (endpoint 'GET /v1/movies/{movie}/content/themes',
                         items 'data', paging 'cursor');
-- n scans of a table's every column for one movie; milliseconds per scan
CREATE FUNCTION bench_scans(tbl text, movie text, n int) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; rows int;
BEGIN
  t0 := clock_timestamp();
  FOR i IN 1..n LOOP
    EXECUTE format('SELECT count(*) FROM (SELECT movie, position, title, emoji, explanation
                    FROM %I WHERE movie = \$1) t', tbl) INTO rows USING movie;
  END LOOP;
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1e3 / n;
END \$\$;
SQL

median()
{
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench MOVIE SCANS: interleaved runs of both tables, the verdict
bench()
{
	local movie=$1 n=$2 r tbl t sent pages judged=$3
	local -a builtin=() declared=()

	diff=$(psql_q -c "SELECT count(*) FROM (
	  (SELECT movie, position, title, emoji, explanation FROM movie_themes WHERE movie = '$movie'
	   EXCEPT ALL SELECT * FROM themes_declared WHERE movie = '$movie')
	  UNION ALL
	  (SELECT * FROM themes_declared WHERE movie = '$movie'
	   EXCEPT ALL SELECT movie, position, title, emoji, explanation FROM movie_themes WHERE movie = '$movie')) d") || exit 1
	[ "$diff" -eq 0 ] || { echo "FAIL: the tables differ by $diff rows for $movie" >&2; exit 1; }
	reset_stats
	psql_q -c "SELECT count(*) FROM movie_themes WHERE movie = '$movie'" >/dev/null || exit 1
	pages=$(route_count)
	echo "== $movie: $pages requests a scan, $n scans a run, $reps runs of each table"
	for r in $(seq 1 "$reps"); do
		# each table first in every other run: neither gains from going second
		order="movie_themes themes_declared"
		[ $((r % 2)) -eq 0 ] && order="themes_declared movie_themes"
		for tbl in $order; do
			reset_stats
			t=$(psql_q -c "SELECT bench_scans('$tbl', '$movie', $warmup)" \
				-c "SELECT round(bench_scans('$tbl', '$movie', $n)::numeric, 3)" | tail -1) || exit 1
			sent=$(route_count)
			[ "$sent" -eq $(( (n + warmup) * pages )) ] ||
				{ echo "FAIL: $tbl sent $sent requests for $((n + warmup)) scans of $pages pages" >&2; exit 1; }
			if [ "$tbl" = movie_themes ]; then builtin+=("$t"); else declared+=("$t"); fi
		done
		echo "run $r: built-in ${builtin[-1]} ms/scan, declared ${declared[-1]} ms/scan"
	done
	mb=$(median "${builtin[@]}")
	md=$(median "${declared[@]}")
	ratio=$(awk -v b="$mb" -v d="$md" 'BEGIN { printf "%.3f", d / b }')
	if [ "$judged" = judged ]; then
		verdict=$(awk -v r="$ratio" -v t="$target" 'BEGIN { print (r <= t) ? "PASS" : "MISS" }')
		echo "== medians, $movie: built-in $mb ms/scan, declared $md ms/scan, ratio ${ratio} (target <= ${target}): $verdict"
	else
		echo "== medians, $movie: built-in $mb ms/scan, declared $md ms/scan, ratio ${ratio} (reference)"
	fi
}

bench epic-saga "$scans" judged
bench crimson-garden $((scans * 10)) reference
