/*-------------------------------------------------------------------------
 *
 * webhook_int.h
 *		  Internals shared by webhook_worker.c, webhook_store.c and the
 *		  listener (webhook_listener.c, webhook_guard.c, webhook_http.c;
 *		  its own internals in webhook_http_int.h), and by no other file.
 *
 * The layers of the module point one way: the worker (webhook_worker.c)
 * drives the store (webhook_store.c) and the listener (webhook_listener.c);
 * the store answers deliveries through the listener; the listener calls
 * neither.  The listener owns its settings (the limits on hostile
 * clients, the secret) and the counters of what it answered; the worker
 * reads the counters to publish them, the store adds what it stored.
 * The store reports problems for webhook_status() through the sink the
 * worker gives it.
 *
 * Memory: a delivery is malloc'd by the listener (libmicrohttpd callbacks
 * must not palloc or ereport) and freed when libmicrohttpd is done with
 * its connection; the store works in the worker's batch context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_WEBHOOK_INT_H
#define PSVC_WEBHOOK_INT_H

#include "datatype/timestamp.h"

/* last_error while the extension is missing in partner_svc.worker_database */
#define PSVC_WH_NO_EXTENSION_MSG \
	"extension \"partner_svc\" is not installed in the webhook database"

/*
 * What the listener has answered since the worker started: webhook_http.c
 * owns these counters; the store adds what it stored, the worker copies
 * them into shared memory for webhook_status().
 */
typedef struct PsvcWhCounters
{
	int64		requests;		/* HTTP requests answered or pending */
	int64		accepted;		/* 200, stored now */
	int64		duplicates;		/* 200, had been stored before */
	int64		rejected;		/* 400, kept in webhook_rejects */
	int64		unauthorized;	/* 401 */
	int64		too_large;		/* 413 */
	int64		not_found;		/* 404 */
	int64		bad_method;		/* 405 */
	int64		failed;			/* 500/503: the batch could not be stored */
	int64		timed_out;		/* connections closed for inactivity */
	int64		batches;		/* transactions committed */
	int			max_batch;		/* largest batch so far */
} PsvcWhCounters;

/* in webhook_http.c: the counters */
extern void psvc_wh_http_counters(PsvcWhCounters *c);	/* a copy */
extern void psvc_wh_http_reset_counters(void);
/* n deliveries answered 500/503: the batch could not be stored */
extern void psvc_wh_http_count_failed(int n);
/* one batch of n stored in one transaction */
extern void psvc_wh_http_count_batch(int n, int64 accepted, int64 duplicates,
									 int64 rejected);

/*
 * One webhook request, from its first byte to its answer.  Allocated with
 * malloc by webhook_listener.c (libmicrohttpd callbacks must not palloc or
 * ereport), freed when libmicrohttpd is done with the connection.
 */
typedef struct PsvcWhDelivery
{
	struct MHD_Connection *conn;
	const char *environment;	/* "sandbox" or "production" */
	char	   *body;			/* malloc'd; NUL-terminated once complete */
	size_t		len;
	size_t		cap;			/* bytes of body, always > len when set */
	bool		too_large;
	bool		no_memory;		/* the body could not be held: answer 503 */
	bool		suspended;		/* waiting in a batch */
	int			status;			/* the answer; 0 while not decided */
	char	   *answer;			/* malloc'd JSON body of the answer, or NULL */
	struct PsvcWhDelivery *next;	/* in the batch */
} PsvcWhDelivery;

/* in webhook_listener.c: the listener (libmicrohttpd in external-epoll mode) */
extern bool psvc_wh_http_start(const char *address, int port, int timeout_s,
							   char *err, size_t errlen);
extern void psvc_wh_http_stop(void);
/* The listener must be restarted for the settings to apply. */
extern bool psvc_wh_http_stale(void);
/* WARNING when the in-flight budget cannot hold one body of the maximum size */
extern void psvc_wh_http_check_limits(void);
extern bool psvc_wh_http_running(void);
extern int	psvc_wh_http_fd(void);	/* readable when psvc_wh_http_run has work */
extern long psvc_wh_http_timeout(void);	/* ms the wait may last, -1 = any */
extern void psvc_wh_http_run(void);
extern int	psvc_wh_http_pending(void);	/* complete deliveries not taken yet */
/* Deliveries whose bodies are complete, oldest first; the list is emptied. */
extern PsvcWhDelivery *psvc_wh_http_take_batch(int *n);
/* Answers every delivery of the batch with its status (after the commit). */
extern void psvc_wh_http_answer(PsvcWhDelivery *batch);
/* in webhook_http.c: sets d->status and a JSON answer {"error": msg} (escaped). */
extern void psvc_wh_http_set_error(PsvcWhDelivery *d, int status, const char *msg);
/*
 * Answers every delivery still held (taken or pending) that has no status
 * 503 with Retry-After, and the others with theirs; returns how many got
 * 503.  Never raises, never pallocs: safe in error recovery and at exit.
 */
extern int	psvc_wh_http_release_held(void);

/*
 * in webhook_checks.c: why connecting to database as role ("": the
 * bootstrap superuser) fails, into problem ("" when it should not); for a
 * worker without a database, in a transaction of its own.
 */
extern void psvc_wh_connect_problem(const char *database, const char *role,
									char *problem, size_t len);

/* in webhook_store.c: validation and storage of a batch */

/*
 * Where the store reports a problem for webhook_status() (last_error):
 * set_error records msg, clear_error clears it if it is the last one,
 * stored says a batch was stored (which clears an error set_error
 * recorded for an earlier batch); extension_missing reports a missing extension, which the worker alone
 * logs (one warning, however many deliveries find it missing).
 * The worker owns the status and hands the store these.
 */
typedef struct PsvcWhStatusSink
{
	void		(*set_error) (const char *msg);
	void		(*clear_error) (const char *msg);
	/* the extension is missing: the worker warns once and checks again */
	void		(*extension_missing) (void);
	/* a batch was stored: an error of an earlier one is over */
	void		(*stored) (void);
} PsvcWhStatusSink;

/*
 * Decides and stores a batch in one transaction (or, when that fails, each
 * delivery alone) and sets every delivery's status.  Never raises.
 */
extern void psvc_wh_store_batch(PsvcWhDelivery *batch, int n,
								const PsvcWhStatusSink *status);

/* in webhook_rules.c: the rule of statuses (its header says why) */

/* Room for the chains of the moves (every pair of the statuses of a kind). */
#define PSVC_WH_MAX_CHAINS 64
/* The most final statuses of one kind. */
#define PSVC_WH_MAX_FINAL 8
extern int	psvc_wh_status_chains(const char **kind, const char **from,
								  const char **to);
extern int	psvc_wh_final_statuses(const char *kind, const char **out, int size);

/*
 * SQL: whether the stored status old of kind ("order", "checkout") may
 * become new, old and new being SQL expressions, in a statement that has
 * the chains of psvc_wh_status_chains as the relation
 * m(kind, from_status, to_status): a chain leads from old to new, or old
 * is a status no move names.
 */
#define PSVC_WH_MOVES(kind, old, new) \
	"(EXISTS (SELECT FROM m WHERE m.kind = '" kind "' AND m.from_status = " old \
	" AND m.to_status = " new ") OR NOT EXISTS (SELECT FROM m WHERE m.kind = '" kind \
	"' AND " old " IN (m.from_status, m.to_status)))"

/*
 * in webhook_reconcile.c: order state that heals itself (its header says
 * how).  Each runs in transactions of its own, called by the poll
 * worker's loop while it is connected to its database.
 */
/* Writes the objects created through partner_svc into the tables. */
extern void psvc_wh_reconcile_record(void);
/* Polls some rows of the round under way, or starts a round when due. */
extern void psvc_wh_reconcile_step(void);
/* Milliseconds until a step has work: 0 now, -1 never (polling off). */
extern long psvc_wh_reconcile_wait_ms(void);
/* Whether polling waits for ALTER EXTENSION ... UPDATE (0.3's objects). */
extern bool psvc_wh_reconcile_waiting(void);
/* Whether polling lags, since when (0: unknown), a round under way. */
extern bool psvc_wh_reconcile_lag(TimestampTz *since, bool *active);
/* Forgets the round under way (after an error in the loop). */
extern void psvc_wh_reconcile_reset(void);

/*
 * in webhook_poller.c: the poll worker, the process the reconciler runs
 * in (registered by psvc_worker_init), and what webhook_status() shows
 * of it.
 */
typedef struct PsvcPollStatus
{
	bool		running;
	char		state[16];		/* off, idle, polling, lagging, waiting,
								 * failed, stopped */
	TimestampTz lag_since;		/* 0: not lagging, or since unknown */
	int64		created_waits;	/* creators that waited for the ring */
} PsvcPollStatus;

extern void psvc_wh_poller_init(void);
extern void psvc_wh_poller_status(PsvcPollStatus *out);

/* in webhook_prune.c: retention of webhook_events and webhook_rejects */
/* Prunes when due, or caps the rejects when rejected (the count) moved. */
extern void psvc_wh_prune(int64 rejected);
/* Milliseconds until the next pruning is due (0: now). */
extern long psvc_wh_prune_wait_ms(void);

#endif							/* PSVC_WEBHOOK_INT_H */
