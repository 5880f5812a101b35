/*-------------------------------------------------------------------------
 *
 * functions_request.c
 *		  partner_svc.request(): one request to any route of a server,
 *		  through the call path of the catalogue's operations.
 *
 * A request is not a route string of ours: the caller names the method
 * and the path, and everything else a call gets from its operation row is
 * found for that path, so the request is limited, retried, cached,
 * counted and shown as the built-in calls are:
 *
 *   1. an operation of the catalogue of the server's service with the
 *	  same method whose route template matches the path (a {name} segment
 *	  matching any segment): the call is that operation's, with the
 *	  matched segments as its path values (checked by its rules).  Where
 *	  several match, a write is preferred, so a POST /mcp is never
 *	  retried as the read-only methods of the same route are;
 *   2. else a row of the server's option rate_limits, then a row of the
 *	  partner's table of limits (catalog.c), whose template matches: a
 *	  call of an operation made here with that template, so the limiter,
 *	  partner_svc.stats and partner_svc.requests count the route, not
 *	  each of its ids;
 *   3. else an operation whose route is the path itself.
 * An operation made here is safe to repeat exactly when its method is
 * GET or HEAD (retries, the response cache), and has no envelope: the
 * whole body is the result.
 *
 * A path is refused before anything is sent (22023) unless it is a plain
 * absolute path below the server's base_url: it starts with "/", has no
 * empty, "." or ".." segment, and no byte outside RFC 3986's unreserved
 * set but "/", ":" and "@" (no scheme, host, query, fragment or percent
 * sign: query parameters go in the argument query, where every value is
 * encoded as the URL builder encodes all values).
 *
 * Memory: everything, the operations made here included, is allocated in
 * the function's CurrentMemoryContext, which outlives the call.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions_request.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "catalog.h"
#include "functions.h"

PG_FUNCTION_INFO_V1(psvc_request);

/* psvc_request_key_set(): the deferred call's key, or NULL */
static const char *psvc_request_key = NULL;

/* The most characters of a path, and of a value matched to a {name}. */
#define REQ_MAX_PATH	2048
#define REQ_MAX_PARAM	1000

/* A path's segments, pointers into a copy of the path. */
typedef struct ReqPath
{
	char	   *text;			/* the path as given */
	int			nseg;
	char	  **seg;			/* NUL-terminated copies */
} ReqPath;

static const char *const req_methods[] = {
	"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", NULL
};

static void
req_bad_path(const char *path, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid path for partner_svc.request(): \"%s\"", path),
			 errdetail("%s", why),
			 errhint("Give a path below the server's base_url, such as '/jobs/ocr/history', and query parameters in the argument \"query\". Nothing was sent.")));
}

void
psvc_request_key_set(const char *key)
{
	psvc_request_key = key;
}

/*
 * The idempotency key of a write: the deferred call's (psvc_request_key),
 * else one drawn now, a version 4 UUID, the same for every retry of this
 * call.  CurrentMemoryContext.
 */
static const char *
req_idempotency_key(void)
{
	uint8		b[16];

	if (psvc_request_key != NULL)
		return psvc_request_key;
	if (!pg_strong_random(b, sizeof(b)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate an idempotency key")));
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	return psprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
					b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
					b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/*
 * Checks path as the file header says and splits it into segments.
 * CurrentMemoryContext.
 */
static ReqPath
req_parse_path(const char *path)
{
	ReqPath		r;
	char	   *copy;
	char	   *p;
	size_t		len = strlen(path);

	if (len == 0 || path[0] != '/')
		req_bad_path(path, "A path starts with \"/\".");
	if (len > REQ_MAX_PATH)
		req_bad_path(path, psprintf("A path has at most %d characters.", REQ_MAX_PATH));
	for (const char *c = path; *c; c++)
	{
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			(*c >= '0' && *c <= '9') || strchr("-._~/:@", *c) != NULL)
			continue;
		req_bad_path(path, psprintf("The character \"%c\" is not allowed in a path: only letters, digits and \"-._~/:@\" are.",
									*c >= 0x20 && *c < 0x7f ? *c : '?'));
	}

	r.text = pstrdup(path);
	r.nseg = 0;
	r.seg = palloc(sizeof(char *) * (len / 2 + 2));
	copy = pstrdup(path + 1);
	if (len == 1)
		return r;				/* "/": the base URL itself */
	p = copy;
	for (;;)
	{
		char	   *slash = strchr(p, '/');

		if (slash != NULL)
			*slash = '\0';
		if (*p == '\0')
			req_bad_path(path, "A path has no empty segment (\"//\" or a trailing \"/\").");
		if (strcmp(p, ".") == 0 || strcmp(p, "..") == 0)
			req_bad_path(path, "A path has no \".\" or \"..\" segment.");
		r.seg[r.nseg++] = p;
		if (slash == NULL)
			break;
		p = slash + 1;
	}
	return r;
}

/*
 * How many leading segments of path are the service's limits_prefix
 * ("/public"), which the rate-limit rows leave out; 0 when path does not
 * start with it.
 */
static int
req_prefix_segments(const char *service, const ReqPath *path)
{
	int			id = psvc_service_find(service);
	const char *prefix = id >= 0 ? psvc_services[id].limits_prefix : NULL;
	int			n = 0;

	if (prefix == NULL)
		return 0;
	for (const char *p = prefix; *p; p++)
		if (*p == '/')
		{
			const char *next = strchr(p + 1, '/');
			int			len = next ? next - p - 1 : (int) strlen(p + 1);

			if (n >= path->nseg || (int) strlen(path->seg[n]) != len ||
				strncmp(path->seg[n], p + 1, len) != 0)
				return 0;
			n++;
		}
	return n;
}

/*
 * A row "[METHOD ]/path" (len bytes) of a limits table: whether it is
 * for method and its path template matches path after skip segments;
 * sets *tpl and *tpl_len to the template.
 */
static bool
req_row_matches(const char *row, int len, const char *method, const ReqPath *path,
				int skip, const char **names, int *namelens, const char **values,
				int *n, const char **tpl, int *tpl_len)
{
	const char *sp;

	while (len > 0 && (*row == ' ' || *row == '\t' || *row == '\n'))
		row++, len--;
	while (len > 0 && (row[len - 1] == ' ' || row[len - 1] == '\t' || row[len - 1] == '\n'))
		len--;
	sp = memchr(row, ' ', len);
	if (sp != NULL && row[0] != '/')
	{
		if (sp - row != (int) strlen(method) || strncmp(row, method, sp - row) != 0)
			return false;
		len -= sp + 1 - row;
		row = sp + 1;
		while (len > 0 && *row == ' ')
			row++, len--;
	}
	*tpl = row;
	*tpl_len = len;
	return psvc_route_match(row, len, (const char *const *) path->seg, path->nseg,
							skip, names, namelens, values, n);
}

/*
 * A row of rate_limits, then of the partner's table, whose template
 * matches path (step 2): a row of the partner's table after the service's
 * prefix (which its rows leave out), an override with or without it.
 * *skip receives the segments of path before the template, *row the
 * partner's row (NULL for an override).
 */
static bool
req_limit_template(const PsvcServer *server, const char *method, const ReqPath *path,
				   const char **names, int *namelens, const char **values, int *n,
				   const char **tpl, int *tpl_len, int *skip,
				   const PsvcLimitRow **row)
{
	int			prefix = req_prefix_segments(server->service, path);
	int			service = psvc_service_find(server->service);
	const PsvcLimitRow *const *rows;
	int			nrows;

	*row = NULL;
	if (server->rate_limits != NULL)
	{
		const char *p = server->rate_limits;

		while (*p != '\0')
		{
			const char *comma = strchr(p, ',');
			const char *stop = comma ? comma : p + strlen(p);
			const char *eq = memchr(p, '=', stop - p);
			int			len = (eq ? eq : stop) - p;

			*skip = prefix;
			if (req_row_matches(p, len, method, path, prefix,
								names, namelens, values, n, tpl, tpl_len))
				return true;
			*skip = 0;
			if (prefix > 0 &&
				req_row_matches(p, len, method, path, 0,
								names, namelens, values, n, tpl, tpl_len))
				return true;
			p = comma ? comma + 1 : stop;
		}
	}
	*skip = prefix;
	rows = psvc_limit_rows(&nrows);
	for (int i = 0; i < nrows; i++)
	{
		if ((int) rows[i]->service != service)
			continue;
		if (req_row_matches(rows[i]->row, strlen(rows[i]->row), method, path, prefix,
							names, namelens, values, n, tpl, tpl_len))
		{
			*row = rows[i];
			return true;
		}
	}
	return false;
}

/*
 * An operation of method on server for path, as steps 2 and 3 of the
 * file header; values receives its path values.  CurrentMemoryContext.
 */
static PsvcOperation *
req_make_op(const PsvcServer *server, const char *method, const ReqPath *path,
			const char **values)
{
	PsvcOperation *op = palloc(sizeof(PsvcOperation));
	const char *names[PSVC_MAX_PATH_PARAMS];
	int			namelens[PSVC_MAX_PATH_PARAMS];
	int			n = 0;
	const char *tpl;
	int			tpl_len;
	int			skip;
	const PsvcLimitRow *row;
	StringInfoData route;

	if (!req_limit_template(server, method, path, names, namelens, values, &n,
							&tpl, &tpl_len, &skip, &row))
	{
		psvc_op_init_custom(op, psvc_service_find(server->service), method,
							path->text);
		return op;
	}
	/* the segments before the template (the prefix), as sent */
	initStringInfo(&route);
	for (int i = 0; i < skip; i++)
		appendStringInfo(&route, "/%s", path->seg[i]);
	appendBinaryStringInfo(&route, tpl, tpl_len);
	psvc_op_init_custom(op, psvc_service_find(server->service), method,
						route.data);
	op->limit = row;
	for (int i = 0; i < n; i++)
	{
		PsvcParamDef *def = palloc0(sizeof(PsvcParamDef));

		def->name = pnstrdup(names[i], namelens[i]);
		def->kind = PSVC_PARAM_TEXT;
		def->max_chars = REQ_MAX_PARAM;
		def->doc = "1 to 1000 characters";
		op->params[i] = def;
	}
	return op;
}

/*
 * Appends the query parameters of q, an object: a string as it is, a
 * number or boolean as its JSON text, null as the name alone, an array as
 * the name repeated for each of its scalars.
 */
static void
req_add_query(PsvcCall *call, Jsonb *q)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *name = NULL;
	int			depth = 0;

	if (!JB_ROOT_IS_OBJECT(q) || JB_ROOT_IS_SCALAR(q))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("query of partner_svc.request() must be a JSON object"),
				 errhint("Write it as '{\"limit\": 10, \"status\": \"done\"}'; nothing was sent.")));
	it = JsonbIteratorInit(&q->root);
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		char	   *value;

		switch (tok)
		{
			case WJB_BEGIN_OBJECT:
			case WJB_BEGIN_ARRAY:
				if (++depth > 2 || (depth == 2 && tok == WJB_BEGIN_OBJECT))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("query parameter \"%s\" of partner_svc.request() is not a scalar or an array of scalars",
									name ? name : ""),
							 errhint("Nothing was sent.")));
				continue;
			case WJB_END_OBJECT:
			case WJB_END_ARRAY:
				depth--;
				continue;
			case WJB_KEY:
				name = pnstrdup(v.val.string.val, v.val.string.len);
				continue;
			case WJB_VALUE:
			case WJB_ELEM:
				break;
			default:
				continue;
		}
		switch (v.type)
		{
			case jbvNull:
				value = NULL;
				break;
			case jbvString:
				value = pnstrdup(v.val.string.val, v.val.string.len);
				break;
			case jbvNumeric:
				value = DatumGetCString(DirectFunctionCall1(numeric_out,
															NumericGetDatum(v.val.numeric)));
				break;
			case jbvBool:
				value = v.val.boolean ? "true" : "false";
				break;
			default:
				value = NULL;
				break;
		}
		psvc_call_add_query(call, name, value, false);
	}
}

/*
 * partner_svc.request(method text, path text, query jsonb, body jsonb,
 * server name) RETURNS jsonb: the answer's body, NULL when it has none.
 */
Datum
psvc_request(PG_FUNCTION_ARGS)
{
	char	   *method;
	ReqPath		path;
	PsvcServer *server;
	const PsvcOperation *op;
	const char *values[PSVC_MAX_PATH_PARAMS] = {0};
	PsvcCall   *call;
	PsvcResult *res;
	Jsonb	   *answer;
	bool		known = false;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("method and path of partner_svc.request() must not be null")));
	method = text_to_cstring(PG_GETARG_TEXT_PP(0));
	for (char *c = method; *c; c++)
		*c = pg_ascii_toupper((unsigned char) *c);
	for (int i = 0; req_methods[i]; i++)
		known |= strcmp(req_methods[i], method) == 0;
	if (!known)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unsupported method \"%s\" for partner_svc.request()", method),
				 errhint("Use GET, HEAD, POST, PUT, PATCH or DELETE.")));
	/* before the server is looked for: nothing is sent for a bad path */
	path = req_parse_path(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	if (!PG_ARGISNULL(3) &&
		(strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a %s request of partner_svc.request() has no body", method),
				 errhint("Pass NULL as body, or use POST, PUT or PATCH.")));

	server = psvc_fn_server(NULL, fcinfo, 4);
	op = psvc_op_for_path(psvc_service_find(server->service), method,
						  (const char *const *) path.seg, path.nseg, values);
	if (op == NULL)
		op = req_make_op(server, method, &path, values);
	call = psvc_call_make(op, server, values);
	if (!PG_ARGISNULL(2))
		req_add_query(call, PG_GETARG_JSONB_P(2));
	if (!PG_ARGISNULL(3))
	{
		size_t		len;
		char	   *text = psvc_fn_json_text(PG_GETARG_JSONB_P(3), &len);

		psvc_call_set_body(call, text, len);
	}

	if (server->idempotency_header != NULL && !op->safe)
		psvc_call_set_idempotency_key(call, req_idempotency_key());

	res = psvc_call_run(call);
	if (res->kind != PSVC_CALL_OK)
		psvc_call_raise(call, res);
	if (res->body_len == 0)
		PG_RETURN_NULL();
	answer = psvc_fn_parse(res->body, res->body_len);
	if (answer == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_STRING_FORMAT),
				 errmsg("invalid JSON in the response of %s %s", op->method, op->route),
				 errdetail("The body is not valid JSON text.")));
	PG_RETURN_JSONB_P(answer);
}
