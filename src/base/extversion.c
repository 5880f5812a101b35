/*-------------------------------------------------------------------------
 *
 * extversion.c
 *		  The installed version of partner_svc's SQL objects against the
 *		  loaded library's (extversion.h says who asks and why).
 *
 * Design notes:
 *
 * - pg_extension has no syscache, so the version is read with an index
 *   scan of pg_extension_name_index, as commands/extension.c reads it.
 *   An UPDATE commits a new row; the next transaction of the asker sees
 *   it.  No signal is needed: the askers call once per turn or claim, and
 *   their waits are bounded (a second for the senders).
 * - The log lines say what waits and for what, once per change of state
 *   per process, so a long wait writes two lines, not one per turn.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/extversion.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "extversion.h"
#include "partner_svc.h"

/* whether this process last logged that it waits */
static bool extv_waiting = false;

/* Reads the version; the caller has a transaction open. */
static void
extv_read(char *buf, size_t len)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	buf[0] = '\0';
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("partner_svc"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		if (!isnull)
			text_to_cstring_buffer(DatumGetTextPP(d), buf, len);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
}

void
psvc_extv_installed(char *buf, size_t len)
{
	if (IsTransactionState())
	{
		extv_read(buf, len);
		return;
	}
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	extv_read(buf, len);
	CommitTransactionCommand();
}

bool
psvc_extv_waiting(void)
{
	return extv_waiting;
}

bool
psvc_extv_ready(const char *who)
{
	char		v[NAMEDATALEN];

	psvc_extv_installed(v, sizeof(v));
	if (v[0] == '\0' || strcmp(v, PSVC_VERSION) == 0)
	{
		if (extv_waiting)
			ereport(LOG,
					(errmsg("%s resumes: extension \"partner_svc\" is at version %s",
							who, v[0] ? v : PSVC_VERSION)));
		extv_waiting = false;
		return true;
	}
	if (!extv_waiting)
		ereport(LOG,
				(errmsg("%s waits: extension \"partner_svc\" is at version %s and the library at %s",
						who, v, PSVC_VERSION),
				 errhint("Run ALTER EXTENSION partner_svc UPDATE in this database; webhooks are received meanwhile.")));
	extv_waiting = true;
	return false;
}
