/*-------------------------------------------------------------------------
 *
 * declared.c
 *		  The parts of a route declared in SQL that are data of the
 *		  catalogue: the names of the paging styles, and the parser of a
 *		  route as a table option writes it ('GET /jobs/{family}/history').
 *
 * The FDW builds the operations and the endpoint of a declared table from
 * its options (fdw_declared.c); the option validator (options.c) refuses
 * what does not parse before it is stored.  Both parse with the one
 * function below, so a route the validator let through is one the FDW can
 * build.  This file holds no route of a partner service.
 *
 * Memory: the parser allocates its results in CurrentMemoryContext.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/catalog/declared.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog.h"

/* in PsvcPaging order */
const char *const psvc_paging_names[] = {
	[PSVC_PAGING_NONE] = "none",
	[PSVC_PAGING_CURSOR] = "cursor",
	[PSVC_PAGING_NEXT_URL] = "next_url",
	[PSVC_PAGING_LINK] = "link",
	[PSVC_PAGING_OFFSET] = "offset",
	[PSVC_PAGING_PAGE] = "page",
	NULL
};

int
psvc_paging_find(const char *name)
{
	for (int i = 0; psvc_paging_names[i] != NULL; i++)
		if (strcmp(psvc_paging_names[i], name) == 0)
			return i;
	return -1;
}

/* May c stand in a {name} of a route?  [a-z0-9_], as column names do. */
static bool
is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* May c stand in a literal segment of a route (RFC 3986's pchar)? */
static bool
is_path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || strchr("-._~!$&'()*+,;=:@%", c) != NULL;
}

const char *
psvc_declared_parse_route(const char *spec, const char *const *methods,
						  char **method, char **route, char **names, int *nnames)
{
	const char *sp = strchr(spec, ' ');
	const char *p;
	bool		known = false;

	*nnames = 0;
	if (sp == NULL)
		return "a route is a method, one space and a path, as 'GET /items/{id}'";
	*method = pnstrdup(spec, sp - spec);
	for (int i = 0; methods[i] != NULL; i++)
		if (strcmp(methods[i], *method) == 0)
			known = true;
	if (!known)
		return "its method is not one this option takes";
	p = sp + 1;
	if (*p != '/')
		return "its path does not start with \"/\"";
	*route = pstrdup(p);
	while (*p != '\0')
	{
		const char *seg;

		if (*p != '/')
			return "its path is not a list of segments";
		seg = ++p;
		if (*p == '{')
		{
			const char *close = strchr(p, '}');

			if (close == NULL || close == p + 1)
				return "a \"{\" of its path has no name and \"}\" after it";
			for (const char *c = p + 1; c < close; c++)
				if (!is_name_char(*c))
					return "a {name} of its path holds a character other than a-z, 0-9 and _";
			if (close[1] != '\0' && close[1] != '/')
				return "a {name} of its path is not a whole segment";
			if (*nnames >= PSVC_MAX_PATH_PARAMS)
				return "its path has more than three {name}s";
			for (int i = 0; i < *nnames; i++)
				if ((int) strlen(names[i]) == close - p - 1 &&
					strncmp(names[i], p + 1, close - p - 1) == 0)
					return "a {name} of its path is repeated";
			names[(*nnames)++] = pnstrdup(p + 1, close - p - 1);
			p = close + 1;
			continue;
		}
		while (*p != '\0' && *p != '/')
		{
			if (!is_path_char(*p))
				return "its path holds a character a path segment cannot (a space, \"?\", \"#\", a brace...)";
			p++;
		}
		if (p == seg && *p != '\0')
			return "its path has an empty segment";
		if ((p - seg == 1 && seg[0] == '.') ||
			(p - seg == 2 && seg[0] == '.' && seg[1] == '.'))
			return "its path has a \".\" or \"..\" segment";
	}
	return NULL;
}
