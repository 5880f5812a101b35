#!/usr/bin/env bash
# ratelimit_bench.sh: what the shared rate limiter costs per request.
#
# Runs the same request (a detail read, GET /public/orders/{id}, one HTTP
# request per statement) with pgbench, 1 and 8 sessions at once, with the
# limiter on and off (partner_svc.rate_limit), and prints requests per
# second and the cost per request with the limiter relative to without.
# The server's limits are raised by the option rate_limits so the limiter
# does all its work (key lookup, buckets, the unit in flight) but never
# waits, and the sandbox enforces none, so only the limiter's own cost is
# measured (statistics are kept in both modes).  All 8 sessions read the
# same order: one hot key, the worst case for the entry's spinlock.  Each
# round runs on and off, in alternating order; the medians are printed.
#
# Usage, as root on the project's machine (after test/setup.sh):
#   bash test/bench/ratelimit_bench.sh [SECONDS_PER_RUN [ROUNDS]]
# PG_BIN selects the PostgreSQL installation (default: Debian's).  Builds and
# installs the extension first, starts a throw-away cluster and a sandbox,
# stops both at the end.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source test/lib.sh

secs=${1:-5}
rounds=${2:-3}

source test/bench/detail_stack.sh
detail_stack BENCH-1 'LJ BE-001' custom_id

# tps CLIENTS on|off: requests per second of one pgbench run
tps()
{
	PGOPTIONS="-c partner_svc.rate_limit=$2" "$PG_BIN/pgbench" -n -d postgres \
		-f "$work/detail.sql" -c "$1" -j "$1" -T "$secs" 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

median()
{
	sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# warm up: connections, the key, the sandbox
tps 8 on >/dev/null

printf '%s\n' "limiter cost per request: $rounds rounds of $secs s, median"
printf '%-9s %14s %14s %26s\n' sessions "req/s off" "req/s on" "time per request on/off"
for c in 1 8; do
	on=()
	off=()
	for r in $(seq 1 "$rounds"); do
		# alternate which goes first, so a drift of the machine or the
		# sandbox over time favours neither
		if [ $((r % 2)) -eq 1 ]; then
			off+=("$(tps "$c" off)")
			on+=("$(tps "$c" on)")
		else
			on+=("$(tps "$c" on)")
			off+=("$(tps "$c" off)")
		fi
	done
	m_off=$(printf '%s\n' "${off[@]}" | median)
	m_on=$(printf '%s\n' "${on[@]}" | median)
	printf '%-9s %14.0f %14.0f %26.3f\n' "$c" "$m_off" "$m_on" \
		"$(awk -v a="$m_off" -v b="$m_on" 'BEGIN { print a / b }')"
done
psql -X -q -d postgres -c "SELECT route, requests, rate_limited, limiter_waits FROM partner_svc.stats WHERE server = 'orders'"
