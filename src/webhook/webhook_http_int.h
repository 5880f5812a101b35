/*-------------------------------------------------------------------------
 *
 * webhook_http_int.h
 *		  Internals of the webhook listener, shared by its three files and
 *		  by no other: webhook_http.c (settings, secrets, counters),
 *		  webhook_guard.c (per-connection state, deadlines, the in-flight
 *		  budget, the request target) and webhook_listener.c
 *		  (libmicrohttpd, the handler, the held deliveries).
 *
 * They are layered: the listener uses the guard and webhook_http.c, the
 * guard uses webhook_http.c, webhook_http.c uses neither.  Everything here
 * runs in the worker's one thread; the guard's functions also inside
 * libmicrohttpd callbacks, so they malloc and never palloc or ereport.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_http_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_WEBHOOK_HTTP_INT_H
#define PSVC_WEBHOOK_HTTP_INT_H

#include <microhttpd.h>

#include "webhook_int.h"

/*
 * Connections open at once, from all addresses; also the largest cap per
 * address (partner_svc.webhook_max_connections_per_address).
 */
#define PSVC_WH_CONNECTION_LIMIT 512
#define PSVC_WH_SECRET_HEADER "X-Partner-Webhook-Secret"

/* in webhook_http.c: what was answered since the worker started */
extern PsvcWhCounters psvc_wh_counters;

/* in webhook_http.c */
extern bool psvc_wh_http_any_secret(void);
extern bool psvc_wh_http_secret_ok(struct MHD_Connection *conn);
extern size_t psvc_wh_http_body_cap(void);

/* Where a connection's current request is (webhook_guard.c). */
typedef enum PsvcWhPhase
{
	PSVC_WH_HEADERS,			/* waiting for the request's headers */
	PSVC_WH_BODY,				/* headers read, body incomplete */
	PSVC_WH_COMPLETE			/* body complete: held or being answered */
} PsvcWhPhase;

/*
 * One open connection, for the deadlines and the in-flight budget.
 * malloc'd in the connection-start notification, freed when
 * libmicrohttpd closes the connection (webhook_guard.c).
 */
typedef struct PsvcWhConn
{
	int			fd;				/* the socket (owned by libmicrohttpd) */
	PsvcWhPhase phase;
	uint64		request_start;	/* ms: opened, or previous request done */
	uint64		body_start;		/* ms: headers complete */
	size_t		body_bytes;		/* received so far in this request */
	size_t		reserved;		/* bytes of the in-flight budget held */
	bool		over_budget;	/* the body did not fit: answer 503 */
	bool		cut;			/* shut down by a limit */
	const char *raw_env;		/* environment of the raw target, or NULL */
	const char *raw_target;		/* the raw target in libmicrohttpd's buffer */
	size_t		raw_len;		/* its length when the callback saw it */
	struct PsvcWhConn *prev;
	struct PsvcWhConn *next;
} PsvcWhConn;

/* in webhook_guard.c: libmicrohttpd's callbacks (MHD_OPTION_...) */
extern void psvc_wh_guard_notify(void *cls, struct MHD_Connection *conn,
								 void **socket_context,
								 enum MHD_ConnectionNotificationCode code);
extern void *psvc_wh_guard_uri(void *cls, const char *uri,
							   struct MHD_Connection *conn);

/* in webhook_guard.c: the state of a connection and its request */
extern PsvcWhConn *psvc_wh_guard_conn(struct MHD_Connection *conn);
extern bool psvc_wh_guard_target_whole(const PsvcWhConn *c, const char *version);
extern void psvc_wh_guard_headers_done(PsvcWhConn *c);
extern void psvc_wh_guard_complete(PsvcWhConn *c);
extern void psvc_wh_guard_request_done(PsvcWhConn *c);
extern bool psvc_wh_guard_reserve(PsvcWhConn *c, size_t total);
extern void psvc_wh_guard_release(PsvcWhConn *c);
extern void psvc_wh_guard_sweep(void);
extern void psvc_wh_guard_forget(void);
extern long psvc_wh_guard_timeout(void);

#endif							/* PSVC_WEBHOOK_HTTP_INT_H */
