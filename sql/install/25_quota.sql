-- 25_quota.sql: one partner quota for a fleet of nodes: the coordinator's
-- side and the node's status (src/shmem/quota.c, docs/scale-out.md); before
-- 30_ratelimit.sql, whose view partner_svc.rate_limits shows the mode

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

-- One row per limiter key (server name, route, resource id) and window
-- length.  buckets/counts: the units of the key counted at the time of
-- bucket b (of width (window + margin) / 60, microseconds since the
-- epoch), sorted; buckets ahead of now hold granted units not reported yet.
CREATE TABLE @extschema@.quota_windows (
    key pg_catalog.text NOT NULL,
    window_ms pg_catalog.int4 NOT NULL,
    "limit" pg_catalog.int4 NOT NULL,
    buckets pg_catalog.int8[] NOT NULL DEFAULT '{}',
    counts pg_catalog.int4[] NOT NULL DEFAULT '{}',
    blocked_until pg_catalog.timestamptz,
    granted pg_catalog.int8 NOT NULL DEFAULT 0,
    updated_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now()
);
CREATE UNIQUE INDEX quota_windows_key ON @extschema@.quota_windows (key, window_ms);

COMMENT ON TABLE @extschema@.quota_windows
IS 'the fleet quota at the coordinator: units counted per key and window (partner_svc.quota_lease)';

-- When quota_lease last pruned quota_windows (one row).  A row of
-- quota_windows whose buckets have all left the window and whose key is
-- not blocked holds nothing: the next lease of its key would start from
-- the same empty count.  Rows of keys no node asks for any more (one per
-- order id of the per-id routes, say) would stay for ever, so quota_lease
-- deletes such rows, at most once a minute (at its end).
CREATE TABLE @extschema@.quota_prune (
    only_row pg_catalog.bool PRIMARY KEY DEFAULT true CHECK (only_row),
    pruned_at pg_catalog.timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO @extschema@.quota_prune DEFAULT VALUES;

COMMENT ON TABLE @extschema@.quota_prune
IS 'when partner_svc.quota_lease last deleted the rows of quota_windows that hold nothing';

-- Grants up to want units of key (at most the limit within any window,
-- counting every unit from its grant until hold_ms later, or until a node
-- reports it), after applying a node's reports: moved units ended (count
-- them now), added units were sent in fallback mode (count them now),
-- returned units never reached the service (forget them), block_ms a 429
-- (block the key that long for every node).  Answers the units granted,
-- how long the key is blocked, and when none was granted, in how many ms
-- to ask again.
CREATE FUNCTION @extschema@.quota_lease(
    lease_key pg_catalog.text,
    win_ms pg_catalog.int4,
    quota pg_catalog.int4,
    want pg_catalog.int4,
    moved pg_catalog.int4 DEFAULT 0,
    added pg_catalog.int4 DEFAULT 0,
    returned pg_catalog.int4 DEFAULT 0,
    block_ms pg_catalog.int4 DEFAULT 0,
    hold_ms pg_catalog.int4 DEFAULT 0,
    OUT granted pg_catalog.int4,
    OUT blocked_ms pg_catalog.int4,
    OUT retry_ms pg_catalog.int4)
RETURNS record
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    w_us int8;
    width int8;
    now_ts timestamptz := clock_timestamp();
    now_us int8 := (extract(epoch FROM clock_timestamp()) * 1000000)::int8;
    head int8;
    b int8[];
    c int4[];
    blk timestamptz;
    used int4;
    n int4;
    t int4;
    cum int4;
BEGIN
    IF win_ms <= 0 OR quota < 0 OR want < 0 OR moved < 0 OR added < 0
       OR returned < 0 OR block_ms < 0 OR hold_ms < 0 THEN
        RAISE EXCEPTION 'invalid argument of partner_svc.quota_lease'
            USING ERRCODE = '22023',
                  DETAIL = 'The window must be positive, the other numbers zero or more.';
    END IF;
    w_us := win_ms::int8 * 1000;
    width := (w_us + greatest(w_us / 1000, 1000) + 59) / 60;
    head := now_us / width;

    INSERT INTO @extschema@.quota_windows AS q (key, window_ms, "limit")
    VALUES (lease_key, win_ms, quota)
    ON CONFLICT (key, window_ms)
    DO UPDATE SET "limit" = EXCLUDED."limit"
    RETURNING q.buckets, q.counts, q.blocked_until INTO b, c, blk;

    -- forget what left the window (the ring of ratelimit.c: 61 buckets)
    SELECT coalesce(array_agg(u.bb ORDER BY u.bb), '{}'),
           coalesce(array_agg(u.cc ORDER BY u.bb), '{}')
      INTO b, c
      FROM unnest(b, c) AS u(bb, cc)
     WHERE u.bb >= head - 60 AND u.cc > 0;

    -- ended and returned units leave the earliest buckets ahead of now
    n := moved + returned;
    FOR i IN 1 .. coalesce(array_length(b, 1), 0) LOOP
        EXIT WHEN n = 0;
        IF b[i] > head THEN
            t := least(n, c[i]);
            c[i] := c[i] - t;
            n := n - t;
        END IF;
    END LOOP;
    IF moved + added > 0 THEN
        b := b || head;
        c := c || (moved + added);
    END IF;

    IF block_ms > 0 THEN
        blk := greatest(coalesce(blk, now_ts), now_ts + block_ms * interval '1 ms');
    END IF;
    IF blk <= now_ts THEN
        blk := NULL;
    END IF;

    SELECT coalesce(sum(u.cc), 0)::int4 INTO used FROM unnest(c) AS u(cc);
    granted := 0;
    blocked_ms := 0;
    retry_ms := 0;
    IF blk IS NOT NULL THEN
        blocked_ms := ceil(extract(epoch FROM blk - now_ts) * 1000)::int4;
        retry_ms := blocked_ms;
    ELSE
        granted := least(want, greatest(quota - used, 0));
        IF granted > 0 THEN
            b := b || ((now_us + hold_ms::int8 * 1000) / width);
            c := c || granted;
        ELSIF want > 0 THEN
            -- when enough units leave the window for one more
            SELECT coalesce(array_agg(u.bb ORDER BY u.bb), '{}'),
                   coalesce(array_agg(u.cc ORDER BY u.bb), '{}')
              INTO b, c
              FROM (SELECT v.bb, sum(v.cc)::int4 AS cc
                      FROM unnest(b, c) AS v(bb, cc)
                     GROUP BY v.bb HAVING sum(v.cc) > 0) u;
            cum := 0;
            retry_ms := 1;
            FOR i IN 1 .. coalesce(array_length(b, 1), 0) LOOP
                cum := cum + c[i];
                IF cum >= used - quota + 1 THEN
                    retry_ms := greatest(((b[i] + 61) * width - now_us + 999) / 1000, 1)::int4;
                    EXIT;
                END IF;
            END LOOP;
        END IF;
    END IF;

    -- merge equal buckets, drop empty ones, keep them sorted
    SELECT coalesce(array_agg(u.bb ORDER BY u.bb), '{}'),
           coalesce(array_agg(u.cc ORDER BY u.bb), '{}')
      INTO b, c
      FROM (SELECT v.bb, sum(v.cc)::int4 AS cc
              FROM unnest(b, c) AS v(bb, cc)
             GROUP BY v.bb HAVING sum(v.cc) > 0) u;

    UPDATE @extschema@.quota_windows AS q
       SET buckets = b, counts = c, blocked_until = blk,
           granted = q.granted + quota_lease.granted,
           updated_at = now_ts
     WHERE q.key = lease_key AND q.window_ms = win_ms;

    -- once a minute (the one row of quota_prune says when), delete the
    -- rows that hold nothing: every bucket out of its window (of its own
    -- width), no block.  SKIP LOCKED: a row another call holds is in use,
    -- and no call ever waits here for another.
    UPDATE @extschema@.quota_prune AS p SET pruned_at = now_ts
     WHERE p.pruned_at < now_ts - interval '1 minute'
       AND p.ctid = (SELECT p2.ctid FROM @extschema@.quota_prune AS p2
                      FOR UPDATE SKIP LOCKED);
    IF FOUND THEN
        DELETE FROM @extschema@.quota_windows AS q
         WHERE q.ctid IN (
               SELECT d.ctid FROM @extschema@.quota_windows AS d
                WHERE (d.blocked_until IS NULL OR d.blocked_until <= now_ts)
                  AND NOT EXISTS (
                      SELECT FROM unnest(d.buckets) AS u(bb)
                       WHERE u.bb >= now_us / ((d.window_ms::int8 * 1000
                                 + greatest(d.window_ms::int8, 1000) + 59) / 60) - 60)
                FOR UPDATE SKIP LOCKED);
    END IF;
END
$fn$;

COMMENT ON FUNCTION @extschema@.quota_lease(pg_catalog.text, pg_catalog.int4,
    pg_catalog.int4, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4,
    pg_catalog.int4, pg_catalog.int4, pg_catalog.int4)
IS 'the quota coordinator: grants a node units of a rate-limit key, never more than the limit in any window, and takes its reports';

REVOKE ALL ON FUNCTION @extschema@.quota_lease(pg_catalog.text, pg_catalog.int4,
    pg_catalog.int4, pg_catalog.int4, pg_catalog.int4, pg_catalog.int4,
    pg_catalog.int4, pg_catalog.int4, pg_catalog.int4) FROM PUBLIC;

CREATE FUNCTION @extschema@.quota_status(
    OUT mode pg_catalog.text,
    OUT coordinator_reached pg_catalog.timestamptz,
    OUT fallback_from pg_catalog.timestamptz,
    OUT last_error pg_catalog.text)
RETURNS record
AS 'MODULE_PATHNAME', 'psvc_quota_status'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION @extschema@.quota_status()
IS 'this node''s fleet quota: local, connecting, leased or fallback, the last answer of the coordinator, since when the fallback share applies, the last error';

-- PUBLIC may call it too; the grant keeps monitoring roles able to should
-- PUBLIC's EXECUTE be revoked (docs/privileges.md)
GRANT EXECUTE ON FUNCTION @extschema@.quota_status() TO pg_monitor;
