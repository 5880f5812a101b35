/*-------------------------------------------------------------------------
 *
 * webhook_checks.c
 *		  The webhook worker's look-up of its database and role before it
 *		  connects: why a worker died connecting, from the shared
 *		  catalogues, by a process that has no database.
 *
 * Design notes:
 *
 * - Connecting to a database that does not exist, or as a role that
 *   cannot log in, is a FATAL the worker cannot catch.  The worker that
 *   follows one that died so connects to no database and asks here why,
 *   with growing pauses, until the answer is "nothing" (webhook_worker.c).
 * - Nothing here may need a database: see shared_catalog_lookup.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_checks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
#include "utils/fmgroids.h"

#include "webhook_int.h"

/*
 * The tuple of a shared catalogue (pg_database, pg_authid) whose name
 * column equals name, copied into the current memory context, or NULL.
 *
 * A heap scan, never an index or the syscache: the worker has no database,
 * and right after a start no backend may have written the shared relcache
 * init file yet, so the catalogue's indexes are not in the relcache, and
 * building their entries reads pg_class, which needs a database (FATAL
 * "cannot read pg_class without having selected a database").  The
 * catalogues themselves are always there (nailed); postinit.c's
 * GetDatabaseTuple scans pg_database this way for the same reason.
 */
static HeapTuple
shared_catalog_lookup(Oid relid, AttrNumber name_att, const char *name)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;

	ScanKeyInit(&key, name_att, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum(name));
	rel = table_open(relid, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		tup = heap_copytuple(tup);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return tup;
}

/*
 * Why the worker could not connect to wh_database as wh_role ("": the
 * bootstrap superuser), looked up in the shared catalogues (pg_database,
 * pg_authid): fills problem, or leaves it empty when the database and
 * role look usable.  Needs a database-less connection; reads
 * no catalogue that needs a database (shared_catalog_lookup).
 */
void
psvc_wh_connect_problem(const char *wh_database, const char *wh_role,
						char *problem, size_t len)
{
	HeapTuple	tup;

	problem[0] = '\0';
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	tup = shared_catalog_lookup(DatabaseRelationId, Anum_pg_database_datname, wh_database);
	if (!HeapTupleIsValid(tup))
		snprintf(problem, len, "database \"%s\" does not exist", wh_database);
	else if (!((Form_pg_database) GETSTRUCT(tup))->datallowconn)
		snprintf(problem, len, "database \"%s\" does not allow connections",
				 wh_database);
	if (problem[0] == '\0' && wh_role[0] != '\0')
	{
		tup = shared_catalog_lookup(AuthIdRelationId, Anum_pg_authid_rolname, wh_role);
		if (!HeapTupleIsValid(tup))
			snprintf(problem, len, "role \"%s\" does not exist", wh_role);
		else if (!((Form_pg_authid) GETSTRUCT(tup))->rolcanlogin)
			snprintf(problem, len, "role \"%s\" is not permitted to log in", wh_role);
	}
	CommitTransactionCommand();
}
