/*-------------------------------------------------------------------------
 *
 * fdw_columns.c
 *		  What a partner_svc foreign table reads: its catalogue endpoint
 *		  (checked against its server's service), or the endpoint its
 *		  options declare (fdw_declared.c), and the definition of each
 *		  column, for the planner, the scan, writes and IMPORT.
 *
 * Memory: the definitions are allocated in CurrentMemoryContext (the
 * planner's, or the scan's per-query context).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_columns.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "utils/lsyscache.h"

#include "fdw.h"
#include "options.h"

const PsvcEndpoint *
psvc_fdw_endpoint(Oid relid, PsvcServer **server)
{
	return psvc_fdw_endpoint_of(GetForeignTable(relid), server);
}

const PsvcEndpoint *
psvc_fdw_endpoint_of(const ForeignTable *ft, PsvcServer **server)
{
	Oid			relid = ft->relid;
	char	   *resource;
	const PsvcEndpoint *ep;
	PsvcServer *srv = psvc_options_server(ft->serverid);

	if (psvc_fdw_is_declared(ft))
	{
		ep = psvc_fdw_declared_endpoint(ft, srv);
		if (server)
			*server = srv;
		return ep;
	}
	if (strcmp(srv->service, psvc_services[PSVC_SVC_CUSTOM].name) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("foreign table \"%s\" of server \"%s\" has no option \"endpoint\"",
						get_rel_name(relid), srv->servername),
				 errdetail("A server of service \"custom\" has no catalogue of resources: each of its tables declares its route."),
				 errhint("Replace the option \"resource\" with \"endpoint\", such as 'GET /items'.")));
	resource = psvc_options_resource(ft);
	ep = psvc_endpoint_find(resource);
	if (ep == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("foreign table \"%s\" names unknown resource \"%s\"",
						get_rel_name(relid), resource)));
	if (strcmp(psvc_services[ep->list->service].name, srv->service) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("resource \"%s\" of foreign table \"%s\" does not belong to server \"%s\"",
						resource, get_rel_name(relid), srv->servername),
				 errdetail("Resource \"%s\" is served by service \"%s\"; the server's service is \"%s\".",
						   resource, psvc_services[ep->list->service].name, srv->service)));
	if (server)
		*server = srv;
	return ep;
}

const PsvcColumnDef *
psvc_fdw_column_def(const PsvcEndpoint *ep, Oid relid, Form_pg_attribute att)
{
	List	   *opts = GetForeignColumnOptions(relid, att->attnum);
	ListCell   *lc;
	const PsvcColumnDef *def;

	/* a declared table's columns are its endpoint's, options and all */
	if (ep->declared)
		opts = NIL;
	foreach(lc, opts)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (strcmp(d->defname, "param") == 0 || strcmp(d->defname, "param_name") == 0 ||
			strcmp(d->defname, "raw") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("option \"%s\" of column \"%s\" is valid only on a table with option \"endpoint\"",
							d->defname, NameStr(att->attname)),
					 errdetail("Foreign table \"%s\" reads resource \"%s\" of the catalogue, whose columns it names.",
							   get_rel_name(relid), ep->resource)));
		if (strcmp(d->defname, "field") == 0 || strcmp(d->defname, "json_path") == 0)
		{
			PsvcColumnDef *c = palloc0(sizeof(PsvcColumnDef));

			c->name = pstrdup(NameStr(att->attname));
			c->kind = PSVC_COL_FIELD;
			c->field = pstrdup(defGetString(d));
			return c;
		}
	}
	def = psvc_endpoint_column(ep, NameStr(att->attname));
	if (def == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_COLUMN_NAME_NOT_FOUND),
				 errmsg("column \"%s\" of foreign table \"%s\" matches no field of resource \"%s\"",
						NameStr(att->attname), get_rel_name(relid), ep->resource),
				 errhint("Name the JSON member with the column option \"field\", or use the column \"raw\".")));
	return def;
}

/*
 * The position of a member column's JSON member in fields (the list of
 * members a page decode extracts), appending it when it is new; -1 for a
 * column that is not a member (raw, path, echo-only).  fields must have
 * room for one more entry.
 */
int
psvc_fdw_field_index(const PsvcColumnDef *def, const char **fields, int *nfields)
{
	if (def->kind != PSVC_COL_FIELD || def->field == NULL)
		return -1;
	for (int f = 0; f < *nfields; f++)
		if (strcmp(fields[f], def->field) == 0)
			return f;
	fields[*nfields] = def->field;
	return (*nfields)++;
}
