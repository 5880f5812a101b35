/*-------------------------------------------------------------------------
 *
 * fdw_options_declared.c
 *		  Validating the options of a foreign table over a route declared
 *		  in SQL (docs/declared-endpoints.md): each option's value, and the
 *		  rules between the options of one table or one column.
 *
 * The validator (fdw_options.c) knows neither the server of a table nor the
 * table of a column, so what depends on them (a {name} of the route with
 * no column for it, a route on a server of the custom service without
 * "endpoint") is checked when the table is planned (fdw_declared.c).  A
 * route is parsed by the catalogue's one parser (declared.c), the same
 * the FDW builds the table from.
 *
 * Memory: nothing is kept; messages in the error context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_options_declared.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/defrem.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "catalog.h"
#include "fdw.h"
#include "options.h"
#include "pg_compat.h"

static const char *const read_methods[] = {"GET", NULL};
static const char *const insert_methods[] = {"POST", "PUT", NULL};
static const char *const update_methods[] = {"PUT", "PATCH", "POST", NULL};
static const char *const delete_methods[] = {"DELETE", "POST", NULL};

/* Which paging style each paging parameter belongs to. */
static const struct
{
	const char *option;
	PsvcPaging	paging;
}			paging_params[] = {
	{"cursor_path", PSVC_PAGING_CURSOR},
	{"cursor_param", PSVC_PAGING_CURSOR},
	{"next_path", PSVC_PAGING_NEXT_URL},
	{"offset_param", PSVC_PAGING_OFFSET},
	{"page_param", PSVC_PAGING_PAGE},
};

pg_noreturn static void
report_value(DefElem *def, const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
			 errmsg("invalid value for option \"%s\": \"%s\"",
					def->defname, defGetString(def)),
			 errdetail("%s", detail),
			 hint ? errhint("%s", hint) : 0));
}

/* A route option: its method among methods, a path that parses. */
static void
check_route(DefElem *def, const char *const *methods, const char *example)
{
	char	   *method;
	char	   *route;
	char	   *names[PSVC_MAX_PATH_PARAMS];
	int			n;
	const char *why = psvc_declared_parse_route(defGetString(def), methods,
												&method, &route, names, &n);
	StringInfoData list;

	if (why == NULL)
		return;
	initStringInfo(&list);
	for (int i = 0; methods[i]; i++)
		appendStringInfo(&list, "%s%s", i ? ", " : "", methods[i]);
	report_value(def, psprintf("The route cannot be used: %s.", why),
				 psprintf("Write it as '%s'; option \"%s\" takes the methods %s.",
						  example, def->defname, list.data));
}

/* A dotted member path: names separated by single dots. */
static void
check_member_path(DefElem *def, bool empty_ok)
{
	const char *v = defGetString(def);

	if (v[0] == '\0' && empty_ok)
		return;
	if (v[0] == '\0' || v[0] == '.' || v[strlen(v) - 1] == '.' ||
		strstr(v, "..") != NULL)
		report_value(def, "A member path is one or more member names separated by single dots.",
					 "Write it as 'data' or 'pagination.next_cursor'.");
}

/* A query parameter's name: not empty, no character a URL would encode. */
static void
check_param_name(DefElem *def)
{
	const char *v = defGetString(def);

	if (v[0] == '\0' || strpbrk(v, "&=?#% /") != NULL)
		report_value(def, "A query parameter's name is not empty and holds none of &, =, ?, #, %, space or /.",
					 NULL);
}

void
psvc_options_check_declared(DefElem *def)
{
	const char *name = def->defname;

	if (strcmp(name, "endpoint") == 0)
		check_route(def, read_methods, "GET /items/{id}/events");
	else if (strcmp(name, "insert") == 0)
		check_route(def, insert_methods, "POST /items");
	else if (strcmp(name, "update") == 0)
		check_route(def, update_methods, "PUT /items/{id}");
	else if (strcmp(name, "delete") == 0)
		check_route(def, delete_methods, "DELETE /items/{id}");
	else if (strcmp(name, "items") == 0)
		check_member_path(def, true);
	else if (strcmp(name, "cursor_path") == 0 || strcmp(name, "next_path") == 0 ||
			 strcmp(name, "json_path") == 0)
		check_member_path(def, false);
	else if (strcmp(name, "paging") == 0)
	{
		if (psvc_paging_find(defGetString(def)) < 0)
			report_value(def, "A route pages by one of the styles the documents of JSON APIs use.",
						 "Valid paging styles are: cursor, next_url, link, offset, page, none.");
	}
	else if (strcmp(name, "page_size") == 0)
	{
		const char *text = defGetString(def);
		char	   *end;
		long		v;

		errno = 0;
		v = strtol(text, &end, 10);
		if (errno != 0 || end == text || *end != '\0' || v < 1 || v > 10000)
			report_value(def, "The page size is an integer from 1 to 10000.", NULL);
	}
	else if (strcmp(name, "param") == 0)
	{
		const char *v = defGetString(def);

		if (strcmp(v, "path") != 0 && strcmp(v, "query") != 0)
			report_value(def, "A column is sent either as a {name} of the route or as a query parameter.",
						 "Valid values are: path, query.");
	}
	else if (strcmp(name, "limit_param") == 0)
	{
		if (defGetString(def)[0] != '\0')
			check_param_name(def);
	}
	else if (strcmp(name, "raw") == 0)
	{
		bool		b;

		if (!parse_bool(defGetString(def), &b))
			report_value(def, "Option \"raw\" is a boolean.",
						 "Give a boolean value such as \"true\" or \"false\".");
	}
	else
		check_param_name(def);	/* cursor_param, offset_param, page_param,
								 * param_name */
}

pg_noreturn static void
report_conflict(const char *name, const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
			 errmsg("option \"%s\" cannot be used here", name),
			 errdetail("%s", detail),
			 hint ? errhint("%s", hint) : 0));
}

void
psvc_options_check_declared_table(List *options)
{
	DefElem    *endpoint = psvc_options_find(options, "endpoint");
	DefElem    *paging_def = psvc_options_find(options, "paging");
	static const char *const endpoint_only[] = {
		"items", "paging", "cursor_path", "cursor_param", "next_path",
		"offset_param", "page_param", "limit_param", "page_size",
		"insert", "update", "delete", NULL
	};
	PsvcPaging	paging;

	if (endpoint != NULL && psvc_options_find(options, "resource") != NULL)
		report_conflict("endpoint",
						"A foreign table reads either a resource of the catalogue or a declared endpoint, not both.",
						"Drop the option \"resource\" to declare the route with \"endpoint\".");
	if (endpoint == NULL)
	{
		for (int i = 0; endpoint_only[i]; i++)
			if (psvc_options_find(options, endpoint_only[i]) != NULL)
				report_conflict(endpoint_only[i],
								psprintf("Option \"%s\" describes a declared route; this table has no option \"endpoint\".",
										 endpoint_only[i]),
								"Add the option \"endpoint\", such as 'GET /items'.");
		return;
	}
	paging = paging_def ? psvc_paging_find(defGetString(paging_def)) : PSVC_PAGING_NONE;
	for (int i = 0; i < lengthof(paging_params); i++)
		if (paging_params[i].paging != paging &&
			psvc_options_find(options, paging_params[i].option) != NULL)
			report_conflict(paging_params[i].option,
							psprintf("Option \"%s\" belongs to paging '%s'; this table's paging is '%s'.",
									 paging_params[i].option,
									 psvc_paging_names[paging_params[i].paging],
									 psvc_paging_names[paging]),
							NULL);
	if (paging == PSVC_PAGING_NONE)
	{
		if (psvc_options_find(options, "limit_param") != NULL)
			report_conflict("limit_param", "A route without paging is sent no page size.",
							"Give the table a paging style with the option \"paging\".");
		if (psvc_options_find(options, "page_size") != NULL)
			report_conflict("page_size", "A route without paging is sent no page size.",
							"Give the table a paging style with the option \"paging\".");
	}
}

void
psvc_options_check_declared_column(List *options)
{
	DefElem    *param = psvc_options_find(options, "param");
	DefElem    *raw = psvc_options_find(options, "raw");
	bool		is_raw = false;

	if (psvc_options_find(options, "param_name") != NULL && param == NULL)
		report_conflict("param_name", "Option \"param_name\" names the parameter a column with option \"param\" is sent as.",
						"Add the option \"param\" ('path' or 'query').");
	if (raw != NULL)
		(void) parse_bool(defGetString(raw), &is_raw);
	if (is_raw && (param != NULL || psvc_options_find(options, "json_path") != NULL ||
				   psvc_options_find(options, "field") != NULL))
		report_conflict("raw", "A raw column holds the whole item: it has no member and is sent nowhere.",
						NULL);
	if (psvc_options_find(options, "json_path") != NULL && psvc_options_find(options, "field") != NULL)
		report_conflict("json_path", "Options \"json_path\" and \"field\" both name the column's member.",
						"Keep one of them.");
}
