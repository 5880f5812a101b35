/*-------------------------------------------------------------------------
 *
 * functions_exec.c
 *		  The one executor of the SQL functions: a function names its
 *		  operation of the catalogue (catalog.c), and everything else is
 *		  done here from the row.
 *
 * psvc_exec() reads the function's argument as the row says (a path value,
 * a JSON body, a member of a body), checks a path value against the row's
 * rule before anything else happens (22023, nothing sent), finds the
 * server of the row's service (the optional last argument, or the only
 * one; USAGE is checked), makes the call of the row (call.h), runs it,
 * and makes the answer the function's result: the payload of the row's
 * envelope, one member of it (text or bigint), or nothing.  A 404 whose
 * error code the row names as "nothing here" is NULL; a validating
 * operation returns a refusal as {"valid": false, "error": ...}; every
 * other result is raised by psvc_call_raise.
 *
 * Functions with logic of their own (the creates and cancels, which find
 * out what a lost request did, functions_settle.c; the chunked uploads)
 * make their calls from their rows too and read answers with
 * psvc_exec_payload() / psvc_exec_send(), so they never hold a route.
 *
 * Memory: everything is allocated in the function's CurrentMemoryContext
 * (the per-call context of the executor's caller); the result too.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions_exec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "catalog.h"
#include "functions.h"

PsvcServer *
psvc_exec_server(const PsvcOperation *op, FunctionCallInfo fcinfo, int argno)
{
	return psvc_fn_server(psvc_services[op->service].name, fcinfo, argno);
}

char *
psvc_exec_path_arg(FunctionCallInfo fcinfo, const PsvcOperation *op)
{
	char	   *value;

	if (op->params[0]->kind == PSVC_PARAM_INT64)
		value = psprintf(INT64_FORMAT, PG_GETARG_INT64(0));
	else
		value = text_to_cstring(PG_GETARG_TEXT_PP(0));
	/* before the server is looked for: nothing is sent for a bad value */
	psvc_call_check_param(op, op->params[0]->name, value);
	return value;
}

void
psvc_exec_set_jsonb_body(PsvcCall *call, Jsonb *j)
{
	size_t		len;
	char	   *text = psvc_fn_json_text(j, &len);

	psvc_call_set_body(call, text, len);
}

static void
report_empty_member(const PsvcOperation *op)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s must not be empty", op->arg_name)));
}

void
psvc_exec_set_member_body(PsvcCall *call, const char *value)
{
	StringInfoData buf;

	Assert(call->op->arg == PSVC_ARG_BODY_MEMBER);
	if (value[0] == '\0')
		report_empty_member(call->op);
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	escape_json(&buf, call->op->body_member);
	appendStringInfoChar(&buf, ':');
	escape_json(&buf, value);
	appendStringInfoChar(&buf, '}');
	psvc_call_set_body(call, buf.data, buf.len);
}

/*
 * The body of the answer res to call as jsonb.  A body that is not JSON
 * raises an error naming the call.  CurrentMemoryContext.
 */
static Jsonb *
exec_body(const PsvcCall *call, const PsvcResult *resp)
{
	Jsonb	   *body = psvc_fn_parse(resp->body, resp->body_len);

	if (body == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_STRING_FORMAT),
				 errmsg("invalid JSON in the response of %s %s",
						call->op->method, call->op->route),
				 resp->body_len == 0 ? errdetail("The response had no body.") :
				 errdetail("The body is not valid JSON text.")));
	return body;
}

Jsonb *
psvc_exec_payload(const PsvcCall *call, const PsvcResult *res)
{
	const char *envelope = call->op->envelope;
	Jsonb	   *payload;

	if (envelope == NULL)
		return exec_body(call, res);
	payload = psvc_fn_member_jsonb(exec_body(call, res), envelope);
	if (payload == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("unexpected response shape from %s %s",
						call->op->method, call->op->route),
				 errdetail("Expected a JSON object with a non-null member \"%s\".",
						   envelope)));
	return payload;
}

Jsonb *
psvc_exec_send(const PsvcCall *call)
{
	PsvcResult *res = psvc_call_run(call);

	if (res->kind == PSVC_CALL_OK)
		return psvc_exec_payload(call, res);
	if (psvc_call_is_empty(call, res))
		return NULL;
	psvc_call_raise(call, res);
}

char *
psvc_exec_text_member(const PsvcCall *call, Jsonb *payload, const char *member)
{
	const PsvcOperation *op = call->op;
	char	   *text = psvc_fn_member_text(payload, member);

	if (text == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("unexpected response shape from %s %s",
						op->method, op->route),
				 op->envelope ?
				 errdetail("Expected a string member \"%s\" in \"%s\".",
						   member, op->envelope) :
				 errdetail("Expected a string member \"%s\".", member)));
	return text;
}

/*
 * A refusal of a validating operation as its result, or NULL when res is
 * not one (then it is an error).
 */
static Jsonb *
refusal(const PsvcCall *call, const PsvcResult *resp)
{
	Jsonb	   *error;
	StringInfoData buf;

	if (resp->kind != PSVC_CALL_HTTP_ERROR)
		return NULL;
	switch (call->op->refusal)
	{
		case PSVC_REFUSAL_KEY:
			/* a refused key: the problem response, or null */
			if (resp->status != 401 && resp->status != 403)
				return NULL;
			error = psvc_fn_parse(resp->body, resp->body_len);
			break;
		case PSVC_REFUSAL_PAYLOAD:
			/* a refused payload: the service's "error" */
			if (resp->status != 400 && resp->status != 409 && resp->status != 422)
				return NULL;
			error = psvc_fn_member_jsonb(psvc_fn_parse(resp->body, resp->body_len),
										 "error");
			if (error == NULL)
				return NULL;
			break;
		case PSVC_REFUSAL_NONE:
		default:
			return NULL;
	}
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"valid\": false, \"error\": ");
	if (error != NULL)
		JsonbToCString(&buf, &error->root, VARSIZE(error));
	else
		appendStringInfoString(&buf, "null");
	appendStringInfoChar(&buf, '}');
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/* The numeric member of an answer as bigint; raises naming the call. */
static int64
int64_member(const PsvcCall *call, Jsonb *answer, const char *member)
{
	JsonbValue *v = psvc_fn_member(answer, member);

	if (v == NULL || v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("response of %s %s has no numeric \"%s\"",
						call->op->method, call->op->route, member),
				 errdetail("An object {\"%s\": N} was expected.", member)));
	return DatumGetInt64(DirectFunctionCall1(numeric_int8,
											 NumericGetDatum(v->val.numeric)));
}

/*
 * The SQL function of operation op: (argument, server name) or (server
 * name), as the row's arg says.  A NULL argument sends nothing and
 * returns NULL.
 */
Datum
psvc_exec(FunctionCallInfo fcinfo, const PsvcOperation *op)
{
	const char *values[PSVC_MAX_PATH_PARAMS] = {NULL};
	Jsonb	   *body = NULL;
	char	   *member_value = NULL;
	int			server_arg = (op->arg == PSVC_ARG_NONE) ? 0 : 1;
	PsvcCall   *call;
	PsvcResult *res;
	Jsonb	   *payload;

	if (op->arg != PSVC_ARG_NONE && PG_ARGISNULL(0))
		PG_RETURN_NULL();

	switch (op->arg)
	{
		case PSVC_ARG_PATH:
			values[0] = psvc_exec_path_arg(fcinfo, op);
			break;
		case PSVC_ARG_BODY_OBJECT:
		case PSVC_ARG_BODY:
			body = PG_GETARG_JSONB_P(0);
			if (op->arg == PSVC_ARG_BODY_OBJECT &&
				(!JB_ROOT_IS_OBJECT(body) || JB_ROOT_IS_SCALAR(body)))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s must be a JSON object", op->arg_name),
						 op->arg_hint ? errhint("%s", op->arg_hint) : 0));
			break;
		case PSVC_ARG_BODY_MEMBER:
			member_value = text_to_cstring(PG_GETARG_TEXT_PP(0));
			if (member_value[0] == '\0')
				report_empty_member(op);
			break;
		case PSVC_ARG_NONE:
			break;
	}

	call = psvc_call_make(op, psvc_exec_server(op, fcinfo, server_arg), values);
	if (body != NULL)
		psvc_exec_set_jsonb_body(call, body);
	else if (member_value != NULL)
		psvc_exec_set_member_body(call, member_value);
	res = psvc_call_run(call);

	if (res->kind != PSVC_CALL_OK)
	{
		Jsonb	   *refused = refusal(call, res);

		if (refused != NULL)
			PG_RETURN_JSONB_P(refused);
		if (psvc_call_is_empty(call, res))
			PG_RETURN_NULL();
		psvc_call_raise(call, res);
	}

	switch (op->result)
	{
		case PSVC_RESULT_VOID:
			PG_RETURN_VOID();
		case PSVC_RESULT_JSONB:
			PG_RETURN_JSONB_P(psvc_exec_payload(call, res));
		case PSVC_RESULT_TEXT:
			payload = psvc_exec_payload(call, res);
			PG_RETURN_TEXT_P(cstring_to_text(psvc_exec_text_member(call, payload,
																   op->result_member)));
		case PSVC_RESULT_INT64:
			payload = psvc_exec_payload(call, res);
			PG_RETURN_INT64(int64_member(call, payload, op->result_member));
	}
	pg_unreachable();
}
