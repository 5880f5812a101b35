/*-------------------------------------------------------------------------
 *
 * webhook_worker.c
 *		  The background worker that receives the partner service's
 *		  webhooks: its settings, registration, shared state, wait loop,
 *		  and partner_svc.webhook_status().
 *
 * THE INVARIANT (containment): no ERROR, FATAL or signal path leaves a
 * libmicrohttpd connection suspended.  A suspended connection is a held
 * delivery (webhook_listener.c keeps every one, pending or taken, on its two
 * lists), and MHD_stop_daemon with one still suspended aborts the process,
 * which makes the postmaster restart the whole cluster.  So:
 *   - an ERROR anywhere in the loop comes back to the sigsetjmp point of
 *     psvc_worker_main, which aborts the transaction, answers every held
 *     delivery 503 (Retry-After), resets the batch memory, pauses a little
 *     if errors repeat, and goes on listening;
 *   - FATAL, SIGTERM (die(): it also interrupts a lock wait inside a
 *     batch) and the postmaster's death all go through proc_exit, whose
 *     before_shmem_exit callback (worker_exit, registered before the
 *     database connection, so it runs after the transaction is aborted)
 *     answers every held delivery 503 and only then stops libmicrohttpd;
 *   - memory for a body is obtained before the body is read (Content-Length
 *     known) or marked missing (chunked), and counted against
 *     partner_svc.webhook_max_body_in_flight: out of memory or an
 *     exhausted budget is a 503 decided in the callback, never an ERROR
 *     while a delivery is held; the worker parses the body in place,
 *     without a copy;
 *   - nothing between taking a batch and answering it may exit the process
 *     other than through the paths above (no proc_exit, no elog(FATAL)).
 * Only SIGKILL and SIGQUIT (immediate shutdown) escape, and those are the
 * postmaster's own crash handling.
 *
 * Design notes:
 *
 * - One worker, registered by _PG_init when the library is preloaded
 *   (backend type "partner_svc webhook worker"), restarted by the
 *   postmaster 5 s after it dies (not registered when the worker's database
 *   or role was not trusted at server start: psvc_guc_worker_refused).  It always runs; with
 *   partner_svc.webhook_port 0 (the default) it only waits for a
 *   reload.  It connects to partner_svc.worker_database, as
 *   its role (default: the bootstrap superuser), the first
 *   time it has a port, so an unused worker needs no database.
 * - Connecting to a database that does not exist is a FATAL the worker
 *   cannot catch.  The shared flag "connecting" outlives the process: a
 *   worker that starts and finds it set connects to no database, looks the
 *   database and role up in the shared catalogues (webhook_checks.c: heap
 *   scans, nothing that needs a database), and waits (pauses from 5 s
 *   doubling to 60 s, last_error saying why) until they exist; then it
 *   exits so that the next worker connects.  So a missing database costs
 *   one FATAL, not one every 5 s.  A missing extension in the database is
 *   found after connecting: last_error says so, deliveries get 503, and it
 *   is looked up again with the same pauses until it is there.
 * - Settings pinned for the worker's own transactions, whatever the role
 *   or database defaults (PGC_S_OVERRIDE): synchronous_commit = on (a 200
 *   means durable), search_path = pg_catalog, pg_temp,
 *   default_transaction_read_only = off, default_transaction_isolation =
 *   read committed, and lock_timeout = partner_svc.webhook_lock_timeout
 *   (a batch never waits longer for a lock; it is answered 503).
 * - The loop waits on one WaitEventSet: the latch (SIGHUP, SIGTERM), the
 *   postmaster's death (WL_EXIT_ON_PM_DEATH), and libmicrohttpd's epoll
 *   descriptor, with libmicrohttpd's own timeout.  Each turn runs
 *   libmicrohttpd once (webhook_listener.c), which reads whatever is ready and
 *   leaves complete deliveries suspended; the worker stores them as one
 *   batch in one transaction (webhook_store.c), then answers them all.
 *   While deliveries are still pending the wait does not sleep.
 * - Listen address, port, secret, body limit, client timeout and lock
 *   timeout are PGC_SIGHUP: after a reload the listener is reopened if its
 *   address, port or timeout changed; the others apply to the next
 *   request or batch.  The listener's limits on hostile clients are
 *   PGC_SIGHUP too (defined in webhook_http.c);
 *   psvc_wh_http_stale() says when one of them needs the listener
 *   reopened (the cap per address, or a secret removed from a listener
 *   that is not on loopback).  Database and role are PGC_POSTMASTER.
 * - Beside the webhooks, while connected, each turn runs the retention
 *   of webhook_events and webhook_rejects (run_tasks, webhook_prune.c;
 *   partner_svc.webhook_keep_*, webhook_max_rejects), in
 *   transactions of its own and a few rows at a time, so that deliveries
 *   are stored between them; the wait is shortened to when it is due.
 *   Nothing here ever waits for a partner: the records of created orders
 *   and the status polling run in the poll worker (webhook_poller.c), a
 *   process of its own, whether the listener has a port or not.
 * - Errors of a batch are caught inside webhook_store.c (abort, 500 or
 *   503, continue); any other ERROR is caught by the loop (see above).
 * - Shared state (PsvcWhShared) is written only by the worker, under its
 *   spinlock; webhook_status() copies it under the same spinlock, from
 *   any database.  Counters count from the worker's start.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/extension.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "extversion.h"
#include "guc.h"
#include "bgw.h"
#include "pg_compat.h"
#include "segments.h"
#include "webhook.h"
#include "webhook_int.h"

#define PSVC_WH_RESTART_S 5
#define PSVC_WH_RETRY_BIND_MS 5000
/* Pauses of the configuration checks: 5 s, doubling up to 60 s. */
#define PSVC_WH_CHECK_FIRST_MS 5000
#define PSVC_WH_CHECK_MAX_MS 60000
/* Pause after repeated errors in the loop: 100 ms, doubling up to 5 s. */
#define PSVC_WH_ERROR_PAUSE_MAX_MS 5000

typedef struct PsvcWhShared
{
	slock_t		mutex;
	int			pid;			/* 0 while no worker runs */
	char		state[32];		/* off, listening, failed */
	char		address[256];
	int			port;
	TimestampTz since;			/* listening since */
	PsvcWhCounters counters;
	TimestampTz stats_reset;	/* the counters started (a worker started) */
	char		last_error[256];
	int			error_kind;		/* PsvcWhErrorKind of last_error */
	bool		connecting;		/* a worker is connecting (or died doing so) */
	int			connect_failures;	/* workers in a row that died connecting */
} PsvcWhShared;

static PsvcWhShared *wh_shared = NULL;

/* the worker's own state */
static bool connected = false;
static char *running_address = NULL;	/* of the open listener */
static int	running_port = 0;
static int	running_timeout = 0;
static TimestampTz next_bind_try = 0;
static uint32 listener_generation = 0;	/* counts opens: the wait set follows */
static char last_bind_error[256];
static MemoryContext batch_cxt = NULL;
static WaitEventSet *wait_set = NULL;
static int	wait_set_fd = -2;
static uint32 wait_set_generation = 0;	/* listener_generation it watches */
static int	consecutive_errors = 0;
static bool extension_missing = false;
static long extension_pause_ms = 0;
static TimestampTz next_extension_check = 0;


PG_FUNCTION_INFO_V1(psvc_webhook_status);

static Size
wh_shmem_size(void)
{
	return MAXALIGN(sizeof(PsvcWhShared));
}

static void
wh_shmem_startup(void)
{
	bool		found;
	const char *setting;
	const char *why;

	wh_shared = ShmemInitStruct("partner_svc webhook worker", sizeof(PsvcWhShared), &found);
	if (!found)
	{
		memset(wh_shared, 0, sizeof(PsvcWhShared));
		SpinLockInit(&wh_shared->mutex);
		strlcpy(wh_shared->state, "off", sizeof(wh_shared->state));
		if (psvc_guc_worker_refused(&setting, &why))
			snprintf(wh_shared->last_error, sizeof(wh_shared->last_error),
					 "untrusted setting \"%s\": %s", setting, why);
	}
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_wh_segment = {
	.size = wh_shmem_size,
	.startup = wh_shmem_startup,
};

/*
 * Defines the webhook settings (in every process that loads the library;
 * the worker's database and role only while preloading) and, while
 * preloading, asks for shared memory and registers the worker (except
 * in binary-upgrade mode).
 */
void
psvc_worker_init(void)
{
	static const PsvcBgwSpec spec = {
		.type = "partner_svc webhook worker",
		.function = "psvc_worker_main",
		.database = true,
		.start = BgWorkerStart_RecoveryFinished,
		.restart_s = PSVC_WH_RESTART_S,
	};

	/* the settings are guc.c's; without preloading there is no worker */
	if (!process_shared_preload_libraries_in_progress)
		return;

	/* the poll worker: same rules (binary upgrade, a refused setting) */
	psvc_wh_poller_init();

	/*
	 * pg_upgrade runs both servers in binary-upgrade mode: the worker
	 * would listen and store webhooks the upgrade then discards (the new
	 * cluster's files are replaced by the old one's), or stay connected
	 * to the database pg_upgrade drops and recreates (docs/upgrades.md).
	 */
	if (psvc_bgw_may_register("partner_svc webhook worker stays stopped",
							  "Correct partner_svc.worker_database and partner_svc.worker_role and restart the server; until then no webhook is received and nothing is polled."))
		psvc_bgw_register(&spec);
}

/*
 * What last_error came from, so that the next success of the same kind
 * clears it: a condition the worker checks (the database, the extension,
 * the listener's address) is cleared by its own message when the check
 * passes; an error storing a batch by the next batch stored; an error of
 * a turn of the loop (its tasks) by the next good turn.
 */
typedef enum PsvcWhErrorKind
{
	WH_ERR_CHECK,
	WH_ERR_STORE,
	WH_ERR_TURN
} PsvcWhErrorKind;

/* Records the last error for webhook_status() (worker only). */
static void
set_error_of(PsvcWhErrorKind kind, const char *msg)
{
	if (wh_shared == NULL)
		return;
	SpinLockAcquire(&wh_shared->mutex);
	strlcpy(wh_shared->last_error, msg, sizeof(wh_shared->last_error));
	wh_shared->error_kind = kind;
	SpinLockRelease(&wh_shared->mutex);
}

/* Clears last_error when it came from an operation of kind that now succeeded. */
static void
clear_error_of(PsvcWhErrorKind kind)
{
	if (wh_shared == NULL)
		return;
	SpinLockAcquire(&wh_shared->mutex);
	if (wh_shared->error_kind == kind)
		wh_shared->last_error[0] = '\0';
	SpinLockRelease(&wh_shared->mutex);
}

static void
worker_set_error(const char *msg)
{
	set_error_of(WH_ERR_CHECK, msg);
}

/* the store's sink: an error storing a batch, and a batch stored */
static void
store_set_error(const char *msg)
{
	set_error_of(WH_ERR_STORE, msg);
}

static void
store_stored(void)
{
	clear_error_of(WH_ERR_STORE);
}

/* Clears last_error when it is msg (the condition it reported is over). */
static void
worker_clear_error(const char *msg)
{
	if (wh_shared == NULL)
		return;
	SpinLockAcquire(&wh_shared->mutex);
	if (strcmp(wh_shared->last_error, msg) == 0)
		wh_shared->last_error[0] = '\0';
	SpinLockRelease(&wh_shared->mutex);
}

/* How the store reports to webhook_status() (webhook_int.h). */
static void worker_extension_missing(void);

static const PsvcWhStatusSink status_sink = {
	.set_error = store_set_error,
	.clear_error = worker_clear_error,
	.stored = store_stored,
	.extension_missing = worker_extension_missing,
};

/* Publishes state and counters (worker only). */
static void
publish(const char *state)
{
	PsvcWhCounters counters;

	if (wh_shared == NULL)
		return;
	psvc_wh_http_counters(&counters);
	SpinLockAcquire(&wh_shared->mutex);
	if (state != NULL)
	{
		strlcpy(wh_shared->state, state, sizeof(wh_shared->state));
		strlcpy(wh_shared->address, running_address ? running_address : psvc_guc_webhook.address,
				sizeof(wh_shared->address));
		wh_shared->port = running_address ? running_port : psvc_guc_webhook.port;
		wh_shared->since = running_address ? GetCurrentTimestamp() : 0;
	}
	wh_shared->counters = counters;
	SpinLockRelease(&wh_shared->mutex);
}

/*
 * before_shmem_exit callback of the worker: every exit (FATAL, SIGTERM,
 * postmaster death, proc_exit) passes here after the transaction, if
 * any, was aborted.  Answers the held deliveries and stops libmicrohttpd,
 * in that order (see the invariant), then records the exit; a worker that
 * dies while connecting leaves "connecting" set for the next one.
 */
static void
worker_exit(int code, Datum arg)
{
	PsvcWhCounters counters;

	psvc_wh_http_stop();
	if (wh_shared == NULL)
		return;
	psvc_wh_http_counters(&counters);
	SpinLockAcquire(&wh_shared->mutex);
	wh_shared->pid = 0;
	strlcpy(wh_shared->state, "off", sizeof(wh_shared->state));
	wh_shared->counters = counters;
	if (psvc_bgw_in_connect() && ProcDiePending)
		wh_shared->connecting = false;	/* terminated, not refused */
	else if (psvc_bgw_in_connect())
	{
		wh_shared->connect_failures++;
		snprintf(wh_shared->last_error, sizeof(wh_shared->last_error),
				 "could not connect to database \"%s\"%s%s; see the server log",
				 psvc_guc_worker.database, psvc_guc_worker.role[0] ? " as role " : "", psvc_guc_worker.role);
	}
	SpinLockRelease(&wh_shared->mutex);
}

static void
set_connecting(bool on)
{
	if (wh_shared == NULL)
		return;
	SpinLockAcquire(&wh_shared->mutex);
	wh_shared->connecting = on;
	if (!on)
		wh_shared->connect_failures = 0;
	SpinLockRelease(&wh_shared->mutex);
}

/*
 * Pins the settings of the worker's transactions (see the file header).
 * PGC_S_OVERRIDE wins over the role's and database's defaults and over
 * the configuration file, so a reload keeps them; called again after a
 * reload for partner_svc.webhook_lock_timeout.
 */
static void
pin_settings(void)
{
	psvc_bgw_pin_settings(psvc_guc_webhook.lock_timeout);
}

/*
 * The check of psvc_bgw_wait_for_database: the database and role can be
 * used, and the last connection did not fail more than once in a row,
 * then exits (code 1) so that the postmaster starts a worker that
 * connects; else the problem.
 */
static int	wait_failures;

static void
wait_check(char *problem, size_t len, const char *logged)
{
	psvc_wh_connect_problem(psvc_guc_worker.database, psvc_guc_worker.role, problem, len);
	if (problem[0] == '\0' && wait_failures <= 1)
	{
		ereport(LOG,
				(errmsg("partner_svc webhook worker restarts to connect to database \"%s\"",
						psvc_guc_worker.database)));
		set_connecting(false);
		worker_clear_error(logged);
		proc_exit(1);
	}
	if (problem[0] == '\0')
	{
		/* it looks fine but connecting failed: pause before trying again */
		snprintf(problem, len,
				 "could not connect to database \"%s\" %d times in a row; see the server log",
				 psvc_guc_worker.database, wait_failures);
		wait_failures = 1;
	}
}

static void
wait_failed(const char *problem)
{
	worker_set_error(problem);
	publish("failed");
}

/*
 * The previous worker died connecting (see the file header).  Connects to
 * no database, and checks with growing pauses until the database and role
 * can be used; then exits (code 1) so that the postmaster starts a worker
 * that connects.  Never returns.
 */
static void
wait_for_database(void)
{
	static const PsvcBgwDbWait wait = {
		.who = "partner_svc webhook worker",
		.hint = "It checks again after pauses growing to %d seconds; fix partner_svc.worker_database or partner_svc.worker_role, or create what is missing.",
		.activity = "waiting for the webhook database",
		.first_ms = PSVC_WH_CHECK_FIRST_MS,
		.max_ms = PSVC_WH_CHECK_MAX_MS,
		.check = wait_check,
		.failed = wait_failed,
	};
	PsvcBgwDbWait w = wait;

	SpinLockAcquire(&wh_shared->mutex);
	wait_failures = wh_shared->connect_failures;
	SpinLockRelease(&wh_shared->mutex);
	w.wait_event = psvc_wait_event(PSVC_WAIT_WORKER);
	psvc_bgw_wait_for_database(&w);
}

/*
 * The extension is missing in the worker's database: the one warning
 * (when it was there, or not looked for yet), last_error, and the next
 * look after a pause growing from 5 to 60 s.
 */
static void
note_extension_missing(void)
{
	if (!extension_missing)
		ereport(WARNING,
				(errmsg("partner_svc webhook worker answers 503: extension \"partner_svc\" is not installed in database \"%s\"",
						psvc_guc_worker.database),
				 errhint("Run CREATE EXTENSION partner_svc in the database named by partner_svc.worker_database.")));
	extension_missing = true;
	worker_set_error(PSVC_WH_NO_EXTENSION_MSG);
	extension_pause_ms = extension_pause_ms == 0 ? PSVC_WH_CHECK_FIRST_MS
		: Min(extension_pause_ms * 2, PSVC_WH_CHECK_MAX_MS);
	next_extension_check = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   extension_pause_ms);
}

/*
 * The store's report (PsvcWhStatusSink): a batch found the extension
 * missing.  Known already: only last_error (the looks go on with their
 * pauses); else, after a DROP EXTENSION, as check_extension would.
 */
static void
worker_extension_missing(void)
{
	if (extension_missing)
		worker_set_error(PSVC_WH_NO_EXTENSION_MSG);
	else
		note_extension_missing();
}

/*
 * Looks for the extension in the worker's database, again after growing
 * pauses while it is missing; sets or clears last_error accordingly.
 * Deliveries meanwhile get 503 (webhook_store.c).
 */
static void
check_extension(void)
{
	bool		found;

	if (!connected || GetCurrentTimestamp() < next_extension_check)
		return;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	found = OidIsValid(get_extension_oid("partner_svc", true));
	CommitTransactionCommand();
	if (found)
	{
		if (extension_missing)
			ereport(LOG,
					(errmsg("partner_svc webhook worker found extension \"partner_svc\" in database \"%s\"",
							psvc_guc_worker.database)));
		extension_missing = false;
		extension_pause_ms = 0;
		worker_clear_error(PSVC_WH_NO_EXTENSION_MSG);
		next_extension_check = DT_NOEND;	/* a batch notices a later DROP */
		return;
	}
	note_extension_missing();
}

static void
report_idle(void)
{
	char		buf[300];

	if (!connected)
		return;
	if (psvc_wh_http_running())
		snprintf(buf, sizeof(buf), "listening for webhooks on %s port %d",
				 running_address, running_port);
	else
		snprintf(buf, sizeof(buf), "not listening (partner_svc.webhook_port = %d)", psvc_guc_webhook.port);
	pgstat_report_activity(STATE_IDLE, buf);
}

/*
 * Makes the listener match the settings: closes it when they changed and
 * opens it when a port is set.  A failed open is retried every 5 s.
 */
static void
sync_listener(void)
{
	char		err[256];

	if (psvc_wh_http_running() &&
		(psvc_guc_webhook.port == 0 || running_port != psvc_guc_webhook.port ||
		 running_timeout != psvc_guc_webhook.header_timeout ||
		 strcmp(running_address, psvc_guc_webhook.address) != 0 ||
		 psvc_wh_http_stale()))
	{
		psvc_wh_http_stop();
		ereport(LOG, (errmsg("partner_svc webhook worker stopped listening on %s port %d",
							 running_address, running_port)));
		pfree(running_address);
		running_address = NULL;
		publish("off");
		report_idle();
	}
	if (psvc_wh_http_running() || psvc_guc_webhook.port == 0)
	{
		last_bind_error[0] = '\0';
		return;
	}
	if (GetCurrentTimestamp() < next_bind_try)
		return;
	if (!connected)
	{
		/* a FATAL in here leaves "connecting" set: see wait_for_database */
		set_connecting(true);
		psvc_bgw_connect(psvc_guc_worker.database);
		set_connecting(false);
		connected = true;
		pin_settings();
		check_extension();
	}
	running_address = MemoryContextStrdup(TopMemoryContext, psvc_guc_webhook.address);
	if (!psvc_wh_http_start(psvc_guc_webhook.address, psvc_guc_webhook.port, psvc_guc_webhook.header_timeout, err, sizeof(err)))
	{
		pfree(running_address);
		running_address = NULL;
		if (strcmp(err, last_bind_error) != 0)
			ereport(WARNING,
					(errmsg("partner_svc webhook worker cannot listen: %s", err),
					 errhint("It tries again every %d seconds; change partner_svc.webhook_listen_address or partner_svc.webhook_port and reload.",
							 PSVC_WH_RETRY_BIND_MS / 1000)));
		strlcpy(last_bind_error, err, sizeof(last_bind_error));
		worker_set_error(err);
		next_bind_try = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), PSVC_WH_RETRY_BIND_MS);
		publish("failed");
		report_idle();
		return;
	}
	if (last_bind_error[0] != '\0')
		worker_clear_error(last_bind_error);
	last_bind_error[0] = '\0';
	listener_generation++;
	running_port = psvc_guc_webhook.port;
	running_timeout = psvc_guc_webhook.header_timeout;
	ereport(LOG, (errmsg("partner_svc webhook worker listening on %s port %d, writing into database \"%s\"",
						 running_address, running_port, psvc_guc_worker.database)));
	psvc_wh_http_check_limits();
	publish("listening");
	report_idle();
}

/*
 * One turn of libmicrohttpd, and the batch it completed, if any.  An
 * ERROR escaping from here (out of memory in the batch context, say) is
 * caught by psvc_worker_main, which answers the batch 503.
 */
static void
serve(void)
{
	PsvcWhDelivery *batch;
	int			n;
	MemoryContext old;
	char		buf[64];

	psvc_wh_http_run();
	batch = psvc_wh_http_take_batch(&n);
	if (n == 0)
		return;
	snprintf(buf, sizeof(buf), "storing %d webhook deliveries", n);
	pgstat_report_activity(STATE_RUNNING, buf);
	old = MemoryContextSwitchTo(batch_cxt);
	psvc_wh_store_batch(batch, n, &status_sink);
	MemoryContextSwitchTo(old);
	MemoryContextReset(batch_cxt);
	psvc_wh_http_answer(batch);
	psvc_wh_http_run();			/* sends the answers */
	pgstat_report_stat(false);
	report_idle();
}

/*
 * The worker's duty beside the webhooks: the retention of received
 * webhooks (webhook_prune.c), in transactions of its own.  It runs while
 * the worker is connected, that is once partner_svc.webhook_port is
 * set.  An ERROR is caught by psvc_worker_main as any other.
 */
static void
run_tasks(void)
{
	PsvcWhCounters counters;

	if (!psvc_extv_ready("partner_svc webhook worker"))
		return;					/* objects of another version: docs/upgrades.md */
	psvc_wh_http_counters(&counters);
	psvc_wh_prune(counters.rejected);
	pgstat_report_stat(false);
}

/* The wait of the loop, timeout ms (-1: any), shortened for the duties. */
static long
tasks_timeout(long timeout)
{
	long		prune = psvc_wh_prune_wait_ms();

	if (psvc_extv_waiting())	/* the duties wait for the UPDATE: no spin */
		return timeout < 0 ? PSVC_EXTV_RECHECK_MS : Min(timeout, PSVC_EXTV_RECHECK_MS);
	return timeout < 0 ? prune : Min(timeout, prune);
}

/*
 * Error recovery of the loop, run at its sigsetjmp point (as the
 * autovacuum launcher does): reports the error, aborts the transaction,
 * answers every held delivery 503 and frees the batch memory.  The
 * listener stays open.  Errors repeating without a good turn in between
 * make the loop pause (100 ms doubling to 5 s) so that they cannot spin.
 */
static long
recover_from_error(void)
{
	ErrorData  *edata = psvc_bgw_recover();

	psvc_wh_http_release_held();
	MemoryContextReset(batch_cxt);
	set_error_of(WH_ERR_TURN, edata->message);
	FreeErrorData(edata);
	publish(NULL);
	report_idle();
	RESUME_INTERRUPTS();
	consecutive_errors++;
	return psvc_bgw_error_pause(consecutive_errors, PSVC_WH_ERROR_PAUSE_MAX_MS);
}

/*
 * Entry point of the worker (bgw_function_name).  Returns only through
 * proc_exit: SIGTERM (die()), FATAL, the postmaster's death.  The
 * postmaster starts the worker again after 5 s unless it is shutting
 * down (so pg_terminate_backend() of the worker restarts it).
 */
void
psvc_worker_main(Datum arg)
{
	sigjmp_buf	local_sigjmp_buf;
	volatile long pause_ms = 0;
	bool		was_connecting;

	psvc_bgw_signals();

	batch_cxt = AllocSetContextCreate(TopMemoryContext, "partner_svc webhook batch",
									  ALLOCSET_DEFAULT_SIZES);
	psvc_wh_http_reset_counters();
	was_connecting = false;
	if (wh_shared != NULL)
	{
		SpinLockAcquire(&wh_shared->mutex);
		wh_shared->pid = MyProcPid;
		wh_shared->stats_reset = GetCurrentTimestamp();
		was_connecting = wh_shared->connecting;
		if (!was_connecting)
			wh_shared->last_error[0] = '\0';
		SpinLockRelease(&wh_shared->mutex);
	}
	publish("off");
	before_shmem_exit(worker_exit, (Datum) 0);
	if (was_connecting)
		wait_for_database();

	if (sigsetjmp(local_sigjmp_buf, 1) != 0)
		pause_ms = recover_from_error();
	PG_exception_stack = &local_sigjmp_buf;

	for (;;)
	{
		WaitEvent	ev[4];
		long		timeout;
		int			nev;

		if (psvc_bgw_turn(&pause_ms, psvc_wait_event(PSVC_WAIT_WORKER)))
		{
			if (connected)
				pin_settings();
			if (psvc_wh_http_running())
				psvc_wh_http_check_limits();
		}
		sync_listener();
		check_extension();

		/*
		 * A reopened listener may get the same descriptor number as the
		 * closed one, which the set no longer watches: rebuild it on every
		 * open, not only when the number changes.
		 */
		if (wait_set == NULL || wait_set_fd != psvc_wh_http_fd() ||
			wait_set_generation != listener_generation)
		{
			if (wait_set)
				FreeWaitEventSet(wait_set);
			wait_set = NULL;
			wait_set = psvc_wait_set_create(3);
			AddWaitEventToSet(wait_set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
			AddWaitEventToSet(wait_set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
			wait_set_fd = psvc_wh_http_fd();
			wait_set_generation = listener_generation;
			if (wait_set_fd >= 0)
				AddWaitEventToSet(wait_set, WL_SOCKET_READABLE, wait_set_fd, NULL, NULL);
		}

		if (psvc_wh_http_pending() > 0)
			timeout = 0;
		else if (psvc_wh_http_running())
			timeout = psvc_wh_http_timeout();
		else if (psvc_guc_webhook.port != 0)
			timeout = PSVC_WH_RETRY_BIND_MS;
		else
			timeout = -1;
		if (extension_missing && timeout != 0)
			timeout = timeout < 0 ? extension_pause_ms : Min(timeout, extension_pause_ms);
		if (connected && !extension_missing && timeout != 0)
			timeout = tasks_timeout(timeout);

		nev = WaitEventSetWait(wait_set, timeout, ev, lengthof(ev), psvc_wait_event(PSVC_WAIT_WORKER));
		for (int i = 0; i < nev; i++)
			if (ev[i].events & WL_LATCH_SET)
				ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (psvc_wh_http_running())
			serve();
		if (connected && !extension_missing)
			run_tasks();
		consecutive_errors = 0;
		clear_error_of(WH_ERR_TURN);
		publish(NULL);
	}
}

/* now - since, as an interval (palloc'd in CurrentMemoryContext). */
static Interval *
interval_since(TimestampTz since)
{
	Interval   *iv = palloc0(sizeof(Interval));
	TimestampTz now = GetCurrentTimestamp();

	if (since != 0 && now > since)
		iv->time = now - since;
	return iv;
}

/*
 * partner_svc.webhook_status(): one row with the worker's state, where it
 * listens, and its counters.  Without the preloaded library the state is
 * "not loaded" and the rest null.
 */
Datum
psvc_webhook_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[23];
	bool		nulls[23];
	PsvcWhShared copy;
	PsvcPollStatus poll;
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(nulls, 0, sizeof(nulls));
	if (wh_shared == NULL)
	{
		memset(nulls, 1, sizeof(nulls));
		nulls[0] = false;
		values[0] = CStringGetTextDatum("not loaded");
		nulls[20] = false;
		values[20] = CStringGetTextDatum("not loaded");
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	}
	SpinLockAcquire(&wh_shared->mutex);
	memcpy(&copy, wh_shared, sizeof(copy));
	SpinLockRelease(&wh_shared->mutex);

	values[i++] = CStringGetTextDatum(copy.pid == 0 ? "stopped" : copy.state);

	/*
	 * No worker process (a standby, where it starts when recovery ends, or
	 * between two workers): where it is configured to listen, as the
	 * worker itself shows while it does not listen.
	 */
	values[i++] = CStringGetTextDatum(copy.pid == 0 ? psvc_guc_webhook.address : copy.address);
	values[i++] = Int32GetDatum(copy.pid == 0 ? psvc_guc_webhook.port : copy.port);
	values[i++] = CStringGetTextDatum(psvc_guc_worker.database);
	nulls[i] = copy.pid == 0;
	values[i++] = Int32GetDatum(copy.pid);
	nulls[i] = copy.since == 0;
	values[i++] = TimestampTzGetDatum(copy.since);
	values[i++] = Int64GetDatum(copy.counters.requests);
	values[i++] = Int64GetDatum(copy.counters.accepted);
	values[i++] = Int64GetDatum(copy.counters.duplicates);
	values[i++] = Int64GetDatum(copy.counters.rejected);
	values[i++] = Int64GetDatum(copy.counters.unauthorized);
	values[i++] = Int64GetDatum(copy.counters.too_large);
	values[i++] = Int64GetDatum(copy.counters.not_found);
	values[i++] = Int64GetDatum(copy.counters.bad_method);
	values[i++] = Int64GetDatum(copy.counters.failed);
	values[i++] = Int64GetDatum(copy.counters.timed_out);
	values[i++] = Int64GetDatum(copy.counters.batches);
	values[i++] = Int32GetDatum(copy.counters.max_batch);
	nulls[i] = copy.last_error[0] == '\0';
	values[i++] = CStringGetTextDatum(copy.last_error);
	nulls[i] = copy.stats_reset == 0;
	values[i++] = TimestampTzGetDatum(copy.stats_reset);
	/* the poll worker's */
	psvc_wh_poller_status(&poll);
	values[i++] = CStringGetTextDatum(poll.state);
	nulls[i] = poll.lag_since == 0;
	values[i++] = IntervalPGetDatum(interval_since(poll.lag_since));
	values[i++] = Int64GetDatum(poll.created_waits);
	Assert(i == lengthof(values));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
