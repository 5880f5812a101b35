/*-------------------------------------------------------------------------
 *
 * bgw.c
 *		  The skeleton of partner_svc's background workers (bgw.h).
 *
 * One copy of what every worker's loop needs and is easy to get subtly
 * wrong: the signal handlers (SIGTERM through die(), so that it also
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
 *		  src/webhook/bgw.c
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
#include "storage/lwlock.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timeout.h"
#include "utils/wait_event.h"

#include "bgw.h"

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
