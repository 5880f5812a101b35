/*-------------------------------------------------------------------------
 * orders.c
 *	  The partner order service of the sandbox (document 000): the route
 *	  table, request validation, the public order routes and the knobs.
 *
 * Design notes:
 *
 * - Every public route answers in SB_STYLE_ORDERS: {"error":null,
 *   "data":...} on success, {"error":{"code","message"},"data":null} on
 *   failure.  Each validation rule has its own error code; the list is in
 *   docs/sandbox-orders.md and must stay in step with sb_orders_validate().
 * - Validation reports the first broken rule, checking members in a fixed
 *   order, so a request always gets the same code.
 * - The state machine and the data live in orders_state.c, webhook
 *   delivery in webhooks_out.c, the other rate-limited partner routes in
 *   partner_misc.c; this file only parses, checks and formats.
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "services/orders.h"

#define MAX_VEHICLES 10
#define MAX_VIGNETTES 10

sb_orders_knobs sb_orders_knobs_v = {
	.pending_after_min = 1,
	.active_after_min = 2,
	.deferred_active_after_min = 5,
	.pdf_after_min = 1,
	.expire_after_min = 0,
	.auto_pay_after_min = 0,
	.webhook_timeout_ms = 5000,
};

typedef sb_orders_verr verr;

static bool
fail(verr *e, int status, const char *code, const char *fmt, const char *arg)
{
	e->status = status;
	e->code = code;
	snprintf(e->msg, sizeof(e->msg), fmt, arg ? arg : "");
	return false;
}

static const char *const periods[] = {"1_day", "10_days", "1_month", "1_year", NULL};
static const char *const providers[] = {"provider_a", "provider_b", "provider_c", NULL};

static bool
in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* True if s is a real calendar date written YYYY-MM-DD. */
static bool
valid_date(const char *s)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int			y,
				m,
				d;

	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return false;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !isdigit((unsigned char) s[i]))
			return false;
	y = atoi(s);
	m = atoi(s + 5);
	d = atoi(s + 8);
	if (y < 2000 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return false;
	if (m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return false;
	return true;
}

/* Plates: 2..15 characters, letters, digits, space and dash. */
static bool
valid_plate(const char *s)
{
	size_t		n = strlen(s);

	if (n < 2 || n > 15)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char) *s) && *s != ' ' && *s != '-')
			return false;
	return true;
}

static bool
only_members(json_t *obj, const char *const *allowed, const char **bad)
{
	const char *k;
	json_t	   *v;

	json_object_foreach(obj, k, v)
	{
		if (!in_list(k, allowed))
		{
			*bad = k;
			return false;
		}
	}
	return true;
}

static bool
check_vehicles(json_t *body, bool create, verr *e)
{
	static const char *const members[] = {"plate", "country", NULL};
	json_t	   *a = json_object_get(body, "vehicles");
	size_t		i,
				j;
	json_t	   *v;
	const char *bad;

	if (!a)
		return fail(e, 400, "vehicles_required", "vehicles is required%s", NULL);
	if (!json_is_array(a))
		return fail(e, 400, "vehicles_invalid", "vehicles must be an array%s", NULL);
	if (json_array_size(a) == 0)
		return fail(e, 400, "vehicles_empty", "vehicles must not be empty%s", NULL);
	if (json_array_size(a) > MAX_VEHICLES)
		return fail(e, 400, "vehicles_too_many", "at most 10 vehicles per order%s", NULL);
	json_array_foreach(a, i, v)
	{
		json_t	   *p,
				   *c;
		const char *cs;

		if (!json_is_object(v))
			return fail(e, 400, "vehicle_invalid", "vehicles entries must be objects%s", NULL);
		if (!only_members(v, members, &bad))
			return fail(e, 400, "vehicle_invalid", "unknown vehicle member \"%s\"", bad);
		p = json_object_get(v, "plate");
		if (!json_is_string(p) || !valid_plate(json_string_value(p)))
			return fail(e, 400, "vehicle_plate_invalid",
						"vehicle plate must be 2 to 15 letters, digits, spaces or dashes%s", NULL);
		c = json_object_get(v, "country");
		cs = json_string_value(c);
		if (!cs || strlen(cs) != 2 || !isupper((unsigned char) cs[0]) ||
			!isupper((unsigned char) cs[1]))
			return fail(e, 400, "vehicle_country_invalid",
						"vehicle country must be an ISO 3166-1 alpha-2 code such as \"SI\"%s", NULL);
		for (j = 0; j < i; j++)
		{
			json_t	   *w = json_array_get(a, j);

			if (strcasecmp(json_string_value(json_object_get(w, "plate")),
						   json_string_value(p)) == 0 &&
				strcmp(json_string_value(json_object_get(w, "country")), cs) == 0)
				return fail(e, 400, "vehicles_duplicate",
							"vehicle \"%s\" is listed twice", json_string_value(p));
		}
	}
	(void) create;
	return true;
}

static bool
check_vignettes(json_t *body, bool create, int partner, verr *e)
{
	static const char *const members[] =
	{"custom_id", "name", "period", "start_date", "flex", NULL};
	json_t	   *a = json_object_get(body, "vignettes");
	size_t		i,
				j;
	json_t	   *v;
	const char *bad;

	if (!a)
		return fail(e, 400, "vignettes_required", "vignettes is required%s", NULL);
	if (!json_is_array(a))
		return fail(e, 400, "vignettes_invalid", "vignettes must be an array%s", NULL);
	if (json_array_size(a) == 0)
		return fail(e, 400, "vignettes_empty", "vignettes must not be empty%s", NULL);
	if (json_array_size(a) > MAX_VIGNETTES)
		return fail(e, 400, "vignettes_too_many", "at most 10 vignettes per order%s", NULL);
	json_array_foreach(a, i, v)
	{
		json_t	   *cid,
				   *m;
		const char *s;

		if (!json_is_object(v))
			return fail(e, 400, "vignette_invalid", "vignettes entries must be objects%s", NULL);
		if (!only_members(v, members, &bad))
			return fail(e, 400, "vignette_invalid", "unknown vignette member \"%s\"", bad);
		cid = json_object_get(v, "custom_id");
		if (cid || create)
		{
			s = json_string_value(cid);
			if (!s || strlen(s) < 1 || strlen(s) > 64)
				return fail(e, 400, "vignette_custom_id_invalid",
							"vignette custom_id must be a string of 1 to 64 characters%s", NULL);
		}
		s = json_string_value(json_object_get(v, "name"));
		if (!s || strlen(s) < 1 || strlen(s) > 100)
			return fail(e, 400, "vignette_name_invalid",
						"vignette name must be a string of 1 to 100 characters%s", NULL);
		s = json_string_value(json_object_get(v, "period"));
		if (!s || !in_list(s, periods))
			return fail(e, 400, "vignette_period_invalid",
						"vignette period must be one of 1_day, 10_days, 1_month, 1_year%s", NULL);
		s = json_string_value(json_object_get(v, "start_date"));
		if (!s || !valid_date(s))
			return fail(e, 400, "vignette_start_date_invalid",
						"vignette start_date must be a date YYYY-MM-DD%s", NULL);
		m = json_object_get(v, "flex");
		if (m && !json_is_boolean(m))
			return fail(e, 400, "vignette_flex_invalid", "vignette flex must be a boolean%s", NULL);
		if (!cid)
			continue;
		for (j = 0; j < i; j++)
		{
			json_t	   *w = json_object_get(json_array_get(a, j), "custom_id");

			if (w && strcmp(json_string_value(w), json_string_value(cid)) == 0)
				return fail(e, 400, "vignettes_duplicate_custom_id",
							"custom_id \"%s\" is used twice in this request",
							json_string_value(cid));
		}
		if (sb_orders_find(partner, json_string_value(cid)))
			return fail(e, 409, "custom_id_exists",
						"an order with custom_id \"%s\" already exists",
						json_string_value(cid));
	}
	return true;
}

static bool
check_payment(json_t *body, verr *e)
{
	json_t	   *paid = json_object_get(body, "order_has_been_paid");
	bool		is_paid = json_is_true(paid);
	json_t	   *m;
	size_t		i,
				j;
	json_t	   *v;

	m = json_object_get(body, "send_payment_link");
	if (m)
	{
		if (is_paid)
			return fail(e, 400, "send_payment_link_not_allowed",
						"send_payment_link is only allowed when order_has_been_paid is false%s", NULL);
		if (!json_is_string(m) ||
			(strcmp(json_string_value(m), "email") != 0 &&
			 strcmp(json_string_value(m), "sms") != 0))
			return fail(e, 400, "send_payment_link_invalid",
						"send_payment_link must be \"email\" or \"sms\"%s", NULL);
	}
	m = json_object_get(body, "allowed_payment_providers");
	if (m)
	{
		if (is_paid)
			return fail(e, 400, "allowed_payment_providers_not_allowed",
						"allowed_payment_providers is only allowed when order_has_been_paid is false%s", NULL);
		if (!json_is_array(m))
			return fail(e, 400, "allowed_payment_providers_invalid",
						"allowed_payment_providers must be an array of strings%s", NULL);
		if (json_array_size(m) == 0)
			return fail(e, 400, "allowed_payment_providers_empty",
						"allowed_payment_providers needs at least one item%s", NULL);
		json_array_foreach(m, i, v)
		{
			if (!json_is_string(v))
				return fail(e, 400, "allowed_payment_providers_invalid",
							"allowed_payment_providers must be an array of strings%s", NULL);
			if (!in_list(json_string_value(v), providers))
				return fail(e, 400, "allowed_payment_provider_unknown",
							"unknown payment provider \"%s\" (provider_a, provider_b, provider_c)",
							json_string_value(v));
			for (j = 0; j < i; j++)
				if (strcmp(json_string_value(json_array_get(m, j)),
						   json_string_value(v)) == 0)
					return fail(e, 400, "allowed_payment_providers_not_unique",
								"payment provider \"%s\" is listed twice",
								json_string_value(v));
		}
	}
	m = json_object_get(body, "open_order_details_by_default");
	if (m)
	{
		if (is_paid)
			return fail(e, 400, "open_order_details_by_default_not_allowed",
						"open_order_details_by_default is only allowed when order_has_been_paid is false%s", NULL);
		if (!json_is_boolean(m))
			return fail(e, 400, "open_order_details_by_default_invalid",
						"open_order_details_by_default must be a boolean%s", NULL);
	}
	return true;
}

static bool
check_user(json_t *body, verr *e)
{
	json_t	   *u = json_object_get(body, "user");
	json_t	   *m;
	const char *s;
	const char *link;

	if (u)
	{
		if (!json_is_object(u))
			return fail(e, 400, "user_invalid", "user must be an object%s", NULL);
		m = json_object_get(u, "email");
		if (m)
		{
			s = json_string_value(m);
			if (!s || !strchr(s, '@') || strlen(s) > 254 || s[0] == '@')
				return fail(e, 400, "user_email_invalid", "user.email must be an email address%s", NULL);
		}
		m = json_object_get(u, "phone");
		if (m)
		{
			s = json_string_value(m);
			if (!s || s[0] != '+' || strlen(s) < 5 || strlen(s) > 16 ||
				strspn(s + 1, "0123456789") != strlen(s) - 1)
				return fail(e, 400, "user_phone_invalid",
							"user.phone must be an E.164 number such as \"+38640123456\"%s", NULL);
		}
		for (int i = 0; i < 3; i++)
		{
			static const char *const names[] = {"first_name", "last_name", "language"};

			m = json_object_get(u, names[i]);
			if (m && !json_is_string(m))
				return fail(e, 400, "user_invalid", "user.%s must be a string", names[i]);
		}
	}
	m = json_object_get(body, "subaccount");
	if (m && (!json_is_string(m) || strlen(json_string_value(m)) < 1 ||
			  strlen(json_string_value(m)) > 64))
		return fail(e, 400, "subaccount_invalid",
					"subaccount must be a string of 1 to 64 characters%s", NULL);
	m = json_object_get(body, "extra");
	if (m && !json_is_object(m))
		return fail(e, 400, "extra_invalid", "extra must be an object%s", NULL);

	link = json_string_value(json_object_get(body, "send_payment_link"));
	if (link && strcmp(link, "email") == 0 && !json_object_get(u, "email"))
		return fail(e, 400, "user_email_required",
					"send_payment_link \"email\" needs user.email%s", NULL);
	if (link && strcmp(link, "sms") == 0 && !json_object_get(u, "phone"))
		return fail(e, 400, "user_phone_required",
					"send_payment_link \"sms\" needs user.phone%s", NULL);
	return true;
}

/*
 * Checks a create (create = true) or validate request body against every
 * rule; on the first broken one fills e and returns false.  Validate
 * applies the same rules to the members present but requires only
 * vehicles and vignettes (and no vignette custom_id).
 */
bool
sb_orders_validate(json_t *body, bool create, int partner, verr *e)
{
	static const char *const members[] = {
		"terms_and_privacy_accepted", "order_has_been_paid", "vehicles",
		"vignettes", "send_payment_link", "allowed_payment_providers",
		"open_order_details_by_default", "user", "subaccount", "extra", NULL
	};
	const char *bad;
	json_t	   *m;

	if (!json_is_object(body))
		return fail(e, 400, "body_not_object", "the body must be a JSON object%s", NULL);
	if (!only_members(body, members, &bad))
		return fail(e, 400, "unknown_field", "unknown member \"%s\"", bad);

	m = json_object_get(body, "terms_and_privacy_accepted");
	if (!m && create)
		return fail(e, 400, "terms_and_privacy_accepted_required",
					"terms_and_privacy_accepted is required%s", NULL);
	if (m && !json_is_boolean(m))
		return fail(e, 400, "terms_and_privacy_accepted_invalid",
					"terms_and_privacy_accepted must be a boolean%s", NULL);
	if (m && !json_is_true(m))
		return fail(e, 400, "terms_not_accepted",
					"terms_and_privacy_accepted must be true%s", NULL);

	m = json_object_get(body, "order_has_been_paid");
	if (!m && create)
		return fail(e, 400, "order_has_been_paid_required",
					"order_has_been_paid is required%s", NULL);
	if (m && !json_is_boolean(m))
		return fail(e, 400, "order_has_been_paid_invalid",
					"order_has_been_paid must be a boolean%s", NULL);

	return check_vehicles(body, create, e) &&
		check_vignettes(body, create, partner, e) &&
		check_payment(body, e) &&
		check_user(body, e);
}

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
 * (415 content_type_invalid), JSON parse (400 body_invalid_json).
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
		sb_reply_error(req, resp, 415, "content_type_invalid",
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
	verr		e;
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
	verr		e;

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

	{"GET", "/public/products", A, O, "GET /products", sb_orders_misc_products},
	{"GET", "/public/products/status", A, O, "GET /products/status", sb_orders_misc_products_status},
	{"GET", "/public/users", A, O, "GET /users", sb_orders_misc_users},
	{"GET", "/public/users/{id}/orders", A, O, "GET /users/{id}/orders", sb_orders_misc_user_orders},
	{"GET", "/public/users/{id}/vehicles", A, O, "GET /users/{id}/vehicles", sb_orders_misc_user_vehicles},
	{"POST", "/public/validate-vehicle", A, O, "POST /validate-vehicle", sb_orders_misc_validate_vehicle},
	{"POST", "/public/transaction/create", A, O, "POST /transaction/create", sb_orders_misc_tx_create},
	{"GET", "/public/transactions", A, O, "GET /transactions", sb_orders_misc_txs},
	{"GET", "/public/transaction/{unique_id}/status", A, O,
	"GET /transaction/{unique_id}/status", sb_orders_misc_tx_status},
	{"GET", "/public/transaction/{unique_id}/fee", A, O,
	"GET /transaction/{unique_id}/fee", sb_orders_misc_tx_fee},
	{"GET", "/public/transaction/{id}/data", A, O, "GET /transaction/{id}/data", sb_orders_misc_tx_data},
	{"POST", "/public/transaction/{id}/cancel", A, O,
	"POST /transaction/{id}/cancel", sb_orders_misc_tx_cancel},
	{"POST", "/public/mcp", A, O, "/mcp", sb_orders_misc_mcp},

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

/* Numbers >= 0; strings (or null / "" to clear). */
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
		if (!json_is_string(value) && !json_is_null(value))
			return -1;
		free(*k->v);
		*k->v = NULL;
		if (json_is_string(value) && json_string_length(value) > 0)
			*k->v = strdup(json_string_value(value));
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
