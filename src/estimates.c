/*-------------------------------------------------------------------------
 *
 * estimates.c
 *		  Row estimates learned from what earlier scans fetched, kept in
 *		  shared memory for all sessions of the server.
 *
 * What is learned.  A scan of a list reports, for each stream that reached
 * the end of its list (next_cursor null, or the documented "no such
 * content" answer), the rows it kept: the items that passed the recheck of
 * the pushed conditions (fdw_scan.c).  A stream that stopped early (a
 * LIMIT, an error, a cancel, a rescan, an executor that stopped asking)
 * reports nothing, so no count is ever too small because the scan did not
 * look further.  Detail reads (one object by id) are not learned: they
 * are estimated at one row.
 *
 * Entries.  Each is found by (database, server, list route template, kind,
 * key):
 *	- kind "key": one key of the route, the values the scan sent
 *	  ("movie='52'"; "" for the plain list);
 *	- kind "average": every key with the same pushed columns ("movie"), so
 *	  that a value not seen yet, or one known only at run time (a join's
 *	  nested loop, a generic plan), is estimated from the others.
 * Both hold a running mean of the rows of their last scans: the plain
 * mean of the first PSVC_EST_WINDOW scans, then an exponential average
 * with weight 1/PSVC_EST_WINDOW for the newest, the count of scans and
 * the time and rows of the last one.  The first complete scan of a key
 * sets its estimate to exactly what it saw.
 *
 * Using them (fdw_plan.c): the entry of the exact key when the plan knows
 * the values, else the average of the route's keys with these columns,
 * else the documented defaults.  With partner_svc.learn_estimates off a
 * session neither records nor uses what was learned.
 *
 * Shared memory, as pg_stat_statements does it: requested in
 * shmem_request_hook (only when preloaded; without preloading nothing is
 * learned and the defaults apply), built in shmem_startup_hook under
 * AddinShmemInitLock: one fixed-size hash table of
 * partner_svc.estimates_max_entries entries and one LWLock of the tranche
 * "partner_svc_estimates".
 *
 * Locking rules.  The LWLock protects the table and every field of every
 * entry: shared to read (planning, the view), exclusive to record, evict
 * or reset.  Nothing under it allocates or can raise: keys are built and
 * the time is read before it is taken, hash_search is called only with
 * HASH_FIND, HASH_REMOVE and HASH_ENTER_NULL, and the view copies the
 * entries into memory allocated beforehand and builds its rows after
 * releasing it.
 *
 * The table is full.  Recording a new entry into a full table first
 * evicts the entry whose last scan is the oldest (one pass over the
 * table; recording follows a complete scan, which cost at least one HTTP
 * request, so the pass is cheap beside it).  An average is refreshed by
 * every scan of any of its keys, so it outlives the keys it summarises.
 * A key longer than PSVC_EST_KEY_LEN - 1 bytes is not kept (its scans
 * still count in the average).
 *
 * Keys of other databases are kept apart by the database's OID (server
 * OIDs are per database), and the view shows their values only in their
 * own database, to superusers and members of pg_read_all_stats, as
 * partner_svc.rate_limits does with resource ids: a key value is user
 * data (a movie, a user id).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/estimates.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "estimates.h"

#define PSVC_EST_TRANCHE	"partner_svc_estimates"

/* Sizes of the text parts of a key, with their NULs. */
#define PSVC_EST_ROUTE_LEN	128
#define PSVC_EST_KEY_LEN	256
#define PSVC_EST_COLUMNS_LEN 64

/* Scans the running mean gives full weight to (see the header comment). */
#define PSVC_EST_WINDOW		4

/* How often the view's loop over copied entries checks for interrupts. */
#define PSVC_EST_INTERRUPT_EVERY 1024

typedef struct EstKey
{
	Oid			dbid;
	Oid			serverid;
	bool		average;		/* false: one key; true: the average */
	char		route[PSVC_EST_ROUTE_LEN];
	char		key[PSVC_EST_KEY_LEN];	/* the values; of an average, the
										 * column names */
} EstKey;

typedef struct EstEntry
{
	EstKey		key;			/* hash key: first */
	char		columns[PSVC_EST_COLUMNS_LEN];	/* the pushed columns */
	double		rows;			/* running mean */
	int64		scans;
	int64		last_rows;
	TimestampTz last_scan;
} EstEntry;

typedef struct EstShared
{
	LWLock	   *lock;
} EstShared;

/* GUCs */
bool		psvc_est_learn = true;
static int	est_max_entries = 1024;

/* shared state; NULL unless preloaded */
static EstShared *est_shared = NULL;
static HTAB *est_table = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void est_shmem_request(void);
static void est_shmem_startup(void);

PG_FUNCTION_INFO_V1(psvc_est_entries);
PG_FUNCTION_INFO_V1(psvc_est_reset);


/*
 * From _PG_init: partner_svc.learn_estimates always, and when preloading
 * the size of the table and the shared memory hooks.
 */
void
psvc_est_init(void)
{
	DefineCustomBoolVariable("partner_svc.learn_estimates",
							 "Learns foreign scans' row estimates from the rows earlier complete scans fetched.",
							 "Off: scans record nothing and plans use the default estimates.",
							 &psvc_est_learn,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	/* PGC_POSTMASTER settings exist only when preloading (guc.c's rule) */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("partner_svc.estimates_max_entries",
							"Number of learned row estimates kept in shared memory.",
							"When the table is full, the entry scanned least recently is forgotten.",
							&est_max_entries,
							1024,
							16,
							1024 * 1024,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = est_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = est_shmem_startup;
}

static Size
est_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(EstShared)),
					hash_estimate_size(est_max_entries, sizeof(EstEntry)));
}

static void
est_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(est_shmem_size());
	RequestNamedLWLockTranche(PSVC_EST_TRANCHE, 1);
}

/*
 * Makes (postmaster, or each backend under EXEC_BACKEND) or attaches to
 * the shared table, under AddinShmemInitLock.
 */
static void
est_shmem_startup(void)
{
	bool		found;
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	est_shared = ShmemInitStruct("partner_svc estimates", sizeof(EstShared), &found);
	if (!found)
		est_shared->lock = &(GetNamedLWLockTranche(PSVC_EST_TRANCHE))->lock;

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(EstKey);
	info.entrysize = sizeof(EstEntry);
	est_table = ShmemInitHash("partner_svc learned estimates",
							  est_max_entries, est_max_entries,
							  &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

bool
psvc_est_active(void)
{
	return psvc_est_learn && est_shared != NULL;
}

/* qsort_arg comparator of indexes into the name array arg */
static int
name_index_cmp(const void *a, const void *b, void *arg)
{
	const char *const *names = arg;

	return strcmp(names[*(const int *) a], names[*(const int *) b]);
}

char *
psvc_est_key(int n, const char *const *names, const char *const *values)
{
	StringInfoData buf;
	int		   *order = palloc(sizeof(int) * Max(n, 1));

	for (int i = 0; i < n; i++)
		order[i] = i;
	qsort_arg(order, n, sizeof(int), name_index_cmp, (void *) names);

	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, names[order[i]]);
		if (values != NULL)
		{
			appendStringInfoChar(&buf, '=');
			appendStringInfoString(&buf, quote_literal_cstr(values[order[i]]));
		}
	}
	pfree(order);
	return buf.data;
}

/* Fills a hash key; false when a part is too long to be kept. */
static bool
make_key(EstKey *k, Oid serverid, const char *route, const char *key, bool average)
{
	memset(k, 0, sizeof(*k));	/* HASH_BLOBS hashes the padding too */
	k->dbid = MyDatabaseId;
	k->serverid = serverid;
	k->average = average;
	if (strlcpy(k->route, route, sizeof(k->route)) >= sizeof(k->route) ||
		strlcpy(k->key, key, sizeof(k->key)) >= sizeof(k->key))
		return false;
	return true;
}

bool
psvc_est_lookup(Oid serverid, const char *route, const char *key,
				bool average, double *rows, int64 *scans)
{
	EstKey		k;
	EstEntry   *e;
	bool		found = false;

	if (!psvc_est_active() || !make_key(&k, serverid, route, key, average))
		return false;

	LWLockAcquire(est_shared->lock, LW_SHARED);
	e = hash_search(est_table, &k, HASH_FIND, NULL);
	if (e != NULL && e->scans > 0)
	{
		*rows = e->rows;
		*scans = e->scans;
		found = true;
	}
	LWLockRelease(est_shared->lock);
	return found;
}

/*
 * The entry of k, made (evicting the least recently scanned entry when the
 * table is full) if it does not exist; NULL if there is no room.  Caller
 * holds the lock exclusively.
 */
static EstEntry *
enter_locked(const EstKey *k, const char *columns)
{
	EstEntry   *e;
	bool		found;

	e = hash_search(est_table, k, HASH_FIND, NULL);
	if (e != NULL)
		return e;

	if (hash_get_num_entries(est_table) >= est_max_entries)
	{
		HASH_SEQ_STATUS seq;
		EstEntry   *victim = NULL;
		EstEntry   *x;

		hash_seq_init(&seq, est_table);
		while ((x = hash_seq_search(&seq)) != NULL)
			if (victim == NULL || x->last_scan < victim->last_scan)
				victim = x;
		if (victim != NULL)
			hash_search(est_table, &victim->key, HASH_REMOVE, NULL);
	}

	e = hash_search(est_table, k, HASH_ENTER_NULL, &found);
	if (e != NULL && !found)
	{
		strlcpy(e->columns, columns, sizeof(e->columns));
		e->rows = 0;
		e->scans = 0;
		e->last_rows = 0;
		e->last_scan = 0;
	}
	return e;
}

static void
observe(EstEntry *e, int64 rows, TimestampTz now)
{
	e->scans++;
	e->rows += ((double) rows - e->rows) / Min(e->scans, PSVC_EST_WINDOW);
	e->last_rows = rows;
	e->last_scan = now;
}

void
psvc_est_record(Oid serverid, const char *route, const char *key,
				const char *columns, int64 rows)
{
	EstKey		exact;
	EstKey		avg;
	bool		keep_exact;
	bool		keep_avg;
	TimestampTz now;

	if (!psvc_est_active() || strlen(columns) >= PSVC_EST_COLUMNS_LEN)
		return;
	keep_exact = make_key(&exact, serverid, route, key, false);
	keep_avg = columns[0] != '\0' && make_key(&avg, serverid, route, columns, true);
	if (!keep_exact && !keep_avg)
		return;
	now = GetCurrentTimestamp();

	LWLockAcquire(est_shared->lock, LW_EXCLUSIVE);
	if (keep_exact)
	{
		EstEntry   *e = enter_locked(&exact, columns);

		if (e != NULL)
			observe(e, rows, now);
	}
	if (keep_avg)
	{
		EstEntry   *e = enter_locked(&avg, columns);

		if (e != NULL)
			observe(e, rows, now);
	}
	LWLockRelease(est_shared->lock);
}

static void
require_shmem(const char *what)
{
	if (est_shared == NULL)
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
	EstEntry   *copy;
	EstEntry   *e;
	long		room;
	long		n = 0;

	require_shmem("partner_svc.estimates");
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(est_shared->lock, LW_SHARED);
	room = hash_get_num_entries(est_table);
	LWLockRelease(est_shared->lock);
	room = Min(room + 16, est_max_entries);
	copy = palloc(sizeof(EstEntry) * room);

	LWLockAcquire(est_shared->lock, LW_SHARED);
	hash_seq_init(&seq, est_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (n >= room)
		{
			hash_seq_term(&seq);
			break;
		}
		copy[n++] = *e;
	}
	LWLockRelease(est_shared->lock);

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
 * server of every database.  Plans made afterwards use the defaults again
 * until scans teach them anew.
 */
Datum
psvc_est_reset(PG_FUNCTION_ARGS)
{
	Oid			serverid = InvalidOid;
	HASH_SEQ_STATUS seq;
	EstEntry   *e;

	require_shmem("partner_svc.estimates_reset()");
	if (!PG_ARGISNULL(0))
		serverid = GetForeignServerByName(NameStr(*PG_GETARG_NAME(0)), false)->serverid;

	LWLockAcquire(est_shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, est_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (!OidIsValid(serverid) ||
			(e->key.dbid == MyDatabaseId && e->key.serverid == serverid))
			hash_search(est_table, &e->key, HASH_REMOVE, NULL);
	}
	LWLockRelease(est_shared->lock);

	PG_RETURN_VOID();
}
