/*-------------------------------------------------------------------------
 *
 * functions.c
 *		  What the SQL functions of every service share: finding the server
 *		  to use, checking the caller may use it, sending a request and
 *		  turning the answer into jsonb.
 *
 * Every function takes an optional last argument "server name".  When it
 * is NULL the function uses the one partner_svc server of its service; no
 * such server, or several, is an error that says which to name.  The
 * functions are SECURITY INVOKER: the caller needs USAGE on the server, and
 * the key is the caller's user mapping (http.c reads it).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_foreign_server.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/jsonb.h"
#include "utils/rel.h"

#include "partner_svc.h"

static bool
server_has_service(ForeignServer *fs, const char *service)
{
	ListCell   *lc;

	foreach(lc, fs->options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (strcmp(d->defname, "service") == 0)
			return strcmp(defGetString(d), service) == 0;
	}
	return false;
}

/* The servers of the partner_svc wrapper whose service is service. */
static List *
servers_of_service(const char *service)
{
	ForeignDataWrapper *fdw = GetForeignDataWrapperByName("partner_svc", false);
	Relation	rel = table_open(ForeignServerRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tup;
	List	   *out = NIL;

	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_foreign_server form = (Form_pg_foreign_server) GETSTRUCT(tup);

		if (form->srvfdw == fdw->fdwid &&
			server_has_service(GetForeignServer(form->oid), service))
			out = lappend_oid(out, form->oid);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return out;
}

PsvcServer *
psvc_fn_server(const char *service, FunctionCallInfo fcinfo, int argno)
{
	Oid			serverid;
	AclResult	aclresult;
	PsvcServer *server;

	if (argno < PG_NARGS() && !PG_ARGISNULL(argno))
	{
		char	   *name = NameStr(*PG_GETARG_NAME(argno));
		ForeignServer *fs = GetForeignServerByName(name, false);

		if (!server_has_service(fs, service))
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("server \"%s\" is not a partner_svc server of service \"%s\"",
							name, service)));
		serverid = fs->serverid;
	}
	else
	{
		List	   *all = servers_of_service(service);

		if (all == NIL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("there is no partner_svc server for service \"%s\"", service),
					 errhint("Create one with CREATE SERVER ... FOREIGN DATA WRAPPER partner_svc OPTIONS (service '%s', base_url '...').",
							 service)));
		if (list_length(all) > 1)
		{
			StringInfoData names;
			ListCell   *lc;

			initStringInfo(&names);
			foreach(lc, all)
				appendStringInfo(&names, "%s\"%s\"", names.len ? ", " : "",
								 GetForeignServer(lfirst_oid(lc))->servername);
			ereport(ERROR,
					(errcode(ERRCODE_AMBIGUOUS_PARAMETER),
					 errmsg("there are several partner_svc servers for service \"%s\"", service),
					 errdetail("The servers are %s.", names.data),
					 errhint("Name one with the argument \"server\".")));
		}
		serverid = linitial_oid(all);
	}

	aclresult = pg_foreign_server_aclcheck(serverid, GetUserId(), ACL_USAGE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FOREIGN_SERVER, GetForeignServer(serverid)->servername);

	server = psvc_options_server(serverid);
	return server;
}

PsvcKV *
psvc_kv(const char *name, const char *value)
{
	PsvcKV	   *kv = palloc(sizeof(PsvcKV));

	kv->name = name;
	kv->value = value;
	return kv;
}

Jsonb *
psvc_fn_jsonb(const char *text, size_t len)
{
	char	   *copy;

	if (text == NULL || len == 0)
		return NULL;
	copy = pnstrdup(text, len);
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(copy)));
}

/*
 * Sends req and returns the answer as jsonb, allocated in
 * CurrentMemoryContext; NULL for an empty body, or for a 404 when
 * null_on_404.  Other failures raise the mapped ERROR (http.c).
 */
Jsonb *
psvc_fn_call(PsvcHttpRequest *req, bool null_on_404)
{
	PsvcHttpResponse *resp;

	req->return_errors = true;
	resp = psvc_http_request(req);
	if (resp->status == 404 && null_on_404)
		return NULL;
	if (resp->status < 200 || resp->status > 299)
		psvc_http_raise(req, resp);
	return psvc_fn_jsonb(resp->body, resp->body_len);
}
