/*-------------------------------------------------------------------------
 *
 * fdw_import.c
 *		  IMPORT FOREIGN SCHEMA: the foreign tables of a service, written
 *		  from the endpoint catalogue.
 *
 * The "remote schema" is the service's name (IMPORT FOREIGN SCHEMA movies
 * FROM SERVER ...), and it must be the server's own service: tables of
 * another service would point at endpoints this server does not serve.
 * LIMIT TO and EXCEPT are applied here.  Options are checked like those
 * of any object (fdw_options.c): a service's import takes none, so any
 * option is an error (HV00D) rather than silently ignored.  The remote
 * schema "openapi" imports an OpenAPI document instead (fdw_openapi.c,
 * chosen by fdw_handler.c).
 *
 * Each table and each column gets a COMMENT written from the catalogue
 * (catalog.c, endpoints.c): what the table reads, which condition a query
 * must give (a required path column), which equalities are sent to the
 * service, which operations its writes become; so \d+ and \dE+ tell an
 * analyst what to write.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_import.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/builtins.h"

#include "catalog.h"
#include "fdw.h"
#include "options.h"

/* Whether LIMIT TO or EXCEPT of the statement keeps the table. */
bool
psvc_fdw_import_wanted(ImportForeignSchemaStmt *stmt, const char *table)
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

/* "METHOD route" of an operation, for comments. */
static const char *
op_text(const PsvcOperation *op)
{
	return psprintf("%s %s", op->method, op->route);
}

/* What \d+ says about one column: where it comes from and what it filters. */
static char *
column_comment(const PsvcEndpoint *ep, const PsvcColumnDef *c)
{
	StringInfoData buf;

	initStringInfo(&buf);
	switch (c->kind)
	{
		case PSVC_COL_RAW:
			appendStringInfoString(&buf, "The whole item as the service returned it.");
			break;
		case PSVC_COL_PATH:
			{
				const PsvcParamDef *p = psvc_op_param(ep->list, c->param, strlen(c->param));

				if (c->required)
					appendStringInfo(&buf, "Required: every query must give %s = ... or %s = ANY(...), or join on it. ",
									 c->name, c->name);
				appendStringInfo(&buf, "It is the path parameter {%s} of %s%s%s.",
								 c->param, op_text(ep->list),
								 p ? ", " : "", p ? p->doc : "");
				break;
			}
		case PSVC_COL_FIELD:
			if (c->field == NULL)
				appendStringInfoString(&buf, "Not a member of the item: a filter.");
			else if (c->field[0] == '\0')
				appendStringInfoString(&buf, "The item itself.");
			else
				appendStringInfo(&buf, "Member \"%s\" of the item.", c->field);
			if (c->param != NULL)
				appendStringInfo(&buf, " Equality is sent to the service as query parameter \"%s\".",
								 c->param);
			if (c->field == NULL && c->param != NULL)
				appendStringInfoString(&buf, " The column shows the value the query asked for.");
			if (psvc_endpoint_is_detail_key(ep, c))
				appendStringInfo(&buf, " Equality reads the one row with %s.",
								 op_text(ep->detail));
			break;
	}
	return buf.data;
}

/* What \dE+ says about one table: what it reads, and what a query must say. */
static char *
table_comment(const PsvcEndpoint *ep)
{
	StringInfoData buf;
	bool		first = true;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%s (service %s).", ep->description,
					 psvc_services[ep->list->service].name);
	appendStringInfo(&buf, " Reads %s", op_text(ep->list));
	if (ep->detail != NULL && ep->detail_column != NULL)
		appendStringInfo(&buf, "; %s = ... reads %s (%s)", ep->detail_column,
						 op_text(ep->detail), ep->detail->description);
	appendStringInfoChar(&buf, '.');
	for (int i = 0; i < ep->ncolumns; i++)
	{
		const PsvcColumnDef *c = &ep->columns[i];

		if (c->kind == PSVC_COL_PATH && c->required)
			appendStringInfo(&buf, " Required: WHERE %s = ... (or %s = ANY(...), or a join on %s).",
							 c->name, c->name, c->name);
	}
	for (int i = 0; i < ep->ncolumns; i++)
	{
		const PsvcColumnDef *c = &ep->columns[i];

		if (c->kind != PSVC_COL_FIELD || c->param == NULL)
			continue;
		appendStringInfo(&buf, "%s%s =", first ? " Filters sent to the service: " : ", ",
						 c->name);
		first = false;
	}
	if (!first)
		appendStringInfoChar(&buf, '.');
	if (ep->modify != NULL)
	{
		const PsvcOperation *ops[3] = {ep->modify->insert, ep->modify->update,
		ep->modify->delete};
		const char *const verbs[3] = {"INSERT", "UPDATE", "DELETE"};

		first = true;
		for (int i = 0; i < 3; i++)
		{
			if (ops[i] == NULL)
				continue;
			appendStringInfo(&buf, "%s%s sends %s (%s)", first ? " Writable: " : ", ",
							 verbs[i], op_text(ops[i]), ops[i]->description);
			first = false;
		}
		appendStringInfoChar(&buf, '.');
	}
	return buf.data;
}

/* Runs one command of the import through SPI; raises on failure. */
static void
run_command(const char *cmd)
{
	int			rc = SPI_execute(cmd, false, 0);

	if (rc < 0)
		elog(ERROR, "SPI_execute failed with %s: %s", SPI_result_code_string(rc), cmd);
}

/*
 * IMPORT FOREIGN SCHEMA.  Creates the tables of the service, with a COMMENT
 * on each table and column written from the catalogue, and returns no
 * command.  PostgreSQL accepts only CREATE FOREIGN TABLE commands from an
 * import and runs them after this returns, so the comments could not
 * follow them; the tables are therefore created here, through SPI, as the
 * importing user, in the same transaction, qualified with the local
 * schema, exactly as PostgreSQL would have run the commands.  Allocates in
 * CurrentMemoryContext.
 */
List *
psvc_fdw_import(ImportForeignSchemaStmt *stmt, Oid serverOid)
{
	PsvcServer *server = psvc_options_server(serverOid);
	const PsvcEndpoint *eps;
	int			n;
	const char *schema = quote_identifier(stmt->local_schema);

	psvc_options_check_import(stmt->options, false);
	if (strcmp(stmt->remote_schema, server->service) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
				 errmsg("server \"%s\" serves \"%s\", not \"%s\"",
						server->servername, server->service, stmt->remote_schema),
				 errhint("Use IMPORT FOREIGN SCHEMA %s FROM SERVER %s.",
						 server->service, quote_identifier(server->servername))));

	SPI_connect();
	eps = psvc_endpoints(&n);
	for (int i = 0; i < n; i++)
	{
		const PsvcEndpoint *ep = &eps[i];
		const char *table;
		StringInfoData buf;

		if (strcmp(psvc_services[ep->list->service].name, server->service) != 0 ||
			!psvc_fdw_import_wanted(stmt, ep->resource))
			continue;
		table = psprintf("%s.%s", schema, quote_identifier(ep->resource));
		initStringInfo(&buf);
		appendStringInfo(&buf, "CREATE FOREIGN TABLE %s (", table);
		for (int c = 0; c < ep->ncolumns; c++)
			appendStringInfo(&buf, "%s%s %s", c ? ", " : "",
							 quote_identifier(ep->columns[c].name), ep->columns[c].type);
		appendStringInfo(&buf, ") SERVER %s OPTIONS (resource %s)",
						 quote_identifier(server->servername), quote_literal_cstr(ep->resource));
		run_command(buf.data);

		run_command(psprintf("COMMENT ON FOREIGN TABLE %s IS %s", table,
							 quote_literal_cstr(table_comment(ep))));
		for (int c = 0; c < ep->ncolumns; c++)
			run_command(psprintf("COMMENT ON COLUMN %s.%s IS %s", table,
								 quote_identifier(ep->columns[c].name),
								 quote_literal_cstr(column_comment(ep, &ep->columns[c]))));
	}
	SPI_finish();
	return NIL;
}
