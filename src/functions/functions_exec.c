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
 * one; USAGE is checked), builds the request through the one URL builder
 * (http_url.c) with the retry discipline the row gives (safe or not),
 * sends it, and makes the answer the function's result: the payload of
 * the row's envelope, one member of it (text or bigint), or nothing.  A
 * 404 whose error code the row names as "nothing here" is NULL; a
 * validating operation returns a refusal as {"valid": false, "error":
 * ...}; every other failure is the ERROR http.c maps.
 *
 * Functions with logic of their own (create_order and the cancels, which
 * find out what a lost request did; the chunked uploads) build their
 * requests with psvc_exec_request() from their rows and read answers with
 * psvc_exec_payload() / psvc_exec_send(), so they too never hold a route.
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

PsvcHttpRequest *
psvc_exec_request(const PsvcOperation *op, const PsvcServer *server,
				  const char *const *values)
{
	PsvcHttpRequest *req = palloc0(sizeof(PsvcHttpRequest));
	bool		is_read = strcmp(op->method, "GET") == 0 ||
		strcmp(op->method, "HEAD") == 0;

	req->op = op;
	req->server = server;
	req->method = op->method;
	req->route = op->route;
	for (int i = 0; i < PSVC_MAX_PATH_PARAMS && op->params[i]; i++)
		req->path_params = lappend(req->path_params,
								   psvc_kv(op->params[i]->name, values[i]));
	/* a GET that acts is retried like a POST; a POST that only checks like a GET */
	req->unsafe = is_read && !op->safe;
	req->retry_unsafe = !is_read && op->safe;
	req->return_errors = true;
	return req;
}

void
psvc_exec_set_body(PsvcHttpRequest *req, char *json, size_t len)
{
	req->body = json;
	req->body_len = len;
	req->content_type = "application/json";
}

static void
report_empty_member(const PsvcOperation *op)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s must not be empty", op->arg_name)));
}

void
psvc_exec_set_member_body(PsvcHttpRequest *req, const char *value)
{
	StringInfoData buf;

	Assert(req->op->arg == PSVC_ARG_BODY_MEMBER);
	if (value[0] == '\0')
		report_empty_member(req->op);
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	escape_json(&buf, req->op->body_member);
	appendStringInfoChar(&buf, ':');
	escape_json(&buf, value);
	appendStringInfoChar(&buf, '}');
	psvc_exec_set_body(req, buf.data, buf.len);
}

Jsonb *
psvc_exec_payload(const PsvcHttpRequest *req, const PsvcHttpResponse *resp)
{
	const char *envelope = req->op->envelope;
	Jsonb	   *payload;

	if (envelope == NULL)
		return psvc_fn_body(req, resp);
	payload = psvc_fn_member_jsonb(psvc_fn_body(req, resp), envelope);
	if (payload == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("unexpected response shape from %s %s", req->method, req->route),
				 errdetail("Expected a JSON object with a non-null member \"%s\".",
						   envelope)));
	return payload;
}

/* Is resp a 404 that the operation names as "nothing here"? */
static bool
is_empty(const PsvcHttpRequest *req, const PsvcHttpResponse *resp)
{
	return resp->status == 404 && req->op->empty_codes != NULL &&
		psvc_op_empty_code(req->op, psvc_fn_error_code(resp));
}

Jsonb *
psvc_exec_send(const PsvcHttpRequest *req)
{
	PsvcHttpResponse *resp = psvc_http_request(req);

	if (resp->status >= 200 && resp->status <= 299)
		return psvc_exec_payload(req, resp);
	if (is_empty(req, resp))
		return NULL;
	psvc_http_raise(req, resp);
}

/*
 * A refusal of a validating operation as its result, or NULL when resp is
 * not one (then it is an error).
 */
static Jsonb *
refusal(const PsvcHttpRequest *req, const PsvcHttpResponse *resp)
{
	Jsonb	   *error;
	StringInfoData buf;

	switch (req->op->refusal)
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

/* The numeric member of an answer as bigint; raises naming the request. */
static int64
int64_member(const PsvcHttpRequest *req, Jsonb *answer, const char *member)
{
	JsonbValue *v = psvc_fn_member(answer, member);

	if (v == NULL || v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("response of %s %s has no numeric \"%s\"",
						req->method, req->route, member),
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
	char	   *body = NULL;
	size_t		body_len = 0;
	char	   *member_value = NULL;
	int			server_arg = (op->arg == PSVC_ARG_NONE) ? 0 : 1;
	PsvcServer *server;
	PsvcHttpRequest *req;
	PsvcHttpResponse *resp;
	Jsonb	   *payload;

	if (op->arg != PSVC_ARG_NONE && PG_ARGISNULL(0))
		PG_RETURN_NULL();

	switch (op->arg)
	{
		case PSVC_ARG_PATH:
			if (op->params[0]->kind == PSVC_PARAM_INT64)
				values[0] = psprintf(INT64_FORMAT, PG_GETARG_INT64(0));
			else
				values[0] = text_to_cstring(PG_GETARG_TEXT_PP(0));
			/* before the server is looked for: nothing is sent for a bad value */
			psvc_http_check_param(op, op->params[0]->name, values[0]);
			break;
		case PSVC_ARG_BODY_OBJECT:
		case PSVC_ARG_BODY:
			{
				Jsonb	   *j = PG_GETARG_JSONB_P(0);

				if (op->arg == PSVC_ARG_BODY_OBJECT &&
					(!JB_ROOT_IS_OBJECT(j) || JB_ROOT_IS_SCALAR(j)))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("%s must be a JSON object", op->arg_name),
							 op->arg_hint ? errhint("%s", op->arg_hint) : 0));
				body = psvc_fn_json_text(j, &body_len);
				break;
			}
		case PSVC_ARG_BODY_MEMBER:
			member_value = text_to_cstring(PG_GETARG_TEXT_PP(0));
			if (member_value[0] == '\0')
				report_empty_member(op);
			break;
		case PSVC_ARG_NONE:
			break;
	}

	server = psvc_exec_server(op, fcinfo, server_arg);
	req = psvc_exec_request(op, server, values);
	if (body != NULL)
		psvc_exec_set_body(req, body, body_len);
	else if (member_value != NULL)
		psvc_exec_set_member_body(req, member_value);
	resp = psvc_http_request(req);

	if (resp->status < 200 || resp->status > 299)
	{
		Jsonb	   *refused = refusal(req, resp);

		if (refused != NULL)
			PG_RETURN_JSONB_P(refused);
		if (is_empty(req, resp))
			PG_RETURN_NULL();
		psvc_http_raise(req, resp);
	}

	switch (op->result)
	{
		case PSVC_RESULT_VOID:
			PG_RETURN_VOID();
		case PSVC_RESULT_JSONB:
			PG_RETURN_JSONB_P(psvc_exec_payload(req, resp));
		case PSVC_RESULT_TEXT:
			{
				char	   *text;

				payload = psvc_exec_payload(req, resp);
				text = psvc_fn_member_text(payload, op->result_member);
				if (text == NULL)
					ereport(ERROR,
							(errcode(ERRCODE_FDW_ERROR),
							 errmsg("unexpected response shape from %s %s",
									req->method, req->route),
							 op->envelope ?
							 errdetail("Expected a string member \"%s\" in \"%s\".",
									   op->result_member, op->envelope) :
							 errdetail("Expected a string member \"%s\".",
									   op->result_member)));
				PG_RETURN_TEXT_P(cstring_to_text(text));
			}
		case PSVC_RESULT_INT64:
			payload = psvc_exec_payload(req, resp);
			PG_RETURN_INT64(int64_member(req, payload, op->result_member));
	}
	pg_unreachable();
}

/*
 * The error of a create whose outcome could not be found out: failure
 * says what went wrong, found what the lookup saw (or NULL), have_ids
 * whether the payload carried ids to look it up by.
 */
void
psvc_exec_create_unknown(const PsvcCreateDef *def, const char *failure,
						 const char *found, bool have_ids)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("the outcome of %s is unknown", def->function),
			 errdetail("%s%s%s The service may have created the %s.",
					   failure, found ? " " : "", found ? found : "", def->object),
			 have_ids ?
			 errhint("Read the orders by their custom ids (partner_svc.order_detail) before sending the %s again; the service refuses a custom id twice.",
					 def->object) :
			 errhint("Look for the %s in %s before sending it again; with a custom_id on every vignette %s checks by itself.",
					 def->object, def->where, def->function)));
	pg_unreachable();
}

/*
 * The lost-answer discipline of a create.  A 2xx is the answer.  A lost
 * answer or a 5xx may have made the object: it is looked for (settle);
 * found, it is the answer; not a trace, the create is sent again, at most
 * max_retries times.  A resend refused with custom_id_exists means the lost
 * request got there after all: looked for once more.  Anything else raises
 * the mapped error.
 */
Jsonb *
psvc_exec_create(const PsvcCreateDef *def, PsvcServer *server,
				 PsvcHttpRequest *req, bool can_settle,
				 PsvcSettleFn settle, void *arg)
{
	int			resends = 0;

	req->return_unknown = true;
	for (;;)
	{
		PsvcHttpResponse *resp = psvc_http_request(req);
		char	   *code;
		Jsonb	   *result;
		bool		none;

		if (resp->status >= 200 && resp->status <= 299)
			return psvc_exec_payload(req, resp);

		if (resp->outcome_unknown || resp->status >= 500)
		{
			const char *failure = resp->outcome_unknown ? resp->failure :
				psprintf("%s %s failed with HTTP status %ld.",
						 req->method, req->route, resp->status);

			if (!can_settle)
				psvc_exec_create_unknown(def, failure, NULL, false);
			result = settle(arg, failure, &none);
			if (result != NULL)
				return result;
			if (resends < psvc_options_setting(server, PSVC_SETTING_MAX_RETRIES))
			{
				resends++;
				continue;
			}
			if (!resp->outcome_unknown)
				psvc_http_raise(req, resp);
			psvc_exec_create_unknown(def, failure,
									 "No order with the custom ids of the payload existed when they were looked up, but the request may still be carried out.",
									 true);
		}

		/* a resend refused because the lost request got there after all */
		code = psvc_fn_error_code(resp);
		if (resends > 0 && resp->status == 409 && code != NULL &&
			strcmp(code, "custom_id_exists") == 0)
		{
			result = settle(arg, psprintf("An earlier %s %s got no answer.",
										  req->method, req->route), &none);
			if (result != NULL)
				return result;
		}
		psvc_http_raise(req, resp);
	}
}
