--
-- stat_background: the view of the background work's counters
-- (docs/reference.md#partner_svcstat_background).  The senders and the
-- webhook worker work in another database (postgres) and the listener is
-- off here, so the counters do not move during this file: it checks the
-- view's columns, its reset, the queue part (calls_waiting,
-- oldest_unfinished) on calls written by hand, and who may read and reset
-- it.  What moves the counters is tested by
-- test/scenario/87_stat_background.t.
--
SET search_path = public;
\set VERBOSITY default

-- one row, its columns in this order
SELECT count(*) FROM partner_svc.stat_background;
SELECT attnum, attname, format_type(atttypid, atttypmod)
FROM pg_attribute WHERE attrelid = 'partner_svc.stat_background'::regclass AND attnum > 0
ORDER BY attnum;

-- a reset: every counter zero, stats_reset now
SELECT now() AS before_reset \gset
SELECT partner_svc.stat_background_reset();
SELECT calls_queued, calls_done, calls_failed, calls_retried, polls,
       poll_changes, poll_failures, webhooks_received, webhooks_stored,
       webhooks_rejected, stats_reset >= :'before_reset' AS reset_now
FROM partner_svc.stat_background;

-- the queue of this database: unfinished calls and the oldest of them
SELECT calls_waiting, oldest_unfinished FROM partner_svc.stat_background;
CREATE ROLE regress_bgs_alice;
INSERT INTO partner_svc.deferred_queue (operation, args, role, lanes, created_at)
VALUES ('run_job', '{"job_id": 1}', 'regress_bgs_alice', '{job:1}', '2030-01-02 00:00+00'),
       ('run_job', '{"job_id": 2}', 'regress_bgs_alice', '{job:2}', '2030-01-01 00:00+00');
INSERT INTO partner_svc.deferred_queue (operation, args, role, lanes, state, created_at, done_at)
VALUES ('run_job', '{"job_id": 3}', 'regress_bgs_alice', '{job:3}', 'done', '2029-01-01 00:00+00', now());
SELECT calls_waiting, oldest_unfinished AT TIME ZONE 'UTC' AS oldest_unfinished
FROM partner_svc.stat_background;
DELETE FROM partner_svc.deferred_queue;

-- members of pg_monitor read it; nobody else; only superusers reset
SET ROLE regress_bgs_alice;
SELECT calls_done FROM partner_svc.stat_background;
SELECT partner_svc.stat_background_reset();
RESET ROLE;
GRANT pg_monitor TO regress_bgs_alice;
SET ROLE regress_bgs_alice;
SELECT calls_waiting, stats_reset IS NOT NULL AS has_reset FROM partner_svc.stat_background;
SELECT partner_svc.stat_background_reset();
RESET ROLE;
DROP ROLE regress_bgs_alice;
