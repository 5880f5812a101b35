#!/usr/bin/env bash
# fdw_bench.sh: the benchmark of the foreign-table scan engine, in one
# command, as root on the machine that runs the tests:
#
#   bash test/bench/fdw_bench.sh [--reps N]
#
#   1. installs missing packages and builds and installs the extension and
#      the sandbox, as test/run_tests.sh does; builds test/bench/fetch_floor,
#   2. starts a sandbox and a throw-away cluster preloading partner_svc, both
#      on loopback,
#   3. runs the measurements (test/bench/fdw_bench.pl) and prints their
#      figures, ratios and PASS/MISS against each target,
#   4. stops everything it started and removes its files.
#
# --reps N: repetitions per figure (default 7); the figures are medians.
# --parts abcd: only the parts named; --verbose: every run's time too.
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

echo "== measure"
perl test/bench/fdw_bench.pl --sandbox "$SANDBOX_URL" --sandbox-pid "$SANDBOX_PID" \
	--floor "$root/test/bench/fetch_floor" --pglog "$work/postgres.log" "$@"
