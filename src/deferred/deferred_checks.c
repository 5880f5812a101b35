/*-------------------------------------------------------------------------
 *
 * deferred_checks.c
 *		  Whether the senders can connect to the database and as the role
 *		  of partner_svc.worker_database, found out without connecting.
 *
 * Connecting to a database that does not exist is a FATAL the sender
 * cannot catch, and the postmaster would start it again every few
 * seconds, each time with a FATAL in the log.  So sender 0, until it has
 * seen the database usable once since the server started, first connects
 * to no database and looks the database and the role up in the shared
 * catalogues; only then does it restart to connect (deferred_sender.c).
 * The look-up is a heap scan of pg_database and pg_authid, never an index
 * or the syscache: without a database, building an index's relcache entry
 * would read pg_class, which needs one (the webhook worker's checks face
 * the same, src/webhook/webhook_checks.c).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/deferred/deferred_checks.c
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
#include "utils/rel.h"

#include "deferred_int.h"

/* Whether a row of shared catalogue relid has name in column att. */
static bool
row_named(Oid relid, AttrNumber att, const char *name, bool *flag, AttrNumber flag_att)
{
	Relation	rel = table_open(relid, AccessShareLock);
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	bool		found;

	ScanKeyInit(&key, att, BTEqualStrategyNumber, F_NAMEEQ, CStringGetDatum(name));
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	tup = systable_getnext(scan);
	found = HeapTupleIsValid(tup);
	if (found)
	{
		bool		isnull;

		*flag = DatumGetBool(heap_getattr(tup, flag_att, RelationGetDescr(rel), &isnull));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

void
psvc_def_connect_problem(const char *database, const char *role, char *problem, size_t len)
{
	bool		flag = false;

	problem[0] = '\0';
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (!row_named(DatabaseRelationId, Anum_pg_database_datname, database,
				   &flag, Anum_pg_database_datallowconn))
		snprintf(problem, len, "database \"%s\" does not exist", database);
	else if (!flag)
		snprintf(problem, len, "database \"%s\" does not allow connections", database);
	else if (role[0] != '\0' &&
			 !row_named(AuthIdRelationId, Anum_pg_authid_rolname, role,
						&flag, Anum_pg_authid_rolcanlogin))
		snprintf(problem, len, "role \"%s\" does not exist", role);
	else if (role[0] != '\0' && !flag)
		snprintf(problem, len, "role \"%s\" is not permitted to log in", role);
	CommitTransactionCommand();
}
