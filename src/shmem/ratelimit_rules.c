/*-------------------------------------------------------------------------
 *
 * ratelimit_rules.c
 *		  Which limit applies to a request: the partner's table of limits
 *		  for the three tiers, and the per-route overrides of a server.
 *
 * The table is data in the catalogue (catalog.c, psvc_limit_rows()), and
 * each operation names its row, so a request's limit is found from its
 * operation when it is built, without matching routes.  A row names a
 * route the way the partner document's Limits table writes it (method and
 * path without the service's limits_prefix, "GET /orders/{id}" for our
 * "/public/orders/{id}").  A row counts per resource id exactly when it
 * has an "{id}" or "{unique_id}" segment, as the document says; the id is
 * the value of the operation's path parameter.
 *
 * Overrides are matched to the operation's route (prefix removed) by path
 * segments; a parameter segment ("{id}") matches any parameter segment,
 * whatever its name.
 *
 * Overrides: the server option rate_limits is a comma-separated list of
 * ROW=LIMIT, ROW written as in the table (e.g. 'GET /orders/{id}=10,
 * POST /orders=100'), LIMIT a positive integer or "none" (no limit).  An
 * override replaces the tier's value of a row of the table or adds a row
 * the table lacks.  The value is parsed in place on every request (it is
 * short), so a change by ALTER SERVER applies to the next request.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/ratelimit_rules.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "catalog.h"
#include "options.h"
#include "pg_compat.h"
#include "ratelimit_int.h"

/* Largest limit an override may set. */
#define PSVC_RL_MAX_LIMIT		1000000

/* A piece of a string: rows and overrides are parsed in place. */
typedef struct Span
{
	const char *p;
	int			len;
} Span;

/* One entry of option rate_limits. */
typedef struct Override
{
	Span		row;			/* "[METHOD ]/path" */
	Span		value;			/* digits or "none" */
	Span		whole;			/* the entry, for messages */
} Override;

PG_FUNCTION_INFO_V1(psvc_rl_rules);

static bool
span_eq(Span a, const char *s)
{
	return a.len == (int) strlen(s) && strncmp(a.p, s, a.len) == 0;
}

static Span
span_trim(const char *p, int len)
{
	Span		s;

	while (len > 0 && (*p == ' ' || *p == '\t' || *p == '\n'))
		p++, len--;
	while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\n'))
		len--;
	s.p = p;
	s.len = len;
	return s;
}

/*
 * Splits a row into method (len 0: any method) and path.
 */
static void
split_row(Span row, Span *method, Span *path)
{
	const char *sp = memchr(row.p, ' ', row.len);

	if (sp == NULL)
	{
		method->p = row.p;
		method->len = 0;
		*path = row;
	}
	else
	{
		method->p = row.p;
		method->len = sp - row.p;
		*path = span_trim(sp, row.len - (sp - row.p));
	}
}

static bool
is_param(const char *seg, int len)
{
	return len >= 2 && seg[0] == '{' && seg[len - 1] == '}';
}

/*
 * Whether path (a row's) matches route (a request's template, prefix
 * removed) segment by segment, a parameter matching a parameter.  Sets
 * *resource_segment to the index (in route, counting from the first
 * segment after the prefix) of the row's {id} or {unique_id}, or -1.
 */
static bool
path_matches(Span path, const char *route, int *resource_segment)
{
	const char *a = path.p;
	const char *aend = path.p + path.len;
	const char *b = route;
	int			seg = 0;

	*resource_segment = -1;
	for (;;)
	{
		const char *asl;
		const char *bsl;
		int			alen;
		int			blen;

		if (a == aend || *b == '\0')
			return a == aend && *b == '\0';
		if (*a != '/' || *b != '/')
			return false;
		a++, b++;
		asl = memchr(a, '/', aend - a);
		if (asl == NULL)
			asl = aend;
		bsl = strchr(b, '/');
		if (bsl == NULL)
			bsl = b + strlen(b);
		alen = asl - a;
		blen = bsl - b;
		if (is_param(a, alen))
		{
			if (!is_param(b, blen))
				return false;
			if ((alen == 4 && strncmp(a, "{id}", 4) == 0) ||
				(alen == 11 && strncmp(a, "{unique_id}", 11) == 0))
				*resource_segment = seg;
		}
		else if (alen != blen || strncmp(a, b, alen) != 0)
			return false;
		a = asl;
		b = bsl;
		seg++;
	}
}

/* Whether two rows are written the same (method and path). */
static bool
same_row(Span a, Span b)
{
	Span		ma,
				pa,
				mb,
				pb;

	split_row(a, &ma, &pa);
	split_row(b, &mb, &pb);
	return ma.len == mb.len && strncmp(ma.p, mb.p, ma.len) == 0 &&
		pa.len == pb.len && strncmp(pa.p, pb.p, pa.len) == 0;
}

static bool
row_matches(Span row, const char *method, const char *route, int *resource_segment)
{
	Span		m;
	Span		path;

	split_row(row, &m, &path);
	if (m.len > 0 && !span_eq(m, method))
		return false;
	return path_matches(path, route, resource_segment);
}

/*
 * The next entry of an overrides value starting at *p; false at the end.
 * Only splits: psvc_rl_check_overrides has checked the syntax.
 */
static bool
next_override(const char **p, Override *o)
{
	const char *s = *p;
	const char *end;
	const char *eq;

	while (*s == ',' || *s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (*s == '\0')
		return false;
	end = strchr(s, ',');
	if (end == NULL)
		end = s + strlen(s);
	o->whole = span_trim(s, end - s);
	eq = memchr(s, '=', end - s);
	if (eq == NULL)
	{
		o->row = o->whole;
		o->value.p = end;
		o->value.len = 0;
	}
	else
	{
		o->row = span_trim(s, eq - s);
		o->value = span_trim(eq + 1, end - eq - 1);
	}
	*p = end;
	return true;
}

/* An override's limit: 0 for "none", else the number. */
static int
override_limit(Span v)
{
	int			n = 0;

	if (span_eq(v, "none"))
		return 0;
	for (int i = 0; i < v.len; i++)
		n = n * 10 + (v.p[i] - '0');
	return n;
}

/*
 * The route of op with its service's limits_prefix removed (a pointer into
 * the route), as the document's table and the overrides write it; *skipped
 * receives the number of segments removed.
 */
static const char *
strip_prefix(const PsvcOperation *op, int *skipped)
{
	const char *prefix = psvc_services[op->service].limits_prefix;
	size_t		len = prefix ? strlen(prefix) : 0;

	*skipped = 0;
	if (prefix == NULL || strncmp(op->route, prefix, len) != 0 || op->route[len] != '/')
		return op->route;
	for (const char *c = prefix; *c; c++)
		if (*c == '/')
			(*skipped)++;
	return op->route + len;
}

/*
 * The value of the path parameter in segment seg of route (a template),
 * or NULL.
 */
static const char *
segment_value(const PsvcOperation *op, int seg, const char *const *path)
{
	const char *p = op->route;
	const char *end;

	for (int i = 0; i <= seg; i++)
	{
		p = strchr(p, '/');
		if (p == NULL)
			return NULL;
		p++;
	}
	end = strchr(p, '/');
	if (end == NULL)
		end = p + strlen(p);
	if (end - p < 2 || p[0] != '{' || end[-1] != '}')
		return NULL;
	for (int i = 0; i < PSVC_MAX_PATH_PARAMS && op->params[i]; i++)
	{
		if ((int) strlen(op->params[i]->name) == end - p - 2 &&
			strncmp(op->params[i]->name, p + 1, end - p - 2) == 0)
			return path[i];
	}
	return NULL;
}

/* Whether a row of the table counts per resource id. */
static bool
row_per_resource(const char *row)
{
	return strstr(row, "{id}") != NULL || strstr(row, "{unique_id}") != NULL;
}

/*
 * Fills rule for the call key, whose operation names its row of the
 * table (catalog.c): no matching of routes unless the server has
 * overrides.  rule->row is static or allocated in CurrentMemoryContext;
 * rule->resource is one of key->path.  Cheap: with overrides,
 * a scan of their text with no allocation unless one matches.
 */
void
psvc_rl_rule(const PsvcCallKey *key, PsvcRlRule *rule)
{
	const PsvcServer *server = key->server;
	const PsvcOperation *op = key->op;

	memset(rule, 0, sizeof(*rule));
	rule->tier = psvc_tier_names[psvc_tier_index(server->tier)];
	rule->route = psprintf("%s %s", op->method, op->route);

	if (server->rate_limits != NULL)
	{
		const char *p = server->rate_limits;
		int			skipped;
		const char *rest = strip_prefix(op, &skipped);
		int			seg;
		Override	o;

		while (next_override(&p, &o))
		{
			if (row_matches(o.row, op->method, rest, &seg))
			{
				rule->limit = override_limit(o.value);
				rule->row = pnstrdup(o.row.p, o.row.len);
				rule->overridden = true;
				if (seg >= 0)
					rule->resource = segment_value(op, seg + skipped,
												   key->path);
				return;
			}
		}
	}

	if (op->limit != NULL)
	{
		rule->limit = op->limit->limit[psvc_tier_index(server->tier)];
		rule->row = op->limit->row;
		/* the row's {id} is the operation's path parameter */
		if (row_per_resource(op->limit->row) && op->params[0] != NULL)
			rule->resource = key->path[0];
	}
}

static void
report_bad_override(Span whole, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
			 errmsg("invalid value for option \"rate_limits\""),
			 errdetail("Entry \"%.*s\": %s", whole.len, whole.p, why),
			 errhint("Write a comma-separated list of ROUTE=LIMIT, ROUTE as in the rate-limit table (\"GET /orders/{id}\", or a path alone for every method), LIMIT a positive integer or \"none\"; for example 'GET /orders/{id}=10, POST /orders=100'.")));
}

/*
 * Validator of option rate_limits: every entry is ROW=LIMIT with a
 * well-formed row (optional upper-case method, then a path of segments,
 * parameters in braces) and a limit 1..PSVC_RL_MAX_LIMIT or "none"; no row
 * twice.  Rows the table does not have are allowed: a contract may limit
 * routes the document does not.
 */
void
psvc_rl_check_overrides(const char *value)
{
	const char *p = value;
	Override	o;
	List	   *seen = NIL;

	while (next_override(&p, &o))
	{
		Span		m;
		Span		path;
		ListCell   *lc;

		if (memchr(o.whole.p, '=', o.whole.len) == NULL)
			report_bad_override(o.whole, "it has no \"=LIMIT\".");
		if (o.row.len == 0)
			report_bad_override(o.whole, "the route is missing.");
		split_row(o.row, &m, &path);
		for (int i = 0; i < m.len; i++)
			if (m.p[i] < 'A' || m.p[i] > 'Z')
				report_bad_override(o.whole, "the method must be an upper-case word such as GET or POST.");
		if (path.len == 0 || path.p[0] != '/')
			report_bad_override(o.whole, "the path must start with \"/\".");
		for (int i = 0; i < path.len; i++)
		{
			char		c = path.p[i];

			if (c == ' ' || c == '\t' || c == '=' || c == '?' || c == '#' ||
				(unsigned char) c < 0x20)
				report_bad_override(o.whole, "the path must be one word without spaces, \"=\", \"?\" or \"#\".");
			if (c == '/' && i + 1 < path.len && path.p[i + 1] == '/')
				report_bad_override(o.whole, "the path has an empty segment.");
		}
		if (o.value.len == 0)
			report_bad_override(o.whole, "the limit is missing.");
		if (!span_eq(o.value, "none"))
		{
			int64		n = 0;

			for (int i = 0; i < o.value.len; i++)
			{
				if (o.value.p[i] < '0' || o.value.p[i] > '9')
					report_bad_override(o.whole, "the limit must be a positive integer or \"none\".");
				n = n * 10 + (o.value.p[i] - '0');
				if (n > PSVC_RL_MAX_LIMIT)
					report_bad_override(o.whole, psprintf("the limit must be at most %d.", PSVC_RL_MAX_LIMIT));
			}
			if (n == 0)
				report_bad_override(o.whole, "the limit must be a positive integer or \"none\".");
		}
		foreach(lc, seen)
		{
			if (span_eq(o.row, (const char *) lfirst(lc)))
				report_bad_override(o.whole, "the route is given more than once.");
		}
		seen = lappend(seen, pnstrdup(o.row.p, o.row.len));
	}
}

/*
 * partner_svc.rate_limit_rules(server name): the limits a server's
 * requests get, one row per route: the table's rows of its service at its
 * tier with the overrides applied, then overrides of routes the table
 * lacks.  Columns: route, per_resource, "limit" (NULL: unlimited), source
 * ('table', 'our choice', 'override').  Needs USAGE on the server, like a
 * scan of it.
 */
Datum
psvc_rl_rules(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = NameStr(*PG_GETARG_NAME(0));
	ForeignServer *fs = GetForeignServerByName(name, false);
	PsvcServer *server;
	AclResult	aclresult;
	const char *p;
	Override	o;
	const PsvcLimitRow *const *rows;
	int			nrows;
	int			service;

	aclresult = psvc_server_aclcheck(fs->serverid, GetUserId(), ACL_USAGE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FOREIGN_SERVER, fs->servername);
	server = psvc_options_server(fs->serverid);
	service = psvc_service_find(server->service);

	InitMaterializedSRF(fcinfo, 0);

	rows = psvc_limit_rows(&nrows);
	for (int i = 0; i < nrows; i++)
	{
		const PsvcLimitRow *r = rows[i];
		Span		row = {r->row, (int) strlen(r->row)};
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};
		int			limit = r->limit[psvc_tier_index(server->tier)];
		const char *source = r->documented ? "table" : "our choice";

		if (r->service != service)
			continue;
		p = server->rate_limits;
		while (p != NULL && next_override(&p, &o))
		{
			if (same_row(o.row, row))
			{
				limit = override_limit(o.value);
				source = "override";
				break;
			}
		}
		values[0] = CStringGetTextDatum(r->row);
		values[1] = BoolGetDatum(row_per_resource(r->row));
		values[2] = Int32GetDatum(limit);
		nulls[2] = (limit == 0);
		values[3] = CStringGetTextDatum(source);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	/* overrides of rows the table does not have */
	rows = psvc_limit_rows(&nrows);
	p = server->rate_limits;
	while (p != NULL && next_override(&p, &o))
	{
		bool		in_table = false;
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};
		char	   *row = pnstrdup(o.row.p, o.row.len);
		int			limit = override_limit(o.value);

		for (int i = 0; i < nrows && !in_table; i++)
		{
			Span		trow = {rows[i]->row, (int) strlen(rows[i]->row)};

			in_table = rows[i]->service == service &&
				same_row(o.row, trow);
		}
		if (in_table)
			continue;
		values[0] = CStringGetTextDatum(row);
		values[1] = BoolGetDatum(row_per_resource(row));
		values[2] = Int32GetDatum(limit);
		nulls[2] = (limit == 0);
		values[3] = CStringGetTextDatum("override");
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	return (Datum) 0;
}
