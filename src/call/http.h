/*-------------------------------------------------------------------------
 *
 * http.h
 *		  The HTTP client of partner_svc: one request to a partner service,
 *		  from its path template to its decoded status and body.
 *
 * The module is http.c (transfers, attempts, retries), http_wait.c (the
 * backend's libcurl multi handle, its sockets and the waits), http_url.c
 * (the one builder of request paths) and http_errors.c (HTTP statuses and
 * failures into SQLSTATEs); their shared internals are in http_int.h.
 * Below it are the rate limiter (ratelimit.h), the options (options.h)
 * and the settings (guc.h); above it the FDW and the SQL functions.
 *
 * Memory: a transfer, its buffers and its response live in the memory
 * context given to psvc_http_start (a reset callback releases the curl
 * handle when that context goes); psvc_http_request allocates in
 * CurrentMemoryContext.  A PsvcKV and the lists of a request are the
 * caller's, in any context that outlives the call.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/http.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_HTTP_H
#define PSVC_HTTP_H

#include "nodes/pg_list.h"
#include "utils/palloc.h"

struct PsvcServer;
struct PsvcOperation;			/* catalog.h */

/*
 * A name/value pair: a path parameter, a query parameter, a header.
 * Both strings are plain (not URL-encoded); http.c encodes them.
 */
typedef struct PsvcKV
{
	const char *name;
	const char *value;
} PsvcKV;

/* A PsvcKV of the two strings (not copied), in CurrentMemoryContext. */
extern PsvcKV *psvc_kv(const char *name, const char *value);

/* in http.c: the HTTP client core */

/*
 * One request.  "route" is the path template ("/v1/movies/{movie}/content/
 * themes"): it names the request in errors, EXPLAIN and stats, and never
 * contains a value.  The path is built by http.c from route and
 * path_params (each value URL-encoded); query parameters are appended in
 * order, URL-encoded.  The key comes from the current user's mapping of
 * serverid; requests of a service without auth (todos) send none.
 */
typedef struct PsvcHttpRequest
{
	const struct PsvcOperation *op; /* the catalogue's row: method, route,
									 * path parameters' rules, rate limit */
	const struct PsvcServer *server;
	const char *method;			/* "GET", "POST", "PUT", "DELETE" */
	const char *route;			/* path template, starting with '/' */
	List	   *path_params;	/* of PsvcKV *, one per {name} of route */
	List	   *query;			/* of PsvcKV *, in order */
	const char *body;			/* NULL: no body */
	size_t		body_len;
	const char *content_type;	/* of the body, e.g. "application/json" */
	bool		retry_unsafe;	/* retry a non-GET on 5xx/network errors too */
	bool		unsafe;			/* a GET or HEAD that changes state (the
								 * scheduler's run, stop, clone...): retried
								 * only where nothing was done (429, no
								 * connection), like a POST; retry_unsafe
								 * overrides it */
	bool		return_errors;	/* give back 4xx/5xx responses (after the
								 * retries) instead of raising */
	bool		return_unknown; /* give back a non-idempotent request whose
								 * outcome is unknown (it timed out or lost
								 * its connection after being sent) as
								 * status 0 with outcome_unknown, instead of
								 * raising; the caller finds out what
								 * happened (functions_orders.c) */
	bool		report_transport_errors;	/* give back a failure without an
											 * HTTP status (after the retries)
											 * as status 0 with "error" set,
											 * instead of raising; a pending
											 * interrupt still raises */
	bool		has_cache_ttl;	/* cache_ttl_ms is set: a foreign table's
								 * option cache_ttl, which overrides the
								 * server's and the default (cache.c) */
	int			cache_ttl_ms;
	/*
	 * How the caller will decode the answer (psvc_json_decode_signature):
	 * a cached answer comes with the page a decoding of this signature left
	 * beside it (PsvcHttpResponse.decoded); NULL: the caller does not
	 * decode pages.
	 */
	const char *decoded_sig;
	size_t		decoded_sig_len;
} PsvcHttpRequest;

/*
 * What came back: always a complete, 2xx body unless return_errors (then
 * any HTTP status) or return_unknown (then status 0 and outcome_unknown).
 */
typedef struct PsvcHttpResponse
{
	long		status;
	bool		outcome_unknown;	/* return_unknown: no answer, the service
									 * may or may not have acted */
	char	   *failure;		/* then: what went wrong, a full sentence */
	char	   *body;			/* NUL-terminated; palloc'd; a 2xx body
								 * (and any body given back by
								 * return_errors) is in the server
								 * encoding, converted by http.c */
	size_t		body_len;
	char	   *content_type;	/* may be NULL */
	int			retries;		/* retries this request took */
	int64		bytes;			/* body bytes received, all attempts */
	double		elapsed_ms;		/* from start to completion */
	double		wait_ms;		/* time spent waiting by the caller */
	double		rl_wait_ms;		/* spent waiting for rate-limit budget, all
								 * attempts (ratelimit.c) */
	char	   *url_for_explain;	/* method + path + query, no key */
	char	   *error;			/* status 0 (report_transport_errors): what
								 * went wrong, a sentence; else NULL */
	int			error_sqlstate; /* status 0: the SQLSTATE it maps to */
	bool		converted;		/* body already in the server encoding */
	bool		from_cache;		/* served by the response cache: nothing
								 * was sent (cache.c) */
	bool		cache_miss;		/* looked up in the cache, not found */
	/*
	 * An answer of the response cache: the decoded page kept beside it for
	 * the request's decoded_sig (json_page_flat.c), or NULL.
	 */
	char	   *decoded;
	size_t		decoded_len;
	/* the cache's handle on the answer, for psvc_http_keep_decoded */
	struct PsvcCacheProbe *cache_probe;
} PsvcHttpResponse;

typedef struct PsvcTransfer PsvcTransfer;

/*
 * Starts a request without waiting; the transfer progresses whenever any
 * psvc_http_* call runs.  The transfer and its response are allocated in
 * cxt; deleting or resetting cxt aborts the transfer and releases its curl
 * handle (a reset callback), so an ERROR anywhere never leaks a handle.
 */
extern PsvcTransfer *psvc_http_start(const PsvcHttpRequest *req, MemoryContext cxt);
/* Lets running transfers progress without blocking (cheap; call per row). */
extern void psvc_http_poll(void);
/*
 * True when psvc_http_finish would not wait.  Only reflects progress made
 * by earlier psvc_http_* calls: poll before asking.
 */
extern bool psvc_http_done(PsvcTransfer *t);
/*
 * Waits for the transfer (interruptibly: Ctrl-C and statement_timeout stop
 * it), retrying as the rules say, and returns the response, allocated in
 * the transfer's cxt.  Raises the mapped ERROR on failure unless
 * return_errors (an HTTP status) or return_unknown (an unknown outcome).
 */
extern PsvcHttpResponse *psvc_http_finish(PsvcTransfer *t);
/* Aborts a transfer that is no longer wanted and releases its handle. */
extern void psvc_http_cancel(PsvcTransfer *t);
/*
 * Keeps page, the decoded page of resp's body (json_page_flat.c), in the
 * response cache beside the answer, for the next scan of the same
 * signature; nothing when resp was not cached.  Never raises.
 */
extern void psvc_http_keep_decoded(PsvcHttpResponse *resp, const char *page,
								   size_t len);
/* The most bytes such a page may have to be kept; 0: it would not be. */
extern size_t psvc_http_decoded_room(const PsvcHttpResponse *resp);
/* start + finish; the response is allocated in CurrentMemoryContext. */
extern PsvcHttpResponse *psvc_http_request(const PsvcHttpRequest *req);
/* in http_url.c: the one builder of request paths */

/* "GET /path?query" as it will be sent (values encoded), for EXPLAIN. */
extern char *psvc_http_describe(const PsvcHttpRequest *req);
/*
 * Raises 22023 naming the parameter unless value (server encoding) is what
 * the documents allow for path parameter name of op (its row in
 * catalog.c); psvc_http_start checks every path value this way, callers
 * may check earlier.
 */
extern void psvc_http_check_param(const struct PsvcOperation *op,
								  const char *name, const char *value);
/*
 * Raises the ERROR that a failed response maps to (used by callers that
 * asked for return_errors and decided the status is an error after all,
 * or for report_transport_errors and status 0).
 */
extern void psvc_http_raise(const PsvcHttpRequest *req, const PsvcHttpResponse *resp) pg_attribute_noreturn();

/* What this backend's HTTP client has done and holds (tests, EXPLAIN). */
typedef struct PsvcHttpCounters
{
	int64		attempts;		/* requests sent, retries included */
	int64		connects;		/* connections opened (the rest reused one) */
	int			idle_handles;	/* easy handles in the pool */
	int			busy_handles;	/* easy handles held by transfers */
	int			sockets;		/* sockets libcurl is watching */
	int			transfers;		/* transfers running or waiting to retry */
} PsvcHttpCounters;

extern void psvc_http_counters(PsvcHttpCounters *c);

#endif							/* PSVC_HTTP_H */
