/*-------------------------------------------------------------------------
 *
 * functions_orders.c
 *		  The SQL functions of the partner order service (document 000):
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
 * sent may or may not have been carried out, and http.c never repeats it.
 * These functions ask http.c to hand such an outcome back (return_unknown)
 * and then find out what happened, so that nothing is done twice:
 *
 * - create_order looks the orders up by the custom ids of the payload's
 *   vignettes (GET /public/orders/{id} takes a custom id).  When every
 *   vignette has its order, and the orders match the payload, it returns
 *   them as the create would have ("recovered": true).  When none exists
 *   it sends the create again, at most max_retries times (the server's option,
 *   else partner_svc.max_retries):
 *   safe even if the lost request is still on its way, because the
 *   service refuses a second order with the same custom id (409
 *   custom_id_exists), which sends us back to the lookup.  A payload
 *   without a custom id on every vignette cannot be looked up: the
 *   function raises an "outcome unknown" error that says how to check.
 *   A 5xx answer is treated like a lost one (the service may have acted
 *   before it failed).
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
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "catalog.h"
#include "functions.h"

PG_FUNCTION_INFO_V1(psvc_orders_create);
PG_FUNCTION_INFO_V1(psvc_orders_cancel_pending);
PG_FUNCTION_INFO_V1(psvc_orders_cancel_deferred);

/* Longest custom id a lost create is looked up by (p_order_id, catalog.c). */
#define ORDER_ID_MAX	255

/* The vignettes of a create payload, and whether all can be looked up. */
typedef struct Vignettes
{
	List	   *items;			/* of Jsonb *, one object per vignette */
	List	   *custom_ids;		/* of char *, parallel to items */
	bool		all_have_ids;	/* every vignette has a non-empty custom_id */
} Vignettes;

static PsvcHttpRequest *order_request(PsvcServer *server, PsvcOpId id,
									  const char *order);
static char *order_id_arg(FunctionCallInfo fcinfo, PsvcOpId id);
static void lookup_context(void *arg);
static Vignettes *payload_vignettes(Jsonb *payload);
static Jsonb *order_by_custom_id(PsvcServer *server, const char *custom_id);
static bool order_matches(Jsonb *order, Jsonb *vignette, Jsonb *payload,
						  const char *txid);
static Jsonb *recover_create(PsvcServer *server, Jsonb *payload, Vignettes *v,
							 const char *failure, bool *none);
static void raise_create_unknown(const char *failure, const char *found,
								 bool have_ids) pg_attribute_noreturn();
static char *read_status(PsvcServer *server, const char *id, Jsonb **data);
static Datum cancel_order(FunctionCallInfo fcinfo, PsvcOpId opid,
						  const char *needed, const char *sqlname,
						  const char *other_state, const char *other_fn);

/*
 * The request of operation id (catalog.c) for order (an id or custom id;
 * NULL for the create); errors come back (return_errors).
 */
static PsvcHttpRequest *
order_request(PsvcServer *server, PsvcOpId id, const char *order)
{
	return psvc_exec_request(psvc_op(id), server, &order);
}

/*
 * Argument 0, an order id or custom id, checked against the rule of
 * operation id's {id} before anything is sent.
 */
static char *
order_id_arg(FunctionCallInfo fcinfo, PsvcOpId id)
{
	char	   *order = text_to_cstring(PG_GETARG_TEXT_PP(0));

	psvc_http_check_param(psvc_op(id), "id", order);
	return order;
}

/* Error context of the requests that find out what a lost request did. */
static void
lookup_context(void *arg)
{
	errcontext("%s", (const char *) arg);
}

/*
 * The vignettes of a create payload with their custom ids.  Anything that
 * is not an array of objects with string custom ids leaves all_have_ids
 * false (the service will say what is wrong with it).
 */
static Vignettes *
payload_vignettes(Jsonb *payload)
{
	Vignettes  *v = palloc0(sizeof(Vignettes));
	Jsonb	   *arr = psvc_fn_member_jsonb(payload, "vignettes");
	uint32		i;
	uint32		n;

	if (arr == NULL || !JB_ROOT_IS_ARRAY(arr) || JB_ROOT_IS_SCALAR(arr))
		return v;
	n = JB_ROOT_COUNT(arr);
	v->all_have_ids = (n > 0);
	for (i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&arr->root, i);
		Jsonb	   *item = JsonbValueToJsonb(e);
		char	   *cid = psvc_fn_member_text(item, "custom_id");

		if (cid == NULL || cid[0] == '\0' || strlen(cid) > ORDER_ID_MAX)
		{
			v->all_have_ids = false;
			cid = NULL;
		}
		v->items = lappend(v->items, item);
		v->custom_ids = lappend(v->custom_ids, cid);
	}
	return v;
}

/*
 * The order whose custom id (or id) is custom_id, as the detail read
 * returns it; NULL when the service has none (404 order_not_found).
 * Other failures raise.
 */
static Jsonb *
order_by_custom_id(PsvcServer *server, const char *custom_id)
{
	PsvcHttpRequest *req = order_request(server, PSVC_OP_ORDER_GET, custom_id);
	PsvcHttpResponse *resp = psvc_http_request(req);
	char	   *code;

	if (resp->status >= 200 && resp->status <= 299)
		return psvc_exec_payload(req, resp);
	code = psvc_fn_error_code(resp);
	if (resp->status == 404 && code != NULL && strcmp(code, "order_not_found") == 0)
		return NULL;
	psvc_http_raise(req, resp);
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
 * Whether an order found by custom id is the one this vignette of payload
 * makes: same custom id, name, period and start date, as many cars as the
 * payload has vehicles, and the transaction of the other orders found.
 */
static bool
order_matches(Jsonb *order, Jsonb *vignette, Jsonb *payload, const char *txid)
{
	Jsonb	   *cars = psvc_fn_member_jsonb(order, "cars");
	Jsonb	   *vehicles = psvc_fn_member_jsonb(payload, "vehicles");
	char	   *otx = psvc_fn_member_text(order, "transaction_id");

	if (!same_text(order, vignette, "custom_id") ||
		!same_text(order, vignette, "name") ||
		!same_text(order, vignette, "period") ||
		!same_text(order, vignette, "start_date"))
		return false;
	if (otx == NULL || (txid != NULL && strcmp(otx, txid) != 0))
		return false;
	if (cars == NULL || vehicles == NULL ||
		!JB_ROOT_IS_ARRAY(cars) || !JB_ROOT_IS_ARRAY(vehicles) ||
		JB_ROOT_COUNT(cars) != JB_ROOT_COUNT(vehicles))
		return false;
	return true;
}

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
 * After a create whose answer was lost: looks its orders up by custom id.
 * Returns the result create_order gives for them when every vignette has
 * its order and all match the payload; NULL with *none when not one
 * exists.  Anything in between (some exist, or they differ from the
 * payload) raises the unknown-outcome error with what was found.
 */
static Jsonb *
recover_create(PsvcServer *server, Jsonb *payload, Vignettes *v,
			   const char *failure, bool *none)
{
	ErrorContextCallback errcb;
	List	   *found = NIL;
	ListCell   *lc;
	ListCell   *lv;
	int			nfound = 0;
	const char *txid = NULL;
	StringInfoData buf;

	errcb.callback = lookup_context;
	errcb.arg = psprintf("looking the orders up by custom id after %s %s lost its answer",
						 psvc_op(PSVC_OP_ORDER_CREATE)->method,
						 psvc_op(PSVC_OP_ORDER_CREATE)->route);
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	foreach(lc, v->custom_ids)
	{
		Jsonb	   *order = order_by_custom_id(server, (char *) lfirst(lc));

		found = lappend(found, order);
		if (order != NULL)
			nfound++;
	}
	error_context_stack = errcb.previous;

	*none = (nfound == 0);
	if (nfound == 0)
		return NULL;

	forboth(lc, found, lv, v->items)
	{
		Jsonb	   *order = (Jsonb *) lfirst(lc);

		if (order == NULL || !order_matches(order, (Jsonb *) lfirst(lv), payload, txid))
			raise_create_unknown(failure,
								 nfound < list_length(found) ?
								 "Orders exist for some of the custom ids of the payload but not for all." :
								 "Orders with the custom ids of the payload exist, but they differ from the payload.",
								 true);
		if (txid == NULL)
			txid = psvc_fn_member_text(order, "transaction_id");
	}

	/* the create response, as far as the orders tell it */
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"transaction_id\": ");
	escape_json(&buf, txid);
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

/* create_order as psvc_exec_create and its errors name it. */
static const PsvcCreateDef order_create = {
	.function = "create_order",
	.object = "order",
	.where = "the order list (the foreign table orders)",
};

/* The error of a create_order whose outcome could not be found out. */
static void
raise_create_unknown(const char *failure, const char *found, bool have_ids)
{
	psvc_exec_create_unknown(&order_create, failure, found, have_ids);
}

/* What settle_create needs to look a lost create_order up. */
typedef struct CreateLookup
{
	PsvcServer *server;
	Jsonb	   *payload;
	Vignettes  *v;
} CreateLookup;

static Jsonb *
settle_create(void *arg, const char *failure, bool *none)
{
	CreateLookup *l = arg;

	return recover_create(l->server, l->payload, l->v, failure, none);
}

/*
 * create_order(payload jsonb, server name DEFAULT NULL) RETURNS jsonb
 *
 * POST /public/orders; returns the service's transaction object (with
 * payment_link when unpaid).  A refused payload raises the mapped error
 * (400 → 22023, 409 custom_id_exists → 55000) with the service's code in
 * the detail.  Lost answers: see the file header.
 */
Datum
psvc_orders_create(PG_FUNCTION_ARGS)
{
	CreateLookup l;
	PsvcHttpRequest *req;
	char	   *body;
	size_t		body_len;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	l.payload = PG_GETARG_JSONB_P(0);
	l.server = psvc_exec_server(psvc_op(PSVC_OP_ORDER_CREATE), fcinfo, 1);
	l.v = payload_vignettes(l.payload);

	req = order_request(l.server, PSVC_OP_ORDER_CREATE, NULL);
	body = psvc_fn_json_text(l.payload, &body_len);
	psvc_exec_set_body(req, body, body_len);
	PG_RETURN_JSONB_P(psvc_exec_create(&order_create, l.server, req,
									   l.v->all_have_ids, settle_create, &l));
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

/*
 * The order's status (operation order_status): the status text; *data
 * receives the whole status object.  Raises for a failed request.
 */
static char *
read_status(PsvcServer *server, const char *id, Jsonb **data)
{
	PsvcHttpRequest *req = order_request(server, PSVC_OP_ORDER_STATUS, id);
	char	   *status;

	*data = psvc_exec_send(req);
	status = psvc_fn_member_text(*data, "status");
	if (status == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("unexpected response shape from %s %s", req->method, req->route),
				 errdetail("Expected a string member \"status\" in \"data\".")));
	return status;
}

/*
 * The two cancels: POST route for the order of argument 0, which must be
 * in state needed.  Returns the service's object.  A refusal in another
 * state (409) raises 55000 naming the state the order is in (read after
 * the refusal).  A lost answer is settled by reading the status.
 */
static Datum
cancel_order(FunctionCallInfo fcinfo, PsvcOpId opid, const char *needed,
			 const char *sqlname, const char *other_state, const char *other_fn)
{
	char	   *id;
	PsvcServer *server;
	PsvcHttpRequest *req;
	bool		resent = false;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	id = order_id_arg(fcinfo, opid);
	server = psvc_exec_server(psvc_op(opid), fcinfo, 1);
	req = order_request(server, opid, id);
	req->return_unknown = true;

	for (;;)
	{
		PsvcHttpResponse *resp = psvc_http_request(req);
		ErrorContextCallback errcb;
		Jsonb	   *data;
		char	   *status;
		char	   *code;

		if (resp->status >= 200 && resp->status <= 299)
			PG_RETURN_JSONB_P(psvc_exec_payload(req, resp));

		if (resp->outcome_unknown)
		{
			errcb.callback = lookup_context;
			errcb.arg = psprintf("reading the order's status after %s %s lost its answer",
								 req->method, req->route);
			errcb.previous = error_context_stack;
			error_context_stack = &errcb;
			status = read_status(server, id, &data);
			error_context_stack = errcb.previous;

			if (strcmp(status, "REFUNDED") == 0)
				PG_RETURN_JSONB_P(data);
			if (strcmp(status, needed) == 0 && !resent)
			{
				resent = true;
				continue;
			}
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("the outcome of %s is unknown", sqlname),
					 errdetail("%s The order's status is now %s.", resp->failure, status),
					 errhint("Read the order's status with partner_svc.order_status() before cancelling again.")));
		}

		code = psvc_fn_error_code(resp);
		if (resp->status == 409)
		{
			errcb.callback = lookup_context;
			errcb.arg = psprintf("reading the order's status after %s %s was refused",
								 req->method, req->route);
			errcb.previous = error_context_stack;
			error_context_stack = &errcb;
			status = read_status(server, id, &data);
			error_context_stack = errcb.previous;

			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("order \"%s\" is %s, not %s", id, status, needed),
					 code != NULL ?
					 errdetail("%s applies only to %s orders. The service reported error \"%s\".",
							   sqlname, needed, code) :
					 errdetail("%s applies only to %s orders.", sqlname, needed),
					 strcmp(status, other_state) == 0 ?
					 errhint("Use partner_svc.%s() for a %s order.", other_fn, other_state) :
					 errhint("Only PENDING and DEFERRED orders can be cancelled.")));
		}
		psvc_http_raise(req, resp);
	}
}

/*
 * cancel_pending(id text, server name DEFAULT NULL) RETURNS jsonb
 * POST /public/orders/{id}/cancel-pending: only while PENDING.
 */
Datum
psvc_orders_cancel_pending(PG_FUNCTION_ARGS)
{
	return cancel_order(fcinfo, PSVC_OP_ORDER_CANCEL_PENDING, "PENDING",
						"cancel_pending", "DEFERRED", "cancel_deferred");
}

/*
 * cancel_deferred(id text, server name DEFAULT NULL) RETURNS jsonb
 * POST /public/orders/{id}/cancel-deferred: only while DEFERRED.
 */
Datum
psvc_orders_cancel_deferred(PG_FUNCTION_ARGS)
{
	return cancel_order(fcinfo, PSVC_OP_ORDER_CANCEL_DEFERRED, "DEFERRED",
						"cancel_deferred", "PENDING", "cancel_pending");
}
