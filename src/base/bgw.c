/*-------------------------------------------------------------------------
 *
 * bgw.c
 *		  The skeleton of partner_svc's background workers (bgw.h).
 *
 * One copy of what every worker's loop needs and is easy to get subtly
 * wrong: the rules of registration (preloading, binary upgrade, a refused
 * database or role), the wait for the worker's database before a
 * connection that would be a FATAL, the signal handlers (SIGTERM through die(), so that it also
 * interrupts a lock wait or a transfer), the reload at the top of a turn,
 * the settings pinned with PGC_S_OVERRIDE (they win over the role's and
 * database's defaults and over the configuration file, so a reload keeps
 * them), and the recovery from an ERROR as the autovacuum launcher does
 * it.  What a worker holds of its own (the webhook worker's held
 * deliveries, the poll worker's round) it releases itself after
 * psvc_bgw_recover.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/bgw.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timeout.h"
#include "utils/wait_event.h"

#include "bgw.h"
#include "guc.h"

static volatile sig_atomic_t terminating = false;
static bool in_connect = false;

bool
psvc_bgw_may_register(const char *who, const char *hint)
{
	const char *setting;
	const char *why;

	if (!process_shared_preload_libraries_in_progress || IsBinaryUpgrade)
		return false;
	/* never a worker with another role than the one configured */
	if (!psvc_guc_worker_refused(&setting, &why))
		return true;
	if (who != NULL)
		ereport(WARNING,
				(errmsg("%s: untrusted setting \"%s\"", who, setting),
				 errdetail("%s", why),
				 errhint("%s", hint)));
	return false;
}

/* The BackgroundWorker of spec. */
static void
bgw_fill(BackgroundWorker *w, const PsvcBgwSpec *spec)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->bgw_name, BGW_MAXLEN, "%s", spec->name ? spec->name : spec->type);
	snprintf(w->bgw_type, BGW_MAXLEN, "%s", spec->type);
	w->bgw_flags = BGWORKER_SHMEM_ACCESS |
		(spec->database ? BGWORKER_BACKEND_DATABASE_CONNECTION : 0);
	w->bgw_start_time = spec->start;
	w->bgw_restart_time = spec->restart_s;
	w->bgw_main_arg = spec->arg;
	snprintf(w->bgw_library_name, BGW_MAXLEN, "partner_svc");
	snprintf(w->bgw_function_name, BGW_MAXLEN, "%s", spec->function);
}

void
psvc_bgw_register(const PsvcBgwSpec *spec)
{
	BackgroundWorker w;

	bgw_fill(&w, spec);
	RegisterBackgroundWorker(&w);
}

bool
psvc_bgw_start(const PsvcBgwSpec *spec)
{
	BackgroundWorker w;

	bgw_fill(&w, spec);
	return RegisterDynamicBackgroundWorker(&w, NULL);
}

static void
bgw_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	terminating = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

void
psvc_bgw_signals_soft(void)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, bgw_sigterm);
	BackgroundWorkerUnblockSignals();
}

bool
psvc_bgw_terminating(void)
{
	return terminating;
}

void
psvc_bgw_pause(long ms, uint32 wait_event)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 ms, wait_event);
	ResetLatch(MyLatch);
}

bool
psvc_bgw_turn(volatile long *pause_ms, uint32 wait_event)
{
	if (*pause_ms > 0)
	{
		psvc_bgw_pause(*pause_ms, wait_event);
		*pause_ms = 0;
	}
	CHECK_FOR_INTERRUPTS();
	return psvc_bgw_reload();
}

void
psvc_bgw_wait_for_database(const PsvcBgwDbWait *wait)
{
	long		pause_ms = wait->first_ms;
	char		logged[256] = "";

	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	for (;;)
	{
		char		problem[256];

		CHECK_FOR_INTERRUPTS();
		(void) psvc_bgw_reload();
		wait->check(problem, sizeof(problem), logged);
		if (strcmp(problem, logged) != 0)
			ereport(WARNING,
					(errmsg("%s cannot start: %s", wait->who, problem),
					 errhint(wait->hint, (int) (wait->max_ms / 1000))));
		strlcpy(logged, problem, sizeof(logged));
		if (wait->failed)
			wait->failed(problem);
		pgstat_report_activity(STATE_IDLE, wait->activity);
		psvc_bgw_pause(pause_ms, wait->wait_event);
		pause_ms = Min(pause_ms * 2, wait->max_ms);
	}
}

void
psvc_bgw_connect(const char *database)
{
	in_connect = true;
	BackgroundWorkerInitializeConnection(database,
										 psvc_guc_worker.role[0] != '\0' ? psvc_guc_worker.role : NULL, 0);
	in_connect = false;
}

bool
psvc_bgw_in_connect(void)
{
	return in_connect;
}

void
psvc_bgw_signals(void)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
}

bool
psvc_bgw_reload(void)
{
	if (!ConfigReloadPending)
		return false;
	ConfigReloadPending = false;
	ProcessConfigFile(PGC_SIGHUP);
	return true;
}

void
psvc_bgw_pin_settings(int lock_timeout_ms)
{
	char		buf[32];

	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("default_transaction_read_only", "off", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("default_transaction_isolation", "read committed", PGC_SUSET,
					PGC_S_OVERRIDE);
	if (lock_timeout_ms < 0)
		return;
	snprintf(buf, sizeof(buf), "%d", lock_timeout_ms);
	SetConfigOption("lock_timeout", buf, PGC_SUSET, PGC_S_OVERRIDE);
}

ErrorData *
psvc_bgw_recover(void)
{
	ErrorData  *edata;

	error_context_stack = NULL;
	HOLD_INTERRUPTS();
	disable_all_timeouts(false);
	QueryCancelPending = false;
	EmitErrorReport();
	MemoryContextSwitchTo(TopMemoryContext);
	edata = CopyErrorData();
	FlushErrorState();
	AbortCurrentTransaction();
	LWLockReleaseAll();
	ConditionVariableCancelSleep();
	pgstat_report_wait_end();
	return edata;
}

long
psvc_bgw_error_pause(int consecutive, long max_ms)
{
	if (consecutive <= 1)
		return 0;
	return Min(100L << Min(consecutive - 2, 6), max_ms);
}
