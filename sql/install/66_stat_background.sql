-- 66_stat_background.sql: the counters of the background work, in the style
-- of pg_stat_* (src/shmem/bgstats.c, docs/reference.md#partner_svcstat_background)

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

CREATE FUNCTION @extschema@.stat_background_counters(
    OUT calls_queued pg_catalog.int8,
    OUT calls_done pg_catalog.int8,
    OUT calls_failed pg_catalog.int8,
    OUT calls_retried pg_catalog.int8,
    OUT polls pg_catalog.int8,
    OUT poll_changes pg_catalog.int8,
    OUT poll_failures pg_catalog.int8,
    OUT webhooks_received pg_catalog.int8,
    OUT webhooks_stored pg_catalog.int8,
    OUT webhooks_rejected pg_catalog.int8,
    OUT stats_reset pg_catalog.timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'psvc_bgs_stats'
LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION @extschema@.stat_background_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'psvc_bgs_reset'
LANGUAGE C STRICT VOLATILE;

-- One row, as pg_stat_bgwriter.  A column added later goes at the end, by
-- CREATE OR REPLACE VIEW (docs/upgrades.md).
CREATE VIEW @extschema@.stat_background AS
  SELECT c.calls_queued, c.calls_done, c.calls_failed, c.calls_retried,
         q.calls_waiting, q.oldest_unfinished,
         c.polls, c.poll_changes, c.poll_failures,
         c.webhooks_received, c.webhooks_stored, c.webhooks_rejected,
         c.stats_reset
  FROM @extschema@.stat_background_counters() c,
       (SELECT pg_catalog.count(*) AS calls_waiting,
               pg_catalog.min(d.created_at) AS oldest_unfinished
          FROM @extschema@.deferred_queue d
         WHERE d.state IN ('queued', 'sending')) q;

COMMENT ON VIEW @extschema@.stat_background
IS 'the background work since stats_reset: deferred calls, status polls, webhooks (counters of the cluster; calls_waiting and oldest_unfinished from this database''s queue)';
COMMENT ON FUNCTION @extschema@.stat_background_reset()
IS 'sets the counters of partner_svc.stat_background to zero and its stats_reset to now';

REVOKE ALL ON FUNCTION @extschema@.stat_background_counters() FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.stat_background_reset() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.stat_background_counters() TO pg_monitor;
GRANT SELECT ON @extschema@.stat_background TO pg_monitor;
