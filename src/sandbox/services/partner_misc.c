/*-------------------------------------------------------------------------
 * partner_misc.c
 *	  The other routes of the orders service's rate-limit table (docs/sandbox-orders.md) (products,
 *	  users, vehicle validation, transactions, /mcp).  The document gives
 *	  only their paths and limits; the shapes here are the sandbox's own,
 *	  kept small and written down in docs/sandbox-orders.md.
 *
 * Design notes:
 *
 * - A service of its own (sb_service_partner_misc) that reads the order
 *   service's data: users are the distinct user.email values of a
 *   partner's orders, transactions are those of POST /public/orders.
 *   It has no data, knobs or reset of its own.
 * - The product catalogue is a constant table; its status is derived
 *   from the seed, so it is stable for a run and changes rarely across
 *   seeds, as the document says catalogue data does.  Because the
 *   document says catalogue data "is meant to be cached", both catalogue
 *   routes send Cache-Control and a strong ETag (a hash of the body) and
 *   answer a matching If-None-Match with 304 and no body.
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "services/orders.h"

typedef struct product
{
	const char *id;
	const char *country;
	const char *name;
	const char *const *periods;
} product;

static const char *const all_periods[] = {"1_day", "10_days", "1_month", "1_year", NULL};
static const char *const long_periods[] = {"10_days", "1_month", "1_year", NULL};
static const char *const year_only[] = {"1_year", NULL};

static const product products[] = {
	{"at-vignette", "AT", "Austria motorway vignette", all_periods},
	{"bg-vignette", "BG", "Bulgaria e-vignette", all_periods},
	{"ch-vignette", "CH", "Switzerland motorway vignette", year_only},
	{"cz-vignette", "CZ", "Czechia e-vignette", all_periods},
	{"hu-vignette", "HU", "Hungary e-vignette", all_periods},
	{"ro-vignette", "RO", "Romania rovinieta", all_periods},
	{"si-vignette", "SI", "Slovenia e-vignette", long_periods},
	{"sk-vignette", "SK", "Slovakia e-vignette", all_periods},
};
#define NPRODUCTS ((int) (sizeof(products) / sizeof(products[0])))

static bool
plain_query(sb_request *req, sb_response *resp, const char *id)
{
	static const char *const allowed[] = {"bug_report", NULL};

	return sb_query_check(req, resp, allowed) && sb_orders_bug_report(req, resp, id);
}

/*
 * Replies 200 with the catalogue data in the orders envelope, plus
 * Cache-Control (max_age seconds) and an ETag; 304 without a body when
 * If-None-Match names that ETag (or is "*").
 */
static void
catalogue_reply(sb_request *req, sb_response *resp, json_t *data, int max_age)
{
	json_t	   *obj = json_pack("{s:n, s:o}", "error", "data", data);
	char	   *text = json_dumps(obj, JSON_COMPACT);
	const char *inm = sb_header(req, "If-None-Match");
	char		etag[40];
	char		cc[48];

	json_decref(obj);
	if (text == NULL)
	{
		sb_reply_error(req, resp, 500, "internal", "could not encode");
		return;
	}
	snprintf(etag, sizeof(etag), "\"%016llx\"",
			 (unsigned long long) sb_hash_str(text, 0xe7a9));
	snprintf(cc, sizeof(cc), "public, max-age=%d", max_age);
	if (inm != NULL && (strstr(inm, etag) != NULL || strcmp(inm, "*") == 0))
		sb_reply_empty(resp, 304);
	else
		sb_reply_raw(resp, 200, "application/json", text, strlen(text));
	free(text);
	sb_add_header(resp, "Cache-Control", cc);
	sb_add_header(resp, "ETag", etag);
}

/* GET /public/products */
static void
misc_products(sb_request *req, sb_response *resp)
{
	json_t	   *a = json_array();

	if (!plain_query(req, resp, NULL))
	{
		json_decref(a);
		return;
	}
	for (int i = 0; i < NPRODUCTS; i++)
	{
		json_t	   *periods = json_array();
		json_t	   *prices = json_object();

		for (const char *const *p = products[i].periods; *p; p++)
		{
			json_array_append_new(periods, json_string(*p));
			json_object_set_new(prices, *p, json_real(sb_orders_price(*p)));
		}
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:o, s:o, s:s}",
										   "id", products[i].id,
										   "country", products[i].country,
										   "name", products[i].name,
										   "periods", periods,
										   "prices", prices,
										   "currency", "EUR"));
	}
	catalogue_reply(req, resp, a, 3600);
}

/* GET /public/products/status: one product in eight is in maintenance */
static void
misc_products_status(sb_request *req, sb_response *resp)
{
	json_t	   *a;

	if (!plain_query(req, resp, NULL))
		return;
	a = json_array();
	for (int i = 0; i < NPRODUCTS; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "id", products[i].id,
										   "status", sb_hash_str(products[i].id, 0x5747) % 8 == 0
										   ? "maintenance" : "available"));
	catalogue_reply(req, resp, a, 60);
}

/* ---- users: the distinct emails of a partner's orders ---- */

static void
user_id(const char *email, char *buf, size_t len)
{
	snprintf(buf, len, "usr_%012llx",
			 (unsigned long long) (sb_hash_str(email, 0x7573) & 0xffffffffffffULL));
}

typedef struct idx_list
{
	int			partner;
	int			n;
	int		   *idx;			/* order indexes */
} idx_list;

/* Index of the first order of each distinct email, in creation order. */
static void
collect_users(int partner, idx_list *l)
{
	sb_opartner *p = &sb_orders_data[partner];

	l->partner = partner;
	l->n = 0;
	l->idx = malloc(sizeof(int) * (p->norders + 1));
	for (int i = 0; i < p->norders; i++)
	{
		bool		seen = false;

		if (!p->orders[i].email)
			continue;
		for (int k = 0; k < l->n && !seen; k++)
			seen = strcmp(p->orders[l->idx[k]].email, p->orders[i].email) == 0;
		if (!seen)
			l->idx[l->n++] = i;
	}
}

static json_t *
user_item(int64_t i, void *arg)
{
	idx_list   *l = arg;
	sb_opartner *p = &sb_orders_data[l->partner];
	sb_order   *o = &p->orders[l->idx[i]];
	char		id[32];
	int			count = 0;

	for (int k = 0; k < p->norders; k++)
		if (p->orders[k].email && strcmp(p->orders[k].email, o->email) == 0)
			count++;
	user_id(o->email, id, sizeof(id));
	return json_pack("{s:s, s:s, s:i, s:I}", "id", id, "email", o->email,
					 "orders", count, "created_date", (json_int_t) o->created_s);
}

static const char *const page_params[] = {"bug_report", "limit", "cursor", NULL};

/* GET /public/users */
static void
misc_users(sb_request *req, sb_response *resp)
{
	idx_list	l;

	if (!sb_query_check(req, resp, page_params) || !sb_orders_bug_report(req, resp, NULL))
		return;
	collect_users(req->partner->index, &l);
	sb_page(req, resp, "GET /public/users", l.n, user_item, &l, json_pack("{s:n}", "error"));
	free(l.idx);
}

/* The email of user id, or NULL after replying 404 user_not_found. */
static const char *
user_arg(sb_request *req, sb_response *resp)
{
	const char *id = sb_param(req, "id");
	sb_opartner *p = &sb_orders_data[req->partner->index];

	for (int i = 0; i < p->norders; i++)
	{
		char		uid[32];

		if (!p->orders[i].email)
			continue;
		user_id(p->orders[i].email, uid, sizeof(uid));
		if (strcmp(uid, id) == 0)
			return p->orders[i].email;
	}
	sb_reply_error(req, resp, 404, "user_not_found", "no user \"%s\"", id);
	return NULL;
}

static json_t *
user_order_item(int64_t i, void *arg)
{
	idx_list   *l = arg;
	sb_order   *o = &sb_orders_data[l->partner].orders[l->idx[i]];

	return json_pack("{s:s, s:s?, s:I, s:s?, s:s}",
					 "id", o->id, "email", o->email,
					 "created_date", (json_int_t) o->created_s,
					 "custom_id", o->custom_id,
					 "status", sb_orders_status_name(o->status));
}

/* GET /public/users/{id}/orders: that user's orders, like GET /public/orders */
static void
misc_user_orders(sb_request *req, sb_response *resp)
{
	sb_opartner *p = &sb_orders_data[req->partner->index];
	const char *email;
	idx_list	l;
	char		bind[96];

	if (!sb_query_check(req, resp, page_params) ||
		!sb_orders_bug_report(req, resp, sb_param(req, "id")))
		return;
	if (!(email = user_arg(req, resp)))
		return;
	l.partner = req->partner->index;
	l.n = 0;
	l.idx = malloc(sizeof(int) * (p->norders + 1));
	for (int i = 0; i < p->norders; i++)
		if (p->orders[i].email && strcmp(p->orders[i].email, email) == 0)
			l.idx[l.n++] = i;
	snprintf(bind, sizeof(bind), "GET /public/users/%s/orders", sb_param(req, "id"));
	sb_page(req, resp, bind, l.n, user_order_item, &l, json_pack("{s:n}", "error"));
	free(l.idx);
}

/* GET /public/users/{id}/vehicles: distinct vehicles of the user's orders */
static void
misc_user_vehicles(sb_request *req, sb_response *resp)
{
	sb_opartner *p = &sb_orders_data[req->partner->index];
	const char *email;
	json_t	   *a;

	if (!plain_query(req, resp, sb_param(req, "id")) || !(email = user_arg(req, resp)))
		return;
	a = json_array();
	for (int i = 0; i < p->norders; i++)
	{
		sb_order   *o = &p->orders[i];

		if (!o->email || strcmp(o->email, email) != 0)
			continue;
		for (int c = 0; c < o->ncars; c++)
		{
			bool		seen = false;
			size_t		k;
			json_t	   *v;

			json_array_foreach(a, k, v)
				if (strcmp(json_string_value(json_object_get(v, "plate")), o->cars[c].plate) == 0 &&
					strcmp(json_string_value(json_object_get(v, "country")), o->cars[c].country) == 0)
				seen = true;
			if (!seen)
			{
				char		key[64];
				char		vid[32];

				snprintf(key, sizeof(key), "%s|%s", o->cars[c].country, o->cars[c].plate);
				snprintf(vid, sizeof(vid), "veh_%012llx",
						 (unsigned long long) (sb_hash_str(key, 0x7665) & 0xffffffffffffULL));
				json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "id", vid,
												   "plate", o->cars[c].plate,
												   "country", o->cars[c].country));
			}
		}
	}
	sb_orders_reply_data(resp, 200, a);
}

/* POST /public/validate-vehicle {"plate","country"} */
static void
misc_validate_vehicle(sb_request *req, sb_response *resp)
{
	json_t	   *body = sb_orders_read_body(req, resp);
	json_t	   *wrapped;
	sb_orders_verr e;
	char		plate[32];

	if (!body)
		return;
	if (!json_is_object(body))
	{
		json_decref(body);
		sb_reply_error(req, resp, 400, "body_not_object", "the body must be a JSON object");
		return;
	}
	/* reuse the vehicle rules of create by validating a one-entry order */
	wrapped = json_pack("{s:[O], s:[{s:s, s:s, s:s}]}", "vehicles", body,
						"vignettes", "name", "check", "period", "1_year",
						"start_date", "2030-01-01");
	if (!sb_orders_validate(wrapped, false, req->partner->index, &e))
		sb_reply_error(req, resp, e.status, e.code, "%s", e.msg);
	else
	{
		snprintf(plate, sizeof(plate), "%s", json_string_value(json_object_get(body, "plate")));
		for (char *s = plate; *s; s++)
			if (*s >= 'a' && *s <= 'z')
				*s -= 'a' - 'A';
		sb_orders_reply_data(resp, 200,
							 json_pack("{s:b, s:s, s:s}", "valid", 1, "plate", plate,
									   "country", json_string_value(json_object_get(body, "country"))));
	}
	json_decref(wrapped);
	json_decref(body);
}

/*
 * POST /public/transaction/create: an order request paid through the
 * service's checkout; the body of POST /public/orders where
 * order_has_been_paid may be left out and must be false.
 */
static void
misc_tx_create(sb_request *req, sb_response *resp)
{
	json_t	   *body = sb_orders_read_body(req, resp);
	sb_orders_verr e;
	sb_tx	   *t;

	if (!body)
		return;
	sb_orders_learn_port(req);
	if (json_is_object(body))
	{
		json_t	   *paid = json_object_get(body, "order_has_been_paid");

		if (json_is_true(paid))
		{
			sb_reply_error(req, resp, 400, "order_has_been_paid_invalid",
						   "a transaction is paid through the checkout: order_has_been_paid must be false");
			json_decref(body);
			return;
		}
		if (!paid)
			json_object_set_new(body, "order_has_been_paid", json_false());
	}
	if (!sb_orders_validate(body, true, req->partner->index, &e))
	{
		sb_reply_error(req, resp, e.status, e.code, "%s", e.msg);
		json_decref(body);
		return;
	}
	t = sb_orders_create(req->partner->index, body);
	json_decref(body);
	sb_orders_reply_data(resp, 201, sb_orders_tx_json(req->partner->index, t));
	resp->applied = true;
}

static json_t *
tx_item(int64_t i, void *arg)
{
	int			partner = *(int *) arg;

	return sb_orders_tx_json(partner, &sb_orders_data[partner].txs[i]);
}

/* GET /public/transactions: oldest first, cursor paging */
static void
misc_txs(sb_request *req, sb_response *resp)
{
	int			partner = req->partner->index;

	if (!sb_query_check(req, resp, page_params) || !sb_orders_bug_report(req, resp, NULL))
		return;
	sb_page(req, resp, "GET /public/transactions", sb_orders_data[partner].ntx,
			tx_item, &partner, json_pack("{s:n}", "error"));
}

/*
 * The transaction a path names, or NULL after replying.  {id} is a
 * transaction_id; {unique_id} is a transaction_id or the unique_id of one
 * of its orders (the service's order id, as in the products[].unique_id of
 * CHECKOUT_STATUS_CHANGED), which the document's parameter name suggests.
 */
static sb_tx *
tx_arg(sb_request *req, sb_response *resp, const char *param)
{
	const char *id = sb_param(req, param);
	sb_opartner *p = &sb_orders_data[req->partner->index];
	sb_tx	   *t;

	if (!plain_query(req, resp, id))
		return NULL;
	t = sb_orders_find_tx(req->partner->index, id);
	for (int i = 0; !t && id && strcmp(param, "unique_id") == 0 && i < p->norders; i++)
		if (strcmp(p->orders[i].id, id) == 0)
			t = &p->txs[p->orders[i].tx];
	if (!t)
		sb_reply_error(req, resp, 404, "transaction_not_found", "no transaction \"%s\"", id);
	return t;
}

/* GET /public/transaction/{unique_id}/status */
static void
misc_tx_status(sb_request *req, sb_response *resp)
{
	sb_tx	   *t = tx_arg(req, resp, "unique_id");

	if (t)
		sb_orders_reply_data(resp, 200,
							 json_pack("{s:s, s:b, s:s?}", "transaction_id", t->id,
									   "order_has_been_paid", t->paid_by_partner,
									   "status", sb_orders_tx_status_name(t->status)));
}

/* GET /public/transaction/{unique_id}/fee: 2.5 % + 0.30 EUR on checkout */
static void
misc_tx_fee(sb_request *req, sb_response *resp)
{
	sb_tx	   *t = tx_arg(req, resp, "unique_id");
	double		amount = 0,
				fee;

	if (!t)
		return;
	for (int k = 0; k < t->norders; k++)
	{
		sb_order   *o = &sb_orders_data[req->partner->index].orders[t->orders[k]];

		amount += sb_orders_price(o->period) * o->ncars;
	}
	fee = t->paid_by_partner ? 0 : round((amount * 0.025 + 0.30) * 100) / 100;
	sb_orders_reply_data(resp, 200,
						 json_pack("{s:s, s:f, s:f, s:f, s:s}", "transaction_id", t->id,
								   "amount", amount, "fee", fee, "total", amount + fee,
								   "currency", "EUR"));
}

/* GET /public/transaction/{id}/data */
static void
misc_tx_data(sb_request *req, sb_response *resp)
{
	sb_tx	   *t = tx_arg(req, resp, "id");

	if (t)
		sb_orders_reply_data(resp, 200, sb_orders_tx_json(req->partner->index, t));
}

/* POST /public/transaction/{id}/cancel: an open checkout becomes FAILED */
static void
misc_tx_cancel(sb_request *req, sb_response *resp)
{
	sb_tx	   *t = tx_arg(req, resp, "id");

	if (!t)
		return;
	if (!sb_orders_fail(req->partner->index, t))
	{
		sb_reply_error(req, resp, 409, "transaction_not_open",
					   "transaction %s is %s; only a CREATED checkout can be cancelled",
					   t->id, t->paid_by_partner ? "paid by the partner" :
					   sb_orders_tx_status_name(t->status));
		return;
	}
	sb_orders_reply_data(resp, 200, sb_orders_tx_json(req->partner->index, t));
	resp->applied = true;
}

/*
 * POST /public/mcp: a minimal JSON-RPC 2.0 endpoint in the manner of the
 * Model Context Protocol: initialize, tools/list, and tools/call of one
 * tool, order_status {"id"}.
 */
static void
misc_mcp(sb_request *req, sb_response *resp)
{
	json_t	   *body = sb_orders_read_body(req, resp);
	json_t	   *id;
	const char *method;
	json_t	   *result = NULL;
	int			ecode = 0;
	const char *emsg = NULL;

	if (!body)
		return;
	id = json_object_get(body, "id");
	method = json_string_value(json_object_get(body, "method"));
	if (!json_is_object(body) || !method)
	{
		ecode = -32600;
		emsg = "invalid request";
	}
	else if (strcmp(method, "initialize") == 0)
		result = json_pack("{s:s, s:{s:s, s:s}, s:{s:{}}}",
						   "protocolVersion", "2025-03-26",
						   "serverInfo", "name", "partner-orders-sandbox", "version", "1.0",
						   "capabilities", "tools");
	else if (strcmp(method, "tools/list") == 0)
		result = json_pack("{s:[{s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}]}",
						   "tools", "name", "order_status",
						   "description", "status of an order by id or custom_id",
						   "inputSchema", "type", "object", "properties", "id", "type", "string",
						   "required", "id");
	else if (strcmp(method, "tools/call") == 0)
	{
		json_t	   *params = json_object_get(body, "params");
		const char *tool = json_string_value(json_object_get(params, "name"));
		const char *oid = json_string_value(json_object_get(json_object_get(params, "arguments"), "id"));
		sb_order   *o = oid ? sb_orders_find(req->partner->index, oid) : NULL;

		if (!tool || strcmp(tool, "order_status") != 0)
		{
			ecode = -32602;
			emsg = "unknown tool";
		}
		else
			result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
							   "text", o ? sb_orders_status_name(o->status) : "order not found",
							   "isError", o == NULL);
	}
	else
	{
		ecode = -32601;
		emsg = "method not found";
	}
	if (result)
		sb_reply_json(resp, 200, json_pack("{s:s, s:O?, s:o}", "jsonrpc", "2.0", "id", id,
										   "result", result));
	else
		sb_reply_json(resp, 200, json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id,
										   "error", "code", ecode, "message", emsg));
	json_decref(body);
}

#define A SB_AUTH
#define O SB_STYLE_ORDERS

static const sb_route routes[] = {
	{"GET", "/public/products", A, O, "GET /products", misc_products},
	{"GET", "/public/products/status", A, O, "GET /products/status", misc_products_status},
	{"GET", "/public/users", A, O, "GET /users", misc_users},
	{"GET", "/public/users/{id}/orders", A, O, "GET /users/{id}/orders", misc_user_orders},
	{"GET", "/public/users/{id}/vehicles", A, O, "GET /users/{id}/vehicles", misc_user_vehicles},
	{"POST", "/public/validate-vehicle", A, O, "POST /validate-vehicle", misc_validate_vehicle},
	{"POST", "/public/transaction/create", A, O, "POST /transaction/create", misc_tx_create},
	{"GET", "/public/transactions", A, O, "GET /transactions", misc_txs},
	{"GET", "/public/transaction/{unique_id}/status", A, O,
	"GET /transaction/{unique_id}/status", misc_tx_status},
	{"GET", "/public/transaction/{unique_id}/fee", A, O,
	"GET /transaction/{unique_id}/fee", misc_tx_fee},
	{"GET", "/public/transaction/{id}/data", A, O, "GET /transaction/{id}/data", misc_tx_data},
	{"POST", "/public/transaction/{id}/cancel", A, O, "POST /transaction/{id}/cancel", misc_tx_cancel},
	{"POST", "/public/mcp", A, O, "/mcp", misc_mcp},
	{NULL}
};

const sb_service sb_service_partner_misc = {
	.name = "partner_misc",
	.routes = routes,
};
