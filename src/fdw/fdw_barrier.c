/*-------------------------------------------------------------------------
 *
 * fdw_barrier.c
 *		  Which pushed values may be sent when a partner_svc foreign table
 *		  is planned inside a security_barrier view.
 *
 * PostgreSQL plans a security_barrier view as a subquery of its own and
 * moves a reader's leakproof conditions into it, beside the view's own
 * conditions and at the same security level (allpaths.c:
 * set_subquery_pathlist), and the view's scans run with the view owner's
 * user mapping.  So, inside such a subquery, a condition on a column
 * cannot be told apart from the view's: a reader's "movie = 'x'" next to
 * the view's "movie LIKE 'incep%'", which the service cannot apply, would
 * otherwise send 'x' with the owner's key, beyond what the view lets
 * through (the rows would still be filtered, but the request, and its
 * counts in EXPLAIN ANALYZE, are made).
 *
 * The rule, per column whose conditions the planner pushed
 * (psvc_fdw_barrier_values): when the table is planned inside a
 * security_barrier subquery and the column is also bounded by a condition
 * the service does not apply (one left local, a join clause, or an
 * equivalence with another relation), a value is sent only when it is
 * known when planning and passes every such local condition, evaluated
 * on the value itself; a condition that cannot be so evaluated (it uses
 * another column or relation, a mutable function, a subplan or a value
 * known only when the scan starts) keeps the column from being pushed at
 * all: its conditions filter locally.  Whichever condition a value came
 * from, every value sent then meets the view's conditions on that column.
 * Outside security_barrier subqueries (plain queries, views without
 * security_barrier, which PostgreSQL merges into the query), and for a
 * column whose every condition is sent (the values sent are then the
 * intersection of all of them, the view's included; fdw_plan.c), nothing
 * changes.
 *
 * The same evaluation keeps a foreign partition to its bound
 * (psvc_fdw_partition_bounds, psvc_fdw_values_passing): a condition on
 * the partitioned table reaches every partition whole, so a partition
 * bounded to movie 'a' would otherwise also send 'b' of "movie IN ('a',
 * 'b')", and, since a path column is not rechecked (its rows carry the
 * value sent), return b's rows beside the partition that holds them.  A
 * value known only when the scan starts is checked against the bound
 * locally instead (fdw_plan.c).
 *
 * Memory: CurrentMemoryContext (the planner's).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_barrier.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"

#include "fdw.h"

bool
psvc_fdw_in_barrier_subquery(PlannerInfo *root)
{
	/*
	 * A subquery's planner knows its parent but not which of the parent's
	 * range table entries it plans.  The parent sets a subquery relation's
	 * subroot only after planning it, so the entry being planned is among
	 * the parent's subquery relations without one: if any of them is a
	 * security_barrier view, assume it is ours (at worst a condition is
	 * filtered locally that could have been sent).  A parent without
	 * relations yet is planning a CTE or a sublink, into which no outer
	 * condition is moved; its own parent is still looked at.
	 */
	for (PlannerInfo *r = root; r->parent_root != NULL; r = r->parent_root)
	{
		PlannerInfo *p = r->parent_root;

		if (p->simple_rel_array == NULL || p->simple_rte_array == NULL)
			continue;
		for (int i = 1; i < p->simple_rel_array_size; i++)
		{
			RelOptInfo *rel = p->simple_rel_array[i];
			RangeTblEntry *rte = p->simple_rte_array[i];

			if (rel != NULL && rte != NULL && rte->rtekind == RTE_SUBQUERY &&
				rte->security_barrier && rel->subroot == NULL)
				return true;
		}
	}
	return false;
}

/* Does a clause use column attno of relation relid, or its whole row? */
static bool
barrier_uses_column(Node *clause, Index relid, AttrNumber attno)
{
	Bitmapset  *attrs = NULL;

	pull_varattnos(clause, relid, &attrs);
	return bms_is_member(attno - FirstLowInvalidHeapAttributeNumber, attrs) ||
		bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs);
}

/*
 * Is the column equated with an expression of another relation (a join
 * the view makes on it, kept by the planner as an equivalence class, even
 * when a constant turned it into restrictions of each side)?
 */
static bool
barrier_joined(PlannerInfo *root, RelOptInfo *baserel, AttrNumber attno)
{
	Relids		own = bms_union(bms_make_singleton(baserel->relid), baserel->top_parent_relids);
	ListCell   *lc;

	foreach(lc, root->eq_classes)
	{
		EquivalenceClass *ec = lfirst(lc);
		bool		ours = false;
		ListCell   *lc2;

		if (ec->ec_merged != NULL)
			continue;
		foreach(lc2, ec->ec_members)
		{
			Expr	   *e = ((EquivalenceMember *) lfirst(lc2))->em_expr;

			while (IsA(e, RelabelType))
				e = ((RelabelType *) e)->arg;
			if (IsA(e, Var) && ((Var *) e)->varno == baserel->relid &&
				((Var *) e)->varlevelsup == 0 && ((Var *) e)->varattno == attno)
				ours = true;
		}
		if (ours && !bms_is_subset(ec->ec_relids, own))
			return true;
	}
	return false;
}

typedef struct BarrierSubst
{
	Index		relid;
	AttrNumber	attno;
	Const	   *value;
} BarrierSubst;

/* The clause with the column replaced by the value. */
static Node *
barrier_subst(Node *node, BarrierSubst *s)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == s->relid &&
		((Var *) node)->varlevelsup == 0 && ((Var *) node)->varattno == s->attno)
		return (Node *) copyObject(s->value);
	return expression_tree_mutator(node, barrier_subst, s);
}

/*
 * Does the value pass the clause?  *decided is false when the clause does
 * not fold to a constant with the value in place of the column.  Only
 * immutable functions fold; one that fails on the value (a cast the value
 * does not fit) fails the planning, as the same condition would fail on a
 * row holding the value.
 */
static bool
barrier_passes(PlannerInfo *root, Node *clause, BarrierSubst *s, bool *decided)
{
	Node	   *folded = eval_const_expressions(root, barrier_subst(clause, s));

	*decided = IsA(folded, Const);
	return *decided && !((Const *) folded)->constisnull &&
		DatumGetBool(((Const *) folded)->constvalue);
}

bool
psvc_fdw_barrier_values(PlannerInfo *root, RelOptInfo *baserel, AttrNumber attno,
						List *merged, bool known, Expr **value, bool *is_array)
{
	List	   *bounds = NIL;
	ListCell   *lc;

	/* the conditions on the column the service does not apply */
	foreach(lc, baserel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (!list_member_ptr(merged, rinfo) &&
			barrier_uses_column((Node *) rinfo->clause, baserel->relid, attno))
			bounds = lappend(bounds, rinfo->clause);
	}
	foreach(lc, baserel->joininfo)
		if (barrier_uses_column((Node *) lfirst_node(RestrictInfo, lc)->clause,
								baserel->relid, attno))
			return false;
	if (barrier_joined(root, baserel, attno))
		return false;
	return psvc_fdw_values_passing(root, baserel, attno, bounds, known, value, is_array);
}

/*
 * A foreign partition's bound, as clauses on the relation as planned:
 * those that use column attno.  NIL for a table that is no partition.
 */
List *
psvc_fdw_partition_bounds(PlannerInfo *root, RelOptInfo *baserel, AttrNumber attno)
{
	RangeTblEntry *rte = planner_rt_fetch(baserel->relid, root);
	Relation	rel;
	List	   *qual;
	List	   *bounds = NIL;
	ListCell   *lc;

	if (!get_rel_relispartition(rte->relid))
		return NIL;
	rel = table_open(rte->relid, NoLock);
	/* a copy (with the ancestors' bounds), its columns numbered as rel's */
	qual = copyObject(RelationGetPartitionQual(rel));
	table_close(rel, NoLock);
	if (baserel->relid != 1)
		ChangeVarNodes((Node *) qual, 1, baserel->relid, 0);
	foreach(lc, qual)
		if (barrier_uses_column(lfirst(lc), baserel->relid, attno))
			bounds = lappend(bounds, lfirst(lc));
	return bounds;
}

bool
psvc_fdw_values_passing(PlannerInfo *root, RelOptInfo *baserel, AttrNumber attno,
						List *bounds, bool known, Expr **value, bool *is_array)
{
	RangeTblEntry *rte = planner_rt_fetch(baserel->relid, root);
	ListCell   *lc;
	Expr	   *v = *value;
	Oid			atttype,
				attcollid,
				elemtype;
	int32		atttypmod;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	Datum	   *keep;
	int			nkeep = 0;
	BarrierSubst s;

	if (bounds == NIL)
		return true;

	/* a value known only at run time cannot be checked now */
	while (IsA(v, RelabelType))
		v = ((RelabelType *) v)->arg;
	if (!known || !IsA(v, Const))
		return false;

	get_atttypetypmodcoll(rte->relid, attno, &atttype, &atttypmod, &attcollid);
	elemtype = *is_array ? get_element_type(((Const *) v)->consttype) : ((Const *) v)->consttype;
	if (!OidIsValid(elemtype) || !IsBinaryCoercible(elemtype, atttype))
		return false;
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	if (((Const *) v)->constisnull)
		return true;			/* a NULL sends nothing anyway */
	if (*is_array)
		deconstruct_array(DatumGetArrayTypeP(((Const *) v)->constvalue), elemtype,
						  typlen, typbyval, typalign, &elems, &nulls, &n);
	else
	{
		elems = &((Const *) v)->constvalue;
		nulls = NULL;
		n = 1;
	}

	s.relid = baserel->relid;
	s.attno = attno;
	keep = palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		bool		pass = true;

		if (nulls && nulls[i])
			continue;
		s.value = makeConst(atttype, atttypmod, attcollid, typlen, elems[i], false, typbyval);
		foreach(lc, bounds)
		{
			bool		decided;

			pass = barrier_passes(root, lfirst(lc), &s, &decided);
			if (!decided)
				return false;
			if (!pass)
				break;
		}
		if (pass)
			keep[nkeep++] = elems[i];
	}

	if (nkeep == 1)
	{
		/* one value, sent as such (EXPLAIN shows it) */
		*value = (Expr *) makeConst(elemtype, -1, ((Const *) v)->constcollid, typlen,
									keep[0], false, typbyval);
		*is_array = false;
		return true;
	}
	/* an array of the values that pass, empty when none does */
	if (!OidIsValid(get_array_type(elemtype)))
		return false;
	*value = (Expr *) makeConst(get_array_type(elemtype), -1, ((Const *) v)->constcollid, -1,
								PointerGetDatum(construct_array(keep, nkeep, elemtype,
																typlen, typbyval, typalign)),
								false, false);
	*is_array = true;
	return true;
}
