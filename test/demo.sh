#!/usr/bin/env bash
# demo.sh: from a fresh Debian bookworm machine, as root: installs what is
# needed, builds and installs partner_svc, starts a throw-away cluster and
# the sandbox on loopback ports, runs a psql session of real queries, and
# stops everything it started.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source test/lib.sh

bash test/setup.sh || exit 1
echo "== building and installing partner_svc"
build_install "$root" || { echo "build failed"; exit 1; }

start_stack --key sandbox-key=standard --seed 1 || exit 1
echo "== sandbox at $SANDBOX_URL, PostgreSQL on 127.0.0.1:$PGPORT"
echo

runuser -u postgres -- env PGHOST="$PGHOST" PGPORT="$PGPORT" PSVC_SANDBOX_URL="$SANDBOX_URL" \
	"$PG_BIN/psql" -X -q -v ON_ERROR_STOP=0 -d postgres -e -f "$root/test/demo.sql"
