/*-------------------------------------------------------------------------
 *
 * bgw.h
 *		  The skeleton the background workers of partner_svc share (bgw.c):
 *		  registration (and the rules that keep a worker stopped), signals,
 *		  reload, the wait for the worker's database before connecting, the
 *		  connection, the settings pinned for their transactions, the
 *		  recovery from an ERROR at the sigsetjmp point of their loop and
 *		  the pauses after it.
 *
 * A worker's main function calls psvc_bgw_signals() first, pins its
 * settings once connected, calls psvc_bgw_reload() at the top of each
 * turn, and at its sigsetjmp point psvc_bgw_recover(), then does its own
 * clean-up, RESUME_INTERRUPTS(), and waits psvc_bgw_error_pause() before
 * the next turn.  Used by the webhook worker, the poll worker, the deferred
 * senders and the quota worker; the gate on the version of the
 * extension's objects is extversion.h's psvc_extv_ready().
 *
 * Memory: the ErrorData psvc_bgw_recover returns is in TopMemoryContext
 * (the caller frees it); nothing else is allocated.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/bgw.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_BGW_H
#define PSVC_BGW_H

#include "postmaster/bgworker.h"

#include "pg_compat.h"

/* A worker of partner_svc, as registered (library partner_svc). */
typedef struct PsvcBgwSpec
{
	const char *name;			/* bgw_name; NULL: the type */
	const char *type;			/* bgw_type: "partner_svc webhook worker" */
	const char *function;		/* bgw_function_name */
	bool		database;		/* may connect to a database */
	BgWorkerStartTime start;
	int			restart_s;		/* bgw_restart_time */
	Datum		arg;			/* bgw_main_arg */
} PsvcBgwSpec;

/*
 * Whether a worker of the worker's database and role may be registered at
 * server start: only while preloading, never in binary-upgrade mode
 * (pg_upgrade would discard its work, or find the database it drops held
 * open: docs/upgrades.md), never when psvc_guc_worker_refused().  A refusal
 * is a WARNING "<who>: untrusted setting ..." (who: "partner_svc webhook
 * worker stays stopped") with hint, unless who is NULL.
 */
extern bool psvc_bgw_may_register(const char *who, const char *hint);
/* Registers spec at server start (RegisterBackgroundWorker). */
extern void psvc_bgw_register(const PsvcBgwSpec *spec);
/* Starts spec as a dynamic worker; false when no slot is free. */
extern bool psvc_bgw_start(const PsvcBgwSpec *spec);

/* SIGHUP: reload at the next turn; SIGTERM: die(); then unblocks signals. */
extern void psvc_bgw_signals(void);
/*
 * The same, but SIGTERM only sets psvc_bgw_terminating() and the latch,
 * for a worker that ends its loop itself (the quota worker, which has no
 * transaction to interrupt and exits with code 0).
 */
extern void psvc_bgw_signals_soft(void);
extern bool psvc_bgw_terminating(void);
/* Waits ms on the latch (and the postmaster's death) under wait_event. */
extern void psvc_bgw_pause(long ms, uint32 wait_event);
/*
 * The top of a turn of a worker's loop: the pause *pause_ms asks for (the
 * one psvc_bgw_error_pause gave at the sigsetjmp point; then 0), the
 * interrupts, and a pending reload.  True when the configuration was
 * reloaded (the caller pins its settings again).
 */
extern bool psvc_bgw_turn(volatile long *pause_ms, uint32 wait_event);

/*
 * The wait before connecting, while the worker's database or role cannot
 * be used (a connection to a missing database is a FATAL the worker
 * cannot catch): connected to no database, check() is called after
 * pauses from first_ms doubling to max_ms, with one WARNING "<who> cannot
 * start: <problem>" (hint: a format with the %d of max_ms in seconds) per
 * new problem, then failed() (may be NULL).  check() fills problem, or
 * exits the process when the worker can go on (each worker hands over in
 * its own way); logged is the problem last warned of ("" none).
 */
typedef struct PsvcBgwDbWait
{
	const char *who;
	const char *hint;
	const char *activity;		/* pgstat_report_activity while waiting */
	uint32		wait_event;
	long		first_ms;
	long		max_ms;
	void		(*check) (char *problem, size_t len, const char *logged);
	void		(*failed) (const char *problem);
} PsvcBgwDbWait;

pg_noreturn extern void psvc_bgw_wait_for_database(const PsvcBgwDbWait *wait);
/*
 * Connects to database as partner_svc.worker_role (default: the bootstrap
 * superuser); psvc_bgw_in_connect() is true meanwhile, for an exit
 * callback to tell a worker that died connecting.
 */
extern void psvc_bgw_connect(const char *database);
extern bool psvc_bgw_in_connect(void);
/* Processes a pending reload; true when one was processed. */
extern bool psvc_bgw_reload(void);
/*
 * Pins the settings of the worker's own transactions whatever the role's
 * or database's defaults: synchronous_commit on, a safe search_path,
 * read-write, read committed, and lock_timeout (ms, 0: none; -1: left
 * as the role's or database's default).
 */
extern void psvc_bgw_pin_settings(int lock_timeout_ms);
/*
 * At the sigsetjmp point: reports the error, aborts the transaction and
 * releases what an ERROR leaves held.  Returns with interrupts held and
 * the error's data (TopMemoryContext, current context).
 */
extern ErrorData *psvc_bgw_recover(void);
/*
 * The pause before the next turn after the consecutive-th error in a row:
 * none after the first, then 100 ms doubling up to max_ms.  A worker
 * that pauses after the first error too asks for consecutive + 1.
 */
extern long psvc_bgw_error_pause(int consecutive, long max_ms);

#endif							/* PSVC_BGW_H */
