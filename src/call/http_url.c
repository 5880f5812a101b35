/*-------------------------------------------------------------------------
 *
 * http_url.c
 *		  The one builder of request paths of partner_svc: every path and
 *		  query string sent to a partner service, by a foreign table or a
 *		  function, is made here from a route template and plain values.
 *
 * Routes.  A route is the template of an operation of catalog.c;
 * each {name} is replaced by the value of path parameter name.  No value
 * can change the route: every byte outside RFC 3986's unreserved set is
 * percent-encoded (so "/", "?", "#", "%", spaces and controls are), and a
 * value made only of dots, which would be a dot segment ("." or ".."),
 * has its dots encoded too (%2E).  http.c sets CURLOPT_PATH_AS_IS, so
 * libcurl sends the path exactly as built here and never removes a dot
 * segment by itself.
 *
 * Values.  Before anything is sent, each path parameter is checked
 * against what the documents say of it, which the operation's row of the
 * catalogue gives (catalog.c: a movie reference has 1 to 255 characters,
 * a job id is an int64, a question id starts "BQ-" and a persona code);
 * a bad value is 22023 naming the parameter.  fdw_scan.c checks every value of
 * a scan this way before its first request (psvc_call_check_param), so a
 * fanned-out scan with one bad value sends nothing either.
 *
 * Encoding.  Values arrive in the server encoding; the documents' wire
 * format is UTF-8.  Each path and query value is converted to UTF-8 here,
 * then encoded; request bodies are converted in http.c (psvc_call_start)
 * and response bodies back to the server encoding in http.c
 * (psvc_call_finish).  These three are the only conversions.
 *
 * EXPLAIN shows psvc_call_describe(): the path as it is sent, values
 * encoded (placeholders as written), without the base URL (which is the server's business) and
 * without the key (which is never part of a URL).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/http_url.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <curl/curl.h>

#include "mb/pg_wchar.h"

#include "catalog.h"
#include "http_int.h"

static bool
valid_int64(const char *s)
{
	const char *p = s;
	int			digits = 0;

	if (*p == '-')
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p != '\0' || digits == 0 || digits > 19)
		return false;
	if (digits == 19)
	{
		/* compare with the int64 bounds as text of the same length */
		const char *bound = s[0] == '-' ? "9223372036854775808" : "9223372036854775807";

		if (strcmp(s[0] == '-' ? s + 1 : s, bound) > 0)
			return false;
	}
	return true;
}

/* Longest part of a question id after "BQ-XX-" that we send. */
#define PSVC_QUESTION_REST_MAX	32

static bool
valid_question(const char *s)
{
	static const char *const personas[] = {"GF", "EK", "KA", "HR"};
	bool		persona = false;
	size_t		rest;

	if (strncmp(s, "BQ-", 3) != 0 || strlen(s) < 7 || s[5] != '-')
		return false;
	for (int i = 0; i < lengthof(personas); i++)
		if (strncmp(s + 3, personas[i], 2) == 0)
			persona = true;
	rest = strlen(s + 6);
	if (!persona || rest > PSVC_QUESTION_REST_MAX)
		return false;
	for (const char *p = s + 6; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= 'a' && *p <= 'z') || *p == '-' || *p == '_'))
			return false;
	return true;
}

/*
 * Raises 22023 naming the parameter unless value (server encoding) is what
 * the documents allow for path parameter name of op (its row in
 * catalog.c).  namelen is the length of name (it may point into the route).
 */
static void
check_param(const PsvcOperation *op, const char *name, size_t namelen,
			const char *value)
{
	const PsvcParamDef *r = psvc_op_param(op, name, namelen);
	bool		ok;
	int			nchars = 0;

	if (r == NULL)
		elog(ERROR, "operation \"%s\" has no path parameter \"%.*s\"",
			 op->name, (int) namelen, name);
	switch (r->kind)
	{
		case PSVC_PARAM_INT64:
			ok = valid_int64(value);
			break;
		case PSVC_PARAM_QUESTION:
			ok = valid_question(value);
			break;
		case PSVC_PARAM_TEXT:
		default:
			nchars = pg_mbstrlen(value);
			ok = nchars >= 1 && nchars <= r->max_chars;
			break;
	}
	if (ok)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for path parameter \"%.*s\"", (int) namelen, name),
			 r->kind == PSVC_PARAM_TEXT ?
			 errdetail("Parameter {%.*s} of %s %s must be %s; the value given has %d characters.",
					   (int) namelen, name, op->method, op->route, r->doc, nchars) :
			 errdetail("Parameter {%.*s} of %s %s must be %s.",
					   (int) namelen, name, op->method, op->route, r->doc),
			 errhint("Nothing was sent to the service.")));
}

/*
 * Checks a value for path parameter name of op, as the URL builder will,
 * before a caller sends anything (fdw_scan.c checks every value of a
 * fanned-out scan first, the function executor its argument before it
 * looks for the server).  Raises 22023 naming the parameter.
 */
void
psvc_call_check_param(const PsvcOperation *op, const char *name, const char *value)
{
	check_param(op, name, strlen(name), value);
}

/*
 * Appends value percent-encoded: converted to UTF-8, then everything but
 * RFC 3986 unreserved encoded; with dot_segment, a value of dots only
 * ("." or "..", which would be a dot segment of the path) has its dots
 * encoded as well.
 */
static void
append_encoded(StringInfo buf, const char *value, bool dot_segment)
{
	int			len = (int) strlen(value);
	char	   *utf8 = pg_server_to_any(value, len, PG_UTF8);
	char	   *e;

	if (dot_segment && len > 0 && strspn(utf8, ".") == strlen(utf8))
	{
		for (const char *p = utf8; *p; p++)
			appendStringInfoString(buf, "%2E");
	}
	else
	{
		e = curl_easy_escape(NULL, utf8, (int) strlen(utf8));
		if (e == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory")));
		appendStringInfoString(buf, e);
		curl_free(e);
	}
	if (utf8 != value)
		pfree(utf8);
}

/*
 * Appends the path of call (its route with each {name} replaced by the
 * encoded value of path parameter name) and its encoded query string.
 * With check, each path value is first checked against its operation's
 * row (22023); without, values are taken as they are and placeholders
 * are written as they are (EXPLAIN).  Allocates in CurrentMemoryContext.
 */
void
psvc_http_append_path(StringInfo buf, const PsvcCall *call, bool check)
{
	const PsvcOperation *op = call->op;
	const char *p = op->route;
	ListCell   *lc;
	bool		first = true;

	while (*p != '\0')
	{
		const char *end;
		const char *value = NULL;
		size_t		namelen;
		int			i;

		if (*p != '{')
		{
			appendStringInfoChar(buf, *p++);
			continue;
		}
		end = strchr(p, '}');
		if (end == NULL)
			elog(ERROR, "unterminated parameter in route \"%s\"", op->route);
		namelen = end - p - 1;
		for (i = 0; i < PSVC_MAX_PATH_PARAMS && op->params[i]; i++)
		{
			if (strlen(op->params[i]->name) == namelen &&
				strncmp(op->params[i]->name, p + 1, namelen) == 0)
			{
				value = call->path[i];
				break;
			}
		}
		if (value == NULL)
			elog(ERROR, "route \"%s\" lacks a value for path parameter \"%.*s\"",
				 op->route, (int) namelen, p + 1);
		if (call->placeholders & (1 << i))
			appendStringInfoString(buf, value);
		else
		{
			if (check)
				check_param(op, p + 1, namelen, value);
			append_encoded(buf, value, true);
		}
		p = end + 1;
	}

	foreach(lc, call->query)
	{
		PsvcKV	   *kv = (PsvcKV *) lfirst(lc);

		appendStringInfoChar(buf, first ? '?' : '&');
		first = false;
		append_encoded(buf, kv->name, false);
		if (kv->value != NULL)
		{
			appendStringInfoChar(buf, '=');
			if (kv->placeholder)
				appendStringInfoString(buf, kv->value);
			else
				append_encoded(buf, kv->value, false);
		}
	}
}

/*
 * "METHOD /path?query" as it will be sent, without the base URL: for
 * EXPLAIN, and safe to show (the key is never part of it).  Values are not
 * checked, placeholders ({jobId}) are shown as written.  Allocates in
 * CurrentMemoryContext.
 */
char *
psvc_call_describe(const PsvcCall *call)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%s ", call->op->method);
	psvc_http_append_path(&buf, call, false);
	return buf.data;
}

/*
 * Whether libcurl, which sends every call, accepts url as a whole URL
 * (port range, host syntax): NULL when it does, else why not, a static
 * text.  any_scheme: a proxy's URL, whose scheme libcurl need not speak.
 * Option validation (fdw_options.c) asks; the handle is freed before the
 * caller raises.
 */
const char *
psvc_call_url_error(const char *url, bool any_scheme)
{
	CURLU	   *handle = curl_url();
	CURLUcode	rc;

	if (handle == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	rc = curl_url_set(handle, CURLUPART_URL, url,
					  any_scheme ? CURLU_NON_SUPPORT_SCHEME : 0);
	curl_url_cleanup(handle);
	return rc == CURLUE_OK ? NULL : curl_url_strerror(rc);
}
