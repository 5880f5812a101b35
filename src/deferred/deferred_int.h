/*-------------------------------------------------------------------------
 *
 * deferred_int.h
 *		  What the files of the deferred-calls module share (deferred.h
 *		  says which file does what).
 *
 * Shared memory (deferred_queue.c owns it): one slot per sender, and a
 * generation counter that every commit which queued calls increments.
 * Locking: one spinlock, held for a few instructions.  A sender, before
 * it looks for calls, marks itself busy and reads the generation; when it
 * found none it marks itself idle only if the generation has not moved
 * since (else it looks again), then sleeps on its latch.  A committing
 * backend increments the generation and sets the latch of one idle sender
 * that nobody woke yet, or, when no sender is idle, starts one in a free
 * slot below senders (a slot's starting time keeps a burst of commits
 * from asking twice).  So a commit is never missed: either a sender
 * looks after it, or one is woken or started.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/deferred/deferred_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_DEFERRED_INT_H
#define PSVC_DEFERRED_INT_H

#include "storage/latch.h"
#include "storage/spin.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#define PSVC_DEF_MAX_SENDERS 64
/* Seconds after which the postmaster starts sender 0 again (bgw_restart_time). */
#define PSVC_DEF_SENDER0_RESTART_S 1
/* A sender asked for and not started after this long is asked for again. */
#define PSVC_DEF_START_WAIT_MS 10000

typedef struct PsvcDefSlot
{
	int			pid;			/* 0: no sender runs in this slot */
	Latch	   *latch;
	bool		idle;			/* sleeping, or about to */
	bool		woken;			/* a backend set its latch since it slept */
	TimestampTz starting;		/* a sender was asked for at, or 0 */
} PsvcDefSlot;

typedef struct PsvcDefShared
{
	slock_t		mutex;
	uint64		generation;		/* commits that queued calls */
	bool		db_ok;			/* sender 0 found the worker's database and
								 * role usable (deferred_checks.c) */
	PsvcDefSlot slots[PSVC_DEF_MAX_SENDERS];
} PsvcDefShared;

/* ---- deferred_queue.c ---- */

extern PsvcDefShared *psvc_def_shared;	/* NULL unless preloaded */
/*
 * After a commit that queued calls: counts a generation and sets the latch
 * of one idle sender not yet woken, or, when every running sender is busy
 * (one may hang in a request), starts another below senders.
 */
extern void psvc_def_wake(void);
/*
 * A sender (in slot self) left calls for others: wakes an idle sender, or
 * starts one below senders.
 */
extern void psvc_def_wake_other(int self);
/*
 * Registers the sender of slot as a dynamic worker, restarted by the
 * postmaster restart_time seconds after an exit with code 1 (or
 * BGW_NEVER_RESTART); false when max_worker_processes has no room.
 */
extern bool psvc_def_register_sender(int slot, int restart_time);
/*
 * The owner of partner_svc.deferred_queue, who reads and writes it for
 * the callers and the senders (in a transaction; raises when the queue
 * is missing).
 */
extern Oid	psvc_def_queue_owner(void);
/* "<system identifier>/<database oid>" of this cluster and database. */
extern char *psvc_def_origin(void);
/*
 * The database the senders connect to (partner_svc.worker_database):
 * the one place that reads it.
 */
extern const char *psvc_def_database(void);

/* ---- deferred_ops.c ---- */

/* What is done when a call's earlier attempt may have been carried out. */
typedef enum PsvcDefRecovery
{
	PSVC_DEF_SETTLE,			/* the function settles a lost answer
								 * itself (functions_settle.c) */
	PSVC_DEF_ONCE,				/* nothing can tell: an attempt that may
								 * have reached the partner is never
								 * repeated; it fails with 08006 */
	PSVC_DEF_BY_SIZE			/* append_upload: the file's size, kept
								 * before the request, tells how much of
								 * the chunk arrived; the rest is sent */
} PsvcDefRecovery;

/* A function that may be deferred: a row of deferred_ops.c. */
typedef struct PsvcDefOp
{
	const char *name;			/* the SQL function in schema partner_svc */
	PsvcDefRecovery recovery;
	const char *lane;			/* the kind of partner object the call is
								 * about ("order"), or NULL */
	const char *lane_arg;		/* the argument naming it ("id") */
	const char *lane_items;		/* or: its array member ("vignettes")... */
	const char *lane_member;	/* ...whose items' member names it */
	const char *optional[2];	/* jsonb arguments that may be left out:
								 * sent as NULL, the function's default */
} PsvcDefOp;

/*
 * The row of a deferrable function, after checking args (a jsonb
 * object) against the function's arguments; raises naming the operation
 * or the argument that is wrong (nothing is queued).  *lanes receives the
 * partner objects the call is about ("order:A-1"), as a List of char *.
 * CurrentMemoryContext.
 */
extern const PsvcDefOp *psvc_def_check(const char *operation, Jsonb *args,
									   List **lanes);
/* The row of operation, or NULL. */
extern const PsvcDefOp *psvc_def_op(const char *operation);
/*
 * The SELECT that runs operation with $1 = args (jsonb) and $2 = server
 * (name), returning the answer as one jsonb column.  CurrentMemoryContext.
 */
extern char *psvc_def_call_sql(const char *operation);

/* ---- deferred_checks.c ---- */

/*
 * Why the senders could not connect to database as role ("": the
 * bootstrap superuser), from the shared catalogues; problem left empty
 * when both look usable.  Needs a connection to no database.
 */
extern void psvc_def_connect_problem(const char *database, const char *role,
									 char *problem, size_t len);

/* ---- deferred_send.c ---- */

/* A call claimed by a sender. */
typedef struct PsvcDefCall
{
	int64		id;
	char	   *operation;
	Jsonb	   *args;
	char	   *server;			/* NULL: the default server */
	Oid			roleid;			/* the queuing role (never its name) */
	int			attempts;		/* this one included */
	bool		resume;			/* an earlier attempt may have been
								 * carried out */
	bool		was_sent;		/* ONCE, BY_SIZE: a request may have left;
								 * SETTLE: one may have acted, and was
								 * looked up */
	bool		look_first;		/* SETTLE: one may have acted and was never
								 * looked up (left sending, a 5xx or lost
								 * answer, or its lookup failed) */
	int64		from_size;		/* BY_SIZE: the file's size before, or -1 */
	TimestampTz created_at;
} PsvcDefCall;

/*
 * Sends the claimed calls one after the other, each in a subtransaction
 * as its role, and records each outcome; commits.  Called outside a
 * transaction; memory in a context of its own, reset per call.
 */
extern void psvc_def_send_calls(PsvcDefCall *calls, int n);

#endif							/* PSVC_DEFERRED_INT_H */
