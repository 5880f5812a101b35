/*-------------------------------------------------------------------------
 *
 * http.c
 *		  The transfers of the call module: a call (call.h) started as a
 *		  request to its partner service over libcurl, waited for, and
 *		  ended in its result.  One attempt in libcurl and the retry
 *		  decision are in http_attempt.c, the multi handle and the waiting
 *		  in http_wait.c, the mapping of failures to PostgreSQL errors in
 *		  http_errors.c, what they share in http_int.h.
 *
 * Connections.  All transfers of a backend run in its one libcurl multi
 * handle (http_wait.c) and share its connection cache: a connection is
 * kept alive across requests, pages and scans (a request that is not safe
 * to repeat opens a fresh one: see http_attempt.c).
 *
 * Progress.  Nothing runs in the background: transfers progress whenever a
 * psvc_call_* function that runs calls is called ("pumping"); only
 * psvc_call_finish() blocks.  How, and how the wait set is kept, is in http_wait.c.
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
 * psvc_call_start(), and a reset callback on that context releases its
 * easy handle and header list.  An ERROR anywhere (including one raised by
 * CHECK_FOR_INTERRUPTS while we wait) therefore never leaks a handle: the
 * context goes away with the query and takes the transfer with it.  The
 * transfer's buffers are allocated directly in that context (never in a
 * child), because a context's children are deleted before its own reset
 * callbacks run.
 *
 * Retries.  By the row of the call's operation: see http_attempt.c.
 *
 * Results.  Every call ends in a PsvcResult (call.h): an answer, an HTTP
 * error, a lost answer (a write that was sent and got no answer) or a
 * failure; the caller raises what it does not handle with
 * psvc_call_raise (http_errors.c), whose errors are rendered here when
 * the transfer completes.  Interrupts raise while the call waits.
 *
 * Paths.  Every path and query string is built by http_url.c from the
 * route template and plain values, which checks the path values against
 * the documents first (22023) and encodes every value; CURLOPT_PATH_AS_IS
 * keeps libcurl from removing dot segments.
 *
 * Text.  Request bodies are text in the server encoding and are sent as
 * UTF-8 (psvc_call_start); response bodies are UTF-8 and are verified and
 * converted to the server encoding once, when the caller takes the
 * result (psvc_call_finish, response_to_server).  No other code of the
 * extension converts a body.
 *
 * Bounds.  A response body is read up to partner_svc.max_response_size,
 * or a server's lower max_response_size: the buffer grows with the bytes
 * received, never with a claimed Content-Length, and a larger claim or
 * body ends the attempt (54000, naming the route and the setting).
 *
 * Cache.  A transfer asks the response cache (cache.c) about every GET
 * whose row is safe (call.c decides) before the rate limiter: a hit
 * completes the transfer at once with the cached answer, nothing sent; an answer past its TTL that has an
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

#include <curl/curl.h>

#include "mb/pg_wchar.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "cache.h"
#include "guc.h"
#include "http_int.h"
#include "options.h"
#include "xact_writes.h"

static void transfer_release(void *arg);
static void response_to_server(PsvcTransfer *t);
static void response_error_context(void *arg);
static void attempt_finished(PsvcTransfer *t, CURLcode code);
static void complete_transfer(PsvcTransfer *t);

/* What the wait loop (http_wait.c) calls back. */
static const PsvcHttpDriver http_driver = {
	.start_attempt = psvc_http_start_attempt,
	.attempt_finished = attempt_finished,
};

/*
 * An attempt of t ended (http_wait.c calls back): the transfer completes
 * unless http_attempt.c scheduled another attempt, or the partner refused
 * the OAuth2 token of t (a 401, which is never retried otherwise): then a
 * new token replaces it and t is sent again at once, once (http_token.c).
 * A 401 is a refusal before anything was done, so a write is sent again
 * too.
 */
static void
attempt_finished(PsvcTransfer *t, CURLcode code)
{
	if (!psvc_http_attempt_ended(t, code))
		return;
	if (t->outcome == OUTCOME_HTTP && t->status == 401 &&
		t->oauth2 != NULL && !t->oauth2->renewed)
	{
		psvc_http_token_renew(t);
		psvc_http_schedule_retry(t, 0);
		return;
	}
	complete_transfer(t);
}

/* ---------------------------------------------------------------------
 * Transfers' handles
 * ---------------------------------------------------------------------
 */

/*
 * Gives back what t holds of libcurl and the multi handle: its easy handle
 * (to the pool), its header list, its place among the running transfers.
 * Never raises (the reset callback calls it).
 */
static void
let_go(PsvcTransfer *t)
{
	psvc_http_detach_handle(t);
	if (t->headers != NULL)
	{
		curl_slist_free_all(t->headers);
		t->headers = NULL;
	}
	if (t->send_url != NULL)
	{
		explicit_bzero(t->send_url, strlen(t->send_url));
		t->send_url = NULL;
	}
	psvc_http_unlink(t);
}

/*
 * Reset callback of the transfer's memory context, also used by
 * psvc_call_cancel: releases everything outside palloc.  Idempotent,
 * never raises.
 */
static void
transfer_release(void *arg)
{
	PsvcTransfer *t = (PsvcTransfer *) arg;

	/* rate limiter: an abandoned attempt still counts (ratelimit.c) */
	psvc_rl_release(t->rl);
	/* an abandoned write may still be carried out: cached reads are stale */
	if (!t->idempotent && (t->state == XFER_RUNNING || t->state == XFER_BACKOFF))
		psvc_cache_note_write(t->serverid);
	let_go(t);
	if (t->state != XFER_DONE)
		t->state = XFER_CANCELLED;
}

/*
 * Makes t's result from its last attempt (its kind is decided when the
 * caller takes it, psvc_call_finish), releases its handle and header
 * list, and unlinks it.  Allocates in t->cxt.
 */
static void
complete_transfer(PsvcTransfer *t)
{
	PsvcResult *resp;
	char	   *ctype = NULL;

	resp = MemoryContextAllocZero(t->cxt, sizeof(PsvcResult));
	if (t->easy != NULL &&
		curl_easy_getinfo(t->easy, CURLINFO_CONTENT_TYPE, &ctype) == CURLE_OK &&
		ctype != NULL)
		t->content_type = MemoryContextStrdup(t->cxt, ctype);
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
	resp->rl_wait_ms = psvc_rl_waited_ms(t->rl);	/* ratelimit.c */
	resp->cache_miss = t->cache != NULL;
	/* the answer's ETag, kept with it by the cache for a revalidation */
	if (t->cache != NULL && t->easy != NULL && t->outcome == OUTCOME_HTTP)
	{
		struct curl_header *h;

		if (curl_easy_header(t->easy, "ETag", 0, CURLH_HEADER, -1, &h) == CURLHE_OK &&
			h->value != NULL && strlen(h->value) < 256)
			t->etag = MemoryContextStrdup(t->cxt, h->value);
	}
	/* a listing paged by its Link header (RFC 8288) reads it */
	if (t->easy != NULL && t->outcome == OUTCOME_HTTP)
	{
		struct curl_header *h;

		if (curl_easy_header(t->easy, "Link", 0, CURLH_HEADER, -1, &h) == CURLHE_OK &&
			h->value != NULL && strlen(h->value) <= PSVC_HTTP_MAX_LINK)
			resp->link = MemoryContextStrdup(t->cxt, h->value);
	}
	/* the service has acted on a write: what was cached before is stale */
	if (!t->idempotent)
		psvc_cache_note_write(t->serverid);

	let_go(t);
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
	PsvcResult *resp = MemoryContextAllocZero(t->cxt, sizeof(PsvcResult));

	if (t->headers != NULL)
	{
		curl_slist_free_all(t->headers);
		t->headers = NULL;
	}
	resp->status = a->status;
	resp->body = a->body;
	resp->body_len = a->len;
	resp->from_cache = true;
	resp->decoded = a->decoded;
	resp->decoded_len = a->decoded_len;
	resp->cache_probe = t->cache;
	t->converted = true;		/* stored in this database's encoding */
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
	PsvcResult *resp = t->resp;

	resp->status = t->stale->status;
	resp->body = t->stale->body;
	resp->body_len = t->stale->len;
	t->converted = true;		/* stored in this database's encoding */
	resp->decoded = t->stale->decoded;
	resp->decoded_len = t->stale->decoded_len;
	resp->cache_probe = t->cache;
	t->status = t->stale->status;
	psvc_cache_refresh(t->cache);
}
/* ---------------------------------------------------------------------
 * The interface
 * ---------------------------------------------------------------------
 */

/*
 * A new transfer of call in cxt, as plan reads its row: what it is (method,
 * route, retry safety), the server's settings, and the bound on its answer
 * (the GUC, or the server's lower option).  Nothing is sent yet; the reset
 * callback on cxt releases whatever it holds from now on.
 */
static PsvcTransfer *
transfer_new(const PsvcCall *call, const PsvcHttpPlan *plan, MemoryContext cxt)
{
	const PsvcServer *server = call->server;
	PsvcTransfer *t = MemoryContextAllocZero(cxt, sizeof(PsvcTransfer));

	t->cxt = cxt;
	t->state = XFER_CANCELLED;	/* until the first attempt starts */
	t->inflight = -1;			/* until linked */
	t->release_cb.func = transfer_release;
	t->release_cb.arg = t;
	MemoryContextRegisterResetCallback(cxt, &t->release_cb);

	t->method = plan->method;
	t->route = plan->route;
	t->servername = pstrdup(server->servername ? server->servername : "");
	t->serverid = server->serverid;
	t->idempotent = plan->idempotent;
	psvc_http_copy_settings(t, server);
	if (call->max_retries >= 0)
		t->max_retries = Min(t->max_retries, call->max_retries);

	t->max_body = (size_t) psvc_guc_max_response_size;
	t->max_body_setting = "partner_svc.max_response_size";
	if (server->max_response_size > 0 &&
		(size_t) server->max_response_size < t->max_body)
	{
		t->max_body = (size_t) server->max_response_size;
		t->max_body_setting = psprintf("max_response_size of server \"%s\"",
									   t->servername);
	}
	t->max_body = Min(t->max_body, PSVC_HTTP_MAX_BODY);
	return t;
}

/*
 * t's URL and description: the path checked and encoded before anything
 * is sent (http_url.c), bounded in length.  CurrentMemoryContext (t's).
 */
static void
transfer_set_url(PsvcTransfer *t, const PsvcCall *call)
{
	const char *base_url = call->server->base_url;
	StringInfoData buf;

	initStringInfo(&buf);
	psvc_http_append_path(&buf, call, true);
	if (strlen(base_url) + buf.len > PSVC_HTTP_MAX_URL)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("request URL of %s %s is too long", t->method, t->route),
				 errdetail("The URL would have %zu bytes; the limit is %d.",
						   strlen(base_url) + buf.len, PSVC_HTTP_MAX_URL),
				 errhint("Nothing was sent to the service.")));
	t->url = psprintf("%s%s", base_url, buf.data);
	t->description = psprintf("%s %s", t->method, buf.data);
	pfree(buf.data);
}

/*
 * t's body: text in the server encoding, sent as UTF-8, the documents'
 * wire format.  This is the one conversion of request bodies.
 * CurrentMemoryContext (t's).
 */
static void
transfer_set_body(PsvcTransfer *t, const PsvcCall *call)
{
	const char *utf8 = call->body;

	if (call->body == NULL)
		return;
	if (GetDatabaseEncoding() != PG_UTF8 && call->body_len > 0)
	{
		if (call->body_len >= MaxAllocSize ||
			memchr(call->body, '\0', call->body_len) != NULL)
			elog(ERROR, "request body of %s %s is not text", t->method, t->route);
		utf8 = pg_server_to_any(call->body, (int) call->body_len, PG_UTF8);
	}
	if (utf8 != call->body)
	{
		t->body = (char *) utf8;
		t->body_len = strlen(utf8);
	}
	else
	{
		t->body = palloc(call->body_len + 1);
		memcpy(t->body, call->body, call->body_len);
		t->body[call->body_len] = '\0';
		t->body_len = call->body_len;
	}
}

/*
 * Asks the response cache about t (cache.c): a hit needs no header, no API
 * key, no rate limiter and no network; an answer past its TTL that has an
 * ETag is revalidated (add_headers).  The answer found goes to *answer.
 */
static PsvcCacheFound
probe_cache(PsvcTransfer *t, const PsvcCall *call, const PsvcHttpPlan *plan,
			const PsvcCallKey *ckey, PsvcCachedAnswer *answer)
{
	if (plan->cacheable)
		t->cache = psvc_cache_probe(ckey, call->cache_ttl_ms, call->decoded_sig,
									call->decoded_sig_len, t->cxt);
	if (t->cache == NULL)
		return PSVC_CACHE_MISS;
	return psvc_cache_lookup(t->cache, answer);
}

/*
 * Sends key as the server's option auth says: in a header (Authorization:
 * Bearer, or auth_header with auth_prefix), or in the query parameter
 * auth_param of t->send_url, the URL given to libcurl only (t->url, which
 * the limiter, the cache, the views and every message show, never holds
 * it); or, for auth oauth2, exchanges the client's id and secret that key
 * holds for an access token (http_token.c).  Every copy made here is
 * wiped; t->send_url is wiped when t lets go of its handle.
 */
static void
add_key(PsvcTransfer *t, const PsvcServer *server, const char *key)
{
	char	   *h;
	bool		added;

	if (server->auth == PSVC_AUTH_OAUTH2)
	{
		psvc_http_token_add(t, server, key);
		return;
	}
	if (key == NULL)
		return;
	if (server->auth == PSVC_AUTH_QUERY)
	{
		char	   *enc = curl_easy_escape(NULL, key, 0);

		if (enc == NULL)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		t->send_url = psprintf("%s%c%s=%s", t->url,
							   strchr(t->url, '?') ? '&' : '?',
							   server->auth_param, enc);
		explicit_bzero(enc, strlen(enc));
		curl_free(enc);
		return;
	}
	if (server->auth == PSVC_AUTH_HEADER)
		h = psprintf("%s: %s%s%s", server->auth_header,
					 server->auth_prefix ? server->auth_prefix : "",
					 server->auth_prefix ? " " : "", key);
	else
		h = psprintf("Authorization: Bearer %s", key);
	added = psvc_http_try_add_header(t, h);
	explicit_bzero(h, strlen(h));
	pfree(h);
	if (!added)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
}

/*
 * t's request headers, with key (NULL: none) as the server's option auth
 * says (add_key), the call's idempotency key when the server names its
 * header, and, for a stale answer with a usable ETag, If-None-Match.
 * t->headers is released by the callback whatever happens; the header
 * that holds the key is wiped at once.
 */
static void
add_headers(PsvcTransfer *t, const PsvcCall *call, const char *key,
			PsvcCacheFound found, const PsvcCachedAnswer *answer)
{
	const PsvcServer *server = call->server;

	add_key(t, server, key);
	if (call->idempotency_key != NULL && server->idempotency_header != NULL)
	{
		psvc_http_add_header(t, psprintf("%s: %s", server->idempotency_header,
										 call->idempotency_key));
		t->keyed = true;
	}
	psvc_http_add_header(t, "Accept: application/json");
	/* every body of the documents is JSON */
	if (t->body != NULL)
		psvc_http_add_header(t, "Content-Type: application/json");
	else if (strcmp(t->method, "POST") == 0)
		psvc_http_add_header(t, "Content-Type:");	/* no form-encoded default */
	psvc_http_add_header(t, "Expect:");	/* no 100-continue round trip */
	if (found == PSVC_CACHE_STALE &&
		strspn(answer->etag, "!#$%&'()*+,-./0123456789:;<=>?@"
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~\" ")
		== strlen(answer->etag))
	{
		psvc_http_add_header(t, psprintf("If-None-Match: %s", answer->etag));
		t->stale = palloc(sizeof(PsvcCachedAnswer));
		*t->stale = *answer;
	}
}

/*
 * Starts call, as plan reads its row (call.c), without waiting.  The
 * transfer, its buffers and later its result live in cxt; a reset
 * callback on cxt aborts the transfer and releases its handle when cxt is
 * reset or deleted.  Reads the user mapping of the server at most once
 * (catalog access: call it in a transaction): who the call is made as is
 * resolved here and handed to the cache and the limiter.
 */
PsvcTransfer *
psvc_http_start(const PsvcCall *call, const PsvcHttpPlan *plan,
				MemoryContext cxt)
{
	const PsvcServer *server = call->server;
	PsvcTransfer *t;
	MemoryContext oldcxt;
	PsvcServerAccess access;
	PsvcCallKey ckey;
	PsvcCachedAnswer answer;
	volatile PsvcCacheFound found = PSVC_CACHE_MISS;

	psvc_http_ensure_multi(&http_driver);

	oldcxt = MemoryContextSwitchTo(cxt);
	t = transfer_new(call, plan, cxt);
	transfer_set_url(t, call);
	transfer_set_body(t, call);

	psvc_options_access(server, &access);
	ckey.server = server;
	ckey.access = &access;
	ckey.op = call->op;
	ckey.path = call->path;
	ckey.url = t->url;
	ckey.share = call->budget_share;
	/* the key, when read, leaves our memory on every path */
	PG_TRY();
	{
		found = probe_cache(t, call, plan, &ckey, &answer);
		if (found != PSVC_CACHE_HIT)
			add_headers(t, call, psvc_options_access_key(server, &access), found, &answer);
	}
	PG_FINALLY();
	{
		psvc_options_access_clear(&access);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcxt);

	if (found == PSVC_CACHE_HIT)
	{
		complete_from_cache(t, &answer);
		return t;
	}

	/* a write: what other requests cache from now on may be stale */
	if (!t->idempotent)
		psvc_cache_note_write(t->serverid);

	/* the limiter budgets the partner account, not the server */
	t->rl = psvc_rl_prepare(&ckey, cxt);

	psvc_http_link(t);
	psvc_http_start_attempt(t);
	psvc_http_pump();						/* get the connection going */
	return t;
}



/*
 * The sentence PsvcResult.message gives for a lost answer: what went
 * wrong, and whom it concerns.  In CurrentMemoryContext.
 */
static char *
lost_text(PsvcTransfer *t)
{
	if (t->outcome == OUTCOME_TIMEOUT)
		return psprintf("%s %s timed out after %ld ms.",
						t->method, t->route, t->request_timeout_ms);
	return psprintf("The connection to server \"%s\" was lost during %s %s: %s.",
					t->servername, t->method, t->route,
					t->errbuf[0] != '\0' ? t->errbuf :
					curl_easy_strerror(t->curl_code));
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
	PsvcResult *resp = t->resp;
	MemoryContext oldcxt;
	ErrorContextCallback errcallback;
	char	   *conv;

	if (resp->body_len == 0 || t->converted)
		return;
	t->converted = true;
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
 * The result of t, a call that did not end in an answer (in t's
 * context): an HTTP error, a lost answer (a write sent that got no
 * answer), or a failure, with what psvc_call_raise will raise.
 */
static PsvcResult *
failed_result(PsvcTransfer *t)
{
	PsvcResult *res = t->resp;
	MemoryContext oldcxt = MemoryContextSwitchTo(t->cxt);

	if (t->outcome == OUTCOME_HTTP)
	{
		response_to_server(t);
		res->kind = PSVC_CALL_HTTP_ERROR;
		res->sqlstate = psvc_http_status_rule(t->status)->sqlstate;
	}
	else
	{
		res->status = 0;
		res->error = psvc_http_failure_error(t);
		res->sqlstate = res->error->sqlstate;
		if (!t->idempotent &&
			(t->outcome == OUTCOME_TIMEOUT || t->outcome == OUTCOME_LOST))
		{
			res->kind = PSVC_CALL_LOST;
			res->message = lost_text(t);
		}
		else
		{
			res->kind = PSVC_CALL_FAILED;
			res->message = psvc_http_failure_text(t);
		}
	}
	MemoryContextSwitchTo(oldcxt);
	return res;
}

/*
 * Waits for t, retrying by the rules, and returns its result (in t's
 * context), whatever it is: the caller raises what it does not handle
 * with psvc_call_raise.  Ctrl-C and statement_timeout interrupt the wait
 * with PostgreSQL's own error; a 2xx answer that is not valid text raises.
 */
PsvcResult *
psvc_call_finish(PsvcTransfer *t)
{
	if (t->state == XFER_CANCELLED)
		elog(ERROR, "%s %s was cancelled", t->method, t->route);

	if (!t->idempotent)
		wait_for_write(t);
	else
		wait_for(t);

	if (t->state == XFER_CANCELLED)
		elog(ERROR, "%s %s was cancelled", t->method, t->route);

	if (!t->idempotent &&
		((t->outcome == OUTCOME_HTTP && t->status >= 200 && t->status < 300) ||
		 t->outcome == OUTCOME_TIMEOUT || t->outcome == OUTCOME_LOST))
		psvc_xact_note_write(t->method, t->route, t->outcome != OUTCOME_HTTP);
	if (t->outcome == OUTCOME_HTTP && t->status == 304 && t->stale != NULL)
	{
		complete_revalidated(t);
		t->resp->kind = PSVC_CALL_OK;
		return t->resp;
	}
	if (t->outcome == OUTCOME_HTTP && t->status >= 200 && t->status < 300)
	{
		response_to_server(t);
		t->resp->kind = PSVC_CALL_OK;
		/*
		 * Kept once converted: an entry is read only in its own database,
		 * and an answer that failed to convert is never kept.
		 */
		if (t->cache != NULL && !t->resp->from_cache)
		{
			psvc_cache_store(t->cache, t->resp->body, t->resp->body_len,
							 t->status, t->content_type, t->etag);
			t->resp->cache_probe = t->cache;
		}
		return t->resp;
	}
	return failed_result(t);
}

/*
 * Aborts t and releases its handle now; its memory goes with its context.
 * A completed transfer keeps its result.
 */
void
psvc_call_cancel(PsvcTransfer *t)
{
	transfer_release(t);
}

size_t
psvc_call_decoded_room(const PsvcResult *res)
{
	return res->cache_probe != NULL ? psvc_cache_decoded_room(res->cache_probe) : 0;
}

void
psvc_call_keep_decoded(PsvcResult *res, const char *page, size_t len)
{
	if (res->cache_probe != NULL)
		psvc_cache_keep_decoded(res->cache_probe, page, len);
}
