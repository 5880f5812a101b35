/*-------------------------------------------------------------------------
 *
 * http_token.c
 *		  OAuth2 client credentials (RFC 6749 section 4.4) for the servers
 *		  of auth 'oauth2': the access token of a partner account, fetched
 *		  at the server's token_url and kept in the token store
 *		  (tokens.c) until shortly before it expires, renewed once when
 *		  the partner refuses it with a 401.
 *
 * Design notes:
 *
 * - The store's key is a digest of the token URL, the client's id and
 *   secret and the scopes: one token per partner account, whatever the
 *   server, role or database that uses it.  One process fetches it; the
 *   others wait for it (tokens.c), so many sessions make one grant.
 * - The grant is one POST of a form on a handle of its own, bounded by
 *   the server's connect_timeout and request_timeout, run to its end in
 *   the backend's multi handle (psvc_http_run_alone, http_wait.c): it
 *   waits on the latch and curl's sockets as every transfer does, with
 *   CHECK_FOR_INTERRUPTS after every wakeup, so Ctrl-C and
 *   statement_timeout end it within one wakeup, and the backend's other
 *   transfers progress meanwhile.  It is not limited, cached or counted as
 *   the partner's routes are.
 * - Secrets: the client secret and the token go only into the form body
 *   and the Authorization header; both are zeroed once libcurl has them.
 *   Errors name the server, the token URL and the service's error code
 *   (RFC 6749 section 5.2), never the body, the secret or a token; a body
 *   that is not JSON is reported without its text.
 * - A token is kept until renew_at: its lifetime (expires_in, on the
 *   partner's clock, so multiplied by partner_svc.time_scale) less a
 *   tenth of it, at most a minute of the partner's time.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/http_token.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <curl/curl.h>

#include "common/cryptohash.h"
#include "common/sha2.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "guc.h"
#include "http_int.h"
#include "options.h"
#include "partner_svc.h"
#include "tokens.h"

/* The largest answer of a token endpoint read. */
#define TOKEN_MAX_BODY	65536
/* The lifetime assumed when the answer gives none (RFC 6749 5.1). */
#define TOKEN_DEFAULT_TTL_S	3600

/* The answer being received; written by the callback with malloc only. */
typedef struct TokenAnswer
{
	char	   *buf;
	size_t		len;
	bool		too_big;
	bool		no_memory;
	bool		interrupted;
} TokenAnswer;

static size_t
token_write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
	TokenAnswer *a = (TokenAnswer *) userp;
	size_t		n = size * nmemb;
	char	   *grown;

	if (a->len + n > TOKEN_MAX_BODY)
	{
		a->too_big = true;
		return 0;
	}
	grown = realloc(a->buf, a->len + n + 1);
	if (grown == NULL)
	{
		a->no_memory = true;
		return 0;
	}
	a->buf = grown;
	memcpy(a->buf + a->len, data, n);
	a->len += n;
	a->buf[a->len] = '\0';
	return n;
}

static int
token_progress_cb(void *userp, curl_off_t dltotal, curl_off_t dlnow,
				  curl_off_t ultotal, curl_off_t ulnow)
{
	TokenAnswer *a = (TokenAnswer *) userp;

	if ((QueryCancelPending || ProcDiePending) && INTERRUPTS_CAN_BE_PROCESSED())
	{
		a->interrupted = true;
		psvc_http_note_interrupt();
		return 1;
	}
	return 0;
}

/* The store's key of server's client (credential: "id\nsecret"), hex. */
static void
token_account(const PsvcServer *server, const char *credential, char *out)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		sum[PG_SHA256_DIGEST_LENGTH];
	const char *scopes = server->scopes ? server->scopes : "";
	bool		ok;

	ok = ctx != NULL &&
		pg_cryptohash_init(ctx) == 0 &&
		pg_cryptohash_update(ctx, (const uint8 *) "partner_svc token", 18) == 0 &&
		pg_cryptohash_update(ctx, (const uint8 *) server->token_url,
							 strlen(server->token_url) + 1) == 0 &&
		pg_cryptohash_update(ctx, (const uint8 *) credential, strlen(credential) + 1) == 0 &&
		pg_cryptohash_update(ctx, (const uint8 *) scopes, strlen(scopes) + 1) == 0 &&
		pg_cryptohash_final(ctx, sum, sizeof(sum)) == 0;
	pg_cryptohash_free(ctx);
	if (!ok)
		elog(ERROR, "could not compute the token account digest");
	hex_encode((const char *) sum, PG_SHA256_DIGEST_LENGTH, out);
	out[PG_SHA256_DIGEST_LENGTH * 2] = '\0';
}

/* Appends "name=value" form-encoded to buf (a secret: the caller zeroes buf). */
static void
form_add(StringInfo buf, CURL *easy, const char *name, const char *value)
{
	char	   *enc = curl_easy_escape(easy, value, 0);

	if (enc == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	appendStringInfo(buf, "%s%s=%s", buf->len > 0 ? "&" : "", name, enc);
	explicit_bzero(enc, strlen(enc));
	curl_free(enc);
}

pg_noreturn static void
token_error(const PsvcServer *server, int sqlstate, const char *detail)
{
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("could not get an OAuth2 access token for server \"%s\"",
					server->servername),
			 errdetail("%s", detail),
			 errhint("Check the option \"token_url\" of the server and the options \"client_id\" and \"client_secret\" of the user mapping."),
			 errcontext("token request POST %s", server->token_url)));
}

/* A string member of a JSON object, palloc'd, or NULL. */
static char *
json_member(Jsonb *jb, const char *key, bool *is_number, double *number)
{
	JsonbValue	v;

	if (!JB_ROOT_IS_OBJECT(jb) ||
		getKeyJsonValueFromContainer(&jb->root, key, strlen(key), &v) == NULL)
		return NULL;
	if (v.type == jbvString)
		return pnstrdup(v.val.string.val, v.val.string.len);
	if (v.type == jbvNumeric && is_number != NULL)
	{
		*is_number = true;
		*number = DatumGetFloat8(DirectFunctionCall1(numeric_float8,
													 NumericGetDatum(v.val.numeric)));
	}
	return NULL;
}

/*
 * The body as jsonb, or NULL when it is not JSON: jsonb_in's error,
 * which would quote the body (a token), is dropped.  Catching it without
 * a subtransaction is safe: jsonb_in touches no shared state.
 */
static Jsonb *
token_json(const char *body)
{
	MemoryContext cxt = CurrentMemoryContext;
	Jsonb	   *jb = NULL;

	PG_TRY();
	{
		jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(body)));
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		jb = NULL;
	}
	PG_END_TRY();
	return jb;
}

/*
 * Reads the token endpoint's answer: the token into out (PSVC_TOKEN_MAX),
 * its lifetime in seconds into *ttl_s.  Raises for anything else.
 */
static void
token_read(const PsvcServer *server, long status, const char *body,
		   char *out, double *ttl_s)
{
	Jsonb	   *jb = body ? token_json(body) : NULL;
	char	   *token;
	char	   *type;
	bool		has_ttl = false;

	if (status < 200 || status >= 300)
	{
		char	   *code = jb ? json_member(jb, "error", NULL, NULL) : NULL;
		bool		refused = status == 400 || status == 401 || status == 403;

		if (code != NULL && strspn(code, "abcdefghijklmnopqrstuvwxyz_") != strlen(code))
			code = NULL;
		token_error(server,
					refused ? ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION :
					ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION,
					code ? psprintf("The token endpoint answered %ld with error \"%s\".", status, code) :
					psprintf("The token endpoint answered %ld.", status));
	}
	if (jb == NULL)
		token_error(server, ERRCODE_FDW_REPLY_HANDLE,
					"The token endpoint's answer is not a JSON object.");
	token = json_member(jb, "access_token", NULL, NULL);
	type = json_member(jb, "token_type", NULL, NULL);
	(void) json_member(jb, "expires_in", &has_ttl, ttl_s);
	if (token == NULL || token[0] == '\0')
		token_error(server, ERRCODE_FDW_REPLY_HANDLE,
					"The token endpoint's answer has no \"access_token\".");
	if (type != NULL && pg_strcasecmp(type, "bearer") != 0)
		token_error(server, ERRCODE_FDW_REPLY_HANDLE,
					psprintf("The token type is not \"Bearer\" but \"%.40s\".", type));
	if (strlen(token) >= PSVC_TOKEN_MAX)
		token_error(server, ERRCODE_FDW_REPLY_HANDLE,
					psprintf("The access token is longer than %d bytes.", PSVC_TOKEN_MAX - 1));
	for (const char *p = token; *p; p++)
		if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f)
			token_error(server, ERRCODE_FDW_REPLY_HANDLE,
						"The access token holds a character that cannot be sent in a header.");
	if (!has_ttl || *ttl_s <= 0)
		*ttl_s = TOKEN_DEFAULT_TTL_S;
	strlcpy(out, token, PSVC_TOKEN_MAX);
	explicit_bzero(token, strlen(token));
}

/*
 * One client-credentials grant at server's token_url: the token into out,
 * its lifetime into *ttl_s.  credential is "id\nsecret".
 */
static void
token_fetch(const PsvcServer *server, const char *credential, char *out,
			double *ttl_s)
{
	PsvcTransfer settings;
	CURL	   *easy = curl_easy_init();
	struct curl_slist *headers = NULL;
	TokenAnswer answer = {0};
	StringInfoData form;
	char		errbuf[CURL_ERROR_SIZE];
	char	   *id = pstrdup(credential);
	char	   *secret = strchr(id, '\n');
	CURLcode	code = CURLE_OK;
	long		status = 0;

	if (easy == NULL || secret == NULL)
		elog(ERROR, "could not start a token request");
	*secret++ = '\0';
	memset(&settings, 0, sizeof(settings));
	psvc_http_copy_settings(&settings, server);
	initStringInfo(&form);
	errbuf[0] = '\0';

	PG_TRY();
	{
		form_add(&form, easy, "grant_type", "client_credentials");
		form_add(&form, easy, "client_id", id);
		form_add(&form, easy, "client_secret", secret);
		if (server->scopes != NULL)
			form_add(&form, easy, "scope", server->scopes);
		headers = curl_slist_append(headers, "Accept: application/json");
		if (headers)
			headers = curl_slist_append(headers, "Content-Type: application/x-www-form-urlencoded");
		if (headers)
			headers = curl_slist_append(headers, "Expect:");
		if (headers == NULL)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));

		if (curl_easy_setopt(easy, CURLOPT_URL, server->token_url) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_POST, 1L) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) form.len) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_POSTFIELDS, form.data) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_USERAGENT, "partner_svc/" PSVC_VERSION) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, token_write_cb) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_WRITEDATA, (void *) &answer) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, token_progress_cb) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_XFERINFODATA, (void *) &answer) != CURLE_OK ||
			curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L) != CURLE_OK)
			elog(ERROR, "could not set up a token request");
		psvc_http_connection_options(&settings, easy);

		code = psvc_http_run_alone(easy);
		explicit_bzero(form.data, form.len);
		CHECK_FOR_INTERRUPTS();
		if (code != CURLE_OK)
			token_error(server, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION,
						answer.too_big ? psprintf("The answer is larger than %d bytes.", TOKEN_MAX_BODY) :
						psprintf("%s.", errbuf[0] ? errbuf : curl_easy_strerror(code)));
		curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
		token_read(server, status, answer.buf, out, ttl_s);
	}
	PG_FINALLY();
	{
		explicit_bzero(form.data, form.len);
		explicit_bzero(id, strlen(credential));
		if (answer.buf)
		{
			explicit_bzero(answer.buf, answer.len);
			free(answer.buf);
		}
		curl_slist_free_all(headers);
		curl_easy_cleanup(easy);
	}
	PG_END_TRY();
}

/*
 * The token of use's account into out: the store's, or one fetched now
 * and stored.  credential is "id\nsecret".
 */
static void
token_get(PsvcTokenUse *use, const char *credential, char *out)
{
	const PsvcServer *server = use->server;
	long		wait_ms = psvc_options_setting(server, PSVC_SETTING_CONNECT_TIMEOUT) +
		psvc_options_setting(server, PSVC_SETTING_REQUEST_TIMEOUT);
	double		ttl_s = 0;
	int64		life_us;
	int64		margin_us;

	if (psvc_token_get(use->account, out, &use->gen, wait_ms))
		return;
	PG_TRY();
	{
		token_fetch(server, credential, out, &ttl_s);
	}
	PG_CATCH();
	{
		psvc_token_abandon(use->account);
		PG_RE_THROW();
	}
	PG_END_TRY();
	life_us = (int64) (ttl_s * 1000000.0 * psvc_guc_time_scale);
	margin_us = Min(life_us / 10, (int64) (60 * 1000000.0 * psvc_guc_time_scale));
	psvc_token_store(use->account, out, GetCurrentTimestamp() + life_us - margin_us,
					 &use->gen);
}

/* Appends t's Authorization header with token; the copies are zeroed. */
static void
token_header(PsvcTransfer *t, char *token)
{
	char	   *h = psprintf("Authorization: Bearer %s", token);
	bool		added = psvc_http_try_add_header(t, h);

	explicit_bzero(h, strlen(h));
	explicit_bzero(token, PSVC_TOKEN_MAX);
	pfree(h);
	if (!added)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
}

void
psvc_http_token_add(PsvcTransfer *t, const PsvcServer *server, const char *credential)
{
	PsvcTokenUse *use = palloc0(sizeof(PsvcTokenUse));
	char	   *token = palloc(PSVC_TOKEN_MAX);

	if (credential == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("user mapping for server \"%s\" has no OAuth2 client",
						server->servername),
				 errhint("Set the options \"client_id\" and \"client_secret\" of the user mapping.")));
	use->server = psvc_options_copy_server(server);
	token_account(server, credential, use->account);
	t->oauth2 = use;
	token_get(use, credential, token);
	token_header(t, token);
}

void
psvc_http_token_renew(PsvcTransfer *t)
{
	PsvcTokenUse *use = t->oauth2;
	MemoryContext oldcxt = MemoryContextSwitchTo(t->cxt);
	struct curl_slist *old = t->headers;
	char	   *credential;
	char	   *token = palloc(PSVC_TOKEN_MAX);

	use->renewed = true;
	psvc_token_forget(use->account, use->gen);
	credential = psvc_options_api_key(use->server);
	if (credential == NULL)
		elog(ERROR, "OAuth2 client of server \"%s\" is gone", use->server->servername);
	PG_TRY();
	{
		token_get(use, credential, token);
	}
	PG_FINALLY();
	{
		explicit_bzero(credential, strlen(credential));
	}
	PG_END_TRY();

	/* the same headers, the Authorization line replaced */
	t->headers = NULL;
	for (struct curl_slist *l = old; l != NULL; l = l->next)
	{
		if (pg_strncasecmp(l->data, "Authorization:", 14) == 0)
			explicit_bzero(l->data, strlen(l->data));
		else
			psvc_http_add_header(t, l->data);
	}
	curl_slist_free_all(old);
	token_header(t, token);
	MemoryContextSwitchTo(oldcxt);
}
