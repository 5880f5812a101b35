#!/usr/bin/env bash
# run_tests.sh: the whole test suite of partner_svc, from a fresh Debian
# bookworm machine, as root:
#   1. installs the packages it needs (test/setup.sh),
#   2. builds and installs the extension and the sandbox,
#   3. runs the pg_regress suite against a throw-away cluster that preloads
#      partner_svc, with a sandbox on a loopback port (test/regress.sh),
#   4. runs the sandbox's own tests over real HTTP (prove test/sandbox/t),
#   5. runs the scenario tests under test/scenario/ if any (test/scenario.sh:
#      PostgreSQL's TAP framework, as the postgres user),
# stops everything it started, and exits non-zero on any failure.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source test/lib.sh

bash test/setup.sh || exit 1
echo "== build and install"
build_install "$root" || { echo "build failed"; exit 1; }

work=$(make_workdir)
cleanup()
{
	stop_sandbox
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

regress()
{
	start_sandbox "$work" --key sandbox-key=standard --key premium-key=premium \
		--key enterprise-key=enterprise --seed 1 || return 1
	PSVC_SANDBOX_URL=$SANDBOX_URL bash test/regress.sh "$root"
	local rc=$?
	stop_sandbox
	return $rc
}

suite "pg_regress" regress
suite "sandbox tests" env SANDBOX_BIN="$PG_BIN/partner_svc_sandbox" \
	prove --timer -I test/sandbox/lib test/sandbox/t
if compgen -G "test/scenario/*.t" >/dev/null; then
	suite "scenario tests" env PG_CONFIG="$PG_BIN/pg_config" bash test/scenario.sh "$root"
fi

echo
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
