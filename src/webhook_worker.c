/*-------------------------------------------------------------------------
 *
 * webhook_worker.c
 *		  The background worker that receives the partner service's
 *		  webhooks: its settings, registration, shared state, wait loop,
 *		  and partner_svc.webhook_status().
 *
 * Design notes:
 *
 * - One worker, registered by _PG_init when the library is preloaded
 *   (backend type "partner_svc webhook worker"), restarted by the
 *   postmaster 5 s after it dies.  It always runs; with
 *   partner_svc.webhook_port = 0 (the default) it only waits for a
 *   reload.  It connects to partner_svc.webhook_database the first time
 *   it has a port, so an unused worker needs no database.
 * - The loop waits on one WaitEventSet: the latch (SIGHUP, SIGTERM), the
 *   postmaster's death (WL_EXIT_ON_PM_DEATH), and libmicrohttpd's epoll
 *   descriptor, with libmicrohttpd's own timeout.  Each turn runs
 *   libmicrohttpd once (webhook_http.c), which reads whatever is ready and
 *   leaves complete deliveries suspended; the worker stores them as one
 *   batch in one transaction (webhook_store.c), then answers them all.
 *   While deliveries are still pending the wait does not sleep.
 * - Listen address, port, secret, body limit and client timeout are
 *   PGC_SIGHUP: after a reload the listener is reopened if its address,
 *   port or timeout changed; secret and limit apply to the next request.
 *   The listener's limits on hostile clients are PGC_SIGHUP too (defined
 *   here, read by webhook_http.c); psvc_wh_http_stale() says when one of
 *   them needs the listener reopened (the cap per address, or a secret
 *   removed from a listener that is not on loopback).
 *   The database is PGC_POSTMASTER.
 * - Errors of a batch are caught inside webhook_store.c (abort, 500,
 *   continue); an error anywhere else in the loop ends the worker, and the
 *   postmaster starts it again.
 * - Shared state (PsvcWhShared) is written only by the worker, under its
 *   spinlock, once per turn; webhook_status() copies it under the same
 *   spinlock.  Counters count from the worker's start.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "partner_svc.h"

#define PSVC_WH_RESTART_S 5
#define PSVC_WH_RETRY_BIND_MS 5000

/* settings */
static char *wh_listen_address = NULL;
static int	wh_port = 0;
static char *wh_database = NULL;
static int	wh_client_timeout = 10;
char	   *psvc_wh_secret = NULL;
int			psvc_wh_max_body = 65536;
char	   *psvc_wh_secret_previous = NULL;
int			psvc_wh_header_timeout = 10;
int			psvc_wh_request_timeout = 30;
int			psvc_wh_min_rate = 1024;
int			psvc_wh_max_per_address = 64;
int			psvc_wh_max_in_flight = 16 * 1024 * 1024;

PsvcWhCounters psvc_wh_counters;

typedef struct PsvcWhShared
{
	slock_t		mutex;
	int			pid;			/* 0 while no worker runs */
	char		state[32];		/* off, listening, failed */
	char		address[256];
	int			port;
	TimestampTz since;			/* listening since */
	PsvcWhCounters counters;
	char		last_error[256];
} PsvcWhShared;

static PsvcWhShared *wh_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* the worker's own state */
static bool connected = false;
static char *running_address = NULL;	/* of the open listener */
static int	running_port = 0;
static int	running_timeout = 0;
static TimestampTz next_bind_try = 0;
static uint32 listener_generation = 0;	/* counts opens: the wait set follows */
static char last_bind_error[256];

PG_FUNCTION_INFO_V1(psvc_webhook_status);

static bool
check_listen_address(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || (*newval)[0] == '\0')
	{
		GUC_check_errdetail("The listen address must not be empty.");
		return false;
	}
	return true;
}

static void
wh_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(PsvcWhShared)));
}

static void
wh_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wh_shared = ShmemInitStruct("partner_svc webhook worker", sizeof(PsvcWhShared), &found);
	if (!found)
	{
		memset(wh_shared, 0, sizeof(PsvcWhShared));
		SpinLockInit(&wh_shared->mutex);
		strlcpy(wh_shared->state, "off", sizeof(wh_shared->state));
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Defines the webhook settings (in every process that loads the library;
 * webhook_database only while preloading) and, while preloading, asks for
 * shared memory and registers the worker.
 */
void
psvc_worker_init(void)
{
	BackgroundWorker w;

	DefineCustomStringVariable("partner_svc.webhook_listen_address",
							   "Address the webhook worker listens on.",
							   "A numeric IPv4 or IPv6 address or a host name.",
							   &wh_listen_address, "127.0.0.1",
							   PGC_SIGHUP, 0, check_listen_address, NULL, NULL);
	DefineCustomIntVariable("partner_svc.webhook_port",
							"TCP port of the webhook listener; 0 turns it off.",
							NULL,
							&wh_port, 0, 0, 65535,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("partner_svc.webhook_secret",
							   "Value the X-Partner-Webhook-Secret header of each webhook must have.",
							   "Empty: no header is required.",
							   &psvc_wh_secret, "",
							   PGC_SIGHUP, GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("partner_svc.webhook_max_body",
							"Largest webhook body accepted; larger ones are answered 413.",
							NULL,
							&psvc_wh_max_body, 65536, 1024, 16 * 1024 * 1024,
							PGC_SIGHUP, GUC_UNIT_BYTE, NULL, NULL, NULL);
	DefineCustomIntVariable("partner_svc.webhook_client_timeout",
							"Idle time after which the webhook listener closes a connection.",
							"A client that sends nothing for this long is disconnected.",
							&wh_client_timeout, 10, 1, 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	/* the listener's defences against hostile clients (webhook_http.c) */
	DefineCustomStringVariable("partner_svc.webhook_secret_previous",
							   "Former value of partner_svc.webhook_secret, still accepted during a rotation.",
							   "Empty: only partner_svc.webhook_secret is accepted.",
							   &psvc_wh_secret_previous, "",
							   PGC_SIGHUP, GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("partner_svc.webhook_header_timeout",
							"Time a webhook request has for its headers.",
							"Counted from the opening of the connection or the end of the previous request on it; then the connection is closed.",
							&psvc_wh_header_timeout, 10, 1, 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("partner_svc.webhook_request_timeout",
							"Time a webhook request has for its headers and its whole body.",
							"Then the connection is closed.",
							&psvc_wh_request_timeout, 30, 1, 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("partner_svc.webhook_min_rate",
							"Slowest average rate, in bytes per second, at which a webhook body may arrive.",
							"Checked from 2 seconds after the headers; 0 turns the check off.",
							&psvc_wh_min_rate, 1024, 0, 1024 * 1024 * 1024,
							PGC_SIGHUP, GUC_UNIT_BYTE, NULL, NULL, NULL);
	DefineCustomIntVariable("partner_svc.webhook_max_connections_per_address",
							"Most connections open at once to the webhook listener from one source address.",
							"0: no cap per address (the listener's total of 512 still applies).",
							&psvc_wh_max_per_address, 64, 0, 512,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("partner_svc.webhook_max_body_in_flight",
							"Most webhook body bytes held at once over all open requests.",
							"A request that does not fit is answered 503 with Retry-After.",
							&psvc_wh_max_in_flight, 16 * 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024,
							PGC_SIGHUP, GUC_UNIT_BYTE, NULL, NULL, NULL);

	/*
	 * A PGC_POSTMASTER setting can only be defined while preloading: guc.c
	 * ends the process (FATAL) otherwise, which would make the library
	 * unloadable by CREATE EXTENSION or LOAD.  Without preloading there is
	 * no worker, so there is nothing for it to set.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomStringVariable("partner_svc.webhook_database",
							   "Database the webhook worker writes into.",
							   "The extension must be installed there.",
							   &wh_database, "postgres",
							   PGC_POSTMASTER, 0, NULL, NULL, NULL);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = wh_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = wh_shmem_startup;

	memset(&w, 0, sizeof(w));
	snprintf(w.bgw_name, BGW_MAXLEN, "partner_svc webhook worker");
	snprintf(w.bgw_type, BGW_MAXLEN, "partner_svc webhook worker");
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_RecoveryFinished;
	w.bgw_restart_time = PSVC_WH_RESTART_S;
	snprintf(w.bgw_library_name, BGW_MAXLEN, "partner_svc");
	snprintf(w.bgw_function_name, BGW_MAXLEN, "psvc_worker_main");
	RegisterBackgroundWorker(&w);
}

/* Records the last error for webhook_status() (worker only). */
void
psvc_worker_set_error(const char *msg)
{
	if (wh_shared == NULL)
		return;
	SpinLockAcquire(&wh_shared->mutex);
	strlcpy(wh_shared->last_error, msg, sizeof(wh_shared->last_error));
	SpinLockRelease(&wh_shared->mutex);
}

/* Publishes state and counters (worker only). */
static void
publish(const char *state)
{
	if (wh_shared == NULL)
		return;
	SpinLockAcquire(&wh_shared->mutex);
	if (state != NULL)
	{
		strlcpy(wh_shared->state, state, sizeof(wh_shared->state));
		strlcpy(wh_shared->address, running_address ? running_address : wh_listen_address,
				sizeof(wh_shared->address));
		wh_shared->port = running_address ? running_port : wh_port;
		wh_shared->since = running_address ? GetCurrentTimestamp() : 0;
	}
	wh_shared->counters = psvc_wh_counters;
	SpinLockRelease(&wh_shared->mutex);
}

static void
worker_exit(int code, Datum arg)
{
	psvc_wh_http_stop();
	if (wh_shared == NULL)
		return;
	SpinLockAcquire(&wh_shared->mutex);
	wh_shared->pid = 0;
	strlcpy(wh_shared->state, "off", sizeof(wh_shared->state));
	SpinLockRelease(&wh_shared->mutex);
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
		snprintf(buf, sizeof(buf), "not listening (partner_svc.webhook_port = %d)", wh_port);
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
		(wh_port == 0 || running_port != wh_port ||
		 running_timeout != wh_client_timeout ||
		 strcmp(running_address, wh_listen_address) != 0 ||
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
	if (psvc_wh_http_running() || wh_port == 0)
	{
		last_bind_error[0] = '\0';
		return;
	}
	if (GetCurrentTimestamp() < next_bind_try)
		return;
	if (!connected)
	{
		BackgroundWorkerInitializeConnection(wh_database, NULL, 0);
		connected = true;
	}
	if (!psvc_wh_http_start(wh_listen_address, wh_port, wh_client_timeout, err, sizeof(err)))
	{
		if (strcmp(err, last_bind_error) != 0)
			ereport(WARNING,
					(errmsg("partner_svc webhook worker cannot listen: %s", err),
					 errhint("It tries again every %d seconds; change partner_svc.webhook_listen_address or partner_svc.webhook_port and reload.",
							 PSVC_WH_RETRY_BIND_MS / 1000)));
		strlcpy(last_bind_error, err, sizeof(last_bind_error));
		psvc_worker_set_error(err);
		next_bind_try = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), PSVC_WH_RETRY_BIND_MS);
		publish("failed");
		report_idle();
		return;
	}
	last_bind_error[0] = '\0';
	listener_generation++;
	running_address = MemoryContextStrdup(TopMemoryContext, wh_listen_address);
	running_port = wh_port;
	running_timeout = wh_client_timeout;
	ereport(LOG, (errmsg("partner_svc webhook worker listening on %s port %d, writing into database \"%s\"",
						 running_address, running_port, wh_database)));
	publish("listening");
	report_idle();
}

/* One turn of libmicrohttpd, and the batch it completed, if any. */
static void
serve(MemoryContext batch_cxt)
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
	psvc_wh_store_batch(batch, n);
	MemoryContextSwitchTo(old);
	MemoryContextReset(batch_cxt);
	psvc_wh_http_answer(batch);
	psvc_wh_http_run();			/* sends the answers */
	pgstat_report_stat(false);
	report_idle();
}

/*
 * Entry point of the worker (bgw_function_name).  Returns only by
 * proc_exit(1), on SIGTERM or an ERROR outside a batch: the postmaster
 * starts the worker again after 5 s unless it is shutting down (so
 * pg_terminate_backend() of the worker restarts it).
 */
void
psvc_worker_main(Datum arg)
{
	MemoryContext batch_cxt;
	WaitEventSet *set = NULL;
	int			set_fd = -2;
	uint32		set_generation = 0;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	batch_cxt = AllocSetContextCreate(TopMemoryContext, "partner_svc webhook batch",
									  ALLOCSET_DEFAULT_SIZES);
	memset(&psvc_wh_counters, 0, sizeof(psvc_wh_counters));
	if (wh_shared != NULL)
	{
		SpinLockAcquire(&wh_shared->mutex);
		wh_shared->pid = MyProcPid;
		wh_shared->last_error[0] = '\0';
		SpinLockRelease(&wh_shared->mutex);
	}
	publish("off");
	before_shmem_exit(worker_exit, (Datum) 0);

	for (;;)
	{
		WaitEvent	ev[4];
		long		timeout;
		int			nev;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (ShutdownRequestPending)
			break;
		sync_listener();

		/*
		 * A reopened listener may get the same descriptor number as the
		 * closed one, which the set no longer watches: rebuild it on every
		 * open, not only when the number changes.
		 */
		if (set == NULL || set_fd != psvc_wh_http_fd() ||
			set_generation != listener_generation)
		{
			if (set)
				FreeWaitEventSet(set);
			set = CreateWaitEventSet(TopMemoryContext, 3);
			AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
			AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
			set_fd = psvc_wh_http_fd();
			set_generation = listener_generation;
			if (set_fd >= 0)
				AddWaitEventToSet(set, WL_SOCKET_READABLE, set_fd, NULL, NULL);
		}

		if (psvc_wh_http_pending() > 0)
			timeout = 0;
		else if (psvc_wh_http_running())
			timeout = psvc_wh_http_timeout();
		else if (wh_port != 0)
			timeout = PSVC_WH_RETRY_BIND_MS;
		else
			timeout = -1;

		nev = WaitEventSetWait(set, timeout, ev, lengthof(ev), PG_WAIT_EXTENSION);
		for (int i = 0; i < nev; i++)
			if (ev[i].events & WL_LATCH_SET)
				ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (psvc_wh_http_running())
			serve(batch_cxt);
		publish(NULL);
	}
	if (set)
		FreeWaitEventSet(set);
	proc_exit(1);
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
	Datum		values[19];
	bool		nulls[19];
	PsvcWhShared copy;
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(nulls, 0, sizeof(nulls));
	if (wh_shared == NULL)
	{
		memset(nulls, 1, sizeof(nulls));
		nulls[0] = false;
		values[0] = CStringGetTextDatum("not loaded");
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	}
	SpinLockAcquire(&wh_shared->mutex);
	memcpy(&copy, wh_shared, sizeof(copy));
	SpinLockRelease(&wh_shared->mutex);

	values[i++] = CStringGetTextDatum(copy.pid == 0 ? "stopped" : copy.state);
	values[i++] = CStringGetTextDatum(copy.address);
	values[i++] = Int32GetDatum(copy.port);
	values[i++] = CStringGetTextDatum(wh_database);
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
	Assert(i == lengthof(values));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
