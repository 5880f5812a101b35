/*-------------------------------------------------------------------------
 *
 * functions_transactions.c
 *		  The SQL functions of the other routes of document 000's
 *		  rate-limit table: validate_vehicle, create_transaction,
 *		  transaction_status, transaction_fee, transaction_data,
 *		  cancel_transaction and mcp.
 *
 * Each is a row of the operation catalogue (catalog.c); the document shows
 * only the paths and limits of these routes, the shapes are the sandbox's
 * (docs/sandbox-orders.md, "Other partner routes of the rate-limit
 * table").  validate_vehicle, transaction_fee and transaction_data are the
 * generic executor's (functions_exec.c); the others have logic of their
 * own and build their requests from their rows (psvc_exec_request).  Every answer but /public/mcp's is the orders
 * envelope {"error", "data"}, and the functions return its "data"
 * (transaction_status: the status text).  /public/mcp answers JSON-RPC
 * 2.0, returned whole: a JSON-RPC error is a result, not an SQL error.
 * validate_vehicle reports a refused vehicle as {"valid": false, "error":
 * ...}, as validate_order does.
 *
 * Lost answers, as create_order (functions_orders.c):
 *
 * - create_transaction: a POST /public/transaction/create whose answer is
 *   lost (or that failed with a 5xx) makes orders or not.  The orders are
 *   looked up by the custom ids of the payload's vignettes; when every one
 *   exists, matches its vignette and all belong to one transaction, that
 *   transaction is read (GET /public/transaction/{id}/data) and returned
 *   with "recovered": true; when none exists the create is sent again (at
 *   most max_retries times; the service refuses a custom id twice, which
 *   sends us back to the lookup).  Without a custom id on every vignette
 *   the outcome is an error that says how to check.
 * - cancel_transaction: the transaction is read; FAILED means the cancel
 *   happened (the transaction is returned), still CREATED that it did not
 *   (it is sent once more).
 * - mcp: a JSON-RPC call cannot be looked up.  The methods that only read
 *   (initialize, tools/list, ping) are retried like a GET; any other call
 *   (tools/call) is sent once, and a lost answer is the unknown-outcome
 *   error of http.c.
 *
 * Memory: everything, the result included, is allocated in the function's
 * CurrentMemoryContext (the per-call context).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions_transactions.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "catalog.h"
#include "functions.h"

PG_FUNCTION_INFO_V1(psvc_tx_create);
PG_FUNCTION_INFO_V1(psvc_tx_status);
PG_FUNCTION_INFO_V1(psvc_tx_cancel);
PG_FUNCTION_INFO_V1(psvc_tx_mcp);

/* Longest custom id we send in a path (the rule of order_detail's {id}). */
#define CUSTOM_ID_MAX	255

/* The request of operation id with one path value (or none). */
static PsvcHttpRequest *
tx_request(PsvcServer *server, PsvcOpId id, const char *value)
{
	return psvc_exec_request(psvc_op(id), server, &value);
}

/* Argument 0, checked against the rule of operation id's one parameter. */
static char *
id_arg(FunctionCallInfo fcinfo, PsvcOpId id)
{
	const PsvcOperation *op = psvc_op(id);
	char	   *value = text_to_cstring(PG_GETARG_TEXT_PP(0));

	psvc_http_check_param(op, op->params[0]->name, value);
	return value;
}

/* Error context of the requests that find out what a lost request did. */
static void
lookup_context(void *arg)
{
	errcontext("%s", (const char *) arg);
}

/*
 * validate_vehicle(vehicle jsonb, server name DEFAULT NULL) RETURNS jsonb
 *
 * POST /public/validate-vehicle {"plate", "country"}.  A valid vehicle
 * gives the service's object ({"valid": true, "plate", "country"}, the
 * plate as the service stores it); a refused one {"valid": false,
 * "error": <the service's error>}.  It stores nothing: its row is safe.
 */
PSVC_OPERATION_FUNCTION(psvc_tx_validate_vehicle, PSVC_OP_VALIDATE_VEHICLE)

/*
 * transaction_fee(id text, server name DEFAULT NULL) RETURNS jsonb
 * GET /public/transaction/{unique_id}/fee: {"transaction_id", "amount",
 * "fee", "total", "currency"}.
 */
PSVC_OPERATION_FUNCTION(psvc_tx_fee, PSVC_OP_TRANSACTION_FEE)

/*
 * transaction_data(id text, server name DEFAULT NULL) RETURNS jsonb
 * GET /public/transaction/{id}/data: the transaction object.
 */
PSVC_OPERATION_FUNCTION(psvc_tx_data, PSVC_OP_TRANSACTION_DATA)

/*
 * The custom ids of a payload's vignettes, or NIL unless every vignette is
 * an object with a custom id we can send in a path.  *vignettes receives
 * the vignette objects, parallel to the ids.
 */
static List *
vignette_custom_ids(Jsonb *payload, List **vignettes)
{
	Jsonb	   *arr = psvc_fn_member_jsonb(payload, "vignettes");
	List	   *ids = NIL;
	uint32		n;

	*vignettes = NIL;
	if (arr == NULL || !JB_ROOT_IS_ARRAY(arr) || JB_ROOT_IS_SCALAR(arr) ||
		JB_ROOT_COUNT(arr) == 0)
		return NIL;
	n = JB_ROOT_COUNT(arr);
	for (uint32 i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&arr->root, i);
		Jsonb	   *item = JsonbValueToJsonb(e);
		char	   *cid = psvc_fn_member_text(item, "custom_id");

		if (cid == NULL || cid[0] == '\0' || strlen(cid) > CUSTOM_ID_MAX)
			return NIL;
		ids = lappend(ids, cid);
		*vignettes = lappend(*vignettes, item);
	}
	return ids;
}

/* Whether member key of a and of b are the same string. */
static bool
same_text(Jsonb *a, Jsonb *b, const char *key)
{
	char	   *x = psvc_fn_member_text(a, key);
	char	   *y = psvc_fn_member_text(b, key);

	return x != NULL && y != NULL && strcmp(x, y) == 0;
}

/* create_transaction as psvc_exec_create and its errors name it. */
static const PsvcCreateDef tx_create = {
	.function = "create_transaction",
	.object = "transaction",
	.where = "the foreign table transactions",
};

/* The error of a create_transaction whose outcome could not be found out. */
static void
raise_create_unknown(const char *failure, const char *found, bool have_ids)
{
	psvc_exec_create_unknown(&tx_create, failure, found, have_ids);
}

/*
 * After a create whose answer was lost: the transaction whose orders have
 * the payload's custom ids (operation order_detail), read whole
 * (transaction_data) and marked "recovered"; NULL with *none when not one
 * of the orders exists.  Orders for only some of the ids, orders that
 * differ from their vignettes, or orders of several transactions raise
 * the unknown-outcome error.
 */
static Jsonb *
recover_create(PsvcServer *server, const PsvcHttpRequest *create, Jsonb *payload,
			   List *ids, List *vignettes, const char *failure, bool *none)
{
	Jsonb	   *vehicles = psvc_fn_member_jsonb(payload, "vehicles");
	ErrorContextCallback errcb;
	char	   *txid = NULL;
	int			nfound = 0;
	bool		differ = false;
	ListCell   *li;
	ListCell   *lv;
	Jsonb	   *tx;

	errcb.callback = lookup_context;
	errcb.arg = psprintf("looking the orders up by custom id after %s %s lost its answer",
						 create->method, create->route);
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	forboth(li, ids, lv, vignettes)
	{
		PsvcHttpRequest *req = tx_request(server, PSVC_OP_ORDER_GET, lfirst(li));
		PsvcHttpResponse *resp = psvc_http_request(req);
		char	   *code;
		Jsonb	   *order;
		Jsonb	   *cars;
		char	   *otx;

		if (resp->status == 404 && (code = psvc_fn_error_code(resp)) != NULL &&
			strcmp(code, "order_not_found") == 0)
			continue;
		if (resp->status < 200 || resp->status > 299)
			psvc_http_raise(req, resp);
		order = psvc_exec_payload(req, resp);
		nfound++;
		cars = psvc_fn_member_jsonb(order, "cars");
		otx = psvc_fn_member_text(order, "transaction_id");
		if (!same_text(order, lfirst(lv), "custom_id") ||
			!same_text(order, lfirst(lv), "name") ||
			!same_text(order, lfirst(lv), "period") ||
			!same_text(order, lfirst(lv), "start_date") ||
			otx == NULL || (txid != NULL && strcmp(otx, txid) != 0) ||
			cars == NULL || vehicles == NULL ||
			!JB_ROOT_IS_ARRAY(cars) || !JB_ROOT_IS_ARRAY(vehicles) ||
			JB_ROOT_COUNT(cars) != JB_ROOT_COUNT(vehicles))
			differ = true;
		if (txid == NULL)
			txid = otx;
	}
	error_context_stack = errcb.previous;

	*none = (nfound == 0);
	if (nfound == 0)
		return NULL;
	if (nfound < list_length(ids))
		raise_create_unknown(failure,
							 "Orders exist for some of the custom ids of the payload but not for all.",
							 true);
	if (differ)
		raise_create_unknown(failure,
							 "Orders with the custom ids of the payload exist, but they differ from the payload.",
							 true);

	errcb.arg = psprintf("reading the transaction after %s %s lost its answer",
						 create->method, create->route);
	error_context_stack = &errcb;
	tx = psvc_exec_send(tx_request(server, PSVC_OP_TRANSACTION_DATA, txid));
	error_context_stack = errcb.previous;

	/* the transaction, as create would have answered it, plus "recovered" */
	if (tx == NULL || !JB_ROOT_IS_OBJECT(tx) || JB_ROOT_IS_SCALAR(tx))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("unexpected response shape from %s %s",
						psvc_op(PSVC_OP_TRANSACTION_DATA)->method,
						psvc_op(PSVC_OP_TRANSACTION_DATA)->route),
				 errdetail("Expected a JSON object in \"data\".")));
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(tx),
											  DirectFunctionCall1(jsonb_in,
																  CStringGetDatum("{\"recovered\": true}"))));
}

/* What settle_create needs to look a lost create_transaction up. */
typedef struct CreateLookup
{
	PsvcServer *server;
	const PsvcHttpRequest *create;
	Jsonb	   *payload;
	List	   *ids;
	List	   *vignettes;
} CreateLookup;

static Jsonb *
settle_create(void *arg, const char *failure, bool *none)
{
	CreateLookup *l = arg;

	return recover_create(l->server, l->create, l->payload, l->ids, l->vignettes,
						  failure, none);
}

/*
 * create_transaction(payload jsonb, server name DEFAULT NULL) RETURNS jsonb
 *
 * POST /public/transaction/create: an order payload paid through the
 * service's checkout (order_has_been_paid may be left out; true is
 * refused).  Returns the transaction with its payment_link.  A refused
 * payload raises the mapped error with the service's code in the detail.
 * Lost answers: see the file header.
 */
Datum
psvc_tx_create(PG_FUNCTION_ARGS)
{
	CreateLookup l;
	PsvcHttpRequest *req;
	char	   *body;
	size_t		body_len;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	l.payload = PG_GETARG_JSONB_P(0);
	l.server = psvc_exec_server(psvc_op(PSVC_OP_TRANSACTION_CREATE), fcinfo, 1);
	l.ids = vignette_custom_ids(l.payload, &l.vignettes);

	req = tx_request(l.server, PSVC_OP_TRANSACTION_CREATE, NULL);
	body = psvc_fn_json_text(l.payload, &body_len);
	psvc_exec_set_body(req, body, body_len);
	l.create = req;
	PG_RETURN_JSONB_P(psvc_exec_create(&tx_create, l.server, req,
									   l.ids != NIL, settle_create, &l));
}

/*
 * transaction_status(id text, server name DEFAULT NULL) RETURNS text
 *
 * GET /public/transaction/{unique_id}/status (a transaction id, or the id
 * of one of its orders): CREATED, SUCCESS or FAILED; NULL for a
 * transaction the partner paid (it has no checkout), which the generic
 * executor's text result does not allow.
 */
Datum
psvc_tx_status(PG_FUNCTION_ARGS)
{
	const PsvcOperation *op = psvc_op(PSVC_OP_TRANSACTION_STATUS);
	char	   *id;
	Jsonb	   *data;
	JsonbValue *v;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	id = id_arg(fcinfo, PSVC_OP_TRANSACTION_STATUS);
	data = psvc_exec_send(tx_request(psvc_exec_server(op, fcinfo, 1),
									 PSVC_OP_TRANSACTION_STATUS, id));
	v = data ? psvc_fn_member(data, op->result_member) : NULL;
	if (v != NULL && v->type == jbvNull)
		PG_RETURN_NULL();
	if (v == NULL || v->type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("unexpected response shape from %s %s", op->method, op->route),
				 errdetail("Expected a member \"%s\" in \"%s\", a string or null.",
						   op->result_member, op->envelope)));
	PG_RETURN_TEXT_P(cstring_to_text_with_len(v->val.string.val, v->val.string.len));
}

/* checkout_status of a transaction object, or "paid by the partner". */
static const char *
checkout_state(Jsonb *tx)
{
	char	   *status = psvc_fn_member_text(tx, "checkout_status");

	return status != NULL ? status : "paid by the partner";
}

/*
 * cancel_transaction(id text, server name DEFAULT NULL) RETURNS jsonb
 *
 * POST /public/transaction/{id}/cancel: an open checkout (CREATED)
 * becomes FAILED; returns the transaction.  Any other transaction is
 * refused (409): 55000 naming its state.  A lost answer is settled by
 * reading the transaction (operation transaction_data).
 */
Datum
psvc_tx_cancel(PG_FUNCTION_ARGS)
{
	char	   *id;
	PsvcServer *server;
	PsvcHttpRequest *req;
	bool		resent = false;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	id = id_arg(fcinfo, PSVC_OP_TRANSACTION_CANCEL);
	server = psvc_exec_server(psvc_op(PSVC_OP_TRANSACTION_CANCEL), fcinfo, 1);
	req = tx_request(server, PSVC_OP_TRANSACTION_CANCEL, id);
	req->return_unknown = true;

	for (;;)
	{
		PsvcHttpResponse *resp = psvc_http_request(req);
		ErrorContextCallback errcb;
		Jsonb	   *tx;
		const char *state;
		char	   *code;

		if (resp->status >= 200 && resp->status <= 299)
			PG_RETURN_JSONB_P(psvc_exec_payload(req, resp));
		if (!resp->outcome_unknown && resp->status != 409)
			psvc_http_raise(req, resp);

		errcb.callback = lookup_context;
		errcb.arg = psprintf(resp->outcome_unknown ?
							 "reading the transaction after %s %s lost its answer" :
							 "reading the transaction after %s %s was refused",
							 req->method, req->route);
		errcb.previous = error_context_stack;
		error_context_stack = &errcb;
		tx = psvc_exec_send(tx_request(server, PSVC_OP_TRANSACTION_DATA, id));
		error_context_stack = errcb.previous;
		if (tx == NULL)
			psvc_http_raise(req, resp);
		state = checkout_state(tx);

		if (resp->outcome_unknown)
		{
			if (strcmp(state, "FAILED") == 0)
				PG_RETURN_JSONB_P(tx);
			if (strcmp(state, "CREATED") == 0 && !resent)
			{
				resent = true;
				continue;
			}
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("the outcome of cancel_transaction is unknown"),
					 errdetail("%s The transaction is now %s.", resp->failure, state),
					 errhint("Read the transaction with partner_svc.transaction_data() before cancelling again.")));
		}

		code = psvc_fn_error_code(resp);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("transaction \"%s\" is %s, not CREATED", id, state),
				 code != NULL ?
				 errdetail("cancel_transaction applies only to an open checkout (CREATED). The service reported error \"%s\".",
						   code) :
				 errdetail("cancel_transaction applies only to an open checkout (CREATED).")));
	}
}

/* JSON-RPC methods that only read: a lost answer may be asked again. */
static const char *const mcp_read_methods[] = {"initialize", "tools/list", "ping", NULL};

/*
 * mcp(request jsonb, server name DEFAULT NULL) RETURNS jsonb
 *
 * POST /public/mcp with a JSON-RPC 2.0 request object; returns the
 * JSON-RPC answer as it came (a JSON-RPC error included).  An HTTP error
 * raises.  The row is unsafe; a request whose method only reads is
 * retried like a GET (see the file header).
 */
Datum
psvc_tx_mcp(PG_FUNCTION_ARGS)
{
	const PsvcOperation *op = psvc_op(PSVC_OP_MCP);
	Jsonb	   *request;
	PsvcHttpRequest *req;
	char	   *body;
	size_t		len;
	char	   *method;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	request = PG_GETARG_JSONB_P(0);
	if (!JB_ROOT_IS_OBJECT(request) || JB_ROOT_IS_SCALAR(request))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object", op->arg_name),
				 errhint("%s", op->arg_hint)));
	body = psvc_fn_json_text(request, &len);
	method = psvc_fn_member_text(request, "method");
	req = tx_request(psvc_exec_server(op, fcinfo, 1), PSVC_OP_MCP, NULL);
	psvc_exec_set_body(req, body, len);
	for (const char *const *m = mcp_read_methods; *m && method; m++)
		if (strcmp(*m, method) == 0)
			req->retry_unsafe = true;
	PG_RETURN_JSONB_P(psvc_exec_send(req));
}
