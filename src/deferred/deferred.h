/*-------------------------------------------------------------------------
 *
 * deferred.h
 *		  Deferred calls: a call of a SQL function that changes state at a
 *		  partner, queued by partner_svc.defer() in the caller's
 *		  transaction and sent exactly once after its COMMIT by the
 *		  senders, background workers of their own
 *		  (docs/deferred-calls.md).
 *
 * The module's files: deferred_ops.c (which functions may be deferred,
 * their arguments checked, the partner objects a call is about),
 * deferred_queue.c (defer(), deferred_result(), deferred_origin(), the
 * wake-up at commit and the senders' shared slots), deferred_checks.c
 * (whether the worker's database can be used, without connecting),
 * deferred_sender.c
 * (the workers' loop: claiming calls, the maintenance) and
 * deferred_send.c (running one claimed call through the SQL function a
 * direct call uses, and recording its outcome).  Their private
 * declarations are in deferred_int.h.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/deferred/deferred.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_DEFERRED_H
#define PSVC_DEFERRED_H

/*
 * While preloading: asks for the senders' shared slots and registers
 * partner_svc.deferred_senders (at its value then) as background
 * workers.  From _PG_init.
 */
extern void psvc_deferred_init(void);
struct PsvcSegment;				/* segments.h */
/* The senders' shared slots. */
extern const struct PsvcSegment psvc_def_segment;

#endif							/* PSVC_DEFERRED_H */
