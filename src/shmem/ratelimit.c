/*-------------------------------------------------------------------------
 *
 * ratelimit.c
 *		  The client-side rate limiter that all sessions of the server share,
 *		  in shared memory, and the per-route request statistics.
 *
 * What it must do.  The partner service counts requests per partner, per
 * route and per resource id ({id} routes) in fixed windows whose start we
 * do not know, and answers 429 past the limit.  Every session of this
 * server uses the same partner key, so the budget must be shared; so do
 * all servers with that key, in any database or cluster, which is why a
 * key names the partner account (a digest of the base URL and the API
 * key, server_account.c), never a server or a database.  The
 * limits come from ratelimit_rules.c; a request without one passes freely.
 *
 * The window logic.  Each key (partner account, "METHOD route", resource
 * id) keeps the counts of the last BUCKETS + 1 buckets of width
 * W' / BUCKETS, W' being the window (one minute times
 * partner_svc.time_scale) plus a margin of
 * 0.1% (at least 1 ms) for clock rates and the service's rounding.  An
 * attempt may start when blocked_until has passed and
 *
 *		(sum of the ring) + in_flight < limit
 *
 * and is then in flight; when it ends (response, failure or abandonment)
 * it leaves in_flight and is counted in the bucket of that moment, unless
 * it was answered 429: the service did not serve it, and does not count
 * it (the sandbox does not; the document says a 429 lasts "until the limit
 * resets", not that it extends it).  Claim:
 * no interval of length W at the service serves more than "limit"
 * requests, whatever the alignment of its windows and whatever the
 * latencies.  Proof: take limit + 1 arrivals within such an interval and
 * the one, Z, whose attempt started last, at s.  Every other one, X,
 * started before s, so at s it was in flight or had ended at a time
 * f >= its arrival > arrival(Z) - W >= s - W' and was counted in a bucket
 * of the ring at s (the ring covers at least the last W').  So limit
 * requests were counted at s and Z could not start.  The service's fixed
 * windows are such intervals, so none of them sees more than the limit:
 * zero 429s from our own traffic.  In steady state a saturated key lets
 * through limit per W' * (BUCKETS + 1) / BUCKETS plus one latency: about
 * 98% of the quota with 60 buckets (docs/ratelimit.md has measurements).
 *
 * A request may be given a share of the limit (the worker's status
 * polling, PsvcRlLease.share): it starts only while the ring plus in_flight
 * is below that share of the limit, rounded down, and it never waits
 * (ratelimit_request.c); everyone else sees the whole limit.  Its units
 * are counted like any other, so the claim above still holds.
 *
 * A 429 that still comes (another client with the same key, a contract
 * below our table) blocks the key until its Retry-After, or for the
 * backoff http.c chose, so every session backs off, not just the one that
 * got it; http.c retries the request.
 *
 * Waiting (ratelimit_request.c).  An attempt without budget waits on its
 * latch with a timeout
 * until the time its budget frees (computed from the buckets: nothing but
 * time frees budget, so no one needs to wake a waiter), with the wait
 * event PartnerSvcRateLimit (from PostgreSQL 17; "Extension" before, which
 * has no named wait events for extensions), and the query text in pg_stat_activity is prefixed with
 * "partner_svc: waiting for rate limit of ..." while it waits, then
 * restored.  CHECK_FOR_INTERRUPTS after every wakeup, so statement_timeout
 * and cancel end the wait at once.  When the budget would free later than
 * partner_svc.rate_limit_max_wait allows, the attempt fails at once with
 * 53300, naming the route and when it frees.
 *
 * Shared memory, as pg_stat_statements does it: two segments (the
 * limiter's and the fleet quota's) of the one request and startup of
 * segments.h, so only when preloaded; two fixed-size hash tables sized by
 * the PGC_POSTMASTER setting partner_svc.max_keys (each has that many
 * entries, the stats table one more for the overflow row) and two
 * LWLocks of the named tranche "partner_svc_rate_limit".  Without
 * preloading there is no limiter: a request on a limited route fails with
 * a clear error unless partner_svc.rate_limit is off, and nothing is
 * counted; routes without a limit work as usual.
 *
 * Locking rules.
 *	- psvc_rl_shared->lock protects the key table's structure: shared to
 *	  look up a key, exclusive to insert or evict one.
 *	- Each entry's mutex (a spinlock) protects its counters; it is taken
 *	  with the table lock held in either mode, or, by the backend that
 *	  holds a unit of the entry (in_flight > 0 because of it), without it:
 *	  an entry with in_flight > 0 is never evicted, so its address is
 *	  stable.  Nothing that can raise runs under a spinlock.
 *	- stats_lock and each stats entry's mutex work the same way for the
 *	  stats table; stats entries are only removed by the reset function,
 *	  under stats_lock exclusive, so nobody keeps a pointer to one.
 *	- Never both table locks at once.
 *
 * The table is full.  An entry is idle when nothing of it is left in the
 * window, nothing is in flight and no 429 blocks it; idle entries carry no
 * information and are evicted whenever room is needed.  Keys with a
 * resource id may fill all but max(4, max/8) entries; when they have, a new
 * id of a route shares one key with resource "*" with every other id that
 * found no room (conservative: the sum of their requests stays within the
 * limit of each), and keeps sharing it until it falls idle.  An id with a
 * key of its own never uses the shared one, and a new id gets a key of its
 * own only while the shared key is idle, so no id's recent requests are
 * ever split over two keys.  Only when even the shared key finds no room
 * does the request fail (53400).  The stats table counts routes it has no
 * room for in one row with route "*".
 *
 * Fair shares.  Anyone with USAGE on the wrapper can make accounts without
 * end (a base URL and a key of their own), so the table cannot reserve
 * room per account; it is shared among owners instead.  Each entry
 * records its owner, the database and the role whose user mapping gave
 * the key of the request that used it last.  When a plain key (a plain
 * route, or a route's shared "*" key) finds no room even after idle
 * entries are evicted, an entry of the owner that holds the most entries
 * is evicted, if that owner holds more than the requester: its keys with
 * a resource id first, then its least recently used.  A requester that
 * holds at least as many as everyone else gets 53400.  So each owner can
 * always obtain max/owners entries whatever the others do, and a role
 * that fills the table evicts only its own entries once it is the
 * heaviest.  An evicted entry loses its counts and block, so its account
 * may then send more than its limit and earn 429s from the service: that
 * hurts only the heaviest owner.  Entries with units in flight are never evicted
 * (their holders keep pointers to them), nor, with a quota coordinator,
 * entries with leased units or counts not yet reported.
 *
 * Leases.  A request's PsvcRlLease lives in the memory context of its
 * transfer; one that holds a unit is also linked into this backend's list,
 * so that a backend exiting mid-request (FATAL, terminate) hands its units
 * back from a before_shmem_exit callback.  Abandoned transfers hand theirs
 * back from the transfer's reset callback (psvc_rl_release).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/ratelimit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <time.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "guc.h"
#include "ratelimit.h"
#include "ratelimit_int.h"
#include "segments.h"

#define PSVC_RL_TRANCHE			"partner_svc_rate_limit"


/* shared state; NULL unless preloaded */
PsvcRlShared *psvc_rl_shared = NULL;
HTAB	   *psvc_rl_key_table = NULL;
HTAB	   *psvc_rl_stats_table = NULL;


/* ---------------------------------------------------------------------
 * Set-up
 * ---------------------------------------------------------------------
 */

static Size
rl_shmem_size(void)
{
	Size		size = MAXALIGN(sizeof(PsvcRlShared));

	size = add_size(size, hash_estimate_size(psvc_guc_max_keys, sizeof(PsvcRlEntry)));
	size = add_size(size, hash_estimate_size(psvc_guc_max_keys + 1, sizeof(PsvcStatsEntry)));
	return size;
}

/* The key of the stats row that counts routes without a row of their own. */
void
psvc_rl_stats_overflow_key(PsvcStatsKey *key)
{
	memset(key, 0, sizeof(*key));
	strlcpy(key->route, PSVC_RL_OVERFLOW, sizeof(key->route));
}

/*
 * Makes (postmaster, or each backend under EXEC_BACKEND) or attaches to
 * the shared state, under AddinShmemInitLock.
 */
static void
rl_shmem_startup(void)
{
	bool		found;
	HASHCTL		info;

	psvc_rl_shared = ShmemInitStruct("partner_svc rate limiter",
									 sizeof(PsvcRlShared), &found);
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche(PSVC_RL_TRANCHE);

		psvc_rl_shared->lock = &locks[0].lock;
		psvc_rl_shared->stats_lock = &locks[1].lock;
		psvc_rl_shared->resource_keys = 0;
		psvc_rl_shared->stats_since = GetCurrentTimestamp();
	}

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(PsvcRlKey);
	info.entrysize = sizeof(PsvcRlEntry);
	psvc_rl_key_table = ShmemInitHash("partner_svc rate-limit keys",
								 psvc_guc_max_keys, psvc_guc_max_keys,
								 &info, HASH_ELEM | HASH_BLOBS);

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(PsvcStatsKey);
	info.entrysize = sizeof(PsvcStatsEntry);
	psvc_rl_stats_table = ShmemInitHash("partner_svc request stats",
								  psvc_guc_max_keys + 1, psvc_guc_max_keys + 1,
								  &info, HASH_ELEM | HASH_BLOBS);
	if (!found)
	{
		PsvcStatsKey key;
		PsvcStatsEntry *e;

		psvc_rl_stats_overflow_key(&key);
		e = hash_search(psvc_rl_stats_table, &key, HASH_ENTER, NULL);
		SpinLockInit(&e->mutex);
		memset(&e->c, 0, sizeof(e->c));
	}
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_rl_segment = {
	.size = rl_shmem_size,
	.tranche = PSVC_RL_TRANCHE,
	.nlocks = 2,
	.startup = rl_shmem_startup,
};

/* ---------------------------------------------------------------------
 * Time and buckets
 * ---------------------------------------------------------------------
 */

void
psvc_rl_advance(PsvcRlEntry *e, int64 now)
{
	int64		b = now / e->width_us;

	if (b <= e->head)
		return;
	if (b - e->head >= PSVC_RL_RING)
	{
		memset(e->counts, 0, sizeof(e->counts));
		e->total = 0;
	}
	else
	{
		for (int64 x = e->head + 1; x <= b; x++)
		{
			e->total -= e->counts[x % PSVC_RL_RING];
			e->counts[x % PSVC_RL_RING] = 0;
		}
	}
	e->head = b;
}

/*
 * Bucket b leaves the ring when bucket b + RING begins.  The requests in
 * flight are counted in the newest bucket.
 */
int64
psvc_rl_frees_at(const PsvcRlEntry *e, int64 now)
{
	int64		need = (int64) e->total + e->in_flight - e->limit + 1;
	int64		cum = 0;
	int64		at = 0;

	if (need > 0)
	{
		at = (e->head + PSVC_RL_RING) * e->width_us;
		for (int64 b = e->head - PSVC_RL_BUCKETS; b <= e->head; b++)
		{
			cum += e->counts[b % PSVC_RL_RING];
			if (b == e->head)
				cum += e->in_flight;
			if (cum >= need)
			{
				at = (b + PSVC_RL_RING) * e->width_us;
				break;
			}
		}
	}
	if (e->blocked_until > now)
		at = Max(at, e->blocked_until);
	return at;
}

int64
psvc_rl_resets_at(const PsvcRlEntry *e)
{
	int64		last = -1;

	if (e->in_flight > 0)
		last = e->head;
	else
	{
		for (int64 b = e->head; b >= e->head - PSVC_RL_BUCKETS; b--)
		{
			if (e->counts[b % PSVC_RL_RING] > 0)
			{
				last = b;
				break;
			}
		}
	}
	return last < 0 ? 0 : (last + PSVC_RL_RING) * e->width_us;
}

/*
 * Brings e to now under the window in force.  When the window changed,
 * each old bucket's count moves to the new bucket of the latest moment its
 * requests may have ended (the old bucket's end, or now), and is dropped
 * when that moment is outside the new window: conservative, so the claim
 * of the file header holds across the change.  Mutex held.
 */
static void
sync_entry(PsvcRlEntry *e, int64 now)
{
	int64		width = psvc_rl_bucket_width();
	int32		old[PSVC_RL_RING];
	int64		old_head;
	int64		old_width;

	psvc_rl_advance(e, now);
	if (e->width_us == width)
		return;

	memcpy(old, e->counts, sizeof(old));
	old_head = e->head;
	old_width = e->width_us;
	memset(e->counts, 0, sizeof(e->counts));
	e->total = 0;
	e->width_us = width;
	e->head = now / width;
	for (int64 b = old_head - PSVC_RL_BUCKETS; b <= old_head; b++)
	{
		int32		c = old[b % PSVC_RL_RING];
		int64		latest = Min(now, (b + 1) * old_width - 1);
		int64		nb = latest / width;

		if (c > 0 && nb > e->head - PSVC_RL_RING)
		{
			e->counts[nb % PSVC_RL_RING] += c;
			e->total += c;
		}
	}
}

/* e owes the fleet quota nothing: no leased units, nothing to report. */
static bool
entry_fleet_quiet(const PsvcRlEntry *e)
{
	return psvc_guc_quota_coordinator[0] == '\0' ||
		(e->leased == 0 && !e->lease_wanted && e->report_moved == 0 &&
		 e->report_added == 0 && e->report_returned == 0 &&
		 e->report_block == 0);
}

/* Nothing of e is left in the window; e carries no information. */
static bool
entry_idle(PsvcRlEntry *e, int64 now)
{
	sync_entry(e, now);
	return e->total == 0 && e->in_flight == 0 && e->blocked_until <= now &&
		entry_fleet_quiet(e);
}


/* ---------------------------------------------------------------------
 * The key table
 * ---------------------------------------------------------------------
 */

static int
resource_reserve(void)
{
	return Max(4, psvc_guc_max_keys / 8);
}

/* Room for one more key (with a resource id or not)?  Lock held. */
static bool
have_room(bool resource)
{
	long		n = hash_get_num_entries(psvc_rl_key_table);

	if (n >= psvc_guc_max_keys)
		return false;
	return !resource ||
		psvc_rl_shared->resource_keys < psvc_guc_max_keys - resource_reserve();
}

/* e has a resource id of its own (not the shared "*" key). */
static bool
entry_has_resource(const PsvcRlEntry *e)
{
	return e->key.resource[0] != '\0' &&
		strcmp(e->key.resource, PSVC_RL_OVERFLOW) != 0;
}

/* Removes e from the table.  Exclusive lock held. */
static void
remove_entry(PsvcRlEntry *e)
{
	if (entry_has_resource(e))
		psvc_rl_shared->resource_keys--;
	hash_search(psvc_rl_key_table, &e->key, HASH_REMOVE, NULL);
}

/* Evicts every idle entry.  Exclusive lock held. */
static void
evict_idle(int64 now)
{
	HASH_SEQ_STATUS seq;
	PsvcRlEntry *e;

	hash_seq_init(&seq, psvc_rl_key_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		bool		idle;

		SpinLockAcquire(&e->mutex);
		idle = entry_idle(e, now);
		SpinLockRelease(&e->mutex);
		if (idle)
			remove_entry(e);
	}
}

/*
 * Why counts are zeroed rather than every matching key removed: a unit in
 * flight holds a pointer to its entry (psvc_rl_put), so only entries that
 * carry nothing afterwards may go.  The fleet quota's fields are left as
 * they are: what was leased from the coordinator is owed to it.
 */
long
psvc_rl_forget(const char *account, Oid serverid)
{
	int64		now = psvc_rl_now();
	HASH_SEQ_STATUS seq;
	PsvcRlEntry *e;
	long		n = 0;

	LWLockAcquire(psvc_rl_shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, psvc_rl_key_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		bool		idle;

		if (account != NULL && strcmp(e->key.account, account) != 0 &&
			!(e->dbid == MyDatabaseId && e->serverid == serverid))
			continue;
		SpinLockAcquire(&e->mutex);
		psvc_rl_advance(e, now);
		if (e->total > 0 || e->blocked_until > now)
			n++;
		memset(e->counts, 0, sizeof(e->counts));
		e->total = 0;
		e->blocked_until = 0;
		idle = entry_idle(e, now);
		SpinLockRelease(&e->mutex);
		if (idle)
			remove_entry(e);
	}
	LWLockRelease(psvc_rl_shared->lock);
	return n;
}

/* The number of entries one owner holds (evict_fair). */
typedef struct OwnerCount
{
	PsvcRlOwner owner;			/* hash key */
	int			n;
} OwnerCount;

/*
 * Makes room for a plain key of requester in a full table by evicting an
 * entry of the owner that holds the most, if it holds more than the
 * requester (file header, "Fair shares"): its entries with a resource id
 * first, then its least recently used.  Returns false when no entry may
 * be evicted.  Exclusive lock held; the count of entries per owner is a
 * hash table in a child of CurrentMemoryContext, destroyed before return.
 */
static bool
evict_fair(const PsvcRlOwner *requester)
{
	HASHCTL		ctl;
	HTAB	   *owners;
	HASH_SEQ_STATUS seq;
	PsvcRlEntry *e;
	OwnerCount *oc;
	PsvcRlEntry *victim = NULL;
	int			victim_n = 0;
	bool		victim_res = false;
	int			mine;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(PsvcRlOwner);
	ctl.entrysize = sizeof(OwnerCount);
	ctl.hcxt = CurrentMemoryContext;
	owners = hash_create("partner_svc limiter owners", 64, &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	hash_seq_init(&seq, psvc_rl_key_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		bool		found;

		oc = hash_search(owners, &e->owner, HASH_ENTER, &found);
		if (!found)
			oc->n = 0;
		oc->n++;
	}
	oc = hash_search(owners, requester, HASH_FIND, NULL);
	mine = oc != NULL ? oc->n : 0;

	hash_seq_init(&seq, psvc_rl_key_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		int			n = ((OwnerCount *) hash_search(owners, &e->owner,
													HASH_FIND, NULL))->n;
		bool		res = entry_has_resource(e);
		bool		free_to_go;

		if (n <= mine || n < victim_n)
			continue;
		if (victim != NULL && n == victim_n &&
			(victim_res > res ||
			 (victim_res == res && victim->last_used <= e->last_used)))
			continue;
		/* a unit in flight keeps its holder's pointer: never evicted */
		SpinLockAcquire(&e->mutex);
		free_to_go = e->in_flight == 0 && entry_fleet_quiet(e);
		SpinLockRelease(&e->mutex);
		if (!free_to_go)
			continue;
		victim = e;
		victim_n = n;
		victim_res = res;
	}
	hash_destroy(owners);

	if (victim == NULL)
		return false;
	remove_entry(victim);
	return true;
}

/*
 * Inserts key for owner; key is not in the table and has room.  Exclusive
 * lock.
 */
static PsvcRlEntry *
insert_key(const PsvcRlKey *key, const PsvcRlOwner *owner, int64 now)
{
	PsvcRlEntry *e = hash_search(psvc_rl_key_table, key, HASH_ENTER, NULL);

	SpinLockInit(&e->mutex);
	e->limit = 0;
	e->in_flight = 0;
	e->total = 0;
	memset(e->counts, 0, sizeof(e->counts));
	e->width_us = psvc_rl_bucket_width();
	e->head = now / e->width_us;
	e->blocked_until = 0;
	e->dbid = InvalidOid;
	e->serverid = InvalidOid;
	e->owner = *owner;
	e->last_used = now;
	memset(e->servername, 0, sizeof(e->servername));
	e->route_limit = 0;
	e->leased = 0;
	e->lease_until = 0;
	e->lease_retry_at = 0;
	e->lease_wanted = false;
	e->report_moved = 0;
	e->report_added = 0;
	e->report_returned = 0;
	e->report_block = 0;
	if (entry_has_resource(e))
		psvc_rl_shared->resource_keys++;
	return e;
}

/*
 * The entry that budgets the lease's key: its own, or the shared overflow
 * entry of its route while that is in use, or a new one.  Returns with
 * psvc_rl_shared->lock held (shared or exclusive).  Raises 53400 when the
 * table has no room even after evicting idle entries and, for a plain key,
 * an entry of a heavier owner (file header).
 */
static PsvcRlEntry *
entry_for(PsvcRlLease *lease, int64 now)
{
	PsvcRlKey	ov;
	PsvcRlEntry *e;
	bool		exclusive = false;

	memset(&ov, 0, sizeof(ov));
	if (lease->has_resource)
	{
		ov = lease->key;
		memset(ov.resource, 0, sizeof(ov.resource));
		strlcpy(ov.resource, PSVC_RL_OVERFLOW, sizeof(ov.resource));
	}

	LWLockAcquire(psvc_rl_shared->lock, LW_SHARED);
	for (;;)
	{
		bool		idle;

		e = hash_search(psvc_rl_key_table, &lease->key, HASH_FIND, NULL);
		if (e != NULL)
			return e;
		if (lease->has_resource)
		{
			/* ids that found no room share the overflow key until it is idle */
			e = hash_search(psvc_rl_key_table, &ov, HASH_FIND, NULL);
			if (e != NULL)
			{
				SpinLockAcquire(&e->mutex);
				idle = entry_idle(e, now);
				SpinLockRelease(&e->mutex);
				if (!idle)
					return e;
			}
		}
		if (exclusive)
			break;
		LWLockRelease(psvc_rl_shared->lock);
		LWLockAcquire(psvc_rl_shared->lock, LW_EXCLUSIVE);
		exclusive = true;
	}

	/* exclusive, and the key has no entry */
	if (!have_room(lease->has_resource))
		evict_idle(now);
	if (have_room(lease->has_resource))
		return insert_key(&lease->key, &lease->owner, now);
	if (lease->has_resource)
	{
		e = hash_search(psvc_rl_key_table, &ov, HASH_FIND, NULL);
		if (e != NULL)
			return e;
	}
	/* a plain key: the route's own, or the one its ids share */
	if (have_room(false) || evict_fair(&lease->owner))
		return insert_key(lease->has_resource ? &ov : &lease->key,
						  &lease->owner, now);
	LWLockRelease(psvc_rl_shared->lock);
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("rate limiter of partner_svc has no room for %s on server \"%s\"",
					lease->route, lease->servername),
			 errdetail("All %d keys of partner_svc.max_keys are in use by requests of the last window.",
					   psvc_guc_max_keys),
			 errhint("Raise partner_svc.max_keys (it takes effect at server start).")));
	return NULL;				/* keep compiler quiet */
}

/*
 * One try: takes a unit of the lease's key if its budget allows and
 * returns the entry it is held on; else returns NULL and sets *frees_at
 * and *blocked.  Raises only when the table has no room.
 *
 * With a coordinator (quota.c) the unit must also be allowed by the fleet:
 * in leased mode one of the key's leased units is spent (when none is
 * left the key asks the worker for a lease and lease->quota_wait is set;
 * the worker wakes the waiter), in fallback mode the local limit is the
 * node's share of the route's limit.
 */
PsvcRlEntry *
psvc_rl_take(PsvcRlLease *lease, int64 now, int64 *frees_at, bool *blocked)
{
	int64		fallback_from = 0;
	PsvcQuotaMode mode = psvc_quota_mode(now, &fallback_from);
	int			limit = lease->limit;
	int			k = 0;
	bool		wake = false;
	PsvcRlEntry *e;
	bool		ok;

	if (mode == PSVC_QUOTA_FALLBACK)
		limit = (int) floor(lease->limit * psvc_guc_quota_fallback_share);
	else if (mode != PSVC_QUOTA_LOCAL)
		k = psvc_quota_lease_size(lease->limit);

	lease->quota_wait = false;
	lease->from_lease = false;
	e = entry_for(lease, now);
	SpinLockAcquire(&e->mutex);
	sync_entry(e, now);
	e->limit = limit;
	e->route_limit = lease->limit;
	/* who asked last, for the views: the budget is the account's */
	e->dbid = lease->skey.dbid;
	e->serverid = lease->skey.serverid;
	e->owner = lease->owner;
	e->last_used = now;
	strlcpy(e->servername, lease->servername, sizeof(e->servername));
	/*
	 * A call with a share (the worker's polling) starts only while the
	 * window's use, everyone's, is below that share of the limit; the
	 * others see the whole limit, as before.
	 */
	ok = (e->blocked_until <= now && e->total + e->in_flight < e->limit &&
		  (lease->share >= 100 ||
		   e->total + e->in_flight < (int) ((int64) limit * lease->share / 100)));
	if (!ok)
	{
		*frees_at = psvc_rl_frees_at(e, now);
		*blocked = e->blocked_until > now;
	}
	else if (mode == PSVC_QUOTA_FALLBACK && now < fallback_from)
	{
		ok = false;
		*frees_at = fallback_from;
		*blocked = false;
	}
	else if (k > 0)
	{
		if (e->leased > 0 && now >= e->lease_until)
		{
			e->report_returned += e->leased;
			e->leased = 0;
		}
		if (e->leased > 0)
		{
			e->leased--;
			lease->from_lease = true;
			/*
			 * Large leases are renewed before they run out: when half is
			 * spent or a quarter of their validity is left.
			 */
			if (k > 1 && !e->lease_wanted &&
				(e->leased < k / 2 ||
				 now > e->lease_until - psvc_quota_lease_valid_us() / 4))
				wake = e->lease_wanted = true;
		}
		else
		{
			ok = false;
			lease->quota_wait = true;
			if (!e->lease_wanted)
				wake = e->lease_wanted = true;
			*frees_at = Max(e->lease_retry_at, now + 200 * 1000);
			*blocked = false;
		}
	}
	if (ok)
		e->in_flight++;
	SpinLockRelease(&e->mutex);
	LWLockRelease(psvc_rl_shared->lock);
	if (wake)
		psvc_quota_wake_worker();
	return ok ? e : NULL;
}

/*
 * Ends a unit held on e: counted in the bucket of now.  A 429 is not
 * counted (the service did not serve the request) but blocks the key for
 * hold_ms (a bucket's width when unknown).  Needs no table lock (the unit
 * keeps e in place); never raises.
 */
void
psvc_rl_put(PsvcRlEntry *e, bool got_429, long hold_ms, bool from_lease)
{
	int64		now = psvc_rl_now();
	bool		fleet = psvc_guc_quota_coordinator[0] != '\0';

	SpinLockAcquire(&e->mutex);
	psvc_rl_advance(e, now);
	e->in_flight--;
	if (got_429)
	{
		int64		until = now + (hold_ms >= 0 ? (int64) hold_ms * 1000 : e->width_us);

		e->blocked_until = Max(e->blocked_until, until);
		if (fleet)
			e->report_block = Max(e->report_block, until);
		if (from_lease)
			e->report_returned++;
	}
	else
	{
		e->counts[e->head % PSVC_RL_RING]++;
		e->total++;
		if (from_lease)
			e->report_moved++;
		else if (fleet)
			e->report_added++;
	}
	SpinLockRelease(&e->mutex);
}
