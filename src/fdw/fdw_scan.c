/*-------------------------------------------------------------------------
 *
 * fdw_scan.c
 *		  Executing scans of partner_svc foreign tables: one generic engine
 *		  that walks any endpoint of the catalogue, page by page, as the
 *		  executor asks for rows.  This file holds the executor callbacks,
 *		  those of a scan an Append runs asynchronously included, the
 *		  streams a scan fans out to, and the rows built from a page; the
 *		  values come from fdw_scan_values.c, a stream's pages from
 *		  fdw_scan_page.c, EXPLAIN is fdw_explain.c (shared state:
 *		  fdw_scan_int.h).
 *
 * A scan is a list of streams, one per value of the fanned-out path
 * parameter (movie = ANY(...)), or one; with arrays on two path
 * parameters (type = ANY(...) AND collection = ANY(...)), one per pair
 * of values (fdw_scan_values.c).  Each stream walks its cursor pages
 * (fdw_scan_page.c).  Up to partner_svc.fanout streams fetch their first
 * page at once, and while the executor consumes a page the stream's next
 * page is already in flight (partner_svc.prefetch).  A scan an Append runs
 * asynchronously (option async_capable, below) never waits here:
 * where its next row needs a page still in flight, the iterate callback
 * returns no row and says so (would_block), and the Append waits for the
 * page with its other subplans.
 *
 * Memory: the scan's state lives in the per-scan context, what one run
 * of it makes (values, streams, cursors) in the run context, reset by a
 * rescan; each transfer in a context of its own, kept while the page
 * decoded from its response is current; decoded items and the row values
 * built from them in the per-page context, reset, and the response
 * deleted, before the next page is decoded (fdw_scan_page.c).  So a scan
 * of any length holds at most a page in decoding plus the transfers in
 * flight.
 *
 * Rows are rechecked: the pushed-down conditions on member columns (the
 * plan's fdw_recheck_quals, fdw_plan.c) are evaluated on each row before
 * it is returned or counted against a pushed LIMIT, so a service that
 * ignores a filter, or a detail read that answers for another identifier,
 * only costs the rows it should not have sent; a stream fanned out over a
 * filter of documented values keeps only the rows of its own value
 * (stream_holds), so such a service cannot make a row come twice.  A
 * filter column the items do not carry takes the value the query asked
 * for (echo), except where the catalogue names a member that must hold it
 * (genre in genres).
 *
 * The API key is the user mapping of the role PostgreSQL checks the
 * table's permissions as (the view owner through a view), as postgres_fdw
 * does; a missing mapping is an error before any request (the call
 * module).
 *
 * Asynchronous scans (PostgreSQL's asynchronous execution, nodeAppend.c
 * and execAsync.c), so that the scans of a UNION ALL, of a view over
 * several services or of a table partitioned over foreign tables have
 * their requests in flight together.
 *
 * The planner makes a scan asynchronous when its table, or else its
 * server, has the option async_capable and it is a subplan of an Append
 * (psvc_fdw_async_capable, fdw_plan.c).  The Append then asks each such
 * scan for a row (ForeignAsyncRequest) instead of calling it in turn; a
 * scan that cannot answer without waiting says so, and the Append waits
 * for all of them at once (ForeignAsyncConfigureWait) and tells a scan
 * when it may go on (ForeignAsyncNotify).
 *
 * Our scans never wait for anything but their pages, and every transfer
 * of the backend runs in one libcurl multi handle (src/call/http_wait.c).
 * A row is taken by running the scan node itself (its iterate callback,
 * above, then the node's local conditions and projection), which in
 * asynchronous mode returns no row rather than wait for a page still in
 * flight (would_block).  The first request of each scan starts its first
 * pages, so the Append's first round sends every scan's first requests
 * before any answer is read; each page asks for the next as before
 * (prefetch), and rows are produced as pages arrive, from whichever scan
 * has one.
 *
 * Waiting.  The call module gives one descriptor for all the backend's
 * transfers (psvc_call_event_fd, src/call/http_wait.c): it polls
 * readable when curl has something to do or its timer, or a retry, is
 * due.  A WaitEventSet must not hold one descriptor twice, so of our scans
 * that wait in one Append only the first (in the Append's order) adds it;
 * when it is notified it lets the transfers progress once and hands a
 * row, or the end, to every one of our waiting scans whose page has come,
 * as postgres_fdw answers for the other scans of a shared connection.  A
 * scan whose page came while another scan ran (whose pumping moved every
 * transfer) must not wait for the next event: the descriptor is then
 * armed to poll readable at once.
 *
 * Cancel and statement_timeout: the Append's wait watches the latch and
 * runs CHECK_FOR_INTERRUPTS; the descriptor also wakes it within a second,
 * and the notify callback runs CHECK_FOR_INTERRUPTS.  Errors: a failed page
 * raises when its scan is notified, as a synchronous scan raises when it
 * waits; the other scans' transfers go with their contexts.  The rate
 * limiter, the response cache and retries work below the call module, as
 * for any scan.  EXPLAIN: PostgreSQL shows "Async Foreign Scan"; Partner
 * Wait Time is, for such a scan, the time it was pending.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "executor/execAsync.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "nodes/nodeFuncs.h"
#include "storage/latch.h"
#include "utils/fmgroids.h"
#include "utils/formatting.h"
#include "utils/jsonb.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "estimates.h"
#include "fdw.h"
#include "fdw_scan_int.h"
#include "pg_compat.h"

/* Starts the first pages of streams until fanout are in flight. */
static void
start_streams(PsvcScanState *st)
{
	while (st->next_start < st->nstreams &&
		   st->next_start < st->cur +
		   Max(psvc_options_setting(st->server, PSVC_SETTING_FANOUT), 1))
		psvc_scan_start_page(st, &st->streams[st->next_start++]);
}

/*
 * Evaluates the pushed values for this (re)scan and lays out the streams.
 * Allocates in run_cxt, which it resets first: a rescan reuses the memory
 * of the one before (stop_streams has dropped its transfers).
 */
static void
start_scan(ForeignScanState *node, PsvcScanState *st)
{
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	MemoryContext old;
	int			nstreams;

	if (st->missing)
	{
		const PsvcColumnDef *c = psvc_endpoint_column(st->ep, st->missing);

		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("a condition on column \"%s\" of foreign table \"%s\" is required",
						st->missing, RelationGetRelationName(st->rel)),
				 errdetail("Resource \"%s\" is read from %s, which needs a value for {%s}.",
						   st->ep->resource, st->ep->list->route, c ? c->param : st->missing),
				 st->missing_hint ? errhint("%s", st->missing_hint) :
				 errhint("Add WHERE %s = ... or %s = ANY(...), or join on %s.",
						 st->missing, st->missing, st->missing)));
	}

	MemoryContextReset(st->run_cxt);
	old = MemoryContextSwitchTo(st->run_cxt);
	for (int i = 0; i < st->ncols; i++)
		st->cols[i].echo_for = -1;
	nstreams = psvc_scan_eval_values(st, econtext);

	st->nstreams = st->empty ? 0 : nstreams;
	st->streams = palloc0(sizeof(Stream) * Max(st->nstreams, 1));
	for (int i = 0; i < st->nstreams; i++)
		st->streams[i].value = i;
	st->cur = 0;
	st->next_start = 0;
	st->page = NULL;
	st->item = 0;
	st->rows_returned = 0;
	st->rows_fetched = 0;
	MemoryContextSwitchTo(old);
	start_streams(st);
	st->started = true;
}

/*
 * Reports a stream that reached the end of its list, with every row of it
 * consumed, to the learned estimates (estimates.c): the rows it kept, under
 * the values it sent (one per pushed column: a stream stands for one
 * combination of the array values).  Detail reads are not learned.
 * Allocates in
 * CurrentMemoryContext (the executor's per-tuple context).
 */
static void
learn_stream(PsvcScanState *st, Stream *s)
{
	const char **names;
	const char **values;

	if (st->detail || !psvc_est_active())
		return;
	names = palloc(sizeof(char *) * Max(st->npushed, 1));
	values = palloc(sizeof(char *) * Max(st->npushed, 1));
	for (int i = 0; i < st->npushed; i++)
	{
		PushedValue *pv = &st->pushed[i];

		names[i] = pv->def->name;
		values[i] = pv->texts[psvc_scan_value_index(st, i, s->value)];
	}
	psvc_est_record(st->server->serverid, st->ep->list->route,
					psvc_est_key(st->npushed, names, values),
					psvc_est_key(st->npushed, names, NULL), s->kept);
}

/*
 * Makes the next page current: the current stream's next page, or, when
 * that stream is done, the first page of the next one (fan-out keeps up to
 * partner_svc.fanout of them in flight).  Returns false at the end of the
 * scan.
 */
static bool
advance(PsvcScanState *st)
{
	while (st->cur < st->nstreams)
	{
		Stream	   *s = &st->streams[st->cur];

		if (s->xfer == NULL)
		{
			if (s->done)
			{
				/* all its rows were consumed: its count is complete */
				if (s->complete)
					learn_stream(st, s);
				st->cur++;
				start_streams(st);
				continue;
			}
			psvc_scan_start_page(st, s);
		}
		if (st->async && !psvc_call_ready(s->xfer))
		{
			/* the asynchronous callbacks below wait for it with the Append's other subplans */
			st->would_block = true;
			return false;
		}
		if (psvc_scan_fetch_page(st, s))
			return true;
		/* the documented "nothing here": the stream is done */
	}
	return false;
}

/*
 * Does the JSON array text hold the string value, compared
 * case-insensitively?  False for anything that is not such an array.
 */
static bool
array_holds(const char *json, const char *value)
{
	Jsonb	   *jb;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *want;
	bool		found = false;

	if (json == NULL || json[0] != '[')
		return false;
	jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
	want = str_tolower(value, strlen(value), DEFAULT_COLLATION_OID);
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_ELEM && v.type == jbvString && !found)
		{
			char	   *got = str_tolower(v.val.string.val, v.val.string.len,
										  DEFAULT_COLLATION_OID);

			found = strcmp(got, want) == 0;
		}
	}
	return found;
}

/*
 * The value of a declared member column read from item it's jsonb (c->walk):
 * a json or jsonb column takes the member as it is, another type its text
 * (a string unquoted, a container as JSON).  False for a member that is
 * absent or null.  Allocates in CurrentMemoryContext (the per-page one).
 */
static bool
walk_member(PsvcItem *it, ScanColumn *c, Datum *value)
{
	Jsonb	   *j = it->jsonb ? it->jsonb : psvc_json_to_jsonb(it->json, it->json_len);
	JsonbValue	v;
	char	   *text;

	if (j == NULL || !psvc_scan_json_member(&j->root, c->def->field, &v) ||
		v.type == jbvNull)
		return false;
	if (c->typid == JSONBOID || c->typid == JSONOID)
	{
		Jsonb	   *m = JsonbValueToJsonb(&v);

		if (c->typid == JSONBOID)
		{
			*value = JsonbPGetDatum(m);
			return true;
		}
		text = JsonbToCString(NULL, &m->root, VARSIZE(m));
	}
	else if (v.type == jbvBinary)
		text = JsonbToCString(NULL, v.val.binary.data, v.val.binary.len);
	else if (v.type == jbvBool)
		text = v.val.boolean ? "true" : "false";
	else
		text = psvc_scan_json_scalar(&v);
	*value = InputFunctionCall(&c->in, text, c->ioparam, c->typmod);
	return true;
}

static void
fill_slot(PsvcScanState *st, TupleTableSlot *slot, PsvcItem *it)
{
	Stream	   *s = &st->streams[st->cur];
	ErrorContextCallback errcb;
	ScanErrorArg arg = {st, NULL};

	errcb.callback = psvc_scan_error_callback;
	errcb.arg = &arg;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (int i = 0; i < st->ncols; i++)
	{
		ScanColumn *c = &st->cols[i];
		int			a = c->attno - 1;
		char	   *text = NULL;

		arg.column = c->def->name;
		if (c->decoded_jsonb && it->jsonb != NULL)
		{
			slot->tts_values[a] = PointerGetDatum(it->jsonb);
			slot->tts_isnull[a] = false;
			continue;
		}
		if (c->walk)
		{
			if (walk_member(it, c, &slot->tts_values[a]))
			{
				slot->tts_isnull[a] = false;
				continue;
			}
		}
		else if (c->def->kind == PSVC_COL_RAW)
			text = pnstrdup(it->json, it->json_len);
		else if (c->field >= 0)
			text = it->values[c->field];

		if (text == NULL && c->echo >= 0)
		{
			PushedValue *pv = &st->pushed[c->echo];
			int			v = psvc_scan_value_index(st, c->echo, s->value);

			if (c->echo_check >= 0 &&
				!array_holds(it->values[c->echo_check], pv->texts[v]))
				continue;

			/* the value as the column's type, made once per stream */
			if (c->echo_for != v)
			{
				MemoryContext old = MemoryContextSwitchTo(st->run_cxt);

				c->echo_datum = InputFunctionCall(&c->in, pv->texts[v], c->ioparam, c->typmod);
				c->echo_for = v;
				MemoryContextSwitchTo(old);
			}
			slot->tts_values[a] = c->echo_datum;
			slot->tts_isnull[a] = false;
			continue;
		}
		if (text == NULL)
			continue;
		slot->tts_values[a] = InputFunctionCall(&c->in, text, c->ioparam, c->typmod);
		slot->tts_isnull[a] = false;
	}
	error_context_stack = errcb.previous;
	ExecStoreVirtualTuple(slot);
}

/*
 * Does a row of the current stream hold the stream's value of each closed
 * filter the scan fans out over (compared exactly, as the filter's values
 * are)?  The recheck of the = ANY(...) alone would keep a row of one value
 * in the stream of another, so a service that ignores the filter would
 * make each row come back once per value.
 */
static bool
stream_holds(PsvcScanState *st, PsvcItem *it)
{
	Stream	   *s = &st->streams[st->cur];

	for (int i = 0; i < st->npushed; i++)
	{
		PushedValue *pv = &st->pushed[i];
		const char *got;

		if (pv->field < 0)
			continue;
		got = it->values[pv->field];
		if (got == NULL ||
			strcmp(got, pv->texts[psvc_scan_value_index(st, i, s->value)]) != 0)
			return false;
	}
	return true;
}

/*
 * The pushed values of the scan, from the plan's list (enum
 * PsvcPushedIndex): each one's column, its expression and the further
 * equalities intersected with it when the scan starts, all made ready to
 * run.  In the executor's per-query context, as ExecInitExpr's.
 */
static void
begin_pushed(PsvcScanState *st, ForeignScanState *node, List *pushed,
			 TupleDesc desc)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	ListCell   *lc;
	int			i;

	st->npushed = list_length(pushed);
	st->pushed = palloc0(sizeof(PushedValue) * Max(st->npushed, 1));
	i = 0;
	foreach(lc, pushed)
	{
		List	   *p = lfirst(lc);
		PushedValue *pv = &st->pushed[i];
		Expr	   *expr = list_nth(plan->fdw_exprs, intVal(list_nth(p, PSVC_PUSHED_EXPR)));
		const char *colname = strVal(list_nth(p, PSVC_PUSHED_COLUMN));

		for (int a = 0; a < desc->natts; a++)
			if (!TupleDescAttr(desc, a)->attisdropped &&
				strcmp(NameStr(TupleDescAttr(desc, a)->attname), colname) == 0)
				pv->def = psvc_fdw_column_def(st->ep, RelationGetRelid(st->rel),
											  TupleDescAttr(desc, a));
		if (pv->def == NULL)
			elog(ERROR, "pushed column \"%s\" not found", colname);
		pv->expr_is_array = intVal(list_nth(p, PSVC_PUSHED_IS_ARRAY)) != 0;
		pv->closed = intVal(list_nth(p, PSVC_PUSHED_CLOSED)) != 0;
		pv->field = -1;
		pv->type = exprType((Node *) expr);
		if (pv->expr_is_array)
			pv->type = get_element_type(pv->type);
		pv->expr = ExecInitExpr(expr, (PlanState *) node);
		/* further equalities on the column: intersected when the scan starts */
		{
			List	   *also = list_nth(p, PSVC_PUSHED_ALSO);
			List	   *also_array = list_nth(p, PSVC_PUSHED_ALSO_ARRAY);
			int			k = 0;
			ListCell   *la,
					   *lb;

			pv->nalso = list_length(also);
			pv->also = palloc0(sizeof(ExprState *) * Max(pv->nalso, 1));
			pv->also_array = palloc0(sizeof(bool) * Max(pv->nalso, 1));
			forboth(la, also, lb, also_array)
			{
				pv->also[k] = ExecInitExpr(list_nth(plan->fdw_exprs, lfirst_int(la)),
										   (PlanState *) node);
				pv->also_array[k++] = lfirst_int(lb) != 0;
			}
		}
		pv->is_array = pv->expr_is_array || pv->nalso > 0;
		i++;
	}
}

/*
 * The columns the scan fills (the plan's list of attribute numbers): each
 * one's definition in the catalogue, the member it reads, the pushed value
 * it echoes and its input function; then the members that closed filters
 * which fan out are checked in.  Sets st->ncols to the columns kept.
 */
static void
begin_columns(PsvcScanState *st, List *attrs, TupleDesc desc)
{
	ListCell   *lc;
	int			i;

	st->ncols = list_length(attrs);
	st->cols = palloc0(sizeof(ScanColumn) * Max(st->ncols, 1));
	/*
	 * room for each column's member, the member an echo is checked in, and
	 * the member of each closed filter that fans out
	 */
	st->fields = palloc0(sizeof(char *) * Max(2 * st->ncols + st->npushed, 1));
	i = 0;
	foreach(lc, attrs)
	{
		Form_pg_attribute att = TupleDescAttr(desc, lfirst_int(lc) - 1);
		ScanColumn *c;
		Oid			infunc;

		/* a dropped column is no column: its value stays NULL */
		if (att->attisdropped)
			continue;
		c = &st->cols[i++];
		c->attno = att->attnum;
		c->def = psvc_fdw_column_def(st->ep, RelationGetRelid(st->rel), att);
		c->walk = c->def->kind == PSVC_COL_FIELD && c->def->field != NULL &&
			(strchr(c->def->field, '.') != NULL ||
			 (st->ep->declared &&
			  (att->atttypid == JSONBOID || att->atttypid == JSONOID)));
		if (c->walk)
		{
			c->field = -1;
			st->want_jsonb = true;
		}
		else
			c->field = psvc_fdw_field_index(c->def, st->fields, &st->nfields);
		c->echo = -1;
		c->echo_check = -1;
		c->echo_for = -1;
		for (int p = 0; p < st->npushed; p++)
			if (strcmp(st->pushed[p].def->name, c->def->name) == 0 &&
				(st->pushed[p].def->kind == PSVC_COL_PATH || st->pushed[p].def->param))
				c->echo = p;
		if (c->echo >= 0 && c->def->echo_if_in)
		{
			PsvcColumnDef *holder = palloc0(sizeof(PsvcColumnDef));

			holder->name = c->def->echo_if_in;
			holder->kind = PSVC_COL_FIELD;
			holder->field = c->def->echo_if_in;
			c->echo_check = psvc_fdw_field_index(holder, st->fields, &st->nfields);
		}
		c->typid = att->atttypid;
		getTypeInputInfo(att->atttypid, &infunc, &c->ioparam);
		fmgr_info(infunc, &c->in);
		c->typmod = att->atttypmod;
		/* raw of type jsonb (not a domain): the decoder makes it */
		if (c->def->kind == PSVC_COL_RAW && infunc == F_JSONB_IN)
		{
			c->decoded_jsonb = true;
			st->want_jsonb = true;
		}
	}

	st->ncols = i;
	for (int p = 0; p < st->npushed; p++)
		if (st->pushed[p].closed && st->pushed[p].is_array)
			st->pushed[p].field = psvc_fdw_field_index(st->pushed[p].def, st->fields,
														&st->nfields);
}

void
psvc_fdw_begin(ForeignScanState *node, int eflags)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	PsvcScanState *st = palloc0(sizeof(PsvcScanState));
	List	   *priv = plan->fdw_private;
	List	   *pushed = list_nth(priv, PSVC_PRIV_PUSHED);
	List	   *attrs = list_nth(priv, PSVC_PRIV_ATTRS);
	ForeignTable *ft;
	TupleDesc	desc;

	st->rel = node->ss.ss_currentRelation;
	desc = RelationGetDescr(st->rel);
	ft = GetForeignTable(RelationGetRelid(st->rel));
	st->ep = psvc_fdw_endpoint_of(ft, &st->server);
	/*
	 * The table's own cache_ttl; the scan of an UPDATE or DELETE reads
	 * what it changes from the service, never from the cache.
	 */
	if (ExecRelationIsTargetRelation(node->ss.ps.state, plan->scan.scanrelid))
		st->cache_ttl_ms = 0;
	else
		st->cache_ttl_ms = psvc_options_table_cache_ttl(ft);
	/* an Append runs it asynchronously (below) */
	st->async = node->ss.ps.async_capable;
	st->detail = intVal(list_nth(priv, PSVC_PRIV_DETAIL)) != 0;
	st->limit = intVal(list_nth(priv, PSVC_PRIV_LIMIT));

	begin_pushed(st, node, pushed, desc);
	begin_columns(st, attrs, desc);

	st->decoded_sig = psvc_json_decode_signature(psvc_scan_items_key(st), st->detail,
												 st->nfields, st->fields,
												 st->want_jsonb,
												 &st->decoded_sig_len);

	st->recheck = ExecInitQual(plan->fdw_recheck_quals, (PlanState *) node);
	if (list_length(priv) > PSVC_PRIV_MISSING &&
		strVal(list_nth(priv, PSVC_PRIV_MISSING))[0] != '\0')
		st->missing = strVal(list_nth(priv, PSVC_PRIV_MISSING));
	if (list_length(priv) > PSVC_PRIV_MISSING_HINT &&
		strVal(list_nth(priv, PSVC_PRIV_MISSING_HINT))[0] != '\0')
		st->missing_hint = strVal(list_nth(priv, PSVC_PRIV_MISSING_HINT));

	/*
	 * The key is that of the role the table's permissions are checked as:
	 * the view owner through a view, else the current user (as
	 * postgres_fdw chooses its connection's user mapping).
	 */
	st->server->userid = psvc_scan_user(plan, node->ss.ps.state);

	st->scan_cxt = AllocSetContextCreate(node->ss.ps.state->es_query_cxt,
										 "partner_svc scan", ALLOCSET_DEFAULT_SIZES);
	st->run_cxt = AllocSetContextCreate(st->scan_cxt, "partner_svc run",
										ALLOCSET_DEFAULT_SIZES);
	st->page_cxt = AllocSetContextCreate(st->scan_cxt, "partner_svc page",
										 ALLOCSET_DEFAULT_SIZES);
	node->fdw_state = st;
}

TupleTableSlot *
psvc_fdw_iterate(ForeignScanState *node)
{
	PsvcScanState *st = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	PsvcItem   *it;

	st->would_block = false;
	if (!st->started)
		start_scan(node, st);
	if (st->limit >= 0 && st->rows_returned >= st->limit)
		return ExecClearTuple(slot);

	for (;;)
	{
		while (st->page == NULL || st->item >= st->page->nitems)
		{
			if (!advance(st))
				return ExecClearTuple(slot);
		}
		/* let the prefetched page progress while rows are consumed */
		if (++st->since_poll >= 8)
		{
			st->since_poll = 0;
			psvc_call_poll();
		}
		it = &st->page->items[st->item++];
		fill_slot(st, slot, it);
		if (stream_holds(st, it))
		{
			if (st->recheck == NULL)
				break;
			econtext->ecxt_scantuple = slot;
			if (ExecQual(st->recheck, econtext))
				break;
		}
		/* a row the service should not have sent: its values go too */
		st->rows_rejected++;
		ResetExprContext(econtext);
		CHECK_FOR_INTERRUPTS();
	}
	st->rows_returned++;
	st->streams[st->cur].kept++;
	return slot;
}

static void
stop_streams(PsvcScanState *st)
{
	for (int i = 0; i < st->nstreams; i++)
		psvc_scan_drop_transfer(&st->streams[i]);
	st->nstreams = 0;
	psvc_scan_release_page(st);
}

void
psvc_fdw_rescan(ForeignScanState *node)
{
	PsvcScanState *st = node->fdw_state;

	stop_streams(st);
	st->started = false;
	st->would_block = false;
	st->blocked = false;
}

void
psvc_fdw_end(ForeignScanState *node)
{
	PsvcScanState *st = node->fdw_state;

	if (st == NULL)
		return;
	stop_streams(st);
	MemoryContextDelete(st->scan_cxt);
	node->fdw_state = NULL;
}


/* ---------------------------------------------------------------------
 * Asynchronous scans: the callbacks of a scan an Append runs (see the
 * header)
 * ---------------------------------------------------------------------
 */

/* Whether areq asks a scan of ours: some other wrapper's may share the Append. */
static bool
is_ours(AsyncRequest *areq)
{
	return IsA(areq->requestee, ForeignScanState) &&
		((ForeignScanState *) areq->requestee)->fdwroutine->ForeignAsyncNotify ==
		psvc_fdw_async_notify;
}

static PsvcScanState *
scan_of(AsyncRequest *areq)
{
	return (PsvcScanState *) ((ForeignScanState *) areq->requestee)->fdw_state;
}

/*
 * Whether the scan still waits: its last row stopped at its current
 * stream's page, and that page is still in flight.
 */
static bool
still_waits(PsvcScanState *st)
{
	Stream	   *s;

	if (!st->would_block || st->cur >= st->nstreams)
		return false;
	s = &st->streams[st->cur];
	return s->xfer != NULL && !psvc_call_ready(s->xfer);
}

/*
 * Answers areq with the scan's next row, or its end, when that needs no
 * wait; else marks it pending.  The row is made by the scan node itself
 * (ExecProcNodeReal: the node's local conditions and projection apply,
 * and the Append's execAsync.c keeps the instrumentation).
 */
static void
produce(AsyncRequest *areq)
{
	ForeignScanState *node = (ForeignScanState *) areq->requestee;
	PsvcScanState *st = node->fdw_state;
	TupleTableSlot *result;

	if (still_waits(st))
	{
		ExecAsyncRequestPending(areq);
		return;
	}
	if (st->blocked)
	{
		instr_time	now;

		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, st->blocked_at);
		st->wait_ms += INSTR_TIME_GET_MILLISEC(now);
		st->blocked = false;
	}
	result = node->ss.ps.ExecProcNodeReal(&node->ss.ps);
	if (TupIsNull(result) && st->would_block)
	{
		INSTR_TIME_SET_CURRENT(st->blocked_at);
		st->blocked = true;
		ExecAsyncRequestPending(areq);
	}
	else
		ExecAsyncRequestDone(areq, result);
}

/*
 * Answers areq, pending in the Append, outside the Append's own
 * notification: as ExecAsyncNotify does (instrumentation, the response).
 */
static void
answer_other(AsyncRequest *areq)
{
	PlanState  *ps = areq->requestee;

	areq->callback_pending = false;
	if (ps->instrument)
		InstrStartNode(ps->instrument);
	produce(areq);
	ExecAsyncResponse(areq);
	if (ps->instrument)
		InstrStopNode(ps->instrument, TupIsNull(areq->result) ? 0.0 : 1.0);
}

/* ForeignAsyncRequest: a row, the end, or pending. */
void
psvc_fdw_async_request(AsyncRequest *areq)
{
	produce(areq);
}

/*
 * ForeignAsyncConfigureWait: the first of our pending scans in the Append
 * adds the call module's descriptor to the Append's wait, armed to poll
 * readable at once when a pending scan of ours no longer needs to wait.
 */
void
psvc_fdw_async_configure_wait(AsyncRequest *areq)
{
	AppendState *append = castNode(AppendState, areq->requestor);
	bool		now = false;
	int			i = -1;

	while ((i = bms_next_member(append->as_asyncplans, i)) >= 0)
	{
		AsyncRequest *other = append->as_asyncrequests[i];

		if (other == areq)
			break;
		if (other->callback_pending && is_ours(other))
			return;				/* it added the descriptor */
	}
	i = -1;
	while (!now && (i = bms_next_member(append->as_asyncplans, i)) >= 0)
	{
		AsyncRequest *other = append->as_asyncrequests[i];

		if (other->callback_pending && is_ours(other) && !still_waits(scan_of(other)))
			now = true;
	}
	psvc_call_prepare_wait(now);
	AddWaitEventToSet(append->as_eventset, WL_SOCKET_READABLE,
					  psvc_call_event_fd(), NULL, areq);
}

/*
 * ForeignAsyncNotify: the descriptor areq added polled readable.  Lets
 * the transfers progress, then answers every pending scan of ours in the
 * Append whose page has come, areq last (the Append takes its answer).
 */
void
psvc_fdw_async_notify(AsyncRequest *areq)
{
	AppendState *append = castNode(AppendState, areq->requestor);
	int			i = -1;

	psvc_call_poll();
	CHECK_FOR_INTERRUPTS();
	while ((i = bms_next_member(append->as_asyncplans, i)) >= 0)
	{
		AsyncRequest *other = append->as_asyncrequests[i];

		if (other != areq && other->callback_pending && is_ours(other) &&
			!still_waits(scan_of(other)))
			answer_other(other);
	}
	produce(areq);
}
