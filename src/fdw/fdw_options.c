/*-------------------------------------------------------------------------
 *
 * fdw_options.c
 *		  Validator of the options of partner_svc servers, user mappings,
 *		  foreign tables and their columns.
 *
 * The rules are data: valid_options says which option belongs to which
 * kind of object and which function checks its value; the value lists
 * (services, tiers, resources) are plain arrays.  Rules that involve more
 * than one option (required options, "tier" only for service "orders") are
 * checked after the per-option pass.  PostgreSQL hands the validator the
 * complete resulting option list on CREATE and on ALTER alike, so these
 * cross-option checks hold for every stored object.
 *
 * Secrets: the value of "api_key" never appears in a message, detail or
 * hint.  Nor does a base_url that carries credentials, which is rejected.
 *
 * An unknown option is reported with the options valid for that object and,
 * when one is close enough, the nearest of them by edit distance
 * (PostgreSQL's varstr_levenshtein, the same courtesy as file_fdw).
 *
 * Per-server settings (connect_timeout ... prefetch) are the rows of
 * guc.c's table marked server_option: valid_options takes them where
 * SETTINGS_HERE stands, and they are checked against the bounds and unit
 * of their row with the GUC's own parser, so '5s' means what it means in
 * SET.
 *
 * Options that name a file the server process reads (ssl_ca_file,
 * ssl_cert_file, ssl_key_file) must be absolute paths, and only roles with
 * the privileges of pg_read_server_files (superusers included) may set
 * them, as file_fdw restricts its filename: otherwise any server owner
 * could have the backend read files of the data directory.  The validator
 * sees the whole resulting list, so once a server has one of them, only
 * such a role can ALTER its options.
 *
 * The option "default" (a boolean) says whether the server is the one the
 * functions of its service use when no server is named (functions.c).
 * Only superusers and roles with the privileges of the extension's owner
 * may set it (psvc_options_decides_default, asked about GetUserId(): the
 * validator runs in the session that runs CREATE or ALTER SERVER), for
 * the same reason as the file options: once a server has it, only such a
 * role can ALTER the server's options.
 *
 * A proxy URL must not carry credentials: it is shown by EXPLAIN VERBOSE.
 *
 * Whether a foreign table's resource belongs to its server's service is not
 * checked here: the validator of a table does not see the server.  The
 * planner checks it (fdw_plan.c), against the endpoint catalogue, which
 * also owns the list of resources.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_options.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

#include "call.h"
#include "catalog.h"
#include "fdw.h"
#include "guc.h"
#include "options.h"
#include "pg_compat.h"
#include "ratelimit.h"

typedef void (*option_check_fn) (DefElem *def);

/*
 * The "catalog" of the options of IMPORT FOREIGN SCHEMA openapi: no real
 * catalog has this OID, and InvalidOid stands for the import of a service,
 * which takes none.
 */
#define OPENAPI_IMPORT ((Oid) 1)

/* One option: its name, the catalog of the object it goes on, its check. */
typedef struct PsvcOption
{
	const char *name;
	Oid			catalog;
	option_check_fn check;
} PsvcOption;

static void check_service(DefElem *def);
static void check_base_url(DefElem *def);
static void check_tier(DefElem *def);
static void check_rate_limits(DefElem *def);
static void check_max_response_size(DefElem *def);
static void check_api_key(DefElem *def);
static void check_resource(DefElem *def);
static void check_cache_ttl(DefElem *def);
static void check_field(DefElem *def);
static void check_setting(DefElem *def);
static void check_file_path(DefElem *def);
static void check_proxy(DefElem *def);
static void check_default(DefElem *def);
static void check_boolean(DefElem *def);
static void check_auth(DefElem *def);
static void check_header_name(DefElem *def);
static void check_auth_word(DefElem *def);
static void check_param_name(DefElem *def);
pg_noreturn static void report_bad_base_url(const char *name, const char *url,
											const char *reason);
pg_noreturn static void report_unknown_option(const char *name, Oid catalog);

/*
 * The row that stands for the settings a server option overrides: guc.c's
 * rows marked server_option, in their order (all_options expands it).
 */
#define SETTINGS_HERE ""

static const PsvcOption valid_options[] = {
	{"service", ForeignServerRelationId, check_service},
	{"base_url", ForeignServerRelationId, check_base_url},
	{"tier", ForeignServerRelationId, check_tier},
	{"rate_limits", ForeignServerRelationId, check_rate_limits},
	{"max_response_size", ForeignServerRelationId, check_max_response_size},
	{SETTINGS_HERE, ForeignServerRelationId, check_setting},
	{"ssl_ca_file", ForeignServerRelationId, check_file_path},
	{"ssl_cert_file", ForeignServerRelationId, check_file_path},
	{"ssl_key_file", ForeignServerRelationId, check_file_path},
	{"proxy", ForeignServerRelationId, check_proxy},
	{"auth", ForeignServerRelationId, check_auth},
	{"auth_header", ForeignServerRelationId, check_header_name},
	{"auth_prefix", ForeignServerRelationId, check_auth_word},
	{"auth_param", ForeignServerRelationId, check_param_name},
	{"token_url", ForeignServerRelationId, check_base_url},
	{"scopes", ForeignServerRelationId, check_auth_word},
	{"idempotency_header", ForeignServerRelationId, check_header_name},
	{"api_key", UserMappingRelationId, check_api_key},
	{"client_id", UserMappingRelationId, check_api_key},
	{"client_secret", UserMappingRelationId, check_api_key},
	{"cache_ttl", ForeignServerRelationId, check_cache_ttl},
	{"default", ForeignServerRelationId, check_default},
	{"async_capable", ForeignServerRelationId, check_boolean},
	{"resource", ForeignTableRelationId, check_resource},
	{"cache_ttl", ForeignTableRelationId, check_cache_ttl},
	{"async_capable", ForeignTableRelationId, check_boolean},
	{"field", AttributeRelationId, check_field},
	/* IMPORT FOREIGN SCHEMA openapi (fdw_openapi.c checks them) */
	{"spec_file", OPENAPI_IMPORT, NULL},
	{"spec_json", OPENAPI_IMPORT, NULL},
	/* a route declared in SQL (fdw_options_declared.c) */
	{"endpoint", ForeignTableRelationId, psvc_options_check_declared},
	{"items", ForeignTableRelationId, psvc_options_check_declared},
	{"paging", ForeignTableRelationId, psvc_options_check_declared},
	{"cursor_path", ForeignTableRelationId, psvc_options_check_declared},
	{"cursor_param", ForeignTableRelationId, psvc_options_check_declared},
	{"next_path", ForeignTableRelationId, psvc_options_check_declared},
	{"offset_param", ForeignTableRelationId, psvc_options_check_declared},
	{"page_param", ForeignTableRelationId, psvc_options_check_declared},
	{"limit_param", ForeignTableRelationId, psvc_options_check_declared},
	{"page_size", ForeignTableRelationId, psvc_options_check_declared},
	{"insert", ForeignTableRelationId, psvc_options_check_declared},
	{"update", ForeignTableRelationId, psvc_options_check_declared},
	{"delete", ForeignTableRelationId, psvc_options_check_declared},
	{"json_path", AttributeRelationId, psvc_options_check_declared},
	{"param", AttributeRelationId, psvc_options_check_declared},
	{"param_name", AttributeRelationId, psvc_options_check_declared},
	{"raw", AttributeRelationId, psvc_options_check_declared},
	{NULL, InvalidOid, NULL}
};

/*
 * valid_options with SETTINGS_HERE replaced by guc.c's server options, a
 * NULL-terminated array built once per backend in TopMemoryContext;
 * *n_options is its length.
 */
static const PsvcOption *
all_options(int *n_options)
{
	static PsvcOption *all = NULL;
	static int	n_all = 0;

	if (all == NULL)
	{
		int			n_settings = psvc_guc_server_option_names(NULL, 0);
		const char **setting_names;
		PsvcOption *a;
		int			n = 0;

		setting_names = MemoryContextAlloc(TopMemoryContext,
										   sizeof(char *) * Max(n_settings, 1));
		psvc_guc_server_option_names(setting_names, n_settings);
		a = MemoryContextAlloc(TopMemoryContext,
							   sizeof(PsvcOption) * (lengthof(valid_options) + n_settings));
		for (const PsvcOption *opt = valid_options; opt->name; opt++)
		{
			if (strcmp(opt->name, SETTINGS_HERE) != 0)
				a[n++] = *opt;
			else
				for (int i = 0; i < n_settings; i++)
				{
					a[n] = *opt;
					a[n++].name = setting_names[i];
				}
		}
		a[n].name = NULL;
		all = a;
		n_all = n;
	}
	if (n_options)
		*n_options = n_all;
	return all;
}

/*
 * The resources are the endpoint catalogue's (endpoints.c), listed once
 * per backend as a NULL-terminated array for the checks below.
 */
static const char *const *
resource_names(void)
{
	static const char **names = NULL;

	if (names == NULL)
	{
		int			n;
		const PsvcEndpoint *eps = psvc_endpoints(&n);
		const char **list = MemoryContextAlloc(TopMemoryContext, sizeof(char *) * (n + 1));

		for (int i = 0; i < n; i++)
			list[i] = eps[i].resource;
		list[n] = NULL;
		names = list;
	}
	return names;
}

PG_FUNCTION_INFO_V1(psvc_options_validator);

/*
 * Name of the kind of object whose options live in the given catalog, as
 * used in messages.
 */
static const char *
object_kind(Oid catalog)
{
	switch (catalog)
	{
		case ForeignDataWrapperRelationId:
			return "foreign-data wrapper";
		case ForeignServerRelationId:
			return "server";
		case UserMappingRelationId:
			return "user mapping";
		case ForeignTableRelationId:
			return "foreign table";
		case AttributeRelationId:
			return "column";
		case InvalidOid:
			return "IMPORT FOREIGN SCHEMA statement";
		case OPENAPI_IMPORT:
			return "IMPORT FOREIGN SCHEMA openapi statement";
	}
	elog(ERROR, "unexpected option catalog %u", catalog);
	return NULL;				/* keep compiler quiet */
}

/*
 * The candidate nearest to the given word, or NULL when none is near enough
 * to be a plausible typo: two edits, or a third of the candidate's length
 * for longer names.  Ties go to the earlier candidate.
 */
static const char *
closest_match(const char *word, const char *const *candidates, int ncandidates)
{
	const char *best = NULL;
	int			best_distance = INT_MAX;

	for (int i = 0; i < ncandidates; i++)
	{
		int			limit = Max(2, (int) strlen(candidates[i]) / 3);
		int			d = varstr_levenshtein(word, strlen(word),
										   candidates[i], strlen(candidates[i]),
										   1, 1, 1, false);

		if (d <= limit && d < best_distance)
		{
			best = candidates[i];
			best_distance = d;
		}
	}
	return best;
}

static int
count_names(const char *const *names)
{
	int			n = 0;

	while (names[n] != NULL)
		n++;
	return n;
}

/* "a, b, c" of a NULL-terminated list, palloc'd. */
static char *
join_names(const char *const *names)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; names[i] != NULL; i++)
		appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "", names[i]);
	return buf.data;
}

static bool
name_in_list(const char *word, const char *const *names)
{
	for (int i = 0; names[i] != NULL; i++)
	{
		if (strcmp(word, names[i]) == 0)
			return true;
	}
	return false;
}

/*
 * Rejects a value that is not in the list.  "what" is the plural noun used
 * in the hint ("services"); the value itself is echoed, so never use this
 * for a secret.
 */
static void
check_enum_value(DefElem *def, const char *const *names, const char *what)
{
	const char *value = defGetString(def);
	const char *nearest;

	if (name_in_list(value, names))
		return;

	nearest = closest_match(value, names, count_names(names));
	if (nearest)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"",
						def->defname, value),
				 errhint("Perhaps you meant \"%s\".  Valid %s are: %s.",
						 nearest, what, join_names(names))));
	else
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"",
						def->defname, value),
				 errhint("Valid %s are: %s.", what, join_names(names))));
}

static void
check_service(DefElem *def)
{
	check_enum_value(def, psvc_service_names(), "services");
}

static void
check_tier(DefElem *def)
{
	check_enum_value(def, psvc_tier_names, "tiers");
}

/* Per-route limits of the contract: syntax in ratelimit_rules.c. */
static void
check_rate_limits(DefElem *def)
{
	psvc_rl_check_overrides(defGetString(def));
}

static void
check_max_response_size(DefElem *def)
{
	(void) psvc_options_parse_size(defGetString(def));
}

static void
check_resource(DefElem *def)
{
	check_enum_value(def, resource_names(), "resources");
}

/* cache_ttl: a time from 0 to 24 hours (server_options.c parses it). */
static void
check_cache_ttl(DefElem *def)
{
	(void) psvc_options_parse_ttl(defGetString(def));
}

static void
report_bad_base_url(const char *name, const char *url, const char *reason)
{
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
			 errmsg("invalid value for option \"%s\": \"%s\"", name, url),
			 errdetail("%s", reason),
			 errhint("Give an absolute http:// or https:// URL such as \"https://api.example.com/v1\".")));
}

/*
 * base_url (and token_url, the same rules) must be an absolute http or
 * https URL with a host and no
 * credentials, query or fragment; a path and a trailing slash are allowed.
 * The structural rules are checked here so the messages are precise; then
 * libcurl, which will send the requests, must accept the URL (port range,
 * host syntax: psvc_call_url_error).
 */
static void
check_base_url(DefElem *def)
{
	const char *url = defGetString(def);
	const char *authority;
	size_t		authority_len;
	const char *why;

	if (pg_strncasecmp(url, "http://", 7) == 0)
		authority = url + 7;
	else if (pg_strncasecmp(url, "https://", 8) == 0)
		authority = url + 8;
	else
	{
		report_bad_base_url(def->defname, url, "The URL must start with \"http://\" or \"https://\".");
	}
	authority_len = strcspn(authority, "/?#");

	/* Not echoed: whatever precedes '@' may be a password. */
	if (memchr(authority, '@', authority_len) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\"", def->defname),
				 errdetail("The URL must not contain a user name or password."),
				 errhint("Put the API key in the user mapping option \"api_key\".")));

	for (const char *p = url; *p; p++)
	{
		if ((unsigned char) *p <= ' ' || (unsigned char) *p == 0x7f)
			report_bad_base_url(def->defname, url, "The URL must not contain spaces or control characters.");
	}
	if (authority_len == 0)
		report_bad_base_url(def->defname, url, "The URL has no host.");
	if (strchr(url, '?') != NULL)
		report_bad_base_url(def->defname, url, "The URL must not have a query string.");
	if (strchr(url, '#') != NULL)
		report_bad_base_url(def->defname, url, "The URL must not have a fragment.");

	why = psvc_call_url_error(url, false);
	if (why != NULL)
		report_bad_base_url(def->defname, url,
							psprintf("The URL could not be parsed: %s.", why));
}

/*
 * The key is sent as "Authorization: Bearer <key>", so it must be a single
 * header token; so are an OAuth2 client's id and secret (api_key,
 * client_id, client_secret).  Messages name the rule, never the value.
 */
static void
check_api_key(DefElem *def)
{
	const char *key = defGetString(def);
	bool		is_key = strcmp(def->defname, "api_key") == 0;

	if (key[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\"", def->defname),
				 errdetail("The %s is empty.", is_key ? "API key" : "value")));

	for (const char *p = key; *p; p++)
	{
		if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("invalid value for option \"%s\"", def->defname),
					 errdetail("%s consists of printable ASCII characters without spaces.",
							   is_key ? "An API key" : "An OAuth2 client's id or secret")));
	}
}

static const char *const auth_names[] = {"bearer", "header", "query", "oauth2", NULL};

static void
check_auth(DefElem *def)
{
	check_enum_value(def, auth_names, "authentication styles");
}

/* auth_header: an HTTP field name (RFC 9110's token) */
static void
check_header_name(DefElem *def)
{
	const char *v = defGetString(def);

	if (v[0] == '\0' ||
		strspn(v, "!#$%&'*+-.^_`|~0123456789"
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != strlen(v))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", def->defname, v),
				 errdetail("A header name consists of letters, digits and \"!#$%%&'*+-.^_`|~\".")));
}

/* auth_prefix and scopes: printable ASCII, words separated by one space */
static void
check_auth_word(DefElem *def)
{
	const char *v = defGetString(def);
	bool		bad = v[0] == '\0' || v[0] == ' ' || v[strlen(v) - 1] == ' ';

	for (const char *p = v; *p && !bad; p++)
		bad = (unsigned char) *p < ' ' || (unsigned char) *p >= 0x7f ||
			(p[0] == ' ' && p[1] == ' ');
	if (bad)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\"", def->defname),
				 errdetail("The value consists of printable ASCII words separated by single spaces.")));
}

/* auth_param: a query parameter's name, sent as it is */
static void
check_param_name(DefElem *def)
{
	const char *v = defGetString(def);

	if (v[0] == '\0' ||
		strspn(v, "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
		!= strlen(v))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", def->defname, v),
				 errdetail("A parameter name consists of letters, digits and \"-._~\".")));
}

static void
check_field(DefElem *def)
{
	if (defGetString(def)[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"field\""),
				 errdetail("The JSON field name is empty.")));
}

/*
 * A per-server setting: read as its GUC would read it (units for the
 * timeouts, on/off for prefetch) and within the GUC's bounds.
 */
static void
check_setting(DefElem *def)
{
	const PsvcGuc *sd = psvc_guc_server_option(def->defname);
	const char *value = defGetString(def);
	const char *unit_hint = NULL;
	bool		is_ms;
	bool		b;
	int			v;

	Assert(sd != NULL);
	is_ms = (sd->flags & GUC_UNIT_MS) != 0;
	if (sd->type == PSVC_GUC_BOOL)
	{
		if (!parse_bool(value, &b))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("invalid value for option \"%s\": \"%s\"",
							def->defname, value),
					 errhint("Give a boolean value such as \"on\" or \"off\".")));
		return;
	}
	if (!parse_int(value, &v, sd->flags, &unit_hint))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"",
						def->defname, value),
				 unit_hint ? errhint("%s", unit_hint) :
				 is_ms ? errhint("Give a whole number of milliseconds, or a number with a unit such as \"5s\".") :
				 errhint("Give a whole number.")));
	if (v < sd->min || v > sd->max)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("value for option \"%s\" is out of range: \"%s\"",
						def->defname, value),
				 errdetail("Option \"%s\" must be between %d and %d%s.",
						   def->defname, (int) sd->min, (int) sd->max,
						   is_ms ? " milliseconds" : "")));
}

/*
 * A file the backend will read: an absolute path, set only by a role with
 * the privileges of pg_read_server_files.  Whether the file exists is left
 * to the first request, which reports it.
 */
static void
check_file_path(DefElem *def)
{
	const char *path = defGetString(def);

	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to set option \"%s\"", def->defname),
				 errdetail("Options naming files that the database server reads may be set only by superusers and roles with the privileges of pg_read_server_files.")));
	if (!is_absolute_path(path))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", def->defname, path),
				 errdetail("The path must be absolute.")));
	for (const char *p = path; *p; p++)
	{
		if ((unsigned char) *p < ' ' || (unsigned char) *p == 0x7f)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("invalid value for option \"%s\"", def->defname),
					 errdetail("The path must not contain control characters.")));
	}
}

/*
 * default: a boolean, set only by a role that decides the default server
 * of a service (superusers and the extension's owner).
 */
static void
check_default(DefElem *def)
{
	if (!psvc_options_decides_default(GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to set option \"%s\"", def->defname),
				 errdetail("Which server of a service the functions use when none is named is decided only by superusers and the owner of the extension partner_svc.")));
	check_boolean(def);
}

/* default and async_capable: a boolean (server_options.c reads them). */
static void
check_boolean(DefElem *def)
{
	const char *value = defGetString(def);
	bool		b;

	if (!parse_bool(value, &b))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"",
						def->defname, value),
				 errhint("Give a boolean value such as \"true\" or \"false\".")));
}

/* Schemes libcurl accepts for a proxy. */
static const char *const proxy_schemes[] = {
	"http", "https", "socks4", "socks4a", "socks5", "socks5h", NULL
};

/*
 * proxy: "environment" (libcurl's *_proxy variables apply), or the URL of
 * a proxy: scheme, host and optional port, without credentials or path.
 */
static void
check_proxy(DefElem *def)
{
	const char *url = defGetString(def);
	const char *sep = strstr(url, "://");
	const char *authority;
	size_t		authority_len;
	bool		known = false;
	const char *why;

	if (strcmp(url, "environment") == 0)
		return;

	for (int i = 0; sep != NULL && proxy_schemes[i] != NULL; i++)
	{
		if (strlen(proxy_schemes[i]) == (size_t) (sep - url) &&
			pg_strncasecmp(url, proxy_schemes[i], sep - url) == 0)
			known = true;
	}
	if (!known)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"proxy\": \"%s\"", url),
				 errdetail("The proxy must be a URL with one of the schemes %s, or \"environment\".",
						   join_names(proxy_schemes)),
				 errhint("Give a URL such as \"http://proxy.example.com:3128\".")));
	authority = sep + 3;
	authority_len = strcspn(authority, "/?#");

	/* Not echoed: whatever precedes '@' may be a password. */
	if (memchr(authority, '@', authority_len) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"proxy\""),
				 errdetail("The proxy URL must not contain a user name or password.")));
	if (authority_len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"proxy\": \"%s\"", url),
				 errdetail("The URL has no host.")));
	if (authority[authority_len] != '\0' &&
		strcmp(authority + authority_len, "/") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"proxy\": \"%s\"", url),
				 errdetail("A proxy URL has no path, query or fragment.")));
	for (const char *p = url; *p; p++)
	{
		if ((unsigned char) *p <= ' ' || (unsigned char) *p == 0x7f)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("invalid value for option \"proxy\": \"%s\"", url),
					 errdetail("The URL must not contain spaces or control characters.")));
	}

	why = psvc_call_url_error(url, true);
	if (why != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"proxy\": \"%s\"", url),
				 errdetail("The URL could not be parsed: %s.", why)));
}

/*
 * Reports an option that is not valid on this kind of object.  The hint
 * lists the valid ones and suggests the nearest; the detail says where the
 * option belongs when it is valid elsewhere (api_key on a server, say).
 */
static void
report_unknown_option(const char *name, Oid catalog)
{
	int			n_options;
	const PsvcOption *options = all_options(&n_options);
	const char **names = palloc(sizeof(char *) * (n_options + 1));
	int			n = 0;
	const char *home = NULL;
	const char *nearest;
	char	   *list;

	for (const PsvcOption *opt = options; opt->name; opt++)
	{
		if (opt->catalog == catalog)
			names[n++] = opt->name;
		else if (strcmp(opt->name, name) == 0)
			home = home ? psprintf("%s or a %s", home, object_kind(opt->catalog)) :
				object_kind(opt->catalog);	/* cache_ttl has two */
	}
	names[n] = NULL;

	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("invalid option \"%s\"", name),
				 home ? errdetail("Option \"%s\" belongs on a %s.", name, home) : 0,
				 errhint("A partner_svc %s takes no options.",
						 object_kind(catalog))));

	nearest = closest_match(name, names, n);
	list = join_names(names);
	if (nearest)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("invalid option \"%s\"", name),
				 home ? errdetail("Option \"%s\" belongs on a %s.", name, home) : 0,
				 errhint("Perhaps you meant the option \"%s\".  Valid options for a %s are: %s.",
						 nearest, object_kind(catalog), list)));
	else
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("invalid option \"%s\"", name),
				 home ? errdetail("Option \"%s\" belongs on a %s.", name, home) : 0,
				 errhint("Valid options for a %s are: %s.",
						 object_kind(catalog), list)));
}

static const PsvcOption *
find_option(const char *name, Oid catalog)
{
	for (const PsvcOption *opt = all_options(NULL); opt->name; opt++)
	{
		if (opt->catalog == catalog && strcmp(opt->name, name) == 0)
			return opt;
	}
	return NULL;
}

static void
require_option(List *options, const char *name, Oid catalog)
{
	if (psvc_options_find(options, name) != NULL)
		return;

	if (catalog == ForeignServerRelationId)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("missing required option \"%s\"", name),
				 errdetail("A partner_svc server needs the options \"service\" and \"base_url\".")));
	else
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("missing required option \"%s\"", name),
				 errdetail("A partner_svc foreign table needs the option \"resource\" naming what it reads, or \"endpoint\" declaring a route."),
				 errhint("Valid resources are: %s.", join_names(resource_names()))));
}

/* The options of each authentication style, and the one it requires. */
typedef struct AuthOptionRule
{
	const char *option;
	const char *style;			/* the value of "auth" it belongs to */
	bool		required;
} AuthOptionRule;

static const AuthOptionRule auth_option_rules[] = {
	{"auth_header", "header", true},
	{"auth_prefix", "header", false},
	{"auth_param", "query", true},
	{"token_url", "oauth2", true},
	{"scopes", "oauth2", false},
};

/*
 * An option of one authentication style only on a server of that style,
 * and its required ones there.
 */
static void
check_auth_options(List *options)
{
	DefElem    *auth = psvc_options_find(options, "auth");
	const char *style = auth ? defGetString(auth) : "bearer";

	for (int i = 0; i < lengthof(auth_option_rules); i++)
	{
		const AuthOptionRule *r = &auth_option_rules[i];
		bool		given = psvc_options_find(options, r->option) != NULL;
		bool		mine = strcmp(style, r->style) == 0;

		if (given && !mine)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("option \"%s\" is valid only with auth '%s'",
							r->option, r->style),
					 errdetail("This server's authentication is \"%s\".", style)));
		if (mine && r->required && !given)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
					 errmsg("missing required option \"%s\"", r->option),
					 errdetail("A server with auth '%s' needs the option \"%s\".",
							   r->style, r->option)));
	}
}

/* A user mapping's OAuth2 client: its id and secret together. */
static void
check_mapping_options(List *options)
{
	bool		id = psvc_options_find(options, "client_id") != NULL;
	bool		secret = psvc_options_find(options, "client_secret") != NULL;

	if (id != secret)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("missing required option \"%s\"",
						id ? "client_secret" : "client_id"),
				 errdetail("An OAuth2 client is given by both \"client_id\" and \"client_secret\".")));
}

/*
 * Rules that involve more than one option of a server: both required
 * options present, a tier only on an order server, a client key only with
 * a client certificate, the options of the authentication style.
 */
static void
check_server_options(List *options)
{
	DefElem    *tier;
	const char *service;

	require_option(options, "service", ForeignServerRelationId);
	require_option(options, "base_url", ForeignServerRelationId);

	if (psvc_options_find(options, "ssl_key_file") != NULL &&
		psvc_options_find(options, "ssl_cert_file") == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("option \"ssl_key_file\" requires option \"ssl_cert_file\""),
				 errdetail("A client key is of use only with its client certificate.")));

	check_auth_options(options);

	service = defGetString(psvc_options_find(options, "service"));
	tier = psvc_options_find(options, "tier");
	if (tier != NULL && (psvc_service_find(service) < 0 ||
						 !psvc_services[psvc_service_find(service)].tiers))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("option \"tier\" is valid only for service \"%s\"",
						psvc_services[PSVC_SVC_ORDERS].name),
				 errdetail("This server's service is \"%s\"; only the order service has rate-limit tiers.",
						   service)));
}

/*
 * partner_svc.fdw_validator(text[], oid): checks the options given for an
 * object of the catalog with the given OID.  Called by CREATE and ALTER of
 * the wrapper, servers, user mappings and foreign tables (columns included)
 * with the whole list the object will have.
 */
Datum
psvc_options_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		const PsvcOption *opt = find_option(def->defname, catalog);

		if (opt == NULL)
			report_unknown_option(def->defname, catalog);

		/* CREATE and ALTER catch repeats; a direct call might not. */
		if (psvc_options_find(options, def->defname) != def)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("conflicting or redundant options"),
					 errdetail("Option \"%s\" is given more than once.",
							   def->defname)));

		opt->check(def);
	}

	if (catalog == ForeignServerRelationId)
		check_server_options(options);
	else if (catalog == UserMappingRelationId)
		check_mapping_options(options);
	else if (catalog == ForeignTableRelationId)
	{
		psvc_options_check_declared_table(options);
		if (psvc_options_find(options, "endpoint") == NULL)
			require_option(options, "resource", catalog);
	}
	else if (catalog == AttributeRelationId)
		psvc_options_check_declared_column(options);

	PG_RETURN_VOID();
}

/*
 * The options of IMPORT FOREIGN SCHEMA: none for a service's (fdw_import.c),
 * the rows of OPENAPI_IMPORT (spec_file, spec_json) for an OpenAPI
 * document's (fdw_openapi.c checks their values).  Any other option is
 * reported like an unknown option of any object, with the nearest match
 * and where it belongs when it is valid elsewhere.
 */
void
psvc_options_check_import(List *options, bool openapi)
{
	Oid			catalog = openapi ? OPENAPI_IMPORT : InvalidOid;
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		const PsvcOption *opt = find_option(def->defname, catalog);

		if (opt == NULL)
			report_unknown_option(def->defname, catalog);
		if (opt->check)
			opt->check(def);
	}
}
