/*-------------------------------------------------------------------------
 *
 * server_options.c
 *		  Reading the options of stored partner_svc objects: what a server
 *		  says about the remote side, the caller's API key, a table's
 *		  resource.
 *
 * options.c checks options when they are written; this file reads them
 * back when a scan or a function needs them, and parses the size of
 * max_response_size for both (psvc_options_parse_size).
 *
 * Settings.  connect_timeout, request_timeout, max_retries, page_size,
 * fanout and prefetch are GUCs that a server option of the same name
 * overrides: each is one row of guc.c's table, which gives its name,
 * bounds and unit to the GUC and to the option alike.  The validator
 * checks a value against the row, and psvc_options_setting() gives the
 * effective value, read when a request or scan starts, so a SET in the
 * session applies to servers without the option.
 *
 * The API key comes from the user mapping of the role PostgreSQL checks a
 * foreign table as (the view owner through a view, as postgres_fdw does;
 * set in PsvcServer.userid by the scan and modify code), or of the calling
 * role for functions; the role's own mapping wins over PUBLIC's.  No
 * mapping is the same error GetUserMapping() raises, before any request,
 * except for the todo service, which the documents describe without
 * authentication: it works without a mapping and sends no key.
 *
 * Who decides the default server.  A function called without a server
 * uses the default server of its service (functions.c); only superusers
 * and roles with the privileges of the extension's owner decide it
 * (psvc_options_decides_default): they alone may set the server option
 * "default" (options.c), and only servers they own are candidates, so a
 * role with USAGE on the wrapper cannot add a server that changes, or
 * breaks, which server the other roles' calls use.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/server_options.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "catalog.h"
#include "guc.h"
#include "options.h"
#include "pg_compat.h"

/* The GUC's current value of a setting (a bool as 0 or 1). */
static int
guc_value(const PsvcGuc *g)
{
	if (g->type == PSVC_GUC_BOOL)
		return *(bool *) g->var ? 1 : 0;
	return *(int *) g->var;
}

/*
 * The effective value of a setting for server s: its option when set,
 * else the GUC as it is now.  s may be NULL (the GUC).
 */
int
psvc_options_setting(const PsvcServer *s, PsvcSettingId id)
{
	Assert(id >= 0 && id < PSVC_NSETTINGS);
	if (s != NULL && s->settings[id] >= 0)
		return s->settings[id];
	return guc_value(psvc_guc_setting(id));
}

/*
 * A stored setting's value as an int.  The validator accepted it, so a
 * failure means the catalog was edited by hand.
 */
static int
parse_setting(const PsvcGuc *def, const char *value, const char *servername)
{
	int			v;
	bool		b;
	bool		is_bool = def->type == PSVC_GUC_BOOL;

	if (is_bool ? parse_bool(value, &b) :
		(parse_int(value, &v, def->flags, NULL) && v >= def->min && v <= def->max))
		return is_bool ? (b ? 1 : 0) : v;
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
			 errmsg("invalid value for option \"%s\" of server \"%s\": \"%s\"",
					def->name, servername, value),
			 errhint("Correct it with ALTER SERVER.")));
	return 0;					/* keep compiler quiet */
}

/*
 * EXPLAIN VERBOSE of a scan on s: the effective settings, marking those
 * the server sets, and its proxy and TLS files when it has them.  Nothing
 * secret: the key is in the user mapping, and a proxy URL holds no
 * credentials (the validator refuses them).
 */
void
psvc_options_explain(const PsvcServer *s, ExplainState *es)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < PSVC_NSETTINGS; i++)
	{
		const PsvcGuc *def = psvc_guc_setting((PsvcSettingId) i);
		int			v = psvc_options_setting(s, (PsvcSettingId) i);

		appendStringInfo(&buf, "%s%s=", i > 0 ? ", " : "", def->name);
		if (def->type == PSVC_GUC_BOOL)
			appendStringInfoString(&buf, v ? "on" : "off");
		else
			appendStringInfo(&buf, "%d%s", v, def->flags == GUC_UNIT_MS ? "ms" : "");
		if (s->settings[i] >= 0)
			appendStringInfoString(&buf, " (server)");
	}
	ExplainPropertyText("Partner Settings", buf.data, es);

	if (s->proxy != NULL)
		ExplainPropertyText("Partner Proxy", s->proxy, es);
	if (s->ssl_ca_file != NULL || s->ssl_cert_file != NULL)
	{
		resetStringInfo(&buf);
		if (s->ssl_ca_file != NULL)
			appendStringInfo(&buf, "ssl_ca_file=%s", s->ssl_ca_file);
		if (s->ssl_cert_file != NULL)
			appendStringInfo(&buf, "%sssl_cert_file=%s",
							 buf.len > 0 ? ", " : "", s->ssl_cert_file);
		ExplainPropertyText("Partner TLS", buf.data, es);
	}
	pfree(buf.data);
}

DefElem *
psvc_options_find(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, name) == 0)
			return def;
	}
	return NULL;
}

const char *
psvc_options_text(List *options, const char *name)
{
	DefElem    *def = psvc_options_find(options, name);

	return def ? defGetString(def) : NULL;
}

/*
 * Servers as parsed, kept per backend: every scan, modify and function
 * call starts by reading its server's options, and parsing them was 7% of
 * a scan answered by the response cache (docs/performance.md).  This is
 * the one per-backend cache of servers.  Any change of any server, user
 * mapping, role or role membership forgets them all and moves the epoch
 * (psvc_options_epoch), whose other readers keep what they derived under
 * it (the cache's request keys, cache_key.c; who a call is made as,
 * server_account.c; a service's default server, functions.c).  Callers get copies,
 * never the kept ones, so forgetting frees nothing in use.
 */
#define PSVC_KEPT_SERVERS 16

typedef struct KeptServer
{
	Oid			serverid;
	PsvcServer *server;			/* in kept_cxt */
} KeptServer;

static KeptServer kept_servers[PSVC_KEPT_SERVERS];
static int	n_kept_servers = 0;
static MemoryContext kept_cxt = NULL;	/* child of CacheMemoryContext */
static uint64 options_epoch = 0;

/* Syscache callback on servers, user mappings, roles and memberships. */
static void
forget_options(Datum arg, int cacheid, uint32 hashvalue)
{
	n_kept_servers = 0;
	MemoryContextReset(kept_cxt);
	options_epoch++;
}

uint64
psvc_options_epoch(void)
{
	if (kept_cxt == NULL)
	{
		kept_cxt = AllocSetContextCreate(CacheMemoryContext,
										 "partner_svc kept servers",
										 ALLOCSET_SMALL_SIZES);
		CacheRegisterSyscacheCallback(FOREIGNSERVEROID, forget_options, (Datum) 0);
		CacheRegisterSyscacheCallback(USERMAPPINGOID, forget_options, (Datum) 0);
		/* who decides a service's default server (functions.c) */
		CacheRegisterSyscacheCallback(AUTHOID, forget_options, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, forget_options, (Datum) 0);
	}
	return options_epoch;
}

static PsvcServer *parse_server(Oid serverid);

/* The value of option "auth" (checked by options.c); bearer when unset. */
static PsvcAuth
parse_auth(const char *v)
{
	if (v == NULL || strcmp(v, "bearer") == 0)
		return PSVC_AUTH_BEARER;
	if (strcmp(v, "header") == 0)
		return PSVC_AUTH_HEADER;
	if (strcmp(v, "query") == 0)
		return PSVC_AUTH_QUERY;
	if (strcmp(v, "oauth2") == 0)
		return PSVC_AUTH_OAUTH2;
	elog(ERROR, "unexpected value of option \"auth\"");
	return PSVC_AUTH_BEARER;	/* keep compiler quiet */
}

/*
 * The options of server serverid, allocated in CurrentMemoryContext: a
 * copy of the kept parse, or a new parse, kept when no change came while
 * it was made.
 */
PsvcServer *
psvc_options_server(Oid serverid)
{
	uint64		epoch = psvc_options_epoch();
	PsvcServer *s;

	for (int i = 0; i < n_kept_servers; i++)
		if (kept_servers[i].serverid == serverid)
			return psvc_options_copy_server(kept_servers[i].server);
	s = parse_server(serverid);
	if (epoch == options_epoch && n_kept_servers < PSVC_KEPT_SERVERS)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(kept_cxt);

		kept_servers[n_kept_servers].serverid = serverid;
		kept_servers[n_kept_servers].server = psvc_options_copy_server(s);
		n_kept_servers++;
		MemoryContextSwitchTo(oldcxt);
	}
	return s;
}

/*
 * Allocates in CurrentMemoryContext.  The validator guarantees service and
 * base_url on every server of the wrapper, so their absence means a server
 * of another wrapper was named.
 */
static PsvcServer *
parse_server(Oid serverid)
{
	ForeignServer *fs = GetForeignServer(serverid);
	PsvcServer *s = palloc0(sizeof(PsvcServer));
	const char *url;
	const char *size;
	size_t		len;

	s->serverid = serverid;
	s->servername = pstrdup(fs->servername);
	s->service = psvc_options_text(fs->options, "service");
	url = psvc_options_text(fs->options, "base_url");
	s->tier = psvc_options_text(fs->options, "tier");
	s->rate_limits = psvc_options_text(fs->options, "rate_limits");
	size = psvc_options_text(fs->options, "max_response_size");
	s->max_response_size = size ? psvc_options_parse_size(size) : 0;
	s->ssl_ca_file = psvc_options_text(fs->options, "ssl_ca_file");
	s->ssl_cert_file = psvc_options_text(fs->options, "ssl_cert_file");
	s->ssl_key_file = psvc_options_text(fs->options, "ssl_key_file");
	s->proxy = psvc_options_text(fs->options, "proxy");
	size = psvc_options_text(fs->options, "cache_ttl");
	s->cache_ttl_ms = size ? psvc_options_parse_ttl(size) : -1;
	s->auth = parse_auth(psvc_options_text(fs->options, "auth"));
	s->auth_header = psvc_options_text(fs->options, "auth_header");
	s->auth_prefix = psvc_options_text(fs->options, "auth_prefix");
	s->auth_param = psvc_options_text(fs->options, "auth_param");
	s->token_url = psvc_options_text(fs->options, "token_url");
	s->scopes = psvc_options_text(fs->options, "scopes");
	s->idempotency_header = psvc_options_text(fs->options, "idempotency_header");
	size = psvc_options_text(fs->options, "async_capable");
	if (size == NULL || !parse_bool(size, &s->async_capable))
		s->async_capable = false;
	for (int i = 0; i < PSVC_NSETTINGS; i++)
	{
		const PsvcGuc *def = psvc_guc_setting((PsvcSettingId) i);
		const char *v = psvc_options_text(fs->options, def->name);

		s->settings[i] = v ? parse_setting(def, v, fs->servername) : -1;
	}
	if (s->service == NULL || url == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("server \"%s\" is not a partner_svc server", fs->servername),
				 errdetail("A partner_svc server has the options \"service\" and \"base_url\".")));
	len = strlen(url);
	while (len > 0 && url[len - 1] == '/')
		len--;
	s->base_url = pnstrdup(url, len);
	if (s->tier == NULL)
		s->tier = psvc_tier_names[0];
	return s;
}

/* pstrdup that keeps NULL */
static const char *
copy_string(const char *s)
{
	return s ? pstrdup(s) : NULL;
}

/*
 * A copy of s, every string included, in CurrentMemoryContext; for
 * callers that keep a server longer than the context it was read in
 * (functions.c).  A new field of PsvcServer must be copied here.
 */
PsvcServer *
psvc_options_copy_server(const PsvcServer *s)
{
	PsvcServer *c = palloc(sizeof(PsvcServer));

	*c = *s;
	c->servername = copy_string(s->servername);
	c->service = copy_string(s->service);
	c->base_url = copy_string(s->base_url);
	c->tier = copy_string(s->tier);
	c->rate_limits = copy_string(s->rate_limits);
	c->ssl_ca_file = copy_string(s->ssl_ca_file);
	c->ssl_cert_file = copy_string(s->ssl_cert_file);
	c->ssl_key_file = copy_string(s->ssl_key_file);
	c->proxy = copy_string(s->proxy);
	c->auth_header = copy_string(s->auth_header);
	c->auth_prefix = copy_string(s->auth_prefix);
	c->auth_param = copy_string(s->auth_param);
	c->token_url = copy_string(s->token_url);
	c->scopes = copy_string(s->scopes);
	c->idempotency_header = copy_string(s->idempotency_header);
	return c;
}

/*
 * The credential of one user mapping (psvc_options_api_key); oauth2: the
 * client's id and secret, NULL unless both are there.
 */
static char *
mapping_key(Oid userid, Oid serverid, bool oauth2, bool *found)
{
	HeapTuple	tp;
	Datum		datum;
	bool		isnull;
	char	   *key = NULL;

	tp = SearchSysCache2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(userid),
						 ObjectIdGetDatum(serverid));
	*found = HeapTupleIsValid(tp);
	if (!*found)
		return NULL;
	datum = SysCacheGetAttr(USERMAPPINGUSERSERVER, tp,
							Anum_pg_user_mapping_umoptions, &isnull);
	if (!isnull)
	{
		List	   *options = untransformRelOptions(datum);

		if (!oauth2)
		{
			const char *v = psvc_options_text(options, "api_key");

			if (v)
				key = pstrdup(v);
		}
		else
		{
			const char *id = psvc_options_text(options, "client_id");
			const char *secret = psvc_options_text(options, "client_secret");

			if (id && secret)
				key = psprintf("%s\n%s", id, secret);
		}
	}
	ReleaseSysCache(tp);
	return key;
}

char *
psvc_options_api_key(const PsvcServer *server)
{
	Oid			userid = OidIsValid(server->userid) ? server->userid : GetUserId();
	bool		found;
	bool		oauth2 = server->auth == PSVC_AUTH_OAUTH2;
	char	   *key = mapping_key(userid, server->serverid, oauth2, &found);

	if (!found)
		key = mapping_key(InvalidOid, server->serverid, oauth2, &found);
	if (!found)
	{
		int			svc = psvc_service_find(server->service);

		/* a service whose documents describe no authentication (catalog.c) */
		if (svc >= 0 && psvc_services[svc].keyless)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("user mapping not found for user \"%s\" and server \"%s\"",
						MappingUserName(userid), server->servername),
				 errhint("Create one with CREATE USER MAPPING FOR %s SERVER %s OPTIONS (api_key '...').",
						 quote_identifier(MappingUserName(userid)),
						 quote_identifier(server->servername))));
	}
	return key;
}

char *
psvc_options_resource(const ForeignTable *ft)
{
	const char *r = psvc_options_text(ft->options, "resource");

	if (r == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("foreign table \"%s\" has no option \"resource\"",
						get_rel_name(ft->relid))));
	return pstrdup(r);
}

/*
 * The bytes of a max_response_size value: an integer with an optional unit
 * (B, kB, MB, GB), as partner_svc.max_response_size takes, from 1kB to
 * the GUC's own limit.  Raises HV024 naming the option otherwise, as
 * every option validator does.
 */
int
psvc_options_parse_size(const char *value)
{
	int			bytes;
	const char *hint = NULL;

	if (!parse_int(value, &bytes, GUC_UNIT_BYTE, &hint) ||
		bytes < 1024 || bytes > PSVC_MAX_RESPONSE_SIZE_LIMIT)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"max_response_size\": \"%s\"", value),
				 errdetail("The value must be a size from 1kB to %dMB, such as '16MB'.",
						   PSVC_MAX_RESPONSE_SIZE_LIMIT / (1024 * 1024)),
				 hint ? errhint("%s", hint) : 0));
	return bytes;
}

/*
 * A cache_ttl value in milliseconds: a time as in SET ('10min', '500ms';
 * a bare number is milliseconds), 0 to 24 hours.
 */
int
psvc_options_parse_ttl(const char *value)
{
	int			v;
	const char *hint = NULL;

	if (!parse_int(value, &v, GUC_UNIT_MS, &hint))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"cache_ttl\": \"%s\"", value),
				 hint ? errhint("%s", hint) :
				 errhint("Give a time such as \"10min\" or \"500ms\"; a bare number is milliseconds, 0 turns caching off.")));
	if (v < 0 || v > PSVC_MAX_CACHE_TTL_MS)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("value for option \"cache_ttl\" is out of range: \"%s\"", value),
				 errdetail("Option \"cache_ttl\" must be between 0 and %d milliseconds (24 hours, the life of a paging cursor).",
						   PSVC_MAX_CACHE_TTL_MS)));
	return v;
}

/* The option cache_ttl of a foreign table in ms, -1 when it has none. */
int
psvc_options_table_cache_ttl(const ForeignTable *ft)
{
	const char *v = psvc_options_text(ft->options, "cache_ttl");

	return v ? psvc_options_parse_ttl(v) : -1;
}

bool
psvc_options_table_async(const ForeignTable *ft, const PsvcServer *s)
{
	const char *v = psvc_options_text(ft->options, "async_capable");
	bool		b;

	/* the validator let only booleans in */
	if (v != NULL && parse_bool(v, &b))
		return b;
	return s->async_capable;
}

/*
 * The owner of extension partner_svc in this database, InvalidOid when it
 * is not installed.  Read from pg_extension at each call: it is asked
 * only when a server option "default" is written and when a function
 * looks for its service's server anew (functions.c keeps the answer).
 */
static Oid
extension_owner(void)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			owner = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("partner_svc"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		owner = ((Form_pg_extension) GETSTRUCT(tup))->extowner;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return owner;
}

bool
psvc_options_decides_default(Oid roleid)
{
	Oid			owner;

	if (superuser_arg(roleid))
		return true;
	owner = extension_owner();
	return OidIsValid(owner) && has_privs_of_role(roleid, owner);
}
