/*-------------------------------------------------------------------------
 * webhooks_out.c
 *	  Outgoing webhooks of the sandbox's partner order service: the event
 *	  log, the callback URL setup per partner and environment, and the
 *	  delivery queue with its retries.
 *
 * Design notes:
 *
 * - Events are made with the state lock held (handlers, timers): the
 *   body is built, logged, and, when the partner has a callback URL for
 *   the sandbox's environment (--environment), a delivery job is queued.
 * - One delivery thread sends jobs in queue order with libcurl, holding
 *   no lock during network I/O; so the first attempts of one order's
 *   webhooks go out in the order they were made.  The queue has its own
 *   mutex; lock order is state lock, then queue mutex, never the reverse
 *   (the thread drops the queue mutex before taking the state lock).
 * - Anything but HTTP 200, a connection error or a timeout is a failed
 *   attempt; the job is re-queued by a sandbox timer after 1, 5 and 15
 *   sandbox minutes (3 retries, 4 attempts at most) and then given up.
 *   Re-queued jobs go to the tail, so retries interleave with newer
 *   webhooks as they would in real life.
 * - Every attempt is recorded after it ends (GET /_sandbox/orders/webhooks).
 * - Reset bumps an epoch; queued and in-flight jobs of an older epoch are
 *   dropped when next touched.  Jobs waiting in a retry timer that the
 *   reset cleared are leaked (see orders_state.c for why).
 * - One slow receiver delays every later delivery by up to
 *   orders.webhook_timeout_ms per attempt; the sandbox serves tests, so
 *   strict order beats throughput here.
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "services/orders.h"

static const double retry_after_min[] = {1, 5, 15};
#define MAX_RETRIES 3

typedef struct whjob
{
	struct whjob *next;
	uint64_t	epoch;
	int			partner;
	int64_t		delivery_id;
	int64_t		event_seq;
	int			attempt;		/* 1 = first try, 2..4 = retries */
	char	   *url;
	char	   *body;			/* serialized payload */
	char	   *order_id;		/* NULL for CHECKOUT_STATUS_CHANGED */
	char	   *txid;
	char	   *event_type;
	char	   *status;
	char	   *secret;			/* refreshed from the knob when queued */
	long		timeout_ms;
} whjob;

/* A logged event or attempt, owned by one partner. */
typedef struct whrec
{
	int			partner;
	json_t	   *row;
} whrec;

typedef struct whlog
{
	int			n;
	int			max;
	whrec	   *recs;
} whlog;

/* protected by the state lock */
static uint64_t wh_epoch = 1;
static int64_t next_event_seq;
static int64_t next_delivery_id;
static whlog events;
static whlog attempts;

/* protected by q_mu */
static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;
static whjob *q_head;
static whjob *q_tail;

static pthread_once_t start_once = PTHREAD_ONCE_INIT;

static char *
xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void
log_add(whlog *l, int partner, json_t *row)
{
	if (l->n == l->max)
	{
		l->max = l->max ? l->max * 2 : 64;
		l->recs = realloc(l->recs, sizeof(whrec) * l->max);
	}
	l->recs[l->n].partner = partner;
	l->recs[l->n].row = row;
	l->n++;
}

static void
log_clear(whlog *l)
{
	for (int i = 0; i < l->n; i++)
		json_decref(l->recs[i].row);
	free(l->recs);
	memset(l, 0, sizeof(*l));
}

static void
job_free(whjob *j)
{
	if (!j)
		return;
	free(j->url);
	free(j->body);
	free(j->order_id);
	free(j->txid);
	free(j->event_type);
	free(j->status);
	free(j->secret);
	free(j);
}

static const char *
environment(void)
{
	return sb_cfg.environment && strcmp(sb_cfg.environment, "production") == 0
		? "production" : "sandbox";
}

/* Callback URL of a partner for one environment: PUT value, else knob. */
static const char *
callback_url(int partner, const char *env)
{
	sb_opartner *p = &sb_orders_data[partner];

	if (strcmp(env, "production") == 0)
		return p->cb_production ? p->cb_production : sb_orders_knobs_v.callback_production;
	return p->cb_sandbox ? p->cb_sandbox : sb_orders_knobs_v.callback_sandbox;
}

/* ---- delivery thread ---- */

static size_t
discard(char *ptr, size_t size, size_t nmemb, void *arg)
{
	return size * nmemb;
}

/*
 * POSTs one job; returns the HTTP status (0 when there was none) and
 * fills err on a transport error.  Runs without any lock.
 */
static long
post_one(whjob *j, char *err, size_t errlen)
{
	CURL	   *c = curl_easy_init();
	struct curl_slist *h = NULL;
	long		code = 0;
	CURLcode	rc;

	err[0] = '\0';
	if (!c)
	{
		snprintf(err, errlen, "curl_easy_init failed");
		return 0;
	}
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	if (j->secret)
	{
		char		line[512];

		snprintf(line, sizeof(line), "X-Partner-Webhook-Secret: %s", j->secret);
		h = curl_slist_append(h, line);
	}
	curl_easy_setopt(c, CURLOPT_URL, j->url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, j->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long) strlen(j->body));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "partner-svc-sandbox-webhooks/1.0");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, j->timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	/* straight to the callback URL: no proxy of the environment */
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		snprintf(err, errlen, "%s", curl_easy_strerror(rc));
	else
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return code;
}

static void
enqueue(whjob *j)
{
	j->next = NULL;
	free(j->secret);
	j->secret = xstrdup(sb_orders_knobs_v.webhook_secret);
	j->timeout_ms = (long) sb_orders_knobs_v.webhook_timeout_ms;
	if (j->timeout_ms <= 0)
		j->timeout_ms = 5000;
	pthread_mutex_lock(&q_mu);
	if (q_tail)
		q_tail->next = j;
	else
		q_head = j;
	q_tail = j;
	pthread_cond_signal(&q_cv);
	pthread_mutex_unlock(&q_mu);
}

/* Timer callback (state lock held): a retry is due. */
static void
requeue(void *arg)
{
	whjob	   *j = arg;

	if (j->epoch != wh_epoch)
		job_free(j);
	else
		enqueue(j);
}

/* Records one finished attempt and decides what happens next. */
static void
finish(whjob *j, int64_t at_wall, int64_t at_sandbox, long code, const char *err)
{
	bool		ok = err[0] == '\0' && code == 200;
	char		at[40];
	json_t	   *row;
	const char *outcome;
	json_t	   *retry_in = json_null();

	if (ok)
		outcome = "delivered";
	else if (j->attempt <= MAX_RETRIES)
	{
		outcome = "retry_scheduled";
		retry_in = json_real(retry_after_min[j->attempt - 1]);
	}
	else
		outcome = "given_up";

	sb_iso8601(at_wall, at, sizeof(at));
	row = json_pack("{s:I, s:I, s:s?, s:s?, s:s, s:s, s:i, s:s, s:o, s:o, s:s, s:I, s:I, s:s, s:o, s:o?}",
					"delivery_id", (json_int_t) j->delivery_id,
					"event_seq", (json_int_t) j->event_seq,
					"order_id", j->order_id,
					"transaction_id", j->txid,
					"event_type", j->event_type,
					"status", j->status,
					"attempt", j->attempt,
					"url", j->url,
					"http_status", code ? json_integer(code) : json_null(),
					"error", err[0] ? json_string(err) :
					(code != 200 ? json_sprintf("HTTP %ld", code) : json_null()),
					"at", at,
					"at_ms", (json_int_t) at_wall,
					"sandbox_ms", (json_int_t) at_sandbox,
					"outcome", outcome,
					"next_retry_in_min", retry_in,
					"body", json_loads(j->body, 0, NULL));
	log_add(&attempts, j->partner, row);
	if (!ok && j->attempt <= MAX_RETRIES)
	{
		double		delay = retry_after_min[j->attempt - 1];

		j->attempt++;
		sb_timer_add(delay * SB_MINUTE, requeue, j);
	}
	else
		job_free(j);
}

static void *
delivery_main(void *arg)
{
	for (;;)
	{
		whjob	   *j;
		char		err[CURL_ERROR_SIZE + 64];
		int64_t		at_wall;
		int64_t		at_sandbox;
		long		code;

		pthread_mutex_lock(&q_mu);
		while (!q_head)
			pthread_cond_wait(&q_cv, &q_mu);
		j = q_head;
		q_head = j->next;
		if (!q_head)
			q_tail = NULL;
		pthread_mutex_unlock(&q_mu);

		at_wall = sb_wall_ms();
		at_sandbox = sb_sandbox_now_ms();
		code = post_one(j, err, sizeof(err));

		sb_lock();
		if (j->epoch == wh_epoch)
			finish(j, at_wall, at_sandbox, code, err);
		else
			job_free(j);
		sb_unlock();
	}
	return NULL;
}

static void
start_thread(void)
{
	pthread_t	t;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (pthread_create(&t, NULL, delivery_main, NULL) != 0)
	{
		sb_log("orders: cannot start the webhook delivery thread");
		return;
	}
	pthread_detach(t);
}

void
sb_orders_wh_init(void)
{
	pthread_once(&start_once, start_thread);
}

/* Forgets events, attempts and queued jobs (state lock held). */
void
sb_orders_wh_reset(void)
{
	whjob	   *j;

	wh_epoch++;
	log_clear(&events);
	log_clear(&attempts);
	next_event_seq = 0;
	next_delivery_id = 0;
	pthread_mutex_lock(&q_mu);
	j = q_head;
	q_head = q_tail = NULL;
	pthread_mutex_unlock(&q_mu);
	while (j)
	{
		whjob	   *n = j->next;

		job_free(j);
		j = n;
	}
}

/* ---- events ---- */

/*
 * Logs an event and queues its delivery to the partner's callback URL of
 * the current environment, if one is set.  Steals body.
 */
static void
emit(int partner, json_t *body, const char *order_id, const char *txid)
{
	const char *env = environment();
	const char *url = callback_url(partner, env);
	char		at[40];
	int64_t		seq = ++next_event_seq;
	char	   *text = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);

	sb_iso8601(sb_wall_ms(), at, sizeof(at));
	log_add(&events, partner,
			json_pack("{s:I, s:s?, s:s?, s:s, s:s, s:s, s:I, s:s, s:s?, s:O}",
					  "event_seq", (json_int_t) seq,
					  "order_id", order_id,
					  "transaction_id", txid,
					  "event_type", json_string_value(json_object_get(body, "event_type")),
					  "status", json_string_value(json_object_get(body, "status")),
					  "at", at,
					  "sandbox_ms", (json_int_t) sb_sandbox_now_ms(),
					  "environment", env,
					  "url", url,
					  "body", body));
	if (url)
	{
		whjob	   *j = calloc(1, sizeof(whjob));

		j->epoch = wh_epoch;
		j->partner = partner;
		j->delivery_id = ++next_delivery_id;
		j->event_seq = seq;
		j->attempt = 1;
		j->url = strdup(url);
		j->body = text;
		text = NULL;
		j->order_id = xstrdup(order_id);
		j->txid = xstrdup(txid);
		j->event_type = strdup(json_string_value(json_object_get(body, "event_type")));
		j->status = strdup(json_string_value(json_object_get(body, "status")));
		sb_orders_wh_init();
		enqueue(j);
	}
	free(text);
	json_decref(body);
}

/*
 * ORDER_STATUS_CHANGED (status = the order's status now) or
 * ORDER_CONFIRMATION_RECEIVED (adds product.pdf_url) for one order.
 */
void
sb_orders_wh_order_event(int partner, sb_order *o, const char *event_type)
{
	json_t	   *product = json_pack("{s:s?, s:s, s:s}", "custom_id", o->custom_id,
									"unique_id", o->id, "name", o->name);
	bool		confirmation = strcmp(event_type, "ORDER_CONFIRMATION_RECEIVED") == 0;

	if (confirmation)
	{
		char		base[256];
		char		url[400];

		snprintf(url, sizeof(url), "%s/_sandbox/orders/pdf/%s",
				 sb_orders_base_url(base, sizeof(base)), o->id);
		json_object_set_new(product, "pdf_url", json_string(url));
	}
	emit(partner,
		 json_pack("{s:s, s:s, s:o}", "event_type", event_type,
				   "status", sb_orders_status_name(o->status), "product", product),
		 o->id, sb_orders_data[partner].txs[o->tx].id);
}

/* CHECKOUT_STATUS_CHANGED for a transaction, listing all its orders. */
void
sb_orders_wh_checkout_event(int partner, sb_tx *t)
{
	json_t	   *products = json_array();

	for (int k = 0; k < t->norders; k++)
	{
		sb_order   *o = &sb_orders_data[partner].orders[t->orders[k]];

		json_array_append_new(products,
							  json_pack("{s:s?, s:s, s:s}", "custom_id", o->custom_id,
										"unique_id", o->id, "name", o->name));
	}
	emit(partner,
		 json_pack("{s:s, s:s, s:s, s:o}", "transaction_id", t->id,
				   "event_type", "CHECKOUT_STATUS_CHANGED",
				   "status", sb_orders_tx_status_name(t->status),
				   "products", products),
		 NULL, t->id);
}

/* ---- admin routes ---- */

static json_t *
callback_json(int partner)
{
	const char *env = environment();

	return json_pack("{s:n, s:{s:s?, s:s?, s:s, s:s?}}", "error", "data",
					 "sandbox", callback_url(partner, "sandbox"),
					 "production", callback_url(partner, "production"),
					 "environment", env,
					 "active", callback_url(partner, env));
}

static bool
valid_url(json_t *v)
{
	const char *s = json_string_value(v);

	return s && (strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0) &&
		strlen(s) > 8 && strlen(s) < 1000;
}

/*
 * PUT /_sandbox/orders/callback {"sandbox": url|null, "production": url|null}:
 * replaces the partner's callback URLs (a missing member counts as null,
 * which falls back to the knob default).  Two URLs must differ.
 */
void
sb_orders_wh_route_put_callback(sb_request *req, sb_response *resp)
{
	const char *ct = req->content_type;
	json_t	   *body;
	json_t	   *sb,
			   *pr;
	const char *k;
	json_t	   *v;
	sb_opartner *p = &sb_orders_data[req->partner->index];

	if (!ct || strncasecmp(ct, "application/json", 16) != 0)
	{
		sb_reply_error(req, resp, 400, "content_type_invalid",
					   "Content-Type must be application/json");
		return;
	}
	body = json_loadb(req->body, req->body_len, 0, NULL);
	if (!json_is_object(body))
	{
		json_decref(body);
		sb_reply_error(req, resp, 400, "body_invalid_json", "the body must be a JSON object");
		return;
	}
	json_object_foreach(body, k, v)
	{
		if (strcmp(k, "sandbox") != 0 && strcmp(k, "production") != 0)
		{
			sb_reply_error(req, resp, 400, "unknown_field", "unknown member \"%s\"", k);
			json_decref(body);
			return;
		}
		if (!json_is_null(v) && !valid_url(v))
		{
			sb_reply_error(req, resp, 400, "callback_url_invalid",
						   "%s must be an http:// or https:// URL or null", k);
			json_decref(body);
			return;
		}
	}
	sb = json_object_get(body, "sandbox");
	pr = json_object_get(body, "production");
	if (json_is_string(sb) && json_is_string(pr) &&
		strcmp(json_string_value(sb), json_string_value(pr)) == 0)
	{
		sb_reply_error(req, resp, 400, "callback_urls_equal",
					   "the sandbox and production callback URLs must differ");
		json_decref(body);
		return;
	}
	free(p->cb_sandbox);
	free(p->cb_production);
	p->cb_sandbox = xstrdup(json_string_value(sb));
	p->cb_production = xstrdup(json_string_value(pr));
	json_decref(body);
	sb_reply_json(resp, 200, callback_json(req->partner->index));
	resp->applied = true;
}

/* GET /_sandbox/orders/callback */
void
sb_orders_wh_route_get_callback(sb_request *req, sb_response *resp)
{
	sb_reply_json(resp, 200, callback_json(req->partner->index));
}

/*
 * Rows of a log, of the calling partner when a key was sent (else all),
 * filtered by the order_id / event_type query parameters.
 */
static void
reply_log(sb_request *req, sb_response *resp, whlog *l)
{
	static const char *const allowed[] = {"order_id", "transaction_id", "event_type", NULL};
	const char *fo,
			   *ft,
			   *fe;
	json_t	   *a;

	if (!sb_query_check(req, resp, allowed))
		return;
	fo = sb_query(req, "order_id");
	ft = sb_query(req, "transaction_id");
	fe = sb_query(req, "event_type");
	a = json_array();
	for (int i = 0; i < l->n; i++)
	{
		json_t	   *r = l->recs[i].row;
		const char *s;

		if (req->partner && l->recs[i].partner != req->partner->index)
			continue;
		s = json_string_value(json_object_get(r, "order_id"));
		if (fo && (!s || strcmp(s, fo) != 0))
			continue;
		s = json_string_value(json_object_get(r, "transaction_id"));
		if (ft && (!s || strcmp(s, ft) != 0))
			continue;
		s = json_string_value(json_object_get(r, "event_type"));
		if (fe && (!s || strcmp(s, fe) != 0))
			continue;
		json_array_append_new(a, json_deep_copy(r));
	}
	sb_reply_json(resp, 200, a);
}

/* GET /_sandbox/orders/webhooks: every finished delivery attempt */
void
sb_orders_wh_route_webhooks(sb_request *req, sb_response *resp)
{
	reply_log(req, resp, &attempts);
}

/* GET /_sandbox/orders/events: every event made, delivered or not */
void
sb_orders_wh_route_events(sb_request *req, sb_response *resp)
{
	reply_log(req, resp, &events);
}
