/*-------------------------------------------------------------------------
 *
 * http_errors.c
 *		  How the HTTP client reports failures: the tables that map an HTTP
 *		  status or a failure without one to a SQLSTATE and to whether it
 *		  is retried, the reading of a service's error body, and the
 *		  ereports themselves.
 *
 * Reporting follows postgres_fdw's pgfdw_report_error: the message names
 * method, route template and status (or what went wrong), errdetail
 * carries the service's own error, errcontext the request.  The tables
 * below are also in docs/errors.md; http.c's retry decision reads the
 * same rows (psvc_http_status_rule, psvc_http_failure_rule).
 *
 * A service's error body is read by the JSON layer's one reader of error
 * bodies (json_error.c, psvc_json_error_body), which never raises for a
 * malformed or deeply nested body.  Everything a service wrote is
 * sanitized before it goes into a message.
 *
 * Secrets.  The API key goes into no message and no context line: they
 * name the method, the route template and the server, never the URL.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/http_errors.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <curl/curl.h>

#include "mb/pg_wchar.h"

#include "http_int.h"
#include "json.h"
#include "options.h"

/* How much of an unparsable error body goes into errdetail. */
#define PSVC_HTTP_DETAIL_BYTES		200

static char *sanitize(const char *s, size_t len, size_t max);
static char *sentence(const char *s, size_t max);
static char *service_error_detail(const char *body, size_t len);
static char *request_context(const char *method, const char *route,
							 const char *servername, int retries);

/* ---------------------------------------------------------------------
 * The rule tables
 * ---------------------------------------------------------------------
 */

/*
 * Failures without an HTTP status: whether they are retried and what they
 * are reported as.  "any" retries every method, because nothing reached
 * the service; "idempotent" retries the calls whose row of the
 * catalogue is safe.  A TLS failure (certificate verification, client
 * certificate) is a configuration error that a retry does not mend; it is
 * reported as 08001, as libpq and postgres_fdw report a connection they
 * could not establish.  INTERRUPTED is not in here: it never becomes an error of
 * ours (CHECK_FOR_INTERRUPTS raises PostgreSQL's own).
 *
 *	outcome				retry any	retry idempotent	SQLSTATE
 *	CONNECT				yes			yes					HV00N
 *	CONNECT_TIMEOUT		yes			yes					HV00N
 *	TIMEOUT				no			yes					08006
 *	LOST				no			yes					08006
 *	TLS					no			no					08001
 *	TOO_BIG				no			no					54000
 *	NO_MEMORY			no			no					53200
 *	OTHER				no			no					HV000
 */
static const PsvcFailureRule failure_rules[] = {
	{OUTCOME_CONNECT, true, true, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION},
	{OUTCOME_CONNECT_TIMEOUT, true, true, ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION},
	{OUTCOME_TIMEOUT, false, true, ERRCODE_CONNECTION_FAILURE},
	{OUTCOME_LOST, false, true, ERRCODE_CONNECTION_FAILURE},
	{OUTCOME_TLS, false, false, ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION},
	{OUTCOME_TOO_BIG, false, false, ERRCODE_PROGRAM_LIMIT_EXCEEDED},
	{OUTCOME_NO_MEMORY, false, false, ERRCODE_OUT_OF_MEMORY},
	{OUTCOME_OTHER, false, false, ERRCODE_FDW_ERROR},
};

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

/* The first row of status_rules[] whose range holds status. */
const PsvcStatusRule *
psvc_http_status_rule(long status)
{
	int			i;

	for (i = 0; i < lengthof(status_rules); i++)
		if (status >= status_rules[i].lo && status <= status_rules[i].hi)
			return &status_rules[i];
	elog(ERROR, "no rule for HTTP status %ld", status);
	return NULL;				/* keep compiler quiet */
}

/* The row of failure_rules[] for outcome. */
const PsvcFailureRule *
psvc_http_failure_rule(PsvcOutcome outcome)
{
	int			i;

	for (i = 0; i < lengthof(failure_rules); i++)
		if (failure_rules[i].outcome == outcome)
			return &failure_rules[i];
	elog(ERROR, "no rule for transfer outcome %d", (int) outcome);
	return NULL;				/* keep compiler quiet */
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

/*
 * The errdetail sentence for a service's error body: its error code and
 * message when the body has one of the shapes the services use
 * ({"error":{"code","message"}}, {"error":"..."}, problem+json), else the
 * start of the body.  The body is read by the JSON layer's one reader of
 * error bodies (json_error.c), which never raises for it.  Allocates in
 * CurrentMemoryContext.
 */
static char *
service_error_detail(const char *body, size_t len)
{
	PsvcJsonErrorBody eb;
	const size_t max = PSVC_HTTP_DETAIL_BYTES;

	(void) psvc_json_error_body(body, len, PG_UTF8, &eb);

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
 * The hint of a 401 of server, as its option auth sends the credentials
 * (docs/authentication.md).  Names options, never their values.
 * Allocates in CurrentMemoryContext.
 */
static char *
key_hint(const PsvcServer *server, const char *servername)
{
	switch (server->auth)
	{
		case PSVC_AUTH_HEADER:
			return psprintf("Set a valid api_key option on the user mapping for server \"%s\" and the current user; it is sent in the header \"%s\" (server option auth_header), which must be the one the partner reads.",
							servername, server->auth_header ? server->auth_header : "");
		case PSVC_AUTH_QUERY:
			return psprintf("Set a valid api_key option on the user mapping for server \"%s\" and the current user; it is sent in the query parameter \"%s\" (server option auth_param), which must be the one the partner reads.",
							servername, server->auth_param ? server->auth_param : "");
		case PSVC_AUTH_OAUTH2:
			return psprintf("The partner refused the access token granted at the token_url of server \"%s\", also after a new grant: check the client_id and client_secret options of the user mapping for the current user and the scopes option of the server.",
							servername);
		case PSVC_AUTH_BEARER:
			break;
	}
	return psprintf("Set a valid api_key option on the user mapping for server \"%s\" and the current user.",
					servername);
}

/*
 * Raises the error for an HTTP status by status_rules[]: the message names
 * method, route template and status, the detail carries the service's
 * error, the context line the request.  Never the key or the URL.
 */
void
psvc_http_report_status(const char *method, const char *route,
						const PsvcServer *server, long status,
						const char *body, size_t len, int retries)
{
	const char *servername = server->servername ? server->servername : "";
	const PsvcStatusRule *rule = psvc_http_status_rule(status);
	char	   *context = request_context(method, route, servername, retries);

	ereport(ERROR,
			(errcode(rule->sqlstate),
			 errmsg("%s %s failed with HTTP status %ld", method, route, status),
			 errdetail_internal("%s", service_error_detail(body, len)),
			 rule->hint == HINT_API_KEY ?
			 errhint("%s", key_hint(server, servername)) : 0,
			 rule->hint == HINT_RATE_LIMIT ?
			 errhint("The service's rate limit was still exceeded after %d retries; try again later, or raise max_retries (the option of server \"%s\", else partner_svc.max_retries).",
					 retries, servername) : 0,
			 errcontext("%s", context)));
	pg_unreachable();
}

/*
 * The ERROR of t's last attempt, which ended without an HTTP status:
 * rendered when the transfer completes, raised by psvc_call_raise.
 * Allocates in CurrentMemoryContext.
 */
PsvcCallError *
psvc_http_failure_error(PsvcTransfer *t)
{
	PsvcCallError *e = palloc0(sizeof(PsvcCallError));
	const char *why;
	const char *unknown;

	e->sqlstate = psvc_http_failure_rule(t->outcome)->sqlstate;
	why = t->errbuf[0] != '\0' ? t->errbuf : curl_easy_strerror(t->curl_code);
	unknown = t->idempotent ? NULL :
		"The outcome of the request is unknown: the service may have carried it out.";
	e->context = request_context(t->method, t->route, t->servername, t->retries);

	switch (t->outcome)
	{
		case OUTCOME_CONNECT:
			e->message = psprintf("could not connect to server \"%s\" for %s %s",
								  t->servername, t->method, t->route);
			e->detail = psprintf("libcurl reported: %s.", why);
			if (t->proxy != NULL && strcmp(t->proxy, "environment") != 0)
				e->hint = psprintf("Check the options base_url and proxy of server \"%s\", and that the proxy and the service are running.",
								   t->servername);
			else
				e->hint = psprintf("Check the base_url option of server \"%s\" and that the service is running.",
								   t->servername);
			break;
		case OUTCOME_CONNECT_TIMEOUT:
			e->message = psprintf("could not connect to server \"%s\" for %s %s within %ld ms",
								  t->servername, t->method, t->route, t->connect_timeout_ms);
			e->hint = psprintf("The limit is set by the connect_timeout option of server \"%s\", or by partner_svc.connect_timeout where the server has none.",
							   t->servername);
			break;
		case OUTCOME_TIMEOUT:
			e->message = psprintf("%s %s timed out after %ld ms",
								  t->method, t->route, t->request_timeout_ms);
			e->detail = unknown ? pstrdup(unknown) : NULL;
			e->hint = psprintf("The limit is set by the request_timeout option of server \"%s\", or by partner_svc.request_timeout where the server has none.",
							   t->servername);
			break;
		case OUTCOME_LOST:
			e->message = psprintf("connection to server \"%s\" was lost during %s %s",
								  t->servername, t->method, t->route);
			e->detail = psprintf("libcurl reported: %s.%s%s", why,
								 unknown ? " " : "", unknown ? unknown : "");
			break;
		case OUTCOME_TLS:
			e->detail = psprintf("libcurl reported: %s.", why);
			if (t->curl_code == CURLE_PEER_FAILED_VERIFICATION)
			{
				e->message = psprintf("certificate verification failed for server \"%s\" during %s %s",
									  t->servername, t->method, t->route);
				e->hint = psprintf("The service's certificate must be signed by an authority in the file named by the ssl_ca_file option of server \"%s\" (or the system's, when unset), and name the host of its base_url.",
								   t->servername);
			}
			else
			{
				e->message = psprintf("could not establish a TLS connection to server \"%s\" for %s %s",
									  t->servername, t->method, t->route);
				e->hint = psprintf("Check the options ssl_ca_file, ssl_cert_file and ssl_key_file of server \"%s\".",
								   t->servername);
			}
			break;
		case OUTCOME_TOO_BIG:
			e->message = psprintf("response to %s %s is larger than %s (%zu bytes)",
								  t->method, t->route, t->max_body_setting, t->max_body);
			e->detail = pstrdup("The response was not read beyond that limit.");
			e->hint = pstrdup("Ask for less (a LIMIT, a narrower WHERE), or raise the limit if the service really answers this much.");
			break;
		case OUTCOME_NO_MEMORY:
			e->message = pstrdup("out of memory");
			e->detail = psprintf("Failed while receiving the response to %s %s.",
								 t->method, t->route);
			break;
		default:
			e->message = psprintf("%s %s failed", t->method, t->route);
			e->detail = psprintf("libcurl reported: %s.", why);
			break;
	}
	return e;
}

/*
 * One sentence on a failure without an HTTP status, the result's
 * message: what happened and, when the request may have
 * been carried out, that its outcome is unknown.  Allocates in
 * CurrentMemoryContext.
 */
char *
psvc_http_failure_text(PsvcTransfer *t)
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
		case OUTCOME_TLS:
			return psprintf("Could not establish a TLS connection: libcurl reported: %s.", why);
		case OUTCOME_TIMEOUT:
			return psprintf("Timed out after %ld ms.%s", t->request_timeout_ms, unknown);
		case OUTCOME_LOST:
			return psprintf("The connection was lost: libcurl reported: %s.%s", why, unknown);
		case OUTCOME_TOO_BIG:
			return psprintf("The response was larger than %zu bytes, the limit set by %s.",
							t->max_body, t->max_body_setting);
		case OUTCOME_NO_MEMORY:
			return pstrdup("Out of memory while receiving the response.");
		default:
			return psprintf("libcurl reported: %s.", why);
	}
}
