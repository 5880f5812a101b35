/*-------------------------------------------------------------------------
 *
 * fdw_modify.c
 *		  INSERT, UPDATE and DELETE on writable partner_svc foreign tables:
 *		  one request per row, as the endpoint catalogue describes.
 *
 * What a statement sends is data (PsvcModifyDef in endpoints.c): the
 * method and route of each operation, the member that identifies a row
 * (its value fills the route's {name}), and the body style.  A row becomes
 *	- a JSON object of its member columns (todos): on INSERT every non-NULL
 *	  column, on UPDATE exactly the columns the statement assigns (NULL as
 *	  null), under their JSON member names; or
 *	- a JSON string of its one column (notifications).
 * Numbers and booleans go as JSON numbers and booleans, json/jsonb as
 * they are, everything else as a JSON string of its text.  The key column
 * is assigned by the service: it cannot be inserted or updated, and "raw"
 * (the whole item) is read-only.  A value check of the catalogue (the
 * email format) runs before anything is sent.
 *
 * Rows to UPDATE or DELETE come from a scan of the table; the scan's key
 * column travels as a junk column ("psvc_key", added by
 * psvc_fdw_add_update_targets).  A 404 from PUT or DELETE means the row
 * went away at the service after it was read: an error naming the key.
 *
 * RETURNING shows the row as the service answered it (the created todo
 * with its id, the updated todo, the stored address); when the answer has
 * no body, the row as sent.  DELETE ... RETURNING shows the row as read:
 * for it we also ask for the whole-row junk column, as PostgreSQL itself
 * does for UPDATE.
 *
 * Retries: these requests change state, so http.c repeats them only when
 * nothing was done (429, no connection); any other failure is an error,
 * and one whose outcome is unknown says so.
 *
 * Memory: each row's body, request, response and decoded answer live in a
 * per-row context, reset before the next row; values stored in the slot
 * are materialized into the slot first.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw_modify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "foreign/foreign.h"
#include "nodes/makefuncs.h"
#include "optimizer/appendinfo.h"
#include "optimizer/inherit.h"
#include "optimizer/pathnode.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "partner_svc.h"

/* Names of our junk columns in the subplan of UPDATE and DELETE. */
#define KEY_JUNK		"psvc_key"
#define WHOLEROW_JUNK	"wholerow"

/* A column of the table and how it maps. */
typedef struct ModifyColumn
{
	AttrNumber	attno;
	const char *name;
	const PsvcColumnDef *def;
	Oid			typid;
	char		typcategory;
	FmgrInfo	out;
	FmgrInfo	in;
	Oid			ioparam;
	int32		typmod;
	int			field;			/* index in fields[] of the answer, or -1 */
} ModifyColumn;

typedef struct PsvcModifyState
{
	Relation	rel;
	const PsvcEndpoint *ep;
	const PsvcModifyDef *md;
	PsvcServer *server;
	CmdType		op;
	const PsvcRequestDef *rd;	/* the request of op */
	const char *route_param;	/* the {name} of rd->route, or NULL */
	int			ncols;
	ModifyColumn *cols;			/* every column that is not dropped */
	List	   *target_attrs;	/* attnums whose values are sent */
	ModifyColumn *key;			/* the key column, or NULL */
	AttrNumber	key_junk;		/* in the subplan's output, or 0 */
	AttrNumber	wholerow_junk;	/* in the subplan's output, or 0 */
	int			nfields;
	const char **fields;		/* members read from an answer */
	MemoryContext row_cxt;
} PsvcModifyState;

/* Error context: the row being written. */
typedef struct RowErrorArg
{
	PsvcModifyState *st;
	const char *key;			/* the key's text, or NULL */
} RowErrorArg;

static const char *
op_name(CmdType op)
{
	switch (op)
	{
		case CMD_INSERT:
			return "INSERT";
		case CMD_UPDATE:
			return "UPDATE";
		case CMD_DELETE:
			return "DELETE";
		default:
			return "?";
	}
}

static const PsvcRequestDef *
op_request(const PsvcModifyDef *md, CmdType op)
{
	if (md == NULL)
		return NULL;
	switch (op)
	{
		case CMD_INSERT:
			return md->insert.method ? &md->insert : NULL;
		case CMD_UPDATE:
			return md->update.method ? &md->update : NULL;
		case CMD_DELETE:
			return md->delete.method ? &md->delete : NULL;
		default:
			return NULL;
	}
}

static void
row_error_callback(void *arg)
{
	RowErrorArg *a = (RowErrorArg *) arg;

	if (a->key)
		errcontext("%s of the row with %s = %s of foreign table \"%s\"",
				   op_name(a->st->op), a->st->key->name, a->key,
				   RelationGetRelationName(a->st->rel));
	else
		errcontext("%s into foreign table \"%s\"", op_name(a->st->op),
				   RelationGetRelationName(a->st->rel));
}

/* The one {name} of a route, or NULL. */
static const char *
route_param(const char *route)
{
	const char *open = strchr(route, '{');
	const char *close = open ? strchr(open, '}') : NULL;

	return close ? pnstrdup(open + 1, close - open - 1) : NULL;
}

/* The column whose member identifies a row, or 0. */
static AttrNumber
key_attno(Relation rel, const PsvcEndpoint *ep)
{
	TupleDesc	desc = RelationGetDescr(rel);

	if (ep->modify == NULL || ep->modify->key_field == NULL)
		return InvalidAttrNumber;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		const PsvcColumnDef *def;

		if (att->attisdropped)
			continue;
		def = psvc_fdw_column_def(ep, RelationGetRelid(rel), att);
		if (def->kind == PSVC_COL_FIELD && def->field &&
			strcmp(def->field, ep->modify->key_field) == 0)
			return att->attnum;
	}
	return InvalidAttrNumber;
}

/*
 * AddForeignUpdateTargets: the key column as junk "psvc_key" for UPDATE
 * and DELETE, and for DELETE ... RETURNING the whole row as well.  Tables
 * that do not support the operation get nothing; the executor refuses
 * them (IsForeignRelUpdatable) in PostgreSQL's own words.
 */
void
psvc_fdw_add_update_targets(PlannerInfo *root, Index rtindex,
							RangeTblEntry *target_rte, Relation target_relation)
{
	const PsvcEndpoint *ep = psvc_fdw_endpoint(RelationGetRelid(target_relation), NULL);
	CmdType		op = root->parse->commandType;
	AttrNumber	attno;
	Form_pg_attribute att;
	Var		   *var;

	if (op_request(ep->modify, op) == NULL)
		return;
	attno = key_attno(target_relation, ep);
	if (attno == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_COLUMN_NAME_NOT_FOUND),
				 errmsg("foreign table \"%s\" has no column for member \"%s\", which identifies its rows",
						RelationGetRelationName(target_relation), ep->modify->key_field),
				 errhint("%s needs that column to name the row in the request.",
						 op_name(op))));
	att = TupleDescAttr(RelationGetDescr(target_relation), attno - 1);
	var = makeVar(rtindex, attno, att->atttypid, att->atttypmod, att->attcollation, 0);
	add_row_identity_var(root, var, rtindex, KEY_JUNK);

	if (op == CMD_DELETE && root->parse->returningList != NIL)
	{
		var = makeWholeRowVar(target_rte, rtindex, 0, false);
		add_row_identity_var(root, var, rtindex, WHOLEROW_JUNK);
	}
}

/*
 * PlanForeignModify: the attnums whose values are sent (INSERT: every
 * column, the NULL ones are skipped per row; UPDATE: the assigned ones).
 */
List *
psvc_fdw_plan_modify(PlannerInfo *root, ModifyTable *plan,
					 Index resultRelation, int subplan_index)
{
	RangeTblEntry *rte = planner_rt_fetch(resultRelation, root);
	List	   *attrs = NIL;

	if (plan->operation == CMD_INSERT)
	{
		Relation	rel = table_open(rte->relid, NoLock);
		TupleDesc	desc = RelationGetDescr(rel);

		for (int i = 0; i < desc->natts; i++)
			if (!TupleDescAttr(desc, i)->attisdropped)
				attrs = lappend_int(attrs, i + 1);
		table_close(rel, NoLock);
	}
	else if (plan->operation == CMD_UPDATE)
	{
		RelOptInfo *baserel = find_base_rel(root, resultRelation);
		Bitmapset  *cols = get_rel_all_updated_cols(root, baserel);
		int			x = -1;

		while ((x = bms_next_member(cols, x)) >= 0)
		{
			AttrNumber	attno = x + FirstLowInvalidHeapAttributeNumber;

			if (attno <= InvalidAttrNumber)
				elog(ERROR, "system-column update is not supported");
			attrs = lappend_int(attrs, attno);
		}
	}
	return list_make1(attrs);
}

/* The column of attno, or NULL. */
static ModifyColumn *
column_of(PsvcModifyState *st, AttrNumber attno)
{
	for (int i = 0; i < st->ncols; i++)
		if (st->cols[i].attno == attno)
			return &st->cols[i];
	return NULL;
}

/*
 * Raises unless the row's value of c may be sent: the key is assigned by
 * the service, and only member columns (not "raw") map to the body.
 */
static void
check_writable(PsvcModifyState *st, ModifyColumn *c)
{
	if (c == NULL || (c != st->key && c->def->kind == PSVC_COL_FIELD))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 st->op == CMD_INSERT ?
			 errmsg("cannot insert a value into column \"%s\" of foreign table \"%s\"",
					c->name, RelationGetRelationName(st->rel)) :
			 errmsg("cannot update column \"%s\" of foreign table \"%s\"",
					c->name, RelationGetRelationName(st->rel)),
			 c == st->key ?
			 errdetail("The service assigns it, and it identifies the row in requests.") :
			 errdetail("Only columns that map to a member of the item can be written.")));
}

/*
 * The state of one table's modification, in the current (query) context.
 * Resolves every column, checks that the columns to send may be sent.
 */
static PsvcModifyState *
create_state(Relation rel, CmdType op, List *target_attrs)
{
	PsvcModifyState *st = palloc0(sizeof(PsvcModifyState));
	TupleDesc	desc = RelationGetDescr(rel);
	AttrNumber	keyno;
	ListCell   *lc;

	st->rel = rel;
	st->op = op;
	st->ep = psvc_fdw_endpoint(RelationGetRelid(rel), &st->server);
	st->md = st->ep->modify;
	st->rd = op_request(st->md, op);
	if (st->rd == NULL)
		elog(ERROR, "foreign table \"%s\" does not support %s",
			 RelationGetRelationName(rel), op_name(op));
	st->route_param = route_param(st->rd->route);
	st->target_attrs = target_attrs;

	keyno = key_attno(rel, st->ep);
	st->cols = palloc0(sizeof(ModifyColumn) * Max(desc->natts, 1));
	st->fields = palloc0(sizeof(char *) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		ModifyColumn *c;
		Oid			func;
		bool		varlena;
		bool		preferred;

		if (att->attisdropped)
			continue;
		c = &st->cols[st->ncols++];
		c->attno = att->attnum;
		c->name = pstrdup(NameStr(att->attname));
		c->def = psvc_fdw_column_def(st->ep, RelationGetRelid(rel), att);
		c->typid = att->atttypid;
		c->typmod = att->atttypmod;
		get_type_category_preferred(c->typid, &c->typcategory, &preferred);
		getTypeOutputInfo(c->typid, &func, &varlena);
		fmgr_info(func, &c->out);
		getTypeInputInfo(c->typid, &func, &c->ioparam);
		fmgr_info(func, &c->in);
		c->field = -1;
		if (c->def->kind == PSVC_COL_FIELD && c->def->field)
		{
			for (int f = 0; f < st->nfields; f++)
				if (strcmp(st->fields[f], c->def->field) == 0)
					c->field = f;
			if (c->field < 0)
			{
				c->field = st->nfields;
				st->fields[st->nfields++] = c->def->field;
			}
		}
		if (att->attnum == keyno)
			st->key = c;
	}
	if (st->route_param != NULL && st->key == NULL)
		elog(ERROR, "foreign table \"%s\" has no key column for %s",
			 RelationGetRelationName(rel), st->rd->route);

	/* UPDATE: only member columns other than the key can be assigned */
	if (op == CMD_UPDATE)
		foreach(lc, target_attrs)
			check_writable(st, column_of(st, lfirst_int(lc)));

	st->row_cxt = AllocSetContextCreate(CurrentMemoryContext, "partner_svc modify row",
										ALLOCSET_DEFAULT_SIZES);
	return st;
}

/* BeginForeignModify */
void
psvc_fdw_begin_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
					  List *fdw_private, int subplan_index, int eflags)
{
	PsvcModifyState *st;

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	st = create_state(rinfo->ri_RelationDesc, mtstate->operation,
					  (List *) linitial(fdw_private));
	if (mtstate->operation == CMD_UPDATE || mtstate->operation == CMD_DELETE)
	{
		Plan	   *subplan = outerPlanState(mtstate)->plan;

		st->key_junk = ExecFindJunkAttributeInTlist(subplan->targetlist, KEY_JUNK);
		if (!AttributeNumberIsValid(st->key_junk))
			elog(ERROR, "could not find junk column \"%s\"", KEY_JUNK);
		st->wholerow_junk = ExecFindJunkAttributeInTlist(subplan->targetlist, WHOLEROW_JUNK);
	}
	rinfo->ri_FdwState = st;
}

/* BeginForeignInsert: COPY into the table, or a row routed to it. */
void
psvc_fdw_begin_insert(ModifyTableState *mtstate, ResultRelInfo *rinfo)
{
	TupleDesc	desc = RelationGetDescr(rinfo->ri_RelationDesc);
	List	   *attrs = NIL;

	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped)
			attrs = lappend_int(attrs, i + 1);
	rinfo->ri_FdwState = create_state(rinfo->ri_RelationDesc, CMD_INSERT, attrs);
}

/* Appends value d of column c as a JSON value. */
static void
append_json_value(StringInfo buf, ModifyColumn *c, Datum d)
{
	char	   *text = OutputFunctionCall(&c->out, d);

	if (c->typcategory == TYPCATEGORY_BOOLEAN)
		appendStringInfoString(buf, DatumGetBool(d) ? "true" : "false");
	else if (c->typcategory == TYPCATEGORY_NUMERIC &&
			 (isdigit((unsigned char) text[0]) ||
			  (text[0] == '-' && isdigit((unsigned char) text[1]))))
		appendStringInfoString(buf, text);	/* not NaN, Infinity, money */
	else if (c->typid == JSONBOID || c->typid == JSONOID)
		appendStringInfoString(buf, text);
	else
		escape_json(buf, text);
}

/*
 * Is s an email address as the scheduler accepts it: at most 254 bytes,
 * local@domain; the local part of letters, digits and
 * !#$%&'*+/=?^_`{|}~- with single dots inside; the domain two or more
 * labels of letters, digits and inner hyphens (1 to 63 bytes), the last
 * of two or more letters.
 */
static bool
is_email(const char *s)
{
	const char *at = strchr(s, '@');
	const char *p;
	const char *label;
	bool		last_alpha = true;
	int			labels = 0;

	if (strlen(s) > 254 || at == NULL || at == s || strchr(at + 1, '@') != NULL)
		return false;
	for (p = s; p < at; p++)
	{
		if (*p == '.')
		{
			if (p == s || p + 1 == at || p[1] == '.')
				return false;
		}
		else if (!(isascii((unsigned char) *p) && isalnum((unsigned char) *p)) &&
				 strchr("!#$%&'*+/=?^_`{|}~-", *p) == NULL)
			return false;
	}
	label = at + 1;
	for (p = label;; p++)
	{
		if (*p == '.' || *p == '\0')
		{
			int			len = p - label;

			if (len < 1 || len > 63 || label[0] == '-' || p[-1] == '-')
				return false;
			labels++;
			last_alpha = len >= 2;
			for (const char *q = label; q < p; q++)
				if (!(isascii((unsigned char) *q) && isalpha((unsigned char) *q)))
					last_alpha = false;
			if (*p == '\0')
				break;
			label = p + 1;
		}
		else if (!(isascii((unsigned char) *p) && isalnum((unsigned char) *p)) && *p != '-')
			return false;
	}
	return labels >= 2 && last_alpha;
}

/* Runs the catalogue's value check on column c's value text. */
static void
check_value(PsvcModifyState *st, ModifyColumn *c, const char *text)
{
	if (st->md->check == PSVC_CHECK_EMAIL && !is_email(text))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid email address \"%s\" for column \"%s\" of foreign table \"%s\"",
						text, c->name, RelationGetRelationName(st->rel)),
				 errdetail("An address is local@domain of at most 254 bytes: the local part of letters, digits and !#$%%&'*+/=?^_`{|}~- with single inner dots; the domain two or more labels of letters, digits and inner hyphens, the last one of two or more letters."),
				 errhint("Nothing was sent to the service.")));
}

/*
 * The body of a request for the row in slot (all attributes fetched):
 * see the file header.  NULL when the operation sends none (DELETE).
 * Raises for values that cannot be written.  CurrentMemoryContext.
 */
static StringInfo
build_body(PsvcModifyState *st, TupleTableSlot *slot)
{
	StringInfo	buf;
	ListCell   *lc;
	int			nsent = 0;
	const char **sent;

	if (st->op == CMD_DELETE)
		return NULL;
	buf = makeStringInfo();
	sent = palloc(sizeof(char *) * Max(st->ncols, 1));
	if (st->md->body == PSVC_BODY_OBJECT)
		appendStringInfoChar(buf, '{');

	foreach(lc, st->target_attrs)
	{
		AttrNumber	attno = lfirst_int(lc);
		ModifyColumn *c = column_of(st, attno);
		bool		isnull = slot->tts_isnull[attno - 1];
		Datum		d = slot->tts_values[attno - 1];
		bool		dup = false;

		/* INSERT: a NULL column is left out, so the service's default holds */
		if (c == NULL || (st->op == CMD_INSERT && isnull))
			continue;
		check_writable(st, c);

		if (!isnull && st->md->check != PSVC_CHECK_NONE && st->md->check_field &&
			strcmp(c->def->field, st->md->check_field) == 0)
			check_value(st, c, OutputFunctionCall(&c->out, d));

		if (st->md->body == PSVC_BODY_STRING)
		{
			if (c->def->field[0] != '\0')
				continue;
			escape_json(buf, OutputFunctionCall(&c->out, d));
			nsent++;
			continue;
		}

		for (int i = 0; i < nsent; i++)
			if (strcmp(sent[i], c->def->field) == 0)
				dup = true;
		if (dup)
			continue;
		if (nsent > 0)
			appendStringInfoChar(buf, ',');
		escape_json(buf, c->def->field);
		appendStringInfoChar(buf, ':');
		if (isnull)
			appendStringInfoString(buf, "null");
		else
			append_json_value(buf, c, d);
		sent[nsent++] = c->def->field;
	}

	if (st->md->body == PSVC_BODY_OBJECT)
		appendStringInfoChar(buf, '}');
	else if (nsent == 0)
	{
		ModifyColumn *c = NULL;

		for (int i = 0; i < st->ncols; i++)
			if (st->cols[i].def->kind == PSVC_COL_FIELD &&
				st->cols[i].def->field[0] == '\0')
				c = &st->cols[i];
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("null value in column \"%s\" of foreign table \"%s\" cannot be sent",
						c ? c->name : "?", RelationGetRelationName(st->rel)),
				 errdetail("The body of %s %s is the value of this column.",
						   st->rd->method, st->rd->route)));
	}
	return buf;
}

/*
 * Replaces the row in slot by the service's answer, if it has one: each
 * member column from its member (absent: NULL), "raw" from the whole
 * item.  Materializes the slot, so the row outlives the per-row context.
 */
static void
store_answer(PsvcModifyState *st, TupleTableSlot *slot, PsvcHttpResponse *resp)
{
	PsvcPage   *page;
	PsvcItem   *it;
	size_t		i = 0;

	while (i < resp->body_len && isspace((unsigned char) resp->body[i]))
		i++;
	if (i == resp->body_len)
	{
		ExecMaterializeSlot(slot);
		return;
	}
	page = psvc_json_decode_page(resp->body, resp->body_len, NULL, true,
								 st->nfields, st->fields,
								 psprintf("%s %s", st->rd->method, st->rd->route));
	if (page->nitems == 0)
	{
		ExecMaterializeSlot(slot);
		return;
	}
	it = &page->items[0];

	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (int c = 0; c < st->ncols; c++)
	{
		ModifyColumn *col = &st->cols[c];
		char	   *text = NULL;

		if (col->def->kind == PSVC_COL_RAW)
			text = pnstrdup(it->json, it->json_len);
		else if (col->field >= 0)
			text = it->values[col->field];
		if (text == NULL)
			continue;
		slot->tts_values[col->attno - 1] = InputFunctionCall(&col->in, text,
															 col->ioparam, col->typmod);
		slot->tts_isnull[col->attno - 1] = false;
	}
	ExecStoreVirtualTuple(slot);
	ExecMaterializeSlot(slot);
}

/*
 * Sends the request for one row and puts the answer into slot.  planSlot
 * gives the key (UPDATE, DELETE) and, for DELETE ... RETURNING, the row.
 */
static TupleTableSlot *
modify_row(PsvcModifyState *st, TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	MemoryContext old;
	PsvcHttpRequest req = {0};
	PsvcHttpResponse *resp;
	StringInfo	body;
	ErrorContextCallback errcb;
	RowErrorArg arg = {st, NULL};

	MemoryContextReset(st->row_cxt);
	old = MemoryContextSwitchTo(st->row_cxt);

	if (st->route_param != NULL)
	{
		bool		isnull;
		Datum		d = ExecGetJunkAttribute(planSlot, st->key_junk, &isnull);

		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("cannot %s a row of foreign table \"%s\" whose \"%s\" is null",
							st->op == CMD_DELETE ? "delete" : "update",
							RelationGetRelationName(st->rel), st->key->name)));
		arg.key = OutputFunctionCall(&st->key->out, d);
		req.path_params = list_make1(psvc_kv(st->route_param, arg.key));
	}

	errcb.callback = row_error_callback;
	errcb.arg = &arg;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	if (st->op == CMD_DELETE && AttributeNumberIsValid(st->wholerow_junk))
	{
		bool		isnull;
		Datum		d = ExecGetJunkAttribute(planSlot, st->wholerow_junk, &isnull);

		if (!isnull)
		{
			HeapTupleHeader td = DatumGetHeapTupleHeader(d);
			HeapTupleData tup;

			tup.t_len = HeapTupleHeaderGetDatumLength(td);
			ItemPointerSetInvalid(&tup.t_self);
			tup.t_tableOid = RelationGetRelid(st->rel);
			tup.t_data = td;
			ExecForceStoreHeapTuple(&tup, slot, false);
		}
	}
	if (st->op != CMD_DELETE)
		slot_getallattrs(slot);

	body = build_body(st, slot);
	req.server = st->server;
	req.method = st->rd->method;
	req.route = st->rd->route;
	if (body != NULL)
	{
		req.body = body->data;
		req.body_len = body->len;
		req.content_type = "application/json";
	}
	req.return_errors = true;
	resp = psvc_http_request(&req);

	if (resp->status == 404 && arg.key != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("row with %s = %s of foreign table \"%s\" does not exist at the service",
						st->key->name, arg.key, RelationGetRelationName(st->rel)),
				 errdetail("%s %s answered HTTP status 404: the row was read, then removed at the service before the %s.",
						   req.method, req.route, op_name(st->op))));
	if (resp->status < 200 || resp->status > 299)
		psvc_http_raise(&req, resp);

	if (st->op == CMD_DELETE)
	{
		if (!TTS_EMPTY(slot))
			ExecMaterializeSlot(slot);
	}
	else
		store_answer(st, slot, resp);

	error_context_stack = errcb.previous;
	MemoryContextSwitchTo(old);
	return slot;
}

/*
 * ExecForeignInsert, ExecForeignUpdate and ExecForeignDelete (one
 * function: the state knows the operation).
 */
TupleTableSlot *
psvc_fdw_exec_row(EState *estate, ResultRelInfo *rinfo,
				  TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	return modify_row(rinfo->ri_FdwState, slot, planSlot);
}

/* EndForeignModify and EndForeignInsert: frees the per-row context. */
void
psvc_fdw_end_modify(EState *estate, ResultRelInfo *rinfo)
{
	PsvcModifyState *st = rinfo->ri_FdwState;

	if (st == NULL)
		return;
	MemoryContextDelete(st->row_cxt);
	rinfo->ri_FdwState = NULL;
}

/*
 * IsForeignRelUpdatable: the operations the table's endpoint supports.
 * Must not raise for a table with a bad resource: information_schema
 * calls it for every foreign table.
 */
int
psvc_fdw_updatable(Relation rel)
{
	ForeignTable *ft = GetForeignTable(RelationGetRelid(rel));
	const PsvcEndpoint *ep = NULL;
	ListCell   *lc;
	int			mask = 0;

	foreach(lc, ft->options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (strcmp(d->defname, "resource") == 0)
			ep = psvc_endpoint_find(defGetString(d));
	}
	if (ep == NULL || ep->modify == NULL)
		return 0;
	if (ep->modify->insert.method)
		mask |= (1 << CMD_INSERT);
	if (ep->modify->update.method)
		mask |= (1 << CMD_UPDATE);
	if (ep->modify->delete.method)
		mask |= (1 << CMD_DELETE);
	return mask;
}

/* ExplainForeignModify: the request each row becomes. */
void
psvc_fdw_explain_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
						List *fdw_private, int subplan_index, ExplainState *es)
{
	const PsvcEndpoint *ep = psvc_fdw_endpoint(RelationGetRelid(rinfo->ri_RelationDesc), NULL);
	const PsvcRequestDef *rd = op_request(ep->modify, mtstate->operation);

	if (rd != NULL)
		ExplainPropertyText("Partner Request",
							psprintf("%s %s", rd->method, rd->route), es);
}
