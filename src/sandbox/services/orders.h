/*-------------------------------------------------------------------------
 * orders.h
 *	  Declarations shared by the files of the partner order service of the
 *	  sandbox (docs/sandbox-orders.md): orders.c (routes, knobs), orders_validate.c
 *	  (request rules), orders_state.c (data, state machine, transactions),
 *	  orders_admin.c (sandbox-only routes), webhooks_out.c
 *	  (outgoing webhooks) and partner_misc.c (sb_service_partner_misc:
 *	  the other rate-limited partner routes, on the same data).
 *
 * Design notes:
 *
 * - All data lives in per-partner arrays indexed by sb_partner.index and
 *   is touched only with the global state lock held (handlers and timers
 *   run with it; the webhook delivery thread takes it).
 * - The data is forgotten by POST /_sandbox/reset.  Timers cannot be
 *   cancelled, so each timer carries the reset epoch and the order's
 *   transition generation it was armed for, and does nothing when either
 *   has moved on.
 * - Knob values are kept in sb_orders_knobs; durations are sandbox
 *   minutes.
 *-------------------------------------------------------------------------
 */
#ifndef SB_SERVICES_ORDERS_H
#define SB_SERVICES_ORDERS_H

#include "sandbox.h"

/* Order states (docs/sandbox-orders.md plus the sandbox's own, see docs). */
typedef enum sb_ostatus
{
	SB_OS_AWAITING_PAYMENT = 0,	/* unpaid, transaction CREATED */
	SB_OS_CREATED,
	SB_OS_PENDING,
	SB_OS_DEFERRED,
	SB_OS_ACTIVE,
	SB_OS_REFUNDED,
	SB_OS_EXPIRED,
	SB_OS_DELETED				/* payment of its transaction FAILED */
} sb_ostatus;

typedef enum sb_txstatus
{
	SB_TX_PAID_BY_PARTNER = 0,	/* order_has_been_paid: no checkout */
	SB_TX_CREATED,
	SB_TX_SUCCESS,
	SB_TX_FAILED
} sb_txstatus;

typedef struct sb_car
{
	char	   *plate;
	char	   *country;
	char	   *provider_id;	/* NULL until ACTIVE */
} sb_car;

typedef struct sb_order
{
	char		id[24];			/* unique_id: the service's order id */
	char	   *custom_id;		/* partner's id (may be NULL only via misc) */
	char	   *name;
	char	   *period;
	char		start_date[11];	/* YYYY-MM-DD */
	bool		flex;
	char	   *email;			/* from user.email, or NULL */
	char	   *subaccount;
	int64_t		created_s;		/* epoch seconds */
	int			tx;				/* index into the partner's transactions */
	sb_ostatus	status;
	unsigned	gen;			/* bumped on every status change */
	char	   *provider_id;	/* NULL until PENDING/DEFERRED */
	bool		pdf_ready;
	int			ncars;
	sb_car	   *cars;
} sb_order;

typedef struct sb_tx
{
	char		id[24];
	sb_txstatus status;
	bool		paid_by_partner;
	char	   *send_payment_link;	/* "email", "sms" or NULL */
	bool		open_details;
	json_t	   *providers;		/* allowed_payment_providers (array) */
	json_t	   *user;			/* user object or NULL */
	json_t	   *extra;			/* extra object or NULL */
	int			norders;
	int		   *orders;			/* indexes into the partner's orders */
} sb_tx;

typedef struct sb_opartner
{
	int			norders;
	int			maxorders;
	sb_order   *orders;
	int			ntx;
	int			maxtx;
	sb_tx	   *txs;
	int64_t		seq;			/* id generator */
	char	   *cb_sandbox;		/* callback URLs set by PUT, or NULL */
	char	   *cb_production;
	json_t	   *bug_reports;	/* array of {route,id,at} */
} sb_opartner;

typedef struct sb_orders_knobs
{
	double		pending_after_min;
	double		active_after_min;
	double		deferred_active_after_min;
	double		pdf_after_min;
	double		expire_after_min;	/* 0: never */
	double		auto_pay_after_min; /* 0: never */
	double		webhook_timeout_ms; /* real ms per attempt */
	double		unshown_null;	/* != 0: the order detail answers null for
								 * every member the documents do not show */
	char	   *webhook_secret;
	char	   *callback_sandbox;	/* defaults for partners without PUT */
	char	   *callback_production;
	char	   *base_url;		/* for payment_link and pdf_url */
} sb_orders_knobs;

extern sb_orders_knobs sb_orders_knobs_v;
extern sb_opartner sb_orders_data[SB_MAX_PARTNERS];
extern uint64_t sb_orders_epoch;

/* One broken validation rule: HTTP status, error code, message. */
typedef struct sb_orders_verr
{
	int			status;
	const char *code;
	char		msg[200];
} sb_orders_verr;

/* in orders_validate.c */
extern bool sb_orders_validate(json_t *body, bool create, int partner,
							   sb_orders_verr *e);

/* in orders.c */
extern const char *sb_orders_base_url(char *buf, size_t len);
extern void sb_orders_learn_port(sb_request *req);
extern json_t *sb_orders_read_body(sb_request *req, sb_response *resp);
extern void sb_orders_reply_data(sb_response *resp, int status, json_t *data);
extern bool sb_orders_bug_report(sb_request *req, sb_response *resp,
								 const char *id);

/* in orders_state.c */
extern const char *sb_orders_status_name(sb_ostatus s);
extern const char *sb_orders_tx_status_name(sb_txstatus s);
extern double sb_orders_price(const char *period);
extern sb_order *sb_orders_find(int partner, const char *id_or_custom);
extern sb_tx *sb_orders_find_tx(int partner, const char *txid);
extern sb_order *sb_orders_find_any(const char *id, int *partner);
extern sb_tx *sb_orders_find_tx_any(const char *txid, int *partner);
extern sb_tx *sb_orders_create(int partner, json_t *body);
extern json_t *sb_orders_detail_json(int partner, sb_order *o);
extern json_t *sb_orders_tx_json(int partner, sb_tx *t);
extern int	sb_orders_cancel(int partner, sb_order *o, sb_ostatus from);
extern bool sb_orders_pay(int partner, sb_tx *t);
extern bool sb_orders_fail(int partner, sb_tx *t);
extern bool sb_orders_chargeback(int partner, sb_order *o);
extern void sb_orders_reset_data(void);

/* in orders_admin.c */
extern void sb_orders_state_route_pay(sb_request *req, sb_response *resp);
extern void sb_orders_state_route_fail(sb_request *req, sb_response *resp);
extern void sb_orders_state_route_chargeback(sb_request *req, sb_response *resp);
extern void sb_orders_state_route_txs(sb_request *req, sb_response *resp);
extern void sb_orders_state_route_pdf(sb_request *req, sb_response *resp);
extern void sb_orders_state_route_checkout(sb_request *req, sb_response *resp);

/* in webhooks_out.c */
extern void sb_orders_wh_init(void);
extern void sb_orders_wh_reset(void);
extern void sb_orders_wh_order_event(int partner, sb_order *o,
									 const char *event_type);
extern void sb_orders_wh_checkout_event(int partner, sb_tx *t);
extern void sb_orders_wh_route_put_callback(sb_request *req, sb_response *resp);
extern void sb_orders_wh_route_get_callback(sb_request *req, sb_response *resp);
extern void sb_orders_wh_route_webhooks(sb_request *req, sb_response *resp);
extern void sb_orders_wh_route_events(sb_request *req, sb_response *resp);

#endif							/* SB_SERVICES_ORDERS_H */
