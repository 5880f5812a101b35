/*-------------------------------------------------------------------------
 *
 * fdw_scan_values.c
 *		  The values a scan of a partner_svc foreign table sends: the
 *		  pushed-down equalities evaluated for a (re)scan, arrays reduced
 *		  to their distinct values, and the streams their combinations
 *		  make.
 *
 * Each pushed value is evaluated once per (re)scan (fdw_scan.c).  An
 * = ANY(...) gives its distinct non-null values, in the order of their
 * first occurrence; with arrays on several path columns the scan makes
 * one stream per combination (psvc_scan_value_index, fdw_scan_int.h), at
 * most PSVC_SCAN_MAX_COMBINATIONS.  A NULL, or an array without a
 * non-null value, makes the scan empty; so does a filter of documented
 * values (catalog.h: filter_closed) left without one, since no row can hold
 * another: such a value is never sent.  Every value that goes into a
 * path is checked before any request is sent.
 *
 * Memory: the values and their texts in CurrentMemoryContext, the scan's
 * run context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_scan_values.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"

#include "fdw.h"
#include "fdw_scan_int.h"

/* Streams a scan with = ANY(...) on several path columns may make. */
#define PSVC_SCAN_MAX_COMBINATIONS	100000

/* How often loops over the values of an = ANY(...) check for interrupts. */
#define PSVC_SCAN_INTERRUPT_EVERY	1024

/* An array element's text and its position, for de-duplication. */
typedef struct ValueText
{
	char	   *text;
	int			pos;
} ValueText;

static int
value_text_cmp(const void *a, const void *b)
{
	const ValueText *x = a;
	const ValueText *y = b;
	int			c = strcmp(x->text, y->text);

	if (c != 0)
		return c;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static int
value_pos_cmp(const void *a, const void *b)
{
	const ValueText *x = a;
	const ValueText *y = b;

	return (x->pos > y->pos) - (x->pos < y->pos);
}

/*
 * Fills pv with the distinct non-null elements of arr, each as its Datum
 * and its text, in the order of their first occurrence.  Sorting makes it
 * O(n log n) for the 100,000 values an = ANY(...) may bring; the loops
 * check for interrupts.  Allocates in CurrentMemoryContext (run_cxt).
 */
static void
distinct_values(PushedValue *pv, ArrayType *arr, Oid out)
{
	int16		typlen;
	bool		typbyval;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			m = 0;
	ValueText  *vt;
	bool	   *dup;

	n = psvc_fdw_array_elems(arr, pv->type, &elems, &nulls, &typlen, &typbyval);
	pv->values = palloc(sizeof(Datum) * Max(n, 1));
	pv->texts = palloc(sizeof(char *) * Max(n, 1));
	vt = palloc(sizeof(ValueText) * Max(n, 1));
	dup = palloc0(sizeof(bool) * Max(n, 1));
	for (int j = 0; j < n; j++)
	{
		if (j % PSVC_SCAN_INTERRUPT_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
		if (nulls[j])
			continue;
		vt[m].text = OidOutputFunctionCall(out, elems[j]);
		vt[m].pos = j;
		m++;
	}
	if (m > 1)
	{
		qsort(vt, m, sizeof(ValueText), value_text_cmp);
		CHECK_FOR_INTERRUPTS();
		for (int k = 1; k < m; k++)
			if (strcmp(vt[k].text, vt[k - 1].text) == 0)
				dup[vt[k].pos] = true;
		/* back to the order of the array, texts by position */
		qsort(vt, m, sizeof(ValueText), value_pos_cmp);
	}
	pv->nvalues = 0;
	for (int k = 0; k < m; k++)
	{
		int			j = vt[k].pos;

		if (k % PSVC_SCAN_INTERRUPT_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
		if (dup[j])
			continue;
		pv->values[pv->nvalues] = datumCopy(elems[j], typbyval, typlen);
		pv->texts[pv->nvalues++] = vt[k].text;
	}
}

/*
 * Checks every value that goes into a path, as the URL builder will, so
 * that a bad one (22023) stops the scan before any request, even the
 * first page of another value of a fanned-out scan.
 */
static void
check_path_values(PsvcScanState *st)
{
	for (int i = 0; i < st->npushed; i++)
	{
		PushedValue *pv = &st->pushed[i];
		const PsvcOperation *op;
		const char *name;

		if (pv->def->kind == PSVC_COL_PATH)
		{
			op = st->ep->list;
			name = pv->def->param;
		}
		else if (st->detail && st->ep->detail_column &&
				 strcmp(pv->def->name, st->ep->detail_column) == 0)
		{
			op = st->ep->detail;
			name = psvc_scan_detail_param(st->ep);
		}
		else
			continue;
		for (int k = 0; k < pv->nvalues; k++)
		{
			if (k % PSVC_SCAN_INTERRUPT_EVERY == 0)
				CHECK_FOR_INTERRUPTS();
			psvc_call_check_param(op, name, pv->texts[k]);
		}
	}
}

/*
 * Drops the values of a closed filter that no row can hold (an enum of the
 * documents, compared exactly: catalog.h), keeping the order of the rest:
 * they are not sent, and an equality left without a value matches no row.
 */
static void
drop_excluded(PushedValue *pv)
{
	int			m = 0;

	if (!pv->closed)
		return;
	for (int k = 0; k < pv->nvalues; k++)
	{
		if (k % PSVC_SCAN_INTERRUPT_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
		if (psvc_endpoint_filter_excludes(pv->def, pv->texts[k]))
			continue;
		pv->values[m] = pv->values[k];
		pv->texts[m++] = pv->texts[k];
	}
	pv->nvalues = m;
}

/* pv's one value d, as its Datum and its text.  Allocates in run_cxt. */
static void
single_value(PushedValue *pv, Datum d, Oid out)
{
	int16		typlen;
	bool		typbyval;

	get_typlenbyval(pv->type, &typlen, &typbyval);
	pv->values = palloc(sizeof(Datum));
	pv->texts = palloc(sizeof(char *));
	pv->values[0] = datumCopy(d, typbyval, typlen);
	pv->texts[0] = OidOutputFunctionCall(out, d);
	pv->nvalues = 1;
}

static int
text_ptr_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * Keeps only the values of pv that every further equality on its column
 * holds too (compared as sent, as text), in their order: several
 * conditions on one column send their intersection, and none when no
 * value satisfies them all.  Allocates in run_cxt.
 */
static void
intersect_also(PushedValue *pv, ExprContext *econtext)
{
	for (int a = 0; a < pv->nalso && pv->nvalues > 0; a++)
	{
		bool		isnull;
		Datum		d = ExecEvalExpr(pv->also[a], econtext, &isnull);
		char	  **texts;
		int			n = 0;
		int			m = 0;

		if (isnull)
		{
			pv->nvalues = 0;
			return;
		}
		if (pv->also_array[a])
		{
			ArrayType  *arr = DatumGetArrayTypeP(d);
			Oid			et = ARR_ELEMTYPE(arr);
			Datum	   *elems;
			bool	   *nulls;
			int			nelems;
			Oid			out;
			bool		varlena;

			getTypeOutputInfo(et, &out, &varlena);
			nelems = psvc_fdw_array_elems(arr, et, &elems, &nulls, NULL, NULL);
			texts = palloc(sizeof(char *) * Max(nelems, 1));
			for (int j = 0; j < nelems; j++)
			{
				if (j % PSVC_SCAN_INTERRUPT_EVERY == 0)
					CHECK_FOR_INTERRUPTS();
				if (!nulls[j])
					texts[n++] = OidOutputFunctionCall(out, elems[j]);
			}
		}
		else
		{
			PushedValue tmp = {0};
			Oid			out;
			bool		varlena;

			tmp.type = exprType((Node *) pv->also[a]->expr);
			getTypeOutputInfo(tmp.type, &out, &varlena);
			single_value(&tmp, d, out);
			texts = tmp.texts;
			n = 1;
		}
		qsort(texts, n, sizeof(char *), text_ptr_cmp);
		CHECK_FOR_INTERRUPTS();
		for (int k = 0; k < pv->nvalues; k++)
		{
			if (k % PSVC_SCAN_INTERRUPT_EVERY == 0)
				CHECK_FOR_INTERRUPTS();
			if (n > 0 && bsearch(&pv->texts[k], texts, n, sizeof(char *), text_ptr_cmp))
			{
				pv->values[m] = pv->values[k];
				pv->texts[m++] = pv->texts[k];
			}
		}
		pv->nvalues = m;
	}
}

/*
 * Evaluates the pushed values for this (re)scan into st->pushed, sets
 * st->empty when no row can match (a NULL, an array without a non-null
 * value, or only values a closed filter rules out), and checks the values
 * that go into a path.  Returns the number
 * of combinations of the array values: the streams of the scan.
 * Allocates in CurrentMemoryContext (run_cxt).
 */
int
psvc_scan_eval_values(PsvcScanState *st, ExprContext *econtext)
{
	int			nstreams = 1;

	st->empty = false;
	for (int i = 0; i < st->npushed; i++)
	{
		PushedValue *pv = &st->pushed[i];
		bool		isnull;
		Datum		d = ExecEvalExpr(pv->expr, econtext, &isnull);
		Oid			out;
		bool		varlena;

		getTypeOutputInfo(pv->type, &out, &varlena);
		pv->nvalues = 0;
		if (isnull)
		{
			st->empty = true;
			continue;
		}
		if (pv->is_array)
		{
			if (pv->expr_is_array)
				distinct_values(pv, DatumGetArrayTypeP(d), out);
			else
				single_value(pv, d, out);
			intersect_also(pv, econtext);
			drop_excluded(pv);
			if (pv->nvalues == 0)
				st->empty = true;
			/* the arrays before this one vary faster (psvc_scan_value_index) */
			if (nstreams > 1 && (int64) nstreams * Max(pv->nvalues, 1) > PSVC_SCAN_MAX_COMBINATIONS)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("too many combinations of path values for foreign table \"%s\"",
								RelationGetRelationName(st->rel)),
						 errdetail("The conditions = ANY(...) on several path columns make %lld combinations; the limit is %d.",
								   (long long) nstreams * Max(pv->nvalues, 1),
								   PSVC_SCAN_MAX_COMBINATIONS)));
			pv->stride = nstreams;
			nstreams *= Max(pv->nvalues, 1);
		}
		else
		{
			single_value(pv, d, out);
			drop_excluded(pv);
			if (pv->nvalues == 0)
				st->empty = true;
		}
	}
	if (!st->empty)
		check_path_values(st);
	return nstreams;
}
