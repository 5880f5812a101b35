/*-------------------------------------------------------------------------
 *
 * fdw_modify.c
 *		  INSERT, UPDATE and DELETE on writable partner_svc foreign tables:
 *		  one request per row, as the endpoint catalogue describes: the
 *		  executor's callbacks.  The row's body and the row made from the
 *		  answer are built in fdw_modify_row.c.
 *
 * What a statement sends is data (PsvcModifyDef in endpoints.c): the
 * operation of catalog.c of each statement, the member that identifies a row
 * (its value fills the route's {name}), and the body style; how a row
 * becomes a body, and an answer a row, is in fdw_modify_row.c.
 *
 * Rows to UPDATE or DELETE come from a scan of the table; the scan's key
 * column travels as a junk column ("psvc_key", added by
 * psvc_fdw_add_update_targets).  A 404 from PUT or DELETE means the row
 * went away at the service after it was read: an error naming the key.
 *
 * RETURNING shows the row as the service answered it (fdw_modify_row.c);
 * DELETE ... RETURNING shows the row as read: for it we also ask for the
 * whole-row junk column, as PostgreSQL itself does for UPDATE.
 *
 * Retries: these requests change state (their rows are not safe), so the
 * call module repeats them only when nothing was done (429, no
 * connection); any other failure is an error, and one whose outcome is
 * unknown says so.
 *
 * Memory: each row's body, request, response and decoded answer live in a
 * per-row context, reset before the next row; values stored in the slot
 * are materialized into the slot first.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_modify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "optimizer/appendinfo.h"
#include "optimizer/inherit.h"
#include "optimizer/pathnode.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "fdw_modify_int.h"
#include "options.h"
#include "pg_compat.h"
#include "xact_writes.h"

/* Names of our junk columns in the subplan of UPDATE and DELETE. */
#define KEY_JUNK		"psvc_key"
#define WHOLEROW_JUNK	"wholerow"

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

static const PsvcOperation *
op_request(const PsvcModifyDef *md, CmdType op)
{
	if (md == NULL)
		return NULL;
	switch (op)
	{
		case CMD_INSERT:
			return md->insert;
		case CMD_UPDATE:
			return md->update;
		case CMD_DELETE:
			return md->delete;
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
 * attrs, and when the table has a BEFORE ROW UPDATE trigger, every other
 * column an UPDATE can write: not dropped, a member column, not the key.
 * Allocates in CurrentMemoryContext.
 */
static List *
add_trigger_columns(Oid relid, List *attrs)
{
	Relation	rel = table_open(relid, NoLock);
	TupleDesc	desc = RelationGetDescr(rel);

	if (rel->trigdesc && rel->trigdesc->trig_update_before_row)
	{
		const PsvcEndpoint *ep = psvc_fdw_endpoint(relid, NULL);
		AttrNumber	keyno = key_attno(rel, ep);

		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);
			const PsvcColumnDef *def;

			if (att->attisdropped || att->attnum == keyno ||
				list_member_int(attrs, att->attnum))
				continue;
			def = psvc_fdw_column_def(ep, relid, att);
			if (def->kind == PSVC_COL_FIELD && def->field != NULL)
				attrs = lappend_int(attrs, att->attnum);
		}
	}
	table_close(rel, NoLock);
	return attrs;
}

/*
 * PlanForeignModify: the attnums whose values are sent (INSERT: every
 * column, the NULL ones are skipped per row; UPDATE: the assigned ones).
 * A BEFORE ROW UPDATE trigger may change any column, so with one an
 * UPDATE also sends every other column it can write (the member columns
 * but the key), as postgres_fdw sends every column then; the key and raw
 * are still refused when the statement assigns them.
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
		attrs = add_trigger_columns(rte->relid, attrs);
	}
	return list_make1(attrs);
}

/*
 * The state of one table's modification, in the current (query) context.
 * Resolves every column, checks that the columns to send may be sent.
 */
static PsvcModifyState *
create_state(EState *estate, ResultRelInfo *rinfo, CmdType op, List *target_attrs)
{
	Relation	rel = rinfo->ri_RelationDesc;
	PsvcModifyState *st = palloc0(sizeof(PsvcModifyState));
	TupleDesc	desc = RelationGetDescr(rel);
	AttrNumber	keyno;
	ListCell   *lc;

	st->rel = rel;
	st->op = op;
	st->ep = psvc_fdw_endpoint(RelationGetRelid(rel), &st->server);

	/*
	 * The key is that of the role the table is checked as (the view owner
	 * through a view), as for scans; a partition reached by tuple routing
	 * is checked as its root.
	 */
	st->server->userid = psvc_modify_user(rinfo, estate);
	st->md = st->ep->modify;
	st->rd = op_request(st->md, op);
	if (st->rd == NULL)
		elog(ERROR, "foreign table \"%s\" does not support %s",
			 RelationGetRelationName(rel), op_name(op));
	/* the operation's one path parameter takes the row's key */
	st->route_param = st->rd->params[0] ? st->rd->params[0]->name : NULL;
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
		c->field = psvc_fdw_field_index(c->def, st->fields, &st->nfields);
		if (att->attnum == keyno)
			st->key = c;
	}
	if (st->route_param != NULL && st->key == NULL)
		elog(ERROR, "foreign table \"%s\" has no key column for %s",
			 RelationGetRelationName(rel), st->rd->route);

	/* UPDATE: only member columns other than the key can be assigned */
	if (op == CMD_UPDATE)
		foreach(lc, target_attrs)
			psvc_fdw_modify_check_writable(st, psvc_fdw_modify_column(st, lfirst_int(lc)));

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
	st = create_state(mtstate->ps.state, rinfo, mtstate->operation,
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
	rinfo->ri_FdwState = create_state(mtstate->ps.state, rinfo, CMD_INSERT, attrs);
}

/*
 * Sends the request for one row and puts the answer into slot.  planSlot
 * gives the key (UPDATE, DELETE) and, for DELETE ... RETURNING, the row.
 */
static TupleTableSlot *
modify_row(PsvcModifyState *st, TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	MemoryContext old;
	PsvcCall   *call;
	PsvcResult *res;
	StringInfo	body;
	ErrorContextCallback errcb;
	RowErrorArg arg = {st, NULL};

	MemoryContextReset(st->row_cxt);
	old = MemoryContextSwitchTo(st->row_cxt);
	call = psvc_call_make(st->rd, st->server, NULL);

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
		psvc_call_set_path(call, st->route_param, arg.key);
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

	body = psvc_fdw_modify_body(st, slot);
	if (body != NULL)
		psvc_call_set_body(call, body->data, body->len);
	psvc_xact_set_writer("foreign table \"%s\"", RelationGetRelationName(st->rel));
	res = psvc_call_run(call);

	if (res->kind == PSVC_CALL_HTTP_ERROR && res->status == 404 && arg.key != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("row with %s = %s of foreign table \"%s\" does not exist at the service",
						st->key->name, arg.key, RelationGetRelationName(st->rel)),
				 errdetail("%s %s answered HTTP status 404: the row was read, then removed at the service before the %s.",
						   st->rd->method, st->rd->route, op_name(st->op))));
	if (res->kind != PSVC_CALL_OK)
		psvc_call_raise(call, res);

	if (st->op == CMD_DELETE)
	{
		if (!TTS_EMPTY(slot))
			ExecMaterializeSlot(slot);
	}
	else
		psvc_fdw_modify_store_answer(st, slot, res);

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
		/* a declared route: its write options, checked when it is planned */
		else if (strcmp(d->defname, "insert") == 0)
			mask |= (1 << CMD_INSERT);
		else if (strcmp(d->defname, "update") == 0)
			mask |= (1 << CMD_UPDATE);
		else if (strcmp(d->defname, "delete") == 0)
			mask |= (1 << CMD_DELETE);
	}
	if (psvc_fdw_is_declared(ft))
		return mask;
	if (ep == NULL || ep->modify == NULL)
		return 0;
	if (ep->modify->insert)
		mask |= (1 << CMD_INSERT);
	if (ep->modify->update)
		mask |= (1 << CMD_UPDATE);
	if (ep->modify->delete)
		mask |= (1 << CMD_DELETE);
	return mask;
}

/* ExplainForeignModify: the request each row becomes. */
void
psvc_fdw_explain_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
						List *fdw_private, int subplan_index, ExplainState *es)
{
	const PsvcEndpoint *ep = psvc_fdw_endpoint(RelationGetRelid(rinfo->ri_RelationDesc), NULL);
	const PsvcOperation *rd = op_request(ep->modify, mtstate->operation);

	if (rd != NULL)
		ExplainPropertyText("Partner Request",
							psprintf("%s %s", rd->method, rd->route), es);
}
