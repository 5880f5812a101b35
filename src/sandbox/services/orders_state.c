/*-------------------------------------------------------------------------
 * orders_state.c
 *	  Data and state machine of the sandbox's partner order service:
 *	  orders, transactions, the timers that move an order along, payment
 *	  by the service, cancel, chargeback, and the JSON views of orders and
 *	  transactions.  The admin routes are in orders_admin.c.
 *
 * Design notes:
 *
 * - Each vignette of a create request becomes one order; all orders of
 *   one request share one transaction.  A paid request starts its orders
 *   at CREATED; an unpaid one parks them at AWAITING_PAYMENT until the
 *   transaction is paid (then they start at CREATED) or fails (DELETED).
 * - The paid path is driven by timers (sandbox minutes, knobs):
 *   CREATED -(pending_after)-> PENDING if start_date <= today (UTC), else
 *   DEFERRED; PENDING -(active_after)-> ACTIVE; DEFERRED
 *   -(deferred_active_after)-> ACTIVE; ACTIVE -(pdf_after)-> confirmation
 *   (status unchanged); ACTIVE -(expire_after, if > 0)-> EXPIRED.
 * - Timers cannot be cancelled: each carries the reset epoch and the
 *   order's generation (bumped on every status change) and is a no-op
 *   when the order has moved on, e.g. after a cancel.  The core drops
 *   pending timers on reset without freeing their arguments; we do not
 *   free them in our reset either, because a timer the timer thread has
 *   already taken may still run after the reset and would then read freed
 *   memory.  A reset therefore leaks a few bytes per pending timer.
 * - Orders and transactions are referred to by index from timers (the
 *   arrays may be reallocated); pointers are only held within one call
 *   under the lock.
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "services/orders.h"

sb_opartner sb_orders_data[SB_MAX_PARTNERS];
uint64_t	sb_orders_epoch = 1;

static const char *const status_names[] = {
	"AWAITING_PAYMENT", "CREATED", "PENDING", "DEFERRED", "ACTIVE",
	"REFUNDED", "EXPIRED", "DELETED"
};

static const char *const tx_status_names[] = {
	NULL, "CREATED", "SUCCESS", "FAILED"
};

const char *
sb_orders_status_name(sb_ostatus s)
{
	return status_names[s];
}

const char *
sb_orders_tx_status_name(sb_txstatus s)
{
	return tx_status_names[s];
}

/* Looks an order up by service id first, then by partner custom_id. */
sb_order *
sb_orders_find(int partner, const char *id)
{
	sb_opartner *p = &sb_orders_data[partner];

	if (!id)
		return NULL;
	for (int i = 0; i < p->norders; i++)
		if (strcmp(p->orders[i].id, id) == 0)
			return &p->orders[i];
	for (int i = 0; i < p->norders; i++)
		if (p->orders[i].custom_id && strcmp(p->orders[i].custom_id, id) == 0)
			return &p->orders[i];
	return NULL;
}

sb_tx *
sb_orders_find_tx(int partner, const char *txid)
{
	sb_opartner *p = &sb_orders_data[partner];

	for (int i = 0; txid && i < p->ntx; i++)
		if (strcmp(p->txs[i].id, txid) == 0)
			return &p->txs[i];
	return NULL;
}

/* By service id in any partner's data (for unauthenticated links). */
sb_order *
sb_orders_find_any(const char *id, int *partner)
{
	for (int k = 0; k < SB_MAX_PARTNERS; k++)
		for (int i = 0; i < sb_orders_data[k].norders; i++)
			if (strcmp(sb_orders_data[k].orders[i].id, id) == 0)
			{
				*partner = k;
				return &sb_orders_data[k].orders[i];
			}
	return NULL;
}

sb_tx *
sb_orders_find_tx_any(const char *txid, int *partner)
{
	for (int k = 0; k < SB_MAX_PARTNERS; k++)
	{
		sb_tx	   *t = sb_orders_find_tx(k, txid);

		if (t)
		{
			*partner = k;
			return t;
		}
	}
	return NULL;
}

/* Deterministic id: prefix plus 12 hex digits from the seeded hash. */
static void
make_id(char *buf, size_t len, const char *prefix, int partner, int64_t seq,
		bool upper)
{
	uint64_t	h = sb_hash(((uint64_t) partner << 40) ^ (uint64_t) seq,
							sb_hash_str(prefix, 0x6f72));

	snprintf(buf, len, upper ? "%s%012llX" : "%s%012llx", prefix,
			 (unsigned long long) (h & 0xffffffffffffULL));
}

static char *
xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* ---- timers ---- */

typedef enum tact
{
	T_ADVANCE,					/* CREATED -> PENDING / DEFERRED */
	T_ACTIVATE,					/* PENDING / DEFERRED -> ACTIVE */
	T_PDF,						/* ACTIVE: confirmation arrives */
	T_EXPIRE,					/* ACTIVE -> EXPIRED */
	T_AUTOPAY					/* transaction CREATED -> SUCCESS */
} tact;

typedef struct otimer
{
	int			partner;
	int			idx;			/* order, or transaction for T_AUTOPAY */
	unsigned	gen;
	uint64_t	epoch;
	tact		action;
} otimer;

static void timer_fire(void *arg);

static void
arm(int partner, int idx, tact action, double minutes)
{
	otimer	   *t = malloc(sizeof(otimer));

	t->partner = partner;
	t->idx = idx;
	t->gen = action == T_AUTOPAY ? 0 : sb_orders_data[partner].orders[idx].gen;
	t->epoch = sb_orders_epoch;
	t->action = action;
	sb_timer_add(minutes * SB_MINUTE, timer_fire, t);
}

/* Moves an order to a new status; sends ORDER_STATUS_CHANGED if asked. */
static void
set_status(int partner, sb_order *o, sb_ostatus s, bool webhook)
{
	o->status = s;
	o->gen++;
	if (webhook)
		sb_orders_wh_order_event(partner, o, "ORDER_STATUS_CHANGED");
}

static void
today_utc(char *buf, size_t len)
{
	time_t		t = (time_t) (sb_wall_ms() / 1000);
	struct tm	tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d", &tm);
}

/* The order is accepted as paid: CREATED now, the rest by timers. */
static void
start_paid(int partner, int idx)
{
	sb_order   *o = &sb_orders_data[partner].orders[idx];

	set_status(partner, o, SB_OS_CREATED, true);
	arm(partner, idx, T_ADVANCE, sb_orders_knobs_v.pending_after_min);
}

static void
timer_fire(void *arg)
{
	otimer	   *t = arg;
	sb_opartner *p = &sb_orders_data[t->partner];
	sb_order   *o;
	char		today[16];
	int			idx = t->idx;
	int			partner = t->partner;

	if (t->epoch != sb_orders_epoch)
		goto done;
	if (t->action == T_AUTOPAY)
	{
		if (idx < p->ntx && p->txs[idx].status == SB_TX_CREATED)
			sb_orders_pay(partner, &p->txs[idx]);
		goto done;
	}
	if (idx >= p->norders)
		goto done;
	o = &p->orders[idx];
	if (o->gen != t->gen)
		goto done;

	switch (t->action)
	{
		case T_ADVANCE:
			if (o->status != SB_OS_CREATED)
				break;
			today_utc(today, sizeof(today));
			if (!o->provider_id)
			{
				char		pid[32];

				make_id(pid, sizeof(pid), "PRV-", partner, idx, true);
				o->provider_id = strdup(pid);
			}
			if (strcmp(o->start_date, today) <= 0)
			{
				set_status(partner, o, SB_OS_PENDING, true);
				arm(partner, idx, T_ACTIVATE, sb_orders_knobs_v.active_after_min);
			}
			else
			{
				set_status(partner, o, SB_OS_DEFERRED, true);
				arm(partner, idx, T_ACTIVATE,
					sb_orders_knobs_v.deferred_active_after_min);
			}
			break;
		case T_ACTIVATE:
			if (o->status != SB_OS_PENDING && o->status != SB_OS_DEFERRED)
				break;
			for (int c = 0; c < o->ncars; c++)
			{
				char		cid[32];

				make_id(cid, sizeof(cid), "CAR-", partner,
						((int64_t) idx << 8) + c, true);
				free(o->cars[c].provider_id);
				o->cars[c].provider_id = strdup(cid);
			}
			set_status(partner, o, SB_OS_ACTIVE, true);
			arm(partner, idx, T_PDF, sb_orders_knobs_v.pdf_after_min);
			break;
		case T_PDF:
			if (o->status != SB_OS_ACTIVE || o->pdf_ready)
				break;
			o->pdf_ready = true;
			sb_orders_wh_order_event(partner, o, "ORDER_CONFIRMATION_RECEIVED");
			/* expiry is counted from the confirmation, keeping it last */
			if (sb_orders_knobs_v.expire_after_min > 0)
				arm(partner, idx, T_EXPIRE, sb_orders_knobs_v.expire_after_min);
			break;
		case T_EXPIRE:
			if (o->status == SB_OS_ACTIVE)
				set_status(partner, o, SB_OS_EXPIRED, false);
			break;
		case T_AUTOPAY:
			break;
	}
done:
	free(t);
}

/* ---- creation ---- */

static int
add_order(sb_opartner *p)
{
	if (p->norders == p->maxorders)
	{
		p->maxorders = p->maxorders ? p->maxorders * 2 : 16;
		p->orders = realloc(p->orders, sizeof(sb_order) * p->maxorders);
	}
	memset(&p->orders[p->norders], 0, sizeof(sb_order));
	return p->norders++;
}

static int
add_tx(sb_opartner *p)
{
	if (p->ntx == p->maxtx)
	{
		p->maxtx = p->maxtx ? p->maxtx * 2 : 16;
		p->txs = realloc(p->txs, sizeof(sb_tx) * p->maxtx);
	}
	memset(&p->txs[p->ntx], 0, sizeof(sb_tx));
	return p->ntx++;
}

/*
 * Stores a validated create request: one transaction, one order per
 * vignette (cars = the request's vehicles), and starts the paid path or
 * the checkout.  Returns the transaction.
 */
sb_tx *
sb_orders_create(int partner, json_t *body)
{
	sb_opartner *p = &sb_orders_data[partner];
	bool		paid = json_is_true(json_object_get(body, "order_has_been_paid"));
	json_t	   *vehicles = json_object_get(body, "vehicles");
	json_t	   *vignettes = json_object_get(body, "vignettes");
	json_t	   *user = json_object_get(body, "user");
	json_t	   *prov = json_object_get(body, "allowed_payment_providers");
	int			ti = add_tx(p);
	sb_tx	   *t = &p->txs[ti];
	size_t		i;
	json_t	   *v;

	make_id(t->id, sizeof(t->id), "txn_", partner, ++p->seq, false);
	t->paid_by_partner = paid;
	t->status = paid ? SB_TX_PAID_BY_PARTNER : SB_TX_CREATED;
	t->send_payment_link = xstrdup(json_string_value(json_object_get(body, "send_payment_link")));
	t->open_details = json_is_true(json_object_get(body, "open_order_details_by_default"));
	if (!paid)
		t->providers = prov ? json_deep_copy(prov)
			: json_pack("[s,s]", "provider_a", "provider_b");
	t->user = user ? json_deep_copy(user) : NULL;
	t->extra = json_object_get(body, "extra") ?
		json_deep_copy(json_object_get(body, "extra")) : NULL;
	t->norders = (int) json_array_size(vignettes);
	t->orders = calloc(t->norders, sizeof(int));

	json_array_foreach(vignettes, i, v)
	{
		int			oi = add_order(p);
		sb_order   *o = &p->orders[oi];
		size_t		c;
		json_t	   *veh;

		make_id(o->id, sizeof(o->id), "ord_", partner, ++p->seq, false);
		o->custom_id = xstrdup(json_string_value(json_object_get(v, "custom_id")));
		o->name = strdup(json_string_value(json_object_get(v, "name")));
		o->period = strdup(json_string_value(json_object_get(v, "period")));
		snprintf(o->start_date, sizeof(o->start_date), "%s",
				 json_string_value(json_object_get(v, "start_date")));
		o->flex = json_is_true(json_object_get(v, "flex"));
		o->email = xstrdup(json_string_value(json_object_get(user, "email")));
		o->subaccount = xstrdup(json_string_value(json_object_get(body, "subaccount")));
		o->created_s = sb_wall_ms() / 1000;
		o->tx = ti;
		o->status = SB_OS_AWAITING_PAYMENT;
		o->ncars = (int) json_array_size(vehicles);
		o->cars = calloc(o->ncars, sizeof(sb_car));
		json_array_foreach(vehicles, c, veh)
		{
			char	   *plate = strdup(json_string_value(json_object_get(veh, "plate")));

			for (char *s = plate; *s; s++)
				if (*s >= 'a' && *s <= 'z')
					*s -= 'a' - 'A';
			o->cars[c].plate = plate;
			o->cars[c].country = strdup(json_string_value(json_object_get(veh, "country")));
		}
		t->orders[i] = oi;
	}

	if (paid)
	{
		for (int k = 0; k < t->norders; k++)
			start_paid(partner, t->orders[k]);
	}
	else
	{
		sb_orders_wh_checkout_event(partner, t);
		if (sb_orders_knobs_v.auto_pay_after_min > 0)
			arm(partner, ti, T_AUTOPAY, sb_orders_knobs_v.auto_pay_after_min);
	}
	return t;
}

/* ---- payment, cancel, chargeback ---- */

/* Transaction CREATED -> SUCCESS; its orders start the paid path. */
bool
sb_orders_pay(int partner, sb_tx *t)
{
	if (t->status != SB_TX_CREATED)
		return false;
	t->status = SB_TX_SUCCESS;
	sb_orders_wh_checkout_event(partner, t);
	for (int k = 0; k < t->norders; k++)
		start_paid(partner, t->orders[k]);
	return true;
}

/* Transaction CREATED -> FAILED; its orders become DELETED (no webhook). */
bool
sb_orders_fail(int partner, sb_tx *t)
{
	if (t->status != SB_TX_CREATED)
		return false;
	t->status = SB_TX_FAILED;
	sb_orders_wh_checkout_event(partner, t);
	for (int k = 0; k < t->norders; k++)
		set_status(partner, &sb_orders_data[partner].orders[t->orders[k]],
				   SB_OS_DELETED, false);
	return true;
}

/* The caller has checked o->status == from. */
int
sb_orders_cancel(int partner, sb_order *o, sb_ostatus from)
{
	set_status(partner, o, SB_OS_REFUNDED, true);
	return 0;
}

/* Chargeback: any paid, not yet refunded order becomes REFUNDED. */
bool
sb_orders_chargeback(int partner, sb_order *o)
{
	if (o->status == SB_OS_AWAITING_PAYMENT || o->status == SB_OS_REFUNDED ||
		o->status == SB_OS_DELETED)
		return false;
	set_status(partner, o, SB_OS_REFUNDED, true);
	return true;
}

/* ---- JSON views ---- */

/* Price in EUR of a vignette period (sandbox price list, see docs). */
double
sb_orders_price(const char *period)
{
	if (strcmp(period, "1_day") == 0)
		return 8.0;
	if (strcmp(period, "10_days") == 0)
		return 15.0;
	if (strcmp(period, "1_month") == 0)
		return 30.0;
	return 95.0;
}

static json_t *
payment_link(sb_tx *t)
{
	char		base[256];
	char		url[400];

	if (t->status != SB_TX_CREATED)
		return json_null();
	snprintf(url, sizeof(url), "%s/_sandbox/orders/checkout/%s",
			 sb_orders_base_url(base, sizeof(base)), t->id);
	return json_string(url);
}

/* The order detail object (data of GET /public/orders/{id}). */
json_t *
sb_orders_detail_json(int partner, sb_order *o)
{
	sb_tx	   *t = &sb_orders_data[partner].txs[o->tx];
	json_t	   *cars = json_array();
	json_t	   *d;
	char		base[256];
	char		until[32];
	double		price = sb_orders_price(o->period);

	sb_orders_base_url(base, sizeof(base));
	for (int c = 0; c < o->ncars; c++)
	{
		char		pdf[400];

		snprintf(pdf, sizeof(pdf), "%s/_sandbox/orders/pdf/%s?car=%d", base, o->id, c);
		json_array_append_new(cars,
							  json_pack("{s:s, s:s, s:s?, s:s?}",
										"plate", o->cars[c].plate,
										"country", o->cars[c].country,
										"provider_id", o->cars[c].provider_id,
										"pdf", o->pdf_ready ? pdf : NULL));
	}
	d = json_pack("{s:s, s:s?, s:s?, s:I, s:s?, s:s, s:s, s:s, s:s, s:s, s:s?, s:o, s:o, s:{s:f, s:s}}",
				  "id", o->id,
				  "custom_id", o->custom_id,
				  "email", o->email,
				  "created_date", (json_int_t) o->created_s,
				  "provider_id", o->provider_id,
				  "status", sb_orders_status_name(o->status),
				  "name", o->name,
				  "period", o->period,
				  "start_date", o->start_date,
				  "transaction_id", t->id,
				  "subaccount", o->subaccount,
				  "payment_link", payment_link(t),
				  "cars", cars,
				  "price", "amount", price, "currency", "EUR");
	if (sb_orders_knobs_v.unshown_null != 0)
	{
		/*
		 * A service that fills only what the order document shows (id,
		 * custom_id, email, created_date, provider_id, status, cars): every
		 * other member is null, so that a client can be checked to rely on
		 * the documented ones only.
		 */
		static const char *const unshown[] = {"name", "period", "start_date",
			"transaction_id", "subaccount", "payment_link", "price", NULL};

		for (const char *const *m = unshown; *m; m++)
			json_object_set_new(d, *m, json_null());
	}
	if (!o->flex)
	{
		json_object_set_new(d, "flex", json_null());
		return d;
	}
	snprintf(until, sizeof(until), "%sT00:00:00Z", o->start_date);
	json_object_set_new(d, "flex", json_pack("{s:b}", "enabled", 1));
	json_object_set_new(d, "modify",
						json_pack("{s:b, s:s}", "allowed",
								  o->status == SB_OS_AWAITING_PAYMENT ||
								  o->status == SB_OS_CREATED ||
								  o->status == SB_OS_DEFERRED,
								  "until", until));
	json_object_set_new(d, "full_refund",
						json_pack("{s:b, s:s, s:f}", "allowed",
								  o->status == SB_OS_CREATED ||
								  o->status == SB_OS_PENDING ||
								  o->status == SB_OS_DEFERRED,
								  "until", until, "amount", price));
	json_object_set_new(d, "partial_refund",
						json_pack("{s:b, s:n, s:f}", "allowed",
								  o->status == SB_OS_ACTIVE,
								  "until", "amount", price / 2));
	return d;
}

/* The transaction object (data of POST /public/orders and admin views). */
json_t *
sb_orders_tx_json(int partner, sb_tx *t)
{
	json_t	   *orders = json_array();
	sb_opartner *p = &sb_orders_data[partner];

	for (int k = 0; k < t->norders; k++)
	{
		sb_order   *o = &p->orders[t->orders[k]];

		json_array_append_new(orders,
							  json_pack("{s:s, s:s?, s:s, s:s}",
										"id", o->id, "custom_id", o->custom_id,
										"name", o->name,
										"status", sb_orders_status_name(o->status)));
	}
	return json_pack("{s:s, s:b, s:s?, s:o, s:s?, s:O?, s:b, s:o}",
					 "transaction_id", t->id,
					 "order_has_been_paid", t->paid_by_partner,
					 "checkout_status", sb_orders_tx_status_name(t->status),
					 "payment_link", payment_link(t),
					 "send_payment_link", t->send_payment_link,
					 "allowed_payment_providers", t->providers,
					 "open_order_details_by_default", t->open_details,
					 "orders", orders);
}

/* ---- reset ---- */

void
sb_orders_reset_data(void)
{
	for (int k = 0; k < SB_MAX_PARTNERS; k++)
	{
		sb_opartner *p = &sb_orders_data[k];

		for (int i = 0; i < p->norders; i++)
		{
			sb_order   *o = &p->orders[i];

			free(o->custom_id);
			free(o->name);
			free(o->period);
			free(o->email);
			free(o->subaccount);
			free(o->provider_id);
			for (int c = 0; c < o->ncars; c++)
			{
				free(o->cars[c].plate);
				free(o->cars[c].country);
				free(o->cars[c].provider_id);
			}
			free(o->cars);
		}
		for (int i = 0; i < p->ntx; i++)
		{
			free(p->txs[i].send_payment_link);
			json_decref(p->txs[i].providers);
			json_decref(p->txs[i].user);
			json_decref(p->txs[i].extra);
			free(p->txs[i].orders);
		}
		free(p->orders);
		free(p->txs);
		free(p->cb_sandbox);
		free(p->cb_production);
		json_decref(p->bug_reports);
		memset(p, 0, sizeof(*p));
	}
	sb_orders_epoch++;
}
