/*-------------------------------------------------------------------------
 *
 * bgw.h
 *		  The skeleton the background workers of partner_svc share (bgw.c):
 *		  signals, reload, the settings pinned for their transactions, and
 *		  the recovery from an ERROR at the sigsetjmp point of their loop.
 *
 * A worker's main function calls psvc_bgw_signals() first, pins its
 * settings once connected, calls psvc_bgw_reload() at the top of each
 * turn, and at its sigsetjmp point psvc_bgw_recover(), then does its own
 * clean-up, RESUME_INTERRUPTS(), and waits psvc_bgw_error_pause() before
 * the next turn.  Used by the webhook worker and the poll worker.
 *
 * Memory: the ErrorData psvc_bgw_recover returns is in TopMemoryContext
 * (the caller frees it); nothing else is allocated.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/bgw.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_BGW_H
#define PSVC_BGW_H

/* SIGHUP: reload at the next turn; SIGTERM: die(); then unblocks signals. */
extern void psvc_bgw_signals(void);
/* Processes a pending reload; true when one was processed. */
extern bool psvc_bgw_reload(void);
/*
 * Pins the settings of the worker's own transactions whatever the role's
 * or database's defaults: synchronous_commit on, a safe search_path,
 * read-write, read committed, and lock_timeout (ms, 0: none).
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
 * none after the first, then 100 ms doubling up to max_ms.
 */
extern long psvc_bgw_error_pause(int consecutive, long max_ms);

#endif							/* PSVC_BGW_H */
