/*-------------------------------------------------------------------------
 *
 * fdw_handler.c
 *		  The partner_svc foreign-data wrapper handler: the FdwRoutine that
 *		  tells the planner and executor how to use partner_svc tables.
 *
 * Planning is in fdw_plan.c, scanning in fdw_scan.c (and
 * fdw_scan_page.c), EXPLAIN in fdw_explain.c, INSERT, UPDATE and DELETE in fdw_modify.c, IMPORT FOREIGN SCHEMA in
 * fdw_import.c.  Which tables are writable, and how, is in the endpoint
 * catalogue; IsForeignRelUpdatable reports it, so PostgreSQL refuses
 * writes to the other tables in its own words.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_handler.c
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

#include "fdw.h"

PG_FUNCTION_INFO_V1(psvc_fdw_handler);

/*
 * IMPORT FOREIGN SCHEMA: the remote schema "openapi" imports an OpenAPI
 * document (fdw_openapi.c), any other is a service's name (fdw_import.c).
 */
static List *
import_schema(ImportForeignSchemaStmt *stmt, Oid serverOid)
{
	if (strcmp(stmt->remote_schema, "openapi") == 0)
		return psvc_fdw_import_openapi(stmt, serverOid);
	return psvc_fdw_import(stmt, serverOid);
}

/*
 * The callbacks live in fdw_plan.c, fdw_scan.c, fdw_explain.c,
 * fdw_modify.c and fdw_import.c; this file only hands them to PostgreSQL.
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

	routine->IsForeignPathAsyncCapable = psvc_fdw_async_capable;
	routine->ForeignAsyncRequest = psvc_fdw_async_request;
	routine->ForeignAsyncConfigureWait = psvc_fdw_async_configure_wait;
	routine->ForeignAsyncNotify = psvc_fdw_async_notify;

	routine->AddForeignUpdateTargets = psvc_fdw_add_update_targets;
	routine->PlanForeignModify = psvc_fdw_plan_modify;
	routine->BeginForeignModify = psvc_fdw_begin_modify;
	routine->ExecForeignInsert = psvc_fdw_exec_row;
	routine->ExecForeignUpdate = psvc_fdw_exec_row;
	routine->ExecForeignDelete = psvc_fdw_exec_row;
	routine->EndForeignModify = psvc_fdw_end_modify;
	routine->BeginForeignInsert = psvc_fdw_begin_insert;
	routine->EndForeignInsert = psvc_fdw_end_modify;
	routine->IsForeignRelUpdatable = psvc_fdw_updatable;
	routine->ExplainForeignModify = psvc_fdw_explain_modify;
	routine->ImportForeignSchema = import_schema;

	PG_RETURN_POINTER(routine);
}
