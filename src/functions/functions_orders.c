/*-------------------------------------------------------------------------
 *
 * functions_orders.c
 *		  The SQL functions of the partner order service (docs/sandbox-orders.md):
 *		  create_order, validate_order, order_detail, order_status,
 *		  cancel_pending and cancel_deferred.
 *
 * Every answer of the order service is an envelope {"error":...,"data":...};
 * the functions return its "data" (order_status: the status text).  An
 * unknown order is an error (P0002), like every failure http.c maps;
 * validate_order alone reports a refused payload as a result, since
 * telling valid from invalid is its purpose.
 *
 * Lost answers.  A POST that timed out or lost its connection after it was
 * sent may or may not have been carried out, and the call module never
 * repeats it.  These functions describe how to find out what happened
 * (PsvcSettleCreate, PsvcSettleCancel) and functions_settle.c does it, so
 * that nothing is done twice:
 *
 * - create_order looks the orders up by the custom ids of the payload's
 *   vignettes (operation order_lookup: GET /public/orders/{id} takes a
 *   custom id, and its row names order_not_found as "nothing here").
 *   When every vignette has its order, and the orders match the payload,
 *   it returns them as the create would have ("recovered": true).  When
 *   none exists it sends the create again; a refusal of that resend (any
 *   4xx but 429, whatever its code: the orders document shows none for a
 *   repeated custom id) sends us back to the lookup.  A 503 is raised
 *   without a lookup (the service did not process the request).  A
 *   payload without a custom id on every vignette cannot be looked up:
 *   the function raises an "outcome unknown" error that says how to check.
 * - cancel_pending / cancel_deferred read the order's status: REFUNDED
 *   means the cancel happened (its status object is returned); still
 *   PENDING / DEFERRED means it did not, and it is sent once more.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions_orders.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "catalog.h"
#include "functions.h"
#include "handoff.h"

PG_FUNCTION_INFO_V1(psvc_orders_create);
PG_FUNCTION_INFO_V1(psvc_orders_cancel_pending);
PG_FUNCTION_INFO_V1(psvc_orders_cancel_deferred);

/* Appends member key of j as JSON ("null" when absent). */
static void
append_member(StringInfo buf, Jsonb *j, const char *key)
{
	Jsonb	   *m = psvc_fn_member_jsonb(j, key);

	if (m == NULL)
		appendStringInfoString(buf, "null");
	else
		JsonbToCString(buf, &m->root, VARSIZE(m));
}

/*
 * The answer of a create_order whose orders were found after its answer
 * was lost: the create response, as far as the orders tell it, marked
 * "recovered".  found holds one order per vignette, txid their
 * transaction.
 */
static Jsonb *
recovered_answer(const PsvcServer *server, Jsonb *payload, List *found,
				 const char *txid)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"transaction_id\": ");
	/* null when the orders do not carry it (the document does not show it) */
	if (txid != NULL)
		escape_json(&buf, txid);
	else
		appendStringInfoString(&buf, "null");
	appendStringInfoString(&buf, ", \"order_has_been_paid\": ");
	append_member(&buf, payload, "order_has_been_paid");
	appendStringInfoString(&buf, ", \"payment_link\": ");
	append_member(&buf, (Jsonb *) linitial(found), "payment_link");
	appendStringInfoString(&buf, ", \"orders\": [");
	foreach(lc, found)
	{
		Jsonb	   *order = (Jsonb *) lfirst(lc);

		if (foreach_current_index(lc) > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, "{\"id\": ");
		append_member(&buf, order, "id");
		appendStringInfoString(&buf, ", \"custom_id\": ");
		append_member(&buf, order, "custom_id");
		appendStringInfoString(&buf, ", \"name\": ");
		append_member(&buf, order, "name");
		appendStringInfoString(&buf, ", \"status\": ");
		append_member(&buf, order, "status");
		appendStringInfoChar(&buf, '}');
	}
	appendStringInfoString(&buf, "], \"recovered\": true}");
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/* Copies text into a field of a record; false when it does not fit. */
static bool
created_field(char *dst, size_t size, const char *text)
{
	if (text == NULL)
	{
		dst[0] = '\0';
		return true;
	}
	if (strlen(text) >= size)
		return false;
	strcpy(dst, text);
	return true;
}

/*
 * The orders and the checkout a create answered (docs/sandbox-orders.md,
 * Create response: transaction_id, checkout_status, orders[] with id,
 * custom_id, status), handed to the webhook worker for its reconciler
 * (webhook_reconcile.c): each order, and the checkout when it has a
 * status (a transaction paid by the partner has none).  The record goes
 * through shared memory, not this transaction, so that it survives a
 * rollback: the orders exist at the partner anyway.  The role recorded
 * (by OID) is the one whose user mapping gave the key, with the partner
 * account of the create (docs/privileges.md#tenancy).  Never raises for
 * the answer's shape: what is missing is not recorded.
 */
void
psvc_orders_created(const PsvcServer *server, Jsonb *answer)
{
	PsvcCreated rec;
	Jsonb	   *orders = psvc_fn_member_jsonb(answer, "orders");
	char	   *txid = psvc_fn_member_text(answer, "transaction_id");
	char	   *checkout = psvc_fn_member_text(answer, "checkout_status");

	memset(&rec, 0, sizeof(rec));
	rec.roleid = OidIsValid(server->userid) ? server->userid : GetUserId();
	if (!created_field(rec.server, sizeof(rec.server), server->servername))
		return;
	/* the key just served the create: reading it again cannot fail */
	psvc_options_account(server, rec.account);
	if (orders != NULL && JB_ROOT_IS_ARRAY(orders) && !JB_ROOT_IS_SCALAR(orders))
	{
		int			n = JB_ROOT_COUNT(orders);

		for (int i = 0; i < n; i++)
		{
			JsonbValue *v = getIthJsonbValueFromContainer(&orders->root, i);
			Jsonb	   *order;

			if (v == NULL || v->type != jbvBinary)
				continue;
			order = JsonbValueToJsonb(v);
			rec.checkout = false;
			if (!created_field(rec.id, sizeof(rec.id), psvc_fn_member_text(order, "id")) ||
				rec.id[0] == '\0' ||
				!created_field(rec.custom_id, sizeof(rec.custom_id),
							   psvc_fn_member_text(order, "custom_id")) ||
				!created_field(rec.status, sizeof(rec.status),
							   psvc_fn_member_text(order, "status")) ||
				rec.status[0] == '\0')
				continue;
			if (!psvc_handoff_push(&rec))
				return;
		}
	}
	if (txid != NULL && checkout != NULL)
	{
		rec.checkout = true;
		rec.custom_id[0] = '\0';
		if (created_field(rec.id, sizeof(rec.id), txid) && rec.id[0] != '\0' &&
			created_field(rec.status, sizeof(rec.status), checkout) &&
			rec.status[0] != '\0')
			(void) psvc_handoff_push(&rec);
	}
}

/*
 * What a vignette's order must share with it: of the members the order
 * document shows (id, custom_id, status...), the custom id only.  Name,
 * period and start date are not shown by the document, and a service may
 * answer them differently or as null (docs/functions.md).
 */
const char *const psvc_order_same[] = {"custom_id", NULL};

/* create_order, and how a lost one is settled (functions_settle.c). */
static const PsvcSettleCreate order_create = {
	.function = "create_order",
	.object = "order",
	.create = psvc_op(PSVC_OP_ORDER_CREATE),
	PSVC_SETTLE_ORDERS_BY_CUSTOM_ID,
	.hint_keys = "Read the orders by their custom ids (partner_svc.order_detail) before sending the order again; the service refuses a custom id twice.",
	.hint_no_keys = "Look for the order in the order list (the foreign table orders) before sending it again; with a custom_id on every vignette create_order checks by itself.",
	.answer = recovered_answer,
};

/*
 * create_order(payload jsonb, server name DEFAULT NULL) RETURNS jsonb
 *
 * POST /public/orders; returns the service's transaction object (with
 * payment_link when unpaid).  A refused payload raises the mapped error
 * (400 → 22023, 409 → 55000) with the service's code in the detail.
 * Lost answers: see the file header.
 */
Datum
psvc_orders_create(PG_FUNCTION_ARGS)
{
	const PsvcServer *server;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	server = psvc_exec_server(psvc_op(PSVC_OP_ORDER_CREATE), fcinfo, 1);
	PG_RETURN_JSONB_P(psvc_settle_create(&order_create, server,
										 PG_GETARG_JSONB_P(0)));
}

/*
 * validate_order(payload jsonb, server name DEFAULT NULL) RETURNS jsonb
 *
 * POST /public/orders/validate.  Never raises for the payload: a valid
 * one gives the service's object ({"valid": true, ...}), a refused one
 * (400, 409, 422) {"valid": false, "error": <the service's error>}.  Other
 * failures raise.  Validation stores nothing, so its row is safe: it is
 * retried like a GET.
 */
PSVC_OPERATION_FUNCTION(psvc_orders_validate, PSVC_OP_ORDER_VALIDATE)

/*
 * order_detail(id text, server name DEFAULT NULL) RETURNS jsonb
 * GET /public/orders/{id} (id or custom id); the order object.
 */
PSVC_OPERATION_FUNCTION(psvc_orders_detail, PSVC_OP_ORDER_GET)

/*
 * order_status(id text, server name DEFAULT NULL) RETURNS text
 * GET /public/orders/{id}/status; the status (CREATED, PENDING, ...).
 */
PSVC_OPERATION_FUNCTION(psvc_orders_status, PSVC_OP_ORDER_STATUS)

/* The two cancels of an order, and how a lost one is settled. */
static const PsvcSettleCancel cancel_pending = {
	.function = "cancel_pending",
	.object = "order",
	.cancel = psvc_op(PSVC_OP_ORDER_CANCEL_PENDING),
	.read = psvc_op(PSVC_OP_ORDER_STATUS),
	.state = "status",
	.done = "REFUNDED",
	.needed = "PENDING",
	.reading = "reading the order's status",
	.now = "The order's status is now",
	.hint_unknown = "Read the order's status with partner_svc.order_status() before cancelling again.",
	.applies = "cancel_pending applies only to PENDING orders.",
	.other_state = "DEFERRED",
	.hint_other = "Use partner_svc.cancel_deferred() for a DEFERRED order.",
	.hint_refused = "Only PENDING and DEFERRED orders can be cancelled.",
};

static const PsvcSettleCancel cancel_deferred = {
	.function = "cancel_deferred",
	.object = "order",
	.cancel = psvc_op(PSVC_OP_ORDER_CANCEL_DEFERRED),
	.read = psvc_op(PSVC_OP_ORDER_STATUS),
	.state = "status",
	.done = "REFUNDED",
	.needed = "DEFERRED",
	.reading = "reading the order's status",
	.now = "The order's status is now",
	.hint_unknown = "Read the order's status with partner_svc.order_status() before cancelling again.",
	.applies = "cancel_deferred applies only to DEFERRED orders.",
	.other_state = "PENDING",
	.hint_other = "Use partner_svc.cancel_pending() for a PENDING order.",
	.hint_refused = "Only PENDING and DEFERRED orders can be cancelled.",
};

/*
 * A cancel of the order of argument 0 (an id or custom id, checked before
 * anything is sent), which must be in state def->needed.  Returns the
 * service's object.  A refusal in another state (409) raises 55000 naming
 * the state the order is in (read after the refusal).  A lost answer is
 * settled by reading the status.
 */
static Datum
cancel_order(FunctionCallInfo fcinfo, const PsvcSettleCancel *def)
{
	const PsvcOperation *op = def->cancel;
	char	   *id;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	id = psvc_exec_path_arg(fcinfo, op);
	PG_RETURN_JSONB_P(psvc_settle_cancel(def, psvc_exec_server(op, fcinfo, 1), id));
}

/*
 * cancel_pending(id text, server name DEFAULT NULL) RETURNS jsonb
 * POST /public/orders/{id}/cancel-pending: only while PENDING.
 */
Datum
psvc_orders_cancel_pending(PG_FUNCTION_ARGS)
{
	return cancel_order(fcinfo, &cancel_pending);
}

/*
 * cancel_deferred(id text, server name DEFAULT NULL) RETURNS jsonb
 * POST /public/orders/{id}/cancel-deferred: only while DEFERRED.
 */
Datum
psvc_orders_cancel_deferred(PG_FUNCTION_ARGS)
{
	return cancel_order(fcinfo, &cancel_deferred);
}
