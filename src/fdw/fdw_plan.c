/*-------------------------------------------------------------------------
 *
 * fdw_plan.c
 *		  Planning scans of partner_svc foreign tables: which conditions
 *		  the service applies, whether LIMIT reaches the service, and the
 *		  parameterized paths that let a join feed a required path
 *		  parameter.
 *
 * What can be pushed down is read from the endpoint catalogue:
 *	- "col = value" and "col = ANY(array)" on a path-parameter column
 *	  (movie, job_id) become the path; with an array, one request stream
 *	  per distinct value (fan-out).  A required path parameter that the
 *	  query does not give is an error naming the column, unless a join
 *	  clause can give it, in which case only parameterized paths are
 *	  offered and the value comes from the outer side of a nested loop
 *	  (for a route with two, type and collection, each from its own
 *	  join clause).
 *	- "col = value" on a column with a filter parameter becomes that query
 *	  parameter (status, genre, section, persona, answerability).  A filter
 *	  whose values the documents enumerate (catalog.h: filter_closed;
 *	  section, persona, answerability) also takes "col = ANY(array)", one
 *	  stream per documented value, and a value outside the set is never
 *	  sent: the scan gives no row for it, as no row can hold it.
 *	- "col = a OR col = b ..." (arms may be = ANY of a constant array) on
 *	  one column is read as "col = ANY(ARRAY[a, b, ...])", so it pushes
 *	  down wherever = ANY does and sends the same requests.
 *	- "col = value" on a detail key (id of orders and user_jobs, and
 *	  custom_id of orders: its detail route takes either) turns the scan
 *	  into a single-object read; one key per scan, the others filter.
 * "value" is any expression without this table's columns and without
 * volatile functions; it is evaluated once per (re)scan.  Only an exact
 * equality is sent (fdw_quals.c: built-in operator, deterministic
 * collation).  Several conditions on one column send the intersection of
 * their values (choose_pushed), none when it is empty; that is also what
 * keeps a reader of a security_barrier view from sending a value the
 * view hides, and inside such a view a value is sent only when it passes
 * the view's conditions on its column that stay local (fdw_barrier.c).
 *
 * Rows satisfy their WHERE whatever the service does: every pushed-down
 * condition on a member column is also kept as a recheck qual
 * (fdw_recheck_quals), which the scan evaluates on each row before it
 * counts it (fdw_scan.c), so a service that ignores or maps a filter, or
 * a detail route that answers for another identifier, never makes a row
 * contradict its WHERE.  Only path columns are not rechecked: their value
 * is the one the request was sent with, exact by construction.
 * Everything else stays a local filter (the plan's qual).
 *
 * A required path parameter that nothing can give is never a planner
 * failure: besides the parameterized paths, the table always has an
 * unparameterized path, costed as disabled, whose scan raises the
 * documented error naming the column when it is run (fdw_scan.c).  So
 * joins whose order cannot feed the key (a.movie = b.movie of two movie
 * tables, the outer side of an outer join, the source of a MERGE) plan,
 * and fail only if they are run without a value.
 *
 * Row estimates: what complete scans of the same server, route and
 * values learned, or the documented defaults (estimates.c,
 * docs/estimates.md); local conditions scale them by their selectivity.
 * EXPLAIN VERBOSE shows where each scan's estimate comes from.
 *
 * LIMIT is pushed only when nothing is left to filter locally and the
 * table is the whole query (no join, grouping, sorting, DISTINCT, window
 * or set operation): then the scan asks for no more rows than LIMIT +
 * OFFSET and stops there.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/table.h"
#include "commands/defrem.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "nodes/makefuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "call.h"
#include "fdw.h"
#include "options.h"
#include "estimates.h"
#include "pg_compat.h"

/* A condition the service can apply. */
typedef struct PushedQual
{
	RestrictInfo *rinfo;
	const PsvcColumnDef *col;
	Expr	   *value;			/* the side without our columns */
	bool		is_array;		/* col = ANY(value) */
	bool		closed;			/* a filter of documented values, compared
								 * exactly: values outside them are not
								 * sent (catalog.h: filter_closed) */
	AttrNumber	attno;			/* the column */
	List	   *also;			/* further conditions on the column
								 * (PushedQual *) whose values value must
								 * be intersected with at run time */
	List	   *merged;			/* every RestrictInfo the pushed values
								 * satisfy: rinfo and the intersected ones */
} PushedQual;

/* Planner state of one foreign table, kept in baserel->fdw_private. */
typedef struct PsvcRelInfo
{
	const PsvcEndpoint *ep;
	PsvcServer *server;
	List	   *pushed;			/* PushedQual *, from baserestrictinfo */
	bool		detail;			/* a pushed qual on the detail column */
	List	   *missing;		/* required path columns not given
								 * (PsvcColumnDef *), in catalogue order */
	double		local_sel;		/* selectivity of the local conditions */
	char	   *estimate;		/* the plain path's row estimate, as
								 * EXPLAIN VERBOSE shows it */
	bool		async_capable;	/* option async_capable (fdw_scan.c) */
	List	   *bound_quals;	/* clauses of a partition's bound that the
								 * values sent could not be checked against
								 * when planning: filtered locally */
} PsvcRelInfo;

/* Estimates, in the planner's cost units, of one HTTP request and a row. */
#define REQUEST_COST 1000.0
#define ROW_COST 0.05

/*
 * Rows of a list before local filters when nothing was learned
 * (docs/estimates.md): a list, a list the service filters (assumed to keep
 * a quarter), and a list read once per value a join gives.
 */
#define DEFAULT_ROWS 1000.0
#define DEFAULT_FILTERED_ROWS (DEFAULT_ROWS / 4)
#define DEFAULT_PARAM_ROWS (DEFAULT_ROWS / 20)

/*
 * The pushable form of a clause for this table, or NULL.  Path columns
 * take a value or an array (also an OR of equalities); filter and detail
 * columns a single value; a closed filter (catalog.h: filter_closed) also
 * an array, whose documented values the scan fans out over.
 */
static PushedQual *
classify(PlannerInfo *root, RelOptInfo *baserel, Oid relid,
		 const PsvcEndpoint *ep, RestrictInfo *rinfo)
{
	Expr	   *value;
	bool		is_array;
	Oid			collid = InvalidOid;
	AttrNumber	attno = psvc_fdw_match_equality(rinfo->clause, baserel->relid, &value,
												&is_array, &collid);
	Relation	rel;
	Form_pg_attribute att;
	const PsvcColumnDef *col;
	bool		closed;
	PushedQual *pq;

	if (attno == 0)
		return NULL;
	rel = table_open(relid, NoLock);
	att = TupleDescAttr(RelationGetDescr(rel), attno - 1);
	col = psvc_fdw_column_def(ep, relid, att);
	closed = col->kind == PSVC_COL_FIELD && col->filter_closed && col->field != NULL &&
		col->param != NULL && !psvc_endpoint_is_detail_key(ep, col) &&
		psvc_fdw_compares_exactly(att, collid);
	table_close(rel, NoLock);

	if (col->kind == PSVC_COL_PATH)
		;
	else if (col->kind == PSVC_COL_FIELD && (!is_array || closed) &&
			 (col->param != NULL || psvc_endpoint_is_detail_key(ep, col)))
		;
	else
		return NULL;

	pq = palloc0(sizeof(PushedQual));
	pq->rinfo = rinfo;
	pq->col = col;
	pq->value = value;
	pq->is_array = is_array;
	pq->closed = closed;
	pq->attno = attno;
	pq->merged = list_make1(rinfo);
	return pq;
}

static bool
pushed_has_column(List *pushed, const PsvcColumnDef *col)
{
	ListCell   *lc;

	foreach(lc, pushed)
		if (strcmp(((PushedQual *) lfirst(lc))->col->name, col->name) == 0)
			return true;
	return false;
}

static bool
missing_has_column(List *missing, const PsvcColumnDef *col)
{
	ListCell   *lc;

	foreach(lc, missing)
		if (strcmp(((PsvcColumnDef *) lfirst(lc))->name, col->name) == 0)
			return true;
	return false;
}

/*
 * The distinct non-null elements of a constant array, as text, sorted;
 * *n receives their count.
 */
static char **
const_array_texts(Const *c, int *n)
{
	ArrayType  *arr = DatumGetArrayTypeP(c->constvalue);
	Oid			elemtype = ARR_ELEMTYPE(arr);
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	char	  **texts;
	int			m = 0;

	nelems = psvc_fdw_array_elems(arr, elemtype, &elems, &nulls, NULL, NULL);
	texts = palloc(sizeof(char *) * Max(nelems, 1));
	for (int i = 0; i < nelems; i++)
		if (!nulls[i])
			texts[m++] = psvc_fdw_const_text(elems[i], elemtype);
	qsort(texts, m, sizeof(char *), psvc_fdw_cstring_cmp);
	*n = 0;
	for (int i = 0; i < m; i++)
		if (*n == 0 || strcmp(texts[i], texts[*n - 1]) != 0)
			texts[(*n)++] = texts[i];
	return texts;
}

/*
 * The rows a list scan is expected to keep before local filters, and in
 * *desc the line EXPLAIN VERBOSE shows about it: learned from complete
 * scans or dflt (estimates.c).  The pushed values the plan knows are the
 * constants; by_join lists the columns (PsvcColumnDef *) a join gives on
 * a parameterized path (their values are known only at run time), or is
 * NIL.  Allocates in
 * CurrentMemoryContext.
 */
static double
list_rows(const PsvcRelInfo *info, List *by_join, double dflt,
		  char **desc, bool *learned)
{
	int			n = list_length(info->pushed) + list_length(by_join);
	PsvcEstColumn *cols = palloc0(sizeof(PsvcEstColumn) * Max(n, 1));
	int			i = 0;
	ListCell   *lc;

	foreach(lc, info->pushed)
	{
		PushedQual *pq = lfirst(lc);
		Expr	   *v = pq->value;

		while (IsA(v, RelabelType))
			v = ((RelabelType *) v)->arg;
		cols[i].name = pq->col->name;
		cols[i].is_array = pq->is_array;
		if (IsA(v, Const) && !((Const *) v)->constisnull)
		{
			Const	   *c = (Const *) v;

			if (pq->is_array)
				cols[i].elems = const_array_texts(c, &cols[i].nelems);
			else
				cols[i].value = psvc_fdw_const_text(c->constvalue, c->consttype);
		}
		i++;
	}
	foreach(lc, by_join)
		cols[i++].name = ((const PsvcColumnDef *) lfirst(lc))->name;
	return psvc_est_rows(info->server->serverid, info->ep->list->route, n, cols, dflt,
						 desc, learned);
}

/*
 * Is pq bounded by a condition of a lower security level (a
 * security_barrier view's) on its column that the service cannot apply?
 * Then pq's values must not be sent alone: they could lie outside what
 * the barrier lets through, and they would be sent with the view owner's
 * key.  sent lists the conditions the service can apply.
 */
static bool
below_unsent_barrier(RelOptInfo *baserel, List *sent, PushedQual *pq)
{
	ListCell   *lc;

	foreach(lc, baserel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Bitmapset  *attrs = NULL;
		ListCell   *lc2;
		bool		is_sent = false;

		if (rinfo->security_level >= pq->rinfo->security_level)
			continue;
		foreach(lc2, sent)
			if (((PushedQual *) lfirst(lc2))->rinfo == rinfo)
				is_sent = true;
		if (is_sent)
			continue;
		pull_varattnos((Node *) rinfo->clause, baserel->relid, &attrs);
		if (bms_is_member(pq->attno - FirstLowInvalidHeapAttributeNumber, attrs) ||
			bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs))
			return true;
	}
	return false;
}

/*
 * The conditions of the restriction list the service applies, one
 * PushedQual per column: the first condition on a column, with every
 * further one on it merged in (their values are intersected: at plan
 * time when all are constants, else when the scan starts), and one key
 * per detail read (id or custom_id); the rest filter locally.  A
 * condition PostgreSQL may not evaluate before a security barrier's (not
 * leakproof) stays local, and so does one that a barrier's condition the
 * service cannot apply bounds; a barrier's condition that it can apply is
 * intersected with the reader's, so no value outside the barrier is sent.
 * Inside a security_barrier view, where the view's and the reader's
 * conditions share one security level, a column's values are checked
 * against its local conditions (fdw_barrier.c).
 * Allocates in CurrentMemoryContext.
 */
static List *
choose_pushed(PlannerInfo *root, RelOptInfo *baserel, Oid relid, PsvcRelInfo *info)
{
	List	   *cands = NIL;
	List	   *pushed = NIL;
	ListCell   *lc;

	foreach(lc, baserel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		PushedQual *pq = classify(root, baserel, relid, info->ep, rinfo);

		if (pq != NULL && restriction_is_securely_promotable(rinfo, baserel))
			cands = lappend(cands, pq);
	}
	foreach(lc, cands)
	{
		PushedQual *pq = lfirst(lc);
		PushedQual *first = NULL;
		ListCell   *lc2;

		if (below_unsent_barrier(baserel, cands, pq))
			continue;
		foreach(lc2, pushed)
			if (strcmp(((PushedQual *) lfirst(lc2))->col->name, pq->col->name) == 0)
				first = lfirst(lc2);
		if (first != NULL)
		{
			first->also = lappend(first->also, pq);
			first->merged = lappend(first->merged, pq->rinfo);
			continue;
		}
		if (psvc_endpoint_is_detail_key(info->ep, pq->col))
		{
			if (info->detail)
				continue;
			info->detail = true;
		}
		pushed = lappend(pushed, pq);
	}

	/* constants are intersected now, so EXPLAIN shows what is sent */
	foreach(lc, pushed)
	{
		PushedQual *pq = lfirst(lc);
		List	   *values = list_make1(pq->value);
		List	   *arrays = list_make1_int(pq->is_array ? 1 : 0);
		ListCell   *lc2;
		Expr	   *folded;
		bool		is_array;

		if (pq->also == NIL)
			continue;
		foreach(lc2, pq->also)
		{
			values = lappend(values, ((PushedQual *) lfirst(lc2))->value);
			arrays = lappend_int(arrays, ((PushedQual *) lfirst(lc2))->is_array ? 1 : 0);
		}
		folded = psvc_fdw_intersect_consts(values, arrays, &is_array);
		if (folded == NULL)
			continue;
		pq->value = folded;
		pq->is_array = is_array;
		pq->also = NIL;
	}

	/*
	 * Inside a security_barrier view, only values that pass the view's
	 * conditions the service does not apply are sent (fdw_barrier.c)
	 */
	if (pushed != NIL && psvc_fdw_in_barrier_subquery(root))
		foreach(lc, pushed)
		{
			PushedQual *pq = lfirst(lc);

			if (psvc_fdw_barrier_values(root, baserel, pq->attno, pq->merged,
										pq->also == NIL, &pq->value, &pq->is_array))
				continue;
			if (psvc_endpoint_is_detail_key(info->ep, pq->col))
				info->detail = false;
			pushed = foreach_delete_current(pushed, lc);
		}

	/*
	 * A foreign partition sends only the values its bound admits
	 * (fdw_barrier.c); a value known only when the scan starts is checked
	 * against the bound locally.
	 */
	foreach(lc, pushed)
	{
		PushedQual *pq = lfirst(lc);
		List	   *bounds = psvc_fdw_partition_bounds(root, baserel, pq->attno);

		if (bounds != NIL &&
			!psvc_fdw_values_passing(root, baserel, pq->attno, bounds,
									 pq->also == NIL, &pq->value, &pq->is_array))
			info->bound_quals = list_concat(info->bound_quals, bounds);
	}
	return pushed;
}

void
psvc_fdw_get_rel_size(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	PsvcRelInfo *info = palloc0(sizeof(PsvcRelInfo));
	ListCell   *lc;
	List	   *local = NIL;
	double		rows;

	info->ep = psvc_fdw_endpoint(foreigntableid, &info->server);
	info->async_capable = psvc_options_table_async(GetForeignTable(foreigntableid),
												   info->server);
	info->pushed = choose_pushed(root, baserel, foreigntableid, info);
	for (int i = 0; i < info->ep->ncolumns; i++)
	{
		const PsvcColumnDef *c = &info->ep->columns[i];

		if (c->kind == PSVC_COL_PATH && c->required && !pushed_has_column(info->pushed, c))
			info->missing = lappend(info->missing, unconstify(PsvcColumnDef *, c));
	}

	foreach(lc, baserel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		ListCell   *lc2;
		bool		is_pushed = false;

		foreach(lc2, info->pushed)
			if (list_member_ptr(((PushedQual *) lfirst(lc2))->merged, rinfo))
				is_pushed = true;
		if (!is_pushed)
			local = lappend(local, rinfo);
	}
	info->local_sel = clauselist_selectivity(root, local, baserel->relid, JOIN_INNER, NULL);

	if (info->detail)
	{
		rows = 1;
		info->estimate = pstrdup("1 row (detail read)");
	}
	else if (info->missing)
	{
		/* the plain path cannot run: no key to learn by */
		rows = info->pushed != NIL ? DEFAULT_FILTERED_ROWS : DEFAULT_ROWS;
		info->estimate = psprintf("%.0f rows (default)", rows);
	}
	else
	{
		bool		learned;

		rows = list_rows(info, NIL,
						 info->pushed != NIL ? DEFAULT_FILTERED_ROWS : DEFAULT_ROWS,
						 &info->estimate, &learned);
	}
	baserel->rows = clamp_row_est(rows * info->local_sel);
	baserel->fdw_private = info;
}

/*
 * IsForeignPathAsyncCapable: the table's option async_capable, else its
 * server's, where the call module can wait with an Append (fdw_scan.c).
 */
bool
psvc_fdw_async_capable(ForeignPath *path)
{
	PsvcRelInfo *info = path->path.parent->fdw_private;

	return info->async_capable && psvc_call_event_fd() >= 0;
}

static Cost
scan_cost(double rows, const PsvcServer *server)
{
	double		pages = ceil(rows / Max(psvc_options_setting(server, PSVC_SETTING_PAGE_SIZE), 1));

	return REQUEST_COST * Max(pages, 1) + ROW_COST * rows;
}

/* Is an equivalence-class member our column attno? */
static bool
ec_member_is_column(PlannerInfo *root, RelOptInfo *rel, EquivalenceClass *ec,
					EquivalenceMember *em, void *arg)
{
	Expr	   *e = em->em_expr;

	if (IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	return IsA(e, Var) && ((Var *) e)->varno == rel->relid &&
		((Var *) e)->varlevelsup == 0 &&
		((Var *) e)->varattno == *(AttrNumber *) arg;
}

/*
 * Join clauses that can give the missing required path column col: "col =
 * expr" where expr uses other relations only, whether the planner keeps it
 * as a join clause or, for a plain equijoin, in an equivalence class.
 */
static List *
join_sources(PlannerInfo *root, RelOptInfo *baserel, Oid relid, PsvcRelInfo *info,
			 const PsvcColumnDef *col)
{
	List	   *out = NIL;
	List	   *candidates = list_copy(baserel->joininfo);
	AttrNumber	attno = get_attnum(relid, col->name);
	ListCell   *lc;

	if (attno != InvalidAttrNumber)
		candidates = list_concat(candidates,
								 generate_implied_equalities_for_column(root, baserel,
																		ec_member_is_column,
																		&attno,
																		baserel->lateral_referencers));
	foreach(lc, candidates)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		PushedQual *pq = classify(root, baserel, relid, info->ep, rinfo);

		if (pq && !pq->is_array && strcmp(pq->col->name, col->name) == 0)
			out = lappend(out, pq);
	}
	return out;
}

void
psvc_fdw_get_paths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	PsvcRelInfo *info = baserel->fdw_private;
	Relids		others = NULL;
	List	   *first;
	ListCell   *lc;

	/*
	 * The plain path.  Without a required path column it is disabled
	 * (costed like enable_* = off): the planner takes it only when no
	 * parameterized path fits the join order, and then the scan raises the
	 * documented error at its first row (see the header comment).
	 */
	add_path(baserel, (Path *)
			 psvc_create_foreignscan_path(root, baserel, NULL, baserel->rows,
									 REQUEST_COST + (info->missing ? disable_cost : 0),
									 scan_cost(baserel->rows, info->server) + (info->missing ? disable_cost : 0),
									 NIL, baserel->lateral_relids, NULL,
									 list_make1(makeString(info->estimate))));
	if (info->missing == NIL)
		return;

	/*
	 * One parameterized path per join clause that gives the first missing
	 * column; the other missing columns (type and collection of
	 * collection_movies) each take their first join clause, or there is no
	 * parameterized path.
	 */
	for_each_from(lc, info->missing, 1)
	{
		List	   *src = join_sources(root, baserel, foreigntableid, info, lfirst(lc));

		if (src == NIL)
			return;
		others = bms_union(others, pull_varnos(root, (Node *) ((PushedQual *) linitial(src))->value));
	}
	first = join_sources(root, baserel, foreigntableid, info, linitial(info->missing));
	foreach(lc, first)
	{
		PushedQual *pq = lfirst(lc);
		Relids		outer = bms_union(bms_union(pull_varnos(root, (Node *) pq->value), others),
									  baserel->lateral_relids);
		ParamPathInfo *ppi;
		double		rows;
		char	   *desc;
		bool		learned;

		outer = bms_del_member(outer, baserel->relid);
		if (bms_is_empty(outer))
			continue;
		ppi = get_baserel_parampathinfo(root, baserel, outer);
		/* rows per value the join gives */
		rows = list_rows(info, info->missing, DEFAULT_PARAM_ROWS, &desc, &learned);
		if (learned)
			rows = clamp_row_est(rows * info->local_sel);
		add_path(baserel, (Path *)
				 psvc_create_foreignscan_path(root, baserel, NULL, rows,
										 REQUEST_COST, scan_cost(rows, info->server),
										 NIL, ppi->ppi_req_outer, NULL,
										 list_make1(makeString(desc))));
	}
}

/*
 * A list of n nodes from an array filled by the positions of an enum
 * (PsvcPrivateIndex, PsvcPushedIndex), so that no position is written as
 * a bare number.  Allocates in CurrentMemoryContext.
 */
static List *
list_from_items(Node **item, int n)
{
	List	   *l = NIL;

	for (int i = 0; i < n; i++)
		l = lappend(l, item[i]);
	return l;
}

/*
 * The plan's list of pushed values (enum PsvcPushedIndex), one per pushed
 * condition: each value and those of its further equalities appended to
 * *fdw_exprs, the conditions on member columns appended to *recheck (the
 * scan rechecks them).  CurrentMemoryContext (the planner's).
 */
static List *
plan_pushed(List *pushed, List **fdw_exprs, List **recheck)
{
	List	   *pushed_priv = NIL;
	ListCell   *lc;

	foreach(lc, pushed)
	{
		PushedQual *pq = lfirst(lc);

		List	   *also = NIL;
		List	   *also_array = NIL;
		ListCell   *lc2;
		int			expr_index = list_length(*fdw_exprs);

		*fdw_exprs = lappend(*fdw_exprs, pq->value);
		if (pq->col->kind != PSVC_COL_PATH)
			foreach(lc2, pq->merged)
				*recheck = lappend(*recheck, lfirst_node(RestrictInfo, lc2)->clause);
		foreach(lc2, pq->also)
		{
			PushedQual *a = lfirst(lc2);

			*fdw_exprs = lappend(*fdw_exprs, a->value);
			also = lappend_int(also, list_length(*fdw_exprs) - 1);
			also_array = lappend_int(also_array, a->is_array ? 1 : 0);
		}
		{
			Node	   *item[PSVC_PUSHED_COUNT];

			item[PSVC_PUSHED_COLUMN] = (Node *) makeString(pstrdup(pq->col->name));
			item[PSVC_PUSHED_EXPR] = (Node *) makeInteger(expr_index);
			item[PSVC_PUSHED_IS_ARRAY] = (Node *) makeInteger(pq->is_array ? 1 : 0);
			item[PSVC_PUSHED_CLOSED] = (Node *) makeInteger(pq->closed ? 1 : 0);
			item[PSVC_PUSHED_ALSO] = (Node *) also;
			item[PSVC_PUSHED_ALSO_ARRAY] = (Node *) also_array;
			pushed_priv = lappend(pushed_priv, list_from_items(item, PSVC_PUSHED_COUNT));
		}
	}
	return pushed_priv;
}

/*
 * The attribute numbers the scan fills: what the relation's target, the
 * local filters and the rechecked conditions use.  Not tlist: it is NULL
 * when a projection is put on top.  CurrentMemoryContext.
 */
static List *
plan_attrs(RelOptInfo *baserel, Oid foreigntableid, List *local_exprs,
		   List *recheck)
{
	List	   *attrs = NIL;
	Bitmapset  *used = NULL;

	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &used);
	pull_varattnos((Node *) local_exprs, baserel->relid, &used);
	pull_varattnos((Node *) recheck, baserel->relid, &used);
	if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, used))
	{
		/* a whole-row reference: every column but the dropped ones */
		Relation	rel = table_open(foreigntableid, NoLock);
		TupleDesc	desc = RelationGetDescr(rel);

		for (int i = 0; i < desc->natts; i++)
			if (!TupleDescAttr(desc, i)->attisdropped)
				attrs = lappend_int(attrs, i + 1);
		table_close(rel, NoLock);
	}
	else
	{
		int			x = -1;

		while ((x = bms_next_member(used, x)) >= 0)
		{
			AttrNumber	attno = x + FirstLowInvalidHeapAttributeNumber;

			if (attno > 0)
				attrs = lappend_int(attrs, attno);
		}
	}
	return attrs;
}

/* May the scan stop after LIMIT + OFFSET rows?  Returns them, or -1. */
static int
pushable_limit(PlannerInfo *root, RelOptInfo *baserel, List *local_exprs)
{
	Query	   *parse = root->parse;
	Const	   *count = (Const *) parse->limitCount;
	Const	   *offset = (Const *) parse->limitOffset;
	int64		n;

	if (local_exprs != NIL || count == NULL || !IsA(count, Const) || count->constisnull ||
		(offset && (!IsA(offset, Const) || offset->constisnull)) ||
		parse->limitOption != LIMIT_OPTION_COUNT ||
		bms_membership(root->all_baserels) != BMS_SINGLETON ||
		parse->hasAggs || parse->groupClause || parse->groupingSets ||
		parse->havingQual || parse->hasWindowFuncs || parse->distinctClause ||
		parse->sortClause || parse->setOperations || parse->hasTargetSRFs ||
		parse->rowMarks || parse->commandType != CMD_SELECT)
		return -1;
	n = DatumGetInt64(count->constvalue);
	if (offset)
		n += DatumGetInt64(offset->constvalue);
	if (n < 0 || n > PG_INT32_MAX)
		return -1;
	return (int) n;
}

ForeignScan *
psvc_fdw_get_plan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
				  ForeignPath *best_path, List *tlist, List *scan_clauses,
				  Plan *outer_plan)
{
	PsvcRelInfo *info = baserel->fdw_private;
	List	   *pushed = list_copy(info->pushed);
	List	   *local = NIL;
	List	   *local_exprs;
	List	   *recheck = NIL;
	List	   *fdw_exprs = NIL;
	List	   *priv;
	Node	   *item[PSVC_PRIV_COUNT];
	List	   *pushed_priv = NIL;
	List	   *attrs;
	ListCell   *lc;
	int			limit;

	/*
	 * Conditions already chosen from the restriction list go to the service;
	 * so does, on a parameterized path, the join clause that gives the
	 * missing path column (its other side becomes a nestloop parameter).
	 * The rest stays local.
	 */
	foreach(lc, scan_clauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		bool		is_pushed = false;
		ListCell   *lc2;

		foreach(lc2, info->pushed)
			if (list_member_ptr(((PushedQual *) lfirst(lc2))->merged, rinfo))
				is_pushed = true;
		if (!is_pushed && info->missing && best_path->path.param_info &&
			!list_member_ptr(baserel->baserestrictinfo, rinfo))
		{
			PushedQual *pq = classify(root, baserel, foreigntableid, info->ep, rinfo);

			if (pq && !pq->is_array && missing_has_column(info->missing, pq->col) &&
				!pushed_has_column(pushed, pq->col))
			{
				pushed = lappend(pushed, pq);
				is_pushed = true;
			}
		}
		if (!is_pushed)
			local = lappend(local, rinfo);
	}
	local_exprs = list_concat(extract_actual_clauses(local, false), info->bound_quals);
	/* a path value a join gives a partition: rows outside its bound filtered */
	foreach(lc, pushed)
		if (!list_member_ptr(info->pushed, lfirst(lc)))
			local_exprs = list_concat(local_exprs,
									  psvc_fdw_partition_bounds(root, baserel,
																((PushedQual *) lfirst(lc))->attno));

	pushed_priv = plan_pushed(pushed, &fdw_exprs, &recheck);
	attrs = plan_attrs(baserel, foreigntableid, local_exprs, recheck);

	limit = info->detail ? -1 : pushable_limit(root, baserel, local_exprs);

	item[PSVC_PRIV_RESOURCE] = (Node *) makeString(pstrdup(info->ep->resource));
	item[PSVC_PRIV_DETAIL] = (Node *) makeInteger(info->detail ? 1 : 0);
	item[PSVC_PRIV_LIMIT] = (Node *) makeInteger(limit);
	item[PSVC_PRIV_PUSHED] = (Node *) pushed_priv;
	item[PSVC_PRIV_ATTRS] = (Node *) attrs;
	/* a required path column this plan has no value for, or "" */
	{
		const char *missing = "";

		foreach(lc, info->missing)
		{
			const PsvcColumnDef *c = lfirst(lc);

			if (!pushed_has_column(pushed, c))
			{
				missing = c->name;
				break;
			}
		}
		item[PSVC_PRIV_MISSING] = (Node *) makeString(pstrdup(missing));
	}
	/*
	 * Why the query's own condition on that column could not be sent; not
	 * inside a security_barrier view, whose conditions its readers do not
	 * see
	 */
	{
		const char *missing = strVal(item[PSVC_PRIV_MISSING]);
		char	   *hint = NULL;

		if (missing[0] != '\0' && !psvc_fdw_in_barrier_subquery(root))
			hint = psvc_fdw_unsent_hint(local_exprs, baserel->relid,
										get_attnum(foreigntableid, missing), missing);
		item[PSVC_PRIV_MISSING_HINT] = (Node *) makeString(hint ? hint : pstrdup(""));
	}
	/* the row estimate of the chosen path, for EXPLAIN VERBOSE */
	item[PSVC_PRIV_ESTIMATE] = (Node *)
		makeString(pstrdup(best_path->fdw_private ?
						   strVal(linitial(best_path->fdw_private)) : ""));
	priv = list_from_items(item, PSVC_PRIV_COUNT);

	/*
	 * The pushed conditions on member columns are rechecked by the scan
	 * itself (fdw_scan.c), before a LIMIT counts the row; they are also
	 * what an EvalPlanQual recheck evaluates.
	 */
	return make_foreignscan(tlist, local_exprs, baserel->relid, fdw_exprs,
							priv, NIL, recheck, outer_plan);
}
