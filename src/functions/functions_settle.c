/*-------------------------------------------------------------------------
 *
 * functions_settle.c
 *		  Finding out what a write whose answer was lost did: the one
 *		  recovery of every create and cancel of the SQL functions, for
 *		  orders and transactions alike.
 *
 * A write that timed out or lost its connection after it was sent may or
 * may not have been carried out, and the call module never repeats it
 * (its result is PSVC_CALL_LOST).  The functions that make such writes
 * describe them here as data (functions.h): what to look up, how to tell
 * the object the write made, which states mean done, and their messages;
 * this file does the rest, so nothing is done twice and no function holds
 * a loop of its own.
 *
 * - A create (psvc_settle_create) looks its objects up by the key of each
 *   item of the payload (create_order and create_transaction: an order per
 *   vignette, by its custom_id).  A 404 whose code the lookup's row names
 *   as "nothing here" means no such object.  When every item has its
 *   object and they match the payload, the create's answer is made from
 *   them ("recovered": true).  Only what the documents show is relied on:
 *   a 503 says the service did not process the request, so it is sent
 *   again (a direct call, at most max_retries times) or raised with no
 *   lookup; a lost answer or another 5xx may follow the work and is
 *   settled by one lookup (a direct call's at once, a run's at the start
 *   of its next attempt, after its backoff); a refusal (any 4xx but 429,
 *   whatever its code: the orders document shows no code for a repeated
 *   custom id) of a create that may repeat an earlier one is settled by
 *   one lookup too before it counts as a failure; a create resumed after
 *   a crash is looked up before it is sent.  When nothing is found a
 *   direct call sends the create again, at most max_retries times.  A
 *   lookup that fails never replaces the create's own error.  A payload
 *   without a key on every item cannot be looked up: the outcome is an
 *   error that says how to check.
 * - A cancel (psvc_settle_cancel) reads the object's state: the done state
 *   means the cancel happened (the state read is returned); the state the
 *   cancel needs means it did not, and it is sent once more.  A refusal
 *   (409) reads the state too, to say which it is.
 *
 * A caller that sends again (the deferred senders) says what its earlier
 * attempts may have done and learns how the settle ended through a
 * PsvcSettleRun it registers (functions.h); the pointer is this file's
 * alone, and every write goes to the caller's struct.
 *
 * Memory: everything, the result included, is allocated in the function's
 * CurrentMemoryContext (the per-call context).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions_settle.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/jsonb.h"

#include "catalog.h"
#include "functions.h"

/* The caller's run for the SQL call in progress, or NULL (functions.h). */
static PsvcSettleRun *current_run = NULL;

void
psvc_settle_run_begin(PsvcSettleRun *run)
{
	run->next = run->mode;
	run->final = false;
	run->retry = false;
	current_run = run;
}

void
psvc_settle_run_end(void)
{
	current_run = NULL;
}

/* The mode of the call in progress: its run's, else a first attempt. */
static PsvcSettleMode
run_mode(void)
{
	return current_run != NULL ? current_run->mode : PSVC_SETTLE_FIRST;
}

/* Tells the run, if any, the mode of the next attempt. */
static void
run_next(PsvcSettleMode next)
{
	if (current_run != NULL)
		current_run->next = next;
}

/* Error context of the calls that find out what a lost call did. */
static void
settle_context(void *arg)
{
	errcontext("%s", (const char *) arg);
}

/* Pushes settle_context with the text "<what> after <call> <how>". */
static void
push_context(ErrorContextCallback *cb, const char *what,
			 const PsvcOperation *op, const char *how)
{
	cb->callback = settle_context;
	cb->arg = psprintf("%s after %s %s %s", what, op->method, op->route, how);
	cb->previous = error_context_stack;
	error_context_stack = cb;
}

/* ---------------------------------------------------------------------
 * Creates
 * ---------------------------------------------------------------------
 */

/*
 * The error of a create whose outcome could not be found out (08006);
 * final when trying again cannot find it out either.
 */
static void
create_unknown(const PsvcSettleCreate *def, const char *failure,
			   const char *found, bool have_keys, bool final)
{
	if (current_run != NULL)
	{
		current_run->final = final;
		current_run->retry = !final;
	}
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("the outcome of %s is unknown", def->function),
			 errdetail("%s%s%s The service may have created the %s.",
					   failure, found ? " " : "", found ? found : "", def->object),
			 errhint("%s", have_keys ? def->hint_keys : def->hint_no_keys)));
	pg_unreachable();
}

/* Whether member key of a and of b are the same string. */
static bool
same_text(Jsonb *a, Jsonb *b, const char *key)
{
	char	   *x = psvc_fn_member_text(a, key);
	char	   *y = psvc_fn_member_text(b, key);

	return x != NULL && y != NULL && strcmp(x, y) == 0;
}

/*
 * The items of a create payload (*items) and their keys, or NIL unless
 * every item is an object with a key the lookup can take in its path.
 */
static List *
item_keys(const PsvcSettleCreate *def, Jsonb *payload, List **items)
{
	const PsvcParamDef *param = def->lookup->params[0];
	Jsonb	   *arr = psvc_fn_member_jsonb(payload, def->items);
	List	   *keys = NIL;
	uint32		n;

	*items = NIL;
	if (arr == NULL || !JB_ROOT_IS_ARRAY(arr) || JB_ROOT_IS_SCALAR(arr) ||
		JB_ROOT_COUNT(arr) == 0)
		return NIL;
	n = JB_ROOT_COUNT(arr);
	for (uint32 i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&arr->root, i);
		Jsonb	   *item = JsonbValueToJsonb(e);
		char	   *key = psvc_fn_member_text(item, def->key);

		if (key == NULL || key[0] == '\0' || strlen(key) > param->max_chars)
			return NIL;
		keys = lappend(keys, key);
		*items = lappend(*items, item);
	}
	return keys;
}

/*
 * Whether obj, found by the key of item, is what item of payload makes.
 * Only what the documents show about the object is compared (its key and
 * the members of def->same); the group member, which they do not show,
 * is compared only where the objects have it (a service may leave it
 * null), and so are the counted arrays when def->count is set.
 */
static bool
object_matches(const PsvcSettleCreate *def, Jsonb *obj, Jsonb *item,
			   Jsonb *payload, const char *group)
{
	char	   *ogroup = def->group ? psvc_fn_member_text(obj, def->group) : NULL;

	for (const char *const *m = def->same; *m; m++)
		if (!same_text(obj, item, *m))
			return false;
	if (ogroup != NULL && group != NULL && strcmp(ogroup, group) != 0)
		return false;
	if (def->count != NULL)
	{
		Jsonb	   *count = psvc_fn_member_jsonb(obj, def->count);
		Jsonb	   *wanted = psvc_fn_member_jsonb(payload, def->payload_count);

		if (count == NULL || wanted == NULL ||
			!JB_ROOT_IS_ARRAY(count) || !JB_ROOT_IS_ARRAY(wanted) ||
			JB_ROOT_COUNT(count) != JB_ROOT_COUNT(wanted))
			return false;
	}
	return true;
}

/*
 * One lookup of the object of key; NULL when its row says there is none
 * (*failed false) or when the lookup itself failed (*failed true, and
 * *why says how, one sentence).  Never raises for the lookup's result.
 */
static Jsonb *
lookup_one(const PsvcSettleCreate *def, const PsvcServer *server,
		   const char *key, bool *failed, const char **why)
{
	PsvcCall   *call = psvc_call_make(def->lookup, server, &key);
	PsvcResult *res;

	/* a caller that tries again later makes one request per lookup */
	if (current_run != NULL)
		psvc_call_set_retries(call, 0);
	res = psvc_call_run(call);

	*failed = false;
	if (res->kind == PSVC_CALL_OK)
		return psvc_exec_payload(call, res);
	if (psvc_call_is_empty(call, res))
		return NULL;
	*failed = true;
	*why = res->kind == PSVC_CALL_HTTP_ERROR ?
		psprintf("Looking it up (%s %s) failed with HTTP status %ld.",
				 def->lookup->method, def->lookup->route, res->status) :
		psprintf("Looking it up (%s %s) failed: %s",
				 def->lookup->method, def->lookup->route,
				 res->message ? res->message : "no answer.");
	return NULL;
}

/* What one settling lookup of a create found. */
typedef enum Settled
{
	SETTLED_NONE,				/* no object for any item */
	SETTLED_FOUND,				/* every object, as the payload makes them */
	SETTLED_FAILED				/* a lookup failed: nothing can be said */
} Settled;

/*
 * Looks the objects of a create whose outcome is unknown up by the keys
 * of the payload's items, once each.  SETTLED_FOUND sets *answer to the
 * create's answer made from them.  Objects for some items only, or that
 * differ from the payload, raise the (final) unknown-outcome error with
 * what was found.  *why receives a failed lookup's sentence.
 */
static Settled
recover_create(const PsvcSettleCreate *def, const PsvcServer *server,
			   Jsonb *payload, List *keys, List *items, const char *failure,
			   Jsonb **answer, const char **why)
{
	ErrorContextCallback errcb;
	List	   *found = NIL;
	ListCell   *lk;
	ListCell   *li;
	int			nfound = 0;
	bool		differ = false;
	const char *group = NULL;

	push_context(&errcb, def->looking, def->create, "lost its answer");
	forboth(lk, keys, li, items)
	{
		const char *key = lfirst(lk);
		bool		failed;
		Jsonb	   *obj = lookup_one(def, server, key, &failed, why);

		if (failed)
		{
			error_context_stack = errcb.previous;
			return SETTLED_FAILED;
		}
		found = lappend(found, obj);
		if (obj == NULL)
			continue;
		nfound++;
		if (!object_matches(def, obj, lfirst(li), payload, group))
			differ = true;
		if (group == NULL && def->group != NULL)
			group = psvc_fn_member_text(obj, def->group);
	}
	error_context_stack = errcb.previous;

	if (nfound == 0)
		return SETTLED_NONE;
	if (nfound < list_length(keys))
		create_unknown(def, failure, def->some_found, true, true);
	if (differ)
		create_unknown(def, failure, def->differ, true, true);
	*answer = def->answer(server, payload, found, group);
	return SETTLED_FOUND;
}

/*
 * Raises the create's own error res after a lookup that failed: the
 * outcome stays unknown, so the run tries again and looks up first.
 */
static void
raise_unsettled(const PsvcSettleCreate *def, PsvcCall *call, PsvcResult *res,
				const char *failure, const char *why)
{
	run_next(PSVC_SETTLE_RESUMED);
	if (res == NULL || res->kind == PSVC_CALL_LOST)
		create_unknown(def, failure, why, true, false);
	if (current_run != NULL)
		current_run->retry = true;
	psvc_call_raise(call, res);
}

/*
 * A create resumed when an earlier attempt (call) may have created the
 * objects and was never looked up: looks them up before anything is
 * sent.  Returns the create's answer when they exist, NULL when none
 * does (the create is then sent, and a refusal settled by a lookup); a
 * lookup that fails raises the unknown outcome, to be tried again.
 */
static Jsonb *
look_first(const PsvcSettleCreate *def, const PsvcServer *server,
		   PsvcCall *call, Jsonb *payload, List *keys, List *items)
{
	const char *failure = psprintf("An earlier attempt of %s %s may have been carried out.",
								   call->op->method, call->op->route);
	Jsonb	   *result = NULL;
	const char *why = NULL;

	if (keys == NIL)
		create_unknown(def, failure, NULL, false, true);
	switch (recover_create(def, server, payload, keys, items, failure,
						   &result, &why))
	{
		case SETTLED_FOUND:
			return result;
		case SETTLED_FAILED:
			raise_unsettled(def, call, NULL, failure, why);
			break;
		case SETTLED_NONE:
			run_next(PSVC_SETTLE_RESEND);
			break;
	}
	return NULL;
}

/* psvc_settle_create but for the record of what was created. */
static Jsonb *
create_or_recover(const PsvcSettleCreate *def, const PsvcServer *server,
				  Jsonb *payload)
{
	PsvcCall   *call = psvc_call_make(def->create, server, NULL);
	const PsvcOperation *op = call->op;
	List	   *items;
	List	   *keys = item_keys(def, payload, &items);
	PsvcSettleMode mode = run_mode();
	/* a request of an earlier attempt or of this call may have acted */
	bool		acted = (mode != PSVC_SETTLE_FIRST);
	int			resends = 0;
	int			max_resends = current_run != NULL ? 0 :
		psvc_options_setting(server, PSVC_SETTING_MAX_RETRIES);
	Jsonb	   *result = NULL;
	const char *why = NULL;

	psvc_exec_set_jsonb_body(call, payload);
	if (mode == PSVC_SETTLE_RESUMED &&
		(result = look_first(def, server, call, payload, keys, items)) != NULL)
		return result;
	for (;;)
	{
		PsvcResult *res = psvc_call_run(call);
		const char *failure;

		if (res->kind == PSVC_CALL_OK)
			return psvc_exec_payload(call, res);
		/* 503: the service did not process it; sent again, no lookup */
		if (res->kind == PSVC_CALL_HTTP_ERROR && res->status == 503 &&
			resends < max_resends)
		{
			resends++;
			continue;
		}
		/* ... or raised (a run tries later); a 429 did nothing either */
		if (res->kind != PSVC_CALL_LOST &&
			(res->kind != PSVC_CALL_HTTP_ERROR || res->status == 503 ||
			 res->status == 429 || res->status < 400))
			psvc_call_raise(call, res);

		if (res->kind == PSVC_CALL_LOST || res->status >= 500)
		{
			/* an answer that may follow the work */
			acted = true;
			failure = res->kind == PSVC_CALL_LOST ? res->message :
				psprintf("%s %s failed with HTTP status %ld.",
						 op->method, op->route, res->status);
			if (keys == NIL)
				create_unknown(def, failure, NULL, false, true);
			if (current_run != NULL)
			{
				/*
				 * The run's next attempt looks up first, after the backoff:
				 * one request an attempt while the outage lasts, and a
				 * lost request has had time to get there.
				 */
				raise_unsettled(def, call, res, failure, NULL);
			}
			run_next(PSVC_SETTLE_RESEND);
		}
		else if (acted)
		{
			/* a refusal of a create that may repeat an earlier one */
			failure = psprintf("%s %s was refused with HTTP status %ld after an earlier attempt that may have been carried out.",
							   op->method, op->route, res->status);
			if (keys == NIL)
				psvc_call_raise(call, res);
		}
		else
			psvc_call_raise(call, res); /* a refusal of a first create */

		switch (recover_create(def, server, payload, keys, items, failure,
							   &result, &why))
		{
			case SETTLED_FOUND:
				return result;
			case SETTLED_FAILED:
				raise_unsettled(def, call, res, failure, why);
				break;
			case SETTLED_NONE:
				break;
		}
		/* nothing was created */
		if (res->kind != PSVC_CALL_LOST && res->status < 500)
		{
			/* the refusal stands: it is the call's failure */
			if (current_run != NULL)
				current_run->final = true;
			psvc_call_raise(call, res);
		}
		if (resends < max_resends)
		{
			resends++;
			continue;
		}
		if (res->kind != PSVC_CALL_LOST)
		{
			/* the service failed and did nothing: a later attempt may not */
			if (current_run != NULL)
				current_run->retry = true;
			psvc_call_raise(call, res);
		}
		create_unknown(def, failure, def->none_found, true, false);
	}
}

Jsonb *
psvc_settle_create(const PsvcSettleCreate *def, const PsvcServer *server,
				   Jsonb *payload)
{
	Jsonb	   *answer = create_or_recover(def, server, payload);

	/* answered or recovered, the objects exist: record them for polling */
	if (def->created != NULL)
		def->created(server, answer);
	return answer;
}

/* ---------------------------------------------------------------------
 * Cancels
 * ---------------------------------------------------------------------
 */

/*
 * The object's state read after the cancel's call (cancel) ended in res,
 * as how says ("lost its answer", "was refused"); *read receives the
 * payload of the read, or NULL when its row says there is nothing.  A
 * read that fails raises the cancel's own error, never the read's: the
 * outcome is still unknown, so a run tries again.
 */
static const char *
read_state(const PsvcSettleCancel *def, const PsvcServer *server,
		   const char *id, const char *how, Jsonb **read,
		   PsvcCall *cancel, PsvcResult *res)
{
	PsvcCall   *call = psvc_call_make(def->read, server, &id);
	PsvcResult *rres;
	ErrorContextCallback errcb;
	const char *state = NULL;

	if (current_run != NULL)
		psvc_call_set_retries(call, 0);
	push_context(&errcb, def->reading, def->cancel, how);
	rres = psvc_call_run(call);
	if (rres->kind != PSVC_CALL_OK && !psvc_call_is_empty(call, rres))
	{
		error_context_stack = errcb.previous;
		if (current_run != NULL)
			current_run->retry = true;
		psvc_call_raise(cancel, res);
	}
	*read = rres->kind == PSVC_CALL_OK ? psvc_exec_payload(call, rres) : NULL;
	if (*read != NULL)
	{
		if (def->state_absent == NULL)
			state = psvc_exec_text_member(call, *read, def->state);
		else
		{
			state = psvc_fn_member_text(*read, def->state);
			if (state == NULL)
				state = def->state_absent;
		}
	}
	error_context_stack = errcb.previous;
	return state;
}

Jsonb *
psvc_settle_cancel(const PsvcSettleCancel *def, const PsvcServer *server,
				   const char *id)
{
	PsvcCall   *call = psvc_call_make(def->cancel, server, &id);
	bool		resent = false;

	for (;;)
	{
		PsvcResult *res = psvc_call_run(call);
		Jsonb	   *read;
		const char *state;
		char	   *code;

		if (res->kind == PSVC_CALL_OK)
			return psvc_exec_payload(call, res);
		if (res->kind != PSVC_CALL_LOST && res->status != 409)
			psvc_call_raise(call, res);
		if (res->kind == PSVC_CALL_LOST)
			run_next(PSVC_SETTLE_RESEND);	/* it may have been carried out */

		state = read_state(def, server, id,
						   res->kind == PSVC_CALL_LOST ? "lost its answer" :
						   "was refused", &read, call, res);
		if (read == NULL)
			psvc_call_raise(call, res);

		/* resuming: an earlier attempt may have cancelled it already */
		if (run_mode() != PSVC_SETTLE_FIRST && strcmp(state, def->done) == 0)
			return read;
		if (res->kind == PSVC_CALL_LOST)
		{
			if (strcmp(state, def->done) == 0)
				return read;
			if (strcmp(state, def->needed) == 0 && !resent)
			{
				resent = true;
				continue;
			}
			if (current_run != NULL)
				current_run->final = true;
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("the outcome of %s is unknown", def->function),
					 errdetail("%s %s %s.", res->message, def->now, state),
					 errhint("%s", def->hint_unknown)));
		}

		code = psvc_call_error_code(res);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s \"%s\" is %s, not %s", def->object, id, state, def->needed),
				 code != NULL ?
				 errdetail("%s The service reported error \"%s\".", def->applies, code) :
				 errdetail("%s", def->applies),
				 def->other_state != NULL && strcmp(state, def->other_state) == 0 ?
				 errhint("%s", def->hint_other) :
				 def->hint_refused != NULL ? errhint("%s", def->hint_refused) : 0));
	}
}
