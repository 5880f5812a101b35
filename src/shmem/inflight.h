/*-------------------------------------------------------------------------
 *
 * inflight.h
 *		  The requests in flight of every backend, in shared memory
 *		  (inflight.c): what the call module reports at each change of a
 *		  request's state, and what the view partner_svc.requests shows.
 *
 * A backend owns one slot (its BackendId) of PSVC_INFLIGHT_PER_BACKEND
 * requests; only the owner writes it, without a lock, and readers copy it
 * with a change counter (the protocol of PgBackendStatus.st_changecount).
 * A request is reported by its handle, a small integer the begin call
 * returns, -1 when nothing is tracked (no shared memory, or every entry
 * of the slot taken): every other call takes -1 and does nothing.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/inflight.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_INFLIGHT_H
#define PSVC_INFLIGHT_H

/* Requests a backend can show at once; more are in flight but not shown. */
#define PSVC_INFLIGHT_PER_BACKEND	8

/* What a request in flight is doing; the view shows it as text. */
typedef enum PsvcInflightState
{
	PSVC_INFLIGHT_WAITING,		/* waiting for rate-limit budget */
	PSVC_INFLIGHT_SENDING,		/* connecting or sending the request */
	PSVC_INFLIGHT_RECEIVING,	/* the request is sent; reading the answer */
	PSVC_INFLIGHT_BACKOFF		/* backing off before a retry */
} PsvcInflightState;

/* From _PG_init: when preloading, the shared memory. */
struct PsvcSegment;				/* segments.h */
extern const struct PsvcSegment psvc_inflight_segment;

/*
 * A request starts: server name, method, route template and the
 * request's "METHOD /path?query" (shown only to privileged roles; never
 * the key).  Returns its handle, or -1.  Never raises.
 */
extern int	psvc_inflight_begin(const char *server, const char *method,
								const char *route, const char *path);

/* The request's state changed; bytes sent and received in this attempt. */
extern void psvc_inflight_set(int handle, PsvcInflightState state, int64 bytes);

/* The request ended (or was abandoned).  Never raises. */
extern void psvc_inflight_end(int handle);

#endif							/* PSVC_INFLIGHT_H */
