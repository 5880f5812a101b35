/*-------------------------------------------------------------------------
 * orders.c
 *	  The partner order service of the sandbox (docs/sandbox-orders.md): the route
 *	  table, the public order routes, the knobs and the service hooks.
 *
 * Design notes:
 *
 * - Every public route answers in SB_STYLE_ORDERS: {"error":null,
 *   "data":...} on success, {"error":{"code","message"},"data":null} on
 *   failure.  The request rules and their codes are in orders_validate.c.
 * - The state machine and the data live in orders_state.c, webhook
 *   delivery in webhooks_out.c, the other rate-limited partner routes in
 *   partner_misc.c; this file only parses, checks and formats.
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "services/orders.h"

sb_orders_knobs sb_orders_knobs_v = {
	.pending_after_min = 1,
	.active_after_min = 2,
	.deferred_active_after_min = 5,
	.pdf_after_min = 1,
	.expire_after_min = 0,
	.auto_pay_after_min = 0,
	.webhook_timeout_ms = 5000,
};

static int	learned_port;

/*
 * With --port 0 sb_cfg.port stays 0, so the bound port is read from the
 * daemon of the first request that can create orders (every link we give
 * out is made after such a request).
 */
void
sb_orders_learn_port(sb_request *req)
{
	const union MHD_ConnectionInfo *ci;
	const union MHD_DaemonInfo *di;

	if (sb_cfg.port != 0 || learned_port != 0 || !req->conn)
		return;
	ci = MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_DAEMON);
	if (!ci || !ci->daemon)
		return;
	di = MHD_get_daemon_info(ci->daemon, MHD_DAEMON_INFO_BIND_PORT);
	if (di)
		learned_port = di->port;
}

/*
 * Address the sandbox gives out in payment_link and pdf_url: the knob
 * orders.base_url, else the loopback address of our port.
 */
const char *
sb_orders_base_url(char *buf, size_t len)
{
	if (sb_orders_knobs_v.base_url && sb_orders_knobs_v.base_url[0])
		snprintf(buf, len, "%s", sb_orders_knobs_v.base_url);
	else
		snprintf(buf, len, "http://127.0.0.1:%d",
				 sb_cfg.port ? sb_cfg.port : learned_port);
	return buf;
}

/*
 * Reads the bug_report query flag (true/false); replies 400 and returns
 * false when it is anything else.  A true flag is recorded for the
 * partner (GET /_sandbox/orders/bug-reports).
 */
bool
sb_orders_bug_report(sb_request *req, sb_response *resp, const char *id)
{
	const char *v = sb_query(req, "bug_report");
	char		at[40];
	json_t	   *r;

	if (!v || strcmp(v, "false") == 0)
		return true;
	if (strcmp(v, "true") != 0)
	{
		sb_reply_error(req, resp, 400, "bug_report_invalid",
					   "bug_report must be true or false");
		return false;
	}
	sb_iso8601(sb_wall_ms(), at, sizeof(at));
	r = json_pack("{s:s, s:s, s:s?, s:s}", "method", req->method,
				  "route", req->route ? req->route->path : req->path,
				  "id", id, "at", at);
	if (!sb_orders_data[req->partner->index].bug_reports)
		sb_orders_data[req->partner->index].bug_reports = json_array();
	json_array_append_new(sb_orders_data[req->partner->index].bug_reports, r);
	return true;
}

void
sb_orders_reply_data(sb_response *resp, int status, json_t *data)
{
	sb_reply_json(resp, status, json_pack("{s:n, s:o}", "error", "data", data));
}

/*
 * Common start of a body route: query (bug_report only), media type
 * (400 content_type_invalid: the document answers every broken create or
 * validate rule, this one included, with 400 and an error type), JSON parse
 * (400 body_invalid_json).
 * Returns NULL after replying.
 */
json_t *
sb_orders_read_body(sb_request *req, sb_response *resp)
{
	static const char *const allowed[] = {"bug_report", NULL};
	const char *ct = req->content_type;
	size_t		n = strlen("application/json");
	json_t	   *body;
	json_error_t jerr;

	if (!sb_query_check(req, resp, allowed) || !sb_orders_bug_report(req, resp, NULL))
		return NULL;
	if (!ct || strncasecmp(ct, "application/json", n) != 0 ||
		(ct[n] != '\0' && ct[n] != ';' && ct[n] != ' '))
	{
		sb_reply_error(req, resp, 400, "content_type_invalid",
					   "Content-Type must be application/json");
		return NULL;
	}
	body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!body)
	{
		sb_reply_error(req, resp, 400, "body_invalid_json",
					   "the body is not valid JSON: %s", jerr.text);
		return NULL;
	}
	return body;
}

/* POST /public/orders */
static void
h_create(sb_request *req, sb_response *resp)
{
	json_t	   *body = sb_orders_read_body(req, resp);
	sb_orders_verr e;
	sb_tx	   *t;

	if (!body)
		return;
	sb_orders_learn_port(req);
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

/* POST /public/orders/validate: same checks, nothing stored */
static void
h_validate(sb_request *req, sb_response *resp)
{
	json_t	   *body = sb_orders_read_body(req, resp);
	sb_orders_verr e;

	if (!body)
		return;
	if (!sb_orders_validate(body, false, req->partner->index, &e))
		sb_reply_error(req, resp, e.status, e.code, "%s", e.msg);
	else
		sb_orders_reply_data(resp, 200,
				   json_pack("{s:b, s:I, s:I}", "valid", 1,
							 "vehicles", (json_int_t) json_array_size(json_object_get(body, "vehicles")),
							 "vignettes", (json_int_t) json_array_size(json_object_get(body, "vignettes"))));
	json_decref(body);
}

/*
 * The list filter values of the document and the order states each one
 * selects (WILL BE ACTIVE = DEFERRED, DELETED = payment failed).
 */
static int
status_filter(const char *v)
{
	if (!v)
		return -1;
	if (strcmp(v, "PENDING") == 0)
		return SB_OS_PENDING;
	if (strcmp(v, "WILL BE ACTIVE") == 0 || strcmp(v, "WILL+BE+ACTIVE") == 0)
		return SB_OS_DEFERRED;
	if (strcmp(v, "ACTIVE") == 0)
		return SB_OS_ACTIVE;
	if (strcmp(v, "EXPIRED") == 0)
		return SB_OS_EXPIRED;
	if (strcmp(v, "REFUNDED") == 0)
		return SB_OS_REFUNDED;
	if (strcmp(v, "DELETED") == 0)
		return SB_OS_DELETED;
	return -2;
}

typedef struct list_ctx
{
	int			partner;
	int		   *idx;
} list_ctx;

static json_t *
list_item(int64_t i, void *arg)
{
	list_ctx   *c = arg;
	sb_order   *o = &sb_orders_data[c->partner].orders[c->idx[i]];

	return json_pack("{s:s, s:s?, s:I, s:s?, s:s}",
					 "id", o->id, "email", o->email,
					 "created_date", (json_int_t) o->created_s,
					 "custom_id", o->custom_id,
					 "status", sb_orders_status_name(o->status));
}

/* GET /public/orders: oldest first, cursor paging, optional status filter */
static void
h_list(sb_request *req, sb_response *resp)
{
	static const char *const allowed[] = {"status", "bug_report", "limit", "cursor", NULL};
	const char *sv;
	int			want;
	sb_opartner *p = &sb_orders_data[req->partner->index];
	list_ctx	c;
	int64_t		n = 0;
	char		bind[96];

	if (!sb_query_check(req, resp, allowed) || !sb_orders_bug_report(req, resp, NULL))
		return;
	sv = sb_query(req, "status");
	want = status_filter(sv);
	if (want == -2)
	{
		sb_reply_error(req, resp, 400, "status_invalid",
					   "status must be one of PENDING, WILL BE ACTIVE, ACTIVE, EXPIRED, REFUNDED, DELETED");
		return;
	}
	c.partner = req->partner->index;
	c.idx = malloc(sizeof(int) * (p->norders + 1));
	for (int i = 0; i < p->norders; i++)
		if (want < 0 || (int) p->orders[i].status == want)
			c.idx[n++] = i;
	snprintf(bind, sizeof(bind), "GET /public/orders?status=%d", want);
	sb_page(req, resp, bind, n, list_item, &c, json_pack("{s:n}", "error"));
	free(c.idx);
}

static sb_order *
order_arg(sb_request *req, sb_response *resp)
{
	static const char *const allowed[] = {"bug_report", NULL};
	const char *id = sb_param(req, "id");
	sb_order   *o;

	if (!sb_query_check(req, resp, allowed) || !sb_orders_bug_report(req, resp, id))
		return NULL;
	o = sb_orders_find(req->partner->index, id);
	if (!o)
		sb_reply_error(req, resp, 404, "order_not_found", "no order with id or custom_id \"%s\"", id);
	return o;
}

/* GET /public/orders/{id} */
static void
h_detail(sb_request *req, sb_response *resp)
{
	sb_order   *o = order_arg(req, resp);

	if (o)
		sb_orders_reply_data(resp, 200, sb_orders_detail_json(req->partner->index, o));
}

static json_t *
status_json(sb_order *o)
{
	return json_pack("{s:s, s:s?, s:s}", "id", o->id, "custom_id", o->custom_id,
					 "status", sb_orders_status_name(o->status));
}

/* GET /public/orders/{id}/status */
static void
h_status(sb_request *req, sb_response *resp)
{
	sb_order   *o = order_arg(req, resp);

	if (o)
		sb_orders_reply_data(resp, 200, status_json(o));
}

static void
cancel(sb_request *req, sb_response *resp, sb_ostatus from)
{
	sb_order   *o = order_arg(req, resp);

	if (!o)
		return;
	if (o->status != from)
	{
		sb_reply_error(req, resp, 409,
					   from == SB_OS_PENDING ? "order_not_pending" : "order_not_deferred",
					   "order %s is %s; this cancel needs %s", o->id,
					   sb_orders_status_name(o->status), sb_orders_status_name(from));
		return;
	}
	sb_orders_cancel(req->partner->index, o, from);
	sb_orders_reply_data(resp, 200, status_json(o));
	resp->applied = true;
}

static void
h_cancel_pending(sb_request *req, sb_response *resp)
{
	cancel(req, resp, SB_OS_PENDING);
}

static void
h_cancel_deferred(sb_request *req, sb_response *resp)
{
	cancel(req, resp, SB_OS_DEFERRED);
}

/* GET /_sandbox/orders/bug-reports */
static void
h_bug_reports(sb_request *req, sb_response *resp)
{
	json_t	   *a = sb_orders_data[req->partner->index].bug_reports;

	sb_reply_json(resp, 200, a ? json_deep_copy(a) : json_array());
}

#define A SB_AUTH
#define ADM (SB_ADMIN | SB_AUTH)
#define O SB_STYLE_ORDERS

static const sb_route routes[] = {
	{"POST", "/public/orders", A, O, "POST /orders", h_create},
	{"POST", "/public/orders/validate", A, O, "POST /orders/validate", h_validate},
	{"GET", "/public/orders", A, O, "GET /orders", h_list},
	{"GET", "/public/orders/{id}", A, O, "GET /orders/{id}", h_detail},
	{"GET", "/public/orders/{id}/status", A, O, "GET /orders/{id}/status", h_status},
	{"POST", "/public/orders/{id}/cancel-pending", A, O,
	"POST /orders/{id}/cancel-pending", h_cancel_pending},
	{"POST", "/public/orders/{id}/cancel-deferred", A, O,
	"POST /orders/{id}/cancel-deferred", h_cancel_deferred},

	{"PUT", "/_sandbox/orders/callback", ADM, O, NULL, sb_orders_wh_route_put_callback},
	{"GET", "/_sandbox/orders/callback", ADM, O, NULL, sb_orders_wh_route_get_callback},
	{"GET", "/_sandbox/orders/webhooks", SB_ADMIN, O, NULL, sb_orders_wh_route_webhooks},
	{"GET", "/_sandbox/orders/events", SB_ADMIN, O, NULL, sb_orders_wh_route_events},
	{"GET", "/_sandbox/orders/transactions", ADM, O, NULL, sb_orders_state_route_txs},
	{"POST", "/_sandbox/orders/transactions/{transaction_id}/pay", ADM, O, NULL,
	sb_orders_state_route_pay},
	{"POST", "/_sandbox/orders/transactions/{transaction_id}/fail", ADM, O, NULL,
	sb_orders_state_route_fail},
	{"POST", "/_sandbox/orders/chargeback/{id}", ADM, O, NULL, sb_orders_state_route_chargeback},
	{"GET", "/_sandbox/orders/bug-reports", ADM, O, NULL, h_bug_reports},
	{"GET", "/_sandbox/orders/pdf/{id}", SB_ADMIN, O, NULL, sb_orders_state_route_pdf},
	{"GET", "/_sandbox/orders/checkout/{transaction_id}", SB_ADMIN, O, NULL,
	sb_orders_state_route_checkout},
	{NULL}
};

/* ---- knobs ---- */

typedef struct knob_num
{
	const char *name;
	double	   *v;
} knob_num;

static const knob_num num_knobs[] = {
	{"orders.pending_after_min", &sb_orders_knobs_v.pending_after_min},
	{"orders.active_after_min", &sb_orders_knobs_v.active_after_min},
	{"orders.deferred_active_after_min", &sb_orders_knobs_v.deferred_active_after_min},
	{"orders.pdf_after_min", &sb_orders_knobs_v.pdf_after_min},
	{"orders.expire_after_min", &sb_orders_knobs_v.expire_after_min},
	{"orders.auto_pay_after_min", &sb_orders_knobs_v.auto_pay_after_min},
	{"orders.webhook_timeout_ms", &sb_orders_knobs_v.webhook_timeout_ms},
	{"orders.unshown_null", &sb_orders_knobs_v.unshown_null},
	{NULL, NULL}
};

typedef struct knob_str
{
	const char *name;
	char	  **v;
} knob_str;

static const knob_str str_knobs[] = {
	{"orders.webhook_secret", &sb_orders_knobs_v.webhook_secret},
	{"orders.callback_sandbox", &sb_orders_knobs_v.callback_sandbox},
	{"orders.callback_production", &sb_orders_knobs_v.callback_production},
	{"orders.base_url", &sb_orders_knobs_v.base_url},
	{NULL, NULL}
};

/* Numbers >= 0; strings (an integer is taken as its digits; null or "" clears). */
static int
orders_set(const char *name, json_t *value)
{
	for (const knob_num *k = num_knobs; k->name; k++)
	{
		if (strcmp(k->name, name) != 0)
			continue;
		if (!json_is_number(value) || json_number_value(value) < 0)
			return -1;
		*k->v = json_number_value(value);
		return 1;
	}
	for (const knob_str *k = str_knobs; k->name; k++)
	{
		if (strcmp(k->name, name) != 0)
			continue;
		if (!json_is_string(value) && !json_is_null(value) && !json_is_integer(value))
			return -1;
		free(*k->v);
		*k->v = NULL;
		if (json_is_string(value) && json_string_length(value) > 0)
			*k->v = strdup(json_string_value(value));
		else if (json_is_integer(value))
		{
			/* --set orders.webhook_secret=1234 arrives as a JSON number */
			char		buf[32];

			snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(value));
			*k->v = strdup(buf);
		}
		return 1;
	}
	return 0;
}

static void
orders_get(json_t *out)
{
	for (const knob_num *k = num_knobs; k->name; k++)
		json_object_set_new(out, k->name, json_real(*k->v));
	for (const knob_str *k = str_knobs; k->name; k++)
		json_object_set_new(out, k->name, *k->v ? json_string(*k->v) : json_null());
}

static void
orders_init(void)
{
	sb_orders_wh_init();
}

static void
orders_reset(void)
{
	sb_orders_wh_reset();
	sb_orders_reset_data();
}

const sb_service sb_service_orders = {
	.name = "orders",
	.routes = routes,
	.init = orders_init,
	.reset = orders_reset,
	.set = orders_set,
	.get = orders_get,
};
