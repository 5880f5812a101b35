/*-------------------------------------------------------------------------
 * sandbox.h
 *	  Shared declarations of partner_svc_sandbox, the program that fakes
 *	  every service of the three partner documents on one loopback port.
 *
 * Design notes for newcomers:
 *
 * - libmicrohttpd runs one thread per connection.  The core (core/) parses
 *   the request, matches it against the route tables of the services
 *   (services/<name>.c, each exports one sb_service), checks auth, applies the
 *   rate limits and the fault knobs, and calls the route's handler with
 *   the global state lock held.  Handlers therefore never lock anything
 *   themselves and must not block; background threads (timers, webhook
 *   delivery) take the lock with sb_lock()/sb_unlock().
 * - Time is scaled: every documented duration is given in "sandbox
 *   milliseconds" and converted with sb_scaled_ms(), so tests can run a
 *   one-minute window in 60 ms (--time-scale 0.001).
 * - Everything random is derived from --seed: catalogue content through
 *   sb_hash(), decisions (faults, short pages) through sb_rand01().
 * - A service's route table is data: method, path template, auth, rate
 *   limit row, error style, handler.  Adding an endpoint is adding a row.
 * - Strings in sb_request are owned by the core and live until the
 *   response is queued; a handler's reply body is malloc'd and handed to
 *   the core with the sb_reply_* helpers.
 *-------------------------------------------------------------------------
 */
#ifndef PARTNER_SVC_SANDBOX_H
#define PARTNER_SVC_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define SB_MAX_PARTNERS 32
#define SB_MAX_PATH_PARAMS 4
#define SB_MAX_QUERY 32
#define SB_MAX_HEADERS 8

typedef enum sb_tier
{
	SB_TIER_STANDARD = 0,
	SB_TIER_PREMIUM = 1,
	SB_TIER_ENTERPRISE = 2
} sb_tier;

/* One configured API key; each key is its own partner with its own data. */
typedef struct sb_partner
{
	int			index;			/* 0 .. sb_npartners-1, stable */
	char	   *key;
	sb_tier		tier;
} sb_partner;

/* How errors produced by the core (401, 400, 429, injected 5xx) look. */
typedef enum sb_style
{
	SB_STYLE_PLAIN = 0,			/* {"error":{"code":..,"message":..}} */
	SB_STYLE_ORDERS,			/* {"error":{"code":..,"message":..},"data":null} */
	SB_STYLE_PROBLEM			/* application/problem+json: type,title,status,instance */
} sb_style;

typedef struct sb_request sb_request;
typedef struct sb_response sb_response;

typedef void (*sb_handler) (sb_request *req, sb_response *resp);

#define SB_AUTH		0x01		/* Bearer key required */
#define SB_ADMIN	0x02		/* sandbox-only control route (/_sandbox/...) */
#define SB_AUTH_OAUTH2 0x04		/* Bearer access token of POST /oauth/token
								 * required (core/oauth.c) */
#define SB_AUTH_QUERY 0x08		/* API key in the query parameter api_key
								 * required (its value is masked in the log) */

typedef struct sb_route
{
	const char *method;			/* "GET", "POST", "PUT", "DELETE" */
	const char *path;			/* template, e.g. "/public/orders/{id}" */
	int			flags;			/* SB_AUTH, SB_ADMIN */
	sb_style	style;
	const char *rl_row;			/* row of the rate-limit table, or NULL */
	sb_handler	handler;
} sb_route;

/* A service family: its routes and its lifecycle hooks (all optional). */
typedef struct sb_service
{
	const char *name;
	const sb_route *routes;		/* terminated by a row with method NULL */
	void		(*init) (void);	/* after options are parsed, before serving */
	void		(*reset) (void);	/* POST /_sandbox/reset: forget all data */
	/*
	 * A runtime knob "name" set by --set name=value or POST /_sandbox/config
	 * (value is JSON).  Returns 1 if taken, 0 if not this service's knob,
	 * -1 if the value is invalid.  Called with the state lock held.
	 */
	int			(*set) (const char *name, json_t *value);
	/* Adds this service's knobs to GET /_sandbox/config (lock held). */
	void		(*get) (json_t *out);
} sb_service;

typedef struct sb_kv
{
	char	   *key;
	char	   *value;
} sb_kv;

struct sb_request
{
	const char *method;
	const char *path;			/* decoded path, without query string */
	const char *raw_query;		/* query string as sent (may be "") */
	const sb_route *route;
	int			nparams;
	sb_kv		params[SB_MAX_PATH_PARAMS]; /* decoded path parameters */
	int			nquery;
	sb_kv		query[SB_MAX_QUERY];	/* decoded, in order, repeats kept */
	const char *content_type;	/* may be NULL */
	const char *body;			/* NUL-terminated, may be "" */
	size_t		body_len;
	sb_partner *partner;		/* from the Bearer key; NULL if absent */
	void	   *conn;			/* struct MHD_Connection * */
};

struct sb_response
{
	int			status;
	char	   *body;			/* malloc'd; core frees */
	size_t		len;
	const char *content_type;
	int			nheaders;
	sb_kv		headers[SB_MAX_HEADERS];	/* malloc'd strings */
	bool		applied;		/* handler changed state (for drop_after_apply) */
};

/* ---- core/state.c: lock, time, randomness, options ---- */

typedef struct sb_config
{
	int			port;
	uint64_t	seed;
	double		time_scale;		/* real ms per sandbox ms */
	double		short_page_rate;	/* chance a page is short while has_more */
	int			page_cache_mb;	/* bound of sb_page_pure's cache; 0 = off */
	int64_t		rl_window_ms;	/* sandbox ms; default 60000 */
	int64_t		rl_offset_ms;	/* alignment of windows; default from seed */
	bool		rl_enabled;
	bool		rl_retry_after; /* send Retry-After with 429 */
	const char *environment;	/* "sandbox" or "production" */
	bool		verbose;
} sb_config;

extern sb_config sb_cfg;
extern sb_partner sb_partners[SB_MAX_PARTNERS];
extern int	sb_npartners;

extern void sb_lock(void);
extern void sb_unlock(void);

extern int64_t sb_now_ms(void);		/* monotonic real ms */
extern int64_t sb_wall_ms(void);	/* epoch ms, real */
extern int64_t sb_scaled_ms(double sandbox_ms);	/* sandbox ms -> real ms */
extern int64_t sb_sandbox_now_ms(void);	/* monotonic sandbox ms */
/* POST /_sandbox/clock: move sandbox time forward, stop or restart it */
extern void sb_clock_advance(int64_t sandbox_ms);
extern void sb_clock_freeze(bool freeze);
extern bool sb_clock_frozen(void);
extern int64_t sb_clock_advanced_ms(void);
extern void sb_iso8601(int64_t epoch_ms, char *buf, size_t len);

extern uint64_t sb_hash(uint64_t a, uint64_t b);	/* seeded, pure */
extern uint64_t sb_hash_str(const char *s, uint64_t b);
extern double sb_rand01(void);	/* seeded stream, thread-safe */

extern sb_partner *sb_partner_by_key(const char *key);
extern const char *sb_tier_name(sb_tier t);

/* ---- core/reply.c: building responses ---- */

/* Body is the serialized object; steals the reference to obj. */
extern void sb_reply_json(sb_response *resp, int status, json_t *obj);
/* Error in the route's style; message is printf-like. */
extern void sb_reply_error(sb_request *req, sb_response *resp, int status,
						   const char *code, const char *fmt,...)
			__attribute__((format(printf, 5, 6)));
extern void sb_reply_empty(sb_response *resp, int status);
extern void sb_reply_raw(sb_response *resp, int status, const char *ctype,
						 const char *body, size_t len);
extern void sb_add_header(sb_response *resp, const char *name, const char *value);

/* ---- core/request.c: reading requests ---- */

extern const char *sb_param(sb_request *req, const char *name);	/* path */
extern const char *sb_query(sb_request *req, const char *name);	/* first */
/* A request header (case-insensitive name), or NULL; lives like req. */
extern const char *sb_header(sb_request *req, const char *name);
/*
 * 400 (in the route's style) on a query parameter not in allowed (NULL-
 * terminated) or sent more than once.  Returns false after replying.
 */
extern bool sb_query_check(sb_request *req, sb_response *resp,
						   const char *const *allowed);
/*
 * Parses the body as JSON; requires Content-Type application/json when
 * require_ctype.  Returns NULL after replying 400 on failure (a wrong Content-Type is a 400 too: the order
 * document answers every invalid payload with 400 and an error type).
 */
extern json_t *sb_json_body(sb_request *req, sb_response *resp, bool require_ctype);
/*
 * The value of field name of an application/x-www-form-urlencoded body,
 * percent-decoded ('+' a space), or NULL when absent; malloc'd.
 */
extern char *sb_form_value(sb_request *req, const char *name);
/* Parses a decimal int64; false if not entirely a number. */
extern bool sb_parse_int64(const char *s, int64_t *out);

/* ---- core/paging.c: cursor pagination over a virtual list ---- */

/*
 * Produces item i (0-based) of the list; returns a new reference.
 */
typedef json_t *(*sb_item_fn) (int64_t i, void *arg);

/*
 * Replies with one page of a list of total items: reads and checks
 * "limit" (1..100, default 20) and "cursor" from the query (the caller
 * has already run sb_query_check), binds the cursor to bind (endpoint
 * path + filters + sort, built by the caller), rejects invalid, expired
 * or mismatched cursors with 400, may serve short pages while has_more
 * (short_page_rate), and answers {"data":[...],"pagination":{"limit",
 * "has_more","next_cursor"}} plus any members of extra (stolen, may be
 * NULL) at the top level.
 */
extern void sb_page(sb_request *req, sb_response *resp, const char *bind,
					int64_t total, sb_item_fn item, void *arg, json_t *extra);

/*
 * sb_page for a list whose item i is a pure function of (bind, i) for the
 * life of the process (generated from the seed, never changed by a
 * request): the page's serialised items may be served from a bounded
 * cache (knob page_cache_mb); the bytes are those sb_page would send.
 */
extern void sb_page_pure(sb_request *req, sb_response *resp, const char *bind,
						 int64_t total, sb_item_fn item, void *arg);
/*
 * One page of a nested list (a list inside a detail object): reads limit
 * and cursor like sb_page, binds the cursor to bind, and returns the
 * object {"data":[...],"pagination":{...}} for the caller to place in its
 * detail; the second page of every walk is short (half the limit) while
 * more items follow.  Returns NULL after replying 400.
 */
extern json_t *sb_page_nested(sb_request *req, sb_response *resp, const char *bind,
							  int64_t total, sb_item_fn item, void *arg);
/*
 * The window of one page of a cursor walk whose cursor is the query
 * parameter cursor_param (limit from "limit", 1..100, default 20), with the
 * nested lists' rule of a short second page: sets *offset, *count, *limit,
 * and *next (a malloc'd cursor bound to bind, or NULL on the last page).
 * The caller shapes the answer (a cursor in the body, a next URL, a Link
 * header).  Returns false after replying 400 (bad limit or cursor).
 */
extern bool sb_page_slice(sb_request *req, sb_response *resp, const char *bind,
						  int64_t total, const char *cursor_param, int64_t *offset,
						  int64_t *count, int64_t *limit, char **next);
/* Empties that cache (any config change, reset). */
extern void sb_page_cache_clear(void);
/* {"pages","bytes","hits","misses"} of that cache since it was emptied. */
extern json_t *sb_page_cache_json(void);

/* ---- core/timers.c: delayed work on sandbox time ---- */

typedef void (*sb_timer_fn) (void *arg);
/* Runs fn(arg) with the state lock held after delay sandbox ms. */
extern void sb_timer_add(double delay_sandbox_ms, sb_timer_fn fn, void *arg);

/* ---- core/log.c ---- */
extern void sb_log(const char *fmt,...) __attribute__((format(printf, 1, 2)));

#define SB_MINUTE 60000.0		/* sandbox ms in a minute */

#endif							/* PARTNER_SVC_SANDBOX_H */
