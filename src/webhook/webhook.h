/*-------------------------------------------------------------------------
 *
 * webhook.h
 *		  The webhook receiver of partner_svc: a background worker that
 *		  listens for the partner's webhooks over HTTP and stores them.
 *
 * This is all that the rest of the extension sees of it: _PG_init
 * (partner_svc.c) defines its settings and registers it.  The module is
 * webhook_worker.c (the worker's loop, its settings and its status in
 * shared memory), webhook_store.c (validation and storage of a batch,
 * with SPI) and the listener: webhook_listener.c (libmicrohttpd),
 * webhook_guard.c (hostile clients) and webhook_http.c (its settings,
 * secrets and counters), and webhook_checks.c (the database and role,
 * looked up before connecting); their shared
 * internals are in webhook_int.h.  It uses no other module.
 *
 * Memory: nothing here returns allocated memory; the worker works in its
 * own contexts (a batch context reset per batch, see webhook_worker.c) and
 * webhook_status() builds its row in the caller's context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_WEBHOOK_H
#define PSVC_WEBHOOK_H

#include "fmgr.h"

extern void psvc_worker_init(void);	/* from _PG_init: registration */
struct PsvcSegment;				/* segments.h */
/* The worker's status in shared memory. */
extern const struct PsvcSegment psvc_wh_segment;
/* The poll worker's shared state (webhook_poller.c). */
extern const struct PsvcSegment psvc_wh_poll_segment;
extern PGDLLEXPORT void psvc_worker_main(Datum arg);
/* Entry point of the poll worker (webhook_poller.c). */
extern PGDLLEXPORT void psvc_poller_main(Datum arg);
extern Datum psvc_webhook_status(PG_FUNCTION_ARGS);

#endif							/* PSVC_WEBHOOK_H */
