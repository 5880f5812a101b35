#!/bin/bash
#
# test/scenario.sh: runs the scenario tests (test/scenario/*.t) with prove.
#
# Usage: test/scenario.sh [REPO_DIR] [TEST...]
#
# The tests use PostgreSQL's TAP framework (PostgreSQL::Test::Cluster from
# the PGXS directory of the PostgreSQL in PATH / PG_CONFIG), which makes
# throw-away clusters and so must run as a user that PostgreSQL accepts.
# As root, the test tree is copied to a fresh temporary directory owned by
# postgres and prove runs there as postgres; otherwise in place.  The
# installed extension and partner_svc_sandbox (make install) are used.
# PSVC_SCENARIO_KEEP=1 keeps the temporary directory (tmp_check/log).
set -euo pipefail

repo=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
repo=$(cd "$repo" && pwd)
shift || true

pg_config=${PG_CONFIG:-pg_config}
bindir=$("$pg_config" --bindir)
pgxs=$(dirname "$("$pg_config" --pgxs)")/..
pgxs=$(cd "$pgxs" && pwd)
perl_lib=$pgxs/test/perl
pg_regress=$pgxs/test/regress/pg_regress
if [ ! -f "$perl_lib/PostgreSQL/Test/Cluster.pm" ]; then
	echo "scenario.sh: PostgreSQL::Test::Cluster not found under $perl_lib" >&2
	exit 2
fi

work=$(mktemp -d /tmp/psvc_scenario.XXXXXX)
cleanup() {
	if [ -n "${PSVC_SCENARIO_KEEP:-}" ]; then
		echo "scenario.sh: kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
mkdir -p "$work/test"
cp -r "$repo/test/scenario" "$repo/test/sandbox" "$repo/test/bench" "$repo/test/hostile" "$work/test/"

as_db_user=()
if [ "$(id -u)" -eq 0 ]; then
	chown -R postgres: "$work"
	as_db_user=(runuser -u postgres --)
fi

tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(test/scenario)
cd "$work"
"${as_db_user[@]}" env PATH="$bindir:$PATH" PG_REGRESS="$pg_regress" \
	PERL5LIB="$perl_lib${PERL5LIB:+:$PERL5LIB}" TESTDIR="$work" \
	SANDBOX_BIN="$bindir/partner_svc_sandbox" \
	prove --timer "${tests[@]}"
