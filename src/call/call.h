/*-------------------------------------------------------------------------
 *
 * call.h
 *		  A call to a partner service: one operation of the catalogue
 *		  (catalog.h) with its values, sent, and what came of it.
 *
 * A call (PsvcCall) is made from an operation row, a server, the path
 * values (one per op->params, in order), the query values and a JSON body,
 * and nothing else: method, route, retry safety, cacheability, envelope
 * and the "nothing here" codes are read from the row, never copied.  The
 * only per-call settings are those no row can give: a foreign table's
 * cache_ttl and the signature a scan decodes pages with.
 *
 * Every call ends in one PsvcResult: an answer (OK), an HTTP error, a
 * lost answer (a write that was sent and got no answer: the service may
 * have acted) or a transport failure.  psvc_call_raise() is the one way a
 * result becomes an ERROR; callers that handle some results themselves
 * (a "nothing here", a refusal, a lost answer they settle) raise the rest
 * through it.  Interrupts are never results: Ctrl-C and statement_timeout
 * raise 57014 while the call waits.
 *
 * The module is call.c (building calls, starting them as their rows say,
 * raising results) over the HTTP transport, which is private to it:
 * http.c (transfers),
 * http_attempt.c (libcurl attempts and retries), http_wait.c (the multi
 * handle and the waits, and the descriptor a caller with a wait of its
 * own waits on), http_url.c (the one builder of URLs) and
 * http_errors.c (failures into SQLSTATEs), sharing http_int.h.  Below it
 * are the response cache (cache.h), the rate limiter (ratelimit.h), the
 * options (options.h) and the settings (guc.h); above it the FDW and the
 * SQL functions.
 *
 * Memory: a call and its values are the caller's (psvc_call_make
 * allocates in CurrentMemoryContext; values must outlive the call).  A
 * running call and its result live in the memory context given to
 * psvc_call_start (a reset callback releases the curl handle when that
 * context goes); psvc_call_run allocates in CurrentMemoryContext.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/call.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_CALL_H
#define PSVC_CALL_H

#include "nodes/pg_list.h"
#include "utils/palloc.h"

#include "pg_compat.h"

struct PsvcOperation;			/* catalog.h */
struct PsvcServer;				/* options.h */
struct PsvcCacheProbe;			/* cache.h */
struct PsvcCallError;			/* http_int.h */

/*
 * A query parameter: plain text (not URL-encoded), in the server
 * encoding.  A placeholder (EXPLAIN: a value known only at run time) is
 * shown as written and never sent.
 */
typedef struct PsvcKV
{
	const char *name;
	const char *value;			/* NULL: the name alone */
	bool		placeholder;
} PsvcKV;

/* The most path parameters a route has (PSVC_MAX_PATH_PARAMS, catalog.h). */
#define PSVC_CALL_MAX_PATH	3

/* One call of an operation.  Build it with psvc_call_make. */
typedef struct PsvcCall
{
	const struct PsvcOperation *op; /* the row: everything but the values */
	const struct PsvcServer *server;
	const char *path[PSVC_CALL_MAX_PATH];	/* one per op->params */
	uint32		placeholders;	/* bit i: path[i] is a placeholder */
	List	   *query;			/* of PsvcKV *, in order */
	const char *body;			/* JSON text, server encoding; NULL: none */
	size_t		body_len;
	int			cache_ttl_ms;	/* a foreign table's option cache_ttl,
								 * which overrides the server's and the
								 * row's (cache.c); -1: none */
	/*
	 * How the caller will decode the answer (psvc_json_decode_signature):
	 * a cached answer comes with the page a decoding of this signature left
	 * beside it (PsvcResult.decoded); NULL: the caller does not decode
	 * pages.
	 */
	const char *decoded_sig;
	size_t		decoded_sig_len;
	/*
	 * The percentage of its route's rate-limit budget the call may use:
	 * it starts only while the use of the window, everyone's, is below
	 * that share, and never waits for budget (100, the default: the whole
	 * budget, waiting as usual).  The worker's status polling uses less
	 * (psvc_call_set_share).
	 */
	int			budget_share;
	/*
	 * The most retries of the transport, or -1 (the default): the
	 * server's max_retries.  A settling lookup makes one request
	 * (psvc_call_set_retries).
	 */
	int			max_retries;
	/*
	 * The call's own idempotency key, sent in the header its server's
	 * option idempotency_header names, which makes a write safe to
	 * repeat after a 5xx, a timeout or a lost connection; NULL: none
	 * (psvc_call_set_idempotency_key).
	 */
	const char *idempotency_key;
} PsvcCall;

/* in call.c: building calls */

/*
 * A call of op on server with the path values of path (one per op->params
 * in order; NULL when op has none), no query and no body.
 * CurrentMemoryContext.
 */
extern PsvcCall *psvc_call_make(const struct PsvcOperation *op,
								const struct PsvcServer *server,
								const char *const *path);
/*
 * Gives call the idempotency key key (kept by pointer): when its server
 * has the option idempotency_header, the key is sent in that header and
 * the call is retried as a safe one.  Without the option nothing changes.
 */
extern void psvc_call_set_idempotency_key(PsvcCall *call, const char *key);
/* Sets the value of path parameter name (elog when op has none of that name). */
extern void psvc_call_set_path(PsvcCall *call, const char *name,
							   const char *value);
/* The same, a placeholder shown as text by psvc_call_describe. */
extern void psvc_call_set_placeholder(PsvcCall *call, const char *name,
									  const char *text);
/* Appends a query parameter (value NULL: the name alone). */
extern void psvc_call_add_query(PsvcCall *call, const char *name,
								const char *value, bool placeholder);
/* Sets the body, JSON text in the server encoding, of len bytes. */
extern void psvc_call_set_body(PsvcCall *call, const char *json, size_t len);
/* A foreign table's cache_ttl (ms) for the call's answer (a scan's). */
extern void psvc_call_set_cache_ttl(PsvcCall *call, int ttl_ms);
/* The signature (len bytes, kept by the caller) a scan decodes pages with. */
extern void psvc_call_set_decoding(PsvcCall *call, const char *sig, size_t len);
/*
 * Lets the call use only percent (1..100) of its route's budget, without
 * waiting: when the route's use of the window has reached that share, the
 * call fails at once (53300, nothing sent).
 */
extern void psvc_call_set_share(PsvcCall *call, int percent);
/* At most n retries of the call, whatever the server's max_retries says. */
extern void psvc_call_set_retries(PsvcCall *call, int n);

/* in http_url.c: the one builder of URLs */

/*
 * "METHOD /path?query" as the call would be sent, without the base URL
 * and never with the key, for EXPLAIN: values encoded, placeholders as
 * written, nothing checked.  CurrentMemoryContext.
 */
extern char *psvc_call_describe(const PsvcCall *call);
/*
 * Raises 22023 naming the parameter unless value (server encoding) is
 * what the documents allow for path parameter name of op; every call
 * checks its path values so before anything is sent, callers may check
 * earlier.
 */
extern void psvc_call_check_param(const struct PsvcOperation *op, const char *name,
								  const char *value);

/*
 * NULL when libcurl, which sends the calls, accepts url (fdw_options.c checks
 * base_url and proxy with it); else why not, a static text.  any_scheme:
 * a proxy's URL.
 */
extern const char *psvc_call_url_error(const char *url, bool any_scheme);

/* What came of a call. */
typedef enum PsvcResultKind
{
	PSVC_CALL_OK,				/* a 2xx answer */
	PSVC_CALL_HTTP_ERROR,		/* another HTTP status, after the retries */
	PSVC_CALL_LOST,				/* a write that was sent and got no answer
								 * (timeout, lost connection): the service
								 * may have carried it out */
	PSVC_CALL_FAILED			/* no answer otherwise (no connection, TLS,
								 * too large...), after the retries */
} PsvcResultKind;

typedef struct PsvcResult
{
	PsvcResultKind kind;
	long		status;			/* the HTTP status; 0 for LOST and FAILED */
	char	   *body;			/* NUL-terminated; in the server encoding
								 * (an error body sanitized) */
	size_t		body_len;
	int			sqlstate;		/* not OK: what psvc_call_raise raises */
	char	   *message;		/* LOST, FAILED: what went wrong, one
								 * sentence */
	int			retries;		/* retries the call took */
	/* for EXPLAIN ANALYZE */
	int64		bytes;			/* body bytes received, all attempts */
	double		rl_wait_ms;		/* waited for rate-limit budget */
	bool		from_cache;		/* answered by the response cache */
	bool		cache_miss;		/* looked up in the cache, not found */
	/*
	 * The answer's Link header (RFC 8288), as received, or NULL; never
	 * from the response cache, which keeps no headers (a route paged by
	 * it is not cached: fdw_scan_page.c).
	 */
	char	   *link;
	/* the decoded page kept beside a cached answer for decoded_sig */
	char	   *decoded;
	size_t		decoded_len;
	/* private to the call module */
	struct PsvcCacheProbe *cache_probe;
	struct PsvcCallError *error;	/* LOST, FAILED: the ERROR to raise */
} PsvcResult;

/* running calls: start and run in call.c, the rest in http.c and http_wait.c */

typedef struct PsvcTransfer PsvcTransfer;

/*
 * Starts call without waiting; it progresses whenever any psvc_call_*
 * function that runs calls is used.  The transfer and its result are
 * allocated in cxt; deleting or resetting cxt aborts the transfer and
 * releases its curl handle, so an ERROR anywhere never leaks a handle.
 * Raises at once for a bad path value (22023) or a URL over the limit
 * (54000): nothing is sent.
 */
extern PsvcTransfer *psvc_call_start(const PsvcCall *call, MemoryContext cxt);
/* Lets running calls progress without blocking (cheap; call per row). */
extern void psvc_call_poll(void);
/*
 * Waits for the call (interruptibly), retrying as its row allows, and
 * returns its result, allocated in the transfer's cxt.  Raises only for
 * an interrupt or an answer that is not valid text.
 */
extern PsvcResult *psvc_call_finish(PsvcTransfer *t);
/* Aborts a call that is no longer wanted and releases its handle. */
extern void psvc_call_cancel(PsvcTransfer *t);
/* start + finish; the result is allocated in CurrentMemoryContext. */
extern PsvcResult *psvc_call_run(const PsvcCall *call);

/* in http_wait.c: waiting in a WaitEventSet of the caller's */

/*
 * A descriptor that polls readable when running calls have something to
 * do (a socket libcurl watches is ready, its timer or a retry is due),
 * for a caller that waits in a WaitEventSet of its own (an asynchronous
 * foreign scan under an Append); on wakeup it calls psvc_call_poll.  One
 * per backend, made on first use and kept until exit: never close it.
 * -1 where the platform has none (no epoll): the caller then waits with
 * psvc_call_finish.
 */
extern int	psvc_call_event_fd(void);
/*
 * Arms the descriptor for the wait about to begin: it also polls readable
 * when curl's timer or a retry is due, within a second at most, and at
 * once when now.  Never raises.
 */
extern void psvc_call_prepare_wait(bool now);
/* Whether t has ended, so that psvc_call_finish returns without waiting. */
extern bool psvc_call_ready(const PsvcTransfer *t);
/*
 * Keeps page, the decoded page of res's body (json_page_flat.c), in the
 * response cache beside the answer, for the next scan of the same
 * signature; nothing when res was not cached.  Never raises.
 */
extern void psvc_call_keep_decoded(PsvcResult *res, const char *page,
								   size_t len);
/* The most bytes such a page may have to be kept; 0: it would not be. */
extern size_t psvc_call_decoded_room(const PsvcResult *res);

/* in call.c: what came back */

/*
 * Raises the ERROR of a result that is not OK: the SQLSTATE of the status
 * or failure, the service's error in the detail, the method and route
 * template in the context, never the key or the URL.
 */
pg_noreturn extern void psvc_call_raise(const PsvcCall *call, const PsvcResult *res);
/*
 * The error code of an error answer's body ({"error": {"code"}} or
 * {"error": "..."}), or NULL.  CurrentMemoryContext.
 */
extern char *psvc_call_error_code(const PsvcResult *res);
/* Whether res is a 404 whose error code the row names as "nothing here". */
extern bool psvc_call_is_empty(const PsvcCall *call, const PsvcResult *res);

#endif							/* PSVC_CALL_H */
