/*-------------------------------------------------------------------------
 *
 * http.c
 *		  The HTTP client core of partner_svc: requests to the partner
 *		  services over libcurl, their retries, and the mapping of failures
 *		  to PostgreSQL errors.
 *
 * Connections.  Each backend has one libcurl multi handle, made on first
 * use and closed at process exit.  Every transfer of the backend runs in
 * it, so all of them share its connection cache: a connection is kept
 * alive across requests, pages and scans (a request that is not safe to
 * repeat opens a fresh one: see start_attempt).  Easy handles are pooled
 * and curl_easy_reset() before reuse; a handle goes back to the pool as
 * soon as its attempt completes, so the pool only holds handles of
 * transfers in flight plus a few idle ones.
 *
 * Progress.  Nothing runs in the background: transfers progress whenever a
 * psvc_http_* function is called ("pumping").  We use libcurl's socket
 * interface: CURLMOPT_SOCKETFUNCTION tells us which sockets to watch for
 * what, curl_multi_timeout() when curl next wants to run, and we hand
 * readiness back with curl_multi_socket_action().  psvc_http_poll() looks
 * at the sockets with poll(2) and a zero timeout, so it costs one system
 * call when transfers are running and nothing when none is.  Only
 * psvc_http_finish() blocks, in a WaitEventSet on the process latch and
 * curl's sockets (rebuilt when curl changes its socket set), with a timeout
 * that is the earliest of curl's timer and the next retry.  While one
 * transfer is waited for, all the others progress, retries included.
 *
 * Interrupts.  After every wakeup we reset the latch and run
 * CHECK_FOR_INTERRUPTS(), so Ctrl-C and statement_timeout are reported by
 * PostgreSQL itself (57014) within one wakeup.  The progress callback also
 * aborts a transfer when an interrupt is pending and could be serviced;
 * the pump then runs CHECK_FOR_INTERRUPTS().  No callback of libcurl ever
 * raises an error or allocates memory in a way that could: callbacks only
 * record what happened, and the pump acts on it after libcurl returns.
 *
 * Lifetime.  A transfer lives in the memory context given to
 * psvc_http_start(), and a reset callback on that context releases its
 * easy handle and header list.  An ERROR anywhere (including one raised by
 * CHECK_FOR_INTERRUPTS while we wait) therefore never leaks a handle: the
 * context goes away with the query and takes the transfer with it.  The
 * transfer's buffers are allocated directly in that context (never in a
 * child), because a context's children are deleted before its own reset
 * callbacks run.
 *
 * Retries.  Decided when an attempt completes, by the rules in
 * status_rules[] and failure_rules[] below (also docs/errors.md): 429 for
 * every method (the service did nothing), failures before a connection
 * existed for every method (nothing was sent), and 5xx, timeouts and lost
 * connections only for GET or when the caller sets retry_unsafe.  A GET
 * that changes state (the scheduler's run, stop, clone, email...) is
 * marked unsafe by its caller and is then treated like a POST.  The
 * delay is the response's Retry-After when it has one (capped at the
 * request timeout), otherwise exponential backoff with full jitter.
 * A request that is not retried after a timeout or a lost connection has
 * an unknown outcome; a caller that can find out what happened (create
 * an order, then look it up by its custom id) sets return_unknown and
 * gets status 0 with outcome_unknown instead of the error.
 *
 * Requests that are not idempotent always open a new connection
 * (CURLOPT_FRESH_CONNECT): on a reused connection that closes without an
 * answer, libcurl silently sends the request again, which would repeat a
 * state change the service may have made.
 *
 * Reporting.  A failure is raised as an ERROR, except that a caller may
 * ask for the final response of a 4xx/5xx (return_errors) or of a failure
 * without an HTTP status (report_transport_errors: status 0, "error" and
 * "error_sqlstate" set) to decide for itself, e.g. an upload that reads
 * the file's size before resending a chunk whose answer was lost.
 *
 * Secrets.  The API key goes into one Authorization header and nowhere
 * else: not into the URL, the description used by EXPLAIN, any message or
 * context line.  CURLOPT_VERBOSE is never set, and curl's error buffer
 * never holds request headers.  The palloc'd copies of the key are zeroed
 * once libcurl has its own.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/http.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <poll.h>
#include <time.h>

#include <curl/curl.h>

#include "common/jsonapi.h"
#include "common/pg_prng.h"
#include "lib/ilist.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "partner_svc.h"

/* Idle easy handles kept for reuse; more are closed when they come back. */
#define PSVC_HTTP_POOL_SIZE			8

/* Exponential backoff: base << attempt, capped, then a random part of it. */
#define PSVC_HTTP_BACKOFF_BASE_MS	100
#define PSVC_HTTP_BACKOFF_CAP_MS	5000

/* Longest single wait; a safety net, curl's own timer is always shorter. */
#define PSVC_HTTP_MAX_WAIT_MS		1000

/* How much of an unparsable error body goes into errdetail. */
#define PSVC_HTTP_DETAIL_BYTES		200

/* Deepest JSON nesting we hand to the JSON parser for an error body. */
#define PSVC_HTTP_ERROR_JSON_DEPTH	32

/* A body becomes one palloc'd string, so it must fit one allocation. */
#define PSVC_HTTP_MAX_BODY			((size_t) MaxAllocSize - 1)

/* What the last attempt of a transfer ended with. */
typedef enum PsvcOutcome
{
	OUTCOME_HTTP,				/* an HTTP response; status says which */
	OUTCOME_CONNECT,			/* no connection could be made */
	OUTCOME_CONNECT_TIMEOUT,	/* timed out before the request was sent */
	OUTCOME_TIMEOUT,			/* timed out after the request was sent */
	OUTCOME_LOST,				/* connection broke during the exchange */
	OUTCOME_TLS,				/* TLS handshake or verification failed */
	OUTCOME_TOO_BIG,			/* response body over PSVC_HTTP_MAX_BODY */
	OUTCOME_NO_MEMORY,			/* could not allocate the body */
	OUTCOME_INTERRUPTED,		/* aborted for a pending interrupt */
	OUTCOME_OTHER				/* any other libcurl failure */
} PsvcOutcome;

/* Which libcurl result means which outcome; anything else is OTHER. */
static const struct
{
	CURLcode	code;
	PsvcOutcome outcome;
}			curl_outcomes[] =
{
	{CURLE_COULDNT_RESOLVE_PROXY, OUTCOME_CONNECT},
	{CURLE_COULDNT_RESOLVE_HOST, OUTCOME_CONNECT},
	{CURLE_COULDNT_CONNECT, OUTCOME_CONNECT},
	{CURLE_OPERATION_TIMEDOUT, OUTCOME_TIMEOUT},	/* refined by timing */
	{CURLE_SEND_ERROR, OUTCOME_LOST},
	{CURLE_RECV_ERROR, OUTCOME_LOST},
	{CURLE_PARTIAL_FILE, OUTCOME_LOST},
	{CURLE_GOT_NOTHING, OUTCOME_LOST},
	{CURLE_HTTP2, OUTCOME_LOST},
	{CURLE_HTTP2_STREAM, OUTCOME_LOST},
	{CURLE_SSL_CONNECT_ERROR, OUTCOME_TLS},
	{CURLE_PEER_FAILED_VERIFICATION, OUTCOME_TLS},
	{CURLE_SSL_CACERT_BADFILE, OUTCOME_TLS},
	{CURLE_SSL_CERTPROBLEM, OUTCOME_TLS},
	{CURLE_FILESIZE_EXCEEDED, OUTCOME_TOO_BIG},
};

/*
 * Failures without an HTTP status: whether they are retried and what they
 * are reported as.  "any" retries every method, because nothing reached
 * the service; "idempotent" retries GET and requests that set
 * retry_unsafe.  INTERRUPTED is not in here: it never becomes an error of
 * ours (CHECK_FOR_INTERRUPTS raises PostgreSQL's own).
 *
 *	outcome				retry any	retry idempotent	SQLSTATE
 *	CONNECT				yes			yes					HV00N
 *	CONNECT_TIMEOUT		yes			yes					HV00N
 *	TIMEOUT				no			yes					08006
 *	LOST				no			yes					08006
 *	TLS					no			no					HV00N
 *	TOO_BIG				no			no					54000
 *	NO_MEMORY			no			no					53200
 *	OTHER				no			no					HV000
 */
typedef struct PsvcFailureRule
{
	PsvcOutcome outcome;
	bool		retry_any;
	bool		retry_idempotent;
	int			sqlstate;
} PsvcFailureRule;

static const PsvcFailureRule failure_rules[] = {
	{OUTCOME_CONNECT, true, true, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION},
	{OUTCOME_CONNECT_TIMEOUT, true, true, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION},
	{OUTCOME_TIMEOUT, false, true, ERRCODE_CONNECTION_FAILURE},
	{OUTCOME_LOST, false, true, ERRCODE_CONNECTION_FAILURE},
	{OUTCOME_TLS, false, false, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION},
	{OUTCOME_TOO_BIG, false, false, ERRCODE_PROGRAM_LIMIT_EXCEEDED},
	{OUTCOME_NO_MEMORY, false, false, ERRCODE_OUT_OF_MEMORY},
	{OUTCOME_OTHER, false, false, ERRCODE_FDW_ERROR},
};

/* Extra hints some statuses carry. */
typedef enum PsvcHint
{
	HINT_NONE,
	HINT_API_KEY,				/* 401: set api_key on the user mapping */
	HINT_RATE_LIMIT				/* 429: the rate limit and our retries */
} PsvcHint;

/*
 * HTTP statuses: the first row whose range holds the status applies.
 *
 *	status		SQLSTATE	retry any	retry idempotent
 *	2xx			(success)
 *	400			22023		no			no
 *	401			28000		no			no		hint: api_key
 *	403			42501		no			no
 *	404			P0002		no			no
 *	409			55000		no			no
 *	413			22023		no			no		(the value sent is too big)
 *	422			22023		no			no
 *	429			53300		yes			yes		hint: rate limit, retries
 *	other 4xx	HV000		no			no		(415 etc.: a client bug)
 *	502-504		HV00N		no			yes		(service unavailable)
 *	other 5xx	HV000		no			yes		(the service failed)
 *	3xx, other	HV000		no			no		(redirects are not followed)
 *
 * 502, 503 and 504 say the service could not be reached behind its
 * gateway or is down: the same situation as a refused connection, so the
 * same SQLSTATE (HV00N), which clients treat as "try again later".  500
 * and the rest say the service ran and failed: an error of the remote
 * side, HV000.
 */
typedef struct PsvcStatusRule
{
	long		lo;
	long		hi;
	int			sqlstate;
	bool		retry_any;
	bool		retry_idempotent;
	PsvcHint	hint;
} PsvcStatusRule;

static const PsvcStatusRule status_rules[] = {
	{400, 400, ERRCODE_INVALID_PARAMETER_VALUE, false, false, HINT_NONE},
	{401, 401, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION, false, false, HINT_API_KEY},
	{403, 403, ERRCODE_INSUFFICIENT_PRIVILEGE, false, false, HINT_NONE},
	{404, 404, ERRCODE_NO_DATA_FOUND, false, false, HINT_NONE},
	{409, 409, ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, false, false, HINT_NONE},
	{413, 413, ERRCODE_INVALID_PARAMETER_VALUE, false, false, HINT_NONE},
	{422, 422, ERRCODE_INVALID_PARAMETER_VALUE, false, false, HINT_NONE},
	{429, 429, ERRCODE_TOO_MANY_CONNECTIONS, true, true, HINT_RATE_LIMIT},
	{400, 499, ERRCODE_FDW_ERROR, false, false, HINT_NONE},
	{502, 504, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION, false, true, HINT_NONE},
	{500, 599, ERRCODE_FDW_ERROR, false, true, HINT_NONE},
	{0, LONG_MAX, ERRCODE_FDW_ERROR, false, false, HINT_NONE},
};

typedef enum PsvcTransferState
{
	XFER_RUNNING,				/* an attempt is in the multi handle */
	XFER_BACKOFF,				/* waiting for retry_at to start again */
	XFER_DONE,					/* final outcome recorded, handle released */
	XFER_CANCELLED				/* given up by the caller or by its context */
} PsvcTransferState;

struct PsvcTransfer
{
	dlist_node	node;			/* in active_transfers while linked */
	bool		linked;
	MemoryContext cxt;
	MemoryContextCallback release_cb;
	PsvcTransferState state;

	/* the request, copied into cxt */
	char	   *method;
	char	   *route;
	char	   *servername;
	char	   *url;			/* base URL + path + query */
	char	   *description;	/* "METHOD /path?query" */
	char	   *body;
	size_t		body_len;
	bool		idempotent;		/* GET or HEAD not marked unsafe, or
								 * retry_unsafe */
	bool		return_errors;
	bool		return_unknown;
	bool		report_transport_errors;
	int			max_retries;	/* GUCs as they were at the start */
	long		connect_timeout_ms;
	long		request_timeout_ms;
	struct curl_slist *headers; /* malloc'd by libcurl; holds the key */

	/* the running attempt */
	CURL	   *easy;
	bool		in_multi;
	char	   *buf;			/* body received so far, in cxt */
	size_t		len;
	size_t		cap;
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

	TimestampTz retry_at;		/* XFER_BACKOFF: when to start again */
	instr_time	started;
	int			retries;
	int64		bytes;
	double		wait_ms;
	PsvcHttpResponse *resp;		/* XFER_DONE */
};

/* A socket libcurl asked us to watch, and for what (CURL_POLL_*). */
typedef struct PsvcSocket
{
	curl_socket_t fd;
	int			what;
} PsvcSocket;

/* Per-backend state.  Nothing here is palloc'd except wait_set. */
static CURLM *multi = NULL;
static bool curl_ready = false;
static bool exit_callback_set = false;
static dlist_head active_transfers = DLIST_STATIC_INIT(active_transfers);
static int	n_backoff = 0;		/* active transfers in XFER_BACKOFF */
static CURL *pool[PSVC_HTTP_POOL_SIZE];
static int	pool_len = 0;
static int	handles_out = 0;	/* easy handles held by transfers */
static PsvcSocket *sockets = NULL;	/* malloc'd: callbacks must not palloc */
static int	n_sockets = 0;
static int	max_sockets = 0;
static bool sockets_changed = true;
static WaitEventSet *wait_set = NULL;	/* in TopMemoryContext */
static bool interrupt_seen = false; /* progress_cb aborted a transfer */
static int64 n_attempts = 0;
static int64 n_connects = 0;

static void ensure_multi(void);
static void http_exit(int code, Datum arg);
static int	socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp,
					  void *socketp);
static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp);
static int	progress_cb(void *userp, curl_off_t dltotal, curl_off_t dlnow,
						curl_off_t ultotal, curl_off_t ulnow);
static CURL *pool_get(void);
static void pool_put(CURL *easy);
static void detach_handle(PsvcTransfer *t);
static void transfer_release(void *arg);
static void start_attempt(PsvcTransfer *t);
static void attempt_finished(PsvcTransfer *t, CURLcode code);
static void complete_transfer(PsvcTransfer *t);
static void pump(void);
static void drive_ready_sockets(void);
static void drive_timer(void);
static void collect_finished(void);
static void start_due_retries(void);
static void wait_for_activity(void);
static long backoff_ms(PsvcTransfer *t, CURL *easy);
static long retry_after_ms(CURL *easy);
static bool should_retry(PsvcTransfer *t);
static const PsvcStatusRule *status_rule(long status);
static const PsvcFailureRule *failure_rule(PsvcOutcome outcome);
static void append_escaped(StringInfo buf, const char *s);
static void append_path_and_query(StringInfo buf, const PsvcHttpRequest *req);
static char *sanitize(const char *s, size_t len, size_t max);
static char *sentence(const char *s, size_t max);
static char *service_error_detail(const char *body, size_t len);
static char *request_context(const char *method, const char *route,
							 const char *servername, int retries);
static void report_status(const char *method, const char *route,
						  const char *servername, long status,
						  const char *body, size_t len, int retries)
			pg_attribute_noreturn();
static void report_failure(PsvcTransfer *t) pg_attribute_noreturn();
static PsvcHttpResponse *unknown_outcome(PsvcTransfer *t);
static char *failure_text(PsvcTransfer *t);

/* curl_easy_setopt that cannot fail silently. */
#define PSVC_SETOPT(easy, opt, val) \
	do { \
		if (curl_easy_setopt((easy), (opt), (val)) != CURLE_OK) \
			elog(ERROR, "could not set libcurl option %s", #opt); \
	} while (0)


/* ---------------------------------------------------------------------
 * The multi handle, its sockets and the pool of easy handles
 * ---------------------------------------------------------------------
 */

/*
 * Makes the backend's multi handle on first use and arranges for its
 * cleanup at process exit.
 */
static void
ensure_multi(void)
{
	if (multi != NULL)
		return;

	if (!curl_ready)
	{
		if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("could not initialize libcurl")));
		curl_ready = true;
	}

	multi = curl_multi_init();
	if (multi == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Could not create a libcurl multi handle.")));
	if (curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, socket_cb) != CURLM_OK)
		elog(ERROR, "could not set libcurl option CURLMOPT_SOCKETFUNCTION");

	if (!exit_callback_set)
	{
		on_proc_exit(http_exit, (Datum) 0);
		exit_callback_set = true;
	}
}

/*
 * Process exit: abort whatever still runs, close every handle and, with
 * the multi handle, every cached connection.
 */
static void
http_exit(int code, Datum arg)
{
	dlist_mutable_iter iter;

	if (multi == NULL)
		return;

	dlist_foreach_modify(iter, &active_transfers)
	{
		PsvcTransfer *t = dlist_container(PsvcTransfer, node, iter.cur);

		if (t->easy != NULL)
		{
			if (t->in_multi)
				curl_multi_remove_handle(multi, t->easy);
			curl_easy_cleanup(t->easy);
			t->easy = NULL;
			t->in_multi = false;
		}
		if (t->headers != NULL)
		{
			curl_slist_free_all(t->headers);
			t->headers = NULL;
		}
		dlist_delete(&t->node);
		t->linked = false;
		t->state = XFER_CANCELLED;
	}
	while (pool_len > 0)
		curl_easy_cleanup(pool[--pool_len]);
	curl_multi_cleanup(multi);
	multi = NULL;
	free(sockets);
	sockets = NULL;
	n_sockets = max_sockets = 0;
}

/*
 * CURLMOPT_SOCKETFUNCTION: libcurl tells us to watch fd for "what", or to
 * stop watching it.  Only records; the wait set is rebuilt before the next
 * wait.  Uses malloc, so nothing here can raise an error.
 */
static int
socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	int			i;

	for (i = 0; i < n_sockets; i++)
		if (sockets[i].fd == fd)
			break;

	if (what == CURL_POLL_REMOVE)
	{
		if (i < n_sockets)
		{
			sockets[i] = sockets[--n_sockets];
			sockets_changed = true;
		}
		return 0;
	}

	if (i == n_sockets)
	{
		if (n_sockets == max_sockets)
		{
			int			newmax = Max(8, max_sockets * 2);
			PsvcSocket *s = realloc(sockets, newmax * sizeof(PsvcSocket));

			if (s == NULL)
				return -1;		/* libcurl fails the transfer */
			sockets = s;
			max_sockets = newmax;
		}
		sockets[n_sockets].fd = fd;
		sockets[n_sockets].what = 0;
		n_sockets++;
	}
	if (sockets[i].what != what)
	{
		sockets[i].what = what;
		sockets_changed = true;
	}
	return 0;
}

/* An easy handle from the pool, or a new one. */
static CURL *
pool_get(void)
{
	CURL	   *easy;

	if (pool_len > 0)
		easy = pool[--pool_len];
	else
	{
		easy = curl_easy_init();
		if (easy == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not create a libcurl easy handle.")));
	}
	handles_out++;
	return easy;
}

/*
 * Gives an easy handle back, reset.  Connections stay in the multi
 * handle's cache.  Runs from reset callbacks: must not raise.
 */
static void
pool_put(CURL *easy)
{
	handles_out--;
	curl_easy_reset(easy);
	if (pool_len < PSVC_HTTP_POOL_SIZE)
		pool[pool_len++] = easy;
	else
		curl_easy_cleanup(easy);
}

/*
 * Takes a transfer's easy handle out of the multi handle (which closes
 * its connection if the exchange was not complete) and pools it.  Must
 * not raise: runs from reset callbacks, also during abort.
 */
static void
detach_handle(PsvcTransfer *t)
{
	curl_off_t	nconnects = 0;

	if (t->easy == NULL)
		return;
	if (curl_easy_getinfo(t->easy, CURLINFO_NUM_CONNECTS, &nconnects) == CURLE_OK)
		n_connects += nconnects;
	if (t->in_multi && multi != NULL)
		curl_multi_remove_handle(multi, t->easy);
	t->in_multi = false;
	pool_put(t->easy);
	t->easy = NULL;
}

/*
 * Reset callback of the transfer's memory context, also used by
 * psvc_http_cancel: releases everything outside palloc.  Idempotent,
 * never raises.
 */
static void
transfer_release(void *arg)
{
	PsvcTransfer *t = (PsvcTransfer *) arg;

	/* rate limiter: an abandoned attempt still counts (ratelimit.c) */
	psvc_rl_release(t->rl);
	detach_handle(t);
	if (t->headers != NULL)
	{
		curl_slist_free_all(t->headers);
		t->headers = NULL;
	}
	if (t->linked)
	{
		if (t->state == XFER_BACKOFF)
			n_backoff--;
		dlist_delete(&t->node);
		t->linked = false;
	}
	if (t->state != XFER_DONE)
		t->state = XFER_CANCELLED;
}


/* ---------------------------------------------------------------------
 * libcurl callbacks: record only, never raise
 * ---------------------------------------------------------------------
 */

/*
 * CURLOPT_WRITEFUNCTION: appends to the transfer's buffer in its context.
 * Allocates with MCXT_ALLOC_NO_OOM and reports failure by returning 0,
 * which makes libcurl end the attempt with CURLE_WRITE_ERROR.
 */
static size_t
write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
	PsvcTransfer *t = (PsvcTransfer *) userp;
	size_t		n = size * nmemb;

	if (n > PSVC_HTTP_MAX_BODY - t->len)
	{
		t->too_big = true;
		return 0;
	}
	if (t->len + n + 1 > t->cap)
	{
		size_t		newcap = Max(t->cap * 2, (size_t) 8192);
		curl_off_t	expected = -1;
		char	   *newbuf;

		/* the first write knows the whole length when the server said it */
		if (t->len == 0 &&
			curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
							  &expected) == CURLE_OK &&
			expected > 0 && (size_t) expected <= PSVC_HTTP_MAX_BODY)
			newcap = Max(newcap, (size_t) expected + 1);
		newcap = Max(newcap, t->len + n + 1);
		newcap = Min(newcap, PSVC_HTTP_MAX_BODY + 1);

		newbuf = MemoryContextAllocExtended(t->cxt, newcap, MCXT_ALLOC_NO_OOM);
		if (newbuf == NULL)
		{
			t->no_memory = true;
			return 0;
		}
		if (t->len > 0)
			memcpy(newbuf, t->buf, t->len);
		if (t->buf != NULL)
			pfree(t->buf);
		t->buf = newbuf;
		t->cap = newcap;
	}
	memcpy(t->buf + t->len, data, n);
	t->len += n;
	t->bytes += n;
	return n;
}

/*
 * CURLOPT_XFERINFOFUNCTION: aborts the attempt when an interrupt is
 * pending that CHECK_FOR_INTERRUPTS would act on now; the pump then lets
 * CHECK_FOR_INTERRUPTS raise it.
 */
static int
progress_cb(void *userp, curl_off_t dltotal, curl_off_t dlnow,
			curl_off_t ultotal, curl_off_t ulnow)
{
	PsvcTransfer *t = (PsvcTransfer *) userp;

	if ((QueryCancelPending || ProcDiePending) && INTERRUPTS_CAN_BE_PROCESSED())
	{
		t->interrupted = true;
		return 1;
	}
	return 0;
}


/* ---------------------------------------------------------------------
 * Attempts
 * ---------------------------------------------------------------------
 */

/*
 * Starts one attempt of t: takes an easy handle, sets it up from the
 * transfer and adds it to the multi handle.  Raises only before the
 * handle is in the multi; the reset callback cleans up either way.
 */
static void
start_attempt(PsvcTransfer *t)
{
	CURL	   *easy;
	CURLMcode	mrc;

	Assert(t->easy == NULL);

	/* rate limiter: one unit of budget per attempt, may wait (ratelimit.c) */
	psvc_rl_acquire(t->rl);

	easy = pool_get();
	t->easy = easy;

	t->len = 0;
	t->too_big = false;
	t->no_memory = false;
	t->interrupted = false;
	t->errbuf[0] = '\0';

	PSVC_SETOPT(easy, CURLOPT_URL, t->url);
	PSVC_SETOPT(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	PSVC_SETOPT(easy, CURLOPT_PRIVATE, (void *) t);
	PSVC_SETOPT(easy, CURLOPT_ERRORBUFFER, t->errbuf);
	PSVC_SETOPT(easy, CURLOPT_NOSIGNAL, 1L);
	PSVC_SETOPT(easy, CURLOPT_CONNECTTIMEOUT_MS, t->connect_timeout_ms);
	PSVC_SETOPT(easy, CURLOPT_TIMEOUT_MS, t->request_timeout_ms);
	PSVC_SETOPT(easy, CURLOPT_USERAGENT, "partner_svc/" PSVC_VERSION);
	PSVC_SETOPT(easy, CURLOPT_HTTPHEADER, t->headers);
	PSVC_SETOPT(easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) PSVC_HTTP_MAX_BODY);
	PSVC_SETOPT(easy, CURLOPT_WRITEFUNCTION, write_cb);
	PSVC_SETOPT(easy, CURLOPT_WRITEDATA, (void *) t);
	PSVC_SETOPT(easy, CURLOPT_XFERINFOFUNCTION, progress_cb);
	PSVC_SETOPT(easy, CURLOPT_XFERINFODATA, (void *) t);
	PSVC_SETOPT(easy, CURLOPT_NOPROGRESS, 0L);

	/*
	 * libcurl sends a request again by itself, on a new connection, when a
	 * reused connection ends without a byte of answer: for a stale
	 * keep-alive connection that is harmless, but the service may also
	 * have carried the request out and then lost the connection, and a
	 * POST would be done twice.  A request that is not safe to repeat
	 * therefore never goes over a cached connection; its own connection is
	 * cached afterwards as usual.
	 */
	if (!t->idempotent)
		PSVC_SETOPT(easy, CURLOPT_FRESH_CONNECT, 1L);

	if (strcmp(t->method, "GET") == 0)
		PSVC_SETOPT(easy, CURLOPT_HTTPGET, 1L);
	else if (strcmp(t->method, "HEAD") == 0)
		PSVC_SETOPT(easy, CURLOPT_NOBODY, 1L);
	else
	{
		if (strcmp(t->method, "POST") == 0)
			PSVC_SETOPT(easy, CURLOPT_POST, 1L);
		else
			PSVC_SETOPT(easy, CURLOPT_CUSTOMREQUEST, t->method);
		if (t->body != NULL || strcmp(t->method, "POST") == 0)
		{
			PSVC_SETOPT(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) t->body_len);
			PSVC_SETOPT(easy, CURLOPT_POSTFIELDS, t->body ? t->body : "");
		}
	}

	mrc = curl_multi_add_handle(multi, easy);
	if (mrc != CURLM_OK)
		elog(ERROR, "could not add a libcurl handle: %s", curl_multi_strerror(mrc));
	t->in_multi = true;
	t->state = XFER_RUNNING;
	n_attempts++;
}

/*
 * Called by collect_finished when libcurl reports an attempt of t done:
 * records the outcome, gives the handle back, and either schedules a
 * retry or completes the transfer.
 */
static void
attempt_finished(PsvcTransfer *t, CURLcode code)
{
	CURL	   *easy = t->easy;
	long		status = 0;
	curl_off_t	pretransfer_us = 0;
	long		delay_ms = -1;
	int			i;

	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer_us);

	t->status = status;
	t->curl_code = code;

	if (code == CURLE_OK)
		t->outcome = OUTCOME_HTTP;
	else if (t->interrupted && code == CURLE_ABORTED_BY_CALLBACK)
		t->outcome = OUTCOME_INTERRUPTED;
	else if (t->too_big)
		t->outcome = OUTCOME_TOO_BIG;
	else if (t->no_memory)
		t->outcome = OUTCOME_NO_MEMORY;
	else
	{
		t->outcome = OUTCOME_OTHER;
		for (i = 0; i < lengthof(curl_outcomes); i++)
			if (curl_outcomes[i].code == code)
				t->outcome = curl_outcomes[i].outcome;
		/* timed out before the request could be sent: nothing was done */
		if (t->outcome == OUTCOME_TIMEOUT && pretransfer_us == 0)
			t->outcome = OUTCOME_CONNECT_TIMEOUT;
	}

	if (t->outcome == OUTCOME_INTERRUPTED)
	{
		/*
		 * The pump's CHECK_FOR_INTERRUPTS will raise the cancel.  Should it
		 * not, the attempt resumes (not counted as a retry), unless it may
		 * have done something that must not be done twice: then it ends
		 * as a lost connection, whose outcome is unknown.
		 */
		interrupt_seen = true;
		if (!t->idempotent && pretransfer_us > 0)
			t->outcome = OUTCOME_LOST;
		else
			delay_ms = 0;
	}
	else if (should_retry(t))
	{
		delay_ms = backoff_ms(t, easy);
		t->retries++;
	}

	/* rate limiter: end the attempt's unit, feed back a 429, stats */
	{
		curl_off_t	total_us = 0;

		curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total_us);
		psvc_rl_attempt_done(t->rl, t->outcome == OUTCOME_HTTP ? status : 0,
							 t->body_len, t->len, total_us / 1000.0,
							 delay_ms >= 0 && t->outcome != OUTCOME_INTERRUPTED,
							 t->outcome == OUTCOME_HTTP && status == 429 ?
							 (delay_ms >= 0 ? delay_ms : retry_after_ms(easy)) : -1);
	}

	if (delay_ms >= 0)
	{
		detach_handle(t);
		t->state = XFER_BACKOFF;
		t->retry_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), delay_ms);
		n_backoff++;
		return;
	}

	complete_transfer(t);
}

/*
 * Makes t's response from its last attempt, releases its handle and
 * header list, and unlinks it.  Allocates in t->cxt.
 */
static void
complete_transfer(PsvcTransfer *t)
{
	PsvcHttpResponse *resp;
	char	   *ctype = NULL;
	instr_time	now;

	resp = MemoryContextAllocZero(t->cxt, sizeof(PsvcHttpResponse));
	if (t->easy != NULL &&
		curl_easy_getinfo(t->easy, CURLINFO_CONTENT_TYPE, &ctype) == CURLE_OK &&
		ctype != NULL)
		resp->content_type = MemoryContextStrdup(t->cxt, ctype);
	if (t->buf == NULL)
	{
		t->buf = MemoryContextAlloc(t->cxt, 1);
		t->cap = 1;
	}
	t->buf[t->len] = '\0';

	resp->status = t->status;
	resp->body = t->buf;
	resp->body_len = t->len;
	resp->retries = t->retries;
	resp->bytes = t->bytes;
	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, t->started);
	resp->elapsed_ms = INSTR_TIME_GET_MILLISEC(now);
	resp->wait_ms = t->wait_ms;
	resp->rl_wait_ms = psvc_rl_waited_ms(t->rl);	/* ratelimit.c */
	resp->url_for_explain = t->description;

	detach_handle(t);
	if (t->headers != NULL)
	{
		curl_slist_free_all(t->headers);
		t->headers = NULL;
	}
	if (t->linked)
	{
		dlist_delete(&t->node);
		t->linked = false;
	}
	t->resp = resp;
	t->state = XFER_DONE;
}

/* Whether the attempt that just ended is retried, by the rule tables. */
static bool
should_retry(PsvcTransfer *t)
{
	bool		any;
	bool		idempotent;

	if (t->retries >= t->max_retries)
		return false;
	if (t->outcome == OUTCOME_HTTP)
	{
		const PsvcStatusRule *rule;

		if (t->status >= 200 && t->status < 300)
			return false;
		rule = status_rule(t->status);
		any = rule->retry_any;
		idempotent = rule->retry_idempotent;
	}
	else
	{
		const PsvcFailureRule *rule = failure_rule(t->outcome);

		any = rule->retry_any;
		idempotent = rule->retry_idempotent;
	}
	return any || (idempotent && t->idempotent);
}

/*
 * Delay before the next attempt: the response's Retry-After when present
 * (capped at the request timeout), else exponential backoff with full
 * jitter (uniform in [0, min(cap, base * 2^retries)]).
 */
static long
backoff_ms(PsvcTransfer *t, CURL *easy)
{
	long		after = -1;
	long		ceiling = PSVC_HTTP_BACKOFF_BASE_MS;
	int			i;

	if (t->outcome == OUTCOME_HTTP)
		after = retry_after_ms(easy);
	if (after >= 0)
		return Min(after, t->request_timeout_ms);

	for (i = 0; i < t->retries && ceiling < PSVC_HTTP_BACKOFF_CAP_MS; i++)
		ceiling *= 2;
	ceiling = Min(ceiling, PSVC_HTTP_BACKOFF_CAP_MS);
	return (long) (pg_prng_double(&pg_global_prng_state) * ceiling);
}

/*
 * The Retry-After header of the response on easy, in milliseconds from
 * now: delay-seconds or an HTTP date.  -1 when absent or unreadable.
 */
static long
retry_after_ms(CURL *easy)
{
	struct curl_header *h;
	curl_off_t	secs;

	if (curl_easy_header(easy, "Retry-After", 0, CURLH_HEADER, -1, &h) == CURLHE_OK)
	{
		const char *v = h->value;

		while (*v == ' ' || *v == '\t')
			v++;
		if (*v >= '0' && *v <= '9')
		{
			long		s = 0;

			while (*v >= '0' && *v <= '9' && s < 86400)
				s = s * 10 + (*v++ - '0');
			return Min(s, 86400L) * 1000;
		}
		else
		{
			time_t		when = curl_getdate(v, NULL);

			if (when == -1)
				return -1;
			return Max((long) (when - time(NULL)), 0L) * 1000;
		}
	}
	/* libcurl without the headers API: its own reading, seconds only */
	if (curl_easy_getinfo(easy, CURLINFO_RETRY_AFTER, &secs) == CURLE_OK && secs > 0)
		return (long) Min(secs, (curl_off_t) 86400) * 1000;
	return -1;
}

static const PsvcStatusRule *
status_rule(long status)
{
	int			i;

	for (i = 0; i < lengthof(status_rules); i++)
		if (status >= status_rules[i].lo && status <= status_rules[i].hi)
			return &status_rules[i];
	elog(ERROR, "no rule for HTTP status %ld", status);
	return NULL;				/* keep compiler quiet */
}

static const PsvcFailureRule *
failure_rule(PsvcOutcome outcome)
{
	int			i;

	for (i = 0; i < lengthof(failure_rules); i++)
		if (failure_rules[i].outcome == outcome)
			return &failure_rules[i];
	elog(ERROR, "no rule for transfer outcome %d", (int) outcome);
	return NULL;				/* keep compiler quiet */
}


/* ---------------------------------------------------------------------
 * Pumping and waiting
 * ---------------------------------------------------------------------
 */

/*
 * Lets every transfer progress without blocking: sockets that are ready,
 * curl's expired timers, completed attempts, due retries.  Runs
 * CHECK_FOR_INTERRUPTS when the progress callback aborted an attempt.
 */
static void
pump(void)
{
	if (multi == NULL || dlist_is_empty(&active_transfers))
		return;

	/* every call into libcurl is followed by collect_finished */
	if (n_backoff > 0)
		start_due_retries();
	if (n_sockets > 0)
		drive_ready_sockets();
	drive_timer();
	collect_finished();

	if (interrupt_seen)
	{
		interrupt_seen = false;
		CHECK_FOR_INTERRUPTS();
	}
}

/* Hands libcurl the sockets that poll(2) says are ready now. */
static void
drive_ready_sockets(void)
{
	struct pollfd local[16];
	struct pollfd *fds = local;
	int			n = n_sockets;
	int			i;
	int			running;

	if (n > lengthof(local))
		fds = palloc(n * sizeof(struct pollfd));
	for (i = 0; i < n; i++)
	{
		fds[i].fd = sockets[i].fd;
		fds[i].events = ((sockets[i].what & CURL_POLL_IN) ? POLLIN : 0) |
			((sockets[i].what & CURL_POLL_OUT) ? POLLOUT : 0);
		fds[i].revents = 0;
	}
	if (poll(fds, n, 0) > 0)
	{
		/* the socket callback may change sockets[]; fds is our copy */
		for (i = 0; i < n; i++)
		{
			int			mask = 0;
			CURLMcode	mrc;

			if (fds[i].revents == 0)
				continue;
			if (fds[i].revents & (POLLIN | POLLHUP))
				mask |= CURL_CSELECT_IN;
			if (fds[i].revents & POLLOUT)
				mask |= CURL_CSELECT_OUT;
			if (fds[i].revents & (POLLERR | POLLNVAL))
				mask |= CURL_CSELECT_ERR;
			mrc = curl_multi_socket_action(multi, fds[i].fd, mask, &running);
			if (mrc != CURLM_OK && mrc != CURLM_BAD_SOCKET)
				elog(ERROR, "libcurl failed: %s", curl_multi_strerror(mrc));
		}
	}
	if (fds != local)
		pfree(fds);
}

/* Runs libcurl's timers when they are due. */
static void
drive_timer(void)
{
	long		ms = -1;
	int			running;

	if (curl_multi_timeout(multi, &ms) == CURLM_OK && ms == 0)
	{
		CURLMcode	mrc = curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT,
												   0, &running);

		if (mrc != CURLM_OK)
			elog(ERROR, "libcurl failed: %s", curl_multi_strerror(mrc));
	}
}

/* Takes libcurl's reports of completed attempts. */
static void
collect_finished(void)
{
	CURLMsg    *msg;
	int			left;

	while ((msg = curl_multi_info_read(multi, &left)) != NULL)
	{
		PsvcTransfer *t = NULL;
		CURLcode	code = msg->data.result;

		if (msg->msg != CURLMSG_DONE)
			continue;
		if (curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **) &t) != CURLE_OK ||
			t == NULL)
			elog(ERROR, "libcurl reported an unknown transfer");
		attempt_finished(t, code);
	}
}

/* Starts the next attempt of every transfer whose backoff is over. */
static void
start_due_retries(void)
{
	dlist_mutable_iter iter;
	TimestampTz now = GetCurrentTimestamp();

	dlist_foreach_modify(iter, &active_transfers)
	{
		PsvcTransfer *t = dlist_container(PsvcTransfer, node, iter.cur);

		if (t->state == XFER_BACKOFF && t->retry_at <= now)
		{
			n_backoff--;
			t->state = XFER_RUNNING;	/* start_attempt sets it again */
			start_attempt(t);
		}
	}
}

/*
 * Sleeps until a socket curl watches is ready, curl's timer or a retry is
 * due, or the latch is set; then resets the latch, hands ready sockets to
 * libcurl and runs CHECK_FOR_INTERRUPTS.
 */
static void
wait_for_activity(void)
{
	WaitEvent	events[16];
	long		timeout = -1;
	int			nevents;
	int			i;
	int			running;

	if (curl_multi_timeout(multi, &timeout) != CURLM_OK)
		timeout = -1;
	if (n_backoff > 0)
	{
		dlist_iter iter;
		TimestampTz now = GetCurrentTimestamp();

		dlist_foreach(iter, &active_transfers)
		{
			PsvcTransfer *t = dlist_container(PsvcTransfer, node, iter.cur);

			if (t->state == XFER_BACKOFF)
			{
				long		ms = TimestampDifferenceMilliseconds(now, t->retry_at);

				if (timeout < 0 || ms < timeout)
					timeout = ms;
			}
		}
	}
	if (timeout < 0 || timeout > PSVC_HTTP_MAX_WAIT_MS)
		timeout = PSVC_HTTP_MAX_WAIT_MS;
	if (timeout == 0)
		return;

	if (sockets_changed || wait_set == NULL)
	{
		if (wait_set != NULL)
		{
			FreeWaitEventSet(wait_set);
			wait_set = NULL;
		}
		sockets_changed = true;	/* until the new set is complete */
		wait_set = CreateWaitEventSet(TopMemoryContext, n_sockets + 2);
		AddWaitEventToSet(wait_set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
		AddWaitEventToSet(wait_set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
		for (i = 0; i < n_sockets; i++)
		{
			uint32		ev = 0;

			if (sockets[i].what & CURL_POLL_IN)
				ev |= WL_SOCKET_READABLE;
			if (sockets[i].what & CURL_POLL_OUT)
				ev |= WL_SOCKET_WRITEABLE;
			if (ev != 0)
				AddWaitEventToSet(wait_set, ev, sockets[i].fd, NULL, NULL);
		}
		sockets_changed = false;
	}

	nevents = WaitEventSetWait(wait_set, timeout, events, lengthof(events),
							   PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	for (i = 0; i < nevents; i++)
	{
		int			mask = 0;
		CURLMcode	mrc;

		if (events[i].events & WL_SOCKET_READABLE)
			mask |= CURL_CSELECT_IN;
		if (events[i].events & WL_SOCKET_WRITEABLE)
			mask |= CURL_CSELECT_OUT;
		if (mask == 0)
			continue;
		mrc = curl_multi_socket_action(multi, events[i].fd, mask, &running);
		if (mrc != CURLM_OK && mrc != CURLM_BAD_SOCKET)
			elog(ERROR, "libcurl failed: %s", curl_multi_strerror(mrc));
	}
	CHECK_FOR_INTERRUPTS();
}


/* ---------------------------------------------------------------------
 * URLs
 * ---------------------------------------------------------------------
 */

/* Appends s percent-encoded: everything but RFC 3986 unreserved. */
static void
append_escaped(StringInfo buf, const char *s)
{
	char	   *e = curl_easy_escape(NULL, s, (int) strlen(s));

	if (e == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	appendStringInfoString(buf, e);
	curl_free(e);
}

/*
 * Appends the path of req (route with each {name} replaced by the
 * encoded value of path parameter name) and its encoded query string.
 */
static void
append_path_and_query(StringInfo buf, const PsvcHttpRequest *req)
{
	const char *p = req->route;
	ListCell   *lc;
	bool		first = true;

	while (*p != '\0')
	{
		const char *end;
		const char *value = NULL;
		size_t		namelen;

		if (*p != '{')
		{
			appendStringInfoChar(buf, *p++);
			continue;
		}
		end = strchr(p, '}');
		if (end == NULL)
			elog(ERROR, "unterminated parameter in route \"%s\"", req->route);
		namelen = end - p - 1;
		foreach(lc, req->path_params)
		{
			PsvcKV	   *kv = (PsvcKV *) lfirst(lc);

			if (strlen(kv->name) == namelen &&
				strncmp(kv->name, p + 1, namelen) == 0)
			{
				value = kv->value;
				break;
			}
		}
		if (value == NULL)
			elog(ERROR, "route \"%s\" lacks a value for path parameter \"%.*s\"",
				 req->route, (int) namelen, p + 1);
		append_escaped(buf, value);
		p = end + 1;
	}

	foreach(lc, req->query)
	{
		PsvcKV	   *kv = (PsvcKV *) lfirst(lc);

		appendStringInfoChar(buf, first ? '?' : '&');
		first = false;
		append_escaped(buf, kv->name);
		if (kv->value != NULL)
		{
			appendStringInfoChar(buf, '=');
			append_escaped(buf, kv->value);
		}
	}
}

/*
 * "METHOD /path?query" as it will be sent, without the base URL: for
 * EXPLAIN, and safe to show (the key is never part of it).  Allocates in
 * CurrentMemoryContext.
 */
char *
psvc_http_describe(const PsvcHttpRequest *req)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%s ", req->method);
	append_path_and_query(&buf, req);
	return buf.data;
}


/* ---------------------------------------------------------------------
 * The interface
 * ---------------------------------------------------------------------
 */

/*
 * Starts req without waiting.  The transfer, its buffers and later its
 * response live in cxt; a reset callback on cxt aborts the transfer and
 * releases its handle when cxt is reset or deleted.  Reads the API key of
 * the current user's mapping (catalog access: call it in a transaction).
 */
PsvcTransfer *
psvc_http_start(const PsvcHttpRequest *req, MemoryContext cxt)
{
	PsvcTransfer *t;
	MemoryContext oldcxt;
	StringInfoData buf;
	char	   *key;

	ensure_multi();

	oldcxt = MemoryContextSwitchTo(cxt);
	t = palloc0(sizeof(PsvcTransfer));
	t->cxt = cxt;
	t->state = XFER_CANCELLED;	/* until the first attempt starts */
	t->release_cb.func = transfer_release;
	t->release_cb.arg = t;
	MemoryContextRegisterResetCallback(cxt, &t->release_cb);

	t->method = pstrdup(req->method);
	t->route = pstrdup(req->route);
	t->servername = pstrdup(req->server->servername ? req->server->servername : "");
	t->idempotent = ((strcmp(req->method, "GET") == 0 ||
					  strcmp(req->method, "HEAD") == 0) && !req->unsafe) ||
		req->retry_unsafe;
	t->return_errors = req->return_errors;
	t->return_unknown = req->return_unknown;
	t->report_transport_errors = req->report_transport_errors;
	t->max_retries = psvc_guc_max_retries;
	t->connect_timeout_ms = psvc_guc_connect_timeout;
	t->request_timeout_ms = psvc_guc_request_timeout;
	if (req->body != NULL)
	{
		t->body = palloc(req->body_len + 1);
		memcpy(t->body, req->body, req->body_len);
		t->body[req->body_len] = '\0';
		t->body_len = req->body_len;
	}

	initStringInfo(&buf);
	append_path_and_query(&buf, req);
	t->url = psprintf("%s%s", req->server->base_url, buf.data);
	t->description = psprintf("%s %s", req->method, buf.data);
	pfree(buf.data);

	/* headers; t->headers is released by the callback whatever happens */
#define PSVC_ADD_HEADER(h) \
	do { \
		struct curl_slist *l_ = curl_slist_append(t->headers, (h)); \
		if (l_ == NULL) \
			ereport(ERROR, \
					(errcode(ERRCODE_OUT_OF_MEMORY), \
					 errmsg("out of memory"))); \
		t->headers = l_; \
	} while (0)

	PSVC_ADD_HEADER("Accept: application/json");
	if (t->body != NULL)
	{
		const char *ctype = req->content_type ? req->content_type : "application/json";

		if (strpbrk(ctype, "\r\n") != NULL)
			elog(ERROR, "invalid content type for %s %s", t->method, t->route);
		PSVC_ADD_HEADER(psprintf("Content-Type: %s", ctype));
	}
	else if (strcmp(t->method, "POST") == 0)
		PSVC_ADD_HEADER("Content-Type:");	/* no form-encoded default */
	PSVC_ADD_HEADER("Expect:");	/* no 100-continue round trip */

	key = psvc_options_api_key(req->server->serverid, GetUserId());
	if (key != NULL)
	{
		char	   *h = psprintf("Authorization: Bearer %s", key);
		struct curl_slist *l = curl_slist_append(t->headers, h);

		explicit_bzero(h, strlen(h));
		explicit_bzero(key, strlen(key));
		pfree(h);
		pfree(key);
		if (l == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory")));
		t->headers = l;
	}
#undef PSVC_ADD_HEADER

	MemoryContextSwitchTo(oldcxt);

	t->rl = psvc_rl_prepare(req, cxt);

	INSTR_TIME_SET_CURRENT(t->started);
	dlist_push_tail(&active_transfers, &t->node);
	t->linked = true;
	start_attempt(t);
	pump();						/* get the connection going */
	return t;
}

/*
 * Lets running transfers progress without blocking: one poll(2) and a
 * look at curl's timer while transfers run, nothing otherwise.  May raise
 * PostgreSQL's cancel error when an interrupt is pending.
 */
void
psvc_http_poll(void)
{
	pump();
}

/*
 * True when psvc_http_finish(t) would not wait.  Does not drive the
 * transfers itself: call psvc_http_poll first.
 */
bool
psvc_http_done(PsvcTransfer *t)
{
	return t->state == XFER_DONE || t->state == XFER_CANCELLED;
}

/*
 * The response of a request that return_unknown gives back instead of
 * raising: status 0, outcome_unknown, and a sentence saying what went
 * wrong (the detail report_failure would have given).  In t's context.
 */
static PsvcHttpResponse *
unknown_outcome(PsvcTransfer *t)
{
	PsvcHttpResponse *resp = t->resp;
	MemoryContext oldcxt = MemoryContextSwitchTo(t->cxt);

	resp->status = 0;
	resp->outcome_unknown = true;
	if (t->outcome == OUTCOME_TIMEOUT)
		resp->failure = psprintf("%s %s timed out after %ld ms.",
								 t->method, t->route, t->request_timeout_ms);
	else
		resp->failure = psprintf("The connection to server \"%s\" was lost during %s %s: %s.",
								 t->servername, t->method, t->route,
								 t->errbuf[0] != '\0' ? t->errbuf :
								 curl_easy_strerror(t->curl_code));
	MemoryContextSwitchTo(oldcxt);
	return resp;
}

/*
 * Waits for t, retrying by the rules, and returns its response (in t's
 * context).  Raises the mapped error on failure unless return_errors and
 * the failure is an HTTP status.  Ctrl-C and statement_timeout interrupt
 * the wait with PostgreSQL's own error.
 */
PsvcHttpResponse *
psvc_http_finish(PsvcTransfer *t)
{
	instr_time	start;
	instr_time	waited;

	if (t->state == XFER_CANCELLED)
		elog(ERROR, "%s %s was cancelled", t->method, t->route);

	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		pump();
		if (t->state != XFER_RUNNING && t->state != XFER_BACKOFF)
			break;
		wait_for_activity();
	}
	INSTR_TIME_SET_CURRENT(waited);
	INSTR_TIME_SUBTRACT(waited, start);
	t->wait_ms += INSTR_TIME_GET_MILLISEC(waited);

	if (t->state == XFER_CANCELLED)
		elog(ERROR, "%s %s was cancelled", t->method, t->route);
	t->resp->wait_ms = t->wait_ms;

	if (t->outcome == OUTCOME_HTTP && t->status >= 200 && t->status < 300)
		return t->resp;
	if (t->outcome == OUTCOME_HTTP && t->return_errors)
		return t->resp;
	if (t->return_unknown && !t->idempotent &&
		(t->outcome == OUTCOME_TIMEOUT || t->outcome == OUTCOME_LOST))
		return unknown_outcome(t);
	if (t->outcome != OUTCOME_HTTP && t->report_transport_errors)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(t->cxt);

		t->resp->status = 0;
		t->resp->error = failure_text(t);
		t->resp->error_sqlstate = failure_rule(t->outcome)->sqlstate;
		MemoryContextSwitchTo(oldcxt);
		return t->resp;
	}
	report_failure(t);
}

/*
 * Aborts t and releases its handle now; its memory goes with its context.
 * A completed transfer keeps its response.
 */
void
psvc_http_cancel(PsvcTransfer *t)
{
	transfer_release(t);
}

/* start + finish, with everything in CurrentMemoryContext. */
PsvcHttpResponse *
psvc_http_request(const PsvcHttpRequest *req)
{
	return psvc_http_finish(psvc_http_start(req, CurrentMemoryContext));
}

/*
 * Counters of this backend's client, for tests and EXPLAIN ANALYZE.
 */
void
psvc_http_counters(PsvcHttpCounters *c)
{
	dlist_iter	iter;

	c->attempts = n_attempts;
	c->connects = n_connects;
	c->idle_handles = pool_len;
	c->busy_handles = handles_out;
	c->sockets = n_sockets;
	c->transfers = 0;
	dlist_foreach(iter, &active_transfers)
		c->transfers++;
}


/* ---------------------------------------------------------------------
 * Errors
 * ---------------------------------------------------------------------
 */

/*
 * At most max bytes of s, made safe for a message: control characters
 * become spaces, bytes that are not valid UTF-8 in a UTF-8 database (and
 * every non-ASCII byte otherwise) become '?'.  Allocates in
 * CurrentMemoryContext.
 */
static char *
sanitize(const char *s, size_t len, size_t max)
{
	StringInfoData buf;
	size_t		i = 0;
	bool		utf8 = (GetDatabaseEncoding() == PG_UTF8);

	initStringInfo(&buf);
	while (i < len && i < max)
	{
		unsigned char c = (unsigned char) s[i];

		if (c < 0x80)
		{
			appendStringInfoChar(&buf, (c < 0x20 || c == 0x7f) ? ' ' : (char) c);
			i++;
		}
		else
		{
			int			l = pg_utf_mblen((const unsigned char *) s + i);

			if (utf8 && i + l <= len && i + l <= max &&
				pg_utf8_islegal((const unsigned char *) s + i, l))
			{
				appendBinaryStringInfo(&buf, s + i, l);
				i += l;
			}
			else
			{
				appendStringInfoChar(&buf, '?');
				i++;
			}
		}
	}
	if (i < len)
		appendStringInfoString(&buf, "...");
	return buf.data;
}

/* A service's message, sanitized, ending with a full stop. */
static char *
sentence(const char *s, size_t max)
{
	char	   *clean = sanitize(s, strlen(s), max);
	size_t		len = strlen(clean);

	if (len > 0 && strchr(".!?", clean[len - 1]) == NULL)
		return psprintf("%s.", clean);
	return clean;
}

/* What the JSON walk of an error body looks for. */
typedef struct ErrorBody
{
	int			depth;
	char	   *field[3];		/* member being read at depths 1 and 2 */
	bool		array[3];		/* depth is an array */
	char	   *error;			/* {"error":"..."} */
	char	   *code;			/* {"error":{"code":...}} */
	char	   *message;		/* {"error":{"message":...}} */
	char	   *title;			/* problem+json */
	char	   *detail;			/* problem+json */
	char	   *top_message;	/* {"message":"..."} */
} ErrorBody;

static void
eb_object_start(void *state)
{
	ErrorBody  *eb = (ErrorBody *) state;

	eb->depth++;
	if (eb->depth < lengthof(eb->field))
	{
		eb->field[eb->depth] = NULL;
		eb->array[eb->depth] = false;
	}
}

static void
eb_array_start(void *state)
{
	ErrorBody  *eb = (ErrorBody *) state;

	eb->depth++;
	if (eb->depth < lengthof(eb->field))
	{
		eb->field[eb->depth] = NULL;
		eb->array[eb->depth] = true;
	}
}

static void
eb_end(void *state)
{
	((ErrorBody *) state)->depth--;
}

static void
eb_field(void *state, char *fname, bool isnull)
{
	ErrorBody  *eb = (ErrorBody *) state;

	if (eb->depth < lengthof(eb->field))
		eb->field[eb->depth] = fname;
}

static void
eb_scalar(void *state, char *token, JsonTokenType type)
{
	ErrorBody  *eb = (ErrorBody *) state;
	const char *f;

	if (type == JSON_TOKEN_NULL)
		return;
	if (eb->depth == 1 && !eb->array[1] && (f = eb->field[1]) != NULL)
	{
		if (strcmp(f, "error") == 0)
			eb->error = token;
		else if (strcmp(f, "title") == 0)
			eb->title = token;
		else if (strcmp(f, "detail") == 0)
			eb->detail = token;
		else if (strcmp(f, "message") == 0)
			eb->top_message = token;
	}
	else if (eb->depth == 2 && !eb->array[1] && !eb->array[2] &&
			 eb->field[1] != NULL && strcmp(eb->field[1], "error") == 0 &&
			 (f = eb->field[2]) != NULL)
	{
		if (strcmp(f, "code") == 0)
			eb->code = token;
		else if (strcmp(f, "message") == 0)
			eb->message = token;
	}
}

/* Nesting depth of a JSON text, strings skipped; stops past limit. */
static int
json_depth(const char *s, size_t len, int limit)
{
	int			depth = 0;
	int			deepest = 0;
	bool		in_string = false;
	size_t		i;

	for (i = 0; i < len && deepest <= limit; i++)
	{
		char		c = s[i];

		if (in_string)
		{
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		}
		else if (c == '"')
			in_string = true;
		else if (c == '{' || c == '[')
		{
			depth++;
			deepest = Max(deepest, depth);
		}
		else if (c == '}' || c == ']')
			depth--;
	}
	return deepest;
}

/*
 * The errdetail sentence for a service's error body: its error code and
 * message when the body has one of the shapes the services use
 * ({"error":{"code","message"}}, {"error":"..."}, problem+json), else the
 * start of the body.  Parses with PostgreSQL's JSON parser, which reports
 * malformed input instead of raising.  Allocates in CurrentMemoryContext.
 */
static char *
service_error_detail(const char *body, size_t len)
{
	ErrorBody	eb;
	const size_t max = PSVC_HTTP_DETAIL_BYTES;

	memset(&eb, 0, sizeof(eb));
	if (len > 0 && len < MaxAllocSize &&
		json_depth(body, len, PSVC_HTTP_ERROR_JSON_DEPTH) <= PSVC_HTTP_ERROR_JSON_DEPTH)
	{
		JsonLexContext *lex;
		JsonSemAction sem;

		memset(&sem, 0, sizeof(sem));
		sem.semstate = &eb;
		sem.object_start = eb_object_start;
		sem.object_end = eb_end;
		sem.array_start = eb_array_start;
		sem.array_end = eb_end;
		sem.object_field_start = eb_field;
		sem.scalar = eb_scalar;
		lex = makeJsonLexContextCstringLen(unconstify(char *, body), (int) len,
										   PG_UTF8, true);
		if (pg_parse_json(lex, &sem) != JSON_SUCCESS)
			memset(&eb, 0, sizeof(eb));
	}

	if (eb.code != NULL && eb.message != NULL)
		return psprintf("The service reported error \"%s\": %s",
						sanitize(eb.code, strlen(eb.code), max),
						sentence(eb.message, max));
	if (eb.code != NULL)
		return psprintf("The service reported error \"%s\".",
						sanitize(eb.code, strlen(eb.code), max));
	if (eb.message != NULL)
		return psprintf("The service reported: %s", sentence(eb.message, max));
	if (eb.error != NULL)
		return psprintf("The service reported: %s", sentence(eb.error, max));
	if (eb.title != NULL && eb.detail != NULL)
		return psprintf("The service reported \"%s\": %s",
						sanitize(eb.title, strlen(eb.title), max),
						sentence(eb.detail, max));
	if (eb.title != NULL || eb.detail != NULL || eb.top_message != NULL)
	{
		const char *m = eb.detail ? eb.detail : eb.title ? eb.title : eb.top_message;

		return psprintf("The service reported: %s", sentence(m, max));
	}
	if (len == 0)
		return pstrdup("The response had no body.");
	return psprintf("The service answered: %s", sanitize(body, len, max));
}

/* The context line of an error: the request, never the key or the URL. */
static char *
request_context(const char *method, const char *route, const char *servername,
				int retries)
{
	if (retries == 1)
		return psprintf("HTTP request %s %s to server \"%s\", retried once",
						method, route, servername);
	if (retries > 1)
		return psprintf("HTTP request %s %s to server \"%s\", retried %d times",
						method, route, servername, retries);
	return psprintf("HTTP request %s %s to server \"%s\"",
					method, route, servername);
}

/*
 * Raises the error for an HTTP status by status_rules[]: the message names
 * method, route template and status, the detail carries the service's
 * error, the context line the request.  Never the key or the URL.
 */
static void
report_status(const char *method, const char *route, const char *servername,
			  long status, const char *body, size_t len, int retries)
{
	const PsvcStatusRule *rule = status_rule(status);
	char	   *context = request_context(method, route, servername, retries);

	ereport(ERROR,
			(errcode(rule->sqlstate),
			 errmsg("%s %s failed with HTTP status %ld", method, route, status),
			 errdetail_internal("%s", service_error_detail(body, len)),
			 rule->hint == HINT_API_KEY ?
			 errhint("Set a valid api_key option on the user mapping for server \"%s\" and the current user.",
					 servername) : 0,
			 rule->hint == HINT_RATE_LIMIT ?
			 errhint("The service's rate limit was still exceeded after %d retries; try again later, or raise partner_svc.max_retries.",
					 retries) : 0,
			 errcontext("%s", context)));
	pg_unreachable();
}

/* Raises the error for t's last attempt, which did not succeed. */
static void
report_failure(PsvcTransfer *t)
{
	const PsvcFailureRule *rule;
	const char *why;
	const char *unknown;
	char	   *context;

	if (t->outcome == OUTCOME_HTTP)
		report_status(t->method, t->route, t->servername, t->status,
					  t->resp->body, t->resp->body_len, t->retries);

	rule = failure_rule(t->outcome);
	why = t->errbuf[0] != '\0' ? t->errbuf : curl_easy_strerror(t->curl_code);
	unknown = t->idempotent ? NULL :
		"The outcome of the request is unknown: the service may have carried it out.";
	context = request_context(t->method, t->route, t->servername, t->retries);

	switch (t->outcome)
	{
		case OUTCOME_CONNECT:
			ereport(ERROR,
					(errcode(rule->sqlstate),
					 errmsg("could not connect to server \"%s\" for %s %s",
							t->servername, t->method, t->route),
					 errdetail_internal("libcurl reported: %s.", why),
					 errhint("Check the base_url option of server \"%s\" and that the service is running.",
							 t->servername),
					 errcontext("%s", context)));
			break;
		case OUTCOME_CONNECT_TIMEOUT:
			ereport(ERROR,
					(errcode(rule->sqlstate),
					 errmsg("could not connect to server \"%s\" for %s %s within %ld ms",
							t->servername, t->method, t->route, t->connect_timeout_ms),
					 errhint("The limit is set by partner_svc.connect_timeout."),
					 errcontext("%s", context)));
			break;
		case OUTCOME_TIMEOUT:
			ereport(ERROR,
					(errcode(rule->sqlstate),
					 errmsg("%s %s timed out after %ld ms",
							t->method, t->route, t->request_timeout_ms),
					 unknown ? errdetail("%s", unknown) : 0,
					 errhint("The limit is set by partner_svc.request_timeout."),
					 errcontext("%s", context)));
			break;
		case OUTCOME_LOST:
			ereport(ERROR,
					(errcode(rule->sqlstate),
					 errmsg("connection to server \"%s\" was lost during %s %s",
							t->servername, t->method, t->route),
					 errdetail_internal("libcurl reported: %s.%s%s", why,
										unknown ? " " : "", unknown ? unknown : ""),
					 errcontext("%s", context)));
			break;
		case OUTCOME_TOO_BIG:
			ereport(ERROR,
					(errcode(rule->sqlstate),
					 errmsg("response to %s %s is larger than %zu bytes",
							t->method, t->route, PSVC_HTTP_MAX_BODY),
					 errcontext("%s", context)));
			break;
		case OUTCOME_NO_MEMORY:
			ereport(ERROR,
					(errcode(rule->sqlstate),
					 errmsg("out of memory"),
					 errdetail("Failed while receiving the response to %s %s.",
							   t->method, t->route),
					 errcontext("%s", context)));
			break;
		default:
			ereport(ERROR,
					(errcode(rule->sqlstate),
					 errmsg("%s %s failed", t->method, t->route),
					 errdetail_internal("libcurl reported: %s.", why),
					 errcontext("%s", context)));
			break;
	}
	pg_unreachable();
}

/*
 * One sentence on a failure without an HTTP status, for callers that set
 * report_transport_errors: what happened and, when the request may have
 * been carried out, that its outcome is unknown.  Allocates in
 * CurrentMemoryContext.
 */
static char *
failure_text(PsvcTransfer *t)
{
	const char *why = t->errbuf[0] != '\0' ? t->errbuf : curl_easy_strerror(t->curl_code);
	const char *unknown = t->idempotent ? "" :
		" The outcome of the request is unknown: the service may have carried it out.";

	switch (t->outcome)
	{
		case OUTCOME_CONNECT:
			return psprintf("Could not connect: libcurl reported: %s.", why);
		case OUTCOME_CONNECT_TIMEOUT:
			return psprintf("Could not connect within %ld ms.", t->connect_timeout_ms);
		case OUTCOME_TIMEOUT:
			return psprintf("Timed out after %ld ms.%s", t->request_timeout_ms, unknown);
		case OUTCOME_LOST:
			return psprintf("The connection was lost: libcurl reported: %s.%s", why, unknown);
		case OUTCOME_TOO_BIG:
			return psprintf("The response was larger than %zu bytes.", PSVC_HTTP_MAX_BODY);
		case OUTCOME_NO_MEMORY:
			return pstrdup("Out of memory while receiving the response.");
		default:
			return psprintf("libcurl reported: %s.", why);
	}
}

/*
 * For callers that asked for return_errors (or report_transport_errors)
 * and then decided the response is an error after all: raises what
 * psvc_http_finish would have raised (for status 0, the same SQLSTATE
 * with the failure's sentence as detail).
 */
void
psvc_http_raise(const PsvcHttpRequest *req, const PsvcHttpResponse *resp)
{
	const char *servername = req->server->servername ? req->server->servername : "";

	if (resp->status == 0 && resp->error != NULL)
		ereport(ERROR,
				(errcode(resp->error_sqlstate),
				 errmsg("%s %s to server \"%s\" failed", req->method, req->route,
						servername),
				 errdetail_internal("%s", resp->error),
				 errcontext("%s", request_context(req->method, req->route,
												  servername, resp->retries))));
	report_status(req->method, req->route,
				  req->server->servername ? req->server->servername : "",
				  resp->status, resp->body, resp->body_len, resp->retries);
}
