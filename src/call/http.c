/*-------------------------------------------------------------------------
 *
 * http.c
 *		  The HTTP client core of partner_svc: requests to the partner
 *		  services over libcurl, their attempts and retries, and the
 *		  public psvc_http_* interface.  The multi handle and the waiting
 *		  are in http_wait.c, the mapping of failures to PostgreSQL errors
 *		  in http_errors.c, what the three share in http_int.h.
 *
 * Connections.  All transfers of a backend run in its one libcurl multi
 * handle (http_wait.c) and share its connection cache: a connection is
 * kept alive across requests, pages and scans (a request that is not safe
 * to repeat opens a fresh one: see start_attempt).
 *
 * Progress.  Nothing runs in the background: transfers progress whenever a
 * psvc_http_* function is called ("pumping"); only psvc_http_finish()
 * blocks.  How, and how the wait set is kept, is in http_wait.c.
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
 * status_rules[] and failure_rules[] of http_errors.c (also
 * docs/errors.md): 429 for every method (the service did nothing),
 * failures before a connection existed for every method (nothing was
 * sent), and 5xx, timeouts and lost connections only for GET or when the caller sets retry_unsafe.  A GET
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
 * Paths.  Every path and query string is built by http_url.c from the
 * route template and plain values, which checks the path values against
 * the documents first (22023) and encodes every value; CURLOPT_PATH_AS_IS
 * keeps libcurl from removing dot segments.
 *
 * Text.  Request bodies are text in the server encoding and are sent as
 * UTF-8 (psvc_http_start); response bodies are UTF-8 and are verified and
 * converted to the server encoding once, when the caller takes the
 * response (psvc_http_finish, response_to_server).  No other code of the
 * extension converts a body.
 *
 * Bounds.  A response body is read up to partner_svc.max_response_size,
 * or a server's lower max_response_size: the buffer grows with the bytes
 * received, never with a claimed Content-Length, and a larger claim or
 * body ends the attempt (54000, naming the route and the setting).
 *
 * Cache.  psvc_http_start asks the response cache (cache.c) about every
 * safe GET before the rate limiter: a hit completes the transfer at once
 * with the cached answer, nothing sent; an answer past its TTL that has an
 * ETag is sent for with If-None-Match and used on 304; a 2xx answer is
 * stored when the caller takes it.  Every request that writes bumps its
 * server's generation when it starts, completes or is abandoned, so no
 * read cached before it is served after it.
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
 *		  src/call/http.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include <curl/curl.h>

#include "common/pg_prng.h"
#include "mb/pg_wchar.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "guc.h"
#include "http_int.h"
#include "options.h"
#include "partner_svc.h"
#include "xact_writes.h"

/* Exponential backoff: base << attempt, capped, then a random part of it. */
#define PSVC_HTTP_BACKOFF_BASE_MS	100
#define PSVC_HTTP_BACKOFF_CAP_MS	5000

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

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp);
static int	progress_cb(void *userp, curl_off_t dltotal, curl_off_t dlnow,
						curl_off_t ultotal, curl_off_t ulnow);
static void transfer_release(void *arg);
static void complete_transfer(PsvcTransfer *t);
static long backoff_ms(PsvcTransfer *t, CURL *easy);
static long retry_after_ms(CURL *easy);
static bool should_retry(PsvcTransfer *t);
static void response_to_server(PsvcTransfer *t);
static void response_error_context(void *arg);
static PsvcHttpResponse *unknown_outcome(PsvcTransfer *t);
static void copy_connection_settings(PsvcTransfer *t, const PsvcServer *server);
static void set_connection_options(PsvcTransfer *t, CURL *easy);
static void start_attempt(PsvcTransfer *t);
static void attempt_finished(PsvcTransfer *t, CURLcode code);

/* What the wait loop (http_wait.c) calls back. */
static const PsvcHttpDriver http_driver = {
	.start_attempt = start_attempt,
	.attempt_finished = attempt_finished,
};

/* curl_easy_setopt that cannot fail silently. */
#define PSVC_SETOPT(easy, opt, val) \
	do { \
		if (curl_easy_setopt((easy), (opt), (val)) != CURLE_OK) \
			elog(ERROR, "could not set libcurl option %s", #opt); \
	} while (0)


/* ---------------------------------------------------------------------
 * Transfers' handles
 * ---------------------------------------------------------------------
 */

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
	/* an abandoned write may still be carried out: cached reads are stale */
	if (t->writes && (t->state == XFER_RUNNING || t->state == XFER_BACKOFF))
		psvc_cache_note_write(t->serverid);
	psvc_http_detach_handle(t);
	if (t->headers != NULL)
	{
		curl_slist_free_all(t->headers);
		t->headers = NULL;
	}
	psvc_http_unlink(t);
	if (t->state != XFER_DONE)
		t->state = XFER_CANCELLED;
}


/* ---------------------------------------------------------------------
 * libcurl callbacks: record only, never raise
 * ---------------------------------------------------------------------
 */

/*
 * CURLOPT_WRITEFUNCTION: appends to the transfer's buffer in its context.
 * The buffer grows with what was received (doubling), never with what the
 * response claims (Content-Length), and never beyond t->max_body: a
 * response over it ends the attempt (too_big).  Allocates with
 * MCXT_ALLOC_NO_OOM and reports failure by returning 0, which makes
 * libcurl end the attempt with CURLE_WRITE_ERROR.
 */
static size_t
write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
	PsvcTransfer *t = (PsvcTransfer *) userp;
	size_t		n = size * nmemb;

	if (n > t->max_body - t->len)
	{
		t->too_big = true;
		return 0;
	}
	if (t->len + n + 1 > t->cap)
	{
		size_t		newcap = Max(t->cap * 2, (size_t) 8192);
		char	   *newbuf;

		newcap = Max(newcap, t->len + n + 1);
		newcap = Min(newcap, t->max_body + 1);

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
 * Connection settings: timeouts, retries, TLS, proxy
 * ---------------------------------------------------------------------
 */

/*
 * Copies into t what the server says about how to connect: the effective
 * timeouts and retries (its options, else the GUCs, as they are now) and
 * its TLS and proxy options.  Allocates in CurrentMemoryContext, which is
 * the transfer's.
 */
static void
copy_connection_settings(PsvcTransfer *t, const PsvcServer *server)
{
	t->max_retries = psvc_options_setting(server, PSVC_SETTING_MAX_RETRIES);
	t->connect_timeout_ms = psvc_options_setting(server, PSVC_SETTING_CONNECT_TIMEOUT);
	t->request_timeout_ms = psvc_options_setting(server, PSVC_SETTING_REQUEST_TIMEOUT);
	t->ssl_ca_file = server->ssl_ca_file ? pstrdup(server->ssl_ca_file) : NULL;
	t->ssl_cert_file = server->ssl_cert_file ? pstrdup(server->ssl_cert_file) : NULL;
	t->ssl_key_file = server->ssl_key_file ? pstrdup(server->ssl_key_file) : NULL;
	t->proxy = server->proxy ? pstrdup(server->proxy) : NULL;
}

/*
 * Sets up easy (fresh from curl_easy_reset) for t's server: timeouts,
 * certificate verification, client certificate, proxy.
 *
 * Verification of the service's certificate and host name is always on;
 * a private CA is trusted with ssl_ca_file, never by turning it off.
 *
 * Proxies.  libcurl reads http_proxy, HTTPS_PROXY, ALL_PROXY and no_proxy
 * from the environment of the process, here the postmaster's, unless told
 * otherwise, which would send requests (and their Authorization header)
 * to a proxy that nobody configured for the server.  So without the
 * option "proxy" the proxy is the empty string, which libcurl takes as
 * "none"; with a URL it is that proxy, and no_proxy is emptied so that the
 * environment cannot exempt a host; only "environment" leaves both unset.
 * libcurl keeps connections made through different proxies or with
 * different TLS settings apart in its cache.
 */
static void
set_connection_options(PsvcTransfer *t, CURL *easy)
{
	PSVC_SETOPT(easy, CURLOPT_CONNECTTIMEOUT_MS, t->connect_timeout_ms);
	PSVC_SETOPT(easy, CURLOPT_TIMEOUT_MS, t->request_timeout_ms);

	PSVC_SETOPT(easy, CURLOPT_SSL_VERIFYPEER, 1L);
	PSVC_SETOPT(easy, CURLOPT_SSL_VERIFYHOST, 2L);
	PSVC_SETOPT(easy, CURLOPT_PROXY_SSL_VERIFYPEER, 1L);
	PSVC_SETOPT(easy, CURLOPT_PROXY_SSL_VERIFYHOST, 2L);
	if (t->ssl_ca_file != NULL)
		PSVC_SETOPT(easy, CURLOPT_CAINFO, t->ssl_ca_file);
	if (t->ssl_cert_file != NULL)
	{
		PSVC_SETOPT(easy, CURLOPT_SSLCERT, t->ssl_cert_file);
		PSVC_SETOPT(easy, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (t->ssl_key_file != NULL)
	{
		PSVC_SETOPT(easy, CURLOPT_SSLKEY, t->ssl_key_file);
		PSVC_SETOPT(easy, CURLOPT_SSLKEYTYPE, "PEM");
	}

	if (t->proxy == NULL)
		PSVC_SETOPT(easy, CURLOPT_PROXY, "");
	else if (strcmp(t->proxy, "environment") != 0)
	{
		PSVC_SETOPT(easy, CURLOPT_PROXY, t->proxy);
		PSVC_SETOPT(easy, CURLOPT_NOPROXY, "");
	}
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

	Assert(t->easy == NULL);

	/* rate limiter: one unit of budget per attempt, may wait (ratelimit.c) */
	psvc_rl_acquire(t->rl);

	easy = psvc_http_pool_get();
	t->easy = easy;

	t->len = 0;
	t->too_big = false;
	t->no_memory = false;
	t->interrupted = false;
	t->errbuf[0] = '\0';

	PSVC_SETOPT(easy, CURLOPT_URL, t->url);
	/* the path is sent as http_url.c built it: no dot segment removed */
	PSVC_SETOPT(easy, CURLOPT_PATH_AS_IS, 1L);
	PSVC_SETOPT(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	PSVC_SETOPT(easy, CURLOPT_PRIVATE, (void *) t);
	PSVC_SETOPT(easy, CURLOPT_ERRORBUFFER, t->errbuf);
	PSVC_SETOPT(easy, CURLOPT_NOSIGNAL, 1L);
	set_connection_options(t, easy);
	PSVC_SETOPT(easy, CURLOPT_USERAGENT, "partner_svc/" PSVC_VERSION);
	PSVC_SETOPT(easy, CURLOPT_HTTPHEADER, t->headers);
	/* a larger Content-Length fails the attempt before any body is read */
	PSVC_SETOPT(easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) t->max_body);
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

	psvc_http_add_handle(t);
	t->state = XFER_RUNNING;
}

/*
 * Called by the pump (http_wait.c) when libcurl reports an attempt of t done:
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
		psvc_http_note_interrupt();
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
		psvc_http_schedule_retry(t, delay_ms);
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
	resp->cache_miss = t->cache != NULL;
	/* the answer's ETag, kept with it by the cache for a revalidation */
	if (t->cache != NULL && t->easy != NULL && t->outcome == OUTCOME_HTTP)
	{
		struct curl_header *h;

		if (curl_easy_header(t->easy, "ETag", 0, CURLH_HEADER, -1, &h) == CURLHE_OK &&
			h->value != NULL && strlen(h->value) < 256)
			t->etag = MemoryContextStrdup(t->cxt, h->value);
	}
	/* the service has acted on a write: what was cached before is stale */
	if (t->writes)
		psvc_cache_note_write(t->serverid);

	psvc_http_detach_handle(t);
	if (t->headers != NULL)
	{
		curl_slist_free_all(t->headers);
		t->headers = NULL;
	}
	psvc_http_unlink(t);
	t->resp = resp;
	t->state = XFER_DONE;
}

/*
 * Completes t with an answer of the response cache (allocated in t->cxt by
 * cache.c): no handle, no lease, nothing sent.
 */
static void
complete_from_cache(PsvcTransfer *t, const PsvcCachedAnswer *a)
{
	PsvcHttpResponse *resp = MemoryContextAllocZero(t->cxt, sizeof(PsvcHttpResponse));

	if (t->headers != NULL)
	{
		curl_slist_free_all(t->headers);
		t->headers = NULL;
	}
	resp->status = a->status;
	resp->body = a->body;
	resp->body_len = a->len;
	resp->content_type = a->content_type;
	resp->url_for_explain = t->description;
	resp->from_cache = true;
	resp->decoded = a->decoded;
	resp->decoded_len = a->decoded_len;
	resp->cache_probe = t->cache;
	resp->converted = true;		/* stored in this database's encoding */
	t->outcome = OUTCOME_HTTP;
	t->status = a->status;
	t->resp = resp;
	t->state = XFER_DONE;
}

/*
 * The service answered 304 Not Modified to t's If-None-Match: t's response
 * becomes the stale answer it confirmed (sent, but not transferred again),
 * and the cache entry is fresh again.
 */
static void
complete_revalidated(PsvcTransfer *t)
{
	PsvcHttpResponse *resp = t->resp;

	resp->status = t->stale->status;
	resp->body = t->stale->body;
	resp->body_len = t->stale->len;
	resp->content_type = t->stale->content_type;
	resp->converted = true;		/* stored in this database's encoding */
	resp->decoded = t->stale->decoded;
	resp->decoded_len = t->stale->decoded_len;
	resp->cache_probe = t->cache;
	t->status = t->stale->status;
	psvc_cache_refresh(t->cache);
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
		rule = psvc_http_status_rule(t->status);
		any = rule->retry_any;
		idempotent = rule->retry_idempotent;
	}
	else
	{
		const PsvcFailureRule *rule = psvc_http_failure_rule(t->outcome);

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

/*
 * Appends header line h (copied by libcurl, which mallocs) to t's list;
 * false when libcurl is out of memory, the list unchanged.
 */
static bool
try_add_header(PsvcTransfer *t, const char *h)
{
	struct curl_slist *l = curl_slist_append(t->headers, h);

	if (l == NULL)
		return false;
	t->headers = l;
	return true;
}

static void
header_oom(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("out of memory")));
}

/* Appends header line h to t's list; raises when out of memory. */
static void
add_header(PsvcTransfer *t, const char *h)
{
	if (!try_add_header(t, h))
		header_oom();
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
	PsvcCachedAnswer answer;
	PsvcCacheFound found = PSVC_CACHE_MISS;

	/* every request is an operation of the catalogue (catalog.c) */
	if (req->op == NULL)
		elog(ERROR, "request %s %s names no operation of the catalogue",
			 req->method, req->route);
	psvc_http_ensure_multi(&http_driver);

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
	t->writes = !((strcmp(req->method, "GET") == 0 ||
					strcmp(req->method, "HEAD") == 0) && !req->unsafe) &&
		!req->retry_unsafe;		/* repeatable without effect (validate) */
	t->idempotent = ((strcmp(req->method, "GET") == 0 ||
					  strcmp(req->method, "HEAD") == 0) && !req->unsafe) ||
		req->retry_unsafe;
	t->return_errors = req->return_errors;
	t->return_unknown = req->return_unknown;
	t->report_transport_errors = req->report_transport_errors;
	copy_connection_settings(t, req->server);

	/* the bound on the response: the GUC, or the server's lower option */
	t->max_body = (size_t) psvc_guc_max_response_size;
	t->max_body_setting = "partner_svc.max_response_size";
	if (req->server->max_response_size > 0 &&
		(size_t) req->server->max_response_size < t->max_body)
	{
		t->max_body = (size_t) req->server->max_response_size;
		t->max_body_setting = psprintf("max_response_size of server \"%s\"",
									   t->servername);
	}
	t->max_body = Min(t->max_body, PSVC_HTTP_MAX_BODY);

	/* checked and encoded before anything is sent (http_url.c) */
	initStringInfo(&buf);
	psvc_http_append_path(&buf, req, true);
	if (strlen(req->server->base_url) + buf.len > PSVC_HTTP_MAX_URL)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("request URL of %s %s is too long", req->method, req->route),
				 errdetail("The URL would have %zu bytes; the limit is %d.",
						   strlen(req->server->base_url) + buf.len, PSVC_HTTP_MAX_URL),
				 errhint("Nothing was sent to the service.")));
	t->url = psprintf("%s%s", req->server->base_url, buf.data);
	t->description = psprintf("%s %s", req->method, buf.data);
	pfree(buf.data);

	/*
	 * The body: text in the server encoding, sent as UTF-8, the documents'
	 * wire format.  This is the one conversion of request bodies.
	 */
	if (req->body != NULL)
	{
		const char *utf8 = req->body;

		if (GetDatabaseEncoding() != PG_UTF8 && req->body_len > 0)
		{
			if (req->body_len >= MaxAllocSize ||
				memchr(req->body, '\0', req->body_len) != NULL)
				elog(ERROR, "request body of %s %s is not text", req->method, req->route);
			utf8 = pg_server_to_any(req->body, (int) req->body_len, PG_UTF8);
		}
		if (utf8 != req->body)
		{
			t->body = (char *) utf8;
			t->body_len = strlen(utf8);
		}
		else
		{
			t->body = palloc(req->body_len + 1);
			memcpy(t->body, req->body, req->body_len);
			t->body[req->body_len] = '\0';
			t->body_len = req->body_len;
		}
	}

	/*
	 * The response cache first: a hit needs no header, no API key, no rate
	 * limiter and no network (cache.c); an answer past its TTL that has an
	 * ETag is revalidated (below).
	 */
	t->serverid = req->server->serverid;
	t->cache = psvc_cache_probe(req, t->url, cxt);
	if (t->cache != NULL)
		found = psvc_cache_lookup(t->cache, &answer);
	if (found == PSVC_CACHE_HIT)
	{
		MemoryContextSwitchTo(oldcxt);
		INSTR_TIME_SET_CURRENT(t->started);
		complete_from_cache(t, &answer);
		return t;
	}

	/*
	 * headers; t->headers is released by the callback whatever happens, and
	 * the key leaves our memory before anything can raise
	 */
	key = psvc_options_api_key(req->server);
	if (key != NULL)
	{
		char	   *h = psprintf("Authorization: Bearer %s", key);
		bool		added = try_add_header(t, h);

		explicit_bzero(h, strlen(h));
		explicit_bzero(key, strlen(key));
		pfree(h);
		pfree(key);
		if (!added)
			header_oom();
	}
	add_header(t, "Accept: application/json");
	if (t->body != NULL)
	{
		const char *ctype = req->content_type ? req->content_type : "application/json";

		if (strpbrk(ctype, "\r\n") != NULL)
			elog(ERROR, "invalid content type for %s %s", t->method, t->route);
		add_header(t, psprintf("Content-Type: %s", ctype));
	}
	else if (strcmp(t->method, "POST") == 0)
		add_header(t, "Content-Type:");	/* no form-encoded default */
	add_header(t, "Expect:");	/* no 100-continue round trip */
	if (found == PSVC_CACHE_STALE &&
		strspn(answer.etag, "!#$%&'()*+,-./0123456789:;<=>?@"
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~\" ")
		== strlen(answer.etag))
	{
		add_header(t, psprintf("If-None-Match: %s", answer.etag));
		t->stale = palloc(sizeof(PsvcCachedAnswer));
		*t->stale = answer;
	}

	MemoryContextSwitchTo(oldcxt);

	/* a write: what other requests cache from now on may be stale */
	if (t->writes)
		psvc_cache_note_write(t->serverid);

	t->rl = psvc_rl_prepare(req, cxt);

	INSTR_TIME_SET_CURRENT(t->started);
	psvc_http_link(t);
	start_attempt(t);
	psvc_http_pump();						/* get the connection going */
	return t;
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
 * wrong (the detail psvc_http_report_failure would have given).  In t's context.
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

/* Names the response in errors about its encoding. */
static void
response_error_context(void *arg)
{
	PsvcTransfer *t = (PsvcTransfer *) arg;

	errcontext("response to %s %s from server \"%s\"", t->method, t->route,
			   t->servername);
}

/*
 * Converts the body of t's response, UTF-8 as the documents and RFC 8259
 * say, to the server encoding, in place (t's context): the one conversion
 * of every response, for tables and functions alike.  A successful
 * response that is not valid UTF-8, or holds a character the server
 * encoding lacks, raises PostgreSQL's error (22021, 22P05) naming the
 * request.  An error response is only read for its detail, so it never
 * raises: bytes that are not valid UTF-8, and outside a UTF-8 database
 * every byte beyond ASCII, become '?'.  Runs once per response.
 */
static void
response_to_server(PsvcTransfer *t)
{
	PsvcHttpResponse *resp = t->resp;
	MemoryContext oldcxt;
	ErrorContextCallback errcallback;
	char	   *conv;

	if (resp->body_len == 0 || resp->converted)
		return;
	resp->converted = true;
	oldcxt = MemoryContextSwitchTo(t->cxt);
	if (t->status < 200 || t->status > 299)
	{
		int			enc = GetDatabaseEncoding();

		if (!pg_verify_mbstr(PG_UTF8, resp->body, (int) resp->body_len, true) ||
			(enc != PG_UTF8 && enc != PG_SQL_ASCII))
		{
			for (size_t i = 0; i < resp->body_len; i++)
				if ((unsigned char) resp->body[i] >= 0x80 || resp->body[i] == '\0')
					resp->body[i] = '?';
		}
		MemoryContextSwitchTo(oldcxt);
		return;
	}
	if (resp->body_len >= MaxAllocSize)
		elog(ERROR, "response body of %zu bytes", resp->body_len);

	errcallback.callback = response_error_context;
	errcallback.arg = t;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;
	conv = pg_any_to_server(resp->body, (int) resp->body_len, PG_UTF8);
	error_context_stack = errcallback.previous;
	if (conv != resp->body)
	{
		pfree(resp->body);
		resp->body = conv;
		resp->body_len = strlen(conv);
		t->buf = NULL;
		t->cap = 0;
		t->len = 0;
	}
	MemoryContextSwitchTo(oldcxt);
}

/* Drives the transfers until t is done (interruptibly). */
static void
wait_for(PsvcTransfer *t)
{
	for (;;)
	{
		psvc_http_pump();
		if (t->state != XFER_RUNNING && t->state != XFER_BACKOFF)
			break;
		psvc_http_wait();
	}
}

/*
 * wait_for, for a request that changes state: when the statement is
 * cancelled meanwhile (57014), the request may already have been carried
 * out, so the error's detail says the outcome is unknown and how to check,
 * and the change is counted as one a rollback does not undo.
 */
static void
wait_for_write(PsvcTransfer *t)
{
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		wait_for(t);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		psvc_xact_note_write(t->method, t->route, true);
		if (edata->sqlerrcode != ERRCODE_QUERY_CANCELED || edata->detail != NULL)
		{
			FreeErrorData(edata);
			PG_RE_THROW();
		}
		FlushErrorState();
		edata->detail = psprintf("The statement was cancelled while %s %s was in flight: the outcome of the request is unknown, the service may have carried it out. "
								 "Read the table or object again (SELECT, or the function that shows its state) to find out.",
								 t->method, t->route);
		ReThrowError(edata);
	}
	PG_END_TRY();
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
	if (t->writes)
		wait_for_write(t);
	else
		wait_for(t);
	INSTR_TIME_SET_CURRENT(waited);
	INSTR_TIME_SUBTRACT(waited, start);
	t->wait_ms += INSTR_TIME_GET_MILLISEC(waited);

	if (t->state == XFER_CANCELLED)
		elog(ERROR, "%s %s was cancelled", t->method, t->route);
	t->resp->wait_ms = t->wait_ms;

	if (t->writes && ((t->outcome == OUTCOME_HTTP && t->status >= 200 && t->status < 300) ||
					  (!t->idempotent && (t->outcome == OUTCOME_TIMEOUT || t->outcome == OUTCOME_LOST))))
		psvc_xact_note_write(t->method, t->route, t->outcome != OUTCOME_HTTP);
	if (t->outcome == OUTCOME_HTTP && t->status == 304 && t->stale != NULL)
	{
		complete_revalidated(t);
		return t->resp;
	}
	if (t->outcome == OUTCOME_HTTP && t->status >= 200 && t->status < 300)
	{
		response_to_server(t);
		/*
		 * Kept once converted: an entry is read only in its own database,
		 * and an answer that failed to convert is never kept.
		 */
		if (t->cache != NULL && !t->resp->from_cache)
		{
			psvc_cache_store(t->cache, t->resp->body, t->resp->body_len,
							 t->status, t->resp->content_type, t->etag);
			t->resp->cache_probe = t->cache;
		}
		return t->resp;
	}
	if (t->outcome == OUTCOME_HTTP && t->return_errors)
	{
		response_to_server(t);
		return t->resp;
	}
	if (t->return_unknown && !t->idempotent &&
		(t->outcome == OUTCOME_TIMEOUT || t->outcome == OUTCOME_LOST))
		return unknown_outcome(t);
	if (t->outcome != OUTCOME_HTTP && t->report_transport_errors)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(t->cxt);

		t->resp->status = 0;
		t->resp->error = psvc_http_failure_text(t);
		t->resp->error_sqlstate = psvc_http_failure_rule(t->outcome)->sqlstate;
		MemoryContextSwitchTo(oldcxt);
		return t->resp;
	}
	psvc_http_report_failure(t);
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

size_t
psvc_http_decoded_room(const PsvcHttpResponse *resp)
{
	return resp->cache_probe != NULL ? psvc_cache_decoded_room(resp->cache_probe) : 0;
}

void
psvc_http_keep_decoded(PsvcHttpResponse *resp, const char *page, size_t len)
{
	if (resp->cache_probe != NULL)
		psvc_cache_keep_decoded(resp->cache_probe, page, len);
}

/* start + finish, with everything in CurrentMemoryContext. */
PsvcHttpResponse *
psvc_http_request(const PsvcHttpRequest *req)
{
	return psvc_http_finish(psvc_http_start(req, CurrentMemoryContext));
}
