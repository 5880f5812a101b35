/*-------------------------------------------------------------------------
 *
 * fdw_openapi.c
 *		  IMPORT FOREIGN SCHEMA openapi: foreign tables over declared
 *		  routes, written from an OpenAPI 3 document.
 *
 * The document comes from the import option spec_json (the text itself) or
 * spec_file (a file the server reads: like COPY FROM a file, only for
 * roles with the privileges of pg_read_server_files, superusers included).
 * It is parsed by PostgreSQL's jsonb input, so no JSON library is added;
 * a consequence is that members come in jsonb's order (shorter keys first),
 * not the document's, which sets the order of the tables and columns.
 *
 * Every GET whose answer is a list (a top-level array, or an object with
 * exactly one array member) becomes a table with the declared-endpoint
 * options (endpoint, items, paging and its parameters; json_path, param,
 * param_name on columns), which the declared-endpoint engine reads.  The
 * paging style is guessed from the query parameters and the answer's
 * schema; the user corrects a wrong guess with ALTER FOREIGN TABLE.
 * A part of the document this import does not understand (a route whose
 * answer is no list, a header parameter, an external $ref, a property
 * without a type) is skipped, or mapped to jsonb, with a NOTICE naming
 * it: one odd route never fails the import of the others.
 *
 * $ref is resolved only within the document (#/...), and at most
 * MAX_REF_HOPS references are followed in a row, so that a cycle of
 * references ends with a NOTICE.  Schemas are read to two levels only
 * (the answer and its items), so a recursive schema is never walked.
 *
 * The tables are created through SPI with a COMMENT on each table and
 * column, as fdw_import.c does for the services, and for the same reason.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_openapi.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <sys/stat.h>

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "mb/pg_wchar.h"
#include "nodes/makefuncs.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/resowner.h"

#include "fdw.h"
#include "options.h"

/* References followed in a row before a $ref is taken for a cycle. */
#define MAX_REF_HOPS 16
/* The largest document spec_file reads. */
#define MAX_SPEC_BYTES (64 * 1024 * 1024)
/* Room for a table or column name and a "_NN" suffix. */
#define MAX_NAME_CHARS (NAMEDATALEN - 5)

/* One member of a JSON object. */
typedef struct OaMember
{
	char	   *key;
	JsonbValue *value;
} OaMember;

/* One column of a table being built. */
typedef struct OaColumn
{
	char	   *name;			/* snake_case, unique in its table */
	const char *type;
	char	   *json_path;		/* the member, NULL for a filter only */
	const char *param;			/* "path", "query" or NULL */
	char	   *param_name;		/* the parameter's name */
	char	   *comment;
} OaColumn;

/* The table of one GET, while it is built. */
typedef struct OaTable
{
	char	   *path;
	char	   *name;
	char	   *items;
	const char *paging;
	List	   *paging_opts;	/* DefElem: cursor_path, next_path... */
	List	   *columns;		/* OaColumn */
	char	   *comment;
} OaTable;

/* Query parameters that steer paging rather than filter rows. */
static const char *const cursor_params[] = {"cursor", "page_token", "pageToken",
"after", "starting_after", "continuation_token", "next_token", NULL};
static const char *const limit_params[] = {"limit", "per_page", "page_size",
"pageSize", "max_results", "count", NULL};
/* Members of an answer that hold the next cursor or the next page's URL. */
static const char *const cursor_members[] = {"next_cursor", "nextCursor",
"cursor", NULL};
static const char *const next_members[] = {"next", "next_url", "nextUrl",
"next_page_url", NULL};

static JsonbContainer *oa_doc;	/* the document while it is imported */

static bool
in_list(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(name, *list) == 0)
			return true;
	return false;
}

static JsonbContainer *
as_object(JsonbValue *v)
{
	if (v && v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data))
		return v->val.binary.data;
	return NULL;
}

static JsonbContainer *
as_array(JsonbValue *v)
{
	if (v && v->type == jbvBinary && JsonContainerIsArray(v->val.binary.data))
		return v->val.binary.data;
	return NULL;
}

/* A member of an object, or NULL. */
static JsonbValue *
get(JsonbContainer *obj, const char *key)
{
	if (obj == NULL || !JsonContainerIsObject(obj))
		return NULL;
	return getKeyJsonValueFromContainer(obj, key, strlen(key), NULL);
}

/* A string member of an object as a C string, or NULL. */
static char *
get_str(JsonbContainer *obj, const char *key)
{
	JsonbValue *v = get(obj, key);

	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/*
 * The members of an object, or the elements of an array (key NULL), in
 * jsonb's order.  Allocates in CurrentMemoryContext.
 */
static List *
members(JsonbContainer *c)
{
	List	   *result = NIL;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;

	if (c == NULL)
		return NIL;
	it = JsonbIteratorInit(c);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			key = pnstrdup(v.val.string.val, v.val.string.len);
		else if (tok == WJB_VALUE || tok == WJB_ELEM)
		{
			OaMember   *m = palloc(sizeof(OaMember));

			m->key = tok == WJB_VALUE ? key : NULL;
			m->value = palloc(sizeof(JsonbValue));
			*m->value = v;
			result = lappend(result, m);
		}
	}
	return result;
}

/*
 * The object a value stands for: itself, or what its $ref names within the
 * document, following references up to MAX_REF_HOPS.  NULL, after a NOTICE
 * naming the reference, when it cannot be followed.
 */
static JsonbContainer *
resolve(JsonbValue *v, const char *where)
{
	JsonbContainer *obj = as_object(v);

	for (int hops = 0; obj != NULL; hops++)
	{
		char	   *ref = get_str(obj, "$ref");
		char	   *part;
		char	   *save;
		JsonbContainer *target = oa_doc;

		if (ref == NULL)
			return obj;
		if (hops >= MAX_REF_HOPS)
		{
			ereport(NOTICE,
					(errmsg("skipped the reference \"%s\" in %s", ref, where),
					 errdetail("More than %d references follow each other: a cycle.",
							   MAX_REF_HOPS)));
			return NULL;
		}
		if (strncmp(ref, "#/", 2) != 0)
		{
			ereport(NOTICE,
					(errmsg("skipped the reference \"%s\" in %s", ref, where),
					 errdetail("Only references within the document (#/...) are followed.")));
			return NULL;
		}
		for (part = strtok_r(ref + 2, "/", &save); part && target;
			 part = strtok_r(NULL, "/", &save))
		{
			/* JSON pointer escapes: ~1 is '/', ~0 is '~' */
			StringInfoData key;

			initStringInfo(&key);
			for (char *p = part; *p; p++)
			{
				if (p[0] == '~' && (p[1] == '0' || p[1] == '1'))
					appendStringInfoChar(&key, *++p == '1' ? '/' : '~');
				else
					appendStringInfoChar(&key, *p);
			}
			target = as_object(get(target, key.data));
		}
		if (target == NULL)
		{
			ereport(NOTICE,
					(errmsg("skipped the reference \"%s\" in %s", get_str(obj, "$ref"), where),
					 errdetail("It names no object of the document.")));
			return NULL;
		}
		obj = target;
	}
	return NULL;
}

/* The type of a schema: "type", or the first non-null of an array of types. */
static char *
schema_type(JsonbContainer *schema)
{
	JsonbValue *t = get(schema, "type");
	ListCell   *lc;

	if (t && t->type == jbvString)
		return pnstrdup(t->val.string.val, t->val.string.len);
	foreach(lc, members(as_array(t)))
	{
		JsonbValue *e = ((OaMember *) lfirst(lc))->value;

		if (e->type == jbvString && strncmp(e->val.string.val, "null", 4) != 0)
			return pnstrdup(e->val.string.val, e->val.string.len);
	}
	if (get(schema, "properties"))
		return "object";
	if (get(schema, "items"))
		return "array";
	return NULL;
}

/* The column type of a schema, or NULL when it has no type this maps. */
static const char *
sql_type(JsonbContainer *schema)
{
	char	   *type = schema_type(schema);
	char	   *format = get_str(schema, "format");

	if (type == NULL)
		return NULL;
	if (strcmp(type, "string") == 0)
	{
		if (format && strcmp(format, "date-time") == 0)
			return "timestamptz";
		if (format && strcmp(format, "date") == 0)
			return "date";
		return "text";
	}
	if (strcmp(type, "integer") == 0)
		return "bigint";
	if (strcmp(type, "number") == 0)
		return "numeric";
	if (strcmp(type, "boolean") == 0)
		return "boolean";
	if (strcmp(type, "object") == 0 || strcmp(type, "array") == 0)
		return "jsonb";
	return NULL;
}

/*
 * A SQL name from a path or a member: camelCase split, every run of other
 * characters than letters and digits one underscore, lower case, cut to
 * MAX_NAME_CHARS; "x" when nothing is left, "_" first when it starts with a
 * digit.  Allocates in CurrentMemoryContext.
 */
static char *
snake_case(const char *s)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (const char *p = s; *p && buf.len < MAX_NAME_CHARS; p++)
	{
		unsigned char c = (unsigned char) *p;

		if (isalnum(c))
		{
			if (isupper(c) && p > s && (islower((unsigned char) p[-1]) ||
										isdigit((unsigned char) p[-1])) &&
				buf.len > 0 && buf.data[buf.len - 1] != '_')
				appendStringInfoChar(&buf, '_');
			if (buf.len == 0 && isdigit(c))
				appendStringInfoChar(&buf, '_');
			appendStringInfoChar(&buf, tolower(c));
		}
		else if (buf.len > 0 && buf.data[buf.len - 1] != '_')
			appendStringInfoChar(&buf, '_');
	}
	while (buf.len > 0 && buf.data[buf.len - 1] == '_')
		buf.data[--buf.len] = '\0';
	if (buf.len == 0)
		appendStringInfoChar(&buf, 'x');
	return buf.data;
}

/* name, or name_2, name_3...: the first not in taken (a List of char *). */
static char *
unique_name(const char *name, List *taken)
{
	char	   *candidate = pstrdup(name);

	for (int n = 2;; n++)
	{
		ListCell   *lc;
		bool		found = false;

		foreach(lc, taken)
			if (strcmp((char *) lfirst(lc), candidate) == 0)
				found = true;
		if (!found)
			return candidate;
		candidate = psprintf("%s_%d", name, n);
	}
}

static OaColumn *
find_column(OaTable *t, const char *name)
{
	ListCell   *lc;

	foreach(lc, t->columns)
	{
		OaColumn   *c = lfirst(lc);

		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

static List *
column_names(OaTable *t)
{
	List	   *names = NIL;
	ListCell   *lc;

	foreach(lc, t->columns)
		names = lappend(names, ((OaColumn *) lfirst(lc))->name);
	return names;
}

/* The columns of the item's properties. */
static void
add_item_columns(OaTable *t, JsonbContainer *item, const char *where)
{
	ListCell   *lc;

	foreach(lc, members(as_object(get(item, "properties"))))
	{
		OaMember   *m = lfirst(lc);
		char	   *what = psprintf("property \"%s\" of %s", m->key, where);
		JsonbContainer *prop = resolve(m->value, what);
		OaColumn   *c = palloc0(sizeof(OaColumn));

		/* "raw" is the whole item's: a member of that name is raw_2 */
		c->name = unique_name(snake_case(m->key),
							  lappend(column_names(t), "raw"));
		c->json_path = m->key;
		c->type = prop ? sql_type(prop) : NULL;
		if (c->type == NULL)
		{
			ereport(NOTICE,
					(errmsg("the %s has no type the import maps: it is a jsonb column", what)));
			c->type = "jsonb";
		}
		c->comment = get_str(as_object(m->value), "description");
		if (c->comment == NULL && prop)
			c->comment = get_str(prop, "description");
		t->columns = lappend(t->columns, c);
	}
}

/* The column that holds the whole item, after the members. */
static void
add_raw_column(OaTable *t)
{
	OaColumn   *c = palloc0(sizeof(OaColumn));

	c->name = "raw";
	c->type = "jsonb";
	c->comment = "The whole item as the service returned it.";
	t->columns = lappend(t->columns, c);
}

/*
 * The parameters of an operation and of its path (path-level first; an
 * operation's own parameter of the same name and place wins).  Each is
 * resolved; a header or cookie parameter is skipped with a NOTICE, and so
 * is a query parameter that steers paging (collected in *paging_params).
 */
static void
add_parameters(OaTable *t, JsonbContainer *path_item, JsonbContainer *op,
			   const char *where, List **query_names)
{
	List	   *params = list_concat(members(as_array(get(op, "parameters"))),
									 members(as_array(get(path_item, "parameters"))));
	ListCell   *lc;
	List	   *seen = NIL;

	foreach(lc, params)
	{
		JsonbContainer *p = resolve(((OaMember *) lfirst(lc))->value,
									psprintf("a parameter of %s", where));
		char	   *name = p ? get_str(p, "name") : NULL;
		char	   *in = p ? get_str(p, "in") : NULL;
		char	   *key;
		OaColumn   *c;
		JsonbContainer *schema;

		if (name == NULL || in == NULL)
			continue;
		key = psprintf("%s %s", in, name);
		if (list_member(seen, makeString(key)))
			continue;
		seen = lappend(seen, makeString(key));
		if (strcmp(in, "query") == 0)
			*query_names = lappend(*query_names, name);
		if (strcmp(in, "query") == 0 &&
			(in_list(name, cursor_params) || in_list(name, limit_params) ||
			 strcmp(name, "offset") == 0 || strcmp(name, "page") == 0))
			continue;			/* paging, not a filter */
		if (strcmp(in, "path") != 0 && strcmp(in, "query") != 0)
		{
			ereport(NOTICE,
					(errmsg("skipped the %s parameter \"%s\" of %s", in, name, where),
					 errdetail("Only path and query parameters become columns.")));
			continue;
		}
		/*
		 * A query filter on a member of the item is that member's column; a
		 * path parameter is a column of its own (its value is the query's,
		 * and a member of the same name may well say something else).
		 */
		c = strcmp(in, "query") == 0 ? find_column(t, snake_case(name)) : NULL;
		if (c == NULL || c->param != NULL || c->json_path == NULL)
		{
			c = palloc0(sizeof(OaColumn));
			c->name = unique_name(snake_case(name), column_names(t));
			schema = resolve(get(p, "schema"), psprintf("parameter \"%s\" of %s", name, where));
			c->type = schema ? sql_type(schema) : NULL;
			if (c->type == NULL || strcmp(c->type, "jsonb") == 0)
				c->type = "text";
			t->columns = lappend(t->columns, c);
		}
		c->param = strcmp(in, "path") == 0 ? "path" : "query";
		c->param_name = name;
		if (get_str(p, "description"))
			c->comment = c->comment && c->json_path ?
				psprintf("%s Filter: %s", c->comment, get_str(p, "description")) :
				get_str(p, "description");
	}
}

/* The dotted path of a member named from names, in obj or one level down. */
static char *
find_member(JsonbContainer *obj, const char *const *names, const char *where)
{
	ListCell   *lc;

	foreach(lc, members(as_object(get(obj, "properties"))))
	{
		OaMember   *m = lfirst(lc);
		JsonbContainer *sub;

		if (in_list(m->key, names))
			return m->key;
		sub = resolve(m->value, where);
		if (sub && get(sub, "properties"))
		{
			ListCell   *lc2;

			foreach(lc2, members(as_object(get(sub, "properties"))))
			{
				OaMember   *m2 = lfirst(lc2);

				if (in_list(m2->key, names))
					return psprintf("%s.%s", m->key, m2->key);
			}
		}
	}
	return NULL;
}

static void
add_opt(OaTable *t, const char *name, const char *value)
{
	t->paging_opts = lappend(t->paging_opts,
							 makeDefElem(pstrdup(name), (Node *) makeString(pstrdup(value)), -1));
}

static bool
has_header(JsonbContainer *response, const char *name)
{
	ListCell   *lc;

	foreach(lc, members(as_object(get(response, "headers"))))
		if (pg_strcasecmp(((OaMember *) lfirst(lc))->key, name) == 0)
			return true;
	return false;
}

/*
 * The paging style: a Link header, a cursor member, a next URL member,
 * an offset or a page parameter, else none; with the parameter names the
 * operation declares.
 */
static void
guess_paging(OaTable *t, JsonbContainer *response, JsonbContainer *answer,
			 List *query_names, const char *where)
{
	ListCell   *lc;
	char	   *member;
	const char *cursor_param = NULL;
	const char *limit_param = NULL;
	bool		has_offset = false;
	bool		has_page = false;

	foreach(lc, query_names)
	{
		const char *n = lfirst(lc);

		if (cursor_param == NULL && in_list(n, cursor_params))
			cursor_param = n;
		if (limit_param == NULL && in_list(n, limit_params))
			limit_param = n;
		has_offset |= strcmp(n, "offset") == 0;
		has_page |= strcmp(n, "page") == 0;
	}

	if (has_header(response, "Link"))
		t->paging = "link";
	else if (answer && (member = find_member(answer, cursor_members, where)) != NULL)
	{
		t->paging = "cursor";
		add_opt(t, "cursor_path", member);
		if (cursor_param)
			add_opt(t, "cursor_param", cursor_param);
	}
	else if (answer && (member = find_member(answer, next_members, where)) != NULL)
	{
		t->paging = "next_url";
		add_opt(t, "next_path", member);
	}
	else if (has_offset)
	{
		t->paging = "offset";
		add_opt(t, "offset_param", "offset");
	}
	else if (has_page)
	{
		t->paging = "page";
		add_opt(t, "page_param", "page");
	}
	else
		t->paging = "none";
	if (limit_param && strcmp(t->paging, "none") != 0)
		add_opt(t, "limit_param", limit_param);
}

/* The answer of a GET: its 200 (or first 2XX) JSON response's schema. */
static JsonbContainer *
answer_schema(JsonbContainer *op, const char *where, JsonbContainer **response)
{
	JsonbContainer *responses = as_object(get(op, "responses"));
	ListCell   *lc;

	*response = NULL;
	foreach(lc, members(responses))
	{
		OaMember   *m = lfirst(lc);

		if (m->key[0] == '2' && (*response == NULL || strcmp(m->key, "200") == 0))
			*response = resolve(m->value, psprintf("the responses of %s", where));
	}
	foreach(lc, members(as_object(get(*response, "content"))))
	{
		OaMember   *m = lfirst(lc);

		if (strstr(m->key, "json") != NULL)
			return resolve(get(as_object(m->value), "schema"),
						   psprintf("the answer of %s", where));
	}
	return NULL;
}

/*
 * Where the items of an answer are: sets t->items ("" for a top-level
 * array, else the one array member) and returns the item's schema, which
 * may be NULL (items of any shape).  Leaves t->items NULL when the answer
 * is no list.
 */
static JsonbContainer *
find_items(OaTable *t, JsonbContainer *answer, const char *where)
{
	char	   *type = answer ? schema_type(answer) : NULL;
	JsonbContainer *item = NULL;
	int			arrays = 0;
	ListCell   *lc;

	if (type && strcmp(type, "array") == 0)
	{
		t->items = "";
		return resolve(get(answer, "items"), psprintf("the items of %s", where));
	}
	if (type == NULL || strcmp(type, "object") != 0)
		return NULL;
	foreach(lc, members(as_object(get(answer, "properties"))))
	{
		OaMember   *m = lfirst(lc);
		JsonbContainer *s = resolve(m->value, where);
		char	   *st = s ? schema_type(s) : NULL;

		if (st && strcmp(st, "array") == 0)
		{
			arrays++;
			t->items = m->key;
			item = resolve(get(s, "items"), psprintf("the items of %s", where));
		}
	}
	if (arrays != 1)
		t->items = NULL;
	return item;
}

/* A text path column for each {name} of the route no parameter declares. */
static void
add_template_columns(OaTable *t)
{
	for (const char *p = strchr(t->path, '{'); p; p = strchr(p + 1, '{'))
	{
		const char *end = strchr(p, '}');
		char	   *name;
		OaColumn   *c;
		ListCell   *lc;
		bool		declared = false;

		if (end == NULL)
			break;
		name = pnstrdup(p + 1, end - p - 1);
		foreach(lc, t->columns)
		{
			OaColumn   *other = lfirst(lc);

			if (other->param && strcmp(other->param, "path") == 0 &&
				strcmp(other->param_name, name) == 0)
				declared = true;
		}
		if (declared)
			continue;
		c = palloc0(sizeof(OaColumn));
		c->name = unique_name(snake_case(name), column_names(t));
		c->type = "text";
		c->param = "path";
		c->param_name = name;
		t->columns = lappend(t->columns, c);
	}
}

/* The table's comment: the operation's summary and description, the route. */
static char *
table_comment(JsonbContainer *op, const char *where)
{
	const char *text[2] = {get_str(op, "summary"), get_str(op, "description")};
	StringInfoData comment;

	initStringInfo(&comment);
	for (int i = 0; i < 2; i++)
		if (text[i] && text[i][0])
			appendStringInfo(&comment, "%s%s%s", comment.len ? " " : "", text[i],
							 text[i][strlen(text[i]) - 1] == '.' ? "" : ".");
	appendStringInfo(&comment, "%sReads %s (OpenAPI import).", comment.len ? " " : "", where);
	return comment.data;
}

/*
 * The table of one GET, or NULL after a NOTICE when its answer is no list.
 * Allocates in CurrentMemoryContext.
 */
static OaTable *
build_table(const char *path, JsonbContainer *path_item, JsonbContainer *op)
{
	char	   *where = psprintf("GET %s", path);
	OaTable    *t = palloc0(sizeof(OaTable));
	JsonbContainer *response;
	JsonbContainer *answer = answer_schema(op, where, &response);
	JsonbContainer *item;
	List	   *query_names = NIL;

	t->path = pstrdup(path);
	item = find_items(t, answer, where);
	if (t->items == NULL)
	{
		ereport(NOTICE,
				(errmsg("skipped %s: its answer is not a list", where),
				 errdetail("A table is made of a GET whose JSON answer is an array, or an object with exactly one array member.")));
		return NULL;
	}
	add_item_columns(t, item, where);
	add_raw_column(t);
	add_parameters(t, path_item, op, where, &query_names);
	add_template_columns(t);
	guess_paging(t, response, answer, query_names, where);
	t->comment = table_comment(op, where);
	return t;
}

/* The document: spec_json, or the file spec_file names. */
static char *
read_spec(List *options)
{
	ListCell   *lc;
	char	   *json = NULL;
	char	   *file = NULL;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, "spec_json") == 0)
			json = defGetString(def);
		else if (strcmp(def->defname, "spec_file") == 0)
			file = defGetString(def);
	}
	if ((json == NULL) == (file == NULL))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("IMPORT FOREIGN SCHEMA openapi needs exactly one of the options \"spec_file\" and \"spec_json\""),
				 errhint("Give the document with OPTIONS (spec_json '...') or the path of a file the server reads with OPTIONS (spec_file '...').")));
	if (file)
	{
		FILE	   *f;
		struct stat st;
		size_t		n;

		/* as COPY FROM a file: the server's files are not every role's */
		if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to read the file of option \"spec_file\""),
					 errdetail("Only superusers and roles with the privileges of pg_read_server_files may import from a file."),
					 errhint("Anyone can give the document itself with OPTIONS (spec_json '...').")));
		if (!is_absolute_path(file))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("invalid value for option \"spec_file\": \"%s\"", file),
					 errdetail("The path must be absolute.")));
		f = AllocateFile(file, PG_BINARY_R);
		if (f == NULL || fstat(fileno(f), &st) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\" for reading: %m", file)));
		if (st.st_size > MAX_SPEC_BYTES)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("file \"%s\" is too large for an OpenAPI import", file),
					 errdetail("The limit is %d bytes.", MAX_SPEC_BYTES)));
		json = palloc(st.st_size + 1);
		n = fread(json, 1, st.st_size, f);
		json[n] = '\0';
		FreeFile(f);
		pg_verify_mbstr(GetDatabaseEncoding(), json, n, false);
	}
	return json;
}

/*
 * The endpoint option: "GET " and the path, each {name} replaced by the
 * name of its column ({orderId} is {order_id}).  The names in braces never
 * reach the service, and the engine takes only a-z, 0-9 and _ in them; a
 * path column then needs no param_name.
 */
static char *
endpoint(OaTable *t)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "GET ");
	for (const char *p = t->path; *p; p++)
	{
		const char *end = p[0] == '{' ? strchr(p, '}') : NULL;
		char	   *name;
		ListCell   *lc;

		if (end == NULL)
		{
			appendStringInfoChar(&buf, *p);
			continue;
		}
		name = pnstrdup(p + 1, end - p - 1);
		foreach(lc, t->columns)
		{
			OaColumn   *c = lfirst(lc);

			if (c->param && strcmp(c->param, "path") == 0 &&
				strcmp(c->param_name, name) == 0)
				name = c->name;
		}
		appendStringInfo(&buf, "{%s}", name);
		p = end;
	}
	return buf.data;
}

/* Creates one table and its comments through SPI. */
static void
create_table(OaTable *t, const char *schema, const char *server)
{
	const char *table = psprintf("%s.%s", schema, quote_identifier(t->name));
	StringInfoData buf;
	ListCell   *lc;
	bool		first = true;

	initStringInfo(&buf);
	appendStringInfo(&buf, "CREATE FOREIGN TABLE %s (", table);
	foreach(lc, t->columns)
	{
		OaColumn   *c = lfirst(lc);
		List	   *opts = NIL;
		ListCell   *lo;

		if (c->json_path && strcmp(c->json_path, c->name) != 0)
			opts = lappend(opts, psprintf("json_path %s", quote_literal_cstr(c->json_path)));
		if (c->param)
			opts = lappend(opts, psprintf("param '%s'", c->param));
		if (c->param && strcmp(c->param, "query") == 0 && strcmp(c->param_name, c->name) != 0)
			opts = lappend(opts, psprintf("param_name %s", quote_literal_cstr(c->param_name)));
		appendStringInfo(&buf, "%s%s %s", first ? "" : ", ", quote_identifier(c->name), c->type);
		foreach(lo, opts)
			appendStringInfo(&buf, "%s%s", lo == list_head(opts) ? " OPTIONS (" : ", ",
							 (char *) lfirst(lo));
		if (opts)
			appendStringInfoChar(&buf, ')');
		first = false;
	}
	appendStringInfo(&buf, ") SERVER %s OPTIONS (endpoint %s, items %s, paging '%s'",
					 quote_identifier(server), quote_literal_cstr(endpoint(t)),
					 quote_literal_cstr(t->items), t->paging);
	foreach(lc, t->paging_opts)
	{
		DefElem    *d = lfirst(lc);

		appendStringInfo(&buf, ", %s %s", d->defname, quote_literal_cstr(defGetString(d)));
	}
	appendStringInfoChar(&buf, ')');
	if (SPI_execute(buf.data, false, 0) < 0)
		elog(ERROR, "SPI_execute failed: %s", buf.data);

	if (SPI_execute(psprintf("COMMENT ON FOREIGN TABLE %s IS %s", table,
							 quote_literal_cstr(t->comment)), false, 0) < 0)
		elog(ERROR, "SPI_execute failed on a comment of %s", table);
	foreach(lc, t->columns)
	{
		OaColumn   *c = lfirst(lc);
		StringInfoData text;

		initStringInfo(&text);
		if (c->comment)
			appendStringInfoString(&text, c->comment);
		if (c->param)
			appendStringInfo(&text, "%s%s parameter \"%s\"%s.", text.len ? " " : "",
							 strcmp(c->param, "path") == 0 ? "Path" : "Query",
							 c->param_name,
							 strcmp(c->param, "path") == 0 ? ", required in every query" :
							 ": an equality is sent to the service");
		if (text.len == 0)
			continue;
		if (SPI_execute(psprintf("COMMENT ON COLUMN %s.%s IS %s", table,
								 quote_identifier(c->name), quote_literal_cstr(text.data)),
						false, 0) < 0)
			elog(ERROR, "SPI_execute failed on a comment of %s", table);
	}
}

/*
 * create_table in a subtransaction: a table whose options the validator
 * refuses (an HV error: a route the engine cannot use) is skipped with a
 * NOTICE that says why, and the import goes on; any other error (the table
 * exists, no privilege, a cancel) fails the import as CREATE would.
 */
static void
create_or_skip(OaTable *t, const char *schema, const char *server)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		create_table(t, schema, server);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (ERRCODE_TO_CATEGORY(edata->sqlerrcode) != ERRCODE_FDW_ERROR)
			ReThrowError(edata);
		ereport(NOTICE,
				(errmsg("skipped GET %s: %s", t->path, edata->message),
				 edata->detail ? errdetail_internal("%s", edata->detail) : 0));
	}
	PG_END_TRY();
}

/*
 * IMPORT FOREIGN SCHEMA openapi: the tables of the document's list GETs,
 * named from their paths (unique: a second table of the same name gets
 * "_2"), filtered by LIMIT TO and EXCEPT.  Creates them through SPI and
 * returns NIL, as psvc_fdw_import.  Allocates in CurrentMemoryContext.
 */
List *
psvc_fdw_import_openapi(ImportForeignSchemaStmt *stmt, Oid serverOid)
{
	const char *servername = GetForeignServer(serverOid)->servername;
	Jsonb	   *doc;
	JsonbContainer *root;
	List	   *taken = NIL;
	List	   *tables = NIL;
	ListCell   *lc;
	const char *schema = quote_identifier(stmt->local_schema);

	psvc_options_check_import(stmt->options, true);
	doc = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(read_spec(stmt->options))));
	root = &doc->root;
	if (!JsonContainerIsObject(root) || get(root, "openapi") == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the document is not an OpenAPI 3 document"),
				 errdetail("An OpenAPI document is a JSON object with the member \"openapi\".")));
	oa_doc = root;

	foreach(lc, members(as_object(get(root, "paths"))))
	{
		OaMember   *m = lfirst(lc);
		JsonbContainer *item = resolve(m->value, psprintf("path \"%s\"", m->key));
		JsonbContainer *op = as_object(get(item, "get"));
		OaTable    *t;

		if (m->key[0] != '/')
		{
			if (strncmp(m->key, "x-", 2) != 0)
				ereport(NOTICE,
						(errmsg("skipped \"%s\" of the paths: a path starts with \"/\"", m->key)));
			continue;
		}
		if (op == NULL || (t = build_table(m->key, item, op)) == NULL)
			continue;
		t->name = unique_name(snake_case(m->key), taken);
		taken = lappend(taken, t->name);
		tables = lappend(tables, t);
	}

	SPI_connect();
	foreach(lc, tables)
	{
		OaTable    *t = lfirst(lc);

		if (psvc_fdw_import_wanted(stmt, t->name))
			create_or_skip(t, schema, servername);
	}
	SPI_finish();
	oa_doc = NULL;
	return NIL;
}
