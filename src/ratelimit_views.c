/*-------------------------------------------------------------------------
 *
 * ratelimit_views.c
 *		  The functions behind the views partner_svc.rate_limits and
 *		  partner_svc.stats, and partner_svc.stats_reset().
 *
 * Each function copies the shared entries under the table's lock in
 * shared mode, every entry's counters under its spinlock, into a
 * tuplestore; the views (sql/install/30_ratelimit.sql) add server names.
 * Resource ids are shown only for keys of the current database (another
 * database's ids may be in another encoding), and only to superusers and
 * members of pg_read_all_stats: an order id of one role is not another
 * role's business, as pg_stat_activity hides other users' queries.  Without preloading there is
 * nothing to show, and the functions say so, as pg_stat_statements does.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/ratelimit_views.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "catalog/pg_authid.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "ratelimit_int.h"

PG_FUNCTION_INFO_V1(psvc_rl_rate_limits);
PG_FUNCTION_INFO_V1(psvc_rl_stats);
PG_FUNCTION_INFO_V1(psvc_rl_stats_reset);

static void
require_shmem(const char *what)
{
	if (psvc_rl_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs partner_svc in shared_preload_libraries", what),
				 errdetail("The rate limiter and the request statistics live in shared memory, which partner_svc has only when it is preloaded.")));
}

/* Sets method and route datums from "METHOD /route" (method NULL if none). */
static void
split_route(const char *key, Datum *method, bool *method_null, Datum *route)
{
	const char *sp = strchr(key, ' ');

	if (sp == NULL)
	{
		*method_null = true;
		*route = CStringGetTextDatum(key);
	}
	else
	{
		*method = PointerGetDatum(cstring_to_text_with_len(key, sp - key));
		*route = CStringGetTextDatum(sp + 1);
	}
}

/*
 * partner_svc.rate_limits(): one row per key: dbid, serverid, method,
 * route, resource, "limit", used (in the window, in flight included),
 * in_flight, frees_at (when one more request is allowed; NULL: now),
 * resets_at (when used drops to zero; NULL: it is zero), blocked_until
 * (after a 429; NULL: not blocked).  resource is NULL unless the caller
 * may see ids (see the header comment).
 */
Datum
psvc_rl_rate_limits(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	PsvcRlEntry *e;
	bool		see_ids = superuser() ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);

	require_shmem("partner_svc.rate_limits");
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(psvc_rl_shared->lock, LW_SHARED);
	hash_seq_init(&seq, psvc_rl_key_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[11];
		bool		nulls[11];
		int64		now = psvc_rl_now();
		int32		limit,
					used,
					in_flight;
		int64		frees_at,
					resets_at,
					blocked_until;

		SpinLockAcquire(&e->mutex);
		psvc_rl_advance(e, now);
		limit = e->limit;
		used = e->total + e->in_flight;
		in_flight = e->in_flight;
		frees_at = psvc_rl_frees_at(e, now);
		resets_at = psvc_rl_resets_at(e);
		blocked_until = e->blocked_until;
		SpinLockRelease(&e->mutex);

		memset(nulls, 0, sizeof(nulls));
		values[0] = ObjectIdGetDatum(e->key.dbid);
		values[1] = ObjectIdGetDatum(e->key.serverid);
		split_route(e->key.route, &values[2], &nulls[2], &values[3]);
		if (e->key.resource[0] == '\0' || e->key.dbid != MyDatabaseId || !see_ids)
			nulls[4] = true;
		else
			values[4] = CStringGetTextDatum(e->key.resource);
		values[5] = Int32GetDatum(limit);
		values[6] = Int32GetDatum(used);
		values[7] = Int32GetDatum(in_flight);
		if (frees_at <= now)
			nulls[8] = true;
		else
			values[8] = TimestampTzGetDatum(psvc_rl_timestamp(frees_at));
		if (used == 0 || resets_at <= now)
			nulls[9] = true;
		else
			values[9] = TimestampTzGetDatum(psvc_rl_timestamp(resets_at));
		if (blocked_until <= now)
			nulls[10] = true;
		else
			values[10] = TimestampTzGetDatum(psvc_rl_timestamp(blocked_until));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(psvc_rl_shared->lock);

	return (Datum) 0;
}

/*
 * partner_svc.stats(): one row per server and route: dbid, serverid,
 * method, route, then the counters of PsvcStatsCounters in their order
 * (the response cache's hits and misses last), and the time of the last
 * reset.  The row that counts routes without room
 * has dbid and serverid 0 and route '*'.
 */
Datum
psvc_rl_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	PsvcStatsEntry *e;
	TimestampTz since;

	require_shmem("partner_svc.stats");
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(psvc_rl_shared->stats_lock, LW_SHARED);
	since = psvc_rl_shared->stats_since;
	hash_seq_init(&seq, psvc_rl_stats_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[21];
		bool		nulls[21];
		PsvcStatsCounters c;
		int			i = 0;

		SpinLockAcquire(&e->mutex);
		c = e->c;
		SpinLockRelease(&e->mutex);

		/* the overflow row only once it counted something */
		if (e->key.serverid == InvalidOid && c.requests == 0 &&
			c.cache_hits == 0 && c.cache_misses == 0)
			continue;

		memset(nulls, 0, sizeof(nulls));
		values[i++] = ObjectIdGetDatum(e->key.dbid);
		values[i++] = ObjectIdGetDatum(e->key.serverid);
		split_route(e->key.route, &values[i], &nulls[i], &values[i + 1]);
		i += 2;
		values[i++] = Int64GetDatum(c.requests);
		values[i++] = Int64GetDatum(c.retries);
		values[i++] = Int64GetDatum(c.ok);
		values[i++] = Int64GetDatum(c.client_errors);
		values[i++] = Int64GetDatum(c.rate_limited);
		values[i++] = Int64GetDatum(c.server_errors);
		values[i++] = Int64GetDatum(c.other_status);
		values[i++] = Int64GetDatum(c.failures);
		values[i++] = Int64GetDatum(c.bytes_sent);
		values[i++] = Int64GetDatum(c.bytes_received);
		values[i++] = Float8GetDatum(c.total_time);
		values[i++] = Float8GetDatum(c.max_time);
		values[i++] = Int64GetDatum(c.waits);
		values[i++] = Float8GetDatum(c.wait_time);
		values[i++] = Int64GetDatum(c.cache_hits);
		values[i++] = Int64GetDatum(c.cache_misses);
		values[i++] = TimestampTzGetDatum(since);
		Assert(i == lengthof(values));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(psvc_rl_shared->stats_lock);

	return (Datum) 0;
}

/*
 * partner_svc.stats_reset(): forgets every stats row (the overflow row is
 * zeroed) and notes the time.  The limiter's budgets are not touched:
 * forgetting them would let the next window exceed the partner's limits.
 */
Datum
psvc_rl_stats_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS seq;
	PsvcStatsEntry *e;

	require_shmem("partner_svc.stats_reset()");

	LWLockAcquire(psvc_rl_shared->stats_lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, psvc_rl_stats_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->key.dbid == InvalidOid && e->key.serverid == InvalidOid &&
			strcmp(e->key.route, PSVC_RL_OVERFLOW) == 0)
			memset(&e->c, 0, sizeof(e->c));
		else
			hash_search(psvc_rl_stats_table, &e->key, HASH_REMOVE, NULL);
	}
	psvc_rl_shared->stats_since = GetCurrentTimestamp();
	LWLockRelease(psvc_rl_shared->stats_lock);

	PG_RETURN_VOID();
}
