/*-------------------------------------------------------------------------
 *
 * fdw_import.c
 *		  IMPORT FOREIGN SCHEMA: the foreign tables of a service, written
 *		  from the endpoint catalogue.
 *
 * The "remote schema" is the service's name (IMPORT FOREIGN SCHEMA movies
 * FROM SERVER ...), and it must be the server's own service: tables of
 * another service would point at endpoints this server does not serve.
 * LIMIT TO and EXCEPT are applied here and again by PostgreSQL.  Options
 * are checked like those of any object (options.c): there are none yet,
 * so any option is an error (HV00D) rather than silently ignored.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw_import.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "fdw.h"
#include "options.h"

static bool
wanted(ImportForeignSchemaStmt *stmt, const char *table)
{
	ListCell   *lc;
	bool		listed = false;

	if (stmt->list_type == FDW_IMPORT_SCHEMA_ALL)
		return true;
	foreach(lc, stmt->table_list)
		if (strcmp(((RangeVar *) lfirst(lc))->relname, table) == 0)
			listed = true;
	return stmt->list_type == FDW_IMPORT_SCHEMA_LIMIT_TO ? listed : !listed;
}

/* Returns CREATE FOREIGN TABLE commands, allocated in CurrentMemoryContext. */
List *
psvc_fdw_import(ImportForeignSchemaStmt *stmt, Oid serverOid)
{
	PsvcServer *server = psvc_options_server(serverOid);
	const PsvcEndpoint *eps;
	int			n;
	List	   *cmds = NIL;

	psvc_options_check_import(stmt->options);
	if (strcmp(stmt->remote_schema, server->service) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
				 errmsg("server \"%s\" serves \"%s\", not \"%s\"",
						server->servername, server->service, stmt->remote_schema),
				 errhint("Use IMPORT FOREIGN SCHEMA %s FROM SERVER %s.",
						 server->service, quote_identifier(server->servername))));

	eps = psvc_endpoints(&n);
	for (int i = 0; i < n; i++)
	{
		const PsvcEndpoint *ep = &eps[i];
		StringInfoData buf;

		if (strcmp(ep->service, server->service) != 0 || !wanted(stmt, ep->resource))
			continue;
		initStringInfo(&buf);
		appendStringInfo(&buf, "CREATE FOREIGN TABLE %s (", quote_identifier(ep->resource));
		for (int c = 0; c < ep->ncolumns; c++)
			appendStringInfo(&buf, "%s%s %s", c ? ", " : "",
							 quote_identifier(ep->columns[c].name), ep->columns[c].type);
		appendStringInfo(&buf, ") SERVER %s OPTIONS (resource %s)",
						 quote_identifier(server->servername), quote_literal_cstr(ep->resource));
		cmds = lappend(cmds, buf.data);
	}
	return cmds;
}
