/*-------------------------------------------------------------------------
 *
 * handoff.h
 *		  Orders and checkouts created through partner_svc, handed from the
 *		  backend that created them to the poll worker, which records
 *		  them for its reconciler (handoff.c).
 *
 * A create at a partner is done when the partner answers, whatever the
 * local transaction does next; so the record that lets the reconciler
 * follow the new order must survive a rollback too.  The backend that
 * made the create does not write it: it puts it into a ring in shared
 * memory, and the poll worker, in a transaction of its own, writes it into
 * order_states or transactions (source 'created').
 *
 * Memory: the ring lives in shared memory (when preloaded); records are
 * copied in and out by value.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/handoff.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_HANDOFF_H
#define PSVC_HANDOFF_H

#include "options.h"

/* The longest id or custom id kept, with its NUL (longer ones: not kept). */
#define PSVC_HANDOFF_ID_LEN 256
#define PSVC_HANDOFF_STATUS_LEN 32

/* One created object. */
typedef struct PsvcCreated
{
	bool		checkout;		/* a transaction's checkout, else an order */
	char		id[PSVC_HANDOFF_ID_LEN];	/* order id, or transaction id */
	char		custom_id[PSVC_HANDOFF_ID_LEN]; /* "" when none */
	char		status[PSVC_HANDOFF_STATUS_LEN];	/* as the create answered */
	char		server[NAMEDATALEN];	/* the server it was created through */
	Oid			roleid;			/* whose user mapping gave the key */
	char		account[PSVC_ACCOUNT_LEN + 1];	/* the partner account of
												 * the create (options.h) */
} PsvcCreated;

struct PsvcSegment;				/* segments.h */
extern const struct PsvcSegment psvc_handoff_segment;

/*
 * Hands c over to the poll worker of this database.  False when no
 * worker takes records for this database (no ring, the worker does not
 * run or writes into another database).  When the ring is full the
 * creator waits for room (counted: psvc_handoff_waits), as long as the
 * worker stays attached; a cancel interrupts the wait as any other.
 */
extern bool psvc_handoff_push(const PsvcCreated *c);

/* The worker: it takes the records of database dbid from now on. */
extern void psvc_handoff_attach(Oid dbid);
/* The worker: it takes none any more (at exit). */
extern void psvc_handoff_detach(void);
/*
 * The worker: up to max records into out, oldest first; how many.  They
 * stay in the ring until psvc_handoff_drop(n) once they are written, so
 * that an error writing them loses none.
 */
extern int	psvc_handoff_peek(PsvcCreated *out, int max);
extern void psvc_handoff_drop(int n);
/* Creators that waited for room in the ring, since the server started. */
extern uint64 psvc_handoff_waits(void);
/* Records waiting in the ring. */
extern int	psvc_handoff_pending(void);

#endif							/* PSVC_HANDOFF_H */
