#!/usr/bin/env bash
# sqlsmith.sh: random SQL (sqlsmith) against every partner_svc service, to
# find crashes and internal errors (XX000) of the extension.  Not part of
# the suite (run_tests.sh); run by hand, as root, from a built tree:
#
#   bash test/sqlsmith.sh
#
# (PG_BIN selects another PostgreSQL 15 installation, as for run_tests.sh.)
# About 20,000 queries take 10 to 15 minutes on a small machine.
# It installs the packages of test/setup.sh and sqlsmith (Debian package
# "sqlsmith") if missing, builds and installs the
# extension, starts a sandbox and a throw-away cluster on loopback
# (test/lib.sh start_stack), imports every service into a database
# "smith", adds views and local tables that give the required keys
# (movie, job_id, user_id, and the parent ids of the nested lists: concert,
# award, book, type and collection; two orders are made so that users
# exist), tables with a BEFORE ROW trigger, dropped columns, a citext
# column and a case-insensitive collation, and security_barrier views,
# and runs sqlsmith as a role that is not a superuser,
# bounded by a number of queries and a wall-clock limit.  Then it reads
# the server log (log_error_verbosity = verbose, %e in log_line_prefix)
# and prints:
#   - how many queries ran, and sqlsmith's error rate (most random queries
#     are refused by the parser or fail at run time: wrong types, missing
#     keys, division by zero...);
#   - crashes: "terminated by signal" lines of the postmaster;
#   - XX000 errors raised by the extension: those whose LOCATION is one
#     of the extension's source files (src/*.c), with their messages
#     (PostgreSQL has an executor/functions.c too: the listing shows the
#     function, so such a line can be told apart);
#   - XX000 errors raised elsewhere, and the most frequent SQLSTATEs.
# It exits non-zero when there is a crash or an XX000 of the extension.
#
# Settings (environment): SQLSMITH_QUERIES (default 20000),
# SQLSMITH_TIMEOUT (seconds, default 1800), SQLSMITH_SEED (default 1),
# SQLSMITH_KEEP=1 keeps the work directory (server log, sqlsmith output).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source test/lib.sh

queries=${SQLSMITH_QUERIES:-20000}
limit=${SQLSMITH_TIMEOUT:-1800}
seed=${SQLSMITH_SEED:-1}

bash test/setup.sh || exit 2
if ! command -v sqlsmith >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq sqlsmith >/dev/null || { echo "sqlsmith.sh: cannot install sqlsmith" >&2; exit 2; }
fi
build_install "$root" || { echo "sqlsmith.sh: build failed" >&2; exit 2; }

# no rate limits on either side: the point is the query shapes
start_stack --key sandbox-key=standard --seed 1 --set rate_limits=false || exit 2
if [ -n "${SQLSMITH_KEEP:-}" ]; then
	trap 'stop_cluster; stop_sandbox; echo "sqlsmith.sh: kept $work"' EXIT
fi

cat >>"$CLUSTER_DIR/data/postgresql.conf" <<CONF
log_error_verbosity = verbose
log_line_prefix = '%m [%p] %e '
log_min_messages = warning
log_min_error_statement = error
partner_svc.rate_limit = off
CONF
runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -l "$work/postgres.log" -w restart >/dev/null ||
	{ echo "sqlsmith.sh: restart failed" >&2; exit 2; }
log="$work/postgres.log"

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE smith" || exit 2
psql -X -q -v ON_ERROR_STOP=1 -d smith -v url="$SANDBOX_URL" <<'SQL' || exit 2
CREATE EXTENSION partner_svc;
CREATE ROLE smith LOGIN;
ALTER ROLE smith SET statement_timeout = '3s';
CREATE SCHEMA smith AUTHORIZATION smith;
ALTER ROLE smith SET search_path = smith, partner_svc;
SELECT format('CREATE SERVER %I FOREIGN DATA WRAPPER partner_svc OPTIONS (service %L, base_url %L)', s, s, :'url')
FROM unnest(ARRAY['orders', 'movies', 'catalog', 'todos', 'scheduler', 'files', 'generation']) s \gexec
SELECT format('CREATE USER MAPPING FOR smith SERVER %I OPTIONS (api_key ''sandbox-key'')', s),
       format('GRANT USAGE ON FOREIGN SERVER %I TO smith', s)
FROM unnest(ARRAY['orders', 'movies', 'catalog', 'scheduler', 'files', 'generation']) s \gexec
GRANT USAGE ON FOREIGN SERVER todos TO smith;
SELECT format('IMPORT FOREIGN SCHEMA %I FROM SERVER %I INTO smith', s, s)
FROM unnest(ARRAY['orders', 'movies', 'catalog', 'todos', 'scheduler']) s \gexec
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA smith TO smith;

-- keys the planner can take from a join, and views that give them
CREATE TABLE smith.wanted (slug text, job_id bigint);
INSERT INTO smith.wanted VALUES ('inception', 1000001), ('summary-only', 1000002), ('7', NULL);
CREATE VIEW smith.themes_given AS SELECT * FROM smith.movie_themes WHERE movie IN ('inception', 'summary-only');
CREATE VIEW smith.timeline_given AS SELECT * FROM smith.movie_timeline WHERE movie = 'inception';
CREATE VIEW smith.characters_given AS SELECT * FROM smith.movie_characters WHERE movie = ANY (ARRAY['inception', '7']);
CREATE VIEW smith.faqs_given AS SELECT * FROM smith.movie_faqs WHERE movie = 'inception';
CREATE VIEW smith.themes_joined AS
  SELECT w.slug, t.* FROM smith.wanted w JOIN smith.movie_themes t ON t.movie = w.slug;
CREATE VIEW smith.executions_given AS SELECT * FROM smith.job_executions WHERE job_id IN (1000001, 1000002);
CREATE VIEW smith.executions_joined AS
  SELECT j.name, e.* FROM smith.user_jobs j JOIN smith.job_executions e ON e.job_id = j.id;
-- the tables of issue 12 with a required key: user_orders and
-- user_vehicles need user_id (a user exists once an order names one, so two
-- orders are made first, as smith), the nested lists their parent's id
-- (concert, award, book; type and collection)
SET ROLE smith;
SELECT count(partner_svc.create_order(format($$
  {"terms_and_privacy_accepted": true, "order_has_been_paid": true,
   "vehicles": [{"plate": "LJ SM-1%s", "country": "SI"}],
   "vignettes": [{"custom_id": "SMITH-%s", "name": "Slovenia 1 year", "period": "1_year", "start_date": "2030-01-01"}],
   "user": {"email": "smith%s@sqlsmith.test"}}$$, n, n, n)::jsonb, 'orders')) AS orders_made
FROM generate_series(1, 2) n;
RESET ROLE;
CREATE TABLE smith.wanted_ids (id text, type text);
INSERT INTO smith.wanted_ids VALUES ('1', 'franchise'), ('2', 'director'), ('3', 'curated'), ('41', 'shelf'), (NULL, NULL);
CREATE VIEW smith.user_orders_joined AS
  SELECT u.email AS user_email, o.* FROM smith.users u JOIN smith.user_orders o ON o.user_id = u.id;
CREATE VIEW smith.user_vehicles_joined AS
  SELECT u.email AS user_email, v.* FROM smith.users u JOIN smith.user_vehicles v ON v.user_id = u.id;
CREATE VIEW smith.user_orders_given AS
  SELECT * FROM smith.user_orders WHERE user_id = ANY (ARRAY(SELECT id FROM smith.users));
CREATE VIEW smith.user_vehicles_given AS
  SELECT * FROM smith.user_vehicles
  WHERE user_id = ANY (ARRAY(SELECT id FROM smith.users) || 'usr_000000000000'::text);
CREATE VIEW smith.concert_events_given AS SELECT * FROM smith.concert_events WHERE concert IN ('1', '3');
CREATE VIEW smith.concert_events_joined AS
  SELECT w.id AS wanted, e.* FROM smith.wanted_ids w JOIN smith.concert_events e ON e.concert = w.id;
CREATE VIEW smith.award_nominations_given AS SELECT * FROM smith.award_nominations WHERE award = '1';
CREATE VIEW smith.award_nominations_joined AS
  SELECT w.id AS wanted, a.* FROM smith.wanted_ids w JOIN smith.award_nominations a ON a.award = w.id;
CREATE VIEW smith.book_adaptations_given AS
  SELECT * FROM smith.book_adaptations WHERE book = ANY (ARRAY['1', '2', '7']);
CREATE VIEW smith.collection_movies_given AS
  SELECT * FROM smith.collection_movies
  WHERE type = ANY (ARRAY['franchise', 'curated']) AND collection = ANY (ARRAY['1', '3']);
CREATE VIEW smith.collection_movies_joined AS
  SELECT w.type AS wanted_type, w.id AS wanted_id, c.*
  FROM smith.wanted_ids w JOIN smith.collection_movies c ON c.type = w.type AND c.collection = w.id;
ALTER TABLE smith.wanted OWNER TO smith;
ALTER TABLE smith.wanted_ids OWNER TO smith;
ALTER VIEW smith.themes_given OWNER TO smith;
ALTER VIEW smith.timeline_given OWNER TO smith;
ALTER VIEW smith.characters_given OWNER TO smith;
ALTER VIEW smith.faqs_given OWNER TO smith;
ALTER VIEW smith.themes_joined OWNER TO smith;
ALTER VIEW smith.executions_given OWNER TO smith;
ALTER VIEW smith.executions_joined OWNER TO smith;
SELECT format('ALTER VIEW smith.%I OWNER TO smith', v)
FROM unnest(ARRAY['user_orders_joined', 'user_vehicles_joined', 'user_orders_given', 'user_vehicles_given',
                  'concert_events_given', 'concert_events_joined', 'award_nominations_given',
                  'award_nominations_joined', 'book_adaptations_given', 'collection_movies_given',
                  'collection_movies_joined']) v \gexec
-- shapes that once ended in XX000 or lost writes (issue "trust round
-- three"): a BEFORE ROW trigger on a writable table, dropped columns,
-- citext and a case-insensitive collation on pushed-down columns, and
-- security_barrier views limited to one key
CREATE EXTENSION IF NOT EXISTS citext SCHEMA smith;
CREATE COLLATION smith.ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE FOREIGN TABLE smith.todos_trig (id bigint, gone integer OPTIONS (field 'gone'), title text,
  completed boolean, user_id bigint, raw jsonb) SERVER todos OPTIONS (resource 'todos');
ALTER FOREIGN TABLE smith.todos_trig DROP COLUMN gone;
CREATE FUNCTION smith.todos_trig_touch() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN NEW.completed := coalesce(NEW.completed, false); RETURN NEW; END $$;
CREATE TRIGGER touch BEFORE INSERT OR UPDATE ON smith.todos_trig
  FOR EACH ROW EXECUTE FUNCTION smith.todos_trig_touch();
CREATE FOREIGN TABLE smith.questions_citext (id text, persona smith.citext, answerability text COLLATE smith.ci,
  dropped_col text, question text) SERVER catalog OPTIONS (resource 'business_questions');
ALTER FOREIGN TABLE smith.questions_citext DROP COLUMN dropped_col;
CREATE FOREIGN TABLE smith.orders_ci (id text COLLATE smith.ci, custom_id text COLLATE smith.ci,
  status smith.citext, email text) SERVER orders OPTIONS (resource 'orders');
CREATE FOREIGN TABLE smith.themes_dropped (movie text, gone text OPTIONS (field 'gone'), position integer,
  title text) SERVER movies OPTIONS (resource 'movie_themes');
ALTER FOREIGN TABLE smith.themes_dropped DROP COLUMN gone;
CREATE VIEW smith.themes_barrier WITH (security_barrier) AS
  SELECT * FROM smith.movie_themes WHERE movie = 'inception';
CREATE VIEW smith.faqs_barrier WITH (security_barrier) AS
  SELECT * FROM smith.movie_faqs WHERE movie IN ('inception', 'summary-only') AND section = 'ending';
CREATE VIEW smith.themes_dropped_given AS SELECT * FROM smith.themes_dropped WHERE movie = 'inception';
SELECT format('ALTER %s smith.%I OWNER TO smith', k, v)
FROM (VALUES ('FOREIGN TABLE', 'todos_trig'), ('FOREIGN TABLE', 'questions_citext'),
             ('FOREIGN TABLE', 'orders_ci'), ('FOREIGN TABLE', 'themes_dropped'),
             ('VIEW', 'themes_barrier'), ('VIEW', 'faqs_barrier'), ('VIEW', 'themes_dropped_given')) x(k, v) \gexec
-- every view above must give rows: a key the service refuses would only
-- add errors to the run
SET ROLE smith;
DO $$
DECLARE
  v text;
  n bigint;
BEGIN
  FOREACH v IN ARRAY ARRAY['user_orders_joined', 'user_vehicles_joined', 'user_orders_given',
                           'user_vehicles_given',
                           'concert_events_given', 'concert_events_joined', 'award_nominations_given',
                           'award_nominations_joined', 'book_adaptations_given',
                           'collection_movies_given', 'collection_movies_joined'] LOOP
    EXECUTE format('SELECT count(*) FROM smith.%I', v) INTO n;
    IF n = 0 THEN
      RAISE EXCEPTION 'view smith.% gives no rows', v;
    END IF;
  END LOOP;
END $$;
RESET ROLE;
SQL

# sqlsmith stops on a lost connection (a crash); it is started again,
# boundedly, until the queries or the time are used up, so that one crash
# does not hide the rest of the run
echo "== sqlsmith: $queries queries at most, $limit s at most, seed $seed"
out="$work/sqlsmith.out"
start=$(date +%s)
done_total=0
runs=0
while [ "$done_total" -lt "$queries" ] && [ $(( $(date +%s) - start )) -lt "$limit" ] && [ "$runs" -lt 20 ]; do
	runs=$((runs + 1))
	timeout $(( limit - ($(date +%s) - start) + 1 )) \
		sqlsmith --target="host=$PGHOST port=$PGPORT dbname=smith user=smith" \
		--exclude-catalog --seed=$((seed + runs - 1)) --max-queries=$((queries - done_total)) \
		--verbose >"$out.$runs" 2>&1
	n=$(grep -o '^queries: [0-9]*' "$out.$runs" | tail -n 1 | grep -o '[0-9]*')
	done_total=$((done_total + ${n:-0}))
	cat "$out.$runs" >>"$out"
	# a run that ended without a crash ended because it was done
	grep -q "terminated by signal" "$log" || break
done
elapsed=$(( $(date +%s) - start ))

# the extension's source files, to tell its errors from PostgreSQL's; with
# verbose errors every ERROR has a "LOCATION:  function, file.c:line" line,
# whose prefix carries the same SQLSTATE (%e)
ext_files=$(cd src && ls ./*.c ./*/*.c 2>/dev/null | grep -v '^./sandbox/' | xargs -n1 basename | paste -sd'|')
crashes=$(grep -c "terminated by signal" "$log" || true)
xx_all=$(grep -c "\] XX000 LOCATION:" "$log" || true)
xx_ext=$(grep -cE "\] XX000 LOCATION: .*, ($ext_files):[0-9]+\$" "$log" || true)

echo
echo "== summary"
echo "sqlsmith runs: $runs, queries: $done_total, elapsed: ${elapsed}s"
grep -E '^error rate' "$out" | tail -n 1 || true
echo "crashes (terminated by signal): $crashes"
echo "XX000 errors raised by partner_svc: $xx_ext"
echo "XX000 errors raised by PostgreSQL itself: $((xx_all - xx_ext))"
echo "most frequent SQLSTATEs of errors:"
grep -oE "\] [0-9A-Z]{5} ERROR:" "$log" | awk '{print $2}' | sort | uniq -c | sort -rn | head -n 12
echo "errors and warnings raised by partner_svc, by SQLSTATE and place:"
grep -E "\] [0-9A-Z]{5} LOCATION: .*, ($ext_files):[0-9]+\$" "$log" |
	sed -E 's/.*\] ([0-9A-Z]{5}) LOCATION: *([A-Za-z_0-9]*), ([A-Za-z_0-9.]*):[0-9]*/\1 \2 \3/' |
	sort | uniq -c | sort -rn
if [ "$crashes" -gt 0 ]; then
	echo "crash lines:"
	grep "terminated by signal" "$log" | head -n 10
fi
if [ "$xx_ext" -gt 0 ]; then
	echo "XX000 of partner_svc (message, then place):"
	grep -E "\] XX000 (ERROR|LOCATION):" "$log" | grep -B1 -E "LOCATION: .*, ($ext_files):[0-9]+\$" | head -n 40
fi
[ "$crashes" -eq 0 ] && [ "$xx_ext" -eq 0 ]
