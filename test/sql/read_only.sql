-- read_only: a write at a partner is refused where PostgreSQL refuses a
-- local one.  In a read-only transaction (and on a hot standby, where
-- every transaction is read-only: test/scenario/75_read_only_standby.t)
-- every function whose operation changes state at the service, and every
-- INSERT, UPDATE or DELETE of a writable foreign table, fails with 25006
-- before anything is sent; reads keep working.
SET search_path = public;
CALL sandbox.clear_faults();
CALL sandbox.reset_stats();
\set VERBOSITY terse

BEGIN READ ONLY;
SELECT partner_svc.create_order('{"terms_and_privacy_accepted": true, "order_has_been_paid": true,
  "vehicles": [{"plate": "LJ RO-1", "country": "SI"}],
  "vignettes": [{"custom_id": "RO-1", "name": "read-only", "period": "1_day", "start_date": "2030-01-01"}]}');
ROLLBACK;
BEGIN READ ONLY;
INSERT INTO todos (title, user_id) VALUES ('RO todo', 1);
ROLLBACK;

-- default_transaction_read_only, as a standby's transactions are
SET default_transaction_read_only = on;
SELECT f, sandbox.try(format('SELECT %s', f)) AS refused
FROM unnest(ARRAY[
  'partner_svc.create_transaction(''{"vehicles": [], "vignettes": []}'')',
  'partner_svc.cancel_pending(''ord_000000000001'')',
  'partner_svc.cancel_deferred(''ord_000000000001'')',
  'partner_svc.cancel_transaction(''txn_000000000001'')',
  'partner_svc.mcp(''{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}'')',
  'partner_svc.run_job(1000001)',
  'partner_svc.stop_job(1000001)',
  'partner_svc.clone_job(1000001)',
  'partner_svc.save_job(''{"name": "x"}'')',
  'partner_svc.delete_job(1000001)',
  'partner_svc.send_execution_email(1)']) AS f;
SELECT sandbox.try($$UPDATE todos SET completed = true WHERE title = 'x'$$) AS update_todos;
SELECT sandbox.try($$DELETE FROM todos WHERE title = 'x'$$) AS delete_todos;
SELECT sandbox.try($$INSERT INTO notifications VALUES ('ro@example.com')$$) AS insert_notifications;

-- reads, and calls that only check or read, still work
SELECT count(*) > 0 AS todos_read FROM todos;
SELECT partner_svc.validate_order('{"vehicles": [{"plate": "LJ RO-1", "country": "SI"}],
  "vignettes": [{"name": "read-only", "period": "1_day", "start_date": "2030-01-01"}]}') ->> 'valid' AS validated;
SELECT partner_svc.mcp('{"jsonrpc": "2.0", "id": 1, "method": "ping"}') IS NOT NULL AS mcp_ping;
RESET default_transaction_read_only;

-- the sandbox received the reads only
SELECT method, route FROM sandbox.requests();
