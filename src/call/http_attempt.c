/*-------------------------------------------------------------------------
 *
 * http_attempt.c
 *		  One attempt of a transfer in libcurl: the easy handle set up from
 *		  the transfer and its server, libcurl's callbacks, and what
 *		  happens when the attempt ends (the outcome, the retry decision,
 *		  the backoff).  Part of the call module's transport (http_int.h).
 *
 * Retries.  Decided when an attempt completes, by the rules in
 * status_rules[] and failure_rules[] of http_errors.c (also
 * docs/errors.md): 429 for every operation (the service did nothing),
 * failures before a connection existed for every operation (nothing was
 * sent), and 5xx, timeouts and lost connections only for an operation
 * whose row of the catalogue is safe (a GET that changes nothing, or a
 * POST that only checks).  A GET that changes state (the scheduler's run,
 * stop, clone, email...) has a row that is not safe and is treated like
 * a POST.  The delay is the response's Retry-After when it has one
 * (capped at the request timeout), otherwise exponential backoff with
 * full jitter.  A write that is not retried after a timeout or a lost
 * connection has an unknown outcome: its result is a lost answer
 * (PSVC_CALL_LOST), which a caller that can find out what happened
 * settles (functions_settle.c).
 *
 * Connections.  Requests that are not idempotent always open a new
 * connection (CURLOPT_FRESH_CONNECT): on a reused connection that closes
 * without an answer, libcurl silently sends the request again, which
 * would repeat a state change the service may have made.
 *
 * Callbacks.  No callback of libcurl ever raises an error or allocates
 * memory in a way that could: callbacks only record what happened, and
 * the pump (http_wait.c) acts on it after libcurl returns.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/http_attempt.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include <curl/curl.h>

#include "common/pg_prng.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "http_int.h"
#include "inflight.h"
#include "options.h"
#include "partner_svc.h"

/* Exponential backoff: base << attempt, capped, then a random part of it. */
#define PSVC_HTTP_BACKOFF_BASE_MS	100
#define PSVC_HTTP_BACKOFF_CAP_MS	5000

/*
 * The longest Retry-After honoured, in either form (seconds or an HTTP
 * date): a day.  A 429 blocks its key that long at most (ratelimit.c),
 * and so at the fleet's coordinator, whatever date a service names.
 */
#define PSVC_HTTP_RETRY_AFTER_MAX_S	86400L

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
static long backoff_ms(PsvcTransfer *t, CURL *easy);
static long retry_after_ms(CURL *easy);
static bool should_retry(PsvcTransfer *t);

/* curl_easy_setopt that cannot fail silently. */
#define PSVC_SETOPT(easy, opt, val) \
	do { \
		if (curl_easy_setopt((easy), (opt), (val)) != CURLE_OK) \
			elog(ERROR, "could not set libcurl option %s", #opt); \
	} while (0)

/* The largest first buffer a response's Content-Length may ask for. */
#define PSVC_HTTP_FIRST_BUFFER_MAX	((curl_off_t) 65536)

/* ---------------------------------------------------------------------
 * libcurl callbacks: record only, never raise
 * ---------------------------------------------------------------------
 */

/*
 * CURLOPT_WRITEFUNCTION: appends to the transfer's buffer in its context.
 * The buffer grows with what was received (doubling), and never beyond
 * t->max_body: a response over it ends the attempt (too_big).  What the
 * response claims (Content-Length) sizes only the first buffer, and only
 * up to PSVC_HTTP_FIRST_BUFFER_MAX, so a claim costs no more memory than
 * a small answer, while a page of a list (tens of kB) is received into
 * one buffer instead of being copied at every doubling.  Allocates with
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
		curl_off_t	claimed;

		if (t->cap == 0 && t->easy != NULL &&
			curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &claimed) == CURLE_OK &&
			claimed > 0)
			newcap = Max(newcap, (size_t) Min(claimed + 1, PSVC_HTTP_FIRST_BUFFER_MAX));

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
	long		request_size = 0;
	bool		sent;

	if ((QueryCancelPending || ProcDiePending) && INTERRUPTS_CAN_BE_PROCESSED())
	{
		t->interrupted = true;
		return 1;
	}

	/*
	 * partner_svc.requests: the request is sent once its body is, or,
	 * without a body, once its head is; an answer's first byte says so too.
	 * Only a change is written (inflight.c).
	 */
	if (ultotal > 0)
		sent = ulnow >= ultotal;
	else
		sent = curl_easy_getinfo(t->easy, CURLINFO_REQUEST_SIZE,
								 &request_size) == CURLE_OK && request_size > 0;
	psvc_inflight_set(t->inflight,
					  sent || dlnow > 0 ? PSVC_INFLIGHT_RECEIVING : PSVC_INFLIGHT_SENDING,
					  (int64) (ulnow + dlnow));
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
void
psvc_http_copy_settings(PsvcTransfer *t, const PsvcServer *server)
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
void
psvc_http_connection_options(PsvcTransfer *t, CURL *easy)
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
void
psvc_http_start_attempt(PsvcTransfer *t)
{
	CURL	   *easy;

	Assert(t->easy == NULL);

	/* rate limiter: one unit of budget per attempt, may wait (ratelimit.c) */
	psvc_inflight_set(t->inflight, PSVC_INFLIGHT_WAITING, 0);
	psvc_rl_acquire(t->rl);
	psvc_inflight_set(t->inflight, PSVC_INFLIGHT_SENDING, 0);

	easy = psvc_http_pool_get();
	t->easy = easy;

	t->len = 0;
	t->too_big = false;
	t->no_memory = false;
	t->interrupted = false;
	t->errbuf[0] = '\0';

	PSVC_SETOPT(easy, CURLOPT_URL, t->send_url ? t->send_url : t->url);
	/* the path is sent as http_url.c built it: no dot segment removed */
	PSVC_SETOPT(easy, CURLOPT_PATH_AS_IS, 1L);
	PSVC_SETOPT(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	PSVC_SETOPT(easy, CURLOPT_PRIVATE, (void *) t);
	PSVC_SETOPT(easy, CURLOPT_ERRORBUFFER, t->errbuf);
	PSVC_SETOPT(easy, CURLOPT_NOSIGNAL, 1L);
	psvc_http_connection_options(t, easy);
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
 * records the outcome and either schedules a retry (false) or says the
 * transfer is complete (true: http.c makes its result).
 */
bool
psvc_http_attempt_ended(PsvcTransfer *t, CURLcode code)
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
		return false;
	}
	return true;
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
	return any || (idempotent && (t->idempotent || t->keyed));
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
 * now: delay-seconds or an HTTP date, at most PSVC_HTTP_RETRY_AFTER_MAX_S
 * either way.  -1 when absent or unreadable.
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

			while (*v >= '0' && *v <= '9' && s < PSVC_HTTP_RETRY_AFTER_MAX_S)
				s = s * 10 + (*v++ - '0');
			return Min(s, PSVC_HTTP_RETRY_AFTER_MAX_S) * 1000;
		}
		else
		{
			time_t		when = curl_getdate(v, NULL);
			time_t		now = time(NULL);

			if (when == -1)
				return -1;
			if (when <= now)
				return 0;
			return (long) Min(when - now, (time_t) PSVC_HTTP_RETRY_AFTER_MAX_S) * 1000;
		}
	}
	/* libcurl without the headers API: its own reading, seconds only */
	if (curl_easy_getinfo(easy, CURLINFO_RETRY_AFTER, &secs) == CURLE_OK && secs > 0)
		return (long) Min(secs, (curl_off_t) PSVC_HTTP_RETRY_AFTER_MAX_S) * 1000;
	return -1;
}

/*
 * Appends header line h (copied by libcurl, which mallocs) to t's list;
 * false when libcurl is out of memory, the list unchanged.
 */
bool
psvc_http_try_add_header(PsvcTransfer *t, const char *h)
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
void
psvc_http_add_header(PsvcTransfer *t, const char *h)
{
	if (!psvc_http_try_add_header(t, h))
		header_oom();
}

