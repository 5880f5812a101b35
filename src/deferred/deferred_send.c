/*-------------------------------------------------------------------------
 *
 * deferred_send.c
 *		  Sending claimed deferred calls: each through the SQL function a
 *		  direct call uses, as the role that queued it, with its outcome
 *		  recorded on its row.
 *
 * A call runs "SELECT partner_svc.<function>(<arguments from args>,
 * server => ...)" (deferred_ops.c writes it; the plan is kept per
 * function) in a subtransaction, with the current user switched to the
 * queuing role (SECURITY_LOCAL_USERID_CHANGE), so everything a direct
 * call does follows: the user mapping, USAGE, the executor, the rate
 * limiter and the fleet quota (waiting for budget), the call module's
 * retries after 429 and Retry-After, the recovery of lost answers.  An
 * ERROR is caught (PG_TRY, CopyErrorData) and the subtransaction rolled
 * back; its SQLSTATE, message, detail and hint go onto the row as the
 * direct call raised them.
 *
 * Identity.  The queuing role is recorded by OID, so a renamed role's
 * calls are sent as it, under its new name, and a dropped role's calls
 * fail (42704) rather than go out as a new role that took its name.
 * Before each attempt the sender takes a share lock on the role (DROP
 * ROLE takes an exclusive one) and then checks that it still exists: a
 * role cannot be dropped while one of its calls is being sent, and one
 * dropped before is seen as gone.  OIDs are reused only after the OID
 * counter wraps around, the guarantee PostgreSQL's own catalogues give.
 *
 * Exactly once.  The claim's commit marks a call sending before anything
 * is sent.  The creates and cancels (PSVC_DEF_SETTLE) are sent with a
 * PsvcSettleRun (functions.h) that tells functions_settle.c what earlier
 * attempts may have done: nothing (a first attempt); something, or
 * nothing known for sure, already looked up (sent_at is set, or the call
 * was tried before: a refusal is settled by a lookup); something never
 * looked up (a call left sending by a crash, one whose create got an
 * answer that may follow the work, or one whose lookup failed: checkpoint
 * {"look_first": true}), which is looked up before it is sent.  The run
 * tells back the mode of the next attempt, kept on the row with the
 * outcome, and whether the error is final or to be tried again whatever
 * its SQLSTATE.
 * append_upload (PSVC_DEF_BY_SIZE) keeps the file's size in the row,
 * committed with sent_at, before its request; resumed, it appends what
 * the file lacks of the chunk.  The functions without any recovery
 * (PSVC_DEF_ONCE) get one more commit, sent_at, right before their
 * request; one resumed with sent_at set is not sent again but fails with
 * 08006, for someone to decide.
 *
 * Retries.  A failure that says nothing was done, or that a later
 * attempt can settle, puts the call back in the queue with a backoff of
 * the partners' clock (1 s doubling to 5 min, times time_scale), and
 * never past give_up, the one limit on time: the last attempt is made at
 * give_up, and only a failure then ends the call, so an outage shorter
 * than give_up never fails a call.  The number of attempts ends nothing
 * (partner_svc.deferred_max_attempts has no effect).  Every other error
 * fails the call at once with that error.
 *
 * Outcomes are committed together, every 5 ms at the latest (a call that
 * settles lost answers is safe to resume when a crash loses its outcome),
 * at once for the other functions; NOTIFY partner_svc_deferred with the
 * id as payload goes with every call that ended.
 *
 * Memory: a context of this file, reset per call; the plans in
 * TopMemoryContext (SPI_keepplan).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/deferred/deferred_send.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "bgstats.h"
#include "deferred_int.h"
#include "foreign/foreign.h"
#include "functions.h"
#include "guc.h"
#include "options.h"

#define PSVC_DEF_BACKOFF_FIRST_MS 1000
#define PSVC_DEF_BACKOFF_MAX_MS (5 * 60 * 1000)
/* Outcomes of settling calls wait at most this long for their commit. */
#define PSVC_DEF_COMMIT_MS 5

/* A kept plan per function. */
typedef struct CallPlan
{
	char		operation[NAMEDATALEN];
	SPIPlanPtr	plan;
} CallPlan;

#define PSVC_DEF_MAX_PLANS 32
static CallPlan plans[PSVC_DEF_MAX_PLANS];
static int	nplans = 0;
static MemoryContext call_cxt = NULL;

/*
 * The worker's own role and security context, under which
 * psvc_def_send_calls runs as the queue's owner; a transaction boundary
 * (next_transaction) is crossed in the worker's own, since no security
 * context may span one (StartTransaction asserts it).
 */
static Oid	send_saved_user;
static int	send_saved_sec;

/* What became of one attempt. */
typedef struct Outcome
{
	bool		ok;
	Jsonb	   *answer;			/* ok: the answer, or NULL */
	ErrorData  *error;			/* !ok */
	bool		final;			/* !ok: trying again cannot change it */
	bool		retry;			/* !ok: try again whatever the SQLSTATE */
	PsvcSettleMode next;		/* SETTLE: the mode of the next attempt */
} Outcome;

/*
 * The kept plan called key: sql, or when NULL the call of the function
 * key.  Parameters: $1 args (jsonb), $2 server (name), $3 bigint.
 */
static SPIPlanPtr
call_plan(const char *key, const char *sql)
{
	Oid			types[3] = {JSONBOID, NAMEOID, INT8OID};
	SPIPlanPtr	plan;

	for (int i = 0; i < nplans; i++)
		if (strcmp(plans[i].operation, key) == 0)
			return plans[i].plan;
	plan = SPI_prepare(sql ? sql : psvc_def_call_sql(key), 3, types);
	if (plan == NULL)
		elog(ERROR, "could not prepare the deferred call of %s: %s", key,
			 SPI_result_code_string(SPI_result));
	if (nplans == PSVC_DEF_MAX_PLANS)
		return plan;			/* used once, freed with the transaction */
	SPI_keepplan(plan);
	strlcpy(plans[nplans].operation, key, NAMEDATALEN);
	plans[nplans++].plan = plan;
	return plan;
}

/* append_upload (PSVC_DEF_BY_SIZE): the file's size before the request */
static const char *const size_sql =
"SELECT pg_catalog.to_jsonb((partner_svc.file_info(($1 ->> 'file_id'), $2) ->> 'size')::int8)";

/*
 * ... and resumed from $3, that size: the chunk arrived whole (the file's
 * FileInfo, "recovered"), in part or not at all (the rest is appended),
 * or the size says neither (an object naming the difference).
 */
static const char *const resume_sql =
"SELECT CASE WHEN d.done = d.len THEN d.info || '{\"recovered\": true}'::pg_catalog.jsonb"
"            WHEN d.done >= 0 AND d.done < d.len THEN partner_svc.append_upload(($1 ->> 'file_id'),"
"              pg_catalog.substr(($1 ->> 'chunk')::pg_catalog.bytea, (d.done + 1)::pg_catalog.int4), $2)"
"            ELSE pg_catalog.jsonb_build_object('deferred_size_mismatch', d.done) END"
" FROM (SELECT f.info, (f.info ->> 'size')::pg_catalog.int8 - $3 AS done,"
"              pg_catalog.octet_length(($1 ->> 'chunk')::pg_catalog.bytea) AS len"
"       FROM (SELECT partner_svc.file_info(($1 ->> 'file_id'), $2) AS info) f) d";

/* An ERROR made in call_cxt, for a failure found before sending. */
static ErrorData *
make_error(int sqlerrcode, const char *message, const char *detail, const char *hint)
{
	ErrorData  *e = MemoryContextAllocZero(call_cxt, sizeof(ErrorData));

	e->sqlerrcode = sqlerrcode;
	e->message = MemoryContextStrdup(call_cxt, message);
	e->detail = detail ? MemoryContextStrdup(call_cxt, detail) : NULL;
	e->hint = hint ? MemoryContextStrdup(call_cxt, hint) : NULL;
	return e;
}

/*
 * The error (in call_cxt) of a call whose role was dropped, or NULL when
 * the role exists; then it stays locked (AccessShareLock, until the
 * sender's transaction ends) so that it cannot be dropped while the call
 * is sent.  The lock is taken first: it waits for a DROP ROLE in
 * progress, and reads the invalidations that DROP committed.
 */
static ErrorData *
role_gone(const PsvcDefCall *c)
{
	LockSharedObject(AuthIdRelationId, c->roleid, 0, AccessShareLock);
	if (SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(c->roleid)))
		return NULL;
	UnlockSharedObject(AuthIdRelationId, c->roleid, 0, AccessShareLock);
	return make_error(ERRCODE_UNDEFINED_OBJECT,
					  psprintf("the role that queued deferred call " INT64_FORMAT " no longer exists", c->id),
					  psprintf("The role with OID %u was dropped after it queued the call. A call is sent only as the role that queued it, never as another role, whatever its name.", c->roleid),
					  NULL);
}

/*
 * What earlier attempts of c may have done, for the settle code: a call
 * left sending by a crash or marked to look first was never looked up;
 * one with sent_at set (a SETTLE call: an answer that may follow the work
 * came, and was looked up) was.  Any other call tried before is taken as
 * a resend too: that costs a lookup only when the service refuses it, and
 * covers calls queued again by a version that kept no such mark.  For the
 * other kinds the run is unused.
 */
static PsvcSettleMode
settle_mode(const PsvcDefCall *c)
{
	if (c->look_first)
		return PSVC_SETTLE_RESUMED;
	if (c->was_sent || c->resume)
		return PSVC_SETTLE_RESEND;
	return PSVC_SETTLE_FIRST;
}

/*
 * Runs call c once (or with sql, a step of it called key), as its role,
 * in a subtransaction; the outcome in call_cxt.  Never raises for the
 * call's own errors.
 */
static Outcome
attempt(PsvcDefCall *c, const char *key, const char *sql)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	Outcome		out = {0};
	Oid			saved_user;
	int			saved_sec;
	PsvcSettleRun run = {0};

	run.mode = settle_mode(c);
	out.next = run.mode;

	if ((out.error = role_gone(c)) != NULL)
	{
		out.final = true;
		return out;
	}
	GetUserIdAndSecContext(&saved_user, &saved_sec);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		Datum		values[3];
		char		nulls[3] = {' ', ' ', ' '};
		SPIPlanPtr	plan;

		SetUserIdAndSecContext(c->roleid, saved_sec | SECURITY_LOCAL_USERID_CHANGE);
		psvc_settle_run_begin(&run);
		/* request(): one idempotency key for every attempt of the call */
		psvc_request_key_set(psprintf("partner_svc-" UINT64_FORMAT "-%u-" INT64_FORMAT,
									  GetSystemIdentifier(), MyDatabaseId, c->id));
		plan = call_plan(key ? key : c->operation, sql);
		values[2] = Int64GetDatum(c->from_size);
		values[0] = JsonbPGetDatum(c->args);
		values[1] = c->server ? DirectFunctionCall1(namein, CStringGetDatum(c->server)) : (Datum) 0;
		nulls[1] = c->server ? ' ' : 'n';
		if (SPI_execute_plan(plan, values, nulls, false, 1) != SPI_OK_SELECT ||
			SPI_processed != 1)
			elog(ERROR, "the deferred call of %s returned no row", c->operation);
		else
		{
			bool		isnull;
			Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
			MemoryContext m = MemoryContextSwitchTo(call_cxt);

			out.answer = isnull ? NULL : DatumGetJsonbPCopy(d);
			MemoryContextSwitchTo(m);
		}
		out.ok = true;
		psvc_settle_run_end();
		psvc_request_key_set(NULL);
		out.next = run.next;
		SetUserIdAndSecContext(saved_user, saved_sec);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(call_cxt);
		out.ok = false;
		out.error = CopyErrorData();
		psvc_settle_run_end();
		out.final = run.final;
		out.retry = run.retry;
		out.next = run.next;
		FlushErrorState();
		psvc_request_key_set(NULL);
		RollbackAndReleaseCurrentSubTransaction();
		SetUserIdAndSecContext(saved_user, saved_sec);
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_END_TRY();
	return out;
}

/*
 * Whether a failed attempt may be tried again later: nothing was done
 * (429 after the call's retries, no room in the limiter, no connection),
 * or, for a function that settles lost answers, the outcome was unknown
 * in a way a resumed attempt can find out.
 */
static bool
retryable(const PsvcDefOp *op, const Outcome *o)
{
	int			code = o->error->sqlerrcode;

	if (o->final)
		return false;
	if (o->retry)
		return true;
	if (code == ERRCODE_TOO_MANY_CONNECTIONS ||
		code == ERRCODE_CONFIGURATION_LIMIT_EXCEEDED)
		return true;
	if (op->recovery == PSVC_DEF_ONCE)
	{
		/* a refused connection, not a 502-504 (which may follow the work) */
		return code == ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION &&
			o->error->message != NULL &&
			strstr(o->error->message, "HTTP status") == NULL;
	}
	return ERRCODE_TO_CATEGORY(code) == ERRCODE_CONNECTION_EXCEPTION ||
		code == ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION;
}

/* How a request() that may be sent again is sent: as a settled call. */
static const PsvcDefOp resendable_request = {.name = "request", .recovery = PSVC_DEF_SETTLE};

/*
 * Whether a deferred partner_svc.request() may be sent again when an
 * earlier attempt may have reached the partner: a GET or HEAD, or a write
 * to a server whose option idempotency_header sends the call's own key
 * (the same for every attempt): the server the call names, else the
 * default server, found as request() will find it when the call is sent
 * (psvc_fn_default_server).  Any other request() is sent once, as the
 * functions of recovery ONCE are.
 */
static bool
request_resendable(const PsvcDefCall *c)
{
	char	   *method;
	Oid			serverid = InvalidOid;

	if (strcmp(c->operation, "request") != 0)
		return false;
	method = psvc_fn_member_text(c->args, "method");
	if (method != NULL &&
		(pg_strcasecmp(method, "GET") == 0 || pg_strcasecmp(method, "HEAD") == 0))
		return true;
	if (c->server != NULL)
	{
		ForeignServer *fs = GetForeignServerByName(c->server, true);

		if (fs != NULL)
			serverid = fs->serverid;
	}
	else
		serverid = psvc_fn_default_server(NULL);
	if (!OidIsValid(serverid))
		return false;
	return psvc_options_server(serverid)->idempotency_header != NULL;
}

/*
 * Writes the outcome onto the row, with its NOTIFY when the call ended.
 * settle: a SETTLE call, whose row keeps the mode of its next attempt
 * (o->next): sent_at set unless FIRST, checkpoint {"look_first": true}
 * when RESUMED; the claim reads them back (settle_mode).
 */
static void
record(const PsvcDefCall *c, const char *state, const Outcome *o,
	   TimestampTz next_attempt, bool settle)
{
	Oid			types[10] = {INT8OID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTOID,
	TEXTOID, TIMESTAMPTZOID, BOOLOID, BOOLOID};
	Datum		values[10];
	char		nulls[10];
	ErrorData  *e = o->ok ? NULL : o->error;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(c->id);
	values[1] = CStringGetTextDatum(state);
	values[2] = o->answer ? JsonbPGetDatum(o->answer) : (Datum) 0;
	nulls[2] = o->answer ? ' ' : 'n';
	values[3] = e ? CStringGetTextDatum(unpack_sql_state(e->sqlerrcode)) : (Datum) 0;
	nulls[3] = e ? ' ' : 'n';
	values[4] = e && e->message ? CStringGetTextDatum(e->message) : (Datum) 0;
	nulls[4] = e && e->message ? ' ' : 'n';
	values[5] = e && e->detail ? CStringGetTextDatum(e->detail) : (Datum) 0;
	nulls[5] = e && e->detail ? ' ' : 'n';
	values[6] = e && e->hint ? CStringGetTextDatum(e->hint) : (Datum) 0;
	nulls[6] = e && e->hint ? ' ' : 'n';
	values[7] = TimestampTzGetDatum(next_attempt);
	values[8] = BoolGetDatum(settle && o->next != PSVC_SETTLE_FIRST);
	values[9] = BoolGetDatum(settle && o->next == PSVC_SETTLE_RESUMED);
	if (SPI_execute_with_args("UPDATE partner_svc.deferred_queue"
							  "   SET state = $2, answer = $3, sqlstate = $4, message = $5,"
							  "       detail = $6, hint = $7, next_attempt_at = $8,"
							  "       done_at = CASE WHEN $2 IN ('done', 'failed')"
							  "                 THEN pg_catalog.clock_timestamp() END,"
							  "       sent_at = CASE WHEN $9 THEN COALESCE(sent_at, pg_catalog.clock_timestamp())"
							  "                 WHEN $2 = 'queued' AND (checkpoint IS NULL OR checkpoint ? 'look_first')"
							  "                 THEN NULL ELSE sent_at END,"
							  "       checkpoint = CASE WHEN $10 THEN '{\"look_first\": true}'::pg_catalog.jsonb"
							  "                    WHEN checkpoint ? 'look_first' THEN NULL ELSE checkpoint END,"
							  "       sender = CASE WHEN $2 = 'queued' THEN NULL ELSE sender END"
							  " WHERE id = $1",
							  10, types, values, nulls, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record deferred call " INT64_FORMAT, c->id);
	psvc_bgs_call_outcome(c->id, c->operation, state, e ? unpack_sql_state(e->sqlerrcode) : NULL, e ? e->message : NULL);
	if (strcmp(state, "queued") != 0)
		Async_Notify("partner_svc_deferred", psprintf(INT64_FORMAT, c->id));
}

/*
 * Commits the sender's transaction and starts the next one, as the
 * queue's owner again.
 */
static void
next_transaction(void)
{
	SetUserIdAndSecContext(send_saved_user, send_saved_sec);
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	SetUserIdAndSecContext(psvc_def_queue_owner(), send_saved_sec | SECURITY_LOCAL_USERID_CHANGE);
}

/*
 * Marks c durably as possibly sent (ONCE, BY_SIZE), with the file's size
 * before for BY_SIZE (checkpoint, or NULL); commits.
 */
static void
mark_sent(const PsvcDefCall *c, Jsonb *checkpoint)
{
	Oid			types[2] = {INT8OID, JSONBOID};
	Datum		values[2] = {Int64GetDatum(c->id), checkpoint ? JsonbPGetDatum(checkpoint) : (Datum) 0};
	char		nulls[2] = {' ', checkpoint ? ' ' : 'n'};

	if (SPI_execute_with_args("UPDATE partner_svc.deferred_queue"
							  " SET sent_at = pg_catalog.clock_timestamp(),"
							  "     checkpoint = COALESCE($2, checkpoint) WHERE id = $1",
							  2, types, values, nulls, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not mark deferred call " INT64_FORMAT, c->id);
	next_transaction();
}

/*
 * append_upload (PSVC_DEF_BY_SIZE): resumed from the size kept before the
 * request when one may have left, else the size is kept first.
 */
static Outcome
attempt_by_size(PsvcDefCall *c)
{
	Outcome		o;
	Jsonb	   *checkpoint;

	if (c->resume && c->was_sent && c->from_size >= 0)
	{
		JsonbValue *mismatch;

		o = attempt(c, "append_upload:resume", resume_sql);
		mismatch = o.ok && o.answer ?
			getKeyJsonValueFromContainer(&o.answer->root, "deferred_size_mismatch",
										 strlen("deferred_size_mismatch"), NULL) : NULL;
		if (mismatch != NULL)
		{
			Jsonb	   *diff = JsonbValueToJsonb(mismatch);

			o.ok = false;
			o.final = true;
			o.error = make_error(ERRCODE_CONNECTION_FAILURE,
								 "the outcome of append_upload is unknown",
								 psprintf("The file's size changed by %s bytes since the size kept before the request, which is neither none nor part of the chunk: someone else changed the file.",
										  JsonbToCString(NULL, &diff->root, VARSIZE(diff))),
								 "Read the file with partner_svc.file_info() and append the rest with partner_svc.append_upload().");
			o.answer = NULL;
		}
		return o;
	}
	o = attempt(c, "append_upload:size", size_sql);
	if (!o.ok)
		return o;
	if (o.answer == NULL || !JB_ROOT_IS_SCALAR(o.answer))
	{
		o.ok = false;
		o.error = make_error(ERRCODE_FDW_ERROR, "the file's size could not be read", NULL, NULL);
		return o;
	}
	checkpoint = DatumGetJsonbP(DirectFunctionCall1(jsonb_in,
													CStringGetDatum(psprintf("{\"size\": %s}",
																			 JsonbToCString(NULL, &o.answer->root, VARSIZE(o.answer))))));
	mark_sent(c, checkpoint);
	return attempt(c, NULL, NULL);
}

/*
 * When the next attempt of c, failed at now, is due: after a backoff of
 * the partners' clock (1 s doubling up to 5 min, times time_scale), and
 * never later than deadline, so that the last attempt is made at give_up.
 */
static TimestampTz
next_attempt_at(const PsvcDefCall *c, TimestampTz now, TimestampTz deadline)
{
	int64		ms = PSVC_DEF_BACKOFF_FIRST_MS;
	TimestampTz next;

	for (int i = 1; i < c->attempts && ms < PSVC_DEF_BACKOFF_MAX_MS; i++)
		ms *= 2;
	ms = (int64) (Min(ms, PSVC_DEF_BACKOFF_MAX_MS) * psvc_guc_time_scale);
	next = TimestampTzPlusMilliseconds(now, Max(ms, 1));
	return Min(next, deadline);
}

/* Sends c and records what became of it. */
static void
send_one(PsvcDefCall *c)
{
	const PsvcDefOp *op = psvc_def_op(c->operation);
	Outcome		o = {0};
	TimestampTz now;
	TimestampTz deadline;
	bool		settle;

	if (op == NULL)
	{
		o.error = make_error(ERRCODE_UNDEFINED_FUNCTION,
							 psprintf("unknown operation \"%s\"", c->operation), NULL, NULL);
		record(c, "failed", &o, GetCurrentTimestamp(), false);
		return;
	}
	if (op->recovery == PSVC_DEF_ONCE && request_resendable(c))
		op = &resendable_request;
	settle = (op->recovery == PSVC_DEF_SETTLE);
	if (op->recovery == PSVC_DEF_ONCE && c->resume && c->was_sent)
	{
		o.error = make_error(ERRCODE_CONNECTION_FAILURE,
							 psprintf("the outcome of %s is unknown", c->operation),
							 "The sender stopped while the request may have been on its way, and this function has no way to find out what it did.",
							 "Check at the partner; queue the call again with partner_svc.defer() if it was not carried out.");
		record(c, "failed", &o, GetCurrentTimestamp(), false);
		return;
	}
	/* a dropped role's call fails before anything is marked or sent */
	if ((o.error = role_gone(c)) != NULL)
	{
		record(c, "failed", &o, GetCurrentTimestamp(), false);
		return;
	}
	if (op->recovery == PSVC_DEF_ONCE)
		mark_sent(c, NULL);

	o = op->recovery == PSVC_DEF_BY_SIZE ? attempt_by_size(c) : attempt(c, NULL, NULL);
	if (o.ok)
	{
		record(c, "done", &o, GetCurrentTimestamp(), settle);
		return;
	}
	/* give_up, of the partners' clock, is the one limit on time */
	now = GetCurrentTimestamp();
	deadline = TimestampTzPlusMilliseconds(c->created_at,
										   (int64) (psvc_guc_tasks.give_up * 1000.0 * psvc_guc_time_scale));
	if (retryable(op, &o) && now < deadline)
	{
		record(c, "queued", &o, next_attempt_at(c, now, deadline), settle);
		return;
	}
	record(c, "failed", &o, now, settle);
}

void
psvc_def_send_calls(PsvcDefCall *calls, int n)
{
	TimestampTz last_commit;

	if (call_cxt == NULL)
		call_cxt = AllocSetContextCreate(TopMemoryContext, "partner_svc deferred call",
										 ALLOCSET_DEFAULT_SIZES);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	/* the queue is the extension owner's, whatever role the worker has */
	GetUserIdAndSecContext(&send_saved_user, &send_saved_sec);
	SetUserIdAndSecContext(psvc_def_queue_owner(), send_saved_sec | SECURITY_LOCAL_USERID_CHANGE);
	last_commit = GetCurrentTimestamp();
	for (int i = 0; i < n; i++)
	{
		const PsvcDefOp *op = psvc_def_op(calls[i].operation);

		MemoryContextReset(call_cxt);
		send_one(&calls[i]);

		/*
		 * Outcomes are committed together, at the latest every
		 * PSVC_DEF_COMMIT_MS: a call whose outcome a crash loses is sending
		 * again and settled by its function.  The outcome of a function
		 * without such a recovery is committed at once, since after a
		 * crash it could only fail as unknown.
		 */
		if (i + 1 < n &&
			((op != NULL && op->recovery == PSVC_DEF_ONCE) ||
			 TimestampDifferenceExceeds(last_commit, GetCurrentTimestamp(), PSVC_DEF_COMMIT_MS)))
		{
			next_transaction();
			last_commit = GetCurrentTimestamp();
		}
	}
	SetUserIdAndSecContext(send_saved_user, send_saved_sec);
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextReset(call_cxt);
}
