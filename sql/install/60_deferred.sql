-- 60_deferred.sql: deferred calls, sent after COMMIT by the senders
-- (src/deferred/, docs/deferred-calls.md)

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION partner_svc" to load this file. \quit

-- The cluster and database a call was queued in: '<system identifier>/<database oid>'.
CREATE FUNCTION @extschema@.deferred_origin()
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'psvc_deferred_origin'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE SEQUENCE @extschema@.deferred_queue_id_seq;

-- The queue.  Written by defer() (as the extension's owner) and by the
-- senders; read through the view deferred_calls.  role is the queuing
-- role by its OID (regrole: shown by its current name, or as the bare OID
-- once the role is dropped): a renamed role keeps its calls, a dropped
-- role's calls fail and are never sent as another role of the same name;
-- a dump writes the name and a restore looks it up (docs/privileges.md).
CREATE TABLE @extschema@.deferred_queue (
    id pg_catalog.int8 PRIMARY KEY
        DEFAULT pg_catalog.nextval('@extschema@.deferred_queue_id_seq'),
    operation pg_catalog.text NOT NULL,
    args pg_catalog.jsonb NOT NULL,
    server pg_catalog.name,
    role pg_catalog.regrole NOT NULL,
    lanes pg_catalog.text[] NOT NULL,
    state pg_catalog.text NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'sending', 'done', 'failed')),
    attempts pg_catalog.int4 NOT NULL DEFAULT 0,
    next_attempt_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now(),
    sender pg_catalog.int4,
    sent_at pg_catalog.timestamptz,
    checkpoint pg_catalog.jsonb,
    answer pg_catalog.jsonb,
    sqlstate pg_catalog.text,
    message pg_catalog.text,
    detail pg_catalog.text,
    hint pg_catalog.text,
    created_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now(),
    done_at pg_catalog.timestamptz,
    origin pg_catalog.text NOT NULL DEFAULT @extschema@.deferred_origin()
);
ALTER SEQUENCE @extschema@.deferred_queue_id_seq OWNED BY @extschema@.deferred_queue.id;

CREATE INDEX deferred_queue_done_at ON @extschema@.deferred_queue (done_at)
  WHERE done_at IS NOT NULL;
-- the unfinished calls of each role in id order: the claim's turns of the
-- roles and the cap partner_svc.deferred_max_per_role (src/deferred/)
CREATE INDEX deferred_queue_unfinished_role ON @extschema@.deferred_queue ((role::pg_catalog.oid), id)
  WHERE state IN ('queued', 'sending');

COMMENT ON TABLE @extschema@.deferred_queue
IS 'deferred calls of partner_svc (read them through the view deferred_calls)';

-- pg_dump keeps the queue and its sequence; a restored queue is held by
-- its origin (docs/backups.md)
SELECT pg_catalog.pg_extension_config_dump('@extschema@.deferred_queue', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.deferred_queue_id_seq', '');

CREATE VIEW @extschema@.deferred_calls WITH (security_barrier) AS
  SELECT q.id, q.operation, q.args, q.server, q.role, q.state, q.attempts,
         q.next_attempt_at, q.answer, q.sqlstate, q.message, q.created_at,
         q.done_at,
         q.state IN ('queued', 'sending') AND q.origin <> @extschema@.deferred_origin() AS held
  FROM @extschema@.deferred_queue q
  WHERE q.role OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles r
                                        WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
     OR pg_catalog.pg_has_role(CURRENT_USER, 'pg_read_all_stats', 'USAGE');

COMMENT ON VIEW @extschema@.deferred_calls
IS 'deferred calls: one row per call (a role sees its own; superusers and pg_read_all_stats all)';

GRANT SELECT ON @extschema@.deferred_calls TO PUBLIC;

CREATE FUNCTION @extschema@.defer(operation pg_catalog.text,
    args pg_catalog.jsonb DEFAULT '{}', server pg_catalog.name DEFAULT NULL)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'psvc_deferred_defer'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.defer(pg_catalog.text, pg_catalog.jsonb, pg_catalog.name)
IS 'queues a call of a function that changes state at a partner, sent once after COMMIT; returns its id';

CREATE FUNCTION @extschema@.deferred_result(id pg_catalog.int8,
    wait pg_catalog.interval DEFAULT '0')
RETURNS pg_catalog.jsonb
AS 'MODULE_PATHNAME', 'psvc_deferred_result'
LANGUAGE C VOLATILE STRICT;

COMMENT ON FUNCTION @extschema@.deferred_result(pg_catalog.int8, pg_catalog.interval)
IS 'the answer of a deferred call, or its error raised; waits up to wait for it to finish';

-- Held calls (queued in another cluster or database, restored from a
-- dump): released to be sent here, or cancelled.  Superusers decide.
CREATE FUNCTION @extschema@.deferred_release(ids pg_catalog.int8[] DEFAULT NULL)
RETURNS pg_catalog.int8
LANGUAGE sql VOLATILE
AS $$
  WITH r AS (
    UPDATE @extschema@.deferred_queue
       SET origin = @extschema@.deferred_origin(), next_attempt_at = pg_catalog.now(),
           sender = NULL
     WHERE origin <> @extschema@.deferred_origin()
       AND state IN ('queued', 'sending')
       AND (ids IS NULL OR id = ANY (ids))
    RETURNING 1)
  SELECT pg_catalog.count(*) FROM r
$$;

CREATE FUNCTION @extschema@.deferred_cancel(ids pg_catalog.int8[] DEFAULT NULL)
RETURNS pg_catalog.int8
LANGUAGE sql VOLATILE
AS $$
  WITH r AS (
    UPDATE @extschema@.deferred_queue
       SET state = 'failed', sqlstate = '57014',
           message = 'deferred call cancelled by deferred_cancel()',
           detail = NULL, hint = NULL, done_at = pg_catalog.now()
     WHERE origin <> @extschema@.deferred_origin()
       AND state IN ('queued', 'sending')
       AND (ids IS NULL OR id = ANY (ids))
    RETURNING 1)
  SELECT pg_catalog.count(*) FROM r
$$;

REVOKE ALL ON FUNCTION @extschema@.deferred_release(pg_catalog.int8[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.deferred_cancel(pg_catalog.int8[]) FROM PUBLIC;

COMMENT ON FUNCTION @extschema@.deferred_release(pg_catalog.int8[])
IS 'lets the senders send held deferred calls (restored from another cluster or database); returns how many';
COMMENT ON FUNCTION @extschema@.deferred_cancel(pg_catalog.int8[])
IS 'marks held deferred calls failed without sending them; returns how many';
