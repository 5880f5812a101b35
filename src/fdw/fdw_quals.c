/*-------------------------------------------------------------------------
 *
 * fdw_quals.c
 *		  Which WHERE clauses of a scan of a partner_svc foreign table are
 *		  equalities the service could apply: the shapes the planner
 *		  (fdw_plan.c) recognises, before it asks the catalogue whether the
 *		  column takes them.
 *
 * An equality "col = value" (either way round) or "col = ANY(array)" with
 * the equality operator of the column's type, value free of this table's
 * columns and of volatile functions; and an OR of such equalities on one
 * column, which is read as the = ANY of all its values so that it plans,
 * and sends, exactly as the IN it means.  Only equalities that compare
 * exactly: a built-in operator under a deterministic collation, the
 * column's or the default (not citext, not a case-insensitive
 * collation).  psvc_fdw_intersect_consts intersects the constant values
 * of several such conditions on one column.  psvc_fdw_unsent_hint names,
 * for the error of a required column without a value, the query's
 * condition on it that is none of these shapes.
 *
 * Memory: CurrentMemoryContext (the planner's).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_quals.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "fdw.h"

/*
 * Recognises "col = expr", "expr = col" and "col = ANY(expr)" where col is
 * a column of this relation and expr does not use it, with the equality
 * operator of the column's type.  Returns the attnum, or 0; *collid
 * receives the collation the equality compares with.
 */
static AttrNumber
match_one(Expr *clause, Index relid, Expr **value, bool *is_array, Oid *collid)
{
	Node	   *left,
			   *right;
	Oid			opno;
	Var		   *var;
	Node	   *other;

	if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) clause;

		left = linitial(op->args);
		right = lsecond(op->args);
		opno = op->opno;
		*collid = op->inputcollid;
		*is_array = false;
	}
	else if (IsA(clause, ScalarArrayOpExpr) && ((ScalarArrayOpExpr *) clause)->useOr)
	{
		ScalarArrayOpExpr *op = (ScalarArrayOpExpr *) clause;

		left = linitial(op->args);
		right = lsecond(op->args);
		opno = op->opno;
		*collid = op->inputcollid;
		*is_array = true;
	}
	else
		return 0;

	if (IsA(left, RelabelType))
		left = (Node *) ((RelabelType *) left)->arg;
	if (!*is_array && IsA(right, RelabelType) && IsA(((RelabelType *) right)->arg, Var))
		right = (Node *) ((RelabelType *) right)->arg;

	if (IsA(left, Var) && ((Var *) left)->varno == relid && ((Var *) left)->varlevelsup == 0)
	{
		var = (Var *) left;
		other = right;
	}
	else if (!*is_array && IsA(right, Var) && ((Var *) right)->varno == relid &&
			 ((Var *) right)->varlevelsup == 0)
	{
		var = (Var *) right;
		other = left;
	}
	else
		return 0;

	/*
	 * Equality, also across types (bigint = integer): an operator estimated
	 * as equality that the column's btree family knows.  The value is sent
	 * as text, so its own type does not matter.  Only an equality that
	 * compares exactly is the service's: a built-in operator (not citext's,
	 * whose equality ignores case, as postgres_fdw ships built-in objects
	 * only), under a deterministic collation that is the column's own or
	 * the default (postgres_fdw's foreign_expr_walker asks the same of a
	 * collation).  Anything else is checked locally, where PostgreSQL may
	 * match values the service would not.
	 */
	if (opno >= FirstGenbkiObjectId ||
		(OidIsValid(*collid) &&
		 (!get_collation_isdeterministic(*collid) ||
		  (*collid != var->varcollid && *collid != DEFAULT_COLLATION_OID))))
		return 0;
	if (var->varattno <= 0 ||
		bms_is_member(relid, pull_varnos(NULL, other)) ||
		contain_volatile_functions(other) ||
		get_oprrest(opno) != F_EQSEL ||
		!op_in_opfamily(opno, get_opclass_family(GetDefaultOpClass(var->vartype, BTREE_AM_OID))))
		return 0;
	*value = (Expr *) other;
	return var->varattno;
}

/*
 * Recognises an OR of equalities on one column of this relation ("col = a
 * OR col = b", also with "col = ANY(...)" arms of constant arrays or ARRAY
 * constructors) and gives it as "col = ANY(array)": *value receives the
 * array of all the arms' values, folded to a constant when they are
 * constants.  Returns the attnum, or 0 (arms on several columns, of
 * different value types or collations, or anything else).  Allocates in
 * CurrentMemoryContext.
 */
static AttrNumber
match_or_equalities(Expr *clause, Index relid, Expr **value, Oid *collid)
{
	AttrNumber	attno = 0;
	List	   *elems = NIL;
	Oid			elemtype = InvalidOid;
	ArrayExpr  *arr;
	ListCell   *lc;

	if (!is_orclause(clause))
		return 0;
	foreach(lc, ((BoolExpr *) clause)->args)
	{
		Expr	   *v;
		bool		is_array;
		Oid			c;
		AttrNumber	a = match_one(lfirst(lc), relid, &v, &is_array, &c);

		if (a == 0 || (attno != 0 && (a != attno || c != *collid)))
			return 0;
		attno = a;
		*collid = c;
		if (!is_array)
			elems = lappend(elems, v);
		else if (IsA(v, ArrayExpr) && !((ArrayExpr *) v)->multidims)
			elems = list_concat(elems, ((ArrayExpr *) v)->elements);
		else if (IsA(v, Const) && !((Const *) v)->constisnull)
		{
			Const	   *k = (Const *) v;
			ArrayType  *a_arr = DatumGetArrayTypeP(k->constvalue);
			Oid			et = ARR_ELEMTYPE(a_arr);
			int16		typlen;
			bool		typbyval;
			Datum	   *ds;
			bool	   *nulls;
			int			n;

			n = psvc_fdw_array_elems(a_arr, et, &ds, &nulls, &typlen, &typbyval);
			/* a NULL element equals nothing: in a WHERE it adds no row */
			for (int i = 0; i < n; i++)
				if (!nulls[i])
					elems = lappend(elems, makeConst(et, -1, k->constcollid, typlen,
													 ds[i], false, typbyval));
		}
		else if (IsA(v, Const))
			continue;			/* = ANY(NULL) adds no row either */
		else
			return 0;
	}
	if (elems == NIL)
		return 0;
	foreach(lc, elems)
	{
		Oid			t = exprType(lfirst(lc));

		if (elemtype != InvalidOid && t != elemtype)
			return 0;
		elemtype = t;
	}
	if (!OidIsValid(get_array_type(elemtype)))
		return 0;
	arr = makeNode(ArrayExpr);
	arr->array_typeid = get_array_type(elemtype);
	arr->array_collid = exprCollation(linitial(elems));
	arr->element_typeid = elemtype;
	arr->elements = elems;
	arr->multidims = false;
	arr->location = -1;
	*value = (Expr *) eval_const_expressions(NULL, (Node *) arr);
	return attno;
}

/*
 * Is equality on this column, with this collation, the exact comparison
 * of text a closed filter's values are matched with?  text and varchar
 * under a deterministic collation; not citext or a nondeterministic
 * collation, under which 'HR' may equal 'hr'.
 */
bool
psvc_fdw_compares_exactly(Form_pg_attribute att, Oid collid)
{
	return (att->atttypid == TEXTOID || att->atttypid == VARCHAROID) &&
		OidIsValid(collid) && get_collation_isdeterministic(collid);
}


AttrNumber
psvc_fdw_match_equality(Expr *clause, Index relid, Expr **value, bool *is_array,
						Oid *collid)
{
	AttrNumber	attno = match_one(clause, relid, value, is_array, collid);

	if (attno != 0)
		return attno;
	*is_array = true;
	return match_or_equalities(clause, relid, value, collid);
}

/* ---------------------------------------------------------------------
 * Helpers of the planner, the scan and EXPLAIN (fdw.h)
 * ---------------------------------------------------------------------
 */

char *
psvc_fdw_const_text(Datum value, Oid type)
{
	Oid			out;
	bool		varlena;

	getTypeOutputInfo(type, &out, &varlena);
	return OidOutputFunctionCall(out, value);
}

int
psvc_fdw_cstring_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

int
psvc_fdw_array_elems(ArrayType *arr, Oid elemtype, Datum **elems, bool **nulls,
					 int16 *typlen_out, bool *typbyval_out)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			n;

	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign, elems, nulls, &n);
	if (typlen_out)
		*typlen_out = typlen;
	if (typbyval_out)
		*typbyval_out = typbyval;
	return n;
}

/*
 * The non-null values of a constant (one, or an array's elements) with
 * their texts; *n receives their count, 0 for a NULL.
 */
static void
quals_const_values(Const *c, bool is_array, Oid *elemtype, Datum **values,
				   char ***texts, int *n)
{
	*n = 0;
	*elemtype = is_array ? get_element_type(c->consttype) : c->consttype;
	if (c->constisnull)
	{
		*values = palloc(sizeof(Datum));
		*texts = palloc(sizeof(char *));
		return;
	}
	if (is_array)
	{
		ArrayType  *arr = DatumGetArrayTypeP(c->constvalue);
		Datum	   *elems;
		bool	   *nulls;
		int			nelems;

		nelems = psvc_fdw_array_elems(arr, *elemtype, &elems, &nulls, NULL, NULL);
		*values = palloc(sizeof(Datum) * Max(nelems, 1));
		*texts = palloc(sizeof(char *) * Max(nelems, 1));
		for (int i = 0; i < nelems; i++)
			if (!nulls[i])
			{
				(*values)[*n] = elems[i];
				(*texts)[(*n)++] = psvc_fdw_const_text(elems[i], *elemtype);
			}
		return;
	}
	*values = palloc(sizeof(Datum));
	*texts = palloc(sizeof(char *));
	(*values)[0] = c->constvalue;
	(*texts)[0] = psvc_fdw_const_text(c->constvalue, c->consttype);
	*n = 1;
}

Expr *
psvc_fdw_intersect_consts(List *values, List *arrays, bool *is_array)
{
	Oid			elemtype = InvalidOid;
	Oid			collid = InvalidOid;
	Datum	   *keep = NULL;
	char	  **keep_texts = NULL;
	int			nkeep = 0;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	ListCell   *lv,
			   *la;

	forboth(lv, values, la, arrays)
	{
		Expr	   *v = lfirst(lv);
		Oid			et;
		Datum	   *ds;
		char	  **ts;
		int			n;

		while (IsA(v, RelabelType))
			v = ((RelabelType *) v)->arg;
		if (!IsA(v, Const))
			return NULL;
		quals_const_values((Const *) v, lfirst_int(la) != 0, &et, &ds, &ts, &n);
		if (keep == NULL)
		{
			/*
			 * the first condition's values, in its order; duplicates are
			 * left to the scan, which removes them (fdw_scan_values.c)
			 */
			elemtype = et;
			collid = ((Const *) v)->constcollid;
			keep = ds;
			keep_texts = ts;
			nkeep = n;
			continue;
		}
		/* keep the values this condition also holds: O(n log n) */
		qsort(ts, n, sizeof(char *), psvc_fdw_cstring_cmp);
		{
			int			m = 0;

			for (int k = 0; k < nkeep; k++)
			{
				if (k % 1024 == 0)
					CHECK_FOR_INTERRUPTS();
				if (n > 0 && bsearch(&keep_texts[k], ts, n, sizeof(char *), psvc_fdw_cstring_cmp))
				{
					keep[m] = keep[k];
					keep_texts[m++] = keep_texts[k];
				}
			}
			nkeep = m;
		}
	}
	/* a type without an array type: intersected by the scan instead */
	if (nkeep != 1 && !OidIsValid(get_array_type(elemtype)))
		return NULL;
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	if (nkeep == 1)
	{
		*is_array = false;
		return (Expr *) makeConst(elemtype, -1, collid, typlen, keep[0], false, typbyval);
	}
	*is_array = true;
	return (Expr *) makeConst(get_array_type(elemtype), -1, collid, -1,
							  PointerGetDatum(construct_array(keep, nkeep, elemtype,
															  typlen, typbyval, typalign)),
							  false, false);
}

/* Whether node is column attno of relation relid, under binary coercions. */
static bool
is_column(Node *node, Index relid, AttrNumber attno)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node && IsA(node, Var) && ((Var *) node)->varno == relid &&
		((Var *) node)->varattno == attno && ((Var *) node)->varlevelsup == 0;
}

/* Whether clause uses column attno of relation relid. */
static bool
uses_column(Node *clause, Index relid, AttrNumber attno)
{
	Bitmapset  *attrs = NULL;

	pull_varattnos(clause, relid, &attrs);
	return bms_is_member(attno - FirstLowInvalidHeapAttributeNumber, attrs);
}

/* Whether clause uses a column of relation relid other than attno. */
static bool
uses_other_column(Node *clause, Index relid, AttrNumber attno)
{
	Bitmapset  *attrs = NULL;

	pull_varattnos(clause, relid, &attrs);
	attrs = bms_del_member(attrs, attno - FirstLowInvalidHeapAttributeNumber);
	return !bms_is_empty(attrs);
}

/*
 * The name of a function or operator (of an OpExpr, FuncExpr,
 * ScalarArrayOpExpr) that has column attno itself as an argument, when
 * node is one; NULL otherwise.  *is_op says which it is.
 */
static char *
applied_to_column(Node *node, Index relid, AttrNumber attno, bool *is_op)
{
	List	   *args = NIL;
	ListCell   *lc;
	char	   *name = NULL;

	*is_op = false;
	if (IsA(node, OpExpr))
	{
		args = ((OpExpr *) node)->args;
		name = get_opname(((OpExpr *) node)->opno);
		*is_op = true;
	}
	else if (IsA(node, ScalarArrayOpExpr))
	{
		args = ((ScalarArrayOpExpr *) node)->args;
		name = get_opname(((ScalarArrayOpExpr *) node)->opno);
		*is_op = true;
	}
	else if (IsA(node, FuncExpr))
	{
		args = ((FuncExpr *) node)->args;
		name = get_func_name(((FuncExpr *) node)->funcid);
	}
	foreach(lc, args)
		if (is_column(lfirst(lc), relid, attno))
			return name;
	return NULL;
}

/*
 * A function of the column inside clause: the first FuncExpr with the
 * column itself as an argument, found depth first; NULL if none.
 */
static char *
function_of_column(Node *node, Index relid, AttrNumber attno)
{
	bool		is_op;
	char	   *name;
	List	   *args = NIL;
	ListCell   *lc;

	if (node == NULL)
		return NULL;
	if (IsA(node, FuncExpr) && (name = applied_to_column(node, relid, attno, &is_op)) != NULL)
		return name;
	if (IsA(node, OpExpr))
		args = ((OpExpr *) node)->args;
	else if (IsA(node, ScalarArrayOpExpr))
		args = ((ScalarArrayOpExpr *) node)->args;
	else if (IsA(node, FuncExpr))
		args = ((FuncExpr *) node)->args;
	else if (IsA(node, BoolExpr))
		args = ((BoolExpr *) node)->args;
	else if (IsA(node, RelabelType))
		return function_of_column((Node *) ((RelabelType *) node)->arg, relid, attno);
	else if (IsA(node, CoerceViaIO))
		return function_of_column((Node *) ((CoerceViaIO *) node)->arg, relid, attno);
	foreach(lc, args)
		if ((name = function_of_column(lfirst(lc), relid, attno)) != NULL)
			return name;
	return NULL;
}

char *
psvc_fdw_unsent_hint(List *clauses, Index relid, AttrNumber attno, const char *colname)
{
	ListCell   *lc;
	const char *col = quote_identifier(colname);

	foreach(lc, clauses)
	{
		Node	   *clause = lfirst(lc);
		char	   *name;
		bool		is_op;

		if (!uses_column(clause, relid, attno))
			continue;
		if (is_orclause(clause) && uses_other_column(clause, relid, attno))
			return psprintf("The condition on %s is part of an OR with other columns, which cannot be sent: "
							"give %s = ... or %s = ANY(...) as a condition of its own (an OR across columns "
							"as a UNION ALL of one query per branch).", col, col, col);
		if ((name = function_of_column(clause, relid, attno)) != NULL)
			return psprintf("A condition on %s(%s) cannot be sent, only one on %s itself: "
							"add WHERE %s = ... or %s = ANY(...), or join on %s.",
							name, col, col, col, col, col);
		name = applied_to_column(clause, relid, attno, &is_op);
		if (name != NULL && is_op && (strcmp(name, "~~") == 0 || strcmp(name, "~~*") == 0))
			return psprintf("The condition %s %s ... cannot be sent, the service takes exact values: add WHERE %s = ... "
							"or %s = ANY(...), or join on %s.",
							col, strcmp(name, "~~") == 0 ? "LIKE" : "ILIKE", col, col, col);
		/* an equality not sent (a collation, a barrier): the general hint */
		if (name != NULL && is_op && strcmp(name, "=") != 0)
			return psprintf("The condition %s %s ... cannot be sent, only an exact equality: add WHERE %s = ... "
							"or %s = ANY(...), or join on %s.",
							col, name, col, col, col);
	}
	return NULL;
}
