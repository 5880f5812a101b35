/*-------------------------------------------------------------------------
 *
 * webhook_reconcile.c
 *		  Order state that heals itself: the poll worker records the
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
 *   and the server, role and partner account of the create.  A row that
 *   exists is never taken over: one of the same account gains what it
 *   lacked (custom id, server, role), any other (another account's, or
 *   one only webhooks told, whose account is unknown) is left as it is
 *   and the record is dropped with a LOG line, so that a server answering
 *   a create with another tenant's id changes nothing of that tenant's.
 * - Which rows are polled: those whose status is not final
 *   (webhook_rules.c) and has not changed, nor been polled, for
 *   partner_svc.poll_after (partners' clock: by default
 *   past the partner's last retry).  That covers both the orders whose
 *   webhooks stopped and the created ones no webhook ever mentioned
 *   (source 'created').  A final status ends the polling of its row.
 * - Rounds: every poll_interval (partners' clock) the due rows, oldest
 *   first, at most partner_svc.poll_max_per_round, are read into a list
 *   in the reconciler's own memory context; each turn of the poll
 *   worker's loop then polls a few of them (PSVC_RC_PER_TURN), one
 *   transaction per turn, so that new records are written between the
 *   polls.  A round ends when its list is empty.  Polling lags when a
 *   round is still under way when the next is due, or when a round was
 *   cut at poll_max_per_round (psvc_wh_reconcile_lag).
 * - Each poll has the poll worker's own limits, whatever the polled
 *   server says: partner_svc.poll_timeout for connecting and for each
 *   attempt, partner_svc.poll_retries retries.  So a round takes at most
 *   poll_max_per_round x (poll_retries + 1) x poll_timeout plus the
 *   backoffs, and it never delays webhook receipt, which is another
 *   process (webhook_worker.c).
 * - Budget: each poll is a call of the status read of the catalogue
 *   (order_status, transaction_status) with a share of its route's
 *   budget (poll_share percent, psvc_call_set_share): it starts only
 *   while the route's use of the window, everyone's, is below that share,
 *   and never waits, so it never takes what foreground calls need, and
 *   the limiter keeps it from causing a 429.  A poll refused for the
 *   share is left for the next round.  The answer is never cached.
 * - Identity: a row recorded by a create (with its account) is polled through the server of
 *   the create with the user mapping of the role that created it (if that
 *   role still exists and has USAGE on the server); the role is recorded
 *   by OID (created_by, regrole), so a renamed creator keeps polling its
 *   orders and a new role that took a dropped creator's name never
 *   does (no lock is taken on the role: a poll is a read, and the worker
 *   never waits for a DROP ROLE); any other row
 *   (known from webhooks only, or whose server was dropped) through the
 *   default server of the orders service, as the functions find it, with
 *   the user mapping of the worker's role (partner_svc.worker_role).
 * - Tenancy: a row carries the partner account it was learned through
 *   (account, server_account.c), NULL for one only webhooks told (or
 *   recorded before 0.4).  A poll writes only a row whose account is the
 *   account of the server and key it polled through, and a row of no
 *   account is polled only through the default server, whatever server
 *   it names, so a state learned through one account never changes a row
 *   recorded under another; a row whose server now calls as another
 *   account (its key or base URL changed) is not polled.
 * - What is written: a status read moves the row only as the rule of
 *   statuses allows (PSVC_WH_MOVES, the same rule as webhooks), with
 *   source 'poll'; every poll sets polled_at.  Nothing is written into
 *   webhook_events and nothing is notified: polling invents no event.
 * - Each poll runs in a subtransaction: a failure (a server that cannot
 *   be found, the partner down or hanging) rolls back that poll only.
 *   Failures are logged once per round, with their count and the first
 *   one's message; a poll refused for the share is not a failure.
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
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
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

/* Polls per turn of the worker's loop. */
#define PSVC_RC_PER_TURN 8
/* Created records written per turn at most. */
#define PSVC_RC_RECORDS 64

/* One row to poll. */
typedef struct RcItem
{
	bool		checkout;		/* transactions, else order_states */
	char	   *id;
	char	   *server;			/* NULL: the default server */
	Oid			roleid;			/* the creator; InvalidOid: the worker's role */
	char	   *account;		/* NULL: learned from webhooks only */
} RcItem;

static MemoryContext rc_cxt = NULL; /* the round's list */
static List *due = NIL;			/* of RcItem *, in rc_cxt */
static TimestampTz next_round = 0;
static bool round_capped = false;	/* the last round left due rows */
static int	round_failures = 0;
static int	round_polled = 0;
static char round_first_failure[256];
static PsvcCreated records[PSVC_RC_RECORDS];	/* taken from the handoff */

static SPIPlanPtr due_plan = NULL;
static SPIPlanPtr poll_plan[2] = {NULL, NULL};
static SPIPlanPtr record_plan[2] = {NULL, NULL};
static bool schema_old = false; /* the objects are 0.3's (no account yet) */

/* The due rows of both tables, oldest first. */
static const char due_sql[] =
"SELECT false, unique_id, server::text, created_by::oid, account,"
"       GREATEST(updated_at, polled_at) AS since"
"  FROM partner_svc.order_states"
" WHERE status <> ALL ($1) AND GREATEST(updated_at, polled_at) < $3"
" UNION ALL "
"SELECT true, transaction_id, server::text, created_by::oid, account,"
"       GREATEST(updated_at, polled_at)"
"  FROM partner_svc.transactions"
" WHERE status <> ALL ($2) AND GREATEST(updated_at, polled_at) < $3"
" ORDER BY since LIMIT $4";

/*
 * A status read of one row ($1 its id, $2 the status read or NULL),
 * $3..$5 the chains of the rule of statuses, $6 the account polled
 * through: only a row of that account is written (NULL: a row of no
 * account).
 */
#define POLL_SQL(table, key, alias, kind) \
"WITH m AS (" \
"  SELECT * FROM ROWS FROM (pg_catalog.unnest($3::text[]), pg_catalog.unnest($4::text[])," \
"      pg_catalog.unnest($5::text[])) AS m(kind, from_status, to_status)" \
"), cur AS (" \
"  SELECT " key " AS id, (" alias ".status <> $2 AND " \
	PSVC_WH_MOVES(kind, alias ".status", "$2") ") AS mv" \
"  FROM partner_svc." table " " alias " WHERE " key " = $1" \
"    AND " alias ".account IS NOT DISTINCT FROM $6" \
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
 * $3 status, $4 server, $5 role, $6 account).  A row that exists keeps
 * its status: a webhook told it, and a create's answer is the first
 * status an object has.  Only a row of the same account gains what it
 * lacked; a row of another account, or of none, is not touched (no row
 * processed: the caller logs it).
 */
static const char *const record_sql[2] = {
	"INSERT INTO partner_svc.order_states AS s"
	"  (unique_id, custom_id, status, source, server, created_by, account)"
	" VALUES ($1, $2, $3, 'created', $4, $5, $6)"
	" ON CONFLICT (unique_id) DO UPDATE SET"
	"  custom_id = COALESCE(s.custom_id, excluded.custom_id),"
	"  server = COALESCE(s.server, excluded.server),"
	"  created_by = COALESCE(s.created_by, excluded.created_by)"
	" WHERE s.account = excluded.account",
	"INSERT INTO partner_svc.transactions AS s"
	"  (transaction_id, status, source, server, created_by, account)"
	" VALUES ($1, $3, 'created', $4, $5, $6)"
	" ON CONFLICT (transaction_id) DO UPDATE SET"
	"  server = COALESCE(s.server, excluded.server),"
	"  created_by = COALESCE(s.created_by, excluded.created_by)"
	" WHERE s.account = excluded.account",
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

/* Counts a failed poll of the round; the first one's message is kept. */
static void
note_failure(const char *what, const char *msg)
{
	if (round_failures++ == 0)
		snprintf(round_first_failure, sizeof(round_first_failure),
				 "could not %s: %s", what, msg);
}

/* The round's failures, in one LOG line; from the end of a round. */
static void
log_failures(int polled)
{
	if (round_failures > 0)
		ereport(LOG,
				(errmsg("partner_svc poll worker: %d of %d status polls of this round failed",
						round_failures, polled),
				 errdetail("The first: %s.", round_first_failure)));
	round_failures = 0;
	round_first_failure[0] = '\0';
}

/*
 * Starts a transaction with SPI and a snapshot for the statements of one
 * turn; false, with nothing left open, when the extension is not there
 * (dropped since the worker's last check): the statements could not run.
 * Notes whether its objects are still 0.3's (schema_old).
 */
static bool
begin_turn(void)
{
	Oid			nsp;
	Oid			rel;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (!OidIsValid(get_extension_oid("partner_svc", true)))
	{
		CommitTransactionCommand();
		return false;
	}
	nsp = get_namespace_oid("partner_svc", true);
	rel = OidIsValid(nsp) ? get_relname_relid("order_states", nsp) : InvalidOid;
	schema_old = !OidIsValid(rel) || get_attnum(rel, "account") == InvalidAttrNumber;
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
	int			n = psvc_handoff_peek(recs, PSVC_RC_RECORDS);

	if (n == 0)
		return;
	/* without the extension there is nowhere to write them: they wait */
	if (!begin_turn())
		return;
	if (schema_old)
	{
		/* 0.3's objects: they wait in the ring for ALTER EXTENSION ... UPDATE */
		end_turn();
		return;
	}
	for (int i = 0; i < n; i++)
	{
		PsvcCreated *c = &recs[i];
		int			k = c->checkout ? 1 : 0;
		Datum		args[6];
		char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
		Oid			types[6] = {TEXTOID, TEXTOID, TEXTOID, NAMEOID, REGROLEOID, TEXTOID};

		if (record_plan[k] == NULL)
			record_plan[k] = prepare(record_sql[k], 6, types);
		args[0] = CStringGetTextDatum(c->id);
		args[1] = CStringGetTextDatum(c->custom_id);
		nulls[1] = c->custom_id[0] == '\0' ? 'n' : ' ';
		args[2] = CStringGetTextDatum(c->status);
		args[3] = DirectFunctionCall1(namein, CStringGetDatum(c->server));
		args[4] = ObjectIdGetDatum(c->roleid);
		args[5] = CStringGetTextDatum(c->account);
		if (SPI_execute_plan(record_plan[k], args, nulls, false, 0) < 0)
			elog(ERROR, "the reconciler could not record a created object");
		if (SPI_processed == 0)
			ereport(LOG,
					(errmsg("partner_svc poll worker: %s \"%s\" created through server \"%s\" is not recorded",
							c->checkout ? "checkout" : "order", c->id, c->server),
					 errdetail("A row of that id was learned through another partner account, or from webhooks only; it is left as it is.")));
	}
	end_turn();
	/* written: out of the ring (an ERROR above left them in it) */
	psvc_handoff_drop(n);
}

/* Reads the due rows into a new round's list (in rc_cxt). */
static void
start_round(void)
{
	const char *finals[2][PSVC_WH_MAX_FINAL];
	int			nfinal[2];
	Datum		args[4];
	Oid			types[4] = {TEXTARRAYOID, TEXTARRAYOID, TIMESTAMPTZOID, INT4OID};
	double		after_ms = psvc_guc_tasks.poll_after * 1000.0 * psvc_guc_time_scale;
	MemoryContext old;

	nfinal[0] = psvc_wh_final_statuses("order", finals[0], PSVC_WH_MAX_FINAL);
	nfinal[1] = psvc_wh_final_statuses("checkout", finals[1], PSVC_WH_MAX_FINAL);
	if (due_plan == NULL)
		due_plan = prepare(due_sql, 4, types);
	args[0] = text_array(finals[0], nfinal[0]);
	args[1] = text_array(finals[1], nfinal[1]);
	args[2] = TimestampTzGetDatum(TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
															  -(int64) after_ms));
	args[3] = Int32GetDatum(psvc_guc_poll_max_per_round);
	if (SPI_execute_plan(due_plan, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "the reconciler could not read the rows to poll");
	round_capped = SPI_processed >= (uint64) psvc_guc_poll_max_per_round;
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
		it->account = SPI_getvalue(tup, desc, 5);
		due = lappend(due, it);
	}
	MemoryContextSwitchTo(old);
}

/*
 * The server and identity to poll it through (see the file header), with
 * the poll worker's own timeouts and retries, in CurrentMemoryContext;
 * *own_account tells whether the row is written as the account of the
 * server (else as a row of no account).  Raises when there is none, or
 * when the row's server now calls as another account.
 */
static PsvcServer *
poll_server(const RcItem *it, char *account)
{
	/* a row of no account (webhooks only, or recorded before 0.4): the default server */
	ForeignServer *fs = it->server && it->account ?
		GetForeignServerByName(it->server, true) : NULL;
	PsvcServer *server = NULL;

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
		server = psvc_fn_server_named(psvc_services[PSVC_SVC_ORDERS].name, NULL);
	if (it->account != NULL)
	{
		psvc_options_account(server, account);
		if (strcmp(account, it->account) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("server \"%s\" does not call as the partner account the %s was learned through",
							server->servername, it->checkout ? "checkout" : "order"),
					 errdetail("A row is polled only through its own partner account (docs/privileges.md).")));
	}
	else
		account[0] = '\0';

	/* the poll worker's limits, whatever the server's options say */
	server->settings[PSVC_SETTING_REQUEST_TIMEOUT] = psvc_guc_poll_timeout;
	server->settings[PSVC_SETTING_CONNECT_TIMEOUT] =
		Min(psvc_options_setting(server, PSVC_SETTING_CONNECT_TIMEOUT), psvc_guc_poll_timeout);
	server->settings[PSVC_SETTING_MAX_RETRIES] = psvc_guc_poll_retries;
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
	Datum		args[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	Oid			types[6] = {TEXTOID, TEXTOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTOID};
	char		account[PSVC_ACCOUNT_LEN + 1];

	call = psvc_call_make(op, poll_server(it, account), path);
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
		poll_plan[k] = prepare(poll_sql[k], 6, types);
	args[0] = CStringGetTextDatum(it->id);
	args[1] = status ? CStringGetTextDatum(status) : (Datum) 0;
	nulls[1] = status ? ' ' : 'n';
	args[2] = text_array(chain_kind, nchains);
	args[3] = text_array(chain_from, nchains);
	args[4] = text_array(chain_to, nchains);
	args[5] = account[0] ? CStringGetTextDatum(account) : (Datum) 0;
	nulls[5] = account[0] ? ' ' : 'n';
	if (SPI_execute_plan(poll_plan[k], args, nulls, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "the reconciler could not write a status it read");
	psvc_bgs_add(PSVC_BGS_POLL_CHANGES, SPI_processed == 1 && strcmp(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), "t") == 0);
}

/*
 * Runs fn(arg) in a subtransaction (a poll, or the sweep); a failure
 * rolls back that only, is counted for the round's LOG line as "could
 * not <what>" (a spent share is not), and returns false.
 */
static bool
run_guarded(void (*fn) (const void *), const void *arg, const char *what)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = true;

	psvc_bgs_add(PSVC_BGS_POLLS, 1);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(arg);
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
			note_failure(what, edata->message);
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

static void
poll_fn(const void *arg)
{
	poll_one((const RcItem *) arg);
}

/*
 * Polls one row (run_guarded): a failure leaves the row for the next
 * round.
 */
static void
poll_guarded(const RcItem *it)
{
	(void) run_guarded(poll_fn, it,
					   psprintf("poll the status of %s \"%s\"",
								it->checkout ? "transaction" : "order", it->id));
}

/*
 * The sweep: orders created while polling was off and nothing recorded
 * them (another client of the key, or no poll worker ran) are found in the partner's order list, filtered by each status
 * the list can filter that polling follows (docs/sandbox-orders.md: the
 * filter values and the statuses they stand for).  CREATED orders are
 * listed only without a filter; they are found once PENDING.  Through the
 * default server of the service as the worker's role, within poll_share
 * of the list route, at most poll_max_per_round orders and
 * PSVC_RC_SWEEP_PAGES pages per filter; each new one becomes a row of
 * source 'poll' and of the default server's account, polled from then
 * on.  A row that exists is left as it is.  Runs when polling is turned
 * on again (partner_svc.poll_share from 0), not at every start of the
 * worker: a database that never turned polling off sends no list
 * request it did not ask for.  A failed sweep is tried again at the next
 * round.
 */
#define PSVC_RC_SWEEP_PAGES 50

static const char *const sweep_filters[][2] = {
	{"PENDING", "PENDING"},
	{"WILL BE ACTIVE", "DEFERRED"},
};

static const char sweep_sql[] =
"INSERT INTO partner_svc.order_states AS s"
"  (unique_id, custom_id, status, source, server, account, polled_at)"
" VALUES ($1, $2, $3, 'poll', $4, $5, pg_catalog.now())"
" ON CONFLICT (unique_id) DO NOTHING";
static SPIPlanPtr sweep_plan = NULL;
static bool sweep_due = false;
static int	last_share = -1;

static void
sweep_fn(const void *arg)
{
	PsvcServer *server = psvc_fn_server_named(psvc_services[PSVC_SVC_ORDERS].name, NULL);
	char		account[PSVC_ACCOUNT_LEN + 1];
	int			budget = psvc_guc_poll_max_per_round;
	Oid			types[5] = {TEXTOID, TEXTOID, TEXTOID, NAMEOID, TEXTOID};

	psvc_options_account(server, account);
	server->settings[PSVC_SETTING_REQUEST_TIMEOUT] = psvc_guc_poll_timeout;
	server->settings[PSVC_SETTING_CONNECT_TIMEOUT] =
		Min(psvc_options_setting(server, PSVC_SETTING_CONNECT_TIMEOUT), psvc_guc_poll_timeout);
	server->settings[PSVC_SETTING_MAX_RETRIES] = psvc_guc_poll_retries;
	if (sweep_plan == NULL)
		sweep_plan = prepare(sweep_sql, 5, types);

	for (int f = 0; f < lengthof(sweep_filters); f++)
	{
		char	   *cursor = NULL;

		for (int page = 0; page < PSVC_RC_SWEEP_PAGES && budget > 0; page++)
		{
			PsvcCall   *call = psvc_call_make(psvc_op(PSVC_OP_ORDERS_LIST), server, NULL);
			PsvcResult *res;
			Jsonb	   *body;
			Jsonb	   *data;
			Jsonb	   *pagination;

			psvc_call_add_query(call, "status", sweep_filters[f][0], false);
			psvc_call_add_query(call, "limit", "100", false);
			if (cursor != NULL)
				psvc_call_add_query(call, "cursor", cursor, false);
			psvc_call_set_share(call, psvc_guc_tasks.poll_share);
			psvc_call_set_cache_ttl(call, 0);
			res = psvc_call_run(call);
			if (res->kind != PSVC_CALL_OK)
				psvc_call_raise(call, res);
			body = psvc_fn_parse(res->body, res->body_len);
			data = body ? psvc_fn_member_jsonb(body, "data") : NULL;
			if (data == NULL || !JB_ROOT_IS_ARRAY(data) || JB_ROOT_IS_SCALAR(data))
				break;
			for (int i = 0; i < (int) JB_ROOT_COUNT(data) && budget > 0; i++)
			{
				JsonbValue *v = getIthJsonbValueFromContainer(&data->root, i);
				Jsonb	   *item;
				char	   *id;
				char	   *custom_id;
				Datum		args[5];
				char		nulls[5] = {' ', ' ', ' ', ' ', ' '};

				if (v == NULL || v->type != jbvBinary)
					continue;
				item = JsonbValueToJsonb(v);
				id = psvc_fn_member_text(item, "id");
				if (id == NULL || id[0] == '\0')
					continue;
				custom_id = psvc_fn_member_text(item, "custom_id");
				args[0] = CStringGetTextDatum(id);
				args[1] = custom_id ? CStringGetTextDatum(custom_id) : (Datum) 0;
				nulls[1] = custom_id ? ' ' : 'n';
				args[2] = CStringGetTextDatum(sweep_filters[f][1]);
				args[3] = DirectFunctionCall1(namein, CStringGetDatum(server->servername));
				args[4] = CStringGetTextDatum(account);
				if (SPI_execute_plan(sweep_plan, args, nulls, false, 0) < 0)
					elog(ERROR, "the reconciler could not record a listed order");
				budget--;
			}
			pagination = psvc_fn_member_jsonb(body, "pagination");
			cursor = pagination ? psvc_fn_member_text(pagination, "next_cursor") : NULL;
			if (cursor == NULL || cursor[0] == '\0')
				break;
		}
	}
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

	/* polling turned on again: sweep for what nothing recorded meanwhile */
	if (last_share <= 0 && psvc_guc_tasks.poll_share > 0 && last_share != -1)
		sweep_due = true;
	last_share = psvc_guc_tasks.poll_share;
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
	if (schema_old)
	{
		/* 0.3's objects: polling waits for ALTER EXTENSION ... UPDATE */
		end_turn();
		MemoryContextSwitchTo(cxt);
		next_round = TimestampTzPlusMilliseconds(now, 5000);
		return;
	}
	if (due == NIL)
	{
		MemoryContextReset(rc_cxt);
		next_round = TimestampTzPlusMilliseconds(now,
												 (int64) (psvc_guc_tasks.poll_interval * 1000.0 *
														  psvc_guc_time_scale));
		round_polled = 0;
		start_round();
		if (sweep_due)
		{
			/* one request of the round (or a few pages), counted as a poll */
			round_polled++;
			if (run_guarded(sweep_fn, NULL, "list the orders created while nothing recorded them"))
				sweep_due = false;
		}
	}
	while (due != NIL && polled < PSVC_RC_PER_TURN)
	{
		RcItem	   *it = linitial(due);

		/* off the list first: an item that fails is not retried at once */
		due = list_delete_first(due);
		poll_guarded(it);
		polled++;
		round_polled++;
		/* records first: their creators may be waiting for room */
		if (psvc_handoff_pending() > 0)
			break;
	}
	if (due == NIL)
		log_failures(round_polled);
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

/* Whether polling waits for ALTER EXTENSION ... UPDATE (0.3's objects). */
bool
psvc_wh_reconcile_waiting(void)
{
	return schema_old;
}

/*
 * Whether polling lags, and since when (0 when not known): a round still
 * under way when the next one is due, or the last round cut at
 * partner_svc.poll_max_per_round; *active tells a round is under way.
 */
bool
psvc_wh_reconcile_lag(TimestampTz *since, bool *active)
{
	*active = due != NIL;
	*since = 0;
	if (psvc_guc_tasks.poll_share <= 0)
		return false;
	if (due != NIL && GetCurrentTimestamp() > next_round)
	{
		*since = next_round;
		return true;
	}
	return round_capped;
}

/* Forgets the round under way (after an error in the worker's loop). */
void
psvc_wh_reconcile_reset(void)
{
	log_failures(round_polled);
	round_polled = 0;
	due = NIL;
	if (rc_cxt != NULL)
		MemoryContextReset(rc_cxt);
}
