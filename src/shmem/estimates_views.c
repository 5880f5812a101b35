/*-------------------------------------------------------------------------
 *
 * estimates_views.c
 *		  The functions behind the view partner_svc.estimates and
 *		  partner_svc.estimates_reset().
 *
 * The view's function copies the shared entries under the lock in shared
 * mode into memory allocated before taking it, and builds its rows after
 * releasing it (the locking rules are in the header of estimates.c); the
 * view (sql/install/50_estimates.sql) adds server names.  Key values are
 * shown only for entries of the current database (another database's
 * may be in another encoding), and only to superusers and members of
 * pg_read_all_stats: a key is user data (a movie, a user id), as
 * partner_svc.rate_limits treats resource ids.  Without preloading there
 * is nothing to show, and the functions say so.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/estimates_views.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "estimates.h"
#include "estimates_int.h"
#include "guc.h"

/* How often the view's loop over copied entries checks for interrupts. */
#define PSVC_EST_INTERRUPT_EVERY 1024

PG_FUNCTION_INFO_V1(psvc_est_entries);
PG_FUNCTION_INFO_V1(psvc_est_reset);

static void
require_shmem(const char *what)
{
	if (psvc_est_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs partner_svc in shared_preload_libraries", what),
				 errdetail("Learned estimates live in shared memory, which partner_svc has only when it is preloaded.")));
}

/*
 * partner_svc.estimates(): one row per entry: dbid, serverid, route, kind
 * ('key' or 'average'), columns, key (NULL for an average, for another
 * database's keys, and unless the caller may see key values: see the
 * header comment), rows, scans, last_rows, last_scan.
 *
 * The entries are copied under the lock into an array allocated before
 * it (in the function's memory context), sized by a first look at the
 * count; entries recorded between the two looks may be left out.  The
 * rows are built after the lock is released.
 */
Datum
psvc_est_entries(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		see_keys = superuser() ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	HASH_SEQ_STATUS seq;
	PsvcEstEntry *copy;
	PsvcEstEntry *e;
	long		room;
	long		n = 0;

	require_shmem("partner_svc.estimates");
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(psvc_est_shared->lock, LW_SHARED);
	room = hash_get_num_entries(psvc_est_table);
	LWLockRelease(psvc_est_shared->lock);
	room = Min(room + 16, psvc_guc_max_keys);
	copy = palloc(sizeof(PsvcEstEntry) * room);

	LWLockAcquire(psvc_est_shared->lock, LW_SHARED);
	hash_seq_init(&seq, psvc_est_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (n >= room)
		{
			hash_seq_term(&seq);
			break;
		}
		copy[n++] = *e;
	}
	LWLockRelease(psvc_est_shared->lock);

	for (long i = 0; i < n; i++)
	{
		Datum		values[10];
		bool		nulls[10];

		if (i % PSVC_EST_INTERRUPT_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
		e = &copy[i];
		memset(nulls, 0, sizeof(nulls));
		values[0] = ObjectIdGetDatum(e->key.dbid);
		values[1] = ObjectIdGetDatum(e->key.serverid);
		values[2] = CStringGetTextDatum(e->key.route);
		values[3] = CStringGetTextDatum(e->key.average ? "average" : "key");
		values[4] = CStringGetTextDatum(e->columns);
		if (e->key.average || e->key.dbid != MyDatabaseId || !see_keys)
			nulls[5] = true;
		else
			values[5] = CStringGetTextDatum(e->key.key);
		values[6] = Float8GetDatum(e->rows);
		values[7] = Int64GetDatum(e->scans);
		values[8] = Int64GetDatum(e->last_rows);
		values[9] = TimestampTzGetDatum(e->last_scan);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(copy);

	return (Datum) 0;
}

/*
 * partner_svc.estimates_reset(server name DEFAULT NULL): forgets what was
 * learned, of one server of the current database, or with NULL of every
 * server of every database, and removes the file of the estimates kept
 * across a restart (estimates_file.c).  Plans made afterwards use the
 * defaults again until scans teach them anew.
 */
Datum
psvc_est_reset(PG_FUNCTION_ARGS)
{
	Oid			serverid = InvalidOid;
	HASH_SEQ_STATUS seq;
	PsvcEstEntry *e;

	require_shmem("partner_svc.estimates_reset()");
	if (!PG_ARGISNULL(0))
		serverid = GetForeignServerByName(NameStr(*PG_GETARG_NAME(0)), false)->serverid;

	LWLockAcquire(psvc_est_shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, psvc_est_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (!OidIsValid(serverid) ||
			(e->key.dbid == MyDatabaseId && e->key.serverid == serverid))
			hash_search(psvc_est_table, &e->key, HASH_REMOVE, NULL);
	}
	LWLockRelease(psvc_est_shared->lock);
	/* and the file, should one be there (it is removed once read) */
	psvc_est_file_remove();

	PG_RETURN_VOID();
}
