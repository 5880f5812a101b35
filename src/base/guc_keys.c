/*-------------------------------------------------------------------------
 *
 * guc_keys.c
 *		  The settings written as "key=value ..." lists: where the webhook
 *		  listener listens and its limits (partner_svc.webhook_listener),
 *		  the background worker's connection (partner_svc.worker) and its
 *		  duties (partner_svc.worker_tasks).
 *
 * Each list is a table of keys, with the bounds and unit of each, read by
 * one parser.  The parser is the list's GUC check hook: it builds the
 * parsed struct in one malloc'd block (the "extra" the GUC machinery
 * keeps and frees), followed by a copy of the text that the string keys
 * point into, and the assign hook publishes a copy of the struct.  So a
 * string key stays valid exactly as long as the GUC machinery keeps the
 * value.  A key not given has its default; an unknown or repeated key, or
 * a value out of range, refuses the whole setting, with a hint naming the
 * nearest valid key.
 *
 * Many knobs in one setting keep the count of GUCs low (at most 20, see
 * guc.c) while every limit stays separately tunable: an operator sets the
 * listener, or the worker's duties, in one line.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/guc_keys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/varlena.h"

#include "guc.h"
#include "guc_keys.h"
#include "pg_compat.h"

/* One key of a list: an int (with a unit) or a string. */
typedef struct GucKey
{
	const char *name;
	size_t		offset;			/* of the int or const char * in the struct */
	bool		is_string;
	bool		not_empty;		/* a string that must not be empty */
	int			boot;
	const char *boot_string;
	int			min;
	int			max;
	int			unit;			/* GUC_UNIT_*, for parse_int */
	const char *unit_name;		/* as messages show a value */
} GucKey;

typedef struct GucKeyList
{
	const GucKey *keys;
	int			nkeys;
	size_t		size;			/* of the parsed struct */
} GucKeyList;

#define KEY_INT(type, field) .offset = offsetof(type, field)
#define DAY_S (24 * 60 * 60)

static const GucKey listener_keys[] = {
	{.name = "address", KEY_INT(PsvcWebhookListener, address), .is_string = true,
	.not_empty = true, .boot_string = "127.0.0.1"},
	{.name = "port", KEY_INT(PsvcWebhookListener, port),
	.boot = 0, .min = 0, .max = 65535, .unit_name = ""},
	{.name = "max_body", KEY_INT(PsvcWebhookListener, max_body),
	.boot = 65536, .min = 1024, .max = 16 * 1024 * 1024,
	.unit = GUC_UNIT_BYTE, .unit_name = " B"},
	{.name = "max_body_in_flight", KEY_INT(PsvcWebhookListener, max_body_in_flight),
	.boot = 16 * 1024 * 1024, .min = 64 * 1024, .max = 1024 * 1024 * 1024,
	.unit = GUC_UNIT_BYTE, .unit_name = " B"},
	{.name = "max_connections_per_address",
	KEY_INT(PsvcWebhookListener, max_connections_per_address),
	.boot = 64, .min = 0, .max = 512, .unit_name = ""},
	{.name = "min_rate", KEY_INT(PsvcWebhookListener, min_rate),
	.boot = 1024, .min = 0, .max = 1024 * 1024 * 1024,
	.unit = GUC_UNIT_BYTE, .unit_name = " B"},
	{.name = "header_timeout", KEY_INT(PsvcWebhookListener, header_timeout),
	.boot = 10, .min = 1, .max = 3600, .unit = GUC_UNIT_S, .unit_name = " s"},
	{.name = "request_timeout", KEY_INT(PsvcWebhookListener, request_timeout),
	.boot = 30, .min = 1, .max = 3600, .unit = GUC_UNIT_S, .unit_name = " s"},
	{.name = "lock_timeout", KEY_INT(PsvcWebhookListener, lock_timeout),
	.boot = 5000, .min = 1, .max = 600 * 1000, .unit = GUC_UNIT_MS,
	.unit_name = " ms"},
};

static const GucKey worker_keys[] = {
	{.name = "database", KEY_INT(PsvcWorker, database), .is_string = true,
	.not_empty = true, .boot_string = "postgres"},
	{.name = "role", KEY_INT(PsvcWorker, role), .is_string = true,
	.boot_string = ""},
};

/*
 * The worker's duties.  Durations of the partners' clock (give_up,
 * poll_after, poll_interval) are multiplied by partner_svc.time_scale
 * where they are used; the retention periods are real time.
 */
static const GucKey task_keys[] = {
	{.name = "senders", KEY_INT(PsvcWorkerTasks, senders),
	.boot = 8, .min = 1, .max = 64, .unit_name = ""},
	{.name = "give_up", KEY_INT(PsvcWorkerTasks, give_up),
	.boot = DAY_S, .min = 1, .max = 30 * DAY_S, .unit = GUC_UNIT_S, .unit_name = " s"},
	{.name = "max_attempts", KEY_INT(PsvcWorkerTasks, max_attempts),
	.boot = 25, .min = 1, .max = 1000, .unit_name = ""},
	{.name = "keep_calls", KEY_INT(PsvcWorkerTasks, keep_calls),
	.boot = 7 * DAY_S, .min = 0, .max = INT_MAX, .unit = GUC_UNIT_S, .unit_name = " s"},
	{.name = "poll_after", KEY_INT(PsvcWorkerTasks, poll_after),
	.boot = 30 * 60, .min = 1, .max = 30 * DAY_S, .unit = GUC_UNIT_S, .unit_name = " s"},
	{.name = "poll_interval", KEY_INT(PsvcWorkerTasks, poll_interval),
	.boot = 60, .min = 1, .max = DAY_S, .unit = GUC_UNIT_S, .unit_name = " s"},
	{.name = "poll_share", KEY_INT(PsvcWorkerTasks, poll_share),
	.boot = 20, .min = 0, .max = 100, .unit_name = " %"},
	{.name = "keep_events", KEY_INT(PsvcWorkerTasks, keep_events),
	.boot = 30 * DAY_S, .min = 0, .max = INT_MAX, .unit = GUC_UNIT_S, .unit_name = " s"},
	{.name = "keep_rejects", KEY_INT(PsvcWorkerTasks, keep_rejects),
	.boot = 7 * DAY_S, .min = 0, .max = INT_MAX, .unit = GUC_UNIT_S, .unit_name = " s"},
	{.name = "max_rejects", KEY_INT(PsvcWorkerTasks, max_rejects),
	.boot = 10000, .min = 0, .max = INT_MAX, .unit_name = ""},
};

#define LIST(keys, type) {keys, lengthof(keys), sizeof(type)}
static const GucKeyList listener_list = LIST(listener_keys, PsvcWebhookListener);
static const GucKeyList worker_list = LIST(worker_keys, PsvcWorker);
static const GucKeyList task_list = LIST(task_keys, PsvcWorkerTasks);

PsvcWebhookListener psvc_guc_webhook;
PsvcWorker	psvc_guc_worker;
PsvcWorkerTasks psvc_guc_tasks;

/* The defaults of a list into dst. */
static void
keys_defaults(const GucKeyList *list, void *dst)
{
	for (int i = 0; i < list->nkeys; i++)
	{
		const GucKey *k = &list->keys[i];

		if (k->is_string)
			*(const char **) ((char *) dst + k->offset) = k->boot_string;
		else
			*(int *) ((char *) dst + k->offset) = k->boot;
	}
}

/* The valid keys, and the closest to a wrong one, for a hint. */
static void
keys_hint(const GucKeyList *list, const char *wrong)
{
	StringInfoData buf;
	const char *nearest = NULL;
	int			best = 3;		/* farther than this is no suggestion */

	initStringInfo(&buf);
	for (int i = 0; i < list->nkeys; i++)
	{
		const char *k = list->keys[i].name;
		int			d = varstr_levenshtein(wrong, strlen(wrong), k, strlen(k),
										   1, 1, 1, false);

		appendStringInfo(&buf, "%s%s", i == 0 ? "" : ", ", k);
		if (d < best)
		{
			best = d;
			nearest = k;
		}
	}
	if (nearest)
		GUC_check_errhint("Perhaps you meant the key \"%s\".  Valid keys are: %s.",
						  nearest, buf.data);
	else
		GUC_check_errhint("Valid keys are: %s.", buf.data);
	pfree(buf.data);
}

/* Reads one value into dst; false (with the GUC check's detail) if wrong. */
static bool
keys_value(const GucKey *k, char *value, void *dst)
{
	const char *hint = NULL;
	int			v;

	if (k->is_string)
	{
		if (k->not_empty && value[0] == '\0')
		{
			GUC_check_errdetail("Key \"%s\" must not be empty.", k->name);
			return false;
		}
		*(const char **) ((char *) dst + k->offset) = value;
		return true;
	}
	if (!parse_int(value, &v, k->unit, &hint))
	{
		GUC_check_errdetail("Key \"%s\" requires an integer value%s, not \"%s\".",
							k->name, k->unit ? " with an optional unit" : "", value);
		if (hint)
			GUC_check_errhint("%s", hint);
		return false;
	}
	if (v < k->min || v > k->max)
	{
		GUC_check_errdetail("%d%s is outside the valid range for key \"%s\" (%d .. %d).",
							v, k->unit_name, k->name, k->min, k->max);
		return false;
	}
	*(int *) ((char *) dst + k->offset) = v;
	return true;
}

/*
 * Ends the value at *p in place and moves *p past it.  A value in double
 * quotes may hold white space and commas (a database called "my db"),
 * with "" for a quote; false if the closing quote is missing.
 */
static bool
keys_token(char **p)
{
	char	   *in = *p;
	char	   *out = *p;

	if (*in != '"')
	{
		while (*in != '\0' && *in != ' ' && *in != '\t' && *in != '\n' &&
			   *in != '\r' && *in != ',')
			in++;
		if (*in != '\0')
			*in++ = '\0';
		*p = in;
		return true;
	}
	in++;
	for (;;)
	{
		if (*in == '\0')
			return false;
		if (*in == '"' && in[1] == '"')
		{
			*out++ = '"';
			in += 2;
		}
		else if (*in == '"')
		{
			in++;
			break;
		}
		else
			*out++ = *in++;
	}
	*out = '\0';
	*p = in;
	return true;
}

/*
 * Parses "key=value key=value ..." (white space or commas between pairs,
 * a value in double quotes when it holds them) into one malloc'd block, as the GUC machinery wants its extra: the
 * struct, then the text the string keys point into.
 */
static bool
keys_check(const GucKeyList *list, char **newval, void **extra)
{
	const char *s = *newval ? *newval : "";
	size_t		head = MAXALIGN(list->size);
	char	   *block;
	char	   *p;
	bool	   *seen = palloc0(sizeof(bool) * list->nkeys);

	/* the GUC machinery frees an extra: pg_compat.h */
	block = psvc_guc_extra_alloc(head + strlen(s) + 1);
	if (block == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		pfree(seen);
		return false;
	}
	keys_defaults(list, block);
	p = block + head;
	strcpy(p, s);
	for (;;)
	{
		char	   *key;
		char	   *eq;
		const GucKey *k = NULL;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		key = p;
		while (*p != '\0' && *p != '=' && *p != ' ' && *p != '\t' &&
			   *p != '\n' && *p != '\r' && *p != ',')
			p++;
		if (*p != '=')
		{
			if (*p != '\0')
				*p = '\0';
			GUC_check_errdetail("\"%s\" is not of the form key=value.", key);
			goto fail;
		}
		eq = p;
		*p++ = '\0';
		if (!keys_token(&p))
		{
			GUC_check_errdetail("The value of key \"%s\" has no closing double quote.", key);
			goto fail;
		}
		for (int i = 0; i < list->nkeys; i++)
			if (strcmp(list->keys[i].name, key) == 0)
				k = &list->keys[i];
		if (k == NULL)
		{
			GUC_check_errdetail("Unknown key \"%s\".", key);
			keys_hint(list, key);
			goto fail;
		}
		if (seen[k - list->keys])
		{
			GUC_check_errdetail("Key \"%s\" is given more than once.", key);
			goto fail;
		}
		seen[k - list->keys] = true;
		if (!keys_value(k, eq + 1, block))
			goto fail;
	}
	pfree(seen);
	*extra = block;
	return true;

fail:
	pfree(seen);
	psvc_guc_extra_free(block);
	return false;
}

bool
psvc_guc_check_listener(char **newval, void **extra, GucSource source)
{
	return keys_check(&listener_list, newval, extra);
}

void
psvc_guc_assign_listener(const char *newval, void *extra)
{
	psvc_guc_webhook = *(PsvcWebhookListener *) extra;
}

/*
 * Why the value of partner_svc.worker given for the server's start was
 * refused, or "" (postmaster's memory, inherited by the workers).
 */
static char worker_refused[256] = "";

/*
 * A refused value keeps the default, the bootstrap superuser, in force,
 * which is not what the operator asked for; so a refusal while the
 * postmaster preloads the library (the value of the configuration file
 * or the command line, which PostgreSQL only warns about) is remembered
 * for psvc_guc_worker_refused.  A value refused later (ALTER SYSTEM, a
 * reload) changes nothing that runs.
 */
bool
psvc_guc_check_worker(char **newval, void **extra, GucSource source)
{
	if (keys_check(&worker_list, newval, extra))
		return true;
	if (process_shared_preload_libraries_in_progress && !IsUnderPostmaster)
		snprintf(worker_refused, sizeof(worker_refused), "%s",
				 GUC_check_errdetail_string ? GUC_check_errdetail_string :
				 "The value is not valid.");
	return false;
}

/*
 * The one decision "the configuration of the worker is invalid, stay
 * stopped": true when partner_svc.worker was refused at server start,
 * with the reason (a sentence) in *why.  The webhook worker and the
 * deferred senders then never start, rather than run with another role
 * than the one configured.
 */
bool
psvc_guc_worker_refused(const char **why)
{
	*why = worker_refused;
	return worker_refused[0] != '\0';
}

void
psvc_guc_assign_worker(const char *newval, void *extra)
{
	psvc_guc_worker = *(PsvcWorker *) extra;
}

bool
psvc_guc_check_tasks(char **newval, void **extra, GucSource source)
{
	return keys_check(&task_list, newval, extra);
}

void
psvc_guc_assign_tasks(const char *newval, void *extra)
{
	psvc_guc_tasks = *(PsvcWorkerTasks *) extra;
}

/*
 * The defaults, for a process that reads the lists before the GUC
 * machinery assigned them (a library loaded late defines PGC_POSTMASTER
 * rows not at all).
 */
void
psvc_guc_keys_init(void)
{
	keys_defaults(&listener_list, &psvc_guc_webhook);
	keys_defaults(&worker_list, &psvc_guc_worker);
	keys_defaults(&task_list, &psvc_guc_tasks);
}
