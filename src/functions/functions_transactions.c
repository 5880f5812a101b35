/*-------------------------------------------------------------------------
 *
 * functions_transactions.c
 *		  The SQL functions of the other routes of docs/sandbox-orders.md's
 *		  rate-limit table: validate_vehicle, create_transaction,
 *		  transaction_status, transaction_fee, transaction_data,
 *		  cancel_transaction and mcp.
 *
 * Each is a row of the operation catalogue (catalog.c); the document shows
 * only the paths and limits of these routes, the shapes are the sandbox's
 * (docs/sandbox-orders.md, "Other partner routes of the rate-limit
 * table").  validate_vehicle, transaction_fee and transaction_data are the
 * generic executor's (functions_exec.c); the others have logic of their
 * own and make their calls from their rows (psvc_call_make).  Every answer but /public/mcp's is the orders
 * envelope {"error", "data"}, and the functions return its "data"
 * (transaction_status: the status text).  /public/mcp answers JSON-RPC
 * 2.0, returned whole: a JSON-RPC error is a result, not an SQL error.
 * validate_vehicle reports a refused vehicle as {"valid": false, "error":
 * ...}, as validate_order does.
 *
 * Lost answers, as create_order (functions_orders.c), settled by
 * functions_settle.c from the descriptions below:
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
 *   (initialize, tools/list, ping) are the catalogue's row mcp_read, which
 *   is safe and retried like a GET; any other call (tools/call) is the row
 *   mcp, sent once, and a lost answer is the unknown-outcome error.
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

/* Error context of the read that finishes settling a lost create. */
static void
lookup_context(void *arg)
{
	errcontext("%s", (const char *) arg);
}

/*
 * The answer of a create_transaction whose orders were found after its
 * answer was lost: their transaction txid, read whole (transaction_data)
 * and marked "recovered".
 */
static Jsonb *
recovered_answer(const PsvcServer *server, Jsonb *payload, List *found,
				 const char *txid)
{
	const PsvcOperation *create = psvc_op(PSVC_OP_TRANSACTION_CREATE);
	const PsvcOperation *read = psvc_op(PSVC_OP_TRANSACTION_DATA);
	ErrorContextCallback errcb;
	Jsonb	   *tx;

	errcb.callback = lookup_context;
	errcb.arg = psprintf("reading the transaction after %s %s lost its answer",
						 create->method, create->route);
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	/* the transaction id, or the id of one of its orders when not given */
	if (txid == NULL)
		txid = psvc_fn_member_text((Jsonb *) linitial(found), "id");
	tx = psvc_exec_send(psvc_call_make(read, server, &txid));
	error_context_stack = errcb.previous;

	/* the transaction, as create would have answered it, plus "recovered" */
	if (tx == NULL || !JB_ROOT_IS_OBJECT(tx) || JB_ROOT_IS_SCALAR(tx))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("unexpected response shape from %s %s",
						read->method, read->route),
				 errdetail("Expected a JSON object in \"data\".")));
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(tx),
											  DirectFunctionCall1(jsonb_in,
																  CStringGetDatum("{\"recovered\": true}"))));
}

/* create_transaction, and how a lost one is settled (functions_settle.c). */
static const PsvcSettleCreate tx_create = {
	.function = "create_transaction",
	.object = "transaction",
	.create = psvc_op(PSVC_OP_TRANSACTION_CREATE),
	PSVC_SETTLE_ORDERS_BY_CUSTOM_ID,
	.hint_keys = "Read the orders by their custom ids (partner_svc.order_detail) before sending the transaction again; the service refuses a custom id twice.",
	.hint_no_keys = "Look for the transaction in the foreign table transactions before sending it again; with a custom_id on every vignette create_transaction checks by itself.",
	.answer = recovered_answer,
};

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
	const PsvcServer *server;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	server = psvc_exec_server(psvc_op(PSVC_OP_TRANSACTION_CREATE), fcinfo, 1);
	PG_RETURN_JSONB_P(psvc_settle_create(&tx_create, server, PG_GETARG_JSONB_P(0)));
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
	const char *id;
	Jsonb	   *data;
	JsonbValue *v;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	id = psvc_exec_path_arg(fcinfo, op);
	data = psvc_exec_send(psvc_call_make(op, psvc_exec_server(op, fcinfo, 1), &id));
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

/* cancel_transaction, and how a lost one is settled (functions_settle.c). */
static const PsvcSettleCancel tx_cancel = {
	.function = "cancel_transaction",
	.object = "transaction",
	.cancel = psvc_op(PSVC_OP_TRANSACTION_CANCEL),
	.read = psvc_op(PSVC_OP_TRANSACTION_DATA),
	.state = "checkout_status",
	.state_absent = "paid by the partner",
	.done = "FAILED",
	.needed = "CREATED",
	.reading = "reading the transaction",
	.now = "The transaction is now",
	.hint_unknown = "Read the transaction with partner_svc.transaction_data() before cancelling again.",
	.applies = "cancel_transaction applies only to an open checkout (CREATED).",
};

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
	const PsvcOperation *op = psvc_op(PSVC_OP_TRANSACTION_CANCEL);
	char	   *id;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	id = psvc_exec_path_arg(fcinfo, op);
	PG_RETURN_JSONB_P(psvc_settle_cancel(&tx_cancel, psvc_exec_server(op, fcinfo, 1), id));
}

/* JSON-RPC methods that only read: a lost answer may be asked again. */
static const char *const mcp_read_methods[] = {"initialize", "tools/list", "ping", NULL};

/*
 * mcp(request jsonb, server name DEFAULT NULL) RETURNS jsonb
 *
 * POST /public/mcp with a JSON-RPC 2.0 request object; returns the
 * JSON-RPC answer as it came (a JSON-RPC error included).  An HTTP error
 * raises.  A request whose method only reads is the safe row mcp_read,
 * any other the row mcp, which is not (see the file header).
 */
Datum
psvc_tx_mcp(PG_FUNCTION_ARGS)
{
	const PsvcOperation *op = psvc_op(PSVC_OP_MCP);
	Jsonb	   *request;
	PsvcOpId	id = PSVC_OP_MCP;
	PsvcCall   *call;
	char	   *method;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	request = PG_GETARG_JSONB_P(0);
	if (!JB_ROOT_IS_OBJECT(request) || JB_ROOT_IS_SCALAR(request))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object", op->arg_name),
				 errhint("%s", op->arg_hint)));
	method = psvc_fn_member_text(request, "method");
	for (const char *const *m = mcp_read_methods; *m && method; m++)
		if (strcmp(*m, method) == 0)
			id = PSVC_OP_MCP_READ;
	call = psvc_call_make(psvc_op(id), psvc_exec_server(op, fcinfo, 1), NULL);
	psvc_exec_set_jsonb_body(call, request);
	PG_RETURN_JSONB_P(psvc_exec_send(call));
}
