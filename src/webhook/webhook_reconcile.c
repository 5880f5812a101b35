/*-------------------------------------------------------------------------
 *
 * webhook_reconcile.c
 *		  Order state that heals itself: the webhook worker records the
 *		  orders and checkouts created through partner_svc, and polls the
 *		  status of those that webhooks left behind.
 *
 * Webhooks come first: the partner retries a delivery three times (after
 * 1, 5 and 15 minutes) and then gives up, so a receiver that was down or
 * misconfigured for longer loses status changes for ever.  The orders
 * document names status polling as the fallback; this file is that
 * fallback (docs/webhooks.md#reconciliation).
 *
 * Design notes:
 *
 * - Created objects.  create_order and create_transaction hand what their
 *   answer created to the worker through shared memory (handoff.h), not
 *   through their transaction, because the create is done at the partner
 *   even when that transaction rolls back.  psvc_wh_reconcile_record
 *   writes them into order_states and transactions with source 'created'
 *   and the server and role of the create; a row a webhook wrote first
 *   keeps its status and only gains the server and role.
 * - Which rows are polled: those whose status is not final
 *   (webhook_rules.c) and has not changed, nor been polled, for
 *   partner_svc.poll_after (partners' clock: by default
 *   past the partner's last retry).  That covers both the orders whose
 *   webhooks stopped and the created ones no webhook ever mentioned
 *   (source 'created').  A final status ends the polling of its row.
 * - Rounds: every poll_interval (partners' clock) the due rows, oldest
 *   first, are read into a list in the reconciler's own memory context;
 *   each turn of the worker's loop then polls a few of them
 *   (PSVC_RC_PER_TURN), one transaction per turn, so that webhooks are
 *   received between the polls.  A round ends when its list is empty.
 * - Budget: each poll is a call of the status read of the catalogue
 *   (order_status, transaction_status) with a share of its route's
 *   budget (poll_share percent, psvc_call_set_share): it starts only
 *   while the route's use of the window, everyone's, is below that share,
 *   and never waits, so it never takes what foreground calls need, and
 *   the limiter keeps it from causing a 429.  A poll refused for the
 *   share is left for the next round.  The answer is never cached.
 * - Identity: a row recorded by a create is polled through the server of
 *   the create with the user mapping of the role that created it (if that
 *   role still exists and has USAGE on the server); the role is recorded
 *   by OID (created_by, regrole), so a renamed creator keeps polling its
 *   orders and a new role that took a dropped creator's name never
 *   does (no lock is taken on the role: a poll is a read, and the worker
 *   never waits for a DROP ROLE); any other row
 *   (known from webhooks only, or whose server was dropped) through the
 *   default server of the orders service, as the functions find it, with
 *   the user mapping of the worker's role (partner_svc.worker_role).
 * - What is written: a status read moves the row only as the rule of
 *   statuses allows (PSVC_WH_MOVES, the same rule as webhooks), with
 *   source 'poll'; every poll sets polled_at.  Nothing is written into
 *   webhook_events and nothing is notified: polling invents no event.
 * - Each poll runs in a subtransaction: a failure (the share spent, a
 *   server that cannot be found, the partner down) rolls back that poll
 *   only; it is logged once per distinct message.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_reconcile.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "bgstats.h"
#include "call.h"
#include "catalog.h"
#include "functions.h"
#include "guc.h"
#include "handoff.h"
#include "options.h"
#include "pg_compat.h"
#include "webhook_int.h"

/* Polls per turn of the worker's loop, and rows per round at most. */
#define PSVC_RC_PER_TURN 8
#define PSVC_RC_PER_ROUND 500
/* Created records written per turn at most. */
#define PSVC_RC_RECORDS 64

/* One row to poll. */
typedef struct RcItem
{
	bool		checkout;		/* transactions, else order_states */
	char	   *id;
	char	   *server;			/* NULL: the default server */
	Oid			roleid;			/* the creator; InvalidOid: the worker's role */
} RcItem;

static MemoryContext rc_cxt = NULL; /* the round's list */
static List *due = NIL;			/* of RcItem *, in rc_cxt */
static TimestampTz next_round = 0;
static char last_logged[256];
static PsvcCreated records[PSVC_RC_RECORDS];	/* taken from the handoff */

static SPIPlanPtr due_plan = NULL;
static SPIPlanPtr poll_plan[2] = {NULL, NULL};
static SPIPlanPtr record_plan[2] = {NULL, NULL};

/* The due rows of both tables, oldest first. */
static const char due_sql[] =
"SELECT false, unique_id, server::text, created_by::oid,"
"       GREATEST(updated_at, polled_at) AS since"
"  FROM partner_svc.order_states"
" WHERE status <> ALL ($1) AND GREATEST(updated_at, polled_at) < $3"
" UNION ALL "
"SELECT true, transaction_id, server::text, created_by::oid,"
"       GREATEST(updated_at, polled_at)"
"  FROM partner_svc.transactions"
" WHERE status <> ALL ($2) AND GREATEST(updated_at, polled_at) < $3"
" ORDER BY since LIMIT " CppAsString2(PSVC_RC_PER_ROUND);

/*
 * A status read of one row ($1 its id, $2 the status read or NULL),
 * $3..$5 the chains of the rule of statuses.
 */
#define POLL_SQL(table, key, alias, kind) \
"WITH m AS (" \
"  SELECT * FROM ROWS FROM (pg_catalog.unnest($3::text[]), pg_catalog.unnest($4::text[])," \
"      pg_catalog.unnest($5::text[])) AS m(kind, from_status, to_status)" \
"), cur AS (" \
"  SELECT " key " AS id, (" alias ".status <> $2 AND " \
	PSVC_WH_MOVES(kind, alias ".status", "$2") ") AS mv" \
"  FROM partner_svc." table " " alias " WHERE " key " = $1" \
") UPDATE partner_svc." table " " alias " SET" \
"  status = CASE WHEN cur.mv THEN $2 ELSE " alias ".status END," \
"  source = CASE WHEN cur.mv THEN 'poll' ELSE " alias ".source END," \
"  updated_at = CASE WHEN cur.mv THEN pg_catalog.now() ELSE " alias ".updated_at END," \
"  polled_at = pg_catalog.now()" \
"  FROM cur WHERE " key " = cur.id RETURNING cur.mv IS TRUE"

static const char *const poll_sql[2] = {
	POLL_SQL("order_states", "s.unique_id", "s", "order"),
	POLL_SQL("transactions", "s.transaction_id", "s", "checkout"),
};

/*
 * A created object ($1 id, $2 custom id or NULL, unused for a checkout,
 * $3 status, $4 server, $5 role).  A row that exists keeps its status: a webhook told it, and
 * a create's answer is the first status an object has.
 */
static const char *const record_sql[2] = {
	"INSERT INTO partner_svc.order_states AS s"
	"  (unique_id, custom_id, status, source, server, created_by)"
	" VALUES ($1, $2, $3, 'created', $4, $5)"
	" ON CONFLICT (unique_id) DO UPDATE SET"
	"  custom_id = COALESCE(s.custom_id, excluded.custom_id),"
	"  server = COALESCE(s.server, excluded.server),"
	"  created_by = COALESCE(s.created_by, excluded.created_by)",
	"INSERT INTO partner_svc.transactions AS s"
	"  (transaction_id, status, source, server, created_by)"
	" VALUES ($1, $3, 'created', $4, $5)"
	" ON CONFLICT (transaction_id) DO UPDATE SET"
	"  server = COALESCE(s.server, excluded.server),"
	"  created_by = COALESCE(s.created_by, excluded.created_by)",
};

/* A text[] of n values. */
static Datum
text_array(const char **vals, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(vals[i]);
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}

static SPIPlanPtr
prepare(const char *sql, int nargs, Oid *types)
{
	SPIPlanPtr	p = SPI_prepare(sql, nargs, types);

	if (p == NULL)
		elog(ERROR, "SPI_prepare failed for a statement of the reconciler: %s",
			 SPI_result_code_string(SPI_result));
	SPI_keepplan(p);
	return p;
}

/* Logs msg once (again only after another message was logged). */
static void
log_once(const char *what, const char *msg)
{
	char		buf[sizeof(last_logged)];

	snprintf(buf, sizeof(buf), "%s: %s", what, msg);
	if (strcmp(buf, last_logged) == 0)
		return;
	strlcpy(last_logged, buf, sizeof(last_logged));
	ereport(LOG, (errmsg("partner_svc webhook worker: %s", buf)));
}

/*
 * Starts a transaction with SPI and a snapshot for the statements of one
 * turn; false, with nothing left open, when the extension is not there
 * (dropped since the worker's last check): the statements could not run.
 */
static bool
begin_turn(void)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (!OidIsValid(get_extension_oid("partner_svc", true)))
	{
		CommitTransactionCommand();
		return false;
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	return true;
}

static void
end_turn(void)
{
	PopActiveSnapshot();
	SPI_finish();
	CommitTransactionCommand();
}

/*
 * Writes the created objects handed over since the last turn (handoff.h)
 * into order_states and transactions, in one transaction.  Called by the
 * worker's loop while it is connected and the extension is there.
 */
void
psvc_wh_reconcile_record(void)
{
	PsvcCreated *recs = records;
	int			n = psvc_handoff_take(recs, PSVC_RC_RECORDS);

	if (n == 0)
		return;
	/* without the extension there is nowhere to write them: they are lost, as webhooks would be */
	if (!begin_turn())
		return;
	for (int i = 0; i < n; i++)
	{
		PsvcCreated *c = &recs[i];
		int			k = c->checkout ? 1 : 0;
		Datum		args[5];
		char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
		Oid			types[5] = {TEXTOID, TEXTOID, TEXTOID, NAMEOID, REGROLEOID};

		if (record_plan[k] == NULL)
			record_plan[k] = prepare(record_sql[k], 5, types);
		args[0] = CStringGetTextDatum(c->id);
		args[1] = CStringGetTextDatum(c->custom_id);
		nulls[1] = c->custom_id[0] == '\0' ? 'n' : ' ';
		args[2] = CStringGetTextDatum(c->status);
		args[3] = DirectFunctionCall1(namein, CStringGetDatum(c->server));
		args[4] = ObjectIdGetDatum(c->roleid);
		if (SPI_execute_plan(record_plan[k], args, nulls, false, 0) < 0)
			elog(ERROR, "the reconciler could not record a created object");
	}
	end_turn();
}

/* Reads the due rows into a new round's list (in rc_cxt). */
static void
start_round(void)
{
	const char *finals[2][PSVC_WH_MAX_FINAL];
	int			nfinal[2];
	Datum		args[3];
	Oid			types[3] = {TEXTARRAYOID, TEXTARRAYOID, TIMESTAMPTZOID};
	double		after_ms = psvc_guc_tasks.poll_after * 1000.0 * psvc_guc_time_scale;
	MemoryContext old;

	nfinal[0] = psvc_wh_final_statuses("order", finals[0], PSVC_WH_MAX_FINAL);
	nfinal[1] = psvc_wh_final_statuses("checkout", finals[1], PSVC_WH_MAX_FINAL);
	if (due_plan == NULL)
		due_plan = prepare(due_sql, 3, types);
	args[0] = text_array(finals[0], nfinal[0]);
	args[1] = text_array(finals[1], nfinal[1]);
	args[2] = TimestampTzGetDatum(TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
															  -(int64) after_ms));
	if (SPI_execute_plan(due_plan, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "the reconciler could not read the rows to poll");
	old = MemoryContextSwitchTo(rc_cxt);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		RcItem	   *it = palloc0(sizeof(RcItem));
		bool		isnull;

		it->checkout = DatumGetBool(SPI_getbinval(tup, desc, 1, &isnull));
		it->id = SPI_getvalue(tup, desc, 2);
		it->server = SPI_getvalue(tup, desc, 3);
		it->roleid = DatumGetObjectId(SPI_getbinval(tup, desc, 4, &isnull));
		if (isnull)
			it->roleid = InvalidOid;
		due = lappend(due, it);
	}
	MemoryContextSwitchTo(old);
}

/*
 * The server and identity to poll it through (see the file header), in
 * CurrentMemoryContext.  Raises when there is none.
 */
static PsvcServer *
poll_server(const RcItem *it)
{
	ForeignServer *fs = it->server ? GetForeignServerByName(it->server, true) : NULL;
	PsvcServer *server;

	if (fs != NULL)
	{
		Oid			roleid = it->roleid;

		server = psvc_options_server(fs->serverid);
		if (strcmp(server->service, psvc_services[PSVC_SVC_ORDERS].name) != 0)
			fs = NULL;
		/* a dropped creator's OID is not a role: its mapping would be PUBLIC's */
		else if (OidIsValid(roleid) &&
				 SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(roleid)) &&
				 psvc_server_aclcheck(fs->serverid, roleid, ACL_USAGE) == ACLCHECK_OK)
			server->userid = roleid;
	}
	if (fs == NULL)
	{
		LOCAL_FCINFO(fcinfo, 1);

		/* no argument: the default server of the service, as functions find it */
		InitFunctionCallInfoData(*fcinfo, NULL, 0, InvalidOid, NULL, NULL);
		server = psvc_fn_server(psvc_services[PSVC_SVC_ORDERS].name, fcinfo, 0);
	}
	return server;
}

/* Polls one row and writes what it read; raises on failure. */
static void
poll_one(const RcItem *it)
{
	const PsvcOperation *op = psvc_op(it->checkout ? PSVC_OP_TRANSACTION_STATUS
									  : PSVC_OP_ORDER_STATUS);
	const char *path[1] = {it->id};
	const char *chain_kind[PSVC_WH_MAX_CHAINS];
	const char *chain_from[PSVC_WH_MAX_CHAINS];
	const char *chain_to[PSVC_WH_MAX_CHAINS];
	int			nchains;
	int			k = it->checkout ? 1 : 0;
	PsvcCall   *call;
	PsvcResult *res;
	char	   *status = NULL;
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	Oid			types[5] = {TEXTOID, TEXTOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID};

	call = psvc_call_make(op, poll_server(it), path);
	psvc_call_set_share(call, psvc_guc_tasks.poll_share);
	psvc_call_set_cache_ttl(call, 0);
	res = psvc_call_run(call);
	if (res->kind == PSVC_CALL_OK)
		status = psvc_fn_member_text(psvc_exec_payload(call, res), "status");
	else if (!(res->kind == PSVC_CALL_HTTP_ERROR && res->status == 404))
		psvc_call_raise(call, res);
	/* an unknown object, or a transaction without a checkout: polled, no status */

	nchains = psvc_wh_status_chains(chain_kind, chain_from, chain_to);
	if (poll_plan[k] == NULL)
		poll_plan[k] = prepare(poll_sql[k], 5, types);
	args[0] = CStringGetTextDatum(it->id);
	args[1] = status ? CStringGetTextDatum(status) : (Datum) 0;
	nulls[1] = status ? ' ' : 'n';
	args[2] = text_array(chain_kind, nchains);
	args[3] = text_array(chain_from, nchains);
	args[4] = text_array(chain_to, nchains);
	if (SPI_execute_plan(poll_plan[k], args, nulls, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "the reconciler could not write a status it read");
	psvc_bgs_add(PSVC_BGS_POLL_CHANGES, SPI_processed == 1 && strcmp(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), "t") == 0);
}

/*
 * Polls one row in a subtransaction; a failure rolls back that poll
 * only, is logged (once per message; a spent share is not), and leaves
 * the row for the next round.
 */
static void
poll_guarded(const RcItem *it)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	psvc_bgs_add(PSVC_BGS_POLLS, 1);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		poll_one(it);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		psvc_bgs_add(PSVC_BGS_POLL_FAILURES, 1);
		if (edata->sqlerrcode != ERRCODE_TOO_MANY_CONNECTIONS)
			log_once(psprintf("could not poll the status of %s \"%s\"",
							  it->checkout ? "transaction" : "order", it->id),
					 edata->message);
		FreeErrorData(edata);
	}
	PG_END_TRY();
}

/*
 * One turn of polling: starts a round when one is due (and the list is
 * empty), then polls up to PSVC_RC_PER_TURN rows, in one transaction.
 * Nothing when poll_share is 0.  Called by the worker's loop while it is
 * connected and the extension is there.
 */
void
psvc_wh_reconcile_step(void)
{
	TimestampTz now = GetCurrentTimestamp();
	MemoryContext cxt;
	int			polled = 0;

	if (psvc_guc_tasks.poll_share <= 0)
	{
		due = NIL;
		if (rc_cxt != NULL)
			MemoryContextReset(rc_cxt);
		return;
	}
	if (due == NIL && now < next_round)
		return;
	if (rc_cxt == NULL)
		rc_cxt = AllocSetContextCreate(TopMemoryContext, "partner_svc reconciler",
									   ALLOCSET_SMALL_SIZES);

	cxt = CurrentMemoryContext;
	if (!begin_turn())
		return;
	if (due == NIL)
	{
		MemoryContextReset(rc_cxt);
		next_round = TimestampTzPlusMilliseconds(now,
												 (int64) (psvc_guc_tasks.poll_interval * 1000.0 *
														  psvc_guc_time_scale));
		start_round();
	}
	while (due != NIL && polled < PSVC_RC_PER_TURN)
	{
		RcItem	   *it = linitial(due);

		/* off the list first: an item that fails is not retried at once */
		due = list_delete_first(due);
		poll_guarded(it);
		polled++;
	}
	end_turn();
	MemoryContextSwitchTo(cxt);
}

/*
 * Milliseconds the worker may wait before the next step has work: 0
 * while a round is under way, -1 when polling is off.
 */
long
psvc_wh_reconcile_wait_ms(void)
{
	TimestampTz now;

	if (psvc_guc_tasks.poll_share <= 0)
		return -1;
	if (due != NIL)
		return 0;
	now = GetCurrentTimestamp();
	if (now >= next_round)
		return 0;
	return (long) Min((next_round - now + 999) / 1000, (int64) INT_MAX);
}

/* Forgets the round under way (after an error in the worker's loop). */
void
psvc_wh_reconcile_reset(void)
{
	due = NIL;
	if (rc_cxt != NULL)
		MemoryContextReset(rc_cxt);
}
