/*-------------------------------------------------------------------------
 *
 * deferred_sender.c
 *		  The senders of deferred calls: background workers that claim
 *		  committed calls from partner_svc.deferred_queue and send them
 *		  (deferred_send.c); the first of them also gives up on calls past
 *		  give_up and removes finished ones past keep_calls.
 *
 * Design notes:
 *
 * - Sender 0 is registered by _PG_init when preloaded (backend type
 *   "partner_svc deferred sender") and always runs.  Until it has seen the
 *   partner_svc.worker_database and worker_role usable since the server
 *   started, it looks them up without connecting first, and then hands
 *   over to a sender 0 that connects, a dynamic worker restarted as the
 *   first one is, and exits with code 0 (deferred_checks.c,
 *   wait_for_database): a missing database costs a WARNING, not a FATAL
 *   every few seconds, and a normal start logs no exit.  The others, up to
 *   partner_svc.deferred_senders, are dynamic workers that a sender
 *   starts when the calls it found are more than it takes and no sender
 *   is idle, and that a commit which queued calls starts when no sender
 *   is idle (one may hang in a request: deferred_queue.c); they exit
 *   after PSVC_DEF_HELPER_IDLE_MS without work, so an
 *   idle queue holds one slot of max_worker_processes.  All connect to
 *   partner_svc.worker_database as partner_svc.worker_role, and wait while the
 *   extension (at 0.3) is not there.
 * - A sender sleeps on its latch; a committing backend that queued calls
 *   sets it (deferred_queue.c, deferred_int.h).  Sender 0 also wakes for
 *   calls waiting for a retry and for its maintenance, at most every
 *   second; the others sleep up to 10 s when idle.
 * - Claiming: the candidates are the calls that are due and the first
 *   unfinished call of every lane they are in (a lane is a partner object
 *   of one role and server, or the queuing transaction's calls of one
 *   role); a sender takes its share of them (the candidates divided by
 *   senders, 1 to PSVC_DEF_BATCH), in turns of the roles, with
 *   FOR UPDATE SKIP LOCKED, marks them sending (attempts + 1, the
 *   sender's slot) and commits: that commit is the durable mark that a
 *   request may leave.  When candidates are left it wakes an idle sender,
 *   or starts one.
 * - Calls left sending by a sender that is gone are given up (sender =
 *   NULL) by sender 0 when it starts and every second after, and by a
 *   sender that starts for its own slot; a call sending with no sender is
 *   claimed again and sent as a resumption (deferred_send.c).  After a
 *   crash of any process the postmaster restarts sender 0 only (with
 *   shared memory anew), so such calls are those in flight.
 * - Only calls of this cluster and database are claimed (origin); held
 *   ones wait for deferred_release() or deferred_cancel().
 * - An ERROR outside a call (a call's own errors are caught and recorded)
 *   is reported, the transaction aborted, and the loop goes on after a
 *   pause growing to 5 s, as the webhook worker does.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/deferred/deferred_sender.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "bgw.h"
#include "deferred_int.h"
#include "extversion.h"
#include "guc.h"
#include "pg_compat.h"

/* Calls claimed at once by one sender. */
#define PSVC_DEF_BATCH 16
/* Candidates read at once: enough for every sender's batch, twice. */
#define PSVC_DEF_CANDIDATES 1024
/* Unfinished calls of each role the candidates are looked for among, first. */
#define PSVC_DEF_WINDOW 2048
#define PSVC_DEF_IDLE_MS 10000
/* A sender other than 0 exits after this long without work. */
#define PSVC_DEF_HELPER_IDLE_MS 10000
#define PSVC_DEF_TICK_MS 1000
#define PSVC_DEF_ERROR_PAUSE_MAX_MS 5000
/* Looks for a missing database: after 5 s, doubling up to 60 s. */
#define PSVC_DEF_CHECK_FIRST_MS 5000
#define PSVC_DEF_CHECK_MAX_MS 60000
/* Finished calls removed per statement of the maintenance. */
#define PSVC_DEF_PRUNE_ROWS 10000

PGDLLEXPORT void psvc_deferred_sender_main(Datum arg);

static int	my_slot = -1;
static MemoryContext claim_cxt = NULL;
static TimestampTz next_maintenance = 0;
static TimestampTz last_work = 0;
static Oid	worker_user = InvalidOid;	/* partner_svc.worker_role */

/*
 * The claim (see the file header), in two statements.  The candidates
 * ($1 the origin): a lane's head is its unfinished call with the smallest
 * id, and the calls that are the heads of all their lanes and due are
 * the candidates; every step is a sort or a hash over the unfinished
 * calls' lanes, never a scan per call.  They are looked for among the
 * first $2 unfinished calls (by id) of each role that has any (the roles
 * found by a skip scan of the index on (role, id); a role's calls read
 * from the row (role, id) on, in that index's order, so that the planner
 * cannot prefer the primary key's order and filter the role), which is exact for
 * those (a lane holds the calls of one role, deferred_queue.c, so an
 * earlier call of a lane is among its role's first calls too) and keeps a
 * claim's cost bounded however long one role's queue; when none of them
 * is a candidate although a role has more, among all ($2 NULL).  The
 * candidates come in turns of the roles: every role's first candidate
 * (by id), then every role's second, and so on, so that one role's
 * backlog, however long, never holds another role's call for more than
 * a round of the senders.  Calls held from another origin are not in any
 * lane.  The candidates are read without locks, so that a row another
 * sender claims meanwhile is rechecked by the cheap second statement
 * only, never by this one (EvalPlanQual would run it again per row).
 */
static const char *const candidates_sql =
"WITH RECURSIVE roles(r) AS ("
"  (SELECT u.role::pg_catalog.oid FROM partner_svc.deferred_queue u"
"   WHERE u.state IN ('queued', 'sending') AND u.origin = $1"
"   ORDER BY u.role::pg_catalog.oid LIMIT 1)"
"  UNION ALL"
"  SELECT (SELECT u.role::pg_catalog.oid FROM partner_svc.deferred_queue u"
"          WHERE u.state IN ('queued', 'sending') AND u.origin = $1"
"            AND u.role::pg_catalog.oid OPERATOR(pg_catalog.>) roles.r"
"          ORDER BY u.role::pg_catalog.oid LIMIT 1)"
"  FROM roles WHERE roles.r IS NOT NULL),"
" w AS MATERIALIZED ("
"  SELECT f.id, f.lanes, roles.r FROM roles, LATERAL ("
"    SELECT u.id, u.lanes, u.role FROM partner_svc.deferred_queue u"
"    WHERE (u.role::pg_catalog.oid, u.id) > (roles.r, 0::pg_catalog.int8)"
"      AND (u.role::pg_catalog.oid, u.id) <= (roles.r, 9223372036854775807::pg_catalog.int8)"
"      AND u.state IN ('queued', 'sending') AND u.origin = $1"
"    ORDER BY u.role::pg_catalog.oid, u.id LIMIT $2) f"
"  WHERE roles.r IS NOT NULL AND f.role::pg_catalog.oid = roles.r)"
"SELECT (SELECT pg_catalog.array_agg(x.id ORDER BY x.turn, x.id) FROM ("
"  SELECT e.id, pg_catalog.row_number() OVER (PARTITION BY e.r ORDER BY e.id) AS turn"
"  FROM ("
"   SELECT ul.id, ul.r FROM ("
"     SELECT s.id, s.r, pg_catalog.min(s.id) OVER (PARTITION BY s.l) AS head"
"     FROM (SELECT w.id, w.r, pg_catalog.unnest(w.lanes) AS l FROM w) s) ul"
"   GROUP BY ul.id, ul.r HAVING pg_catalog.bool_and(ul.head = ul.id)) e"
"  JOIN partner_svc.deferred_queue q ON q.id = e.id"
"  WHERE ((q.state = 'queued' AND q.next_attempt_at <= pg_catalog.now())"
"      OR (q.state = 'sending' AND q.sender IS NULL))"
"  ORDER BY turn, e.id LIMIT " CppAsString2(PSVC_DEF_CANDIDATES) ") x),"
" (SELECT COALESCE(pg_catalog.max(z.n), 0) FROM"
"   (SELECT pg_catalog.count(*) AS n FROM w GROUP BY w.r) z)";

/*
 * Claims candidates ($4, in their order) that are still claimable: a row
 * claimed by another sender since the candidates were read is locked
 * (skipped) or no longer matches when rechecked.  The last column is the
 * call's place among the candidates, the order it is sent in.
 */
static const char *const claim_sql =
"WITH c AS ("
"  SELECT q.id, k.ord, q.state AS old_state, q.sent_at IS NOT NULL AS was_sent,"
"         COALESCE((q.checkpoint ->> 'size')::int8, -1) AS from_size"
"  FROM pg_catalog.unnest($4::pg_catalog.int8[]) WITH ORDINALITY AS k(id, ord)"
"  JOIN partner_svc.deferred_queue q ON q.id = k.id"
"  WHERE q.origin = $2"
"    AND ((q.state = 'queued' AND q.next_attempt_at <= pg_catalog.now())"
"      OR (q.state = 'sending' AND q.sender IS NULL))"
"  ORDER BY k.ord LIMIT $3 FOR UPDATE OF q SKIP LOCKED)"
" UPDATE partner_svc.deferred_queue q"
"   SET state = 'sending', attempts = q.attempts + 1, sender = $1,"
"       next_attempt_at = pg_catalog.clock_timestamp()"
"  FROM c WHERE q.id = c.id"
" RETURNING q.id, q.operation, q.args, q.server, q.role::pg_catalog.oid, q.attempts,"
"   c.old_state = 'sending' OR q.attempts > 1, c.was_sent, q.created_at, c.from_size,"
"   c.old_state = 'sending' OR q.checkpoint ? 'look_first', c.ord";

/*
 * Sorts the n (at most PSVC_DEF_BATCH) rows claim_sql returned by their
 * place among the candidates, its last column.
 */
static void
sort_by_ord(HeapTuple *rows, int n, TupleDesc desc)
{
	for (int i = 1; i < n; i++)
	{
		HeapTuple	t = rows[i];
		bool		isnull;
		int64		ord = DatumGetInt64(SPI_getbinval(t, desc, desc->natts, &isnull));
		int			j = i;

		for (; j > 0 &&
			 DatumGetInt64(SPI_getbinval(rows[j - 1], desc, desc->natts, &isnull)) > ord; j--)
			rows[j] = rows[j - 1];
		rows[j] = t;
	}
}

/* Clears the slot at every exit. */
static void
sender_exit(int code, Datum arg)
{
	if (psvc_def_shared == NULL || my_slot < 0)
		return;
	SpinLockAcquire(&psvc_def_shared->mutex);
	/* the database or role went away: look before connecting again */
	if (psvc_bgw_in_connect() && !ProcDiePending)
		psvc_def_shared->db_ok = false;
	psvc_def_shared->slots[my_slot].pid = 0;
	psvc_def_shared->slots[my_slot].latch = NULL;
	psvc_def_shared->slots[my_slot].idle = false;
	SpinLockRelease(&psvc_def_shared->mutex);
}

/*
 * Gives the slot up unless a backend woke this sender since it last
 * looked for calls (then the wake-up is not lost: it looks again).
 */
static bool
leave_slot(void)
{
	PsvcDefSlot *s = &psvc_def_shared->slots[my_slot];
	bool		left = false;

	SpinLockAcquire(&psvc_def_shared->mutex);
	if (!s->woken)
	{
		s->pid = 0;
		s->latch = NULL;
		s->idle = false;
		left = true;
	}
	SpinLockRelease(&psvc_def_shared->mutex);
	if (left)
		my_slot = -1;			/* sender_exit has nothing left to clear */
	return left;
}

/* Marks the slot busy; returns the generation seen. */
static uint64
slot_busy(void)
{
	uint64		g;
	PsvcDefSlot *s = &psvc_def_shared->slots[my_slot];

	SpinLockAcquire(&psvc_def_shared->mutex);
	s->idle = false;
	s->woken = false;
	g = psvc_def_shared->generation;
	SpinLockRelease(&psvc_def_shared->mutex);
	return g;
}

/* Marks the slot idle unless a commit came since generation g. */
static bool
slot_idle(uint64 g)
{
	bool		ok;

	SpinLockAcquire(&psvc_def_shared->mutex);
	ok = (psvc_def_shared->generation == g);
	if (ok)
		psvc_def_shared->slots[my_slot].idle = true;
	SpinLockRelease(&psvc_def_shared->mutex);
	return ok;
}

/* Whether partner_svc with its queue is in this database. */
static bool
queue_exists(void)
{
	Oid			nsp;

	if (!OidIsValid(get_extension_oid("partner_svc", true)))
		return false;
	nsp = get_namespace_oid("partner_svc", true);
	return OidIsValid(nsp) && OidIsValid(get_relname_relid("deferred_queue", nsp));
}

/* Runs sql with SPI (inside a transaction), expecting ok. */
static void
run(const char *sql, int nargs, Oid *types, Datum *values, int ok)
{
	if (SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0) != ok)
		elog(ERROR, "partner_svc deferred sender: failed: %s", sql);
}

/* The slots whose sender runs, as an int4[]. */
static Datum
alive_slots(void)
{
	Datum		elems[PSVC_DEF_MAX_SENDERS];
	int			n = 0;

	SpinLockAcquire(&psvc_def_shared->mutex);
	for (int i = 0; i < PSVC_DEF_MAX_SENDERS; i++)
		if (psvc_def_shared->slots[i].pid > 0)
			elems[n++] = Int32GetDatum(i);
	SpinLockRelease(&psvc_def_shared->mutex);
	return PointerGetDatum(construct_array(elems, n, INT4OID, 4, true, TYPALIGN_INT));
}

/*
 * The calls left sending by senders that are gone become the senders' to
 * resume: sender 0's those of every slot without a sender, another
 * sender's its own slot's (it has just started in it).
 */
static void
orphan_calls(void)
{
	Oid			types[4] = {INT4OID, TEXTOID, INT4ARRAYOID, TIMESTAMPTZOID};
	Datum		values[4];

	/*
	 * A sender that starts after the slots are read claims after then: its
	 * calls' next_attempt_at (the claim's time) is later than $4, so they
	 * are not taken from it.
	 */
	values[3] = TimestampTzGetDatum(GetCurrentTimestamp());
	values[0] = Int32GetDatum(my_slot);
	values[1] = CStringGetTextDatum(psvc_def_origin());
	values[2] = alive_slots();
	run("UPDATE partner_svc.deferred_queue SET sender = NULL"
		" WHERE state = 'sending' AND origin = $2 AND sender IS NOT NULL"
		"   AND (sender = $1 OR ($1 = 0 AND NOT (sender = ANY ($3)) AND next_attempt_at < $4))",
		4, types, values, SPI_OK_UPDATE);
}

/*
 * Sender 0's maintenance: calls queued past give_up (partners' clock)
 * fail with their last error; finished calls past keep_calls go.
 */
static void
maintenance(void)
{
	Oid			types[2] = {TEXTOID, FLOAT8OID};
	Datum		values[2];

	values[0] = CStringGetTextDatum(psvc_def_origin());
	values[1] = Float8GetDatum(psvc_guc_tasks.give_up * psvc_guc_time_scale);
	if (SPI_execute_with_args(
							  "UPDATE partner_svc.deferred_queue"
							  "   SET state = 'failed', done_at = pg_catalog.clock_timestamp(),"
							  "       sqlstate = COALESCE(sqlstate, '57014'),"
							  "       message = COALESCE(message, 'deferred call not sent before give_up'),"
							  "       detail = 'It was given up after ' || $2 || ' seconds.'"
							  " WHERE state = 'queued' AND origin = $1"
							  "   AND created_at + $2 * interval '1 second' < pg_catalog.now()"
							  /* a call whose last attempt is due at give_up gets it */
							  "   AND next_attempt_at < created_at + $2 * interval '1 second'"
							  " RETURNING id", 2, types, values, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "partner_svc deferred sender: give-up failed");
	for (uint64 i = 0; i < SPI_processed; i++)
		Async_Notify("partner_svc_deferred",
					 SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	if (psvc_guc_tasks.keep_calls > 0)
	{
		Oid			t[1] = {INT4OID};
		Datum		v[1] = {Int32GetDatum(psvc_guc_tasks.keep_calls)};

		run("DELETE FROM partner_svc.deferred_queue WHERE id IN ("
			" SELECT id FROM partner_svc.deferred_queue"
			" WHERE done_at IS NOT NULL AND state IN ('done', 'failed')"
			"   AND done_at < pg_catalog.now() - $1 * interval '1 second'"
			" LIMIT " CppAsString2(PSVC_DEF_PRUNE_ROWS) ")",
			1, t, v, SPI_OK_DELETE);
	}
}

/*
 * Claims up to PSVC_DEF_BATCH calls into calls (claim_cxt) and commits;
 * also runs the first-time and periodic duties.  Returns how many; *wait_ms
 * receives how long to sleep when none.
 */
static int
claim(PsvcDefCall *calls, bool first, long *wait_ms, int *left)
{
	Oid			types[4] = {INT4OID, TEXTOID, INT4OID, INT8ARRAYOID};
	Datum		values[4];
	bool		cand_null;
	int			n = 0;
	int			ncand;
	int			batch;
	Oid			saved_user;
	int			saved_sec;
	bool		switched = false;

	*left = 0;
	*wait_ms = my_slot == 0 ? PSVC_DEF_TICK_MS : PSVC_DEF_IDLE_MS;
	if (!psvc_extv_ready("partner_svc deferred sender"))
		return 0;				/* objects of another version: docs/upgrades.md */
	MemoryContextReset(claim_cxt);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (!queue_exists())
	{
		*wait_ms = 5000;
		goto out;
	}
	/* the queue is the extension owner's, whatever role the worker has */
	GetUserIdAndSecContext(&saved_user, &saved_sec);
	SetUserIdAndSecContext(psvc_def_queue_owner(), saved_sec | SECURITY_LOCAL_USERID_CHANGE);
	switched = true;
	if (first || (my_slot == 0 && GetCurrentTimestamp() >= next_maintenance))
		orphan_calls();
	if (my_slot == 0 && GetCurrentTimestamp() >= next_maintenance)
	{
		maintenance();
		next_maintenance = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), PSVC_DEF_TICK_MS);
	}
	values[0] = Int32GetDatum(my_slot);
	values[1] = CStringGetTextDatum(psvc_def_origin());
	values[2] = Int32GetDatum(PSVC_DEF_BATCH);
	for (int pass = 0; pass < 2; pass++)
	{
		Oid			ct[2] = {TEXTOID, INT4OID};
		Datum		cv[2] = {values[1], Int32GetDatum(PSVC_DEF_WINDOW)};
		char		cn[2] = {' ', pass == 0 ? ' ' : 'n'};
		bool		isnull;
		int64		in_window;

		if (SPI_execute_with_args(candidates_sql, 2, ct, cv, cn, true, 1) != SPI_OK_SELECT ||
			SPI_processed != 1)
			elog(ERROR, "partner_svc deferred sender: reading the candidates failed");
		values[3] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &cand_null);
		in_window = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
		if (!cand_null || in_window < PSVC_DEF_WINDOW)
			break;
	}
	if (cand_null)
		goto due;
	/* this sender's share, so that the others get theirs at once */
	ncand = ArrayGetNItems(ARR_NDIM(DatumGetArrayTypeP(values[3])),
						   ARR_DIMS(DatumGetArrayTypeP(values[3])));
	batch = Max(1, Min(PSVC_DEF_BATCH,
					   (ncand + psvc_guc_tasks.senders - 1) / Max(psvc_guc_tasks.senders, 1)));
	values[2] = Int32GetDatum(batch);
	if (SPI_execute_with_args(claim_sql, 4, types, values, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "partner_svc deferred sender: the claim failed");
	/* sent in the order of the candidates (UPDATE returns in any order) */
	sort_by_ord(SPI_tuptable->vals, (int) SPI_processed, SPI_tuptable->tupdesc);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		PsvcDefCall *c = &calls[n++];
		bool		isnull;
		MemoryContext old = MemoryContextSwitchTo(claim_cxt);

		c->id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		c->operation = SPI_getvalue(tup, desc, 2);
		c->args = DatumGetJsonbPCopy(SPI_getbinval(tup, desc, 3, &isnull));
		c->server = SPI_getvalue(tup, desc, 4);
		c->roleid = DatumGetObjectId(SPI_getbinval(tup, desc, 5, &isnull));
		c->attempts = DatumGetInt32(SPI_getbinval(tup, desc, 6, &isnull));
		c->resume = DatumGetBool(SPI_getbinval(tup, desc, 7, &isnull));
		c->was_sent = DatumGetBool(SPI_getbinval(tup, desc, 8, &isnull));
		c->created_at = DatumGetTimestampTz(SPI_getbinval(tup, desc, 9, &isnull));
		c->from_size = DatumGetInt64(SPI_getbinval(tup, desc, 10, &isnull));
		c->look_first = DatumGetBool(SPI_getbinval(tup, desc, 11, &isnull));
		MemoryContextSwitchTo(old);
	}
	*left = Max(0, ncand - n);
due:
	/* sender 0 wakes for the next retry that is due */
	if (n == 0 && my_slot == 0)
	{
		Oid			t[1] = {TEXTOID};
		Datum		v[1] = {values[1]};

		if (SPI_execute_with_args("SELECT pg_catalog.ceil(1000 * EXTRACT(epoch FROM"
								  " pg_catalog.min(next_attempt_at) - pg_catalog.clock_timestamp()))::int8"
								  " FROM partner_svc.deferred_queue"
								  " WHERE state = 'queued' AND origin = $1",
								  1, t, v, NULL, true, 1) == SPI_OK_SELECT && SPI_processed == 1)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

			if (!isnull)
				*wait_ms = Max(1, Min(*wait_ms, DatumGetInt64(d)));
		}
	}
out:
	if (switched)
		SetUserIdAndSecContext(saved_user, saved_sec);
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	return n;
}

/* The error recovery of the loop; returns the pause before going on. */
static long
recover_from_error(int *errors)
{
	FreeErrorData(psvc_bgw_recover());
	/* the worker's own role again (an abort returns to the transaction's) */
	SetUserIdAndSecContext(worker_user, 0);
	RESUME_INTERRUPTS();
	(*errors)++;
	/* a pause after the first error too */
	return psvc_bgw_error_pause(*errors + 1, PSVC_DEF_ERROR_PAUSE_MAX_MS);
}

/* Settings of the senders' own transactions, whatever the role's defaults. */
static void
pin_settings(void)
{
	psvc_bgw_pin_settings(-1);
	SetConfigOption("statement_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
}

/*
 * Sender 0 has not seen partner_svc.worker_database and worker_role usable
 * since the server started (or a connect failed): connects to no
 * database and looks them up (deferred_checks.c), again after pauses from
 * 5 s doubling to 60 s, with one WARNING per problem; once they are
 * usable, hands slot 0 to a new process that connects, a dynamic worker
 * restarted as sender 0 is (PSVC_DEF_SENDER0_RESTART_S), and exits with
 * code 0, which the postmaster takes for done: nothing is logged, and
 * this registration ends.  When PostgreSQL has no room for that worker,
 * it exits with code 1 instead, and the postmaster starts it again to
 * connect.  Never returns.
 */
static void
wait_check(char *problem, size_t len, const char *logged)
{
	psvc_def_connect_problem(psvc_def_database(), psvc_guc_worker.role, problem, len);
	if (problem[0] != '\0')
		return;
	SpinLockAcquire(&psvc_def_shared->mutex);
	psvc_def_shared->db_ok = true;
	SpinLockRelease(&psvc_def_shared->mutex);
	proc_exit(psvc_def_register_sender(0, PSVC_DEF_SENDER0_RESTART_S) ? 0 : 1);
}

static void
wait_for_database(void)
{
	PsvcBgwDbWait w = {
		.who = "partner_svc deferred sender",
		.hint = "Deferred calls are sent once partner_svc.worker_database and partner_svc.worker_role can be used; it checks again after pauses growing to %d seconds.",
		.activity = "waiting for partner_svc.worker_database",
		.wait_event = psvc_wait_event(PSVC_WAIT_SENDER_IDLE),
		.first_ms = PSVC_DEF_CHECK_FIRST_MS,
		.max_ms = PSVC_DEF_CHECK_MAX_MS,
		.check = wait_check,
	};

	psvc_bgw_wait_for_database(&w);
}

/*
 * Entry point of a sender (bgw_function_name); arg is its slot.  Returns
 * only through proc_exit.
 */
void
psvc_deferred_sender_main(Datum arg)
{
	sigjmp_buf	local_sigjmp_buf;
	volatile long pause_ms = 0;
	volatile bool first = true;
	int			errors = 0;
	bool		db_ok;
	PsvcDefCall calls[PSVC_DEF_BATCH];

	my_slot = DatumGetInt32(arg);
	psvc_bgw_signals();
	if (psvc_def_shared == NULL || my_slot < 0 || my_slot >= PSVC_DEF_MAX_SENDERS)
		proc_exit(0);
	before_shmem_exit(sender_exit, (Datum) 0);
	SpinLockAcquire(&psvc_def_shared->mutex);
	db_ok = psvc_def_shared->db_ok;
	SpinLockRelease(&psvc_def_shared->mutex);
	if (!db_ok && my_slot == 0)
		wait_for_database();	/* does not return */
	if (!db_ok)
		proc_exit(0);			/* a helper: sender 0 looks first */
	psvc_bgw_connect(psvc_def_database());
	pin_settings();
	worker_user = GetUserId();
	claim_cxt = AllocSetContextCreate(TopMemoryContext, "partner_svc deferred claim",
									  ALLOCSET_DEFAULT_SIZES);

	SpinLockAcquire(&psvc_def_shared->mutex);
	if (psvc_def_shared->slots[my_slot].pid != 0)
	{
		/* a sender runs in this slot already */
		SpinLockRelease(&psvc_def_shared->mutex);
		my_slot = -1;
		proc_exit(0);
	}
	psvc_def_shared->slots[my_slot].pid = MyProcPid;
	psvc_def_shared->slots[my_slot].latch = MyLatch;
	psvc_def_shared->slots[my_slot].idle = false;
	psvc_def_shared->slots[my_slot].woken = false;
	psvc_def_shared->slots[my_slot].starting = 0;
	SpinLockRelease(&psvc_def_shared->mutex);
	last_work = GetCurrentTimestamp();

	if (sigsetjmp(local_sigjmp_buf, 1) != 0)
		pause_ms = recover_from_error(&errors);
	PG_exception_stack = &local_sigjmp_buf;

	for (;;)
	{
		uint64		g;
		int			n;
		int			left;
		long		wait_ms;

		if (psvc_bgw_turn(&pause_ms, psvc_wait_event(PSVC_WAIT_SENDER_IDLE)))
			pin_settings();
		/* a sender beyond the setting, or one without work for long, goes */
		if (my_slot != 0 &&
			(my_slot >= psvc_guc_tasks.senders ||
			 TimestampDifferenceExceeds(last_work, GetCurrentTimestamp(),
										PSVC_DEF_HELPER_IDLE_MS)) &&
			leave_slot())
			proc_exit(0);

		g = slot_busy();
		n = claim(calls, first, &wait_ms, &left);
		first = false;
		if (n > 0)
		{
			if (left > 0)
				psvc_def_wake_other(my_slot);
			pgstat_report_activity(STATE_RUNNING, "sending deferred calls");
			psvc_def_send_calls(calls, n);
			errors = 0;
			last_work = GetCurrentTimestamp();
			continue;
		}
		errors = 0;
		if (!slot_idle(g))
			continue;
		if (my_slot != 0)
			wait_ms = Min(wait_ms, PSVC_DEF_HELPER_IDLE_MS);
		pgstat_report_activity(STATE_IDLE, "waiting for deferred calls");
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait_ms, psvc_wait_event(PSVC_WAIT_SENDER_IDLE));
		ResetLatch(MyLatch);
	}
}
