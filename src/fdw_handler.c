/*-------------------------------------------------------------------------
 *
 * fdw_handler.c
 *		  The partner_svc foreign-data wrapper handler: the FdwRoutine that
 *		  tells the planner and executor how to use partner_svc tables.
 *
 * Planning and scanning are not built yet.  The scan callbacks PostgreSQL
 * requires are present and each raises one clear "not implemented" error;
 * planning fails in GetForeignRelSize, so the executor callbacks are never
 * reached.  Every optional callback (modification, IMPORT FOREIGN SCHEMA,
 * EXPLAIN, ANALYZE) is left NULL, which makes PostgreSQL report those
 * commands as unsupported for these tables in its own words.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw_handler.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "foreign/fdwapi.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "utils/lsyscache.h"

#include "partner_svc.h"

static void report_scan_not_implemented(Oid relid) pg_attribute_noreturn();

PG_FUNCTION_INFO_V1(psvc_fdw_handler);

/*
 * Raises the one error of every scan callback.  relid names the table when
 * the caller knows it, InvalidOid otherwise.
 */
static void
report_scan_not_implemented(Oid relid)
{
	char	   *relname = OidIsValid(relid) ? get_rel_name(relid) : NULL;

	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("foreign table scans of partner_svc are not implemented yet"),
			 relname ?
			 errdetail("Foreign table \"%s\" cannot be read by this version of partner_svc.",
					   relname) : 0));
}

static void
get_foreign_rel_size(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	report_scan_not_implemented(foreigntableid);
}

static void
get_foreign_paths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	report_scan_not_implemented(foreigntableid);
}

static ForeignScan *
get_foreign_plan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
				 ForeignPath *best_path, List *tlist, List *scan_clauses,
				 Plan *outer_plan)
{
	report_scan_not_implemented(foreigntableid);
}

static void
begin_foreign_scan(ForeignScanState *node, int eflags)
{
	report_scan_not_implemented(InvalidOid);
}

static TupleTableSlot *
iterate_foreign_scan(ForeignScanState *node)
{
	report_scan_not_implemented(InvalidOid);
}

static void
rescan_foreign_scan(ForeignScanState *node)
{
	report_scan_not_implemented(InvalidOid);
}

static void
end_foreign_scan(ForeignScanState *node)
{
	report_scan_not_implemented(InvalidOid);
}

/*
 * partner_svc.fdw_handler(): returns the FdwRoutine, allocated in the
 * caller's context as PostgreSQL expects.
 */
Datum
psvc_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = get_foreign_rel_size;
	routine->GetForeignPaths = get_foreign_paths;
	routine->GetForeignPlan = get_foreign_plan;
	routine->BeginForeignScan = begin_foreign_scan;
	routine->IterateForeignScan = iterate_foreign_scan;
	routine->ReScanForeignScan = rescan_foreign_scan;
	routine->EndForeignScan = end_foreign_scan;

	PG_RETURN_POINTER(routine);
}
