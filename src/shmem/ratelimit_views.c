/*-------------------------------------------------------------------------
 *
 * ratelimit_views.c
 *		  The functions behind the views partner_svc.rate_limits and
 *		  partner_svc.stats, partner_svc.stats_reset() and
 *		  partner_svc.rate_limits_reset().
 *
 * Each function copies the shared entries under the table's lock in
 * shared mode, every entry's counters under its spinlock, into an array
 * allocated before the lock is taken, and builds its rows only after
 * releasing it: nothing that allocates, may raise an error or may write a
 * tuplestore to disk runs under the lock.  The views
 * (sql/install/30_ratelimit.sql, 31_stats.sql) add server names.
 * Resource ids are shown only for keys of the current database (another
 * database's ids may be in another encoding), and only to superusers and
 * members of pg_read_all_stats: an order id of one role is not another
 * role's business, as pg_stat_activity hides other users' queries.  Without preloading there is
 * nothing to show, and the functions say so, as pg_stat_statements does.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/ratelimit_views.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "catalog/pg_authid.h"
#include "foreign/foreign.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "options.h"
#include "ratelimit_int.h"

PG_FUNCTION_INFO_V1(psvc_rl_rate_limits);
PG_FUNCTION_INFO_V1(psvc_rl_stats);
PG_FUNCTION_INFO_V1(psvc_rl_stats_reset);
PG_FUNCTION_INFO_V1(psvc_rl_rate_limits_reset);

static void
require_shmem(const char *what)
{
	if (psvc_rl_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs partner_svc in shared_preload_libraries", what),
				 errdetail("The rate limiter and the request statistics live in shared memory, which partner_svc has only when it is preloaded.")));
}

/*
 * Room for a copy of the entries of table, which lock guards: its count
 * now plus some slack for entries added before the copy is made (those
 * beyond the room are left out of this one reading, as a view of moving
 * counters may).  Allocates in CurrentMemoryContext, outside the lock.
 */
static void *
snapshot_room(HTAB *table, LWLock *lock, Size entry_size, long *room)
{
	long		n;

	LWLockAcquire(lock, LW_SHARED);
	n = hash_get_num_entries(table);
	LWLockRelease(lock);
	*room = n + 16;
	return palloc(entry_size * *room);
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
/* One row of rate_limits as read under the lock. */
typedef struct RlRow
{
	PsvcRlKey	key;
	Oid			dbid;			/* the server that asked last (display) */
	Oid			serverid;
	int32		limit;
	int32		used;
	int32		in_flight;
	int64		frees_at;
	int64		resets_at;
	int64		blocked_until;
} RlRow;

Datum
psvc_rl_rate_limits(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	PsvcRlEntry *e;
	bool		see_ids = superuser() ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	RlRow	   *rows;
	long		room;
	long		n = 0;
	int64		now;

	require_shmem("partner_svc.rate_limits");
	InitMaterializedSRF(fcinfo, 0);

	rows = snapshot_room(psvc_rl_key_table, psvc_rl_shared->lock, sizeof(RlRow), &room);
	LWLockAcquire(psvc_rl_shared->lock, LW_SHARED);
	now = psvc_rl_now();
	hash_seq_init(&seq, psvc_rl_key_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		RlRow	   *r;

		if (n == room)
		{
			hash_seq_term(&seq);
			break;
		}
		r = &rows[n++];
		r->key = e->key;
		SpinLockAcquire(&e->mutex);
		psvc_rl_advance(e, now);
		r->dbid = e->dbid;
		r->serverid = e->serverid;
		r->limit = e->limit;
		r->used = e->total + e->in_flight;
		r->in_flight = e->in_flight;
		r->frees_at = psvc_rl_frees_at(e, now);
		r->resets_at = psvc_rl_resets_at(e);
		r->blocked_until = e->blocked_until;
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(psvc_rl_shared->lock);

	for (long k = 0; k < n; k++)
	{
		RlRow	   *r = &rows[k];
		Datum		values[11];
		bool		nulls[11];

		memset(nulls, 0, sizeof(nulls));
		values[0] = ObjectIdGetDatum(r->dbid);
		values[1] = ObjectIdGetDatum(r->serverid);
		split_route(r->key.route, &values[2], &nulls[2], &values[3]);
		if (r->key.resource[0] == '\0' || r->dbid != MyDatabaseId || !see_ids)
			nulls[4] = true;
		else
			values[4] = CStringGetTextDatum(r->key.resource);
		values[5] = Int32GetDatum(r->limit);
		values[6] = Int32GetDatum(r->used);
		values[7] = Int32GetDatum(r->in_flight);
		if (r->frees_at <= now)
			nulls[8] = true;
		else
			values[8] = TimestampTzGetDatum(psvc_rl_timestamp(r->frees_at));
		if (r->used == 0 || r->resets_at <= now)
			nulls[9] = true;
		else
			values[9] = TimestampTzGetDatum(psvc_rl_timestamp(r->resets_at));
		if (r->blocked_until <= now)
			nulls[10] = true;
		else
			values[10] = TimestampTzGetDatum(psvc_rl_timestamp(r->blocked_until));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	return (Datum) 0;
}

/*
 * partner_svc.stats(): one row per server and route: dbid, serverid,
 * method, route, then the counters of PsvcStatsCounters in their order
 * (the response cache's hits and misses last), and the time of the last
 * reset.  The row that counts routes without room
 * has dbid and serverid 0 and route '*'.
 */
/* One row of stats as read under the lock. */
typedef struct StatsRow
{
	PsvcStatsKey key;
	PsvcStatsCounters c;
} StatsRow;

Datum
psvc_rl_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	PsvcStatsEntry *e;
	TimestampTz since;
	StatsRow   *rows;
	long		room;
	long		n = 0;

	require_shmem("partner_svc.stats");
	InitMaterializedSRF(fcinfo, 0);

	rows = snapshot_room(psvc_rl_stats_table, psvc_rl_shared->stats_lock, sizeof(StatsRow), &room);
	LWLockAcquire(psvc_rl_shared->stats_lock, LW_SHARED);
	since = psvc_rl_shared->stats_since;
	hash_seq_init(&seq, psvc_rl_stats_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (n == room)
		{
			hash_seq_term(&seq);
			break;
		}
		rows[n].key = e->key;
		SpinLockAcquire(&e->mutex);
		rows[n].c = e->c;
		SpinLockRelease(&e->mutex);
		n++;
	}
	LWLockRelease(psvc_rl_shared->stats_lock);

	for (long k = 0; k < n; k++)
	{
		const PsvcStatsKey *key = &rows[k].key;
		const PsvcStatsCounters *c = &rows[k].c;
		Datum		values[21];
		bool		nulls[21];
		int			i = 0;

		/* the overflow row only once it counted something */
		if (key->serverid == InvalidOid && c->requests == 0 &&
			c->cache_hits == 0 && c->cache_misses == 0)
			continue;

		memset(nulls, 0, sizeof(nulls));
		values[i++] = ObjectIdGetDatum(key->dbid);
		values[i++] = ObjectIdGetDatum(key->serverid);
		split_route(key->route, &values[i], &nulls[i], &values[i + 1]);
		i += 2;
		values[i++] = Int64GetDatum(c->requests);
		values[i++] = Int64GetDatum(c->retries);
		values[i++] = Int64GetDatum(c->ok);
		values[i++] = Int64GetDatum(c->client_errors);
		values[i++] = Int64GetDatum(c->rate_limited);
		values[i++] = Int64GetDatum(c->server_errors);
		values[i++] = Int64GetDatum(c->other_status);
		values[i++] = Int64GetDatum(c->failures);
		values[i++] = Int64GetDatum(c->bytes_sent);
		values[i++] = Int64GetDatum(c->bytes_received);
		values[i++] = Float8GetDatum(c->total_time);
		values[i++] = Float8GetDatum(c->max_time);
		values[i++] = Int64GetDatum(c->waits);
		values[i++] = Float8GetDatum(c->wait_time);
		values[i++] = Int64GetDatum(c->cache_hits);
		values[i++] = Int64GetDatum(c->cache_misses);
		values[i++] = TimestampTzGetDatum(since);
		Assert(i == lengthof(values));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

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

/*
 * partner_svc.rate_limits_reset(server name DEFAULT NULL): forgets the
 * counts and 429 blocks of the partner account that the server reaches
 * with the caller's user mapping (its base URL and API key, the budget
 * the service counts) and of the keys the server used last (other roles'
 * accounts), or with NULL of every account; returns how many keys had
 * any.  Meant for a test whose partner forgot its own counters
 * (a sandbox's reset): against a real service it lets the next window
 * exceed the partner's limit, hence superuser only (sql/install).  The
 * account's digest is computed in CurrentMemoryContext.
 */
Datum
psvc_rl_rate_limits_reset(PG_FUNCTION_ARGS)
{
	char		account[PSVC_ACCOUNT_LEN + 1];
	bool		one = !PG_ARGISNULL(0);
	Oid			serverid = InvalidOid;

	require_shmem("partner_svc.rate_limits_reset()");
	if (one)
	{
		ForeignServer *fs = GetForeignServerByName(NameStr(*PG_GETARG_NAME(0)), false);

		serverid = fs->serverid;
		psvc_options_account(psvc_options_server(serverid), account);
	}

	PG_RETURN_INT64((int64) psvc_rl_forget(one ? account : NULL, serverid));
}
