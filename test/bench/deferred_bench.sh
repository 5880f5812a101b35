#!/usr/bin/env bash
# deferred_bench.sh: the benchmark of deferred calls (issue 23): side by
# side in one run, the time from COMMIT to done of a deferred create_order
# against the time of a direct one (target: median overhead at most 5 ms),
# and deferred calls per second from 16 sessions against direct ones
# (target: at least 1,000 per second), with rate limits out of the way, on
# loopback.  See test/bench/deferred_bench.pl for what is measured.
#
# As root: builds and installs (test/setup.sh, make install) unless
# --no-build, then runs the measurement as the postgres user with prove;
# the figures are printed at the end.  As another user: runs it with the
# installed extension.
#
# Usage: [PG_BIN=...] bash test/bench/deferred_bench.sh [--no-build]
#        [--reps N] [--calls N]
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source test/lib.sh

build=1
while [ $# -gt 0 ]; do
	case $1 in
		--no-build) build=0; shift ;;
		--reps) export DEFERRED_BENCH_REPS=$2; shift 2 ;;
		--calls) export DEFERRED_BENCH_CALLS=$2; shift 2 ;;
		-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "deferred_bench.sh: unknown argument \"$1\"" >&2; exit 2 ;;
	esac
done

pgxs=$(dirname "$("$PG_BIN/pg_config" --pgxs)")/..
perl_lib=$(cd "$pgxs" && pwd)/test/perl
# PostgreSQL's TAP framework runs pg_regress (--config-auth) for every
# cluster it makes; make prove_installcheck passes it, prove alone does not
pg_regress=$(cd "$pgxs" && pwd)/test/regress/pg_regress
work=$(mktemp -d /tmp/psvc_deferred_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/test"
cp -r test/bench test/sandbox test/scenario "$work/test/"
as_user=()
if [ "$(id -u)" -eq 0 ]; then
	if [ "$build" -eq 1 ]; then
		bash test/setup.sh || exit 1
		build_install "$root" || { echo "build failed" >&2; exit 1; }
	fi
	chown -R postgres: "$work"
	as_user=(runuser -u postgres --)
fi
cd "$work"
"${as_user[@]}" env PATH="$PG_BIN:$PATH" PERL5LIB="$perl_lib${PERL5LIB:+:$PERL5LIB}" \
	TESTDIR="$work" PG_REGRESS="$pg_regress" SANDBOX_BIN="$PG_BIN/partner_svc_sandbox" \
	DEFERRED_BENCH_REPS="${DEFERRED_BENCH_REPS:-}" DEFERRED_BENCH_CALLS="${DEFERRED_BENCH_CALLS:-}" \
	prove test/bench/deferred_bench.pl
rc=$?
grep -h '^\[.*\] # \|^# ' "$work"/tmp_check/log/regress_log_deferred_bench 2>/dev/null | sed 's/^\[[^]]*\] //'
exit $rc
