#!/bin/bash
#
# test/with_sandbox.sh: the sandbox fixture of make installcheck.
#
# Usage: test/with_sandbox.sh COMMAND [ARG]...
#
# Starts the sandbox with the partners and seed the pg_regress suite
# expects (SANDBOX_BIN, default partner_svc_sandbox in PATH) on a free
# loopback port, exports its URL as PSVC_SANDBOX_URL (the tests read it with
# psql's \getenv), runs COMMAND (pg_regress), stops the sandbox and exits
# with COMMAND's status.  With PSVC_SANDBOX_URL already set, it starts
# nothing and just runs COMMAND.  Before that it checks that the server at
# PGHOST/PGPORT preloads partner_svc, which the suite needs.
set -uo pipefail

[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG]..." >&2; exit 2; }

# COMMAND is pg_regress; psql sits in the --bindir it is given.
psql=psql
for a in "$@"; do
	case "$a" in --bindir=*) psql="${a#--bindir=}/psql"; psql=${psql//\'/} ;; esac
done
preload=$("$psql" -X -A -t -d postgres -c 'SHOW shared_preload_libraries' 2>&1) || {
	echo "with_sandbox.sh: cannot reach the server (PGHOST=${PGHOST:-} PGPORT=${PGPORT:-}): $preload" >&2
	exit 2
}
case ",${preload// /}," in
	*,partner_svc,*) ;;
	*) echo "with_sandbox.sh: the server at PGHOST/PGPORT does not preload partner_svc (shared_preload_libraries = '$preload'); the suite needs shared_preload_libraries = 'partner_svc'" >&2
	   exit 2 ;;
esac

if [ -n "${PSVC_SANDBOX_URL:-}" ]; then
	exec "$@"
fi

sandbox=${SANDBOX_BIN:-partner_svc_sandbox}
dir=$(mktemp -d "${TMPDIR:-/tmp}/psvc_sandbox.XXXXXX")
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$sandbox" --port 0 --port-file "$dir/port" --key sandbox-key=standard \
	--key premium-key=premium --key enterprise-key=enterprise --seed 1 \
	>"$dir/log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
	[ -s "$dir/port" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		cat "$dir/log" >&2
		pid=
		echo "with_sandbox.sh: $sandbox did not start" >&2
		exit 2
	fi
	sleep 0.05
done
[ -s "$dir/port" ] || { echo "with_sandbox.sh: the sandbox wrote no port" >&2; exit 2; }
export PSVC_SANDBOX_URL="http://127.0.0.1:$(cat "$dir/port")"
echo "with_sandbox.sh: sandbox at $PSVC_SANDBOX_URL"
"$@"
status=$?
exit $status
