# detail_stack.sh: the set-up that ratelimit_bench.sh and quota_bench.sh
# share, sourced after test/lib.sh.  detail_stack CUSTOM_ID PLATE COLUMN
# builds and installs the extension, starts a sandbox that enforces no
# limits and a cluster of 40 connections on loopback, creates the orders
# server (its limit for GET /orders/{id} raised so the limiter never
# waits) with every orders table, makes one order with custom id CUSTOM_ID
# and plate PLATE, and writes $work/detail.sql: one detail read of that
# order by COLUMN (id or custom_id), for pgbench.
detail_stack()
{
	local custom_id=$1 plate=$2 column=$3

	build_install "$root"
	start_stack --key sandbox-key=standard --no-rate-limits --seed 3 || exit 1
	cat >>"$work/data/postgresql.conf" <<CONF
max_connections = 40
CONF
	runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$work/data" -w restart >/dev/null

	psql -X -q -v ON_ERROR_STOP=1 -d postgres <<SQL
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$SANDBOX_URL',
           rate_limits 'GET /orders/{id}=1000000');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
IMPORT FOREIGN SCHEMA orders FROM SERVER orders INTO public;
SQL
	curl -s -f -o /dev/null -X POST "$SANDBOX_URL/public/orders" \
		-H 'Authorization: Bearer sandbox-key' -H 'Content-Type: application/json' \
		--data-binary '{"terms_and_privacy_accepted": true, "order_has_been_paid": true,
		  "vehicles": [{"plate": "'"$plate"'", "country": "SI"}],
		  "vignettes": [{"custom_id": "'"$custom_id"'", "name": "Slovenia 1 year",
		                 "period": "1_year", "start_date": "2026-01-01"}]}'

	echo "SELECT * FROM orders WHERE $column = '$custom_id';" >"$work/detail.sql"
	chmod 644 "$work/detail.sql"
}
