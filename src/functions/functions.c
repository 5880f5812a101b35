/*-------------------------------------------------------------------------
 *
 * functions.c
 *		  What the SQL functions of every service share: finding the server
 *		  to use, checking the caller may use it, and reading answers as
 *		  jsonb.  Requests are built and sent by the executor
 *		  (functions_exec.c) from the operations of the catalogue.
 *
 * Every function takes an optional last argument "server name".  When it
 * is NULL the function uses the default server of its service
 * (default_server): among the servers owned by superusers or the
 * extension's owner, the one with the option "default 'true'", else the
 * only one; no such server, or several, is an error that says which to
 * name and how to decide.  Servers of other owners count only when named:
 * a role with USAGE on the wrapper cannot take the default over.  The
 * functions are SECURITY INVOKER: the caller needs USAGE on the server, and
 * the key is the caller's user mapping (http.c reads it).
 *
 * Finding the one server of a service means reading pg_foreign_server
 * whole, which cost more than anything else of ours in a call of a small
 * function once the request itself was cheap (test/bench/func_bench.sh).
 * The answer (the server's OID) is therefore kept per backend, per
 * service, while the options epoch holds (options.h: any change of a
 * server, a user mapping, a role or a role membership moves it, in this
 * session or, once its invalidation arrives, in another; roles decide
 * who may set the default).  The server's options come from the one
 * per-backend cache of parsed servers (server_options.c).  Only a unique
 * server is kept; "none" and "several" are looked for again at every
 * call, since they are errors.  USAGE is checked at every call, against
 * the current user.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_foreign_server.h"
#include "commands/defrem.h"
#include "common/jsonapi.h"
#include "foreign/foreign.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "functions.h"
#include "json.h"
#include "pg_compat.h"
#include "xact_writes.h"

/* Services whose default server is kept; more than there are services. */
#define PSVC_FN_CACHED_SERVICES	16

/*
 * The default server of a service, as last found, under the options epoch
 * of the search (options.h): any change of a server, a user mapping, a
 * role or a role membership moves it, and the answer no longer counts.
 * Only the server's OID is kept; its options come from the one cache of
 * parsed servers (psvc_options_server).
 */
typedef struct DefaultServer
{
	char		service[NAMEDATALEN];
	Oid			serverid;
	uint64		epoch;
} DefaultServer;

static DefaultServer default_servers[PSVC_FN_CACHED_SERVICES];
static int	n_default_servers = 0;

/* The kept default server of service, or InvalidOid. */
static Oid
kept_default(const char *service)
{
	uint64		epoch = psvc_options_epoch();

	for (int i = 0; i < n_default_servers; i++)
		if (default_servers[i].epoch == epoch &&
			strcmp(default_servers[i].service, service) == 0)
			return default_servers[i].serverid;
	return InvalidOid;
}

/*
 * Keeps serverid as the default server of service, found under epoch,
 * unless a change came since (an answer read before a change must not
 * outlive it).  Replaces the service's stale answer, or any stale one.
 */
static void
keep_default(const char *service, Oid serverid, uint64 epoch)
{
	DefaultServer *e = NULL;

	if (epoch != psvc_options_epoch() || strlen(service) >= NAMEDATALEN)
		return;
	for (int i = 0; i < n_default_servers && e == NULL; i++)
		if (default_servers[i].epoch != epoch ||
			strcmp(default_servers[i].service, service) == 0)
			e = &default_servers[i];
	if (e == NULL && n_default_servers < PSVC_FN_CACHED_SERVICES)
		e = &default_servers[n_default_servers++];
	if (e == NULL)
		return;
	strlcpy(e->service, service, NAMEDATALEN);
	e->serverid = serverid;
	e->epoch = epoch;
}

static bool
server_has_service(ForeignServer *fs, const char *service)
{
	ListCell   *lc;

	if (service == NULL)
		return true;			/* any service (partner_svc.request()) */

	foreach(lc, fs->options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (strcmp(d->defname, "service") == 0)
			return strcmp(defGetString(d), service) == 0;
	}
	return false;
}

/*
 * The server option "default" of fs: 1 when true, 0 when false, -1 when
 * absent (the validator accepts only booleans).
 */
static int
server_default_option(ForeignServer *fs)
{
	ListCell   *lc;

	foreach(lc, fs->options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (strcmp(d->defname, "default") == 0)
			return defGetBoolean(d) ? 1 : 0;
	}
	return -1;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * The quoted names of the servers in list, in the order of their names
 * (the catalogue's order moves with every ALTER), separated by ", ".
 * Allocates in CurrentMemoryContext.
 */
static char *
server_names(List *servers)
{
	StringInfoData names;
	int			n = list_length(servers);
	const char **sorted = palloc(sizeof(char *) * n);
	ListCell   *lc;

	foreach(lc, servers)
		sorted[foreach_current_index(lc)] = GetForeignServer(lfirst_oid(lc))->servername;
	qsort(sorted, n, sizeof(char *), name_cmp);
	initStringInfo(&names);
	for (int i = 0; i < n; i++)
		appendStringInfo(&names, "%s\"%s\"", i > 0 ? ", " : "", sorted[i]);
	return names.data;
}

/* " for service \"NAME\"", or "" for any service.  CurrentMemoryContext. */
static char *
for_service(const char *service)
{
	return service ? psprintf(" for service \"%s\"", service) : "";
}

/*
 * The default server of service (NULL: of any service), or an error that says why there is none
 * and how to decide (InvalidOid instead when missing_ok).  The candidates are the servers of the wrapper with
 * that service whose owner decides defaults (a superuser or the
 * extension's owner: psvc_options_decides_default) and whose option
 * "default" is not false; among them the one marked "default 'true'"
 * wins, else the only one.  A server owned by any other role is used only
 * when named, so granting USAGE on the wrapper never lets a role change,
 * or break, the server the other roles' calls use.  Allocates its lists
 * in CurrentMemoryContext (the call's).
 */
static Oid
default_server(const char *service, bool missing_ok)
{
	ForeignDataWrapper *fdw = GetForeignDataWrapperByName("partner_svc", false);
	Relation	rel = table_open(ForeignServerRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;
	List	   *all = NIL;
	List	   *candidates = NIL;
	List	   *marked = NIL;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_foreign_server form = (Form_pg_foreign_server) GETSTRUCT(tup);
		ForeignServer *fs;
		int			dflt;

		if (form->srvfdw != fdw->fdwid)
			continue;
		fs = GetForeignServer(form->oid);
		if (!server_has_service(fs, service))
			continue;
		all = lappend_oid(all, form->oid);
		dflt = server_default_option(fs);
		if (dflt == 0 || !psvc_options_decides_default(form->srvowner))
			continue;
		candidates = lappend_oid(candidates, form->oid);
		if (dflt == 1)
			marked = lappend_oid(marked, form->oid);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);

	if (list_length(marked) == 1)
		return linitial_oid(marked);
	if (missing_ok && list_length(marked) != 1 && list_length(candidates) != 1)
		return InvalidOid;
	if (list_length(marked) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_AMBIGUOUS_PARAMETER),
				 errmsg("there are several default partner_svc servers%s", for_service(service)),
				 errdetail("The servers with the option \"default\" are %s.", server_names(marked)),
				 errhint("Keep the option on one of them (ALTER SERVER ... OPTIONS (DROP default) on the others), or name one with the argument \"server\".")));
	if (list_length(candidates) == 1)
		return linitial_oid(candidates);
	if (list_length(candidates) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_AMBIGUOUS_PARAMETER),
				 errmsg("there are several partner_svc servers%s", for_service(service)),
				 errdetail("The servers are %s.", server_names(candidates)),
				 errhint("Name one with the argument \"server\", or have a superuser mark the default one with ALTER SERVER ... OPTIONS (ADD default 'true').")));
	if (all == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("there is no partner_svc server%s", for_service(service)),
				 errhint("Create one with CREATE SERVER ... FOREIGN DATA WRAPPER partner_svc OPTIONS (service '%s', base_url '...').",
						 service ? service : "...")));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("there is no default partner_svc server%s", for_service(service)),
			 errdetail("The servers of the service, %s, are owned by roles that are neither superusers nor the owner of the extension partner_svc, or have the option \"default\" set to false.",
					   server_names(all)),
			 errhint("Name one with the argument \"server\", or have a superuser create the default server.")));
	return InvalidOid;			/* keep compiler quiet */
}

PsvcServer *
psvc_fn_server(const char *service, FunctionCallInfo fcinfo, int argno)
{
	/* the requests that follow are this function's (xact_writes.c) */
	if (fcinfo->flinfo)
		psvc_xact_set_writer_function(fcinfo->flinfo->fn_oid);

	if (argno < PG_NARGS() && !PG_ARGISNULL(argno))
		return psvc_fn_server_named(service, NameStr(*PG_GETARG_NAME(argno)));
	return psvc_fn_server_named(service, NULL);
}

PsvcServer *
psvc_fn_server_named(const char *service, const char *name)
{
	Oid			serverid;
	AclResult	aclresult;

	if (name != NULL)
	{
		ForeignServer *fs = GetForeignServerByName(name, false);

		if (service != NULL && !server_has_service(fs, service))
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("server \"%s\" is not a partner_svc server of service \"%s\"",
							name, service)));
		serverid = fs->serverid;
	}
	else if (!OidIsValid(serverid = kept_default(service ? service : "")))
	{
		uint64		epoch = psvc_options_epoch();

		serverid = default_server(service, false);
		keep_default(service ? service : "", serverid, epoch);
	}

	aclresult = psvc_server_aclcheck(serverid, GetUserId(), ACL_USAGE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FOREIGN_SERVER, GetForeignServer(serverid)->servername);

	return psvc_options_server(serverid);
}

/*
 * The server a call of service (NULL: any service, as request()) that
 * names none would use now, as psvc_fn_server finds it, or InvalidOid when
 * there is none or several: the deferred sender asks it of a queued call
 * (deferred_send.c) before the call itself finds it.  No privilege check.
 */
Oid
psvc_fn_default_server(const char *service)
{
	Oid			serverid = kept_default(service ? service : "");

	if (!OidIsValid(serverid))
		serverid = default_server(service, true);
	return serverid;
}

/* ---------------------------------------------------------------------
 * Reading the services' answers
 * ---------------------------------------------------------------------
 */

/*
 * jsonb from a service's body (JSON text, already in the server encoding:
 * http.c converts every response), or NULL when it is empty or not valid
 * JSON: never raises for bad input, so callers can look into error bodies
 * safely.  The JSON layer's one text-to-jsonb builder (json.h).
 * Allocates in CurrentMemoryContext.
 */
Jsonb *
psvc_fn_parse(const char *text, size_t len)
{
	return psvc_json_to_jsonb(text, len);
}

/*
 * The member key of j when j is an object that has it, else NULL.  The
 * value points into j (or is allocated in CurrentMemoryContext).
 */
JsonbValue *
psvc_fn_member(Jsonb *j, const char *key)
{
	if (j == NULL || !JB_ROOT_IS_OBJECT(j))
		return NULL;
	return getKeyJsonValueFromContainer(&j->root, key, strlen(key), NULL);
}

/* A string member's text; NULL when absent, JSON null or not a string. */
char *
psvc_fn_member_text(Jsonb *j, const char *key)
{
	JsonbValue *v = psvc_fn_member(j, key);

	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* A member as jsonb; NULL when absent or JSON null.  CurrentMemoryContext. */
Jsonb *
psvc_fn_member_jsonb(Jsonb *j, const char *key)
{
	JsonbValue *v = psvc_fn_member(j, key);

	if (v == NULL || v->type == jbvNull)
		return NULL;
	return JsonbValueToJsonb(v);
}

/*
 * The JSON text of j to send as a request body, in the server encoding
 * (http.c sends every body as UTF-8); *len receives its length.
 * CurrentMemoryContext.
 */
char *
psvc_fn_json_text(Jsonb *j, size_t *len)
{
	char	   *text = JsonbToCString(NULL, &j->root, VARSIZE(j));

	*len = strlen(text);
	return text;
}
