/*-------------------------------------------------------------------------
 *
 * http_int.h
 *		  The HTTP transport of the call module, shared by call.c,
 *		  http.c, http_attempt.c, http_wait.c, http_url.c and
 *		  http_errors.c, and by no other file.
 *
 * The public side of the module is call.h; this header holds what the
 * files of the module share among themselves: the transfer (its layout,
 * states and outcomes), the rule tables' row types, and the calls each
 * file makes into the lower ones.  Layers, lowest first: http_url.c and
 * http_errors.c; http_wait.c (the multi handle and the waits, which calls
 * back into the transfers only through the PsvcHttpDriver that http.c
 * hands it, and the descriptor an asynchronous caller waits on);
 * http_attempt.c (one attempt in libcurl); http.c (transfers);
 * call.c, the only file that reads a call's row for the transport
 * (PsvcHttpPlan).  The design of the transport (connections, progress,
 * interrupts, lifetime, retries, secrets) is described in the header of
 * http.c, attempts and retries in http_attempt.c's, the waiting in
 * http_wait.c's and the error mapping in http_errors.c's.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/http_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_HTTP_INT_H
#define PSVC_HTTP_INT_H

#include <curl/curl.h>

#include "lib/ilist.h"
#include "lib/stringinfo.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "call.h"
#include "ratelimit.h"

struct PsvcCacheProbe;			/* cache.h */
struct PsvcCachedAnswer;

/*
 * A body becomes one palloc'd string, so it must fit one allocation; the
 * bound actually applied is partner_svc.max_response_size (or a server's
 * lower max_response_size), itself at most this.
 */
#define PSVC_HTTP_MAX_BODY			((size_t) MaxAllocSize - 1)

/*
 * The longest URL we send (base URL, path and query).  libcurl refuses
 * longer ones (8 MB) with an error we could only report as internal, and
 * no partner service accepts a URL of this size anyway.
 */
#define PSVC_HTTP_MAX_URL			65536
/* The longest Link header kept (a next page's URL within PSVC_HTTP_MAX_URL). */
#define PSVC_HTTP_MAX_LINK			(PSVC_HTTP_MAX_URL + 256)

/* What the last attempt of a transfer ended with. */
typedef enum PsvcOutcome
{
	OUTCOME_HTTP,				/* an HTTP response; status says which */
	OUTCOME_CONNECT,			/* no connection could be made */
	OUTCOME_CONNECT_TIMEOUT,	/* timed out before the request was sent */
	OUTCOME_TIMEOUT,			/* timed out after the request was sent */
	OUTCOME_LOST,				/* connection broke during the exchange */
	OUTCOME_TLS,				/* TLS handshake or verification failed */
	OUTCOME_TOO_BIG,			/* response body over max_body */
	OUTCOME_NO_MEMORY,			/* could not allocate the body */
	OUTCOME_INTERRUPTED,		/* aborted for a pending interrupt */
	OUTCOME_OTHER				/* any other libcurl failure */
} PsvcOutcome;

/* A row of failure_rules[] (http_errors.c): a failure without a status. */
typedef struct PsvcFailureRule
{
	PsvcOutcome outcome;
	bool		retry_any;
	bool		retry_idempotent;
	int			sqlstate;
} PsvcFailureRule;

/* Extra hints some statuses carry. */
typedef enum PsvcHint
{
	HINT_NONE,
	HINT_API_KEY,				/* 401: set api_key on the user mapping */
	HINT_RATE_LIMIT				/* 429: the rate limit and our retries */
} PsvcHint;


/* A row of status_rules[] (http_errors.c): a range of HTTP statuses. */
typedef struct PsvcStatusRule
{
	long		lo;
	long		hi;
	int			sqlstate;
	bool		retry_any;
	bool		retry_idempotent;
	PsvcHint	hint;
} PsvcStatusRule;

typedef enum PsvcTransferState
{
	XFER_RUNNING,				/* an attempt is in the multi handle */
	XFER_BACKOFF,				/* waiting for retry_at to start again */
	XFER_DONE,					/* final outcome recorded, handle released */
	XFER_CANCELLED				/* given up by the caller or by its context */
} PsvcTransferState;

struct PsvcTransfer
{
	dlist_node	node;			/* in active_transfers (http_wait.c)
								 * while linked */
	bool		linked;
	MemoryContext cxt;
	MemoryContextCallback release_cb;
	PsvcTransferState state;

	/* the call: its row's method and route (static), its values' URL */
	const char *method;
	const char *route;
	char	   *servername;
	char	   *url;			/* base URL + path + query */
	char	   *send_url;		/* auth query: url with the key, given to
								 * libcurl only and zeroed on release; or
								 * NULL */
	struct PsvcTokenUse *oauth2;	/* auth oauth2: the token sent, or NULL */
	bool		keyed;			/* sent with an idempotency key: retried
								 * as a safe request, still a write */
	char	   *description;	/* "METHOD /path?query" */
	char	   *body;
	size_t		body_len;
	bool		idempotent;		/* the row is safe: repeating it has no
								 * effect, so it is retried after 5xx,
								 * timeouts and lost connections; false:
								 * it changes state at the service (counted
								 * by xact_writes.c, and it makes cached
								 * reads stale) */
	int			max_retries;	/* effective settings at the start: the */
	long		connect_timeout_ms; /* server's options, else the GUCs */
	long		request_timeout_ms;
	char	   *ssl_ca_file;	/* the server's TLS and proxy options, or */
	char	   *ssl_cert_file;	/* NULL (http.c, set_connection_options) */
	char	   *ssl_key_file;
	char	   *proxy;
	struct curl_slist *headers; /* malloc'd by libcurl; holds the key */

	/* the running attempt */
	CURL	   *easy;
	bool		in_multi;
	char	   *buf;			/* body received so far, in cxt */
	size_t		len;
	size_t		cap;
	size_t		max_body;		/* largest body accepted, bytes */
	const char *max_body_setting;	/* the setting that says so, for
									 * messages */
	bool		too_big;		/* set by write_cb */
	bool		no_memory;		/* set by write_cb */
	bool		interrupted;	/* set by progress_cb */
	char		errbuf[CURL_ERROR_SIZE];

	/* the last completed attempt */
	PsvcOutcome outcome;
	long		status;
	CURLcode	curl_code;
	long		attempt_ms;		/* measured; messages give the limit, which
								 * curl overruns by a few ms */

	PsvcRlLease *rl;			/* rate limiter and stats (ratelimit.c) */
	Oid			serverid;		/* whose cached reads a write makes stale */
	struct PsvcCacheProbe *cache;	/* the response cache's probe (cache.c),
									 * or NULL: not cached */
	struct PsvcCachedAnswer *stale; /* an answer past its TTL sent for again
									 * with If-None-Match, used on 304; or
									 * NULL */
	char	   *etag;			/* the answer's ETag, for the cache */
	char	   *content_type;	/* the answer's, for the cache; or NULL */

	int			inflight;		/* its entry of partner_svc.requests
								 * (inflight.h) while linked, or -1 */
	TimestampTz retry_at;		/* XFER_BACKOFF: when to start again */
	int			retries;
	int64		bytes;
	PsvcResult *resp;			/* XFER_DONE */
	bool		converted;		/* resp's body is in the server encoding */
};

/*
 * The ERROR a result that is not an HTTP status raises, rendered when the
 * transfer completes (http_errors.c), in its context.
 */
typedef struct PsvcCallError
{
	int			sqlstate;
	char	   *message;
	char	   *detail;			/* or NULL */
	char	   *hint;			/* or NULL */
	char	   *context;
} PsvcCallError;

/* ---- http.c and http_attempt.c ---- */

/*
 * What http_wait.c calls back into http.c, handed over by
 * psvc_http_ensure_multi: the wait loop sits below the transfers and
 * does not know them otherwise.
 */
typedef struct PsvcHttpDriver
{
	/*
	 * Starts one attempt of t in the multi handle; the retry loop calls it
	 * when t's backoff is over.
	 */
	void		(*start_attempt) (PsvcTransfer *t);

	/*
	 * libcurl reported an attempt of t done with code: records the
	 * outcome, and either schedules a retry or completes the transfer.
	 */
	void		(*attempt_finished) (PsvcTransfer *t, CURLcode code);
} PsvcHttpDriver;

/* in http_attempt.c: one attempt in libcurl, and the retry decision */

/* Starts one attempt of t; see PsvcHttpDriver. */
extern void psvc_http_start_attempt(PsvcTransfer *t);
/*
 * An attempt of t ended with code: records the outcome, and schedules a
 * retry (false) or leaves the transfer to complete (true).
 */
extern bool psvc_http_attempt_ended(PsvcTransfer *t, CURLcode code);
/*
 * Appends header line h to t's list; false when libcurl is out of
 * memory (try_), or raises (add_).
 */
extern bool psvc_http_try_add_header(PsvcTransfer *t, const char *h);
extern void psvc_http_add_header(PsvcTransfer *t, const char *h);
/* Copies the server's timeouts, retries, TLS and proxy options into t. */
extern void psvc_http_copy_settings(PsvcTransfer *t, const struct PsvcServer *server);
/* Sets up easy with t's timeouts, TLS and proxy options. */
extern void psvc_http_connection_options(PsvcTransfer *t, CURL *easy);

/* in http_token.c: OAuth2 client credentials */

/* The token an oauth2 transfer sent, to renew it once on a 401. */
typedef struct PsvcTokenUse
{
	struct PsvcServer *server;	/* a copy, in the transfer's context */
	char		account[65];	/* the token store's key (tokens.h) */
	uint64		gen;			/* of the token sent */
	bool		renewed;		/* a new one was fetched after a 401 */
} PsvcTokenUse;

/*
 * Adds "Authorization: Bearer <token>" for server, whose user mapping's
 * client credentials are credential (psvc_options_api_key), to t's
 * headers, fetching a token when the store has none; sets t->oauth2.
 * Allocates in CurrentMemoryContext, the transfer's.
 */
extern void psvc_http_token_add(PsvcTransfer *t, const struct PsvcServer *server,
								const char *credential);
/* The partner refused t's token (401): a new one replaces it in t's headers. */
extern void psvc_http_token_renew(PsvcTransfer *t);

/* in http.c: transfers */

/*
 * What call.c reads from a call's row for its transfer: the only reading
 * of method, route and safety for the transport.
 */
typedef struct PsvcHttpPlan
{
	const char *method;
	const char *route;
	bool		idempotent;		/* the row is safe: repeating it has no
								 * effect */
	bool		cacheable;		/* a GET whose row is safe */
} PsvcHttpPlan;

/* Starts call as plan says, in cxt (psvc_call_start). */
extern PsvcTransfer *psvc_http_start(const PsvcCall *call,
									 const PsvcHttpPlan *plan,
									 MemoryContext cxt);

/* ---- http_url.c ---- */

/*
 * Appends call's path (values checked when check, converted to UTF-8 and
 * encoded) and query string to buf.  The one builder of request paths.
 */
extern void psvc_http_append_path(StringInfo buf, const PsvcCall *call,
								  bool check);

/* ---- http_wait.c ---- */

/*
 * Makes the backend's multi handle on first use; driver (static storage)
 * is what the wait loop calls back.
 */
extern void psvc_http_ensure_multi(const PsvcHttpDriver *driver);

/* An easy handle from the pool, or a new one; raises when out of memory. */
extern CURL *psvc_http_pool_get(void);

/* Adds t's easy handle, set up, to the multi handle: the attempt runs. */
extern void psvc_http_add_handle(PsvcTransfer *t);

/*
 * Takes t's easy handle out of the multi handle and pools it.  Never
 * raises (runs from reset callbacks).
 */
extern void psvc_http_detach_handle(PsvcTransfer *t);

/* Puts t on, or takes it off, the list of active transfers.  Never raise. */
extern void psvc_http_link(PsvcTransfer *t);
extern void psvc_http_unlink(PsvcTransfer *t);

/* Gives t's handle back and starts it again after delay_ms. */
extern void psvc_http_schedule_retry(PsvcTransfer *t, long delay_ms);

/*
 * The progress callback aborted an attempt for a pending interrupt: the
 * next pump runs CHECK_FOR_INTERRUPTS.
 */
extern void psvc_http_note_interrupt(void);

/* Lets every transfer progress without blocking. */
extern void psvc_http_pump(void);

/* Sleeps until something is due; runs CHECK_FOR_INTERRUPTS. */
extern void psvc_http_wait(void);
/* runs a transfer of its own (the token grant) to its end, waiting as all do */
extern CURLcode psvc_http_run_alone(CURL *easy);

/* ---- http_errors.c ---- */

/* The rows of the rule tables that apply; elog for a missing row. */
extern const PsvcStatusRule *psvc_http_status_rule(long status);
extern const PsvcFailureRule *psvc_http_failure_rule(PsvcOutcome outcome);

/*
 * Raises the error of an HTTP status answered to method route on server
 * after retries: by status_rules[], with the service's error (body) in
 * the detail (psvc_call_raise).
 */
pg_noreturn extern void psvc_http_report_status(const char *method, const char *route,
									const struct PsvcServer *server,
									long status, const char *body,
									size_t len, int retries);

/*
 * The ERROR of t's last attempt, which ended without an HTTP status, for
 * psvc_call_raise.  Allocates in CurrentMemoryContext.
 */
extern PsvcCallError *psvc_http_failure_error(PsvcTransfer *t);

/*
 * One sentence on a failure without an HTTP status (PsvcResult.message):
 * what happened and, when the request may have been carried out, that its
 * outcome is unknown.  Allocates in CurrentMemoryContext.
 */
extern char *psvc_http_failure_text(PsvcTransfer *t);

#endif							/* PSVC_HTTP_INT_H */
