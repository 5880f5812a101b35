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
 * Using them (psvc_est_rows, called by fdw_plan.c with the values the
 * plan knows): the entry of the exact key when the plan knows the values,
 * else the average of the route's keys with these columns, else the
 * documented defaults.  With partner_svc.learn_estimates off a session
 * neither records nor uses what was learned.
 *
 * Shared memory, as pg_stat_statements does it: a segment of the one
 * request and startup of segments.h (only when preloaded; without
 * preloading nothing is learned and the defaults apply): one fixed-size hash table of
 * partner_svc.max_keys entries and one LWLock of the tranche
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
 * Kept across a clean restart: the postmaster writes the table to a file
 * when it shuts down cleanly and reads it back when it builds the table
 * again, as pg_stat_statements does (estimates_file.c); a crash starts
 * from an empty table.
 *
 * Keys of other databases are kept apart by the database's OID (server
 * OIDs are per database).  The view and the reset function are in
 * estimates_views.c, the layout of the table in estimates_int.h.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/estimates.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "estimates.h"
#include "estimates_int.h"
#include "guc.h"
#include "segments.h"

#define PSVC_EST_TRANCHE	"partner_svc_estimates"

/* Scans the running mean gives full weight to (see the header comment). */
#define PSVC_EST_WINDOW		4

/* Values of a constant = ANY(array) looked up one by one, at most. */
#define PSVC_EST_MAX_VALUES	100

/* shared state; NULL unless preloaded */
PsvcEstShared *psvc_est_shared = NULL;
HTAB	   *psvc_est_table = NULL;
/* whether this process's startup made the segment (the file is loaded) */
static bool est_segment_new = false;


static Size
est_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(PsvcEstShared)),
					hash_estimate_size(psvc_guc_max_keys, sizeof(PsvcEstEntry)));
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

	psvc_est_shared = ShmemInitStruct("partner_svc estimates", sizeof(PsvcEstShared), &found);
	if (!found)
		psvc_est_shared->lock = &(GetNamedLWLockTranche(PSVC_EST_TRANCHE))->lock;

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(PsvcEstKey);
	info.entrysize = sizeof(PsvcEstEntry);
	psvc_est_table = ShmemInitHash("partner_svc learned estimates",
							  psvc_guc_max_keys, psvc_guc_max_keys,
							  &info, HASH_ELEM | HASH_BLOBS);
	est_segment_new = !found;
}

/*
 * After the startup, without the lock: the process that built the table
 * (the postmaster) fills it from the file a clean shutdown left, and
 * writes it back at its own clean exit (estimates_file.c); no other
 * process exists yet, so no lock.
 */
static void
est_shmem_after_startup(void)
{
	if (!IsUnderPostmaster)
		on_shmem_exit(psvc_est_file_save, PointerGetDatum(psvc_est_table));
	if (est_segment_new)
		psvc_est_file_load(psvc_est_table, psvc_guc_max_keys);
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_est_segment = {
	.size = est_shmem_size,
	.tranche = PSVC_EST_TRANCHE,
	.nlocks = 1,
	.startup = est_shmem_startup,
	.after_startup = est_shmem_after_startup,
};

bool
psvc_est_active(void)
{
	return psvc_guc_learn_estimates && psvc_est_shared != NULL;
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
make_key(PsvcEstKey *k, Oid serverid, const char *route, const char *key, bool average)
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
	PsvcEstKey	k;
	PsvcEstEntry *e;
	bool		found = false;

	if (!psvc_est_active() || !make_key(&k, serverid, route, key, average))
		return false;

	LWLockAcquire(psvc_est_shared->lock, LW_SHARED);
	e = hash_search(psvc_est_table, &k, HASH_FIND, NULL);
	if (e != NULL && e->scans > 0)
	{
		*rows = e->rows;
		*scans = e->scans;
		found = true;
	}
	LWLockRelease(psvc_est_shared->lock);
	return found;
}

/*
 * The entry of k, made (evicting the least recently scanned entry when the
 * table is full) if it does not exist; NULL if there is no room.  Caller
 * holds the lock exclusively.
 */
static PsvcEstEntry *
enter_locked(const PsvcEstKey *k, const char *columns)
{
	PsvcEstEntry *e;
	bool		found;

	e = hash_search(psvc_est_table, k, HASH_FIND, NULL);
	if (e != NULL)
		return e;

	if (hash_get_num_entries(psvc_est_table) >= psvc_guc_max_keys)
	{
		HASH_SEQ_STATUS seq;
		PsvcEstEntry *victim = NULL;
		PsvcEstEntry *x;

		hash_seq_init(&seq, psvc_est_table);
		while ((x = hash_seq_search(&seq)) != NULL)
			if (victim == NULL || x->last_scan < victim->last_scan)
				victim = x;
		if (victim != NULL)
			hash_search(psvc_est_table, &victim->key, HASH_REMOVE, NULL);
	}

	e = hash_search(psvc_est_table, k, HASH_ENTER_NULL, &found);
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
observe(PsvcEstEntry *e, int64 rows, TimestampTz now)
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
	PsvcEstKey	exact;
	PsvcEstKey	avg;
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

	LWLockAcquire(psvc_est_shared->lock, LW_EXCLUSIVE);
	if (keep_exact)
	{
		PsvcEstEntry *e = enter_locked(&exact, columns);

		if (e != NULL)
			observe(e, rows, now);
	}
	if (keep_avg)
	{
		PsvcEstEntry *e = enter_locked(&avg, columns);

		if (e != NULL)
			observe(e, rows, now);
	}
	LWLockRelease(psvc_est_shared->lock);
}

static const char *
plural_scans(int64 n)
{
	return n == 1 ? "scan" : "scans";
}

/*
 * The policy of docs/estimates.md: the entry of the exact key when every
 * value is a constant (for a constant = ANY(array), the sum over its
 * values, a value not seen yet counted as the average); else the average
 * of the route's scans with the same columns (times the values of a
 * constant array); else dflt.  An array known only at run time has an
 * unknown size: dflt.
 */
double
psvc_est_rows(Oid serverid, const char *route, int n, const PsvcEstColumn *cols,
			  double dflt, char **desc, bool *learned)
{
	const char **names = palloc(sizeof(char *) * Max(n, 1));
	const char **values = palloc(sizeof(char *) * Max(n, 1));
	bool		all_known = true;
	int			array = -1;
	double		avg = 0;
	int64		avg_scans = 0;
	bool		have_avg;
	double		rows;
	int64		scans;

	*learned = false;
	if (!psvc_est_active())
	{
		*desc = psprintf("%.0f rows (default%s)", dflt,
						 psvc_guc_learn_estimates ? "" : ", learning off");
		return dflt;
	}
	for (int i = 0; i < n; i++)
	{
		names[i] = cols[i].name;
		values[i] = cols[i].value;
		if (cols[i].is_array)
		{
			if (cols[i].elems == NULL || array >= 0)
			{
				*desc = psprintf("%.0f rows (default)", dflt);
				return dflt;
			}
			array = i;
		}
		else if (values[i] == NULL)
			all_known = false;
	}

	have_avg = n > 0 &&
		psvc_est_lookup(serverid, route, psvc_est_key(n, names, NULL), true,
						&avg, &avg_scans);

	if (all_known && array < 0 &&
		psvc_est_lookup(serverid, route, psvc_est_key(n, names, values), false,
						&rows, &scans))
	{
		*learned = true;
		*desc = psprintf("%.0f rows (learned from " INT64_FORMAT " %s)",
						 rows, scans, plural_scans(scans));
		return rows;
	}
	if (all_known && array >= 0 && cols[array].nelems <= PSVC_EST_MAX_VALUES)
	{
		double		sum = 0;
		int			seen = 0;

		scans = 0;
		for (int e = 0; e < cols[array].nelems; e++)
		{
			double		r;
			int64		sc;

			values[array] = cols[array].elems[e];
			if (psvc_est_lookup(serverid, route, psvc_est_key(n, names, values), false,
								&r, &sc))
			{
				sum += r;
				seen++;
				scans += sc;
			}
		}
		if (seen > 0)
		{
			rows = sum + (cols[array].nelems - seen) * (have_avg ? avg : sum / seen);
			*learned = true;
			*desc = psprintf("%.0f rows (learned: %d of %d values seen, " INT64_FORMAT " %s)",
							 rows, seen, cols[array].nelems, scans, plural_scans(scans));
			return rows;
		}
	}
	if (have_avg)
	{
		*learned = true;
		if (array >= 0)
		{
			rows = avg * cols[array].nelems;
			*desc = psprintf("%.0f rows (learned: average of " INT64_FORMAT " %s, %d values)",
							 rows, avg_scans, plural_scans(avg_scans), cols[array].nelems);
			return rows;
		}
		*desc = psprintf("%.0f rows (learned: average of " INT64_FORMAT " %s)",
						 avg, avg_scans, plural_scans(avg_scans));
		return avg;
	}
	*desc = psprintf("%.0f rows (default)", dflt);
	return dflt;
}
