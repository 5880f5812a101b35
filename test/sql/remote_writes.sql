-- remote_writes: a write at a service cannot be rolled back.  When a
-- transaction or subtransaction that made remote writes aborts, a WARNING
-- says how many changes of which table or function were not undone; a
-- statement cancelled while a write was in flight says in its detail that
-- the outcome is unknown and how to find out.
SET search_path = public;
CALL sandbox.clear_faults();
\set VERBOSITY default

-- a rolled-back INSERT: the todo stays at the service, and the WARNING says so
BEGIN;
INSERT INTO todos (title, user_id) VALUES ('RW kept 1', 1);
ROLLBACK;
SELECT count(*) FROM todos WHERE title = 'RW kept 1';

-- several statements and kinds of change
BEGIN;
INSERT INTO todos (title, user_id) VALUES ('RW kept 2', 1), ('RW kept 3', 1);
UPDATE todos SET completed = true WHERE title = 'RW kept 2';
DELETE FROM todos WHERE title = 'RW kept 1';
INSERT INTO notifications VALUES ('rw@example.com');
ROLLBACK;
SELECT title, completed FROM todos WHERE title LIKE 'RW kept %' ORDER BY 1;

-- a committed transaction: nothing to say
BEGIN;
UPDATE todos SET completed = false WHERE title = 'RW kept 2';
COMMIT;

-- savepoints: ROLLBACK TO names the changes made since the savepoint; a
-- released savepoint's changes belong to the transaction
BEGIN;
INSERT INTO todos (title, user_id) VALUES ('RW kept 4', 1);
SAVEPOINT s1;
INSERT INTO todos (title, user_id) VALUES ('RW kept 5', 1);
ROLLBACK TO s1;
SAVEPOINT s2;
UPDATE todos SET completed = true WHERE title = 'RW kept 4';
RELEASE s2;
ROLLBACK;
-- an exception block is a subtransaction too
DO $$
BEGIN
  INSERT INTO todos (title, user_id) VALUES ('RW kept 6', 1);
  PERFORM 1 / 0;
EXCEPTION WHEN division_by_zero THEN
  RAISE NOTICE 'caught';
END $$;
SELECT count(*) FROM todos WHERE title LIKE 'RW kept %';

-- reads are no changes
BEGIN;
SELECT count(*) > 0 AS read FROM todos;
ROLLBACK;

-- functions that change state are named
BEGIN;
SELECT partner_svc.run_job(1000001) IS NOT NULL AS ran;
SELECT partner_svc.run_job(1000001) IS NOT NULL AS ran_again;
ROLLBACK;

-- a statement cancelled while its POST is in flight: the outcome is
-- unknown, the detail says so and how to check, and the rollback counts it
-- (caught in an exception block, so that the messages come in one order)
CALL sandbox.fault('{"route": "POST /todos", "kind": "latency", "value": 3000, "count": 1}');
SET statement_timeout = '500ms';
DO $$
DECLARE
  d text;
BEGIN
  INSERT INTO todos (title, user_id) VALUES ('RW unknown', 1);
EXCEPTION WHEN query_canceled THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RAISE NOTICE 'cancelled: %', d;
END $$;
RESET statement_timeout;
CALL sandbox.clear_faults();
-- the service carried it out after all (it answers after 3 s; wait up to 20 s)
DO $$
BEGIN
  FOR i IN 1 .. 100 LOOP
    EXIT WHEN (SELECT count(*) FROM todos WHERE title = 'RW unknown') > 0;
    PERFORM pg_sleep(0.2);
  END LOOP;
END $$;
SELECT count(*) FROM todos WHERE title = 'RW unknown';

DELETE FROM todos WHERE title LIKE 'RW %';
