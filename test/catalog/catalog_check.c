/*-------------------------------------------------------------------------
 *
 * catalog_check.c
 *		  The checks of the catalogue's rows, run when the extension is
 *		  built (make runs this program, linked with src/catalog/catalog.c
 *		  and src/catalog/endpoints.c alone), so that a malformed row fails
 *		  the build instead of every backend at run time.
 *
 * The catalogue is constant data that depends on nothing (its folder is
 * the lowest of the house, docs/architecture.md), so it links into a
 * program of its own.  Checked, for every operation: a name, a service, a
 * method, a route starting with '/', a description; each {name} of its
 * route has a parameter definition and each definition a {name}; its
 * rate-limit row is of its own service; a SQL function's row says what
 * its argument and result are made of.  For every foreign table: a
 * resource name, unique; a list operation that is a GET; a detail
 * operation, if any, that is a GET with one path parameter and a key
 * column of the table; each path column the {name} of the list's route.
 * Every problem is printed; the exit status is 1 when there is one.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  test/catalog/catalog_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "catalog.h"

/* the C library's, so that the program needs no libpgport */
#undef printf
#undef fprintf
#undef snprintf

static int	problems = 0;

static void
problem(const char *what, const char *name, const char *detail)
{
	fprintf(stderr, "catalog_check: %s \"%s\": %s\n", what, name ? name : "?", detail);
	problems++;
}

static int
count_params(const PsvcOperation *op)
{
	int			n = 0;

	while (n < PSVC_MAX_PATH_PARAMS && op->params[n])
		n++;
	return n;
}

static void
check_operation(int i, const PsvcOperation *op)
{
	char		buf[256];
	int			nbraces = 0;
	int			nparams;

	if (op->name == NULL || op->method == NULL || op->route == NULL ||
		op->route[0] != '/' || op->description == NULL ||
		op->service < 0 || op->service >= PSVC_NSERVICES)
	{
		snprintf(buf, sizeof(buf), "operation %d of the catalogue is incomplete "
				 "(name, service, method, a route that starts with '/', description)", i);
		problem("operation", op->name, buf);
		return;
	}
	for (const char *p = strchr(op->route, '{'); p; p = strchr(p + 1, '{'))
	{
		const char *end = strchr(p, '}');

		if (end == NULL || psvc_op_param(op, p + 1, end - p - 1) == NULL)
		{
			snprintf(buf, sizeof(buf), "{%.*s} of its route has no parameter definition",
					 end ? (int) (end - p - 1) : (int) strlen(p + 1), p + 1);
			problem("operation", op->name, buf);
		}
		nbraces++;
	}
	nparams = count_params(op);
	if (nparams != nbraces)
	{
		snprintf(buf, sizeof(buf), "defines %d path parameters for %d in its route",
				 nparams, nbraces);
		problem("operation", op->name, buf);
	}
	if (op->limit != NULL && op->limit->service != op->service)
		problem("operation", op->name, "counts against a rate-limit row of another service");
	if ((op->arg == PSVC_ARG_PATH && nparams != 1) ||
		(op->arg == PSVC_ARG_BODY_MEMBER && op->body_member == NULL) ||
		((op->result == PSVC_RESULT_TEXT || op->result == PSVC_RESULT_INT64) &&
		 op->result_member == NULL))
		problem("operation", op->name, "is not a complete SQL function");
	for (int j = 0; j < i; j++)
		if (psvc_operations[j].name && strcmp(psvc_operations[j].name, op->name) == 0)
			problem("operation", op->name, "has the name of an earlier operation");
}

static void
check_endpoint(const PsvcEndpoint *ep, const PsvcEndpoint *all, int index)
{
	if (ep->resource == NULL || ep->list == NULL || ep->columns == NULL || ep->ncolumns <= 0)
	{
		problem("table", ep->resource, "needs a resource, a list operation and columns");
		return;
	}
	for (int j = 0; j < index; j++)
		if (strcmp(all[j].resource, ep->resource) == 0)
			problem("table", ep->resource, "has the resource of an earlier table");
	if (ep->list->method == NULL || strcmp(ep->list->method, "GET") != 0)
		problem("table", ep->resource, "reads through a list operation that is not a GET");
	if (ep->detail != NULL)
	{
		if (ep->detail->method == NULL || strcmp(ep->detail->method, "GET") != 0 ||
			count_params(ep->detail) < 1)
			problem("table", ep->resource, "has a detail operation that is not a GET by key");
		if (ep->detail_column == NULL || psvc_endpoint_column(ep, ep->detail_column) == NULL)
			problem("table", ep->resource, "has a detail operation without a key column of its own");
	}
	for (int c = 0; c < ep->ncolumns; c++)
	{
		const PsvcColumnDef *col = &ep->columns[c];
		char		buf[256];

		if (col->name == NULL)
		{
			problem("table", ep->resource, "has a column without a name");
			continue;
		}
		if (col->kind == PSVC_COL_PATH &&
			(col->param == NULL ||
			 psvc_op_param(ep->list, col->param, strlen(col->param)) == NULL))
		{
			snprintf(buf, sizeof(buf), "path column %s names no {name} of %s",
					 col->name, ep->list->route ? ep->list->route : "its list route");
			problem("table", ep->resource, buf);
		}
		if (col->kind == PSVC_COL_FIELD && col->field == NULL && col->echo_if_in == NULL)
		{
			snprintf(buf, sizeof(buf), "member column %s names no member", col->name);
			problem("table", ep->resource, buf);
		}
	}
}

int
main(int argc, char **argv)
{
	const PsvcEndpoint *eps;
	int			neps;

	for (int i = 0; i < PSVC_NOPS; i++)
		check_operation(i, &psvc_operations[i]);
	eps = psvc_endpoints(&neps);
	for (int i = 0; i < neps; i++)
		check_endpoint(&eps[i], eps, i);
	if (problems > 0)
	{
		fprintf(stderr, "catalog_check: %d problems in the catalogue (src/catalog/)\n", problems);
		return 1;
	}
	printf("catalog_check: %d operations, %d tables: ok\n", PSVC_NOPS, neps);
	return 0;
}
