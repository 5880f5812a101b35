/*-------------------------------------------------------------------------
 *
 * guc.c
 *		  The settings of partner_svc: one table that defines, documents
 *		  and bounds every GUC partner_svc.*.
 *
 * A setting is a row of gucs[]; psvc_guc_init (from _PG_init, in every
 * process that loads the library, preloaded or not) defines them all in
 * one loop.  Every tunable is a GUC of its own with its type, unit, range
 * and context, so that pg_settings shows it and ALTER SYSTEM of one never
 * rewrites another; the rows are grouped as docs/reference.md groups them.
 * PGC_POSTMASTER rows (the sizes of shared memory, the worker's database
 * and role) are defined only while preloading: guc.c of PostgreSQL ends
 * the process otherwise, and without preloading there is nothing for them
 * to size; their variables then hold the row's default.  Modules read the
 * variables below (guc.h) and define no GUC of their own.  Every rename
 * since 0.2 is in docs/upgrades.md.
 *
 * The settings of the webhook listener, the worker's connection and its
 * duties write into the fields of psvc_guc_webhook, psvc_guc_worker and
 * psvc_guc_tasks, the structs the modules read.  The three "key=value"
 * strings of 0.3 that held them (webhook_listener, worker, worker_tasks)
 * are still defined, hidden, only to name their successors when a
 * configuration still sets them (guc_legacy.c).
 *
 * The worker's database and role decide which privileges its code runs
 * with.  A value PostgreSQL refuses at start only earns a WARNING and
 * leaves the default, the bootstrap superuser, in force; so a refused
 * value, a misspelt name of one of them (a placeholder partner_svc.* that
 * looks like one) or a 0.3 partner_svc.worker left in the configuration
 * is remembered, and the worker and the senders stay stopped
 * (psvc_guc_worker_refused).
 *
 * A row marked server_option is also the server option of the same name,
 * which overrides the GUC for one server: fdw_options.c validates the option
 * against the row's bounds and unit, server_options.c reads it back
 * (psvc_options_setting).  Adding such a setting is adding a row and its
 * PsvcSettingId.
 *
 * partner_svc.webhook_secret is a list, the accepted secrets, parsed
 * here; its hook never refuses a value, since PostgreSQL prints a
 * refused value.  partner_svc.time_scale derives the rate-limit window in
 * its assign hook: one clock for the cache's TTLs and the limiter's
 * window.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/guc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/formatting.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/varlena.h"

#include "guc.h"
#include "guc_legacy.h"
#include "options.h"
#include "pg_compat.h"

int			psvc_guc_connect_timeout = 5000;
int			psvc_guc_request_timeout = 30000;
int			psvc_guc_max_retries = 3;
int			psvc_guc_page_size = 100;
int			psvc_guc_fanout = 8;
bool		psvc_guc_prefetch = true;
int			psvc_guc_max_response_size = PSVC_DEFAULT_MAX_RESPONSE_SIZE;

bool		psvc_guc_rate_limit = true;
int			psvc_guc_rate_limit_max_wait = 120000;
int			psvc_guc_max_keys = 4096;
char	   *psvc_guc_quota_coordinator = NULL;
double		psvc_guc_quota_fallback_share = 0.5;

bool		psvc_guc_cache = true;
int			psvc_guc_cache_size = 64 * 1024;
bool		psvc_guc_learn_estimates = true;

int			psvc_guc_poll_timeout = 5000;
int			psvc_guc_poll_retries = 1;
int			psvc_guc_poll_max_per_round = 500;

double		psvc_guc_time_scale = 1.0;
int			psvc_guc_window_ms = 60000;

int			psvc_guc_deferred_max_per_role = 10000;

PsvcWebhookListener psvc_guc_webhook;
PsvcWorker	psvc_guc_worker;
PsvcWorkerTasks psvc_guc_tasks;

static char *webhook_secret_string = NULL;

/* the strings of 0.3, hidden from pg_settings and the sample file */
#define LEGACY_FLAGS (GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE)
static char *legacy_listener = NULL;
static char *legacy_worker = NULL;
static char *legacy_tasks = NULL;

#define DAY_S (24 * 60 * 60)

/*
 * Why the worker's connection given for the server's start is not
 * trusted, or "" (postmaster's memory, inherited by the workers).
 */
static char worker_refused_setting[NAMEDATALEN + 16] = "";
static char worker_refused_why[512] = "";

/* The parsed secrets: the "extra" of the GUC. */
typedef struct SecretsExtra
{
	const char **secrets;		/* NULL-terminated, into text */
	char	   *text;
} SecretsExtra;

static const char *const no_secrets[] = {NULL};
const char *const *psvc_guc_webhook_secrets = no_secrets;

static bool check_webhook_secret(char **newval, void **extra, GucSource source);
static void assign_webhook_secret(const char *newval, void *extra);
static void assign_time_scale(double newval, void *extra);
static bool check_not_empty(char **newval, void **extra, GucSource source);
static bool check_worker_database(char **newval, void **extra, GucSource source);
static bool check_worker_role(char **newval, void **extra, GucSource source);
static void refuse_misspelt_worker_names(void);
static void refuse_worker(const char *setting, const char *why);
static bool check_legacy_listener(char **newval, void **extra, GucSource source);
static bool check_legacy_worker(char **newval, void **extra, GucSource source);
static bool check_legacy_tasks(char **newval, void **extra, GucSource source);

/*
 * The table.  The order is the order of docs/reference.md: the requests,
 * the limiter and its fleet quota, the cache, estimates and clock, the
 * webhook listener, the worker's database and role, deferred calls,
 * polling and retention; then the strings of 0.3.
 */
static const PsvcGuc gucs[] = {
	{.name = "connect_timeout", .type = PSVC_GUC_INT,
		.var = &psvc_guc_connect_timeout, .boot = 5000,
		.min = 1, .max = PSVC_MAX_CONNECT_TIMEOUT_MS,
		.context = PGC_USERSET, .flags = GUC_UNIT_MS,
		.short_desc = "Time allowed to open a connection to a partner service.",
		.server_option = true, .setting = PSVC_SETTING_CONNECT_TIMEOUT},
	{.name = "request_timeout", .type = PSVC_GUC_INT,
		.var = &psvc_guc_request_timeout, .boot = 30000,
		.min = 1, .max = PSVC_MAX_REQUEST_TIMEOUT_MS,
		.context = PGC_USERSET, .flags = GUC_UNIT_MS,
		.short_desc = "Time allowed for one HTTP request to a partner service, connecting included.",
		.long_desc = "Applies to each attempt separately; retries get a fresh timeout.",
		.server_option = true, .setting = PSVC_SETTING_REQUEST_TIMEOUT},
	{.name = "max_retries", .type = PSVC_GUC_INT,
		.var = &psvc_guc_max_retries, .boot = 3,
		.min = 0, .max = PSVC_MAX_RETRIES,
		.context = PGC_USERSET,
		.short_desc = "Maximum number of retries of a request that failed transiently.",
		.long_desc = "Zero disables retries.",
		.server_option = true, .setting = PSVC_SETTING_MAX_RETRIES},
	{.name = "page_size", .type = PSVC_GUC_INT,
		.var = &psvc_guc_page_size, .boot = 100,
		.min = 1, .max = PSVC_MAX_PAGE_SIZE,
		.context = PGC_USERSET,
		.short_desc = "Items asked for per page of a cursor-paginated list.",
		.long_desc = "A pushed-down LIMIT asks for fewer when it needs fewer.",
		.server_option = true, .setting = PSVC_SETTING_PAGE_SIZE},
	{.name = "fanout", .type = PSVC_GUC_INT,
		.var = &psvc_guc_fanout, .boot = 8,
		.min = 1, .max = PSVC_MAX_FANOUT,
		.context = PGC_USERSET,
		.short_desc = "Maximum number of first pages fetched at once by one scan.",
		.long_desc = "Applies to a path parameter given as a list, as in movie = ANY(...).",
		.server_option = true, .setting = PSVC_SETTING_FANOUT},
	{.name = "prefetch", .type = PSVC_GUC_BOOL,
		.var = &psvc_guc_prefetch, .boot = 1,
		.min = 0, .max = 1,
		.context = PGC_USERSET,
		.short_desc = "Fetches a list's next page while the current one is consumed.",
		.server_option = true, .setting = PSVC_SETTING_PREFETCH},
	{.name = "max_response_size", .type = PSVC_GUC_INT,
		.var = &psvc_guc_max_response_size, .boot = PSVC_DEFAULT_MAX_RESPONSE_SIZE,
		.min = 1024, .max = PSVC_MAX_RESPONSE_SIZE_LIMIT,
		.context = PGC_USERSET, .flags = GUC_UNIT_BYTE,
		.short_desc = "Largest response body accepted from a partner service.",
		.long_desc = "A larger response ends the request with an error; a server's option max_response_size may set a lower bound for that server."},

	{.name = "rate_limit", .type = PSVC_GUC_BOOL,
		.var = &psvc_guc_rate_limit, .boot = 1,
		.context = PGC_SUSET,
		.short_desc = "Keeps requests within the partner's rate limits, for all sessions together.",
		.long_desc = "Off sends requests without consulting the limiter (statistics are still kept)."},
	{.name = "rate_limit_max_wait", .type = PSVC_GUC_INT,
		.var = &psvc_guc_rate_limit_max_wait, .boot = 120000,
		.min = 0, .max = INT_MAX,
		.context = PGC_USERSET, .flags = GUC_UNIT_MS,
		.short_desc = "Longest time a request waits for rate-limit budget before it fails.",
		.long_desc = "Zero fails at once when the budget is spent.  The default, two windows of the documented minute, lets any spent budget free."},
	{.name = "max_keys", .type = PSVC_GUC_INT,
		.var = &psvc_guc_max_keys, .boot = 4096,
		.min = 16, .max = 1024 * 1024,
		.context = PGC_POSTMASTER,
		.short_desc = "Entries of each table partner_svc keeps in shared memory.",
		.long_desc = "Rate-limit keys (server, route, resource id), rows of partner_svc.stats (server, route) and learned row estimates: each table has this many."},
	{.name = "quota_coordinator", .type = PSVC_GUC_STRING,
		.var = &psvc_guc_quota_coordinator, .boot_string = "",
		.context = PGC_SIGHUP, .flags = GUC_SUPERUSER_ONLY,
		.short_desc = "Connection string of the database that owns the partner quota of all nodes.",
		.long_desc = "Empty: this node keeps its quota alone, in its own shared memory."},
	{.name = "quota_fallback_share", .type = PSVC_GUC_REAL,
		.var = &psvc_guc_quota_fallback_share, .boot = 0.5,
		.min = 0.0, .max = 1.0,
		.context = PGC_SIGHUP,
		.short_desc = "Share of each limit this node may use while the quota coordinator is unreachable.",
		.long_desc = "The shares of all nodes must add up to at most 1."},

	{.name = "cache", .type = PSVC_GUC_BOOL,
		.var = &psvc_guc_cache, .boot = 1,
		.context = PGC_USERSET,
		.short_desc = "Answers safe GET requests from the shared response cache.",
		.long_desc = "Off sends every request and stores nothing; writes still invalidate what others cached."},
	{.name = "cache_size", .type = PSVC_GUC_INT,
		.var = &psvc_guc_cache_size, .boot = 64 * 1024,
		.min = 128, .max = 16 * 1024 * 1024,
		.context = PGC_POSTMASTER, .flags = GUC_UNIT_KB,
		.short_desc = "Shared memory of the response cache, its tables included.",
		.long_desc = "Answers larger than an eighth of it are not cached."},
	{.name = "learn_estimates", .type = PSVC_GUC_BOOL,
		.var = &psvc_guc_learn_estimates, .boot = 1,
		.context = PGC_USERSET,
		.short_desc = "Learns foreign scans' row estimates from the rows earlier complete scans fetched.",
		.long_desc = "Off: scans record nothing and plans use the default estimates."},
	{.name = "time_scale", .type = PSVC_GUC_REAL,
		.var = &psvc_guc_time_scale, .boot = 1.0,
		.min = 0.0001, .max = 1.0,
		.context = PGC_SIGHUP,
		.short_desc = "Real milliseconds per millisecond of the partners' clock.",
		.long_desc = "1 for real services; the sandbox's --time-scale when it runs its clock faster.  "
		"Cache TTLs are multiplied by it, and the rate-limit window is one minute times it (at least 100 ms).",
		.assign_real = assign_time_scale},

	{.name = "webhook_listen_address", .type = PSVC_GUC_STRING,
		.var = &psvc_guc_webhook.address, .boot_string = "127.0.0.1",
		.context = PGC_SIGHUP,
		.short_desc = "Address the webhook listener listens on.",
		.long_desc = "An IPv4 or IPv6 address, such as 0.0.0.0 or :: for every interface.",
		.check_string = check_not_empty},
	{.name = "webhook_port", .type = PSVC_GUC_INT,
		.var = &psvc_guc_webhook.port, .boot = 0,
		.min = 0, .max = 65535,
		.context = PGC_SIGHUP,
		.short_desc = "TCP port of the webhook listener.",
		.long_desc = "Zero: no listener; the worker still runs its other tasks."},
	{.name = "webhook_max_body", .type = PSVC_GUC_INT,
		.var = &psvc_guc_webhook.max_body, .boot = 65536,
		.min = 1024, .max = 16 * 1024 * 1024,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_BYTE,
		.short_desc = "Largest body of one webhook request.",
		.long_desc = "A larger one is answered 413."},
	{.name = "webhook_max_body_in_flight", .type = PSVC_GUC_INT,
		.var = &psvc_guc_webhook.max_body_in_flight, .boot = 16 * 1024 * 1024,
		.min = 64 * 1024, .max = 1024 * 1024 * 1024,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_BYTE,
		.short_desc = "Memory the bodies of all open webhook requests may hold together.",
		.long_desc = "A request that would exceed it is answered 503."},
	{.name = "webhook_max_connections_per_address", .type = PSVC_GUC_INT,
		.var = &psvc_guc_webhook.max_connections_per_address, .boot = 64,
		.min = 0, .max = 512,
		.context = PGC_SIGHUP,
		.short_desc = "Open connections to the webhook listener one client address may have.",
		.long_desc = "Zero: no cap."},
	{.name = "webhook_min_rate", .type = PSVC_GUC_INT,
		.var = &psvc_guc_webhook.min_rate, .boot = 1024,
		.min = 0, .max = 1024 * 1024 * 1024,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_BYTE,
		.short_desc = "Slowest rate, per second, at which a client may send a webhook body.",
		.long_desc = "Zero: any rate.  A slower client is disconnected."},
	{.name = "webhook_header_timeout", .type = PSVC_GUC_INT,
		.var = &psvc_guc_webhook.header_timeout, .boot = 10,
		.min = 1, .max = 3600,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_S,
		.short_desc = "Time a webhook client has to send its headers, and the longest silence.",
		.long_desc = "A connection that says nothing for this long is closed."},
	{.name = "webhook_request_timeout", .type = PSVC_GUC_INT,
		.var = &psvc_guc_webhook.request_timeout, .boot = 30,
		.min = 1, .max = 3600,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_S,
		.short_desc = "Time a webhook client has to send a whole request."},
	{.name = "webhook_lock_timeout", .type = PSVC_GUC_INT,
		.var = &psvc_guc_webhook.lock_timeout, .boot = 5000,
		.min = 1, .max = 600 * 1000,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_MS,
		.short_desc = "Longest lock wait of the webhook worker while it stores a batch.",
		.long_desc = "The batch is then retried; the listener keeps answering meanwhile."},
	{.name = "webhook_secret", .type = PSVC_GUC_STRING,
		.var = &webhook_secret_string, .boot_string = "",
		.context = PGC_SIGHUP, .flags = GUC_SUPERUSER_ONLY | GUC_LIST_INPUT,
		.short_desc = "Values the X-Partner-Webhook-Secret header of each webhook may have.",
		.long_desc = "Empty: no header is required.  During a rotation, the new secret and the former one, separated by a comma.",
		.check_string = check_webhook_secret, .assign_string = assign_webhook_secret},
	{.name = "worker_database", .type = PSVC_GUC_STRING,
		.var = &psvc_guc_worker.database, .boot_string = "postgres",
		.context = PGC_POSTMASTER,
		.short_desc = "Database of the webhook worker and the deferred senders.",
		.long_desc = "The extension must be installed there.",
		.check_string = check_worker_database},
	{.name = "worker_role", .type = PSVC_GUC_STRING,
		.var = &psvc_guc_worker.role, .boot_string = "",
		.context = PGC_POSTMASTER,
		.short_desc = "Role of the webhook worker and the deferred senders.",
		.long_desc = "Empty: the bootstrap superuser.  The role needs LOGIN.",
		.check_string = check_worker_role},

	{.name = "deferred_senders", .type = PSVC_GUC_INT,
		.var = &psvc_guc_tasks.senders, .boot = 8,
		.min = 1, .max = 64,
		.context = PGC_SIGHUP,
		.short_desc = "Deferred calls sent at once, each by a sender of its own."},
	{.name = "deferred_give_up", .type = PSVC_GUC_INT,
		.var = &psvc_guc_tasks.give_up, .boot = DAY_S,
		.min = 1, .max = 30 * DAY_S,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_S,
		.short_desc = "Age, on the partners' clock, at which a deferred call that keeps failing fails for good."},
	{.name = "deferred_max_attempts", .type = PSVC_GUC_INT,
		.var = &psvc_guc_tasks.max_attempts, .boot = 25,
		.min = 1, .max = 1000,
		.context = PGC_SIGHUP,
		.short_desc = "No effect: the number of attempts ends no deferred call (partner_svc.deferred_give_up does).",
		.long_desc = "Kept so that a configuration that sets it keeps working."},
	{.name = "deferred_keep_calls", .type = PSVC_GUC_INT,
		.var = &psvc_guc_tasks.keep_calls, .boot = 7 * DAY_S,
		.min = 0, .max = INT_MAX,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_S,
		.short_desc = "How long finished deferred calls are kept.",
		.long_desc = "Zero keeps them all."},
	{.name = "deferred_max_per_role", .type = PSVC_GUC_INT,
		.var = &psvc_guc_deferred_max_per_role, .boot = 10000,
		.min = 0, .max = INT_MAX,
		.context = PGC_SUSET,
		.short_desc = "Most unfinished deferred calls (queued or sending) one role may have.",
		.long_desc = "partner_svc.defer() refuses a call beyond it with SQLSTATE 53400.  Zero: no cap.  "
		"Set it per role with ALTER ROLE ... SET."},

	{.name = "poll_after", .type = PSVC_GUC_INT,
		.var = &psvc_guc_tasks.poll_after, .boot = 30 * 60,
		.min = 1, .max = 30 * DAY_S,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_S,
		.short_desc = "Age, on the partners' clock, at which an unfinished order no webhook changed is polled."},
	{.name = "poll_interval", .type = PSVC_GUC_INT,
		.var = &psvc_guc_tasks.poll_interval, .boot = 60,
		.min = 1, .max = DAY_S,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_S,
		.short_desc = "Time, on the partners' clock, between two polling rounds."},
	{.name = "poll_share", .type = PSVC_GUC_INT,
		.var = &psvc_guc_tasks.poll_share, .boot = 20,
		.min = 0, .max = 100,
		.context = PGC_SIGHUP,
		.short_desc = "Percent of a route's rate limit that polling may use.",
		.long_desc = "Zero: no polling."},
	{.name = "poll_timeout", .type = PSVC_GUC_INT,
		.var = &psvc_guc_poll_timeout, .boot = 5000,
		.min = 100, .max = 60000,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_MS,
		.short_desc = "Time allowed for one attempt of a status poll of the poll worker, connecting included.",
		.long_desc = "Whatever the polled server's connect_timeout and request_timeout say."},
	{.name = "poll_retries", .type = PSVC_GUC_INT,
		.var = &psvc_guc_poll_retries, .boot = 1,
		.min = 0, .max = 5,
		.context = PGC_SIGHUP,
		.short_desc = "Retries of a status poll that failed transiently.",
		.long_desc = "Whatever the polled server's max_retries says; a poll that still fails is left for the next round."},
	{.name = "poll_max_per_round", .type = PSVC_GUC_INT,
		.var = &psvc_guc_poll_max_per_round, .boot = 500,
		.min = 1, .max = 100000,
		.context = PGC_SIGHUP,
		.short_desc = "Orders and checkouts polled per round of the poll worker at most.",
		.long_desc = "The longest unchanged first; the others wait for the next round, and webhook_status() says polling lags."},
	{.name = "webhook_keep_events", .type = PSVC_GUC_INT,
		.var = &psvc_guc_tasks.keep_events, .boot = 30 * DAY_S,
		.min = 0, .max = INT_MAX,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_S,
		.short_desc = "How long rows of partner_svc.webhook_events are kept.",
		.long_desc = "Zero keeps them all."},
	{.name = "webhook_keep_rejects", .type = PSVC_GUC_INT,
		.var = &psvc_guc_tasks.keep_rejects, .boot = 7 * DAY_S,
		.min = 0, .max = INT_MAX,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_S,
		.short_desc = "How long rows of partner_svc.webhook_rejects are kept.",
		.long_desc = "Zero keeps them all (up to webhook_max_rejects)."},
	{.name = "webhook_max_rejects", .type = PSVC_GUC_INT,
		.var = &psvc_guc_tasks.max_rejects, .boot = 10000,
		.min = 0, .max = INT_MAX,
		.context = PGC_SIGHUP,
		.short_desc = "Rows of partner_svc.webhook_rejects kept at most, the oldest deleted first.",
		.long_desc = "Zero: no cap."},

	/* the settings of 0.3, kept only to say what replaced them */
	{.name = "webhook_listener", .type = PSVC_GUC_STRING,
		.var = &legacy_listener, .boot_string = "",
		.context = PGC_SIGHUP, .flags = LEGACY_FLAGS,
		.short_desc = "Replaced in 0.4 by partner_svc.webhook_*.",
		.check_string = check_legacy_listener},
	{.name = "worker", .type = PSVC_GUC_STRING,
		.var = &legacy_worker, .boot_string = "",
		.context = PGC_POSTMASTER, .flags = LEGACY_FLAGS,
		.short_desc = "Replaced in 0.4 by partner_svc.worker_database and partner_svc.worker_role.",
		.check_string = check_legacy_worker},
	{.name = "worker_tasks", .type = PSVC_GUC_STRING,
		.var = &legacy_tasks, .boot_string = "",
		.context = PGC_SIGHUP, .flags = LEGACY_FLAGS,
		.short_desc = "Replaced in 0.4 by partner_svc.deferred_*, poll_* and webhook_keep_* / webhook_max_rejects.",
		.check_string = check_legacy_tasks},
};

/* Defines the settings; from _PG_init, once per process. */
void
psvc_guc_init(void)
{
	for (int i = 0; i < lengthof(gucs); i++)
	{
		const PsvcGuc *g = &gucs[i];
		char	   *name;

		if (g->context == PGC_POSTMASTER && !process_shared_preload_libraries_in_progress)
		{
			/* not defined: the variable holds the default */
			if (g->type == PSVC_GUC_STRING)
				*(char **) g->var = (char *) g->boot_string;
			else if (g->type == PSVC_GUC_INT)
				*(int *) g->var = (int) g->boot;
			continue;
		}
		/* the name lives as long as the GUC: TopMemoryContext */
		name = MemoryContextStrdup(TopMemoryContext,
								   psprintf("partner_svc.%s", g->name));
		switch (g->type)
		{
			case PSVC_GUC_BOOL:
				DefineCustomBoolVariable(name, g->short_desc, g->long_desc,
										 (bool *) g->var, g->boot != 0,
										 g->context, g->flags, NULL, NULL, NULL);
				break;
			case PSVC_GUC_INT:
				DefineCustomIntVariable(name, g->short_desc, g->long_desc,
										(int *) g->var, (int) g->boot,
										(int) g->min, (int) g->max,
										g->context, g->flags, NULL, NULL, NULL);
				break;
			case PSVC_GUC_REAL:
				DefineCustomRealVariable(name, g->short_desc, g->long_desc,
										 (double *) g->var, g->boot, g->min, g->max,
										 g->context, g->flags, NULL,
										 g->assign_real, NULL);
				break;
			case PSVC_GUC_STRING:
				DefineCustomStringVariable(name, g->short_desc, g->long_desc,
										   (char **) g->var, g->boot_string,
										   g->context, g->flags, g->check_string,
										   g->assign_string, NULL);
				break;
		}
	}
	/* what is still a placeholder partner_svc.* is no setting of ours */
	if (process_shared_preload_libraries_in_progress && !IsUnderPostmaster)
		refuse_misspelt_worker_names();
}

const PsvcGuc *
psvc_guc_setting(int id)
{
	for (int i = 0; i < lengthof(gucs); i++)
		if (gucs[i].server_option && gucs[i].setting == id)
			return &gucs[i];
	elog(ERROR, "unknown partner_svc setting %d", (int) id);
	return NULL;				/* keep compiler quiet */
}

const PsvcGuc *
psvc_guc_server_option(const char *name)
{
	for (int i = 0; i < lengthof(gucs); i++)
		if (gucs[i].server_option && strcmp(gucs[i].name, name) == 0)
			return &gucs[i];
	return NULL;
}

/*
 * Fills names with the server options in table order, at most size;
 * returns how many there are.
 */
int
psvc_guc_server_option_names(const char **names, int size)
{
	int			n = 0;

	for (int i = 0; i < lengthof(gucs); i++)
		if (gucs[i].server_option)
		{
			if (n < size)
				names[n] = gucs[i].name;
			n++;
		}
	return n;
}

static void
assign_time_scale(double newval, void *extra)
{
	psvc_guc_window_ms = Max((int) rint(60000.0 * newval), 100);
}


/* ---------------------------------------------------------------------
 * partner_svc.webhook_secret
 * ---------------------------------------------------------------------
 */

/*
 * Splits the secrets at commas, trimming white space around each and
 * skipping empty ones: the secret, and during a rotation the one before
 * it (any number is accepted).  Never refuses a value: the refusal would
 * print it, and the secrets must never appear in a message.  One malloc'd
 * block: the struct, the pointers, the text.
 */
static bool
check_webhook_secret(char **newval, void **extra, GucSource source)
{
	const char *s = *newval ? *newval : "";
	size_t		len = strlen(s);
	int			max_n = 2;
	SecretsExtra *ex;
	char	   *p;
	int			n = 0;

	for (const char *c = s; *c; c++)
		if (*c == ',')
			max_n++;
	/* the GUC machinery frees an extra: pg_compat.h */
	ex = (SecretsExtra *) psvc_guc_extra_alloc(MAXALIGN(sizeof(SecretsExtra)) +
											   MAXALIGN(sizeof(char *) * max_n) + len + 1);
	if (ex == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	ex->secrets = (const char **) ((char *) ex + MAXALIGN(sizeof(SecretsExtra)));
	ex->text = (char *) ex->secrets + MAXALIGN(sizeof(char *) * max_n);
	memcpy(ex->text, s, len + 1);
	p = ex->text;
	while (*p != '\0')
	{
		char	   *start;
		char	   *end;

		while (*p == ' ' || *p == '\t')
			p++;
		start = p;
		while (*p != '\0' && *p != ',')
			p++;
		end = p;
		if (*p == ',')
			*p++ = '\0';
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (start[0] != '\0')
			ex->secrets[n++] = start;
	}
	ex->secrets[n] = NULL;
	*extra = ex;
	return true;
}

static void
assign_webhook_secret(const char *newval, void *extra)
{
	psvc_guc_webhook_secrets = ((SecretsExtra *) extra)->secrets;
}


/* ---------------------------------------------------------------------
 * The worker's database and role
 * ---------------------------------------------------------------------
 */

/*
 * Remembers, while the postmaster preloads the library (the values of the
 * configuration file and the command line), that the worker's connection
 * cannot be trusted: setting is the setting at fault, why a sentence.
 * The first reason is kept.  Later (ALTER SYSTEM, a reload) nothing is
 * remembered: the values that run were decided at start.
 */
static void
refuse_worker(const char *setting, const char *why)
{
	if (!process_shared_preload_libraries_in_progress || IsUnderPostmaster)
		return;
	if (worker_refused_setting[0] != '\0')
		return;
	strlcpy(worker_refused_setting, setting, sizeof(worker_refused_setting));
	strlcpy(worker_refused_why, why, sizeof(worker_refused_why));
}

/*
 * The one decision "the configuration of the worker is not trusted, stay
 * stopped": the webhook worker and the deferred senders then never
 * start, rather than run with another role than the one configured.
 */
bool
psvc_guc_worker_refused(const char **setting, const char **why)
{
	*setting = worker_refused_setting;
	*why = worker_refused_why;
	return worker_refused_setting[0] != '\0';
}

static bool
check_not_empty(char **newval, void **extra, GucSource source)
{
	if (*newval != NULL && (*newval)[0] != '\0')
		return true;
	GUC_check_errdetail("The value must not be empty.");
	return false;
}

static bool
check_worker_database(char **newval, void **extra, GucSource source)
{
	if (check_not_empty(newval, extra, source))
		return true;
	refuse_worker("partner_svc.worker_database",
						   "The database of the worker must not be empty.");
	return false;
}

/* A role name PostgreSQL would truncate names another role. */
static bool
check_worker_role(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || strlen(*newval) < NAMEDATALEN)
		return true;
	GUC_check_errdetail("A role name has at most %d bytes.", NAMEDATALEN - 1);
	refuse_worker("partner_svc.worker_role",
						   psprintf("A role name has at most %d bytes.", NAMEDATALEN - 1));
	return false;
}

/*
 * Whether an unknown name (after "partner_svc.") was likely meant for the
 * worker's database or role: it mentions the worker, a role, a user or a
 * database (pg_net's pg_net.database_name and pg_net.username included).
 */
static bool
looks_like_worker_name(const char *rest)
{
	static const char *const words[] = {"worker", "role", "user", "database", "db"};
	char	   *lower = asc_tolower(rest, strlen(rest));
	bool		found = false;

	for (int i = 0; i < lengthof(words) && !found; i++)
		found = strstr(lower, words[i]) != NULL;
	pfree(lower);
	return found;
}

/*
 * A misspelt partner_svc.worker_role is a placeholder that
 * MarkGUCPrefixReserved then removes with a WARNING, leaving the default
 * role, the bootstrap superuser: refuse the worker's connection instead.
 * Runs in the postmaster after every row is defined, so the placeholders
 * left are names partner_svc does not have.
 */
static void
refuse_misspelt_worker_names(void)
{
	int			n;
	struct config_generic **vars = psvc_guc_variables(&n);
	const char *prefix = "partner_svc.";

	for (int i = 0; i < n; i++)
	{
		const char *name = vars[i]->name;

		if ((vars[i]->flags & GUC_CUSTOM_PLACEHOLDER) == 0 ||
			pg_strncasecmp(name, prefix, strlen(prefix)) != 0 ||
			!looks_like_worker_name(name + strlen(prefix)))
			continue;
		refuse_worker(name,
							   psprintf("\"%s\" is no setting of partner_svc; the worker's are partner_svc.worker_database and partner_svc.worker_role.",
										name));
	}
}


/* ---------------------------------------------------------------------
 * The strings of 0.3: reported (guc_legacy.c), never refused or applied
 * ---------------------------------------------------------------------
 */

static bool
check_legacy_listener(char **newval, void **extra, GucSource source)
{
	(void) psvc_guc_legacy_report("webhook_listener", *newval, source);
	return true;
}

static bool
check_legacy_tasks(char **newval, void **extra, GucSource source)
{
	(void) psvc_guc_legacy_report("worker_tasks", *newval, source);
	return true;
}

/*
 * partner_svc.worker is also a reason to keep the worker stopped: its
 * database and role are not the ones in force.
 */
static bool
check_legacy_worker(char **newval, void **extra, GucSource source)
{
	if (psvc_guc_legacy_report("worker", *newval, source))
		refuse_worker("partner_svc.worker",
					  "partner_svc.worker of 0.3 is ignored; the worker's database and role are partner_svc.worker_database and partner_svc.worker_role.");
	return true;
}
