/*-------------------------------------------------------------------------
 *
 * deferred_queue.c
 *		  The queuing side of deferred calls: partner_svc.defer(),
 *		  deferred_result() and deferred_origin(); the wake-up of a sender
 *		  at COMMIT; the senders' shared slots and their registration.
 *
 * defer() checks the call (deferred_ops.c) and inserts its row into
 * partner_svc.deferred_queue in the caller's transaction, so a rollback
 * (of the transaction or of a subtransaction) takes the call back with
 * it; the row is written as the table's owner, the caller's role is
 * recorded in it by OID (a renamed role keeps its calls; a new role of a
 * dropped one's name never gets them; deferred_send.c).  A transaction
 * callback then sets, at XACT_EVENT_COMMIT (after the commit is visible
 * to others), the latch of one idle sender (deferred_int.h has the
 * protocol), or starts a sender when none is idle, so that a sender stuck
 * in a request never holds calls of other lanes; a transaction that
 * queued nothing costs nothing at commit.  A call's lanes are scoped by
 * its role and server (role_lanes), and defer() refuses a role's call
 * beyond partner_svc.deferred_max_per_role unfinished ones.
 *
 * Each row records its origin, the system identifier of the cluster and
 * the OID of the database it was queued in.  A queue restored from a dump
 * into another cluster or database has another origin, and the senders
 * hold its calls until deferred_release() or deferred_cancel()
 * (docs/backups.md).
 *
 * deferred_result() reads the row with the latest snapshot, whatever the
 * isolation level, so a REPEATABLE READ transaction sees the call finish
 * too; it waits on its latch in short sleeps.
 *
 * Memory: CurrentMemoryContext of the SQL function; shared memory for
 * the slots.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/deferred/deferred_queue.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "bgstats.h"
#include "deferred.h"
#include "bgw.h"
#include "deferred_int.h"
#include "guc.h"
#include "pg_compat.h"
#include "segments.h"

/* How long deferred_result() sleeps between two reads, at most. */
#define PSVC_DEF_RESULT_SLEEP_MS 2

PsvcDefShared *psvc_def_shared = NULL;

static bool xact_callback_registered = false;
static bool queued_in_xact = false;

PG_FUNCTION_INFO_V1(psvc_deferred_defer);
PG_FUNCTION_INFO_V1(psvc_deferred_result);
PG_FUNCTION_INFO_V1(psvc_deferred_origin);

static Size
def_shmem_size(void)
{
	return MAXALIGN(sizeof(PsvcDefShared));
}

static void
def_shmem_startup(void)
{
	bool		found;

	psvc_def_shared = ShmemInitStruct("partner_svc deferred senders",
									  sizeof(PsvcDefShared), &found);
	if (!found)
	{
		memset(psvc_def_shared, 0, sizeof(PsvcDefShared));
		SpinLockInit(&psvc_def_shared->mutex);
	}
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_def_segment = {
	.size = def_shmem_size,
	.startup = def_shmem_startup,
};

void
psvc_deferred_init(void)
{
	/*
	 * No sender in the servers pg_upgrade runs (binary-upgrade mode): the
	 * old one's would send calls while the DBA has the cluster down for
	 * the upgrade, and the new one's would hold database postgres (the
	 * default of partner_svc.worker_database) open, which pg_upgrade drops and
	 * recreates.  The dynamic senders are started by sender 0 alone.
	 *
	 * Sender 0 always runs; it and the others start more senders as
	 * dynamic workers while there is work for them (deferred_sender.c),
	 * so idle senders hold no slot of max_worker_processes.
	 */
	if (psvc_bgw_may_register("partner_svc deferred senders stay stopped",
							  "Correct partner_svc.worker_database and partner_svc.worker_role and restart the server; until then deferred calls stay queued."))
	{
		PsvcBgwSpec spec = {
			.name = "partner_svc deferred sender 0",
			.type = "partner_svc deferred sender",
			.function = "psvc_deferred_sender_main",
			.database = true,
			.start = BgWorkerStart_RecoveryFinished,
			.restart_s = PSVC_DEF_SENDER0_RESTART_S,
			.arg = Int32GetDatum(0),
		};

		psvc_bgw_register(&spec);
	}
}

/*
 * Registers the sender of slot as a dynamic worker that the postmaster
 * starts again restart_time seconds after it exits with code 1 (or
 * never); false when PostgreSQL has no room for it (max_worker_processes).
 * Raises nothing (a committing backend calls it after its commit).
 */
bool
psvc_def_register_sender(int slot, int restart_time)
{
	char		name[BGW_MAXLEN];
	PsvcBgwSpec spec = {
		.name = name,
		.type = "partner_svc deferred sender",
		.function = "psvc_deferred_sender_main",
		.database = true,
		.start = BgWorkerStart_RecoveryFinished,
		.restart_s = restart_time,
		.arg = Int32GetDatum(slot),
	};

	snprintf(name, sizeof(name), "partner_svc deferred sender %d", slot);
	return psvc_bgw_start(&spec);
}

/*
 * Starts the sender of slot as a dynamic worker; false when PostgreSQL has
 * no room for it (max_worker_processes), which this process logs once.
 */
static bool
start_sender(int slot)
{
	static bool warned = false;

	if (psvc_def_register_sender(slot, BGW_NEVER_RESTART))
		return true;
	if (!warned)
		ereport(LOG,
				(errmsg("partner_svc deferred sender could not start sender %d: no free background worker slot", slot),
				 errhint("Raise max_worker_processes to run up to partner_svc.deferred_senders at once.")));
	warned = true;
	return false;
}

/*
 * Sets the latch of one idle sender not yet woken (other than the slot
 * self, -1 for none); when every running sender is busy, starts one in a
 * free slot below senders, so that calls of other lanes never wait for a
 * sender stuck in a request.  A slot asked for is not asked for again
 * before PSVC_DEF_START_WAIT_MS, so a burst of commits starts one sender
 * per slot.  With bump, counts a generation (a commit that queued calls).
 */
static void
wake_or_start(int self, bool bump)
{
	Latch	   *latch = NULL;
	int			start = -1;
	TimestampTz now = GetCurrentTimestamp();

	SpinLockAcquire(&psvc_def_shared->mutex);
	if (bump)
		psvc_def_shared->generation++;
	for (int i = 0; i < PSVC_DEF_MAX_SENDERS && i < psvc_guc_tasks.senders; i++)
	{
		PsvcDefSlot *s = &psvc_def_shared->slots[i];

		if (i != self && s->pid != 0 && s->idle && !s->woken)
		{
			s->woken = true;
			latch = s->latch;
			break;
		}
		/* slot 0 is sender 0's, which the postmaster restarts */
		if (start < 0 && i > 0 && s->pid == 0 && psvc_def_shared->db_ok &&
			(s->starting == 0 ||
			 TimestampDifferenceExceeds(s->starting, now, PSVC_DEF_START_WAIT_MS)))
			start = i;
	}
	if (latch == NULL && start >= 0)
		psvc_def_shared->slots[start].starting = now;
	SpinLockRelease(&psvc_def_shared->mutex);
	if (latch != NULL)
		SetLatch(latch);
	else if (start >= 0 && !start_sender(start))
	{
		SpinLockAcquire(&psvc_def_shared->mutex);
		psvc_def_shared->slots[start].starting = 0;
		SpinLockRelease(&psvc_def_shared->mutex);
	}
}

void
psvc_def_wake(void)
{
	if (psvc_def_shared == NULL)
		return;
	wake_or_start(-1, true);
}

void
psvc_def_wake_other(int self)
{
	wake_or_start(self, false);
}

const char *
psvc_def_database(void)
{
	return psvc_guc_worker.database;
}

/* Whether the senders serve this database. */
static bool
served_here(void)
{
	char	   *here = get_database_name(MyDatabaseId);

	return here != NULL && strcmp(here, psvc_def_database()) == 0;
}

/*
 * Refuses a call queued where no sender would ever send it: the senders
 * connect to one database and read only its queue, so a call queued in
 * another would stay queued for ever.
 */
static void
check_served_database(void)
{
	const char *served = psvc_def_database();
	char	   *here = get_database_name(MyDatabaseId);

	if (served_here())
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("deferred calls cannot be queued in database \"%s\"", here ? here : "?"),
			 errdetail("The deferred senders serve database \"%s\" only (partner_svc.worker_database); a call queued here would never be sent.",
					   served),
			 errhint("Call partner_svc.defer() in database \"%s\", or set partner_svc.worker_database to this database and restart the server.",
					 served)));
}

char *
psvc_def_origin(void)
{
	return psprintf(UINT64_FORMAT "/%u", GetSystemIdentifier(), MyDatabaseId);
}

/* deferred_origin() RETURNS text */
Datum
psvc_deferred_origin(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(psvc_def_origin()));
}

/* At commit, wakes a sender when this transaction queued calls. */
static void
def_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
			if (queued_in_xact)
				psvc_def_wake();
			queued_in_xact = false;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			queued_in_xact = false;
			break;
		default:
			break;
	}
}

/* The OID of partner_svc.<name>, a relation of the extension. */
static Oid
queue_relid(void)
{
	Oid			nsp = get_namespace_oid("partner_svc", false);
	Oid			relid = get_relname_relid("deferred_queue", nsp);

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("partner_svc.deferred_queue does not exist"),
				 errhint("Update the extension: ALTER EXTENSION partner_svc UPDATE.")));
	return relid;
}

Oid
psvc_def_queue_owner(void)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(queue_relid()));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for partner_svc.deferred_queue");
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/* A text[] of the strings of list. */
static Datum
text_array(List *list)
{
	int			n = list_length(list);
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));
	ListCell   *lc;

	foreach(lc, list)
		elems[foreach_current_index(lc)] = CStringGetTextDatum((char *) lfirst(lc));
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/*
 * The lanes of a call queued by role for server (NULL: the default server
 * of the service): each partner object of objects scoped by the role and
 * the server, "<role oid>/<server>/order:A-17", and the queuing
 * transaction's lane of the role, "<role oid>/xact:<xid>".  A role reaches
 * one partner account through a server (its user mapping's key at the
 * server's base URL), so calls of different accounts never share a lane,
 * and no lane holds calls of two roles: the claim may then look for a
 * lane's first call among the first calls of the lane's role only
 * (deferred_sender.c).  CurrentMemoryContext.
 */
static List *
role_lanes(List *objects, Oid role, const char *server)
{
	List	   *lanes = NIL;
	const char *srv = server ? quote_identifier(server) : "";
	ListCell   *lc;

	foreach(lc, objects)
		lanes = lappend(lanes, psprintf("%u/%s/%s", role, srv, (char *) lfirst(lc)));
	/* the calls of one transaction (and role) go one after the other */
	lanes = lappend(lanes, psprintf("%u/xact:%u", role,
									XidFromFullTransactionId(GetTopFullTransactionId())));
	return lanes;
}

/*
 * Refuses a call of role beyond partner_svc.deferred_max_per_role
 * unfinished calls (queued or sending; of every origin, held ones
 * included), so that no role can queue without end.  The count is the
 * caller's snapshot's: calls that concurrent transactions of the role
 * have not committed yet are not seen, so they may pass it together by
 * their own calls.  Counts at most the cap, through the index of a role's
 * unfinished calls.  Called connected to SPI, as the queue's owner.
 */
static void
check_role_cap(Oid role)
{
	int			cap = psvc_guc_deferred_max_per_role;
	Oid			types[2] = {OIDOID, INT4OID};
	Datum		values[2];
	bool		isnull;
	int64		n;

	if (cap <= 0)
		return;
	values[0] = ObjectIdGetDatum(role);
	values[1] = Int32GetDatum(cap);
	if (SPI_execute_with_args("SELECT pg_catalog.count(*) FROM ("
							  " SELECT 1 FROM partner_svc.deferred_queue"
							  " WHERE role::pg_catalog.oid OPERATOR(pg_catalog.=) $1"
							  "   AND state IN ('queued', 'sending')"
							  " LIMIT $2) s",
							  2, types, values, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not count the deferred calls of the role");
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (n < cap)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("role \"%s\" has %d unfinished deferred calls, the most partner_svc.deferred_max_per_role allows",
					GetUserNameFromId(role, false), cap),
			 errdetail("A deferred call is unfinished while it is queued or sending; calls waiting for a retry and held calls count too."),
			 errhint("Wait until some of the role's calls are done or failed (partner_svc.deferred_calls), or ask a superuser to raise partner_svc.deferred_max_per_role for the role with ALTER ROLE ... SET.")));
}

/*
 * defer(operation text, args jsonb DEFAULT '{}', server name DEFAULT NULL)
 * RETURNS bigint
 */
Datum
psvc_deferred_defer(PG_FUNCTION_ARGS)
{
	char	   *operation;
	Jsonb	   *args;
	char	   *server = NULL;
	List	   *lanes;
	Oid			saved_user;
	int			saved_sec;
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	volatile int64 id = 0;

	/* it writes: refused where PostgreSQL refuses an INSERT */
	PreventCommandIfReadOnly("partner_svc.defer()");
	PreventCommandDuringRecovery("partner_svc.defer()");
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the operation of defer() must not be null")));
	operation = text_to_cstring(PG_GETARG_TEXT_PP(0));
	args = PG_ARGISNULL(1) ?
		DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}"))) :
		PG_GETARG_JSONB_P(1);
	(void) psvc_def_check(operation, args, &lanes);
	if (!PG_ARGISNULL(2))
	{
		/* a server that does not exist or may not be used is refused now */
		ForeignServer *fs;
		AclResult	aclresult;

		server = pstrdup(NameStr(*PG_GETARG_NAME(2)));
		fs = GetForeignServerByName(server, false);
		aclresult = psvc_server_aclcheck(fs->serverid, GetUserId(), ACL_USAGE);
		if (aclresult != ACLCHECK_OK)
			aclcheck_error(aclresult, OBJECT_FOREIGN_SERVER, server);
	}
	if (psvc_def_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("deferred calls need partner_svc in shared_preload_libraries"),
				 errhint("Add partner_svc to shared_preload_libraries and restart the server.")));
	check_served_database();

	lanes = role_lanes(lanes, GetUserId(), server);

	values[0] = CStringGetTextDatum(operation);
	values[1] = JsonbPGetDatum(args);
	values[2] = server ? DirectFunctionCall1(namein, CStringGetDatum(server)) : (Datum) 0;
	nulls[2] = server ? ' ' : 'n';
	values[3] = ObjectIdGetDatum(GetUserId());
	values[4] = text_array(lanes);

	GetUserIdAndSecContext(&saved_user, &saved_sec);
	SetUserIdAndSecContext(psvc_def_queue_owner(), saved_sec | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		Oid			types[5] = {TEXTOID, JSONBOID, NAMEOID, REGROLEOID, TEXTARRAYOID};
		bool		isnull;

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		check_role_cap(saved_user);
		if (SPI_execute_with_args("INSERT INTO partner_svc.deferred_queue "
								  "(operation, args, server, role, lanes) "
								  "VALUES ($1, $2, $3, $4, $5) RETURNING id",
								  5, types, values, nulls, false, 1) != SPI_OK_INSERT_RETURNING ||
			SPI_processed != 1)
			elog(ERROR, "could not queue the deferred call");
		id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		psvc_bgs_add(PSVC_BGS_CALLS_QUEUED, 1);
		SPI_finish();
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(saved_user, saved_sec);
	}
	PG_END_TRY();

	if (!xact_callback_registered)
	{
		RegisterXactCallback(def_xact_callback, NULL);
		xact_callback_registered = true;
	}
	queued_in_xact = true;
	PG_RETURN_INT64(id);
}

/* The SQLSTATE text s (five characters) as an error code. */
static int
sqlstate_code(const char *s)
{
	if (s == NULL || strlen(s) != 5)
		return ERRCODE_INTERNAL_ERROR;
	return MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4]);
}

/* The text of column col of the row read, or NULL. */
static char *
col_text(HeapTuple tup, TupleDesc desc, int col)
{
	return SPI_getvalue(tup, desc, col);
}

/*
 * deferred_result(id bigint, wait interval DEFAULT '0') RETURNS jsonb
 *
 * The answer of a done call; the stored error of a failed one, raised;
 * for one not finished within wait, 55000 (a timeout).  A call the caller
 * may not see (queued by another role, by OID, unless the caller has the
 * privileges of pg_read_all_stats) does not exist for it.
 */
Datum
psvc_deferred_result(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	Interval   *wait = PG_GETARG_INTERVAL_P(1);
	bool		see_all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	TimestampTz deadline;
	Oid			saved_user;
	int			saved_sec;
	SPIPlanPtr	plan;
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};
	int64		wait_us;
	MemoryContext caller_cxt = CurrentMemoryContext;

	wait_us = wait->time + (int64) wait->day * USECS_PER_DAY +
		(int64) wait->month * 30 * USECS_PER_DAY;
	deadline = GetCurrentTimestamp() + Max(wait_us, 0);

	GetUserIdAndSecContext(&saved_user, &saved_sec);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	SetUserIdAndSecContext(psvc_def_queue_owner(), saved_sec | SECURITY_LOCAL_USERID_CHANGE);
	plan = SPI_prepare("SELECT state, answer, sqlstate, message, detail, hint, role::pg_catalog.oid, xmin, operation "
					   "FROM partner_svc.deferred_queue WHERE id = $1", 1, types);
	SetUserIdAndSecContext(saved_user, saved_sec);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed");

	for (;;)
	{
		HeapTuple	tup;
		TupleDesc	desc;
		char	   *state;
		bool		isnull;
		TransactionId xmin;
		TimestampTz now;

		SetUserIdAndSecContext(psvc_def_queue_owner(), saved_sec | SECURITY_LOCAL_USERID_CHANGE);
		/* the latest snapshot: a REPEATABLE READ caller sees the call end too */
		if (SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(),
								 InvalidSnapshot, true, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the deferred call");
		SetUserIdAndSecContext(saved_user, saved_sec);
		if (SPI_processed == 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("deferred call " INT64_FORMAT " does not exist", id)));
		tup = SPI_tuptable->vals[0];
		desc = SPI_tuptable->tupdesc;
		if (!see_all &&
			DatumGetObjectId(SPI_getbinval(tup, desc, 7, &isnull)) != GetUserId())
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("deferred call " INT64_FORMAT " does not exist", id)));
		state = col_text(tup, desc, 1);
		if (strcmp(state, "done") == 0)
		{
			Datum		answer = SPI_getbinval(tup, desc, 2, &isnull);
			Jsonb	   *result = NULL;

			/* the copy outlives SPI_finish: made in the caller's context */
			if (!isnull)
			{
				MemoryContext spi_cxt = MemoryContextSwitchTo(caller_cxt);

				result = DatumGetJsonbPCopy(answer);
				MemoryContextSwitchTo(spi_cxt);
			}

			SPI_finish();
			if (result == NULL)
				PG_RETURN_NULL();
			PG_RETURN_JSONB_P(result);
		}
		if (strcmp(state, "failed") == 0)
		{
			char	   *sqlstate = col_text(tup, desc, 3);
			char	   *message = col_text(tup, desc, 4);
			char	   *detail = col_text(tup, desc, 5);
			char	   *hint = col_text(tup, desc, 6);

			ereport(ERROR,
					(errcode(sqlstate_code(sqlstate)),
					 errmsg("%s", message ? message : "deferred call failed"),
					 detail ? errdetail("%s", detail) : 0,
					 hint ? errhint("%s", hint) : 0,
					 errcontext("deferred call " INT64_FORMAT " of %s", id,
								col_text(tup, desc, 9))));
		}
		xmin = DatumGetTransactionId(SPI_getbinval(tup, desc, 8, &isnull));
		if (TransactionIdIsCurrentTransactionId(xmin))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("deferred call " INT64_FORMAT " is sent only after this transaction commits", id),
					 errhint("Ask for its result after COMMIT.")));
		now = GetCurrentTimestamp();
		if (now >= deadline && !served_here())
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("timed out waiting for deferred call " INT64_FORMAT, id),
					 errdetail("The call is %s, and the deferred senders serve database \"%s\" only (partner_svc.worker_database): it is never sent from this one.",
							   state, psvc_def_database()),
					 errhint("Call partner_svc.defer() in database \"%s\"; a superuser can end this call with partner_svc.deferred_cancel().",
							 psvc_def_database())));
		if (now >= deadline)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("timed out waiting for deferred call " INT64_FORMAT, id),
					 errdetail("The call is %s.", state),
					 errhint("Wait longer with the argument \"wait\", or LISTEN partner_svc_deferred: its payload is the id of each call that ends.")));
		SPI_freetuptable(SPI_tuptable);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(PSVC_DEF_RESULT_SLEEP_MS,
							 Max(1, (deadline - now) / 1000)),
						 psvc_wait_event(PSVC_WAIT_DEFERRED_RESULT));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}
