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
 *   them ("recovered": true); when none exists the create is sent again,
 *   at most max_retries times (the server's option, else
 *   partner_svc.max_retries): safe even if the lost request is still on
 *   its way, because the service refuses a key twice, which sends us back
 *   to the lookup.  A payload without a key on every item cannot be looked
 *   up: the outcome is an error that says how to check.  A 5xx is treated
 *   like a lost answer (the service may have acted before it failed).
 * - A cancel (psvc_settle_cancel) reads the object's state: the done state
 *   means the cancel happened (the state read is returned); the state the
 *   cancel needs means it did not, and it is sent once more.  A refusal
 *   (409) reads the state too, to say which it is.
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

bool		psvc_settle_resuming = false;
bool		psvc_settle_final = false;

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

/* The error of a create whose outcome could not be found out (08006). */
static void
create_unknown(const PsvcSettleCreate *def, const char *failure,
			   const char *found, bool have_keys)
{
	/* nothing found: a later attempt may still settle it */
	psvc_settle_final = (found != def->none_found);
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
 * After a create whose answer was lost: looks its objects up by the keys
 * of the payload's items.  Returns the create's answer when every item
 * has its object and all match the payload; NULL when not one exists.
 * Anything in between raises the unknown-outcome error with what was
 * found.
 */
static Jsonb *
recover_create(const PsvcSettleCreate *def, const PsvcServer *server,
			   Jsonb *payload, List *keys, List *items, const char *failure)
{
	ErrorContextCallback errcb;
	List	   *found = NIL;
	ListCell   *lk;
	ListCell   *li;
	int			nfound = 0;
	bool		differ = false;
	const char *group = NULL;
	Jsonb	   *answer;

	push_context(&errcb, def->looking, def->create, "lost its answer");
	forboth(lk, keys, li, items)
	{
		const char *key = lfirst(lk);
		Jsonb	   *obj = psvc_exec_send(psvc_call_make(def->lookup,
														server, &key));

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
		return NULL;
	if (nfound < list_length(keys))
		create_unknown(def, failure, def->some_found, true);
	if (differ)
		create_unknown(def, failure, def->differ, true);
	answer = def->answer(server, payload, found, group);
	return answer;
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
	int			resends = 0;

	psvc_exec_set_jsonb_body(call, payload);
	if (psvc_settle_resuming)
	{
		/* an earlier attempt may have created the objects: settle as a resend */
		if (keys == NIL)
			create_unknown(def, psprintf("An earlier attempt of %s %s may have been carried out.",
										 op->method, op->route), NULL, false);
		resends = 1;
	}
	for (;;)
	{
		PsvcResult *res = psvc_call_run(call);
		char	   *code;
		Jsonb	   *result;

		if (res->kind == PSVC_CALL_OK)
			return psvc_exec_payload(call, res);

		if (res->kind == PSVC_CALL_LOST ||
			(res->kind == PSVC_CALL_HTTP_ERROR && res->status >= 500))
		{
			const char *failure = res->kind == PSVC_CALL_LOST ? res->message :
				psprintf("%s %s failed with HTTP status %ld.",
						 op->method, op->route, res->status);

			if (keys == NIL)
				create_unknown(def, failure, NULL, false);
			result = recover_create(def, server, payload, keys, items, failure);
			if (result != NULL)
				return result;
			if (resends < psvc_options_setting(server, PSVC_SETTING_MAX_RETRIES))
			{
				resends++;
				continue;
			}
			if (res->kind != PSVC_CALL_LOST)
				psvc_call_raise(call, res);
			create_unknown(def, failure, def->none_found, true);
		}

		/* a resend refused because the lost request got there after all */
		code = psvc_call_error_code(res);
		if (resends > 0 && res->status == 409 && code != NULL &&
			strcmp(code, def->exists_code) == 0)
		{
			result = recover_create(def, server, payload, keys, items,
									psprintf("An earlier %s %s got no answer.",
											 op->method, op->route));
			if (result != NULL)
				return result;
		}
		psvc_call_raise(call, res);
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
 * The object's state read after the cancel's call ended as how says
 * ("lost its answer", "was refused"); *read receives the payload of the
 * read, or NULL when its row says there is nothing.
 */
static const char *
read_state(const PsvcSettleCancel *def, const PsvcServer *server,
		   const char *id, const char *how, Jsonb **read)
{
	PsvcCall   *call = psvc_call_make(def->read, server, &id);
	ErrorContextCallback errcb;
	const char *state = NULL;

	push_context(&errcb, def->reading, def->cancel, how);
	*read = psvc_exec_send(call);
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

		state = read_state(def, server, id,
						   res->kind == PSVC_CALL_LOST ? "lost its answer" :
						   "was refused", &read);
		if (read == NULL)
			psvc_call_raise(call, res);

		/* resuming: an earlier attempt may have cancelled it already */
		if (psvc_settle_resuming && strcmp(state, def->done) == 0)
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
			psvc_settle_final = true;
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
