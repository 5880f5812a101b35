/*-------------------------------------------------------------------------
 *
 * guc.c
 *		  The settings of partner_svc: one table that defines, documents
 *		  and bounds every GUC partner_svc.*.
 *
 * A setting is a row of gucs[]; psvc_guc_init (from _PG_init, in every
 * process that loads the library, preloaded or not) defines them all in
 * one loop.  PGC_POSTMASTER rows (the sizes of shared memory, the webhook
 * worker's connection) are defined only while preloading: guc.c of
 * PostgreSQL ends the process otherwise, and without preloading there is
 * nothing for them to size.  Modules read the variables below (guc.h) and
 * define no GUC of their own; test/static_checks.sh fails when the table
 * has more than 23 rows.  Every row is documented in docs/reference.md,
 * and every rename or merge since 0.2 in docs/upgrades.md.
 *
 * A row marked server_option is also the server option of the same name,
 * which overrides the GUC for one server: options.c validates the option
 * against the row's bounds and unit, server_options.c reads it back
 * (psvc_options_setting).  Adding such a setting is adding a row and its
 * PsvcSettingId.
 *
 * Four settings are lists.  Three are "key=value ..." lists parsed by
 * guc_keys.c: partner_svc.webhook_listener (where the listener listens
 * and its limits on clients), partner_svc.worker (the background worker's
 * database and role) and partner_svc.worker_tasks (its duties beside the
 * webhooks: deferred calls, polling, retention).  The fourth,
 * partner_svc.webhook_secret, is the accepted secrets, parsed here; its
 * hook never refuses a value, since PostgreSQL prints a refused value.
 * partner_svc.time_scale derives the rate-limit window in its assign
 * hook: one clock for the cache's TTLs and the limiter's window.
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
#include "utils/guc.h"
#include "utils/varlena.h"

#include "guc.h"
#include "guc_keys.h"
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

static char *webhook_listener_string = NULL;
static char *webhook_secret_string = NULL;
static char *worker_string = NULL;
static char *worker_tasks_string = NULL;

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

/*
 * The table.  The order is the order of docs/reference.md: the requests,
 * the limiter and its fleet quota, the cache and estimates, the clock,
 * the webhook worker.
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

	{.name = "webhook_listener", .type = PSVC_GUC_STRING,
		.var = &webhook_listener_string, .boot_string = "",
		.context = PGC_SIGHUP,
		.short_desc = "Where the webhook listener listens, and its limits on clients.",
		.long_desc = "Keys and values, such as 'port=8443 max_body=128kB': address, port (0: no listener), "
		"max_body, max_body_in_flight, max_connections_per_address, min_rate, header_timeout, "
		"request_timeout, lock_timeout.  A key not given has its default.",
		.check_string = psvc_guc_check_listener, .assign_string = psvc_guc_assign_listener},
	{.name = "webhook_secret", .type = PSVC_GUC_STRING,
		.var = &webhook_secret_string, .boot_string = "",
		.context = PGC_SIGHUP, .flags = GUC_SUPERUSER_ONLY | GUC_LIST_INPUT,
		.short_desc = "Values the X-Partner-Webhook-Secret header of each webhook may have.",
		.long_desc = "Empty: no header is required.  During a rotation, the new secret and the former one, separated by a comma.",
		.check_string = check_webhook_secret, .assign_string = assign_webhook_secret},
	{.name = "worker", .type = PSVC_GUC_STRING,
		.var = &worker_string, .boot_string = "",
		.context = PGC_POSTMASTER,
		.short_desc = "Database and role of the background worker.",
		.long_desc = "Keys and values, such as 'database=app role=partner_hooks': database (default postgres; "
		"the extension must be installed there), role (empty: the bootstrap superuser; it needs LOGIN).",
		.check_string = psvc_guc_check_worker, .assign_string = psvc_guc_assign_worker},
	{.name = "poll_timeout", .type = PSVC_GUC_INT,
		.var = &psvc_guc_poll_timeout, .boot = 5000,
		.min = 100, .max = 60000,
		.context = PGC_SIGHUP, .flags = GUC_UNIT_MS,
		.short_desc = "Time allowed for one status poll of the poll worker, connecting included.",
		.long_desc = "Applies to each attempt of a poll, whatever the polled server's connect_timeout and request_timeout."},
	{.name = "poll_retries", .type = PSVC_GUC_INT,
		.var = &psvc_guc_poll_retries, .boot = 1,
		.min = 0, .max = 5,
		.context = PGC_SIGHUP,
		.short_desc = "Retries of a status poll that failed transiently.",
		.long_desc = "Whatever the polled server's max_retries; a poll that still fails is left for the next round."},
	{.name = "poll_max_per_round", .type = PSVC_GUC_INT,
		.var = &psvc_guc_poll_max_per_round, .boot = 500,
		.min = 1, .max = 100000,
		.context = PGC_SIGHUP,
		.short_desc = "Orders and checkouts polled per round of the poll worker at most.",
		.long_desc = "The oldest due rows first; the others wait for the next round, and webhook_status() says polling lags."},
	{.name = "worker_tasks", .type = PSVC_GUC_STRING,
		.var = &worker_tasks_string, .boot_string = "",
		.context = PGC_SIGHUP,
		.short_desc = "What the background worker does beside the webhooks: deferred calls, polling, retention.",
		.long_desc = "Keys and values, such as 'senders=8 poll_share=20': senders, give_up, max_attempts, "
		"keep_calls, poll_after, poll_interval, poll_share, keep_events, keep_rejects, max_rejects.  "
		"A key not given has its default.",
		.check_string = psvc_guc_check_tasks, .assign_string = psvc_guc_assign_tasks},
};

/* Defines the settings; from _PG_init, once per process. */
void
psvc_guc_init(void)
{
	psvc_guc_keys_init();
	for (int i = 0; i < lengthof(gucs); i++)
	{
		const PsvcGuc *g = &gucs[i];
		char	   *name;

		if (g->context == PGC_POSTMASTER && !process_shared_preload_libraries_in_progress)
			continue;
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
