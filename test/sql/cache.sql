-- cache: the shared response cache (src/shmem/cache.c, docs/cache.md).  Every
-- step is checked against what the sandbox received (sandbox.requests()):
-- a hit sends nothing.  fdw_setup turned the cache off for this database
-- (the other tests count requests); this session turns it on.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();
SET partner_svc.cache = on;
SELECT partner_svc.cache_reset() >= 0 AS emptied;
SELECT partner_svc.stats_reset();

CREATE SCHEMA c;
IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO c;
IMPORT FOREIGN SCHEMA orders FROM SERVER orders INTO c;
IMPORT FOREIGN SCHEMA todos FROM SERVER todos INTO c;

--
-- a second scan and a second call make no request (movie content is
-- cached by default)
--
CALL sandbox.reset_stats();
SELECT count(*) AS themes FROM c.movie_themes WHERE movie = 'inception';
SELECT count(*) AS themes FROM c.movie_themes WHERE movie = 'inception';
SELECT length(partner_svc.movie_summary('inception', 'movies')) > 0 AS summary;
SELECT length(partner_svc.movie_summary('inception', 'movies')) > 0 AS summary;
SELECT method, path, status FROM sandbox.requests();
-- EXPLAIN ANALYZE: the page came from the cache, no request was sent
SELECT * FROM sandbox.explain_analyze($$SELECT * FROM c.movie_themes WHERE movie = 'inception'$$) AS "QUERY PLAN";
SELECT count(*) AS requests FROM sandbox.requests();
-- partner_svc.stats counts hits and misses per route
SELECT server, method, route, requests, cache_hits, cache_misses
FROM partner_svc.stats WHERE server = 'movies' ORDER BY route;
SELECT entries, hits, misses, stores, bytes_used > 0 AS holds_bytes
FROM partner_svc.cache_usage;

--
-- products: the product catalogue is cached by default (an hour, its
-- status a minute); a second scan makes no request
--
CALL sandbox.reset_stats();
SELECT count(*) AS products FROM c.products;
SELECT count(*) AS products FROM c.products;
SELECT count(*) AS statuses FROM c.product_status;
SELECT p.country, s.status FROM c.products p JOIN c.product_status s USING (id)
ORDER BY 1 LIMIT 3;
SELECT method, path, status FROM sandbox.requests();
SELECT * FROM sandbox.explain_analyze($$SELECT * FROM c.products$$) AS "QUERY PLAN";
-- past its TTL, an answer that came with an ETag is revalidated: the
-- request is sent with If-None-Match, the sandbox answers 304 Not
-- Modified, and the cached rows are used
ALTER FOREIGN TABLE c.products OPTIONS (ADD cache_ttl '100ms');
SELECT pg_sleep(0.2);
CALL sandbox.reset_stats();
SELECT count(*) AS products, min(country) AS first FROM c.products;
SELECT method, path, status FROM sandbox.requests();
SELECT revalidated FROM partner_svc.cache_usage;
ALTER FOREIGN TABLE c.products OPTIONS (DROP cache_ttl);

-- the answer is the same as the service's: compare with an uncached scan
CREATE TEMP TABLE cached AS SELECT * FROM c.movie_themes WHERE movie = 'inception';
SET partner_svc.cache = off;
SELECT count(*) AS differences FROM (
  (SELECT * FROM c.movie_themes WHERE movie = 'inception' EXCEPT ALL SELECT * FROM cached)
  UNION ALL
  (SELECT * FROM cached EXCEPT ALL SELECT * FROM c.movie_themes WHERE movie = 'inception')) d;

--
-- partner_svc.cache = off: every scan and call is sent, nothing is kept
--
CALL sandbox.reset_stats();
SELECT count(*) AS themes FROM c.movie_themes WHERE movie = 'inception';
SELECT count(*) AS themes FROM c.movie_themes WHERE movie = 'inception';
SELECT length(partner_svc.movie_summary('inception', 'movies')) > 0 AS summary;
SELECT method, path, status FROM sandbox.requests();
SET partner_svc.cache = on;

--
-- an error is never cached: an unknown movie is a 404 each time
--
CALL sandbox.reset_stats();
SELECT partner_svc.movie_summary('no-such-movie-anywhere', 'movies') IS NULL AS missing;
SELECT partner_svc.movie_summary('no-such-movie-anywhere', 'movies') IS NULL AS missing;
SELECT method, path, status FROM sandbox.requests();

-- a lowered partner_svc.max_response_size refuses a cached answer as it
-- would refuse the service's: the request is sent, and fails
CALL sandbox.reset_stats();
SELECT count(*) AS movies FROM (SELECT * FROM c.movies LIMIT 10) m;
SELECT count(*) AS movies FROM (SELECT * FROM c.movies LIMIT 10) m;
SET partner_svc.max_response_size = '1kB';
SELECT sandbox.sqlstate_of($$SELECT count(*) FROM (SELECT * FROM c.movies LIMIT 10) m$$) AS too_large;
RESET partner_svc.max_response_size;
SELECT method, path, query FROM sandbox.requests();

--
-- TTLs: the table's option cache_ttl, else the server's, else the default.
-- The TTL is applied when an entry is read, so lowering it below the age
-- of an entry makes the entry expire.
--
CALL sandbox.reset_stats();
SELECT count(*) AS events FROM c.movie_timeline WHERE movie = 'inception';
SELECT count(*) AS events FROM c.movie_timeline WHERE movie = 'inception';
SELECT pg_sleep(0.3);
ALTER FOREIGN TABLE c.movie_timeline OPTIONS (ADD cache_ttl '200ms');
SELECT count(*) AS events FROM c.movie_timeline WHERE movie = 'inception';
SELECT method, path, status FROM sandbox.requests();
-- cache_ttl 0 on the table: never cached
ALTER FOREIGN TABLE c.movie_timeline OPTIONS (SET cache_ttl '0');
CALL sandbox.reset_stats();
SELECT count(*) AS events FROM c.movie_timeline WHERE movie = 'inception';
SELECT count(*) AS events FROM c.movie_timeline WHERE movie = 'inception';
SELECT count(*) AS requests FROM sandbox.requests();
ALTER FOREIGN TABLE c.movie_timeline OPTIONS (DROP cache_ttl);
-- the server's option applies to functions too: 0 turns their cache off
ALTER SERVER movies OPTIONS (ADD cache_ttl '0');
CALL sandbox.reset_stats();
SELECT length(partner_svc.movie_summary('inception', 'movies')) > 0 AS summary;
SELECT length(partner_svc.movie_summary('inception', 'movies')) > 0 AS summary;
SELECT count(*) AS events FROM c.movie_characters WHERE movie = 'inception';
SELECT count(*) AS events FROM c.movie_characters WHERE movie = 'inception';
SELECT method, path, status FROM sandbox.requests();
-- ... and a table's option overrides the server's
ALTER FOREIGN TABLE c.movie_characters OPTIONS (ADD cache_ttl '1h');
CALL sandbox.reset_stats();
SELECT count(*) AS events FROM c.movie_characters WHERE movie = 'inception';
SELECT count(*) AS events FROM c.movie_characters WHERE movie = 'inception';
SELECT count(*) AS requests FROM sandbox.requests();
ALTER SERVER movies OPTIONS (DROP cache_ttl);
ALTER FOREIGN TABLE c.movie_characters OPTIONS (DROP cache_ttl);

-- options are checked: a time from 0 to 24 hours, on servers and tables only
ALTER SERVER movies OPTIONS (ADD cache_ttl 'soon');
ALTER SERVER movies OPTIONS (ADD cache_ttl '-1');
ALTER FOREIGN TABLE c.movie_themes OPTIONS (ADD cache_ttl '25h');
ALTER FOREIGN TABLE c.movie_themes OPTIONS (ADD cache_ttl '1 week');
ALTER USER MAPPING FOR PUBLIC SERVER movies OPTIONS (ADD cache_ttl '1h');
ALTER FOREIGN TABLE c.movie_themes ALTER COLUMN title OPTIONS (ADD cache_ttl '1h');

--
-- a cached answer is served only to a role that uses the same API key
--
CREATE ROLE psvc_cache_premium;
CREATE ROLE psvc_cache_same;
GRANT USAGE ON SCHEMA c, partner_svc TO psvc_cache_premium, psvc_cache_same;
GRANT SELECT ON c.movie_themes, c.products TO psvc_cache_premium, psvc_cache_same;
GRANT USAGE ON FOREIGN SERVER movies TO psvc_cache_premium, psvc_cache_same;
CREATE USER MAPPING FOR psvc_cache_premium SERVER movies OPTIONS (api_key 'premium-key');
CREATE USER MAPPING FOR psvc_cache_premium SERVER orders OPTIONS (api_key 'premium-key');
CALL sandbox.reset_stats();
SELECT count(*) AS themes FROM c.movie_themes WHERE movie = 'inception';
SELECT count(*) AS products FROM c.products;
-- another key: a miss, then its own hit
SET ROLE psvc_cache_premium;
SELECT count(*) AS themes FROM c.movie_themes WHERE movie = 'inception';
SELECT count(*) AS products FROM c.products;
SELECT length(partner_svc.movie_summary('inception', 'movies')) > 0 AS summary;
SELECT count(*) AS themes FROM c.movie_themes WHERE movie = 'inception';
SELECT count(*) AS products FROM c.products;
RESET ROLE;
-- another role with the same key (PUBLIC's mapping): a hit
SET ROLE psvc_cache_same;
SELECT count(*) AS themes FROM c.movie_themes WHERE movie = 'inception';
SELECT count(*) AS products FROM c.products;
SELECT length(partner_svc.movie_summary('inception', 'movies')) > 0 AS summary;
RESET ROLE;
SELECT method, path, status FROM sandbox.requests();
-- a key changed in the same session: each backend keeps the digests of its
-- requests' keys only until a user mapping changes, so the next scan is
-- looked up under the new key (a miss, sent), and the old key's entry is
-- found again once the old key is back
CALL sandbox.reset_stats();
SELECT count(*) AS products FROM c.products;
ALTER USER MAPPING FOR PUBLIC SERVER orders OPTIONS (SET api_key 'enterprise-key');
SELECT count(*) AS products FROM c.products;
SELECT count(*) AS products FROM c.products;
ALTER USER MAPPING FOR PUBLIC SERVER orders OPTIONS (SET api_key 'sandbox-key');
SELECT count(*) AS products FROM c.products;
SELECT method, path, status FROM sandbox.requests();
-- neither the key nor its hash is shown anywhere: cache_usage has no key column
SELECT count(*) AS key_columns FROM information_schema.columns
WHERE table_schema = 'partner_svc' AND table_name IN ('cache_usage', 'stats')
  AND column_name LIKE '%key%';
DROP USER MAPPING FOR psvc_cache_premium SERVER movies;
DROP USER MAPPING FOR psvc_cache_premium SERVER orders;
REVOKE ALL ON SCHEMA c, partner_svc FROM psvc_cache_premium, psvc_cache_same;
REVOKE ALL ON c.movie_themes, c.products FROM psvc_cache_premium, psvc_cache_same;
REVOKE ALL ON FOREIGN SERVER movies FROM psvc_cache_premium, psvc_cache_same;
DROP ROLE psvc_cache_premium;
DROP ROLE psvc_cache_same;
-- cache_reset is not for everyone
SELECT has_function_privilege('public', 'partner_svc.cache_reset()', 'execute') AS public_may_reset;

--
-- a mutation invalidates: the detail read of an order after
-- cancel_pending of that order (and every other cached read of the orders
-- server, products included: invalidation is per server), and the todo
-- list after an UPDATE
--
CALL sandbox.set('{"orders.pending_after_min": 0, "orders.active_after_min": 100000, "orders.deferred_active_after_min": 100000, "rate_limit.GET /orders/{id}/status": 10000, "rate_limit.GET /orders/{id}": 10000}');
ALTER FOREIGN TABLE c.orders OPTIONS (ADD cache_ttl '1h');
ALTER FOREIGN TABLE c.todos OPTIONS (ADD cache_ttl '1h');
SELECT partner_svc.create_order($${
  "terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ CA-001", "country": "SI"}],
  "vignettes": [{"custom_id": "CACHE-1", "name": "Slovenia 10 days", "period": "10_days", "start_date": "2020-01-01"}]}$$)
  #> '{orders,0,custom_id}' AS created;
DO $$
BEGIN
  -- wait (at most about 10 s) for the order to be PENDING, uncached
  SET LOCAL partner_svc.cache = off;
  FOR i IN 1..200 LOOP
    EXIT WHEN partner_svc.order_status('CACHE-1') <> 'CREATED';
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
CALL sandbox.reset_stats();
SELECT count(*) AS products FROM c.products;
SELECT custom_id, status FROM c.orders WHERE custom_id = 'CACHE-1';
SELECT custom_id, status FROM c.orders WHERE custom_id = 'CACHE-1';
SELECT count(*) AS products FROM c.products;
SELECT r ->> 'status' AS cancelled FROM partner_svc.cancel_pending('CACHE-1') r;
SELECT custom_id, status FROM c.orders WHERE custom_id = 'CACHE-1';
SELECT custom_id, status FROM c.orders WHERE custom_id = 'CACHE-1';
SELECT count(*) AS products FROM c.products;
SELECT method, path, status FROM sandbox.requests();
-- the todo list: cached, then an UPDATE (whose own scan is never served
-- from the cache) makes the next read go to the service
CALL sandbox.reset_stats();
SELECT count(*) > 0 AS todos FROM c.todos;
SELECT count(*) > 0 AS todos FROM c.todos;
SELECT min(id) AS first_todo FROM c.todos \gset
SELECT title <> 'Changed while cached' AS other_title FROM c.todos WHERE id = :first_todo;
UPDATE c.todos SET title = 'Changed while cached' WHERE id = :first_todo;
SELECT title FROM c.todos WHERE id = :first_todo;
SELECT title FROM c.todos WHERE id = :first_todo;
SELECT method, route, status FROM sandbox.requests();
-- a write to one server leaves another server's entries alone
CALL sandbox.reset_stats();
SELECT count(*) AS themes FROM c.movie_themes WHERE movie = 'inception';
SELECT count(*) AS requests FROM sandbox.requests();
ALTER FOREIGN TABLE c.orders OPTIONS (DROP cache_ttl);
ALTER FOREIGN TABLE c.todos OPTIONS (DROP cache_ttl);

--
-- decoded pages: a scan leaves the decoded page of a cached answer beside
-- it, and the next scan asking the same columns reads that page instead
-- of parsing the body again (decoded_hits); another set of columns finds
-- no page of its own, decodes, and leaves its page instead.  The rows are
-- the service's in every case: lists, nested lists over several pages,
-- detail reads, and strings with escapes.
--
SELECT partner_svc.cache_reset() >= 0 AS emptied;
ALTER FOREIGN TABLE c.todos OPTIONS (ADD cache_ttl '1h');
ALTER FOREIGN TABLE c.orders OPTIONS (ADD cache_ttl '1h');
-- pages of 20: concert 1's 65 events come in 4 pages
SET partner_svc.page_size = 20;
SELECT min(id) AS first_todo FROM c.todos \gset
UPDATE c.todos SET title = E'quote " backslash \\ tab \t newline \n snow \u2603 /'
WHERE id = :first_todo;
SET partner_svc.cache = off;
CREATE TEMP TABLE truth_products AS SELECT * FROM c.products;
CREATE TEMP TABLE truth_events AS SELECT * FROM c.concert_events WHERE concert = '1';
CREATE TEMP TABLE truth_todos AS SELECT * FROM c.todos;
CREATE TEMP TABLE truth_order AS SELECT * FROM c.orders WHERE custom_id = 'CACHE-1';
SET partner_svc.cache = on;
CREATE FUNCTION pg_temp.differences(q text, truth text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%1$s EXCEPT ALL TABLE %2$s) UNION ALL (TABLE %2$s EXCEPT ALL %1$s)) d',
                 q, truth) INTO n;
  RETURN n;
END $$;
CALL sandbox.reset_stats();
-- every column: a miss that leaves its page, then a hit served with it
SELECT pg_temp.differences('SELECT * FROM c.products', 'truth_products') AS differences;
SELECT decoded_hits FROM partner_svc.cache_usage;
SELECT pg_temp.differences('SELECT * FROM c.products', 'truth_products') AS differences;
SELECT hits, decoded_hits FROM partner_svc.cache_usage;
-- two columns: a hit whose page is not theirs, then their own page
SELECT count(*) AS differences FROM (
  (SELECT id, name FROM c.products EXCEPT ALL SELECT id, name FROM truth_products)
  UNION ALL (SELECT id, name FROM truth_products EXCEPT ALL SELECT id, name FROM c.products)) d;
SELECT hits, decoded_hits FROM partner_svc.cache_usage;
SELECT count(*) AS differences FROM (
  (SELECT id, name FROM c.products EXCEPT ALL SELECT id, name FROM truth_products)
  UNION ALL (SELECT id, name FROM truth_products EXCEPT ALL SELECT id, name FROM c.products)) d;
SELECT hits, decoded_hits FROM partner_svc.cache_usage;
-- a nested list over 4 pages, each page with its cursor
SELECT pg_temp.differences($$SELECT * FROM c.concert_events WHERE concert = '1'$$, 'truth_events') AS differences;
SELECT pg_temp.differences($$SELECT * FROM c.concert_events WHERE concert = '1'$$, 'truth_events') AS differences;
SELECT hits, decoded_hits FROM partner_svc.cache_usage;
-- a list whose strings have escapes
SELECT pg_temp.differences('SELECT * FROM c.todos', 'truth_todos') AS differences;
SELECT pg_temp.differences('SELECT * FROM c.todos', 'truth_todos') AS differences;
SELECT title, raw ->> 'title' = title AS raw_agrees FROM c.todos WHERE id = :first_todo;
SELECT hits, decoded_hits FROM partner_svc.cache_usage;
-- a detail read (one item, not a list)
SELECT pg_temp.differences($$SELECT * FROM c.orders WHERE custom_id = 'CACHE-1'$$, 'truth_order') AS differences;
SELECT pg_temp.differences($$SELECT * FROM c.orders WHERE custom_id = 'CACHE-1'$$, 'truth_order') AS differences;
SELECT hits, decoded_hits FROM partner_svc.cache_usage;
-- the service was asked once per page
SELECT method, route, count(*) FROM sandbox.requests() GROUP BY 1, 2 ORDER BY 2;
ALTER FOREIGN TABLE c.todos OPTIONS (DROP cache_ttl);
ALTER FOREIGN TABLE c.orders OPTIONS (DROP cache_ttl);
RESET partner_svc.page_size;

--
-- cache_reset() empties the cache: the next scan is sent again
--
SELECT partner_svc.cache_reset() > 0 AS forgot_entries;
SELECT entries, bytes_used, hits, misses FROM partner_svc.cache_usage;
CALL sandbox.reset_stats();
SELECT count(*) AS themes FROM c.movie_themes WHERE movie = 'inception';
SELECT method, path, status FROM sandbox.requests();

-- the memory stays within partner_svc.cache_size, tables included
SELECT size_limit = pg_size_bytes(current_setting('partner_svc.cache_size')) AS limit_is_guc,
       shared_bytes <= size_limit AS segment_within,
       bytes_used <= shared_bytes AS used_within,
       bytes_cached <= bytes_used AS cached_within,
       max_entry_bytes <= size_limit / 8 AS max_entry_eighth
FROM partner_svc.cache_usage;

SET client_min_messages = warning;
DROP SCHEMA c CASCADE;
RESET client_min_messages;
RESET partner_svc.cache;
