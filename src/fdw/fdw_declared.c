/*-------------------------------------------------------------------------
 *
 * fdw_declared.c
 *		  The endpoint of a foreign table over a route declared in SQL
 *		  (table option "endpoint", docs/declared-endpoints.md): a
 *		  PsvcEndpoint and its operations built at run time from the
 *		  table's and its columns' options, so that the one scan and
 *		  modify engine serves it as it serves a row of endpoints.c.
 *
 * Nothing here scans: the endpoint is data, and a declared paging style
 * is the operation's paging kind and its parameters (PsvcPager, read by
 * fdw_scan_page.c).  What the validator cannot check, since it sees
 * neither a table's server nor a column's table, is checked here: every
 * {name} of the route a column with param 'path', every such column a
 * {name} of the route, the key column of update and delete.
 *
 * Memory: an endpoint is built once per relation and kept in a context of
 * its own under CacheMemoryContext until an invalidation of the relation,
 * of pg_foreign_table or pg_attribute, or a change of servers' options
 * (psvc_options_epoch); an endpoint replaced so is moved under
 * TopTransactionContext, since a scan of this transaction may still point
 * into it, and goes with the transaction.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_declared.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "fdw.h"
#include "options.h"

/* the most characters of a declared {name}'s value */
#define DECL_MAX_PARAM 1000

typedef struct DeclEntry
{
	Oid			relid;			/* hash key */
	bool		valid;
	uint64		epoch;			/* psvc_options_epoch() when built */
	MemoryContext cxt;
	const PsvcEndpoint *ep;
} DeclEntry;

static HTAB *decl_cache = NULL;

static const char *const route_methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", NULL};

/* An invalidation of relid (InvalidOid: every relation). */
static void
decl_invalidate_rel(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS seq;
	DeclEntry  *e;

	hash_seq_init(&seq, decl_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (relid == InvalidOid || e->relid == relid)
			e->valid = false;
}

static void
decl_invalidate_all(Datum arg, int cacheid, uint32 hashvalue)
{
	decl_invalidate_rel(arg, InvalidOid);
}

/*
 * An operation of method and route on service, its path parameters the
 * names.  CurrentMemoryContext.
 */
static PsvcOperation *
decl_operation(int service, const char *relname, const char *spec, const char *option)
{
	PsvcOperation *op = palloc(sizeof(PsvcOperation));
	char	   *method;
	char	   *route;
	char	   *names[PSVC_MAX_PATH_PARAMS];
	int			n;
	const char *why = psvc_declared_parse_route(spec, route_methods, &method,
												&route, names, &n);

	/* the validator refused it; an older stored value may still be here */
	if (why != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("option \"%s\" of foreign table \"%s\" is not a route: \"%s\"",
						option, relname, spec),
				 errdetail("The route cannot be used: %s.", why)));
	psvc_op_init_custom(op, service, method, route);
	op->name = pstrdup(relname);
	op->description = psprintf("%s %s (declared)", method, route);
	for (int i = 0; i < n; i++)
	{
		PsvcParamDef *def = palloc0(sizeof(PsvcParamDef));

		def->name = names[i];
		def->kind = PSVC_PARAM_TEXT;
		def->max_chars = DECL_MAX_PARAM;
		def->doc = "1 to 1000 characters";
		op->params[i] = def;
	}
	return op;
}

/* The column of a table's definition for attribute att. */
static void
decl_column(PsvcColumnDef *c, Oid relid, Form_pg_attribute att)
{
	List	   *opts = GetForeignColumnOptions(relid, att->attnum);
	const char *raw = psvc_options_text(opts, "raw");
	const char *param = psvc_options_text(opts, "param");
	const char *param_name = psvc_options_text(opts, "param_name");
	const char *path = psvc_options_text(opts, "json_path");
	bool		is_raw = false;

	if (path == NULL)
		path = psvc_options_text(opts, "field");
	if (raw != NULL)
		(void) parse_bool(raw, &is_raw);
	else if (strcmp(NameStr(att->attname), "raw") == 0 && param == NULL &&
			 path == NULL && att->atttypid == JSONBOID)
		is_raw = true;			/* the column named raw, as the catalogue's */

	c->name = pstrdup(NameStr(att->attname));
	c->type = format_type_be(att->atttypid);
	if (is_raw)
		c->kind = PSVC_COL_RAW;
	else if (param != NULL && strcmp(param, "path") == 0)
	{
		c->kind = PSVC_COL_PATH;
		c->param = pstrdup(param_name ? param_name : c->name);
		c->required = true;
	}
	else
	{
		c->kind = PSVC_COL_FIELD;
		c->field = pstrdup(path ? path : c->name);
		if (param != NULL)
			c->param = pstrdup(param_name ? param_name : c->name);
	}
}

/* The paging parameters of a table's options; NULL for the defaults' none. */
static PsvcPager *
decl_pager(List *o, PsvcPaging paging)
{
	PsvcPager  *pg = palloc0(sizeof(PsvcPager));
	const char *v;

	pg->limit_param = pstrdup((v = psvc_options_text(o, "limit_param")) ? v : "limit");
	if (pg->limit_param[0] == '\0' || paging == PSVC_PAGING_NONE)
		pg->limit_param = NULL;
	if ((v = psvc_options_text(o, "page_size")) != NULL)
		pg->page_size = pg_strtoint32(v);
	pg->cursor_path = pstrdup((v = psvc_options_text(o, "cursor_path")) ? v : "pagination.next_cursor");
	pg->cursor_param = pstrdup((v = psvc_options_text(o, "cursor_param")) ? v : "cursor");
	pg->next_path = pstrdup((v = psvc_options_text(o, "next_path")) ? v : "next");
	pg->offset_param = pstrdup((v = psvc_options_text(o, "offset_param")) ? v : "offset");
	pg->page_param = pstrdup((v = psvc_options_text(o, "page_param")) ? v : "page");
	return pg;
}

/*
 * The key column of an update or delete route: the column named by its
 * one {name}, a member of the item.
 */
static const char *
decl_key_field(const PsvcEndpoint *ep, const PsvcOperation *op, const char *option,
			   const char *relname)
{
	const PsvcColumnDef *col;

	if (op->params[0] == NULL || op->params[1] != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("option \"%s\" of foreign table \"%s\" must name exactly one {name}", option, relname),
				 errdetail("The row's key fills the one {name} of route \"%s\".", op->route),
				 errhint("Write it as '%s /items/{id}', {id} a column of the table.", op->method)));
	col = psvc_endpoint_column(ep, op->params[0]->name);
	if (col == NULL || col->kind != PSVC_COL_FIELD)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_COLUMN_NAME_NOT_FOUND),
				 errmsg("{%s} of option \"%s\" of foreign table \"%s\" is not a column of the item",
						op->params[0]->name, option, relname),
				 errhint("The key of %s is the value of the column named \"%s\", a member of the item.",
						 option, op->params[0]->name)));
	return col->field;
}

/* The modify definition of the table, or NULL when it has no write routes. */
static PsvcModifyDef *
decl_modify(const PsvcEndpoint *ep, List *o, int service, const char *relname)
{
	PsvcModifyDef *m = palloc0(sizeof(PsvcModifyDef));
	const char *v;

	if ((v = psvc_options_text(o, "insert")) != NULL)
	{
		m->insert = decl_operation(service, relname, v, "insert");
		if (m->insert->params[0] != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("option \"insert\" of foreign table \"%s\" names {%s}",
							relname, m->insert->params[0]->name),
					 errdetail("An insert route takes no {name}: the new row is its body.")));
	}
	if ((v = psvc_options_text(o, "update")) != NULL)
	{
		m->update = decl_operation(service, relname, v, "update");
		m->key_field = decl_key_field(ep, m->update, "update", relname);
	}
	if ((v = psvc_options_text(o, "delete")) != NULL)
	{
		const char *key;

		m->delete = decl_operation(service, relname, v, "delete");
		key = decl_key_field(ep, m->delete, "delete", relname);
		if (m->key_field != NULL && strcmp(key, m->key_field) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("options \"update\" and \"delete\" of foreign table \"%s\" name different keys",
							relname)));
		m->key_field = key;
	}
	if (m->insert == NULL && m->update == NULL && m->delete == NULL)
		return NULL;
	if (m->key_field == NULL)
	{
		/* an insert-only table: a member "id" is the key, if there is one */
		const PsvcColumnDef *id = psvc_endpoint_column(ep, "id");

		if (id != NULL && id->kind == PSVC_COL_FIELD)
			m->key_field = id->field;
	}
	m->body = PSVC_BODY_OBJECT;
	return m;
}

/*
 * The endpoint of declared table rel on server srv, built in
 * CurrentMemoryContext.
 */
static PsvcEndpoint *
decl_build(const ForeignTable *ft, const PsvcServer *srv, Relation rel)
{
	PsvcEndpoint *ep = palloc0(sizeof(PsvcEndpoint));
	const char *relname = RelationGetRelationName(rel);
	TupleDesc	desc = RelationGetDescr(rel);
	int			service = psvc_service_find(srv->service);
	PsvcOperation *list;
	PsvcColumnDef *cols;
	const char *v;
	int			n = 0;

	list = decl_operation(service, relname, psvc_options_text(ft->options, "endpoint"),
						  "endpoint");
	v = psvc_options_text(ft->options, "paging");
	list->paging = v ? psvc_paging_find(v) : PSVC_PAGING_NONE;
	if ((int) list->paging < 0)
		list->paging = PSVC_PAGING_NONE;
	list->pager = decl_pager(ft->options, list->paging);
	ep->list = list;
	ep->declared = true;
	ep->resource = pstrdup(relname);
	ep->description = list->description;
	v = psvc_options_text(ft->options, "items");
	ep->items_key = v != NULL && v[0] != '\0' ? pstrdup(v) : NULL;

	cols = palloc0(sizeof(PsvcColumnDef) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped)
			decl_column(&cols[n++], ft->relid, att);
	}
	ep->columns = cols;
	ep->ncolumns = n;

	/* each {name} a path column, each path column a {name} */
	for (int i = 0; i < PSVC_MAX_PATH_PARAMS && list->params[i]; i++)
	{
		bool		found = false;

		for (int c = 0; c < n; c++)
			if (cols[c].kind == PSVC_COL_PATH && strcmp(cols[c].param, list->params[i]->name) == 0)
				found = true;
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_COLUMN_NAME_NOT_FOUND),
					 errmsg("foreign table \"%s\" has no column for {%s} of its endpoint",
							relname, list->params[i]->name),
					 errdetail("The route is \"%s\".", list->route),
					 errhint("Add a column with OPTIONS (param 'path') named \"%s\", or give one param_name '%s'.",
							 list->params[i]->name, list->params[i]->name)));
	}
	for (int c = 0; c < n; c++)
		if (cols[c].kind == PSVC_COL_PATH &&
			psvc_op_param(list, cols[c].param, strlen(cols[c].param)) == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("column \"%s\" of foreign table \"%s\" is a path parameter its endpoint does not name",
							cols[c].name, relname),
					 errdetail("The route \"%s\" has no {%s}.", list->route, cols[c].param)));
	ep->modify = decl_modify(ep, ft->options, service, relname);
	return ep;
}

bool
psvc_fdw_is_declared(const ForeignTable *ft)
{
	return psvc_options_text(ft->options, "endpoint") != NULL;
}

const PsvcEndpoint *
psvc_fdw_declared_endpoint(const ForeignTable *ft, const PsvcServer *srv)
{
	DeclEntry  *e;
	bool		found;
	MemoryContext old;
	Relation	rel;

	if (decl_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(DeclEntry);
		ctl.hcxt = CacheMemoryContext;
		decl_cache = hash_create("partner_svc declared endpoints", 16, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		CacheRegisterRelcacheCallback(decl_invalidate_rel, (Datum) 0);
		CacheRegisterSyscacheCallback(FOREIGNTABLEREL, decl_invalidate_all, (Datum) 0);
		CacheRegisterSyscacheCallback(ATTNUM, decl_invalidate_all, (Datum) 0);
	}
	e = hash_search(decl_cache, &ft->relid, HASH_ENTER, &found);
	if (found && e->valid && e->epoch == psvc_options_epoch())
		return e->ep;
	if (found && e->cxt != NULL)
	{
		/* a scan of this transaction may still read it */
		MemoryContextSetParent(e->cxt, TopTransactionContext);
	}
	e->cxt = NULL;
	e->valid = false;
	e->cxt = AllocSetContextCreate(CacheMemoryContext, "partner_svc declared endpoint",
								   ALLOCSET_SMALL_SIZES);
	rel = relation_open(ft->relid, NoLock);
	old = CurrentMemoryContext;
	PG_TRY();
	{
		MemoryContextSwitchTo(e->cxt);
		e->ep = decl_build(ft, srv, rel);
		MemoryContextSwitchTo(old);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		relation_close(rel, NoLock);
		MemoryContextSetParent(e->cxt, TopTransactionContext);
		e->cxt = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
	relation_close(rel, NoLock);
	e->epoch = psvc_options_epoch();
	e->valid = true;
	return e->ep;
}
