/*-------------------------------------------------------------------------
 *
 * webhook_prune.c
 *		  Retention of received webhooks: the worker deletes the rows of
 *		  webhook_events and webhook_rejects older than their retention,
 *		  and keeps at most max_rejects rows of webhook_rejects.
 *
 * Design notes:
 *
 * - The settings are keep_events, keep_rejects (real seconds, 0 keeps
 *   everything) and max_rejects (rows, 0 = no cap) of
 *   the worker's duties (partner_svc.poll_*, webhook_keep_*) (docs/backups.md).
 * - Age: at most every PSVC_PRUNE_EVERY_MS, or a quarter of the shortest
 *   retention when that is shorter, the rows received before now minus
 *   the retention are deleted, at most PSVC_PRUNE_BATCH rows per table
 *   and turn, oldest first (an index on received_at, or the id of the
 *   rejects, which grows with it), so that a first run over a large
 *   backlog does not hold one long transaction; a full batch brings the
 *   next turn forward.
 * - The cap: after every batch that stored rejects (the listener's
 *   counter moved) and at each pruning, the rejects beyond the newest
 *   max_rejects are deleted: a flood of junk posts costs at most
 *   max_rejects rows and one delete per batch.
 * - order_states and transactions are never pruned: they are the state
 *   of live orders, one row each.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_prune.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "guc.h"
#include "webhook_int.h"

#define PSVC_PRUNE_EVERY_MS (60 * 1000)
#define PSVC_PRUNE_MIN_MS 100
#define PSVC_PRUNE_BATCH 10000

static TimestampTz next_prune = 0;
static int64 capped_at_rejects = -1;	/* the listener's counter, last cap */

static const char events_sql[] =
"DELETE FROM partner_svc.webhook_events WHERE id IN ("
"  SELECT id FROM partner_svc.webhook_events WHERE received_at < $1"
"  ORDER BY received_at LIMIT " CppAsString2(PSVC_PRUNE_BATCH) ")";

static const char rejects_sql[] =
"DELETE FROM partner_svc.webhook_rejects WHERE id IN ("
"  SELECT id FROM partner_svc.webhook_rejects WHERE received_at < $1"
"  ORDER BY id LIMIT " CppAsString2(PSVC_PRUNE_BATCH) ")";

static const char cap_sql[] =
"DELETE FROM partner_svc.webhook_rejects WHERE id <= ("
"  SELECT id FROM partner_svc.webhook_rejects ORDER BY id DESC OFFSET $1 LIMIT 1)";

/* Runs sql with one argument; returns the rows it deleted. */
static uint64
run(const char *sql, Oid type, Datum arg)
{
	int			rc = SPI_execute_with_args(sql, 1, &type, &arg, NULL, false, 0);

	if (rc != SPI_OK_DELETE)
		elog(ERROR, "the webhook worker could not prune: %s", SPI_result_code_string(rc));
	return SPI_processed;
}

/* The interval between two prunings, in ms. */
static long
prune_every_ms(void)
{
	long		ms = PSVC_PRUNE_EVERY_MS;

	if (psvc_guc_tasks.keep_events > 0)
		ms = Min(ms, psvc_guc_tasks.keep_events * 1000L / 4);
	if (psvc_guc_tasks.keep_rejects > 0)
		ms = Min(ms, psvc_guc_tasks.keep_rejects * 1000L / 4);
	return Max(ms, PSVC_PRUNE_MIN_MS);
}

/*
 * One turn of pruning, when one is due or rejects were stored since the
 * last cap; its own transaction.  rejected: the listener's count of
 * rejects so far.  Called by the worker's loop while it is connected and
 * the extension is there.
 */
void
psvc_wh_prune(int64 rejected)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		age = now >= next_prune;
	bool		cap = psvc_guc_tasks.max_rejects > 0 && rejected != capped_at_rejects;
	bool		more = false;

	if (!age && !cap)
		return;
	if (age && psvc_guc_tasks.keep_events == 0 && psvc_guc_tasks.keep_rejects == 0 && !cap)
	{
		next_prune = TimestampTzPlusMilliseconds(now, prune_every_ms());
		return;
	}
	/*
	 * The next time is set first: a pruning that fails (a role without
	 * DELETE, say) is tried again at the next interval, not at every turn.
	 */
	if (age)
		next_prune = TimestampTzPlusMilliseconds(now, prune_every_ms());
	capped_at_rejects = rejected;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (!OidIsValid(get_extension_oid("partner_svc", true)))
	{
		CommitTransactionCommand();
		return;
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	if (age && psvc_guc_tasks.keep_events > 0)
		more |= run(events_sql, TIMESTAMPTZOID,
					TimestampTzGetDatum(TimestampTzPlusMilliseconds(now,
																	-(int64) psvc_guc_tasks.keep_events * 1000))) == PSVC_PRUNE_BATCH;
	if (age && psvc_guc_tasks.keep_rejects > 0)
		more |= run(rejects_sql, TIMESTAMPTZOID,
					TimestampTzGetDatum(TimestampTzPlusMilliseconds(now,
																	-(int64) psvc_guc_tasks.keep_rejects * 1000))) == PSVC_PRUNE_BATCH;
	if (psvc_guc_tasks.max_rejects > 0)
		(void) run(cap_sql, INT4OID, Int32GetDatum(psvc_guc_tasks.max_rejects));
	PopActiveSnapshot();
	SPI_finish();
	CommitTransactionCommand();
	/* a full batch: more rows are due, go on at the next turn */
	if (more)
		next_prune = now;
}

/* Milliseconds until the next pruning is due (0: now). */
long
psvc_wh_prune_wait_ms(void)
{
	TimestampTz now = GetCurrentTimestamp();

	if (now >= next_prune)
		return 0;
	return (long) Min((next_prune - now + 999) / 1000, (int64) INT_MAX);
}
