/*-------------------------------------------------------------------------
 *
 * fdw_explain.c
 *		  EXPLAIN of a scan of a partner_svc foreign table: the request
 *		  the scan sends first, and with ANALYZE what it cost.
 *
 * The call is made by the page source's one builder of the scan's calls
 * (psvc_scan_make_call, fdw_scan_page.c) from the plan's values, and
 * described by the call module (psvc_call_describe), so EXPLAIN shows
 * what the scan sends, not a description kept apart that could drift from
 * it, and touches none of the scan's run state.  Values the plan knows
 * (constants) are shown as they are sent; the others, and the values of
 * an = ANY(...), as {name} placeholders.  A value that a filter of
 * documented values rules out (catalog.h: filter_closed), or conditions
 * on one column that no value meets together (fdw_plan.c intersects
 * them), make the request "none": the scan sends nothing and returns no
 * row.  The API key
 * is never part of it.
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
#include "pg_compat.h"

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
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	char	  **seen;
	int			m = 0;
	Oid			out;
	bool		varlena;

	n = psvc_fdw_array_elems(arr, et, &elems, &nulls, NULL, NULL);
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

/* What the scan did, for EXPLAIN ANALYZE: its pages, requests and waits. */
static void
explain_run(PsvcScanState *st, ExplainState *es)
{
	ExplainPropertyInteger("Partner Pages", NULL, st->n_pages, es);
	ExplainPropertyInteger("Partner Requests", NULL, st->n_requests, es);
	ExplainPropertyInteger("Partner Retries", NULL, st->n_retries, es);
	/* a mistyped key gives no rows: this line keeps it visible */
	if (st->n_not_found > 0)
		ExplainPropertyInteger("Partner Not Found", NULL, st->n_not_found, es);
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

/*
 * The call(s) a scan will send, as the plan has them: the values the plan
 * knows (constants) as they are sent, placeholders ({name}) for values
 * known only at run time, the first page; or "none" when a closed filter
 * leaves no value to send.  Described by the call module
 * (psvc_call_describe) from the plan alone: the scan's run state is
 * neither read nor changed.
 */
void
psvc_fdw_explain(ForeignScanState *node, ExplainState *es)
{
	PsvcScanState *st = node->fdw_state;
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	List	   *pushed = list_nth(plan->fdw_private, PSVC_PRIV_PUSHED);
	const char **texts = palloc0(sizeof(char *) * Max(st->npushed, 1));
	bool	   *placeholders = palloc0(sizeof(bool) * Max(st->npushed, 1));
	PsvcCall   *call;
	int			nreq = 1;
	const char *none = NULL;
	const char *empty = NULL;
	ListCell   *lc;
	int			i = 0;

	/* values for the description: constants as they are, others by name */
	foreach(lc, pushed)
	{
		List	   *p = lfirst(lc);
		Expr	   *expr = list_nth(plan->fdw_exprs, intVal(list_nth(p, PSVC_PUSHED_EXPR)));
		PushedValue *pv = &st->pushed[i];

		if (IsA(expr, Const) && !((Const *) expr)->constisnull && !pv->is_array)
		{
			Const	   *c = (Const *) expr;

			texts[i] = psvc_fdw_const_text(c->constvalue, c->consttype);
			if (pv->closed && psvc_endpoint_filter_excludes(pv->def, texts[i]))
				none = pv->def->name;
		}
		else
		{
			/*
			 * An array fans out: one call per element, named by its
			 * parameter.  Values intersected with those of further
			 * conditions are known only when the scan starts.
			 */
			if (pv->nalso == 0 && IsA(expr, Const) && !((Const *) expr)->constisnull)
			{
				Const	   *c = (Const *) expr;
				int			n;

				if (pv->closed)
				{
					/* only the documented values it names are sent */
					n = closed_array_values(pv, c);
					if (n == 0)
						none = pv->def->name;
				}
				else
				{
					ArrayType  *arr = DatumGetArrayTypeP(c->constvalue);

					n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
					/* the conditions on the column leave no value */
					if (n == 0)
						empty = pv->def->name;
				}
				nreq *= Max(n, 1);
				texts[i] = psprintf("{%s}", pv->def->param);
			}
			else
				texts[i] = psprintf("{%s}", pv->def->kind == PSVC_COL_PATH ?
									pv->def->param : pv->def->name);
			placeholders[i] = true;
		}
		i++;
	}
	/* the first page, as planned: not what is left after a run (ANALYZE) */
	call = psvc_scan_make_call(st, texts, placeholders,
							   psvc_scan_page_limit(st, 0), NULL);
	/* a plan without the required key shows it as a placeholder */
	if (st->missing)
	{
		const PsvcColumnDef *c = psvc_endpoint_column(st->ep, st->missing);
		const char *param = c ? c->param : st->missing;

		if (psvc_op_param(call->op, param, strlen(param)) != NULL)
			psvc_call_set_placeholder(call, param, psprintf("{%s}", param));
	}
	if (none != NULL)
		ExplainPropertyText("Partner Request",
							psprintf("none (no documented value of %s)", none), es);
	else if (empty != NULL)
		ExplainPropertyText("Partner Request",
							psprintf("none (no value of %s meets every condition)", empty), es);
	else
		ExplainPropertyText("Partner Request", psvc_call_describe(call), es);
	if (st->missing)
		ExplainPropertyText("Partner Missing Key", st->missing, es);
	if (nreq > 1 && none == NULL && empty == NULL)
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
		explain_run(st, es);
}
