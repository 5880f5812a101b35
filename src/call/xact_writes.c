/*-------------------------------------------------------------------------
 *
 * xact_writes.c
 *		  Remote writes and local transactions: counting the changes made
 *		  at the services, and saying which ones a rollback did not undo.
 *
 * A request that changes state at a service (INSERT, UPDATE, DELETE on a
 * writable foreign table; a function such as cancel_pending or run_job)
 * is carried out when the service answers, whatever the local transaction
 * does next.  http.c reports every such request that succeeded, or whose
 * outcome is unknown (timed out, connection lost, statement cancelled
 * while it was in flight), to psvc_xact_note_write; the change is counted
 * under the name of the table or function that sent it (the "writer",
 * set just before the request by fdw_modify.c and functions.c; a
 * function is named only when it writes) and the
 * subtransaction it was made in.
 *
 * When a subtransaction aborts (ROLLBACK TO SAVEPOINT, an exception block)
 * or the transaction aborts, a WARNING lists how many changes to which
 * tables or functions were not undone; a commit forgets them, and a
 * subtransaction commit hands its counts to its parent.
 *
 * Memory: the counts live in TopMemoryContext (a short list per backend,
 * freed at the end of each transaction); the writer's name in a buffer of
 * its own.  Nothing here sends a request or raises an ERROR from a
 * callback.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/xact_writes.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "lib/stringinfo.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "xact_writes.h"

/* The changes of one writer in one subtransaction. */
typedef struct WriteCount
{
	char	   *writer;			/* "foreign table \"todos\"", ... */
	SubTransactionId subid;
	int64		done;			/* answered with success */
	int64		unknown;		/* outcome unknown */
} WriteCount;

static List *counts = NIL;		/* of WriteCount *, in TopMemoryContext */
static char writer_name[2 * NAMEDATALEN + 64];
static Oid	writer_function = InvalidOid;	/* or a function, named lazily */
static bool callbacks_registered = false;

static void xact_callback(XactEvent event, void *arg);
static void subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							 SubTransactionId parentSubid, void *arg);

void
psvc_xact_set_writer(const char *fmt,...)
{
	va_list		args;

	va_start(args, fmt);
	vsnprintf(writer_name, sizeof(writer_name), fmt, args);
	va_end(args);
	writer_function = InvalidOid;
}

void
psvc_xact_set_writer_function(Oid fnoid)
{
	writer_function = fnoid;
	writer_name[0] = '\0';
}

static void
forget(WriteCount *wc)
{
	pfree(wc->writer);
	pfree(wc);
}

void
psvc_xact_note_write(const char *method, const char *route, bool unknown)
{
	SubTransactionId subid;
	WriteCount *wc = NULL;
	ListCell   *lc;
	MemoryContext old;
	const char *writer;

	if (!IsTransactionState())
		return;
	if (!callbacks_registered)
	{
		RegisterXactCallback(xact_callback, NULL);
		RegisterSubXactCallback(subxact_callback, NULL);
		callbacks_registered = true;
	}
	subid = GetCurrentSubTransactionId();
	/* the name in the caller's context; only a new entry keeps a copy */
	if (OidIsValid(writer_function))
		writer = psprintf("function %s.%s",
						  get_namespace_name(get_func_namespace(writer_function)),
						  get_func_name(writer_function));
	else if (writer_name[0])
		writer = writer_name;
	else
		writer = psprintf("request %s %s", method, route);
	foreach(lc, counts)
	{
		WriteCount *c = lfirst(lc);

		if (c->subid == subid && strcmp(c->writer, writer) == 0)
			wc = c;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	if (wc == NULL)
	{
		wc = palloc0(sizeof(WriteCount));
		wc->writer = pstrdup(writer);
		wc->subid = subid;
		counts = lappend(counts, wc);
	}
	if (unknown)
		wc->unknown++;
	else
		wc->done++;
	MemoryContextSwitchTo(old);
}

/*
 * A read-only transaction (SET TRANSACTION READ ONLY,
 * default_transaction_read_only, every transaction of a hot standby)
 * refuses remote writes as it refuses local ones: a write at a partner is
 * no less a write.  The writer function, when set, is the SQL function
 * being called (psvc_fn_server sets it before any request).
 */
void
psvc_xact_check_writable(const char *opname)
{
	const char *what = opname;

	if (!XactReadOnly && !RecoveryInProgress())
		return;
	if (OidIsValid(writer_function))
	{
		char	   *fn = get_func_name(writer_function);

		if (fn != NULL)
			what = fn;
	}
	else if (writer_name[0])
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot write to %s in a read-only transaction", writer_name)));
	if (XactReadOnly)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot execute %s() in a read-only transaction", what)));
	ereport(ERROR,
			(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
			 errmsg("cannot execute %s() during recovery", what)));
}

/*
 * Warns about the counted changes of subid (all of them when subid is
 * InvalidSubTransactionId) and forgets them.
 */
static void
warn_and_forget(SubTransactionId subid, const char *what)
{
	StringInfoData detail;
	List	   *keep = NIL;
	int64		total = 0;
	int64		unknown = 0;
	ListCell   *lc;
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	initStringInfo(&detail);
	foreach(lc, counts)
	{
		WriteCount *c = lfirst(lc);

		if (subid != InvalidSubTransactionId && c->subid != subid)
		{
			keep = lappend(keep, c);
			continue;
		}
		if (c->done > 0)
			appendStringInfo(&detail, "%s%s: " INT64_FORMAT " change%s",
							 detail.len ? "; " : "", c->writer, c->done,
							 c->done == 1 ? "" : "s");
		if (c->unknown > 0)
			appendStringInfo(&detail, "%s%s: " INT64_FORMAT " request%s with unknown outcome",
							 detail.len ? "; " : "", c->writer, c->unknown,
							 c->unknown == 1 ? "" : "s");
		total += c->done;
		unknown += c->unknown;
		forget(c);
	}
	list_free(counts);
	counts = keep;
	MemoryContextSwitchTo(old);

	if (total + unknown > 0)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("%s, but " INT64_FORMAT " change%s made at partner services %s not undone",
						what, total + unknown, total + unknown == 1 ? "" : "s",
						total + unknown == 1 ? "was" : "were"),
				 errdetail("Changes not undone: %s.", detail.data),
				 errhint("A remote write cannot be rolled back.  Read the rows or objects again to see their state, and undo the changes by hand where needed.")));
	pfree(detail.data);
}

static void
xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			warn_and_forget(InvalidSubTransactionId, "the transaction was rolled back");
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			{
				ListCell   *lc;

				foreach(lc, counts)
					forget(lfirst(lc));
				list_free(counts);
				counts = NIL;
			}
			break;
		default:
			break;
	}
	writer_name[0] = '\0';
	writer_function = InvalidOid;
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	ListCell   *lc;

	if (event == SUBXACT_EVENT_ABORT_SUB)
		warn_and_forget(mySubid, "the subtransaction was rolled back");
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		/* the parent now owns them; same writer entries merge at the end */
		foreach(lc, counts)
		{
			WriteCount *c = lfirst(lc);

			if (c->subid == mySubid)
				c->subid = parentSubid;
		}
	}
}
