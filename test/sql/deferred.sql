--
-- deferred: the SQL surface of deferred calls (docs/deferred-calls.md).
-- The senders work in partner_svc.worker_database (postgres), not
-- in this one, so defer() refuses every call here (55000): this file
-- checks what defer() refuses before anything is queued, and, on calls
-- written into the queue by hand, who sees which call in deferred_calls
-- and what deferred_result() answers or raises.  What defer() queues, and
-- sending, are tested by test/scenario/85_deferred_database.t,
-- 80_deferred_commit.t and the other 8x scenarios.
--
SET search_path = public;
\set VERBOSITY default

-- refused at once, naming what is wrong; nothing is queued
SELECT partner_svc.defer('create_orders', '{}');
SELECT partner_svc.defer('order_detail', '{"id": "A-1"}');
SELECT partner_svc.defer('validate_order', '{"payload": {}}');
SELECT partner_svc.defer('create_order', '[1, 2]');
SELECT partner_svc.defer('create_order', '{}');
SELECT partner_svc.defer('create_order', '{"payload": {}, "paylod": {}}');
SELECT partner_svc.defer('create_order', '{"payload": {}, "server": "orders"}');
SELECT partner_svc.defer('create_order', '{"payload": null}');
SELECT partner_svc.defer('cancel_pending', '{"id": 17}');
SELECT partner_svc.defer('run_job', '{"job_id": "seven"}');
SELECT partner_svc.defer('run_job', '{"job_id": 1.5}');
SELECT partner_svc.defer('run_job', '{"job_id": true}');
SELECT partner_svc.defer('append_upload', '{"file_id": "f", "chunk": "\\xZZ"}');
SELECT partner_svc.defer('cancel_pending', '{"id": "A-1"}', 'no_such_server');
SELECT partner_svc.defer(NULL);
SELECT count(*) FROM partner_svc.deferred_queue;

-- a read-only transaction: 25006, as PostgreSQL refuses an INSERT
BEGIN READ ONLY;
SELECT partner_svc.defer('cancel_pending', '{"id": "A-1"}');
ROLLBACK;

-- a valid call: refused here, naming the database the senders serve
SELECT partner_svc.defer('cancel_pending', '{"id": "A-1"}');
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT partner_svc.defer('run_job', '{"job_id": 7}');
ROLLBACK;
SELECT count(*) FROM partner_svc.deferred_queue;

-- who sees which call: a role its own; superusers and pg_read_all_stats all
CREATE ROLE regress_def_alice;
CREATE ROLE regress_def_bob;
CREATE ROLE regress_def_stats IN ROLE pg_read_all_stats;
GRANT USAGE ON SCHEMA partner_svc TO regress_def_alice, regress_def_bob, regress_def_stats;
-- calls queued as defer() queues them, written by hand
INSERT INTO partner_svc.deferred_queue (operation, args, role, lanes)
VALUES ('run_job', '{"job_id": 1}', 'regress_def_alice', '{job:1}');
SET ROLE regress_def_alice;
-- the queue itself is not readable; the view is
SELECT count(*) FROM partner_svc.deferred_queue;
RESET ROLE;
SELECT id AS alice_call FROM partner_svc.deferred_queue \gset
INSERT INTO partner_svc.deferred_queue (operation, args, role, lanes)
VALUES ('run_job', '{"job_id": 2}', 'regress_def_bob', '{job:2}');
SET ROLE regress_def_bob;
SELECT role, args FROM partner_svc.deferred_calls ORDER BY id;
-- another role's call does not exist for deferred_result() either
SELECT partner_svc.deferred_result(:alice_call) IS NULL;
RESET ROLE;
SET ROLE regress_def_alice;
SELECT role, args FROM partner_svc.deferred_calls ORDER BY id;
RESET ROLE;
SET ROLE regress_def_stats;
SELECT role, args FROM partner_svc.deferred_calls ORDER BY id;
RESET ROLE;
SELECT role, args FROM partner_svc.deferred_calls ORDER BY id;
-- calls belong to a role by OID: renamed, it keeps them (the view shows
-- its new name); a new role of its old name sees none of them
SELECT max(id) AS bob_call FROM partner_svc.deferred_queue \gset
ALTER ROLE regress_def_bob RENAME TO regress_def_bob_renamed;
CREATE ROLE regress_def_bob;
GRANT USAGE ON SCHEMA partner_svc TO regress_def_bob;
SET ROLE regress_def_bob;
SELECT role, args FROM partner_svc.deferred_calls ORDER BY id;
SELECT partner_svc.deferred_result(:bob_call);
RESET ROLE;
SET ROLE regress_def_bob_renamed;
SELECT role, args FROM partner_svc.deferred_calls ORDER BY id;
RESET ROLE;
REVOKE USAGE ON SCHEMA partner_svc FROM regress_def_bob;
DROP ROLE regress_def_bob;
ALTER ROLE regress_def_bob_renamed RENAME TO regress_def_bob;

-- deferred_result(): a call not finished within wait is a timeout error;
-- in a queue no sender reads, it says so instead of "Wait longer"
SET ROLE regress_def_bob;
SELECT partner_svc.deferred_result(id, '50 ms') FROM partner_svc.deferred_calls;
RESET ROLE;
SELECT partner_svc.deferred_result(-1);
-- the answer of a done call; the error of a failed one, as it was raised
UPDATE partner_svc.deferred_queue SET state = 'done', answer = '{"executionId": 11}', done_at = now()
WHERE role = 'regress_def_alice'::regrole;
UPDATE partner_svc.deferred_queue SET state = 'failed', sqlstate = 'P0002',
  message = 'GET /api/user-jobs/run/{jobId} failed with HTTP status 404',
  detail = 'The service reported error "not_found".', done_at = now()
WHERE role = 'regress_def_bob'::regrole;
SET ROLE regress_def_alice;
SELECT partner_svc.deferred_result(id) FROM partner_svc.deferred_calls;
RESET ROLE;
SET ROLE regress_def_bob;
SELECT partner_svc.deferred_result(id, '1 s') FROM partner_svc.deferred_calls;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- a queue from another cluster or database (restored from a dump) is
-- held until a superuser releases or cancels its calls
DELETE FROM partner_svc.deferred_queue;
INSERT INTO partner_svc.deferred_queue (operation, args, role, lanes)
VALUES ('run_job', '{"job_id": 3}', 'regress_def_alice', '{job:3}'),
       ('run_job', '{"job_id": 4}', 'regress_def_alice', '{job:4}');
UPDATE partner_svc.deferred_queue SET origin = '1/1';
SELECT args, state, held FROM partner_svc.deferred_calls ORDER BY id;
SET ROLE regress_def_alice;
SELECT partner_svc.deferred_release();
SELECT partner_svc.deferred_cancel();
RESET ROLE;
SELECT partner_svc.deferred_cancel(ARRAY[min(id)]) FROM partner_svc.deferred_queue;
SELECT partner_svc.deferred_release();
SELECT args, state, sqlstate, message, held FROM partner_svc.deferred_calls ORDER BY id;
SELECT origin = partner_svc.deferred_origin() AS ours FROM partner_svc.deferred_queue ORDER BY id;

-- the queue and its sequence are dumped with the extension's data
SELECT c.relname, e.extconfig IS NOT NULL AS dumped
FROM pg_extension e, unnest(e.extconfig) x(oid) JOIN pg_class c ON c.oid = x.oid
WHERE e.extname = 'partner_svc' AND c.relname LIKE 'deferred%' ORDER BY 1;

DELETE FROM partner_svc.deferred_queue;
REVOKE USAGE ON SCHEMA partner_svc FROM regress_def_alice, regress_def_bob, regress_def_stats;
DROP ROLE regress_def_alice, regress_def_bob, regress_def_stats;
