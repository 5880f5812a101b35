/*-------------------------------------------------------------------------
 *
 * server_options.c
 *		  Reading the options of stored partner_svc objects: what a server
 *		  says about the remote side, the caller's API key, a table's
 *		  resource.
 *
 * options.c checks options when they are written; this file reads them
 * back when a scan or a function needs them.  The API key is looked up
 * without GetUserMapping() because that function errors when no mapping
 * exists, and the todo service needs none: a missing key is reported by
 * the service's 401, with a hint, only where a key is needed.
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
	const char *size;
	size_t		len;

	s->serverid = serverid;
	s->servername = pstrdup(fs->servername);
	s->service = option_value(fs->options, "service");
	url = option_value(fs->options, "base_url");
	s->tier = option_value(fs->options, "tier");
	s->rate_limits = option_value(fs->options, "rate_limits");
	size = option_value(fs->options, "max_response_size");
	s->max_response_size = size ? psvc_options_parse_size(size) : 0;
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

/* The user's own mapping wins over PUBLIC's, as in GetUserMapping(). */
char *
psvc_options_api_key(Oid serverid, Oid userid)
{
	bool		found;
	char	   *key = mapping_key(userid, serverid, &found);

	if (!found)
		key = mapping_key(InvalidOid, serverid, &found);
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
