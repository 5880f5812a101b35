/*-------------------------------------------------------------------------
 *
 * fdw.h
 *		  The foreign data wrapper of partner_svc: the callbacks that
 *		  fdw_handler.c hands to PostgreSQL, and what its files share.
 *
 * The module is fdw_handler.c (the FdwRoutine), fdw_plan.c (paths, plans,
 * pushed-down equalities, the endpoint and columns of a table),
 * fdw_quals.c (the equality shapes the planner recognises),
 * fdw_barrier.c (the values sent from inside a security_barrier view),
 * fdw_scan.c (the generic scan engine: executor callbacks, streams, rows
 * built from the catalogue's columns), fdw_scan_values.c (the pushed
 * values of a run), fdw_scan_page.c (a stream's pages,
 * fetched lazily and decoded), fdw_explain.c (EXPLAIN; the scan's shared
 * internals are in fdw_scan_int.h), fdw_modify.c and fdw_modify_row.c
 * (INSERT/UPDATE/DELETE on writable tables; internals in
 * fdw_modify_int.h) and fdw_import.c (IMPORT FOREIGN SCHEMA).  It reads
 * the catalogue (catalog.h) and makes its calls through the call module
 * (call.h).
 *
 * Memory: planning allocates in the planner's CurrentMemoryContext; a
 * scan keeps its state in the executor's per-query context, each page in
 * a per-page context reset before the next fetch (fdw_scan_page.c); a
 * modify keeps a per-row context (fdw_modify.c).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_FDW_H
#define PSVC_FDW_H

#include "fmgr.h"
#include "catalog/pg_attribute.h"
#include "nodes/execnodes.h"
#include "nodes/parsenodes.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"

#include "catalog.h"

struct ExplainState;
struct PsvcServer;

/* in fdw_plan.c */

/*
 * Positions in a ForeignScan's fdw_private list, the hand-over from the
 * plan (fdw_plan.c) to the scan (fdw_scan.c, fdw_explain.c), as
 * postgres_fdw's FdwScanPrivateIndex.
 */
enum PsvcPrivateIndex
{
	PSVC_PRIV_RESOURCE,			/* String: the endpoint's resource */
	PSVC_PRIV_DETAIL,			/* Integer: 1 = read one object by key */
	PSVC_PRIV_LIMIT,			/* Integer: rows the query needs, -1 = all */
	PSVC_PRIV_PUSHED,			/* List of List: (column, index in fdw_exprs,
								 * is_array) per pushed-down equality */
	PSVC_PRIV_ATTRS,			/* IntList: attnums the query needs */
	PSVC_PRIV_MISSING,			/* String: a required path column the plan
								 * has no value for (the scan raises the
								 * documented error), or "" */
	PSVC_PRIV_ESTIMATE,			/* String: the row estimate and where it
								 * comes from (estimates.c), for EXPLAIN */
	PSVC_PRIV_MISSING_HINT,		/* String: the hint of the missing column's
								 * error when the query has a condition on
								 * it that cannot be sent, or "" */
	PSVC_PRIV_COUNT				/* (the length of the list) */
};

/* Positions in each element of the PSVC_PRIV_PUSHED list. */
enum PsvcPushedIndex
{
	PSVC_PUSHED_COLUMN,			/* String: the table column's catalogue name */
	PSVC_PUSHED_EXPR,			/* Integer: index of its value in fdw_exprs */
	PSVC_PUSHED_IS_ARRAY,		/* Integer: 1 = col = ANY(array) */
	PSVC_PUSHED_CLOSED,			/* Integer: 1 = a filter of documented values
								 * (catalog.h: filter_closed) compared
								 * exactly: other values are not sent */
	PSVC_PUSHED_ALSO,			/* IntList: indexes in fdw_exprs of the values
								 * of further equalities on the column, known
								 * at run time: only the values every one
								 * holds are sent */
	PSVC_PUSHED_ALSO_ARRAY,		/* IntList: 1 = that equality is = ANY */
	PSVC_PUSHED_COUNT			/* (the length of an element) */
};

extern void psvc_fdw_get_rel_size(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern void psvc_fdw_get_paths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern ForeignScan *psvc_fdw_get_plan(PlannerInfo *root, RelOptInfo *baserel,
									  Oid foreigntableid, ForeignPath *best_path,
									  List *tlist, List *scan_clauses, Plan *outer_plan);
/*
 * The catalogue column a table column stands for: by name, or a plain
 * member column when the column has the option "field" or "json_path";
 * a declared table's column as its endpoint built it (fdw_declared.c).
 * Allocates in CurrentMemoryContext.  Errors for a column that maps to
 * nothing, and for the options of a declared route on a resource table.
 */
extern const PsvcColumnDef *psvc_fdw_column_def(const PsvcEndpoint *ep, Oid relid,
												 Form_pg_attribute att);
/* Index of a member column in a decode's field list; see fdw_plan.c. */
extern int	psvc_fdw_field_index(const PsvcColumnDef *def, const char **fields, int *nfields);
/* IsForeignPathAsyncCapable: may an Append run the path asynchronously? */
extern bool psvc_fdw_async_capable(ForeignPath *path);
/* The endpoint of a foreign table, checked against its server's service. */
extern const PsvcEndpoint *psvc_fdw_endpoint(Oid relid, struct PsvcServer **server);
/* The same from the table's catalogue entry, when the caller has it. */
struct ForeignTable;
extern const PsvcEndpoint *psvc_fdw_endpoint_of(const struct ForeignTable *ft,
												struct PsvcServer **server);

/* in fdw_declared.c: a table over a route declared in SQL */

/* Whether the table declares its route (option "endpoint"). */
extern bool psvc_fdw_is_declared(const struct ForeignTable *ft);
/*
 * Its endpoint, built from its options on server srv and kept per
 * relation until an invalidation (see the file's header for the memory).
 */
extern const PsvcEndpoint *psvc_fdw_declared_endpoint(const struct ForeignTable *ft,
													   const struct PsvcServer *srv);

/* in fdw_quals.c */

/*
 * Recognises "col = expr", "expr = col", "col = ANY(expr)" and an OR of
 * such equalities on one column (given as col = ANY of an array of their
 * values) where col is a column of relation relid and expr does not use
 * it.  Returns the attnum, or 0; *collid receives the collation the
 * equality compares with.  Allocates in CurrentMemoryContext.
 */
extern AttrNumber psvc_fdw_match_equality(Expr *clause, Index relid, Expr **value,
										  bool *is_array, Oid *collid);
/*
 * The hint for a required column colname (attnum attno) the plan has no
 * value for, when one of the local clauses (Expr *) of relation relid is
 * a condition on it that cannot be sent (an OR across columns, a LIKE,
 * another operator, a function of the column), naming that cause; NULL
 * when none is.  Allocates in CurrentMemoryContext.
 */
extern char *psvc_fdw_unsent_hint(List *clauses, Index relid, AttrNumber attno,
								  const char *colname);
/*
 * The values that satisfy every one of several equalities on one column
 * (values: their value expressions; arrays: IntList, 1 = col = ANY), when
 * all are constants: one value as a scalar Const (*is_array false), else
 * an array Const, empty when no value satisfies them all; NULL when some
 * value is not a constant (the scan intersects them when it starts).
 * Allocates in CurrentMemoryContext.
 */
extern Expr *psvc_fdw_intersect_consts(List *values, List *arrays, bool *is_array);
/* Does equality on the column, under collid, compare text exactly? */
extern bool psvc_fdw_compares_exactly(Form_pg_attribute att, Oid collid);
struct ArrayType;				/* utils/array.h */
/* The text a constant is sent as (its type's output); CurrentMemoryContext. */
extern char *psvc_fdw_const_text(Datum value, Oid type);
/* qsort and bsearch comparator of an array of C strings. */
extern int	psvc_fdw_cstring_cmp(const void *a, const void *b);
/*
 * The elements of arr, of type elemtype, into *elems and *nulls (in
 * CurrentMemoryContext); returns their count, and the type's length and
 * by-value flag where typlen and typbyval are not NULL.
 */
extern int	psvc_fdw_array_elems(struct ArrayType *arr, Oid elemtype, Datum **elems,
								 bool **nulls, int16 *typlen, bool *typbyval);

/* in fdw_barrier.c */

/* Is the query level planned inside a security_barrier view (or may be)? */
extern bool psvc_fdw_in_barrier_subquery(PlannerInfo *root);
/*
 * For a column of baserel planned inside a security_barrier view: may its
 * pushed value (*value, *is_array; merged: the RestrictInfos it
 * satisfies; known: it is the whole value, not one to intersect at run
 * time) be sent?  false: no, its conditions filter locally; true: yes,
 * *value and *is_array reduced to the values that pass the column's
 * other conditions.  Allocates in CurrentMemoryContext.
 */
extern bool psvc_fdw_barrier_values(PlannerInfo *root, RelOptInfo *baserel,
									AttrNumber attno, List *merged, bool known,
									Expr **value, bool *is_array);
/*
 * The clauses of a foreign partition's bound that use column attno (NIL
 * when the table is no partition).  Allocates in CurrentMemoryContext.
 */
extern List *psvc_fdw_partition_bounds(PlannerInfo *root, RelOptInfo *baserel,
									   AttrNumber attno);
/*
 * Reduces a pushed value (*value, *is_array; known: the whole value, not
 * one to intersect at run time) to the values that pass every clause of
 * bounds, evaluated on the value itself; false when that cannot be told
 * when planning.  Allocates in CurrentMemoryContext.
 */
extern bool psvc_fdw_values_passing(PlannerInfo *root, RelOptInfo *baserel,
									AttrNumber attno, List *bounds, bool known,
									Expr **value, bool *is_array);

/* in fdw_scan.c */
extern void psvc_fdw_begin(ForeignScanState *node, int eflags);
extern TupleTableSlot *psvc_fdw_iterate(ForeignScanState *node);
extern void psvc_fdw_rescan(ForeignScanState *node);
extern void psvc_fdw_end(ForeignScanState *node);

/* in fdw_scan.c: a scan an Append runs asynchronously */
extern void psvc_fdw_async_request(AsyncRequest *areq);
extern void psvc_fdw_async_configure_wait(AsyncRequest *areq);
extern void psvc_fdw_async_notify(AsyncRequest *areq);

/* in fdw_explain.c */
extern void psvc_fdw_explain(ForeignScanState *node, struct ExplainState *es);

/* in fdw_import.c */
extern List *psvc_fdw_import(ImportForeignSchemaStmt *stmt, Oid serverOid);
extern bool psvc_fdw_import_wanted(ImportForeignSchemaStmt *stmt, const char *table);

/* in fdw_openapi.c: IMPORT FOREIGN SCHEMA openapi */
extern List *psvc_fdw_import_openapi(ImportForeignSchemaStmt *stmt, Oid serverOid);

/* in fdw_modify.c: INSERT/UPDATE/DELETE on writable foreign tables */
extern void psvc_fdw_add_update_targets(PlannerInfo *root, Index rtindex,
										RangeTblEntry *target_rte,
										Relation target_relation);
extern List *psvc_fdw_plan_modify(PlannerInfo *root, ModifyTable *plan,
								  Index resultRelation, int subplan_index);
extern void psvc_fdw_begin_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
								  List *fdw_private, int subplan_index, int eflags);
/* ExecForeignInsert, ExecForeignUpdate and ExecForeignDelete, all three */
extern TupleTableSlot *psvc_fdw_exec_row(EState *estate, ResultRelInfo *rinfo,
										 TupleTableSlot *slot,
										 TupleTableSlot *planSlot);
/* EndForeignModify and EndForeignInsert */
extern void psvc_fdw_end_modify(EState *estate, ResultRelInfo *rinfo);
extern void psvc_fdw_begin_insert(ModifyTableState *mtstate, ResultRelInfo *rinfo);
extern int	psvc_fdw_updatable(Relation rel);
extern void psvc_fdw_explain_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
									List *fdw_private, int subplan_index,
									struct ExplainState *es);

/* in fdw_handler.c */
extern Datum psvc_fdw_handler(PG_FUNCTION_ARGS);

/* in fdw_options.c: the validator of every object of the wrapper */
extern Datum psvc_options_validator(PG_FUNCTION_ARGS);
/* Raises HV00D for an option IMPORT FOREIGN SCHEMA (openapi or not) does not take. */
extern void psvc_options_check_import(List *options, bool openapi);

/* in fdw_options_declared.c: the options of a declared route */
/* One option's value; raises HV024 naming it. */
extern void psvc_options_check_declared(DefElem *def);
/* The rules between a table's options (HV00D naming the option). */
extern void psvc_options_check_declared_table(List *options);
/* The rules between a column's options. */
extern void psvc_options_check_declared_column(List *options);

/* fdw_jit.c: the planner hook that keeps remote costs out of JIT's decision */
extern void psvc_fdw_jit_init(void);

#endif							/* PSVC_FDW_H */
