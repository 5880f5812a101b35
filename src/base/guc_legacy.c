/*-------------------------------------------------------------------------
 *
 * guc_legacy.c
 *		  The three "key=value ..." settings of 0.3 that 0.4 replaced by
 *		  one GUC a key: partner_svc.webhook_listener, partner_svc.worker
 *		  and partner_svc.worker_tasks.
 *
 * They stay defined, hidden from pg_settings and the sample file, for one
 * purpose: a configuration that still sets one is never silently
 * ignored.  Their check hooks (guc.c) accept any value and change
 * nothing; when the value is not empty they report it here, as a WARNING
 * naming the setting of 0.4 each key became and the lines to write
 * instead.  The postmaster reports it, at start and at every reload, into
 * the server log; so does a session that writes one with ALTER SYSTEM.
 * The backends re-reading the file at a reload stay silent, so that the
 * warning is logged once.  A 0.3 partner_svc.worker left at start also
 * makes guc.c distrust the worker's connection: without it the worker
 * would run in database postgres as the bootstrap superuser.
 *
 * The same table, key to successor, is the table of docs/upgrades.md.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/guc_legacy.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "guc_legacy.h"

/* A key of a 0.3 setting and the setting of 0.4 it became. */
typedef struct LegacyKey
{
	const char *key;
	const char *successor;		/* without "partner_svc." */
} LegacyKey;

typedef struct LegacySetting
{
	const char *name;			/* with "partner_svc." */
	const LegacyKey *keys;
	int			nkeys;
} LegacySetting;

static const LegacyKey listener_keys[] = {
	{"address", "webhook_listen_address"},
	{"port", "webhook_port"},
	{"max_body", "webhook_max_body"},
	{"max_body_in_flight", "webhook_max_body_in_flight"},
	{"max_connections_per_address", "webhook_max_connections_per_address"},
	{"min_rate", "webhook_min_rate"},
	{"header_timeout", "webhook_header_timeout"},
	{"request_timeout", "webhook_request_timeout"},
	{"lock_timeout", "webhook_lock_timeout"},
};

static const LegacyKey worker_keys[] = {
	{"database", "worker_database"},
	{"role", "worker_role"},
};

static const LegacyKey task_keys[] = {
	{"senders", "deferred_senders"},
	{"give_up", "deferred_give_up"},
	{"max_attempts", "deferred_max_attempts"},
	{"keep_calls", "deferred_keep_calls"},
	{"poll_after", "poll_after"},
	{"poll_interval", "poll_interval"},
	{"poll_share", "poll_share"},
	{"keep_events", "webhook_keep_events"},
	{"keep_rejects", "webhook_keep_rejects"},
	{"max_rejects", "webhook_max_rejects"},
};

static const LegacySetting listener = {"partner_svc.webhook_listener", listener_keys, lengthof(listener_keys)};
static const LegacySetting worker = {"partner_svc.worker", worker_keys, lengthof(worker_keys)};
static const LegacySetting tasks = {"partner_svc.worker_tasks", task_keys, lengthof(task_keys)};

/*
 * Ends the token at *p in place and moves *p past it, as 0.3 read it: a
 * value in double quotes may hold white space and commas, with "" for a
 * quote; false if the closing quote is missing.
 */
static bool
legacy_token(char **p)
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

/* The successor of key in setting, or NULL. */
static const char *
legacy_successor(const LegacySetting *setting, const char *key)
{
	for (int i = 0; i < setting->nkeys; i++)
		if (strcmp(setting->keys[i].key, key) == 0)
			return setting->keys[i].successor;
	return NULL;
}

/*
 * Appends to lines "partner_svc.<successor> = '<value>'" for each key of
 * value that 0.4 knows, and to unknown the keys it does not; false when
 * value cannot be read as 0.3 read it.  Allocates in the current context.
 */
static bool
legacy_translate(const LegacySetting *setting, const char *value,
				 StringInfo lines, StringInfo unknown)
{
	char	   *copy = pstrdup(value);
	char	   *p = copy;

	for (;;)
	{
		char	   *key;
		char	   *val;
		const char *successor;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',')
			p++;
		if (*p == '\0')
			return true;
		key = p;
		while (*p != '\0' && *p != '=' && *p != ' ' && *p != '\t' &&
			   *p != '\n' && *p != '\r' && *p != ',')
			p++;
		if (*p != '=')
			return false;
		*p++ = '\0';
		val = p;
		if (!legacy_token(&p))
			return false;
		successor = legacy_successor(setting, key);
		if (successor == NULL)
		{
			appendStringInfo(unknown, "%s\"%s\"", unknown->len ? ", " : "", key);
			continue;
		}
		appendStringInfo(lines, "%spartner_svc.%s = '", lines->len ? ", " : "", successor);
		for (const char *c = val; *c; c++)
		{
			if (*c == '\'')
				appendStringInfoChar(lines, '\'');
			appendStringInfoChar(lines, *c);
		}
		appendStringInfoChar(lines, '\'');
	}
}

/*
 * Warns that setting, of 0.3, is ignored: the detail maps every key to
 * its successor, the hint gives the lines that replace value.
 */
static void
legacy_warn(const LegacySetting *setting, const char *value)
{
	StringInfoData map;
	StringInfoData lines;
	StringInfoData unknown;
	bool		readable;

	initStringInfo(&map);
	initStringInfo(&lines);
	initStringInfo(&unknown);
	for (int i = 0; i < setting->nkeys; i++)
		appendStringInfo(&map, "%s%s is partner_svc.%s", i ? ", " : "",
						 setting->keys[i].key, setting->keys[i].successor);
	readable = legacy_translate(setting, value, &lines, &unknown);
	ereport(WARNING,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("parameter \"%s\" of partner_svc 0.3 is ignored", setting->name),
			 errdetail("Since 0.4 each of its keys is a setting of its own: %s.", map.data),
			 !readable || lines.len == 0 ?
			 errhint("Remove %s from the configuration and set the settings above instead.",
					 setting->name) :
			 unknown.len ?
			 errhint("Replace %s by: %s; unknown keys, ignored: %s.",
					 setting->name, lines.data, unknown.data) :
			 errhint("Replace %s by: %s.", setting->name, lines.data)));
	pfree(map.data);
	pfree(lines.data);
	pfree(unknown.data);
}

/*
 * Whether this process reports a value: the postmaster (start and
 * reload, once into the log), and a session that sets it itself, or
 * writes it with ALTER SYSTEM (which checks it as a value of the file,
 * but inside a transaction, where no reload of the file runs).
 */
static bool
legacy_reports(const char *value, GucSource source)
{
	if (value == NULL || value[0] == '\0')
		return false;
	return !IsUnderPostmaster || source > PGC_S_FILE || IsTransactionState();
}

/*
 * Reports value of the 0.3 setting name (without "partner_svc.") when
 * this process reports one; true if it did.
 */
bool
psvc_guc_legacy_report(const char *name, const char *value, GucSource source)
{
	static const LegacySetting *const settings[] = {&listener, &worker, &tasks};

	if (!legacy_reports(value, source))
		return false;
	for (int i = 0; i < lengthof(settings); i++)
		if (strcmp(settings[i]->name + strlen("partner_svc."), name) == 0)
		{
			legacy_warn(settings[i], value);
			return true;
		}
	elog(ERROR, "unknown 0.3 setting \"%s\"", name);
	return false;				/* keep compiler quiet */
}
