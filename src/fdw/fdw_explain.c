/*-------------------------------------------------------------------------
 *
 * fdw_explain.c
 *		  EXPLAIN of a scan of a partner_svc foreign table: the request
 *		  the scan sends first, and with ANALYZE what it cost.
 *
 * The request is built by the page source (fdw_scan_page.c) from the
 * scan's state as psvc_fdw_begin left it, so EXPLAIN shows what the scan
 * sends, not a description kept apart that could drift from it.  Values
 * the plan knows (constants) are shown as they are; the others, and the
 * values of an = ANY(...), as {name} placeholders.  A value that a filter
 * of documented values rules out (catalog.h: filter_closed) makes the
 * request "none": the scan sends nothing and returns no row.  The API key
 * is never part of it (psvc_http_describe).
 *
 * Memory: everything in CurrentMemoryContext (the EXPLAIN's).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_explain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

#include "fdw.h"
#include "fdw_scan_int.h"

/*
 * The number of distinct values of a closed filter's constant array that
 * are documented values: the streams it makes (fdw_scan_values.c).
 * Allocates in CurrentMemoryContext.
 */
static int
closed_array_values(const PushedValue *pv, Const *c)
{
	ArrayType  *arr = DatumGetArrayTypeP(c->constvalue);
	Oid			et = ARR_ELEMTYPE(arr);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	char	  **seen;
	int			m = 0;
	Oid			out;
	bool		varlena;

	get_typlenbyvalalign(et, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, et, typlen, typbyval, typalign, &elems, &nulls, &n);
	getTypeOutputInfo(et, &out, &varlena);
	seen = palloc(sizeof(char *) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		char	   *text;
		bool		dup = false;

		if (nulls[i])
			continue;
		text = OidOutputFunctionCall(out, elems[i]);
		if (psvc_endpoint_filter_excludes(pv->def, text))
			continue;
		/* documented values are few: a linear search is enough */
		for (int k = 0; k < m && !dup; k++)
			dup = strcmp(seen[k], text) == 0;
		if (!dup)
			seen[m++] = text;
	}
	return m;
}

/*
 * The request(s) a scan will send, with the values the plan knows
 * (constants) and $n-style placeholders for values known only at run time.
 */
void
psvc_fdw_explain(ForeignScanState *node, ExplainState *es)
{
	PsvcScanState *st = node->fdw_state;
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	List	   *pushed = list_nth(plan->fdw_private, PSVC_PRIV_PUSHED);
	StringInfoData buf;
	PsvcHttpRequest *req;
	Stream		s0 = {0};
	int64		fetched;
	int			nreq = 1;
	const char *none = NULL;
	List	   *unmapped = NIL;
	ListCell   *lc;
	int			i = 0;

	/* values for the description: constants as they are, others by name */
	foreach(lc, pushed)
	{
		List	   *p = lfirst(lc);
		Expr	   *expr = list_nth(plan->fdw_exprs, intVal(list_nth(p, PSVC_PUSHED_EXPR)));
		PushedValue *pv = &st->pushed[i++];

		pv->texts = palloc(sizeof(char *));
		if (IsA(expr, Const) && !((Const *) expr)->constisnull)
		{
			Const	   *c = (Const *) expr;
			Oid			out;
			bool		varlena;

			getTypeOutputInfo(c->consttype, &out, &varlena);
			pv->texts[0] = OidOutputFunctionCall(out, c->constvalue);
			if (pv->is_array && pv->closed)
			{
				int			n = closed_array_values(pv, c);

				if (n == 0)
					none = pv->def->name;
				nreq *= Max(n, 1);
				pv->texts[0] = psprintf("{%s}", pv->def->param);
				unmapped = lappend(unmapped, pv);
			}
			else if (pv->is_array)
			{
				ArrayType  *arr = DatumGetArrayTypeP(c->constvalue);

				nreq *= ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
				pv->texts[0] = psprintf("{%s}", pv->def->param);
			}
			else if (pv->closed && psvc_endpoint_filter_excludes(pv->def, pv->texts[0]))
				none = pv->def->name;
		}
		else
		{
			pv->texts[0] = psprintf("{%s}", pv->def->kind == PSVC_COL_PATH ? pv->def->param : pv->def->name);
			if (pv->closed)
				unmapped = lappend(unmapped, pv);
		}
	}
	/* the first request, as planned: not what is left after a run (ANALYZE) */
	fetched = st->rows_fetched;
	st->rows_fetched = 0;
	req = psvc_scan_build_request(st, &s0);
	st->rows_fetched = fetched;
	/* a plan without the required key shows it as a placeholder */
	if (st->missing)
	{
		const PsvcColumnDef *c = psvc_endpoint_column(st->ep, st->missing);
		const char *param = c ? c->param : st->missing;

		req->path_params = lappend(req->path_params,
								   psvc_kv(param, psprintf("{%s}", param)));
	}
	/*
	 * a closed filter's placeholder is no documented value, so the request
	 * left it out: it goes with the filters, before limit and cursor
	 */
	foreach(lc, unmapped)
	{
		PushedValue *pv = lfirst(lc);
		int			at = 0;
		ListCell   *lc2;

		if (st->detail)
			break;
		foreach(lc2, req->query)
		{
			if (strcmp(((PsvcKV *) lfirst(lc2))->name, "limit") == 0)
				break;
			at++;
		}
		req->query = list_insert_nth(req->query, at, psvc_kv(pv->def->param, pv->texts[0]));
	}
	/* placeholders are shown as written, not URL-encoded */
	initStringInfo(&buf);
	for (const char *p = psvc_http_describe(req); *p; p++)
	{
		if (strncmp(p, "%7B", 3) == 0 || strncmp(p, "%7D", 3) == 0)
		{
			appendStringInfoChar(&buf, p[2] == 'B' ? '{' : '}');
			p += 2;
		}
		else
			appendStringInfoChar(&buf, *p);
	}
	if (none != NULL)
		ExplainPropertyText("Partner Request",
							psprintf("none (no documented value of %s)", none), es);
	else
		ExplainPropertyText("Partner Request", buf.data, es);
	if (st->missing)
		ExplainPropertyText("Partner Missing Key", st->missing, es);
	if (nreq > 1 && none == NULL)
		ExplainPropertyInteger("Partner Fan-out", NULL, nreq, es);
	if (st->limit >= 0)
		ExplainPropertyInteger("Partner Limit", NULL, st->limit, es);
	if (es->verbose && list_length(plan->fdw_private) > PSVC_PRIV_ESTIMATE &&
		strVal(list_nth(plan->fdw_private, PSVC_PRIV_ESTIMATE))[0] != '\0')
		ExplainPropertyText("Partner Estimate",
							strVal(list_nth(plan->fdw_private, PSVC_PRIV_ESTIMATE)), es);
	if (es->verbose)
		psvc_options_explain(st->server, es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Partner Pages", NULL, st->n_pages, es);
		ExplainPropertyInteger("Partner Requests", NULL, st->n_requests, es);
		ExplainPropertyInteger("Partner Retries", NULL, st->n_retries, es);
		if (st->rows_rejected > 0)
			ExplainPropertyInteger("Rows Removed by Partner Recheck", NULL, st->rows_rejected, es);
		ExplainPropertyInteger("Partner Bytes", NULL, st->n_bytes, es);
		if (st->cache_hits + st->cache_misses > 0)
			ExplainPropertyText("Partner Cache",
								psprintf("hits=" INT64_FORMAT " misses=" INT64_FORMAT,
										 st->cache_hits, st->cache_misses), es);
		if (es->timing)
		{
			ExplainPropertyFloat("Partner Wait Time", "ms", st->wait_ms, 3, es);
			ExplainPropertyFloat("Partner Rate Limit Wait", "ms", st->rl_wait_ms, 3, es);
		}
	}
}
