/*-------------------------------------------------------------------------
 *
 * ratelimit_request.c
 *		  What the HTTP client calls for every request: the rate limiter's
 *		  budget, the wait for it, and the request statistics.
 *
 * The design (window logic, locking, what happens without preloading or
 * when the key table is full) is in the header of ratelimit.c.  This file
 * holds the per-request side: a lease names the request's rule and keys,
 * takes one unit of budget before each attempt, waiting for it with the
 * query text in pg_stat_activity showing the wait, hands it back when the
 * attempt ends, and adds the attempt to partner_svc.stats.
 *
 * A lease holding a unit is linked into held_leases, so that a backend
 * that exits in the middle of a request (FATAL) hands its units back from
 * a before_shmem_exit callback; a transfer abandoned by an ERROR hands its
 * unit back from its memory context's reset callback (psvc_rl_release).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/ratelimit_request.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "lib/ilist.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "guc.h"
#include "options.h"
#include "pg_compat.h"
#include "ratelimit_int.h"

StaticAssertDecl(PSVC_RL_ACCOUNT_LEN == PSVC_ACCOUNT_LEN + 1,
				 "the limiter's key holds an account digest");

static dlist_head held_leases = DLIST_STATIC_INIT(held_leases);
static bool exit_callback_set = false;

/*
 * Process exit: units still held (a FATAL in the middle of a request) are
 * handed back as requests that ended now.
 */
static void
rl_exit(int code, Datum arg)
{
	while (!dlist_is_empty(&held_leases))
	{
		PsvcRlLease *lease = dlist_container(PsvcRlLease, node,
											 dlist_head_node(&held_leases));

		psvc_rl_release(lease);
	}
}


/* Copies s into a fixed field: as is, or a prefix plus a hash of it. */
static void
key_text(char *dst, size_t size, const char *s)
{
	size_t		len = strlen(s);

	if (len < size)
		memcpy(dst, s, len);
	else
	{
		uint64		h = hash_bytes_extended((const unsigned char *) s, (int) len, 0);
		int			keep = (int) size - 1 - 17;

		keep = pg_mbcliplen(s, (int) len, keep);
		snprintf(dst, size, "%.*s~%016llx", keep, s, (unsigned long long) h);
	}
}

/* Takes a unit for the lease, linking it into held_leases. */
static bool
try_take(PsvcRlLease *lease, int64 now, int64 *frees_at, bool *blocked)
{
	PsvcRlEntry *e = psvc_rl_take(lease, now, frees_at, blocked);

	if (e == NULL)
		return false;
	lease->entry = e;
	lease->held = true;
	dlist_push_tail(&held_leases, &lease->node);
	return true;
}

/* Hands the lease's unit back.  Never raises. */
static void
put_unit(PsvcRlLease *lease, bool got_429, long hold_ms)
{
	psvc_rl_put(lease->entry, got_429, hold_ms, lease->from_lease);
	dlist_delete(&lease->node);
	lease->held = false;
	lease->entry = NULL;
}

/*
 * Looks up the request's rule and builds its keys.  The lease is
 * allocated in cxt (the transfer's context) and refers only to memory
 * there or to static data.
 */
PsvcRlLease *
psvc_rl_prepare(const PsvcCallKey *ckey, MemoryContext cxt)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(cxt);
	PsvcRlLease *lease = palloc0(sizeof(PsvcRlLease));
	PsvcRlRule	rule;
	char	   *route;

	psvc_rl_rule(ckey, &rule);
	route = rule.route;
	lease->limit = rule.limit;
	lease->row = rule.row;
	lease->overridden = rule.overridden;
	lease->tier = pstrdup(rule.tier);
	lease->servername = pstrdup(ckey->server->servername ? ckey->server->servername : "");
	lease->route = route;
	lease->share = ckey->share > 0 && ckey->share < 100 ? ckey->share : 100;

	/* the partner account's budget, whatever server or database asks */
	strlcpy(lease->key.account, ckey->access->account, sizeof(lease->key.account));
	key_text(lease->key.route, sizeof(lease->key.route), route);
	if (rule.limit > 0 && rule.resource != NULL)
	{
		key_text(lease->key.resource, sizeof(lease->key.resource), rule.resource);
		lease->has_resource = true;
	}

	lease->skey.dbid = MyDatabaseId;
	lease->skey.serverid = ckey->server->serverid;
	memcpy(lease->skey.route, lease->key.route, sizeof(lease->skey.route));

	/* the role whose user mapping gave the key, as server_account.c reads it */
	lease->owner.dbid = MyDatabaseId;
	lease->owner.roleid = OidIsValid(ckey->server->userid) ?
		ckey->server->userid : GetUserId();

	MemoryContextSwitchTo(oldcxt);
	return lease;
}

/* For the server started without preloading, on a limited route. */
static void
report_not_preloaded(PsvcRlLease *lease)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("partner_svc cannot rate-limit %s on server \"%s\"",
					lease->route, lease->servername),
			 errdetail("The route is limited to %d requests per window, and the limiter that all sessions share lives in shared memory, which partner_svc has only when it is in shared_preload_libraries.",
					   lease->limit),
			 errhint("Add partner_svc to shared_preload_libraries and restart the server, or set partner_svc.rate_limit to off to send requests without the limiter.")));
}

static void
report_exhausted(PsvcRlLease *lease, int64 frees_at, bool blocked, int64 now)
{
	const char *when = timestamptz_to_str(psvc_rl_timestamp(frees_at));
	double		in_s = (frees_at - now) / 1000000.0;

	if (blocked)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_CONNECTIONS),
				 errmsg("rate limit of %s on server \"%s\" is exhausted",
						lease->route, lease->servername),
				 errdetail("The service answered 429 Too Many Requests; requests of this route wait until %s (in %.1f s), longer than partner_svc.rate_limit_max_wait (%d ms) allows.",
						   when, in_s, psvc_guc_rate_limit_max_wait),
				 errhint("Try again later, or raise partner_svc.rate_limit_max_wait.")));
	ereport(ERROR,
			(errcode(ERRCODE_TOO_MANY_CONNECTIONS),
			 errmsg("rate limit of %s on server \"%s\" is exhausted",
					lease->route, lease->servername),
			 errdetail("The limit is %d requests per %d ms%s (%s \"%s\"); budget frees at %s (in %.1f s), later than partner_svc.rate_limit_max_wait (%d ms) allows.",
					   lease->limit, psvc_guc_window_ms,
					   lease->has_resource ? " for each id" : "",
					   lease->overridden ? "override" : psprintf("tier %s, row", lease->tier),
					   lease->row, when, in_s, psvc_guc_rate_limit_max_wait),
			 errhint("Try again later, raise partner_svc.rate_limit_max_wait, or, if the contract allows more, set the server option \"rate_limits\".")));
}

/*
 * A call that may use only a share of its route's budget (the worker's
 * status polling) found the route's use of the window at that share or
 * above, or the route blocked by a 429: it never waits, so that it never
 * holds back the callers that may use all of it.
 */
static void
report_share_spent(PsvcRlLease *lease)
{
	ereport(ERROR,
			(errcode(ERRCODE_TOO_MANY_CONNECTIONS),
			 errmsg("the share of the rate limit of %s on server \"%s\" for background calls is spent",
					lease->route, lease->servername),
			 errdetail("Background calls may use %d %% of the %d requests per %d ms%s; the rest is left to other callers.",
					   lease->share, lease->limit, psvc_guc_window_ms,
					   lease->has_resource ? " for each id" : "")));
}

/* Saved activity of this backend while it shows that it waits. */
typedef struct SavedActivity
{
	char	   *text;
	uint64		query_id;
} SavedActivity;

static void
show_waiting(PsvcRlLease *lease, SavedActivity *saved)
{
	volatile PgBackendStatus *be = MyBEEntry;
	char	   *text;

	saved->text = NULL;
	if (be == NULL || !pgstat_track_activities)
		return;
	saved->text = pnstrdup((const char *) be->st_activity_raw,
						   pgstat_track_activity_query_size);
	saved->query_id = be->st_query_id;
	text = psprintf("partner_svc: waiting for rate limit of %s on server \"%s\": %s",
					lease->route, lease->servername, saved->text);
	pgstat_report_activity(STATE_RUNNING, text);
	pfree(text);
}

static void
restore_activity(SavedActivity *saved)
{
	if (saved->text == NULL)
		return;
	pgstat_report_activity(STATE_RUNNING, saved->text);
	pgstat_report_query_id(saved->query_id, true);
	pfree(saved->text);
	saved->text = NULL;
}

/*
 * errcontext of the wait itself: a cancel (statement_timeout, a
 * pg_cancel_backend) that ends it says what the statement was waiting
 * for.  Pushed only around the sleep, so that the 53300 of
 * report_exhausted keeps its own words.
 */
static void
wait_context(void *arg)
{
	PsvcRlLease *lease = (PsvcRlLease *) arg;

	if (lease->quota_wait)
		errcontext("waiting for a fleet quota lease for %s on server \"%s\"",
				   lease->route, lease->servername);
	else
		errcontext("waiting for rate-limit budget for %s on server \"%s\"",
				   lease->route, lease->servername);
}

/*
 * The failed take waits only for the worker to fetch a lease (the
 * coordinator has not said that the fleet's budget is spent): that wait
 * is a round trip, or ends when the worker falls back, so it does not
 * count against partner_svc.rate_limit_max_wait.
 */
static bool
lease_round_trip(PsvcRlLease *lease, int64 frees_at, int64 now)
{
	return lease->quota_wait && frees_at <= now + 200 * 1000;
}

/*
 * Takes one unit of budget for the next attempt of the lease's request,
 * waiting for it as the file header says.  Raises 53300 when it would wait
 * past partner_svc.rate_limit_max_wait, 55000 without preloading, and the
 * cancel error when interrupted.
 */
void
psvc_rl_acquire(PsvcRlLease *lease)
{
	int64		start;
	int64		deadline;
	int64		frees_at = 0;
	bool		blocked = false;
	SavedActivity saved;
	ErrorContextCallback waitcxt = {.callback = wait_context, .arg = lease};

	lease->attempt_waited = false;
	lease->attempt_wait_ms = 0;
	if (lease->limit <= 0 || !psvc_guc_rate_limit)
		return;
	if (psvc_rl_shared == NULL)
		report_not_preloaded(lease);
	Assert(!lease->held);
	if (!exit_callback_set)
	{
		before_shmem_exit(rl_exit, (Datum) 0);
		exit_callback_set = true;
	}

	start = psvc_rl_now();
	if (try_take(lease, start, &frees_at, &blocked))
		return;
	if (lease->share < 100)
		report_share_spent(lease);
	deadline = start + (int64) psvc_guc_rate_limit_max_wait * 1000;
	if (frees_at > deadline && !lease_round_trip(lease, frees_at, start))
		report_exhausted(lease, frees_at, blocked, start);

	lease->attempt_waited = true;
	show_waiting(lease, &saved);
	PG_TRY();
	{
		for (;;)
		{
			int64		now = psvc_rl_now();
			long		timeout_ms;

			if (frees_at > deadline && !lease_round_trip(lease, frees_at, now))
				report_exhausted(lease, frees_at, blocked, now);
			/*
			 * Waiting for the quota worker: say so, then look once more,
			 * since its answer may have come before it could see us.
			 */
			if (lease->quota_wait)
			{
				psvc_quota_set_waiting(true);
				if (try_take(lease, psvc_rl_now(), &frees_at, &blocked))
					break;
				now = psvc_rl_now();
				if (frees_at > deadline && !lease_round_trip(lease, frees_at, now))
					report_exhausted(lease, frees_at, blocked, now);
			}
			timeout_ms = (long) ((frees_at - now + 999) / 1000);
			timeout_ms = Max(timeout_ms, 1);
			waitcxt.previous = error_context_stack;
			error_context_stack = &waitcxt;
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 timeout_ms, psvc_wait_event(PSVC_WAIT_RATE_LIMIT));
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			error_context_stack = waitcxt.previous;
			if (try_take(lease, psvc_rl_now(), &frees_at, &blocked))
				break;
		}
	}
	PG_FINALLY();
	{
		double		ms = (psvc_rl_now() - start) / 1000.0;

		lease->attempt_wait_ms = ms;
		lease->wait_ms += ms;
		restore_activity(&saved);
		psvc_quota_set_waiting(false);
	}
	PG_END_TRY();
}

/*
 * The stats row of skey, made if there is room, else the overflow row.
 * Called with stats_lock held in shared mode; returns with it held, in
 * shared or exclusive mode.
 */
static PsvcStatsEntry *
stats_entry(const PsvcStatsKey *skey)
{
	PsvcStatsEntry *e;

	e = hash_search(psvc_rl_stats_table, skey, HASH_FIND, NULL);
	if (e == NULL)
	{
		LWLockRelease(psvc_rl_shared->stats_lock);
		LWLockAcquire(psvc_rl_shared->stats_lock, LW_EXCLUSIVE);
		e = hash_search(psvc_rl_stats_table, skey, HASH_FIND, NULL);
		if (e == NULL && hash_get_num_entries(psvc_rl_stats_table) <= psvc_guc_max_keys)
		{
			e = hash_search(psvc_rl_stats_table, skey, HASH_ENTER, NULL);
			SpinLockInit(&e->mutex);
			memset(&e->c, 0, sizeof(e->c));
		}
		else if (e == NULL)
		{
			PsvcStatsKey key;

			psvc_rl_stats_overflow_key(&key);
			e = hash_search(psvc_rl_stats_table, &key, HASH_FIND, NULL);
		}
	}
	return e;
}

/*
 * Counts a lookup of the response cache (cache.c) in the stats row of the
 * request's server and route: a hit sent nothing, a miss is followed by
 * the request.  Never raises; nothing without preloading.
 */
void
psvc_rl_count_cache(Oid serverid, const char *method, const char *route,
					bool hit)
{
	PsvcStatsKey skey;
	PsvcStatsEntry *e;
	char		text[512];

	if (psvc_rl_shared == NULL)
		return;
	memset(&skey, 0, sizeof(skey));
	skey.dbid = MyDatabaseId;
	skey.serverid = serverid;
	snprintf(text, sizeof(text), "%s %s", method, route);
	key_text(skey.route, sizeof(skey.route), text);

	LWLockAcquire(psvc_rl_shared->stats_lock, LW_SHARED);
	e = stats_entry(&skey);
	SpinLockAcquire(&e->mutex);
	if (hit)
		e->c.cache_hits++;
	else
		e->c.cache_misses++;
	SpinLockRelease(&e->mutex);
	LWLockRelease(psvc_rl_shared->stats_lock);
}

/* Adds one attempt to the stats of its server and route. */
static void
record_stats(PsvcRlLease *lease, long status, size_t sent, size_t received,
			 double ms, bool retrying)
{
	PsvcStatsEntry *e;
	PsvcStatsCounters *c;

	LWLockAcquire(psvc_rl_shared->stats_lock, LW_SHARED);
	e = stats_entry(&lease->skey);

	SpinLockAcquire(&e->mutex);
	c = &e->c;
	c->requests++;
	if (retrying)
		c->retries++;
	if (status == 0)
		c->failures++;
	else if (status >= 200 && status < 300)
		c->ok++;
	else if (status == 429)
		c->rate_limited++;
	else if (status >= 400 && status < 500)
		c->client_errors++;
	else if (status >= 500 && status < 600)
		c->server_errors++;
	else
		c->other_status++;
	c->bytes_sent += sent;
	c->bytes_received += received;
	c->total_time += ms;
	c->max_time = Max(c->max_time, ms);
	if (lease->attempt_waited)
	{
		c->waits++;
		c->wait_time += lease->attempt_wait_ms;
	}
	SpinLockRelease(&e->mutex);
	LWLockRelease(psvc_rl_shared->stats_lock);
}

/*
 * An attempt ended: its unit is counted at this moment, a 429 blocks the
 * key, and the attempt goes into the stats.  Does not raise.
 */
void
psvc_rl_attempt_done(PsvcRlLease *lease, long status, size_t bytes_sent,
					 size_t bytes_received, double elapsed_ms, bool retrying,
					 long hold_ms)
{
	if (lease == NULL)
		return;
	if (lease->held)
		put_unit(lease, status == 429, hold_ms);
	if (psvc_rl_shared != NULL)
		record_stats(lease, status, bytes_sent, bytes_received, elapsed_ms,
					 retrying);
}

/*
 * The transfer was abandoned (error, cancel, context reset) while its
 * attempt held a unit: the request may have reached the service, so it is
 * counted as ended now.  Idempotent; never raises (runs from reset
 * callbacks and at process exit).
 */
void
psvc_rl_release(PsvcRlLease *lease)
{
	if (lease != NULL && lease->held)
		put_unit(lease, false, -1);
}

double
psvc_rl_waited_ms(const PsvcRlLease *lease)
{
	return lease ? lease->wait_ms : 0;
}
