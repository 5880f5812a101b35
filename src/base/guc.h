/*-------------------------------------------------------------------------
 *
 * guc.h
 *		  The settings of partner_svc (GUCs partner_svc.*), owned by guc.c.
 *
 * guc.c holds the one table of settings: a row defines, documents and
 * bounds each GUC, and a row marked server_option is also the server
 * option of the same name that overrides it for one server (options.h,
 * psvc_options_setting).  Modules read the values through the variables
 * below and never define a GUC of their own (test/static_checks.sh).
 * Everything here is plain static storage of the process, except the
 * strings and the parsed secrets, which the GUC machinery keeps.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/guc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_GUC_H
#define PSVC_GUC_H

#include "utils/guc.h"
#include "utils/memutils.h"

typedef enum PsvcGucType
{
	PSVC_GUC_BOOL,
	PSVC_GUC_INT,
	PSVC_GUC_REAL,
	PSVC_GUC_STRING
} PsvcGucType;

/* One row of the table: one GUC, and its server option when it has one. */
typedef struct PsvcGuc
{
	const char *name;			/* without the prefix "partner_svc." */
	PsvcGucType type;
	void	   *var;			/* bool *, int *, double * or char ** */
	double		boot;			/* default of a bool (0, 1), int or real */
	const char *boot_string;	/* default of a string */
	double		min;			/* bounds of an int or real */
	double		max;
	GucContext	context;
	int			flags;			/* GUC_UNIT_*, GUC_SUPERUSER_ONLY, ... */
	const char *short_desc;
	const char *long_desc;
	GucStringCheckHook check_string;
	GucStringAssignHook assign_string;
	GucRealAssignHook assign_real;
	bool		server_option;	/* a server option of the same name
								 * overrides it (bool or int only) */
	int			setting;		/* its PsvcSettingId (options.h), when
								 * server_option */
} PsvcGuc;

/* Bounds of the settings, shared by the GUCs and the server options. */
#define PSVC_MAX_CONNECT_TIMEOUT_MS (10 * 60 * 1000)
#define PSVC_MAX_REQUEST_TIMEOUT_MS (60 * 60 * 1000)
#define PSVC_MAX_RETRIES 10
#define PSVC_MAX_PAGE_SIZE 100
#define PSVC_MAX_FANOUT 64

/* partner_svc.max_response_size: default, and the most it may be */
#define PSVC_DEFAULT_MAX_RESPONSE_SIZE	(64 * 1024 * 1024)
#define PSVC_MAX_RESPONSE_SIZE_LIMIT	((int) (MaxAllocSize - 1))

/* the HTTP client and the scan (server options override them) */
extern int	psvc_guc_connect_timeout;	/* milliseconds */
extern int	psvc_guc_request_timeout;	/* milliseconds */
extern int	psvc_guc_max_retries;
extern int	psvc_guc_page_size;			/* items per page asked for */
extern int	psvc_guc_fanout;			/* concurrent first pages */
extern bool psvc_guc_prefetch;			/* fetch the next page early */
extern int	psvc_guc_max_response_size;	/* bytes */

/* the rate limiter and the fleet quota (ratelimit.c, quota.c) */
extern bool psvc_guc_rate_limit;
extern int	psvc_guc_rate_limit_max_wait;	/* milliseconds */
extern int	psvc_guc_max_keys;			/* entries of each shared table */
extern char *psvc_guc_quota_coordinator;	/* "" = node-local */
extern double psvc_guc_quota_fallback_share;

/* the response cache and learned estimates (cache.c, estimates.c) */
extern bool psvc_guc_cache;
extern int	psvc_guc_cache_size;		/* kB */
extern bool psvc_guc_learn_estimates;

/*
 * The partners' clock: real milliseconds per millisecond of theirs (1 for
 * real services, the sandbox's --time-scale otherwise).  Cache TTLs are
 * multiplied by it, and the rate-limit window, one documented minute, is
 * psvc_guc_window_ms, derived from it (at least 100 ms).
 */
extern double psvc_guc_time_scale;
extern int	psvc_guc_window_ms;

/*
 * The webhook listener's settings, partner_svc.webhook_* (one GUC each,
 * written into these fields by the GUC machinery).
 */
typedef struct PsvcWebhookListener
{
	char	   *address;		/* never empty */
	int			port;			/* 0: no listener */
	int			max_body;		/* bytes */
	int			max_body_in_flight; /* bytes the bodies of all open
									 * requests hold */
	int			max_connections_per_address;	/* 0 = no cap */
	int			min_rate;		/* body bytes per second, 0 = any */
	int			header_timeout; /* s: for the headers, and any silence */
	int			request_timeout;	/* s: for a whole request */
	int			lock_timeout;	/* ms: a lock wait of the worker */
} PsvcWebhookListener;

extern PsvcWebhookListener psvc_guc_webhook;
/* the accepted secrets, NULL-terminated (partner_svc.webhook_secret) */
extern const char *const *psvc_guc_webhook_secrets;

/*
 * The background worker's connection: partner_svc.worker_database and
 * partner_svc.worker_role (PGC_POSTMASTER).
 */
typedef struct PsvcWorker
{
	char	   *database;		/* never empty */
	char	   *role;			/* "" = the bootstrap superuser */
} PsvcWorker;

extern PsvcWorker psvc_guc_worker;

/*
 * True when the worker's connection given for the server's start cannot
 * be trusted (a refused value, a misspelt name, a 0.3 partner_svc.worker
 * left in the configuration): the webhook worker and the deferred senders
 * then stay stopped rather than run as the bootstrap superuser.  *setting
 * is the setting at fault, *why a sentence (postmaster's memory).
 */
extern bool psvc_guc_worker_refused(const char **setting, const char **why);

/*
 * The worker's duties beside the webhooks: partner_svc.deferred_*,
 * partner_svc.poll_* and partner_svc.webhook_keep_* / max_rejects.
 * Durations are seconds; give_up, poll_after and poll_interval are of the
 * partners' clock (multiply by time_scale), the keep_* periods real time,
 * 0 keeping everything.
 */
typedef struct PsvcWorkerTasks
{
	int			senders;		/* deferred calls sent at once */
	int			give_up;		/* s: a deferred call fails after this */
	int			max_attempts;	/* no effect: give_up is the one limit */
	int			keep_calls;		/* s: finished deferred calls kept */
	int			poll_after;		/* s: an unchanged, unfinished order is polled */
	int			poll_interval;	/* s: between two polling rounds */
	int			poll_share;		/* percent of a route's quota polling may use */
	int			keep_events;	/* s: rows of webhook_events kept */
	int			keep_rejects;	/* s: rows of webhook_rejects kept */
	int			max_rejects;	/* rows of webhook_rejects at most, 0 = no cap */
} PsvcWorkerTasks;

extern PsvcWorkerTasks psvc_guc_tasks;
/* partner_svc.deferred_max_per_role: unfinished deferred calls a role may have, 0 = no cap */
extern int	psvc_guc_deferred_max_per_role;

/* The poll worker's own limits (webhook_poller.c): ms, count, rows. */
extern int	psvc_guc_poll_timeout;
extern int	psvc_guc_poll_retries;
extern int	psvc_guc_poll_max_per_round;

/* Defines every setting (from _PG_init, preloaded or not). */
extern void psvc_guc_init(void);
/* The row of the setting a server option overrides, by PsvcSettingId. */
extern const PsvcGuc *psvc_guc_setting(int id);
/* The row of the server option called name, or NULL if none. */
extern const PsvcGuc *psvc_guc_server_option(const char *name);
/* Names of the server options, in their order (for hints). */
extern int	psvc_guc_server_option_names(const char **names, int size);

#endif							/* PSVC_GUC_H */
