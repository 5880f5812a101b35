/*-------------------------------------------------------------------------
 *
 * fdw_handler.c
 *		  The partner_svc foreign-data wrapper handler: the FdwRoutine that
 *		  tells the planner and executor how to use partner_svc tables.
 *
 * Planning is in fdw_plan.c, scanning and EXPLAIN in fdw_scan.c,
 * IMPORT FOREIGN SCHEMA in fdw_import.c.  Modification callbacks are not
 * set yet, so PostgreSQL reports INSERT, UPDATE and DELETE on these tables
 * as unsupported in its own words.
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

PG_FUNCTION_INFO_V1(psvc_fdw_handler);

/*
 * The callbacks live in fdw_plan.c, fdw_scan.c and fdw_import.c; this
 * file only hands them to PostgreSQL.
 */
Datum
psvc_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = psvc_fdw_get_rel_size;
	routine->GetForeignPaths = psvc_fdw_get_paths;
	routine->GetForeignPlan = psvc_fdw_get_plan;
	routine->BeginForeignScan = psvc_fdw_begin;
	routine->IterateForeignScan = psvc_fdw_iterate;
	routine->ReScanForeignScan = psvc_fdw_rescan;
	routine->EndForeignScan = psvc_fdw_end;
	routine->ExplainForeignScan = psvc_fdw_explain;
	routine->ImportForeignSchema = psvc_fdw_import;

	PG_RETURN_POINTER(routine);
}
