-- 0.3 -> 0.4, deferred calls: lanes per role and server, claims in turns
-- of the roles (docs/deferred-calls.md#order, src/deferred/).

-- the unfinished calls of each role in id order: the claim's turns of the
-- roles and the cap partner_svc.deferred_max_per_role (src/deferred/); it
-- replaces the index of all unfinished calls in id order, which the claim
-- no longer reads (and which the planner would take for a role's calls)
DROP INDEX @extschema@.deferred_queue_unfinished;
CREATE INDEX deferred_queue_unfinished_role ON @extschema@.deferred_queue ((role::pg_catalog.oid), id)
  WHERE state IN ('queued', 'sending');

-- A 0.3 lane ("order:A-17", "xact:731") was shared by every role, server
-- and account; the claim now looks for a lane's first call among its own
-- role's calls, so the unfinished calls' lanes get the scope that defer()
-- of 0.4 gives them ("<role oid>/<server>/order:A-17", "<role oid>/xact:731";
-- the server as quote_ident writes it, empty for the default server).
UPDATE @extschema@.deferred_queue q
   SET lanes = ARRAY(
     SELECT CASE WHEN t.l LIKE 'xact:%'
                 THEN q.role::pg_catalog.oid::pg_catalog.text || '/' || t.l
                 ELSE q.role::pg_catalog.oid::pg_catalog.text || '/'
                      || COALESCE(pg_catalog.quote_ident(q.server::pg_catalog.text), '') || '/' || t.l
            END
     FROM pg_catalog.unnest(q.lanes) WITH ORDINALITY AS t(l, o) ORDER BY t.o)
 WHERE q.state IN ('queued', 'sending');
