/*-------------------------------------------------------------------------
 *
 * deferred_ops.c
 *		  Which functions may be deferred, as data: a row per SQL function
 *		  that changes state at a partner, saying how an attempt that may
 *		  have been carried out is finished, and which partner object a
 *		  call is about.  Checks a call's arguments against the function's
 *		  own (pg_proc) before anything is queued, and writes the SELECT a
 *		  sender runs it with.
 *
 * A deferred call is sent through the very SQL function a direct call
 * uses (its executor, its rate limiter, retries and recovery), so the
 * arguments are the function's named arguments, read from pg_proc: no
 * second list of them is kept here.  A JSON value is given to an argument
 * of type jsonb as it is, to text as a JSON string, and to any other
 * type (bigint, bytea) as its text form (a JSON number or string), which
 * the type's input function checks now.
 *
 * Order: a call is about the partner objects its row names (the orders
 * of a create's vignettes by custom id, the order of a cancel, an upload,
 * a job); calls about the same object are sent one after the other, in
 * the order queued ("lanes", deferred_sender.c).
 *
 * Memory: CurrentMemoryContext; the rows are constant.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/deferred/deferred_ops.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "deferred_int.h"


/*
 * The deferrable functions.  SETTLE: a resumed call finds out what the
 * earlier attempt did (creates by custom id, cancels by status).  ONCE:
 * a call is marked durably before its request leaves, and one that may
 * have reached the partner is not sent again.  BY_SIZE: the file's size
 * is kept durably before the request, and a resumed call sends what the
 * file lacks of the chunk (docs/deferred-calls.md).
 */
static const PsvcDefOp def_ops[] = {
	{.name = "create_order", .recovery = PSVC_DEF_SETTLE, .lane = "order",
	.lane_arg = "payload", .lane_items = "vignettes", .lane_member = "custom_id"},
	{.name = "create_transaction", .recovery = PSVC_DEF_SETTLE, .lane = "order",
	.lane_arg = "payload", .lane_items = "vignettes", .lane_member = "custom_id"},
	{.name = "cancel_pending", .recovery = PSVC_DEF_SETTLE, .lane = "order", .lane_arg = "id"},
	{.name = "cancel_deferred", .recovery = PSVC_DEF_SETTLE, .lane = "order", .lane_arg = "id"},
	{.name = "cancel_transaction", .recovery = PSVC_DEF_SETTLE, .lane = "transaction", .lane_arg = "id"},
	{.name = "create_upload", .recovery = PSVC_DEF_ONCE},
	{.name = "append_upload", .recovery = PSVC_DEF_BY_SIZE, .lane = "upload", .lane_arg = "file_id"},
	{.name = "upload_file", .recovery = PSVC_DEF_ONCE},
	{.name = "save_job", .recovery = PSVC_DEF_ONCE, .lane = "job", .lane_arg = "job",
	.lane_member = "id"},
	{.name = "delete_job", .recovery = PSVC_DEF_ONCE, .lane = "job", .lane_arg = "job_id"},
	{.name = "run_job", .recovery = PSVC_DEF_ONCE, .lane = "job", .lane_arg = "job_id"},
	{.name = "stop_job", .recovery = PSVC_DEF_ONCE, .lane = "job", .lane_arg = "job_id"},
	{.name = "pause_job", .recovery = PSVC_DEF_ONCE, .lane = "job", .lane_arg = "job_id"},
	{.name = "activate_job", .recovery = PSVC_DEF_ONCE, .lane = "job", .lane_arg = "job_id"},
	{.name = "clone_job", .recovery = PSVC_DEF_ONCE, .lane = "job", .lane_arg = "job_id"},
	{.name = "sync_job_token", .recovery = PSVC_DEF_ONCE, .lane = "job", .lane_arg = "job_id"},
	{.name = "send_execution_email", .recovery = PSVC_DEF_ONCE, .lane = "execution",
	.lane_arg = "execution_id"},
	{.name = "generate", .recovery = PSVC_DEF_ONCE},
	{.name = "mcp", .recovery = PSVC_DEF_ONCE},
	/* ONCE unless the request may be sent again: deferred_send.c */
	{.name = "request", .recovery = PSVC_DEF_ONCE, .optional = {"query", "body"}},
};

const PsvcDefOp *
psvc_def_op(const char *operation)
{
	for (int i = 0; i < lengthof(def_ops); i++)
		if (strcmp(def_ops[i].name, operation) == 0)
			return &def_ops[i];
	return NULL;
}

/* The names of the deferrable functions, for a hint. */
static char *
op_names(void)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < lengthof(def_ops); i++)
		appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "", def_ops[i].name);
	return buf.data;
}

/*
 * The one function called name in schema partner_svc: its pg_proc tuple
 * (a copy), or NULL when there is none.
 */
static HeapTuple
find_function(const char *name)
{
	Oid			nsp = get_namespace_oid("partner_svc", true);
	CatCList   *list;
	HeapTuple	found = NULL;

	if (!OidIsValid(nsp))
		return NULL;
	list = SearchSysCacheList1(PROCNAMEARGSNSP, CStringGetDatum(name));
	for (int i = 0; i < list->n_members; i++)
	{
		HeapTuple	tup = &list->members[i]->tuple;

		if (((Form_pg_proc) GETSTRUCT(tup))->pronamespace == nsp)
		{
			found = heap_copytuple(tup);
			break;
		}
	}
	ReleaseSysCacheList(list);
	return found;
}

/* The function's arguments: count, types and names (never NULL). */
static int
function_args(HeapTuple tup, Oid **types, char ***names)
{
	char	   *modes;
	int			n = get_func_arg_info(tup, types, names, &modes);

	if (*names == NULL)
		elog(ERROR, "function %s has unnamed arguments",
			 NameStr(((Form_pg_proc) GETSTRUCT(tup))->proname));
	return n;
}

/* The text form of a JSON scalar: a string's content, a number's digits. */
static char *
scalar_text(JsonbValue *v)
{
	if (v->type == jbvString)
		return pnstrdup(v->val.string.val, v->val.string.len);
	if (v->type == jbvNumeric)
		return DatumGetCString(DirectFunctionCall1(numeric_out,
												   NumericGetDatum(v->val.numeric)));
	return NULL;
}

/*
 * Checks the value v of argument name (of type type) of operation;
 * raises 22023 naming the argument when it is of the wrong kind.
 */
static void
check_value(const char *operation, const char *name, Oid type, JsonbValue *v)
{
	char	   *text;
	Oid			infunc;
	Oid			ioparam;
	MemoryContext cxt = CurrentMemoryContext;

	if (v->type == jbvNull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("argument \"%s\" of %s must not be null", name, operation)));
	if (type == JSONBOID)
		return;
	text = scalar_text(v);
	if (type == TEXTOID)
	{
		if (v->type != jbvString)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("argument \"%s\" of %s must be a JSON string", name, operation)));
		return;
	}
	if (text == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("argument \"%s\" of %s must be a %s", name, operation,
						format_type_be(type)),
				 errhint("Give it as a JSON number or string in the type's text form.")));
	getTypeInputInfo(type, &infunc, &ioparam);
	/* the input function's own error is replaced by one naming the argument */
	PG_TRY();
	{
		(void) OidInputFunctionCall(infunc, text, ioparam, -1);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("argument \"%s\" of %s must be a %s", name, operation,
						format_type_be(type)),
				 errdetail("%s", edata->message)));
	}
	PG_END_TRY();
}

/* Appends to *lanes the objects v (an item or a whole argument) names. */
static void
add_lane(List **lanes, const PsvcDefOp *op, JsonbValue *v)
{
	char	   *text = v ? scalar_text(v) : NULL;

	if (text != NULL && text[0] != '\0')
		*lanes = lappend(*lanes, psprintf("%s:%s", op->lane, text));
}

/* The partner objects a call of op with args is about. */
static List *
call_lanes(const PsvcDefOp *op, Jsonb *args)
{
	List	   *lanes = NIL;
	JsonbValue *arg;
	Jsonb	   *obj;

	if (op->lane == NULL)
		return NIL;
	arg = getKeyJsonValueFromContainer(&args->root, op->lane_arg,
									   strlen(op->lane_arg), NULL);
	if (arg == NULL)
		return NIL;
	if (op->lane_member == NULL)
	{
		add_lane(&lanes, op, arg);
		return lanes;
	}
	obj = JsonbValueToJsonb(arg);
	if (op->lane_items != NULL)
	{
		JsonbValue *items;

		if (!JB_ROOT_IS_OBJECT(obj))
			return NIL;
		items = getKeyJsonValueFromContainer(&obj->root, op->lane_items,
											 strlen(op->lane_items), NULL);
		if (items == NULL || items->type != jbvBinary ||
			!JsonContainerIsArray(items->val.binary.data))
			return NIL;
		obj = JsonbValueToJsonb(items);
		for (uint32 i = 0; i < JB_ROOT_COUNT(obj); i++)
		{
			Jsonb	   *item = JsonbValueToJsonb(getIthJsonbValueFromContainer(&obj->root, i));

			if (JB_ROOT_IS_OBJECT(item) && !JB_ROOT_IS_SCALAR(item))
				add_lane(&lanes, op,
						 getKeyJsonValueFromContainer(&item->root, op->lane_member,
													  strlen(op->lane_member), NULL));
		}
		return lanes;
	}
	if (JB_ROOT_IS_OBJECT(obj) && !JB_ROOT_IS_SCALAR(obj))
		add_lane(&lanes, op, getKeyJsonValueFromContainer(&obj->root, op->lane_member,
														  strlen(op->lane_member), NULL));
	return lanes;
}

const PsvcDefOp *
psvc_def_check(const char *operation, Jsonb *args, List **lanes)
{
	const PsvcDefOp *op = psvc_def_op(operation);
	HeapTuple	tup = find_function(operation);
	Oid		   *types;
	char	  **names;
	int			n;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	if (op == NULL && tup != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not change state at a partner and cannot be deferred", operation),
				 errhint("Call partner_svc.%s() directly.", operation)));
	if (op == NULL || tup == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("unknown operation \"%s\"", operation),
				 errhint("The operations that can be deferred are %s.", op_names())));
	if (!JB_ROOT_IS_OBJECT(args) || JB_ROOT_IS_SCALAR(args))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the arguments of %s must be a JSON object", operation),
				 errhint("Name each argument: '{\"%s\": ...}'.",
						 op->lane_arg ? op->lane_arg : "name")));

	n = function_args(tup, &types, &names);
	/* every key is an argument of the function, the server apart */
	it = JsonbIteratorInit(&args->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		bool		known = false;
		char	   *key;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		for (int i = 0; i < n; i++)
			if (strcmp(names[i], key) == 0 && strcmp(key, "server") != 0)
				known = true;
		if (!known)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s has no argument \"%s\"", operation, key),
					 strcmp(key, "server") == 0 ?
					 errhint("Give the server as the third argument of defer().") : 0));
	}
	/* every argument but the server is given, with a value of its type */
	for (int i = 0; i < n; i++)
	{
		JsonbValue *val;

		if (strcmp(names[i], "server") == 0)
			continue;
		val = getKeyJsonValueFromContainer(&args->root, names[i], strlen(names[i]), NULL);
		if (val == NULL && types[i] == JSONBOID &&
			((op->optional[0] && strcmp(op->optional[0], names[i]) == 0) ||
			 (op->optional[1] && strcmp(op->optional[1], names[i]) == 0)))
			continue;
		if (val == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("argument \"%s\" of %s is missing", names[i], operation)));
		check_value(operation, names[i], types[i], val);
	}
	*lanes = call_lanes(op, args);
	return op;
}

char *
psvc_def_call_sql(const char *operation)
{
	HeapTuple	tup = find_function(operation);
	Oid		   *types;
	char	  **names;
	int			n;
	StringInfoData call;
	bool		returns_void;

	if (tup == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("function partner_svc.%s does not exist", operation)));
	returns_void = ((Form_pg_proc) GETSTRUCT(tup))->prorettype == VOIDOID;
	n = function_args(tup, &types, &names);
	initStringInfo(&call);
	appendStringInfo(&call, "partner_svc.%s(", quote_identifier(operation));
	for (int i = 0; i < n; i++)
	{
		const char *name = quote_identifier(names[i]);

		if (i > 0)
			appendStringInfoString(&call, ", ");
		if (strcmp(names[i], "server") == 0)
			appendStringInfo(&call, "%s => $2", name);
		else if (types[i] == JSONBOID)
			appendStringInfo(&call, "%s => ($1 -> %s)", name, quote_literal_cstr(names[i]));
		else
			appendStringInfo(&call, "%s => ($1 ->> %s)::%s", name,
							 quote_literal_cstr(names[i]), format_type_be_qualified(types[i]));
	}
	appendStringInfoChar(&call, ')');
	if (returns_void)
		return psprintf("SELECT NULL::pg_catalog.jsonb FROM (SELECT %s) s", call.data);
	return psprintf("SELECT pg_catalog.to_jsonb(%s)", call.data);
}
