/*-------------------------------------------------------------------------
 *
 * server_options.c
 *		  Reading the options of stored partner_svc objects: what a server
 *		  says about the remote side, the caller's API key, a table's
 *		  resource.
 *
 * options.c checks options when they are written; this file reads them
 * back when a scan or a function needs them.
 *
 * The API key comes from the user mapping of the role PostgreSQL checks a
 * foreign table as (the view owner through a view, as postgres_fdw does;
 * set in PsvcServer.userid by the scan and modify code), or of the calling
 * role for functions; the role's own mapping wins over PUBLIC's.  No
 * mapping is the same error GetUserMapping() raises, before any request,
 * except for the todo service, which the documents describe without
 * authentication: it works without a mapping and sends no key.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/server_options.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "partner_svc.h"

static const char *
option_value(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, name) == 0)
			return defGetString(def);
	}
	return NULL;
}

/*
 * Allocates in CurrentMemoryContext.  The validator guarantees service and
 * base_url on every server of the wrapper, so their absence means a server
 * of another wrapper was named.
 */
PsvcServer *
psvc_options_server(Oid serverid)
{
	ForeignServer *fs = GetForeignServer(serverid);
	PsvcServer *s = palloc0(sizeof(PsvcServer));
	const char *url;
	size_t		len;

	s->serverid = serverid;
	s->servername = pstrdup(fs->servername);
	s->service = option_value(fs->options, "service");
	url = option_value(fs->options, "base_url");
	s->tier = option_value(fs->options, "tier");
	s->rate_limits = option_value(fs->options, "rate_limits");
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
		s->tier = "standard";
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
	return c;
}

static char *
mapping_key(Oid userid, Oid serverid, bool *found)
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
		const char *v = option_value(untransformRelOptions(datum), "api_key");

		if (v)
			key = pstrdup(v);
	}
	ReleaseSysCache(tp);
	return key;
}

/* Services whose documents describe no authentication. */
static const char *const keyless_services[] = {"todos", NULL};

char *
psvc_options_api_key(const PsvcServer *server)
{
	Oid			userid = OidIsValid(server->userid) ? server->userid : GetUserId();
	bool		found;
	char	   *key = mapping_key(userid, server->serverid, &found);

	if (!found)
		key = mapping_key(InvalidOid, server->serverid, &found);
	if (!found)
	{
		for (int i = 0; keyless_services[i]; i++)
			if (strcmp(server->service, keyless_services[i]) == 0)
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
psvc_options_resource(Oid relid)
{
	ForeignTable *ft = GetForeignTable(relid);
	const char *r = option_value(ft->options, "resource");

	if (r == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("foreign table \"%s\" has no option \"resource\"",
						get_rel_name(relid))));
	return pstrdup(r);
}
