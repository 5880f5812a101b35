#!/usr/bin/env bash
# run_major.sh: the whole suite of partner_svc against one PostgreSQL, the
# one of PG_BIN (default Debian's 15).  test/run_tests.sh, README's test
# command, calls it once per major; it may be run alone, as root, after
# test/setup.sh:
#   PG_BIN=/usr/lib/postgresql/15/bin bash test/run_major.sh
# PSVC_OLD_PG_BIN: the bindir of an older major with this tree's
# partner_svc installed, from which test/scenario/77_pg_upgrade.t upgrades
# (it is skipped, saying why, without it).
#   1. builds and installs the extension, the sandbox and the kit into
#      that PostgreSQL,
#   2. make installcheck, the PGXS way, against a throw-away cluster that
#      preloads partner_svc: the pg_regress suite (sandbox started by
#      test/with_sandbox.sh) and the TAP tests (prove_installcheck: the
#      sandbox's own tests and the scenarios, upgrades from 0.1 and 0.2 included);
#      as the postgres user, in a copy of the tree that user owns,
#   3. checks that make installcheck fails when a regression test or a TAP
#      test fails,
#   4. the example downstream suite through the installed kit, exactly as a
#      user runs it (partner_svc_regress test/downstream), that the runner
#      fails on a wrong expected file, and that a new suite without
#      expected/ gets it, fails, and passes after --accept,
#   5. the shell commands shown in README.md, in a throwaway environment,
#      and README's session excerpt against what test/demo.sh prints
#      (test/readme_check.sh),
#   6. every ```sql block of docs/*.md, run against a throw-away cluster
#      and the sandbox, or marked as not run with a reason
#      (test/docs_sql.sh; docs/testing.md),
# stops everything it started, prints "suites: N passed, N failed" and
# exits non-zero on any failure.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source test/lib.sh

echo "== build and install ($("$PG_BIN/pg_config" --version))"
build_install "$root" || { echo "build failed"; exit 1; }

work=$(make_workdir)
cleanup()
{
	stop_cluster
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0
failed=0
suite()
{
	local name=$1
	shift
	echo "== $name"
	if "$@"; then
		passed=$((passed + 1))
		echo "-- $name: ok"
	else
		failed=$((failed + 1))
		echo "-- $name: FAILED"
	fi
}

# A copy of the built tree owned by postgres (PostgreSQL's TAP framework
# and pg_regress's temporary files must not belong to root; the repository
# may live where postgres cannot read).  tar keeps the timestamps, so make
# finds everything built.
tree=$work/tree
mkdir -p "$tree"
tar -C "$root" --exclude=./.git --exclude=./tmp_check --exclude=./results -cf - . | tar -C "$tree" -xf -
chown -R postgres: "$tree"

# make TARGET... in the copy, as postgres, against the throw-away cluster.
make_as_postgres()
{
	runuser -u postgres -- env PATH="$PG_BIN:$PATH" PGHOST="$PGHOST" PGPORT="$PGPORT" \
		PSVC_OLD_PG_BIN="${PSVC_OLD_PG_BIN:-}" \
		PGUSER=postgres make -C "$tree" --no-print-directory PG_CONFIG="$PG_BIN/pg_config" "$@"
}

installcheck()
{
	start_cluster "$work" || return 1
	if ! make_as_postgres installcheck; then
		[ -s "$tree/regression.diffs" ] && { echo "======== regression.diffs ========"; cat "$tree/regression.diffs"; }
		return 1
	fi
}

# The same target must fail when a test fails: a regression test whose
# expected output is wrong, and a TAP test that fails.
installcheck_fails()
{
	local rc
	[ -n "${CLUSTER_DIR:-}" ] || start_cluster "$work" || return 1
	cp "$tree/test/expected/gucs.out" "$work/gucs.out.saved"
	echo "a line the test does not print" >>"$tree/test/expected/gucs.out"
	make_as_postgres installcheck REGRESS=gucs TAP_TESTS= >"$work/fail1.log" 2>&1
	rc=$?
	cp "$work/gucs.out.saved" "$tree/test/expected/gucs.out"
	if [ "$rc" -eq 0 ] || ! grep -q "a line the test does not print" "$tree/regression.diffs"; then
		echo "make installcheck did not fail on a wrong expected file (rc $rc)"
		cat "$work/fail1.log"
		return 1
	fi
	echo "a wrong expected file: make installcheck failed (rc $rc), as it must"
	printf '%s\n' 'use Test::More;' 'ok(0, "a deliberately failing test");' 'done_testing();' \
		>"$tree/test/deliberate_failure.t"
	chown postgres: "$tree/test/deliberate_failure.t"
	make_as_postgres installcheck REGRESS= PROVE_TESTS=test/deliberate_failure.t >"$work/fail2.log" 2>&1
	rc=$?
	rm -f "$tree/test/deliberate_failure.t"
	if [ "$rc" -eq 0 ] || ! grep -q "a deliberately failing test" "$work/fail2.log"; then
		echo "make installcheck did not fail on a failing TAP test (rc $rc)"
		cat "$work/fail2.log"
		return 1
	fi
	echo "a failing TAP test: make installcheck failed (rc $rc), as it must"
}

# The downstream example, run as a user runs it: the installed runner, from
# the repository's root.  Then a copy with one wrong expected line must fail.
downstream()
{
	local rc
	partner_svc_regress test/downstream || return 1
	rm -rf test/downstream/results test/downstream/regression.diffs test/downstream/regression.out
	cp -r test/downstream "$work/downstream_bad"
	sed -i 's/^ PENDING$/ DEFERRED/' "$work/downstream_bad/expected/orders.out"
	grep -q '^ DEFERRED$' "$work/downstream_bad/expected/orders.out" || { echo "could not spoil the copy"; return 1; }
	partner_svc_regress "$work/downstream_bad" >"$work/downstream_bad.log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] || ! grep -q '^- DEFERRED' "$work/downstream_bad.log"; then
		echo "partner_svc_regress did not fail on a wrong expected file (rc $rc)"
		cat "$work/downstream_bad.log"
		return 1
	fi
	echo "a wrong expected file: partner_svc_regress failed (rc $rc), as it must"
	downstream_new_suite || return 1
	downstream_time_scale
}

# A sandbox on a faster clock: the runner sets partner_svc.time_scale to
# its --time-scale, so the limiter's window is a minute of the sandbox,
# and refuses a scale partner_svc cannot follow.
downstream_time_scale()
{
	local rc ts=$work/downstream_scale
	mkdir -p "$ts/sql" "$ts/expected"
	cat >"$ts/sql/time_scale.sql" <<'SQL'
SELECT current_setting('partner_svc.time_scale')::float8 AS partner_svc,
       (sandbox.control('GET', '/_sandbox/config') ->> 'time_scale')::float8 AS sandbox;
SQL
	printf '%s\n' 'CREATE EXTENSION partner_svc_sandbox_helpers;' >"$ts/sql/helpers.sql"
	printf '%s\n' 'CREATE EXTENSION partner_svc_sandbox_helpers;' >"$ts/expected/helpers.out"
	cat >"$ts/expected/time_scale.out" <<'OUT'
SELECT current_setting('partner_svc.time_scale')::float8 AS partner_svc,
       (sandbox.control('GET', '/_sandbox/config') ->> 'time_scale')::float8 AS sandbox;
 partner_svc | sandbox 
-------------+---------
        0.01 |    0.01
(1 row)

OUT
	partner_svc_regress --sandbox-arg --time-scale --sandbox-arg 0.01 "$ts" helpers time_scale \
		>"$work/downstream_scale.log" 2>&1 ||
		{ echo "partner_svc.time_scale did not follow the sandbox's --time-scale"; cat "$work/downstream_scale.log"; return 1; }
	partner_svc_regress --sandbox-arg --time-scale=2 "$ts" helpers >"$work/downstream_scale2.log" 2>&1
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -q 'takes 0.0001 to 1' "$work/downstream_scale2.log"; then
		echo "partner_svc_regress took --time-scale 2 (rc $rc)"
		cat "$work/downstream_scale2.log"
		return 1
	fi
	echo "a sandbox at --time-scale 0.01: partner_svc.time_scale 0.01; --time-scale 2 refused"
}

# A new suite, as a project starts one: sql/ and a schedule, no expected/.
# The runner creates expected/, fails saying which files are missing,
# writes them with --accept, and then passes; the files it wrote are
# exactly the example's (stable output, webhooks included).
downstream_new_suite()
{
	local rc new=$work/downstream_new t
	mkdir -p "$new"
	cp -r test/downstream/sql test/downstream/schedule "$new/"
	partner_svc_regress "$new" >"$work/downstream_new.log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] || [ ! -d "$new/expected" ] ||
		! grep -q '^partner_svc_regress: webhooks: no expected file' "$work/downstream_new.log" ||
		! grep -q "^partner_svc_regress: note: pg_regress's sessions run with DateStyle 'Postgres, MDY'" "$work/downstream_new.log"; then
		echo "partner_svc_regress without expected/ (rc $rc): no failure, no expected/, no message or no DateStyle note"
		cat "$work/downstream_new.log"
		return 1
	fi
	partner_svc_regress --accept "$new" >"$work/downstream_accept.log" 2>&1 ||
		{ echo "partner_svc_regress --accept failed"; cat "$work/downstream_accept.log"; return 1; }
	grep -q 'wrote expected/setup.out: read it before you commit it' "$work/downstream_accept.log" ||
		{ echo "--accept did not say what it wrote"; cat "$work/downstream_accept.log"; return 1; }
	for t in setup orders webhooks session ratelimit; do
		cmp "$new/expected/$t.out" "test/downstream/expected/$t.out" ||
			{ echo "--accept wrote another expected/$t.out"; diff -u "test/downstream/expected/$t.out" "$new/expected/$t.out"; return 1; }
	done
	partner_svc_regress "$new" >"$work/downstream_again.log" 2>&1 ||
		{ echo "the accepted suite failed"; cat "$work/downstream_again.log"; return 1; }
	echo "a new suite: expected/ created, --accept wrote the example's files, the suite then passed"
}

suite "make installcheck (pg_regress, sandbox tests, scenarios)" installcheck
suite "make installcheck fails when a test fails" installcheck_fails
stop_cluster
suite "downstream suite through partner_svc_regress" downstream
suite "README commands" bash test/readme_check.sh
suite "docs' sql blocks" bash test/docs_sql.sh

echo
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
