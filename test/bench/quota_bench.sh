#!/usr/bin/env bash
# quota_bench.sh: what leasing the quota from a coordinator costs per
# limited request, against the node-local limiter, in the same run.
#
# Runs the same request (a detail read, GET /public/orders/{id}, one HTTP
# request per statement) with pgbench, 8 sessions on one hot key, with
# partner_svc.quota_coordinator empty (node-local) and set (the cluster is
# its own coordinator, over its Unix socket, so the lease statements of the
# quota worker run on the same two cores).  The route's limit is raised by
# the option rate_limits to 1,000,000 per window (a "large route": leases
# of 1000 units) so the limiter never waits, and the sandbox enforces no
# limits, so only the limiter's and the leases' own cost is measured.  The
# setting is switched by ALTER SYSTEM and a reload; each round runs both
# modes in alternating order; the medians and the ratio of the time per
# request, leased over local, are printed.
#
# Usage, as root on the project's machine (after test/setup.sh):
#   bash test/bench/quota_bench.sh [SECONDS_PER_RUN [ROUNDS]]
# PG_BIN selects the PostgreSQL installation (default: Debian's).  Builds and
# installs the extension first, starts a throw-away cluster and a sandbox,
# stops both at the end.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source test/lib.sh

secs=${1:-5}
rounds=${2:-3}
clients=8

source test/bench/detail_stack.sh
detail_stack QBENCH-1 'LJ QB-001' id

coordinator="host=$PGHOST port=$PGPORT dbname=postgres user=postgres"

# mode local|leased: sets partner_svc.quota_coordinator and reloads
mode()
{
	local value=''
	[ "$1" = leased ] && value=$coordinator
	psql -X -q -d postgres -c "ALTER SYSTEM SET partner_svc.quota_coordinator = '$value'" \
		-c "SELECT pg_reload_conf()" >/dev/null
	sleep 0.5
	# one request starts the worker (leased) and shows the mode
	psql -X -q -d postgres -c "SELECT count(*) FROM orders WHERE id = 'QBENCH-1'" >/dev/null
	local got
	got=$(psql -X -A -t -d postgres -c "SELECT mode FROM partner_svc.quota_status()")
	if [ "$got" != "$1" ]; then
		echo "quota_bench.sh: mode is $got, expected $1" >&2
		exit 1
	fi
}

# tps: requests per second of one pgbench run (and its waits for budget,
# appended to $work/waits)
tps()
{
	psql -X -q -d postgres -c "SELECT partner_svc.stats_reset()" >/dev/null
	"$PG_BIN/pgbench" -n -d postgres -f "$work/detail.sql" -c "$clients" \
		-j "$clients" -T "$secs" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
	psql -X -A -t -d postgres -c "SELECT (SELECT mode FROM partner_svc.quota_status()) || ': ' || limiter_waits || ' waits of ' || requests || ' requests, ' || round(limiter_wait_time) || ' ms' FROM partner_svc.stats WHERE server = 'orders'" >>"$work/waits"
}

median()
{
	sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# warm up: connections, the key, the sandbox, the worker
mode leased
tps >/dev/null

local_r=()
leased_r=()
for r in $(seq 1 "$rounds"); do
	# alternate which goes first, so a drift of the machine or the sandbox
	# over time favours neither
	if [ $((r % 2)) -eq 1 ]; then
		mode local; local_r+=("$(tps)")
		mode leased; leased_r+=("$(tps)")
	else
		mode leased; leased_r+=("$(tps)")
		mode local; local_r+=("$(tps)")
	fi
done
m_local=$(printf '%s\n' "${local_r[@]}" | median)
m_leased=$(printf '%s\n' "${leased_r[@]}" | median)

printf '%s\n' "cost per limited request, leased from a coordinator vs node-local: $rounds rounds of $secs s, $clients sessions, median"
printf '%-12s %s\n' local "${local_r[*]}" leased "${leased_r[*]}"
printf '%-14s %14s %30s\n' "req/s local" "req/s leased" "time per request leased/local"
printf '%-14.0f %14.0f %30.3f\n' "$m_local" "$m_leased" \
	"$(awk -v a="$m_local" -v b="$m_leased" 'BEGIN { print a / b }')"
echo "waits for budget per run:"
cat "$work/waits"
psql -X -q -d postgres -c "SELECT key, \"limit\", granted FROM partner_svc.quota_windows"
