/*-------------------------------------------------------------------------
 *
 * webhook_poller.c
 *		  The poll worker: the background worker that records the orders
 *		  and checkouts created through partner_svc and polls the status
 *		  of those webhooks left behind (webhook_reconcile.c), in a process
 *		  of its own.
 *
 * Design notes:
 *
 * - Why a process of its own: a poll waits for a partner, and a partner
 *   (or a tenant's own server) may hang.  In the webhook worker's loop a
 *   hanging status route left every webhook unanswered for the poll's
 *   whole timeout, every round.  Here nothing the partner does reaches
 *   webhook receipt, and each poll has the limits of its own
 *   (partner_svc.poll_timeout, poll_retries, poll_max_per_round).
 * - Always on: registered by psvc_worker_init beside the webhook worker
 *   (not in binary-upgrade mode, not when the worker's database or role
 *   was refused at server start: the same rules), it connects at once to
 *   partner_svc.worker_database as partner_svc.worker_role, whether the
 *   listener has a port or not, and takes the records of created objects
 *   from then on (handoff.h).  partner_svc.poll_share = 0 turns the
 *   polling off, never the recording: orders created meanwhile are
 *   polled once it is on again.
 * - A database or role that cannot be used: connecting is a FATAL the
 *   worker cannot catch.  So, as sender 0 of the deferred calls does,
 *   until it has seen the database and role usable since the server
 *   started (or after a connection that failed: a shared flag outlives
 *   the process), the registered worker connects to no database, checks
 *   the shared catalogues (psvc_wh_connect_problem) with pauses growing
 *   from 5 to 60 s and one WARNING per problem, and once they can be used
 *   hands over to a poll worker that connects, a dynamic worker restarted
 *   as the first one is, and exits with code 0 (nothing logged).  So a
 *   missing database costs a WARNING, never a FATAL of this worker.
 * - The loop: the records handed over (before any poll, so that creators
 *   waiting for room in the ring wait at most one poll), then a turn of
 *   polling, then a wait on the latch (set by every record handed over
 *   and by a reload) until the next round is due.  The skeleton (signals,
 *   reload, pinned settings, error recovery) is bgw.c's, shared with the
 *   webhook worker; an ERROR forgets the round under way and pauses
 *   (100 ms doubling to 5 s while errors repeat).  Records are taken out
 *   of the ring only once written, so an ERROR loses none; but after
 *   PSVC_POLL_POISON errors in a row the oldest one is dropped with a
 *   WARNING (drop_poisoned), so that one record that cannot be written
 *   never holds the ring and its waiting creators for ever.
 * - Between the restart on a new library and ALTER EXTENSION ... UPDATE
 *   (0.3's objects, without the account column) nothing is written:
 *   records wait in the ring (creators wait for room when it is full) and
 *   polling waits for the update (state "waiting").
 * - State (PollShared): written by the worker under its spinlock, read by
 *   webhook_status() (psvc_wh_poller_status).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_poller.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "bgw.h"
#include "guc.h"
#include "handoff.h"
#include "pg_compat.h"
#include "segments.h"
#include "webhook.h"
#include "webhook_int.h"

#define PSVC_POLL_RESTART_S 5
#define PSVC_POLL_CHECK_FIRST_MS 5000
#define PSVC_POLL_CHECK_MAX_MS 60000
#define PSVC_POLL_ERROR_PAUSE_MAX_MS 5000
/* Errors in a row after which the oldest record waiting is dropped. */
#define PSVC_POLL_POISON 5

typedef struct PollShared
{
	slock_t		mutex;
	int			pid;			/* 0 while no poll worker runs */
	char		state[16];		/* see PsvcPollStatus */
	TimestampTz lag_since;
	bool		connecting;		/* a worker is connecting (or died doing so) */
	bool		db_ok;			/* database and role seen usable since the start */
} PollShared;

static PollShared *poll_shared = NULL;
static int	consecutive_errors = 0;

static Size
poll_shmem_size(void)
{
	return MAXALIGN(sizeof(PollShared));
}

static void
poll_shmem_startup(void)
{
	bool		found;

	poll_shared = ShmemInitStruct("partner_svc poll worker", sizeof(PollShared), &found);
	if (!found)
	{
		memset(poll_shared, 0, sizeof(PollShared));
		SpinLockInit(&poll_shared->mutex);
		strlcpy(poll_shared->state, "off", sizeof(poll_shared->state));
	}
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_wh_poll_segment = {
	.size = poll_shmem_size,
	.startup = poll_shmem_startup,
};

/*
 * Registers the poll worker; from psvc_worker_init while preloading,
 * which decides for both workers (binary upgrade, a refused database or
 * role).  One more slot of max_worker_processes.  Its shared state is the
 * segment psvc_wh_poll_segment.
 */
static const PsvcBgwSpec poller_spec = {
	.type = "partner_svc poll worker",
	.function = "psvc_poller_main",
	.database = true,
	.start = BgWorkerStart_RecoveryFinished,
	.restart_s = PSVC_POLL_RESTART_S,
};

void
psvc_wh_poller_init(void)
{
	/* as the webhook worker: its records would be discarded by pg_upgrade */
	if (psvc_bgw_may_register(NULL, NULL))
		psvc_bgw_register(&poller_spec);
}

void
psvc_wh_poller_status(PsvcPollStatus *out)
{
	memset(out, 0, sizeof(*out));
	out->created_waits = (int64) psvc_handoff_waits();
	if (poll_shared == NULL)
	{
		strlcpy(out->state, "off", sizeof(out->state));
		return;
	}
	SpinLockAcquire(&poll_shared->mutex);
	out->running = poll_shared->pid != 0;
	strlcpy(out->state, poll_shared->pid != 0 ? poll_shared->state : "stopped",
			sizeof(out->state));
	out->lag_since = poll_shared->lag_since;
	SpinLockRelease(&poll_shared->mutex);
}

static void
publish(const char *state, TimestampTz lag_since)
{
	SpinLockAcquire(&poll_shared->mutex);
	strlcpy(poll_shared->state, state, sizeof(poll_shared->state));
	poll_shared->lag_since = lag_since;
	SpinLockRelease(&poll_shared->mutex);
}

/* The state of polling after a turn, published. */
static void
publish_polling(void)
{
	TimestampTz since;
	bool		active;

	if (psvc_guc_tasks.poll_share <= 0)
		publish("off", 0);
	else if (psvc_wh_reconcile_waiting())
		publish("waiting", 0);
	else if (psvc_wh_reconcile_lag(&since, &active))
		publish("lagging", since);
	else
		publish(active ? "polling" : "idle", 0);
}

static void
set_connecting(bool on)
{
	SpinLockAcquire(&poll_shared->mutex);
	poll_shared->connecting = on;
	SpinLockRelease(&poll_shared->mutex);
}

/* before_shmem_exit: no records are taken any more, no worker runs. */
static void
poller_exit(int code, Datum arg)
{
	psvc_handoff_detach();
	SpinLockAcquire(&poll_shared->mutex);
	/* the one that checked exits after the one it started may have begun */
	if (poll_shared->pid == MyProcPid)
	{
		poll_shared->pid = 0;
		strlcpy(poll_shared->state, "off", sizeof(poll_shared->state));
	}
	if (ProcDiePending)
		poll_shared->connecting = false;	/* terminated, not refused */
	SpinLockRelease(&poll_shared->mutex);
}

/*
 * The check of psvc_bgw_wait_for_database: once the database and role can
 * be used, hands over to a poll worker that connects at once, a dynamic
 * worker the postmaster restarts as the first one, and exits with code 0
 * (code 1 when there is no room for it: the postmaster then starts this
 * one again, and it connects).
 */
static void
wait_check(char *problem, size_t len, const char *logged)
{
	psvc_wh_connect_problem(psvc_guc_worker.database, psvc_guc_worker.role,
							problem, len);
	if (problem[0] != '\0')
		return;
	SpinLockAcquire(&poll_shared->mutex);
	poll_shared->connecting = false;
	poll_shared->db_ok = true;
	SpinLockRelease(&poll_shared->mutex);
	proc_exit(psvc_bgw_start(&poller_spec) ? 0 : 1);
}

static void
wait_failed(const char *problem)
{
	publish("failed", 0);
}

/*
 * The database and role have not been seen usable since the server
 * started, or a connection failed: waits, connected to no database, until
 * they can be used (wait_check).  Never returns.
 */
static void
wait_for_database(void)
{
	PsvcBgwDbWait w = {
		.who = "partner_svc poll worker",
		.hint = "Created orders are recorded and polled once partner_svc.worker_database and partner_svc.worker_role can be used; it checks again after pauses growing to %d seconds.",
		.activity = "waiting for the worker's database",
		.wait_event = psvc_wait_event(PSVC_WAIT_WORKER),
		.first_ms = PSVC_POLL_CHECK_FIRST_MS,
		.max_ms = PSVC_POLL_CHECK_MAX_MS,
		.check = wait_check,
		.failed = wait_failed,
	};

	psvc_bgw_wait_for_database(&w);
}

/* Whether the extension is in the worker's database (a transaction of its own). */
static bool
extension_here(void)
{
	bool		found;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	found = OidIsValid(get_extension_oid("partner_svc", true));
	CommitTransactionCommand();
	return found;
}

/*
 * After PSVC_POLL_POISON errors in a row while records wait, the oldest
 * record is dropped with a WARNING naming it and the error: one record
 * that cannot be written (whatever the reason) must not hold the ring,
 * and the creators waiting for room, for ever.
 */
static void
drop_poisoned(const ErrorData *edata)
{
	PsvcCreated rec;

	if (consecutive_errors < PSVC_POLL_POISON || psvc_handoff_peek(&rec, 1) == 0)
		return;
	psvc_handoff_drop(1);
	consecutive_errors = 0;
	ereport(WARNING,
			(errmsg("partner_svc poll worker dropped the record of %s \"%s\" created through server \"%s\"",
					rec.checkout ? "checkout" : "order", rec.id, rec.server),
			 errdetail("Writing the records failed %d times in a row, last: %s",
					   PSVC_POLL_POISON, edata->message),
			 errhint("Its status is still told by webhooks; it is not polled.")));
}

/*
 * Entry point of the poll worker (bgw_function_name).  Returns only
 * through proc_exit.
 */
void
psvc_poller_main(Datum arg)
{
	sigjmp_buf	local_sigjmp_buf;
	volatile long pause_ms = 0;
	bool		check_first;

	psvc_bgw_signals();
	SpinLockAcquire(&poll_shared->mutex);
	poll_shared->pid = MyProcPid;
	check_first = poll_shared->connecting || !poll_shared->db_ok;
	SpinLockRelease(&poll_shared->mutex);
	before_shmem_exit(poller_exit, (Datum) 0);
	if (check_first)
		wait_for_database();

	/* a FATAL in here leaves "connecting" set: see wait_for_database */
	set_connecting(true);
	psvc_bgw_connect(psvc_guc_worker.database);
	set_connecting(false);
	psvc_bgw_pin_settings(psvc_guc_webhook.lock_timeout);
	/* creates in this database are now handed to us (handoff.h) */
	psvc_handoff_attach(MyDatabaseId);
	publish("idle", 0);
	pgstat_report_activity(STATE_IDLE, "recording created orders and polling their status");

	if (sigsetjmp(local_sigjmp_buf, 1) != 0)
	{
		ErrorData  *edata = psvc_bgw_recover();

		psvc_wh_reconcile_reset();
		publish("failed", 0);
		RESUME_INTERRUPTS();
		consecutive_errors++;
		drop_poisoned(edata);
		FreeErrorData(edata);
		pause_ms = psvc_bgw_error_pause(consecutive_errors, PSVC_POLL_ERROR_PAUSE_MAX_MS);
	}
	PG_exception_stack = &local_sigjmp_buf;

	for (;;)
	{
		long		timeout;

		if (psvc_bgw_turn(&pause_ms, psvc_wait_event(PSVC_WAIT_WORKER)))
			psvc_bgw_pin_settings(psvc_guc_webhook.lock_timeout);

		if (!extension_here())
		{
			/* records stay in the ring until there is somewhere to write them */
			publish("failed", 0);
			timeout = PSVC_POLL_CHECK_FIRST_MS;
		}
		else
		{
			psvc_wh_reconcile_record();
			psvc_wh_reconcile_step();
			pgstat_report_stat(false);
			publish_polling();
			timeout = psvc_handoff_pending() > 0 ? 0 : psvc_wh_reconcile_wait_ms();
		}
		consecutive_errors = 0;
		if (timeout != 0)
		{
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH | (timeout > 0 ? WL_TIMEOUT : 0),
							 timeout, psvc_wait_event(PSVC_WAIT_WORKER));
			ResetLatch(MyLatch);
		}
	}
}
