/*-------------------------------------------------------------------------
 *
 * fdw_scan.c
 *		  Executing scans of partner_svc foreign tables: one generic engine
 *		  that walks any endpoint of the catalogue, page by page, as the
 *		  executor asks for rows.
 *
 * A scan is a list of streams, one per value of the fanned-out path
 * parameter (movie = ANY(...)), or one; with arrays on two path
 * parameters (type = ANY(...) AND collection = ANY(...)), one per pair
 * of values, at most PSVC_SCAN_MAX_COMBINATIONS.  Each stream walks its cursor
 * pages; the end is where next_cursor is null, never inferred from a
 * count.  Up to partner_svc.fanout streams fetch their first page at once,
 * and while the executor consumes a page the stream's next page is already
 * in flight (partner_svc.prefetch), so a scan costs about max(fetch,
 * consume) rather than their sum.
 *
 * With prefetch, the next page is asked for even before a page is decoded,
 * on the cursor psvc_json_peek_cursor reads from the end of the body: the
 * service then prepares it while we decode, which takes the decoding off
 * the chain of requests that cursor paging imposes (measured in
 * docs/performance.md).  The decoded cursor is the truth: when it differs
 * from the guess (a body that does not end with its pagination), that
 * request is dropped and the right one sent.  Under a LIMIT, only while
 * the next page's size does not depend on the rows being decoded.
 *
 * Memory: the scan's state lives in the per-scan context, what one run
 * of it makes (values, streams, cursors) in the run context, reset by a
 * rescan; each transfer in a context of its own (deleting it also
 * releases its curl handle, see http.c), kept while the page decoded from
 * its response is current, since the page points into the body instead
 * of copying it; decoded items and the row values built from them in the
 * per-page context, reset, and the response deleted, before the next
 * page is decoded.  So a scan of any length holds at most a page in
 * decoding plus the transfers in flight.
 *
 * Rows are rechecked: the pushed-down conditions on member columns (the
 * plan's fdw_recheck_quals, fdw_plan.c) are evaluated on each row before
 * it is returned or counted against a pushed LIMIT, so a service that
 * ignores a filter, or a detail read that answers for another identifier,
 * only costs the rows it should not have sent.  A filter column the items
 * do not carry takes the value the query asked for (echo), except where
 * the catalogue names a member that must hold it (genre in genres).
 *
 * The API key is the user mapping of the role PostgreSQL checks the
 * table's permissions as (the view owner through a view), as postgres_fdw
 * does; a missing mapping is an error before any request (http.c).
 *
 * A 404 on a stream's first page whose error code the list operation
 * names as "nothing here" (catalog.c: movies' content_not_available, an
 * unknown user or nested-list detail) gives no rows; so does a 404 of a
 * detail read.  Any other failure is an ERROR
 * raised by http.c, with this scan's table and page in its context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "foreign/foreign.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/formatting.h"
#include "utils/jsonb.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "fdw.h"
#include "http.h"
#include "json.h"
#include "options.h"
#include "estimates.h"

/*
 * Bounds on what a service may answer to a listing (docs/foreign-tables.md):
 * a cursor has 1 to 4,096 characters (document 2, "Limits"), and a listing
 * ends with an error after this many consecutive pages without items that
 * still name a next page.
 */
#define PSVC_SCAN_MAX_CURSOR		4096
#define PSVC_SCAN_MAX_EMPTY_PAGES	100

/* Streams a scan with = ANY(...) on several path columns may make. */
#define PSVC_SCAN_MAX_COMBINATIONS	100000

/* How often loops over the values of an = ANY(...) check for interrupts. */
#define PSVC_SCAN_INTERRUPT_EVERY	1024

/* A column the query needs and how to fill it. */
typedef struct ScanColumn
{
	AttrNumber	attno;
	const PsvcColumnDef *def;
	int			field;			/* index in fields[], or -1 */
	int			echo;			/* index in pushed[] to echo, or -1 */
	int			echo_check;		/* index in fields[] of the array member
								 * that must hold the echoed value, or -1 */
	FmgrInfo	in;
	Oid			ioparam;
	int32		typmod;
	bool		decoded_jsonb;	/* raw as jsonb: from PsvcItem.jsonb */
	Datum		echo_datum;		/* the echoed value, as the column's type */
	int			echo_for;		/* the stream value it was made for, or -1 */
} ScanColumn;

/* A pushed-down equality and its value(s) for the current (re)scan. */
typedef struct PushedValue
{
	const PsvcColumnDef *def;
	ExprState  *expr;
	bool		is_array;
	Oid			type;			/* of the value, or of an array's elements */
	int			nvalues;
	Datum	   *values;			/* in the scan context */
	char	  **texts;			/* as sent */
	int			stride;			/* array: streams per step of its index
								 * (mixed radix over all the arrays) */
} PushedValue;

typedef struct Stream
{
	int			value;			/* the combination of fanned-out values
								 * (value_index) */
	PsvcTransfer *xfer;			/* the page in flight, or NULL */
	MemoryContext xfer_cxt;
	char	   *cursor;			/* for the next page; NULL on the first */
	int64		asked;			/* items asked for by the page in flight */
	bool		done;			/* no more pages to ask for */
	int			pages;
	bool		complete;		/* reached the end of its list */
	int64		kept;			/* rows returned from it (rechecked) */
	int			empty_pages;	/* consecutive pages without items that
								 * had a next_cursor */
	char	   *lap_cursor;		/* cycle detection (check_cursor) */
	int			lap_length;
	int			lap_steps;
} Stream;

typedef struct PsvcScanState
{
	Relation	rel;
	const PsvcEndpoint *ep;
	PsvcServer *server;
	bool		detail;
	int			limit;			/* rows the query needs, -1 = all */
	int			ncols;
	ScanColumn *cols;
	int			nfields;
	const char **fields;
	bool		want_jsonb;		/* some column is raw as jsonb */
	int			npushed;
	PushedValue *pushed;
	ExprState  *recheck;		/* pushed conditions, rechecked per row */
	const char *missing;		/* required path column without a value */
	MemoryContext scan_cxt;
	MemoryContext run_cxt;		/* child of scan_cxt: what one (re)scan
								 * makes (values, streams, cursors); reset
								 * by each rescan */
	MemoryContext page_cxt;
	MemoryContext page_body_cxt;	/* the response the page points into
									 * (its transfer's context), or NULL */

	bool		started;
	bool		empty;			/* a NULL key: no rows at all */
	int			nstreams;
	Stream	   *streams;
	int			cur;
	int			next_start;
	PsvcPage   *page;
	int			item;
	int64		rows_returned;
	int64		rows_fetched;
	int64		rows_rejected;	/* rows the recheck removed */
	int			since_poll;

	/* for EXPLAIN ANALYZE */
	int64		n_pages;
	int64		n_requests;
	int64		n_retries;
	int64		n_bytes;
	double		wait_ms;
	double		rl_wait_ms;		/* of that, waiting for rate-limit budget */
	int64		cache_hits;		/* pages the response cache answered */
	int64		cache_misses;

	int			cache_ttl_ms;	/* the table's option cache_ttl, -1: none */
	char	   *decoded_sig;	/* how pages are decoded, for the decoded
								 * pages of the response cache */
	size_t		decoded_sig_len;
} PsvcScanState;

/* error context: which table and page an error belongs to */
typedef struct ScanErrorArg
{
	PsvcScanState *st;
	const char *column;
} ScanErrorArg;

static PsvcPage *decode_response(PsvcScanState *st, PsvcHttpResponse *resp);

static void
scan_error_callback(void *arg)
{
	ScanErrorArg *a = arg;

	if (a->column)
		errcontext("column \"%s\" of foreign table \"%s\"",
				   a->column, RelationGetRelationName(a->st->rel));
	else
		errcontext("scan of foreign table \"%s\" (resource %s)",
				   RelationGetRelationName(a->st->rel), a->st->ep->resource);
}

/* The one path parameter of the detail read. */
static const char *
detail_param(const PsvcEndpoint *ep)
{
	if (ep->detail == NULL || ep->detail->params[0] == NULL)
		elog(ERROR, "resource \"%s\" has no detail read by key", ep->resource);
	return ep->detail->params[0]->name;
}

/*
 * Which of pushed value i's values stream value v stands for: the streams
 * enumerate every combination of the array values, the first array
 * varying fastest; a single value is index 0.
 */
static inline int
value_index(const PsvcScanState *st, int i, int v)
{
	const PushedValue *pv = &st->pushed[i];

	if (!pv->is_array || pv->nvalues <= 1)
		return 0;
	return (v / pv->stride) % pv->nvalues;
}

/* Items the next page asks for: the page size, or what a LIMIT still needs. */
static int64
page_limit(PsvcScanState *st)
{
	int64		want = psvc_options_setting(st->server, PSVC_SETTING_PAGE_SIZE);

	if (st->limit >= 0 && st->limit - st->rows_fetched < want)
		want = Max(st->limit - st->rows_fetched, 1);
	return want;
}

/*
 * The request for a stream's next page.  Allocates in CurrentMemoryContext.
 * value_texts gives each pushed value's text for this stream.
 */
/* The member of a body that holds the scan's items (json.h). */
static const char *
items_key(PsvcScanState *st)
{
	if (st->detail)
		return st->ep->detail->envelope;
	return st->ep->items_key ? st->ep->items_key : st->ep->list->envelope;
}

static PsvcHttpRequest *
build_request(PsvcScanState *st, Stream *s)
{
	PsvcHttpRequest *req = palloc0(sizeof(PsvcHttpRequest));

	req->op = st->detail ? st->ep->detail : st->ep->list;
	req->server = st->server;
	req->method = req->op->method;
	req->route = req->op->route;

	for (int i = 0; i < st->npushed; i++)
	{
		PushedValue *pv = &st->pushed[i];
		PsvcKV	   *kv = palloc(sizeof(PsvcKV));
		bool		is_detail = psvc_endpoint_is_detail_key(st->ep, pv->def);

		kv->value = pv->texts[value_index(st, i, s->value)];
		if (pv->def->kind == PSVC_COL_PATH)
		{
			kv->name = pv->def->param;
			req->path_params = lappend(req->path_params, kv);
		}
		else if (is_detail)
		{
			if (!st->detail)
				continue;
			kv->name = detail_param(st->ep);
			req->path_params = lappend(req->path_params, kv);
		}
		else if (!st->detail)
		{
			/* a value no filter value selects exactly: list, then recheck */
			kv->value = psvc_endpoint_filter_param(pv->def, kv->value);
			if (kv->value == NULL)
				continue;
			kv->name = pv->def->param;
			req->query = lappend(req->query, kv);
		}
	}
	if (!st->detail && st->ep->list->paging == PSVC_PAGING_CURSOR)
	{
		PsvcKV	   *kv = palloc(sizeof(PsvcKV));

		kv->name = "limit";
		kv->value = psprintf(INT64_FORMAT, page_limit(st));
		req->query = lappend(req->query, kv);
		if (s->cursor)
		{
			kv = palloc(sizeof(PsvcKV));
			kv->name = "cursor";
			kv->value = s->cursor;
			req->query = lappend(req->query, kv);
		}
	}
	/* a missing object or content is a normal, empty answer (see above) */
	req->return_errors = true;
	req->decoded_sig = st->decoded_sig;
	req->decoded_sig_len = st->decoded_sig_len;
	if (st->cache_ttl_ms >= 0)
	{
		req->has_cache_ttl = true;
		req->cache_ttl_ms = st->cache_ttl_ms;
	}
	return req;
}

static void
start_page(PsvcScanState *st, Stream *s)
{
	MemoryContext old;

	s->xfer_cxt = AllocSetContextCreate(st->scan_cxt, "partner_svc transfer",
										ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(s->xfer_cxt);
	s->asked = page_limit(st);
	s->xfer = psvc_http_start(build_request(st, s), s->xfer_cxt);
	MemoryContextSwitchTo(old);
	st->n_requests++;
}

static void
drop_transfer(Stream *s)
{
	if (s->xfer)
	{
		psvc_http_cancel(s->xfer);
		s->xfer = NULL;
	}
	if (s->xfer_cxt)
	{
		MemoryContextDelete(s->xfer_cxt);
		s->xfer_cxt = NULL;
	}
}

/* Starts the first pages of streams until fanout are in flight. */
static void
start_streams(PsvcScanState *st)
{
	while (st->next_start < st->nstreams &&
		   st->next_start < st->cur +
		   Max(psvc_options_setting(st->server, PSVC_SETTING_FANOUT), 1))
		start_page(st, &st->streams[st->next_start++]);
}

/*
 * Is this error response a documented "nothing here"?  A detail read's 404
 * is no row with that key; a list's 404 is no rows when its error code is
 * one the operation's row names (movies' content_not_available).
 */
static bool
is_empty_answer(PsvcScanState *st, Stream *s, PsvcHttpResponse *resp)
{
	PsvcJsonErrorBody eb;
	const char *code;

	if (resp->status != 404 || s->pages > 0)
		return false;
	if (st->detail)
		return true;
	if (st->ep->list->empty_codes == NULL ||
		!psvc_json_error_body(resp->body, resp->body_len,
							  GetDatabaseEncoding(), &eb))
		return false;
	/* {"error": "code"} or {"error": {"code": "code"}}, as the functions read it */
	if (eb.error != NULL)
		code = eb.error_is_string ? eb.error : NULL;
	else
		code = eb.code_is_string ? eb.code : NULL;
	return psvc_op_empty_code(st->ep->list, code);
}

/* An array element's text and its position, for de-duplication. */
typedef struct ValueText
{
	char	   *text;
	int			pos;
} ValueText;

static int
value_text_cmp(const void *a, const void *b)
{
	const ValueText *x = a;
	const ValueText *y = b;
	int			c = strcmp(x->text, y->text);

	if (c != 0)
		return c;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static int
value_pos_cmp(const void *a, const void *b)
{
	const ValueText *x = a;
	const ValueText *y = b;

	return (x->pos > y->pos) - (x->pos < y->pos);
}

/*
 * Fills pv with the distinct non-null elements of arr, each as its Datum
 * and its text, in the order of their first occurrence.  Sorting makes it
 * O(n log n) for the 100,000 values an = ANY(...) may bring; the loops
 * check for interrupts.  Allocates in CurrentMemoryContext (run_cxt).
 */
static void
distinct_values(PushedValue *pv, ArrayType *arr, Oid out)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			m = 0;
	ValueText  *vt;
	bool	   *dup;

	get_typlenbyvalalign(pv->type, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, pv->type, typlen, typbyval, typalign, &elems, &nulls, &n);
	pv->values = palloc(sizeof(Datum) * Max(n, 1));
	pv->texts = palloc(sizeof(char *) * Max(n, 1));
	vt = palloc(sizeof(ValueText) * Max(n, 1));
	dup = palloc0(sizeof(bool) * Max(n, 1));
	for (int j = 0; j < n; j++)
	{
		if (j % PSVC_SCAN_INTERRUPT_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
		if (nulls[j])
			continue;
		vt[m].text = OidOutputFunctionCall(out, elems[j]);
		vt[m].pos = j;
		m++;
	}
	if (m > 1)
	{
		qsort(vt, m, sizeof(ValueText), value_text_cmp);
		CHECK_FOR_INTERRUPTS();
		for (int k = 1; k < m; k++)
			if (strcmp(vt[k].text, vt[k - 1].text) == 0)
				dup[vt[k].pos] = true;
		/* back to the order of the array, texts by position */
		qsort(vt, m, sizeof(ValueText), value_pos_cmp);
	}
	pv->nvalues = 0;
	for (int k = 0; k < m; k++)
	{
		int			j = vt[k].pos;

		if (k % PSVC_SCAN_INTERRUPT_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
		if (dup[j])
			continue;
		pv->values[pv->nvalues] = datumCopy(elems[j], typbyval, typlen);
		pv->texts[pv->nvalues++] = vt[k].text;
	}
}

/*
 * Checks every value that goes into a path, as the URL builder will, so
 * that a bad one (22023) stops the scan before any request, even the
 * first page of another value of a fanned-out scan.
 */
static void
check_path_values(PsvcScanState *st)
{
	for (int i = 0; i < st->npushed; i++)
	{
		PushedValue *pv = &st->pushed[i];
		const PsvcOperation *op;
		const char *name;

		if (pv->def->kind == PSVC_COL_PATH)
		{
			op = st->ep->list;
			name = pv->def->param;
		}
		else if (st->detail && st->ep->detail_column &&
				 strcmp(pv->def->name, st->ep->detail_column) == 0)
		{
			op = st->ep->detail;
			name = detail_param(st->ep);
		}
		else
			continue;
		for (int k = 0; k < pv->nvalues; k++)
		{
			if (k % PSVC_SCAN_INTERRUPT_EVERY == 0)
				CHECK_FOR_INTERRUPTS();
			psvc_http_check_param(op, name, pv->texts[k]);
		}
	}
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
	int			nstreams = 1;

	if (st->missing)
	{
		const PsvcColumnDef *c = psvc_endpoint_column(st->ep, st->missing);

		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("a condition on column \"%s\" of foreign table \"%s\" is required",
						st->missing, RelationGetRelationName(st->rel)),
				 errdetail("Resource \"%s\" is read from %s, which needs a value for {%s}.",
						   st->ep->resource, st->ep->list->route, c ? c->param : st->missing),
				 errhint("Add WHERE %s = ... or %s = ANY(...), or join on %s.",
						 st->missing, st->missing, st->missing)));
	}

	MemoryContextReset(st->run_cxt);
	old = MemoryContextSwitchTo(st->run_cxt);
	st->empty = false;
	for (int i = 0; i < st->ncols; i++)
		st->cols[i].echo_for = -1;
	for (int i = 0; i < st->npushed; i++)
	{
		PushedValue *pv = &st->pushed[i];
		bool		isnull;
		Datum		d = ExecEvalExpr(pv->expr, econtext, &isnull);
		Oid			out;
		bool		varlena;

		getTypeOutputInfo(pv->type, &out, &varlena);
		pv->nvalues = 0;
		if (isnull)
		{
			st->empty = true;
			continue;
		}
		if (pv->is_array)
		{
			distinct_values(pv, DatumGetArrayTypeP(d), out);
			if (pv->nvalues == 0)
				st->empty = true;
			/* the arrays before this one vary faster (value_index) */
			if (nstreams > 1 && (int64) nstreams * Max(pv->nvalues, 1) > PSVC_SCAN_MAX_COMBINATIONS)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("too many combinations of path values for foreign table \"%s\"",
								RelationGetRelationName(st->rel)),
						 errdetail("The conditions = ANY(...) on several path columns make %lld combinations; the limit is %d.",
								   (long long) nstreams * Max(pv->nvalues, 1),
								   PSVC_SCAN_MAX_COMBINATIONS)));
			pv->stride = nstreams;
			nstreams *= Max(pv->nvalues, 1);
		}
		else
		{
			int16		typlen;
			bool		typbyval;

			get_typlenbyval(pv->type, &typlen, &typbyval);
			pv->values = palloc(sizeof(Datum));
			pv->texts = palloc(sizeof(char *));
			pv->values[0] = datumCopy(d, typbyval, typlen);
			pv->texts[0] = OidOutputFunctionCall(out, d);
			pv->nvalues = 1;
		}
	}
	if (!st->empty)
		check_path_values(st);

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
 * Checks the next_cursor of the page a stream just decoded (items of it
 * on the page), before it is sent back: 1 to PSVC_SCAN_MAX_CURSOR
 * characters, not a cursor this stream has been given before (a cycle,
 * found with Brent's method in constant memory: the cursor at the start
 * of a lap is kept, and laps double in length), and no more than
 * PSVC_SCAN_MAX_EMPTY_PAGES consecutive empty pages that still name a
 * next one.  Each would otherwise make the scan run until
 * statement_timeout, or fail inside libcurl.  Allocates in run_cxt.
 */
static void
check_cursor(PsvcScanState *st, Stream *s, const char *next, int nitems)
{
	size_t		len = strlen(next);
	int			nchars;

	if (len == 0 || len > PSVC_SCAN_MAX_CURSOR)
	{
		nchars = len == 0 ? 0 : pg_mbstrlen_with_len(next, (int) Min(len, (size_t) INT_MAX));
		if (nchars == 0 || nchars > PSVC_SCAN_MAX_CURSOR)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_STRING_LENGTH_OR_BUFFER_LENGTH),
					 errmsg("GET %s answered a next_cursor of %d characters", st->ep->list->route, nchars),
					 errdetail("A cursor has 1 to %d characters; the listing cannot continue.",
							   PSVC_SCAN_MAX_CURSOR)));
	}
	if (s->lap_cursor != NULL && strcmp(next, s->lap_cursor) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("GET %s answered a next_cursor it had given before", st->ep->list->route),
				 errdetail("Following it would ask for the same pages again, without end (after %d pages).",
						   s->pages)));
	if (++s->lap_steps >= s->lap_length)
	{
		if (s->lap_cursor != NULL)
			pfree(s->lap_cursor);
		s->lap_cursor = MemoryContextStrdup(st->run_cxt, next);
		s->lap_length = Max(s->lap_length * 2, 1);
		s->lap_steps = 0;
	}
	if (nitems > 0)
		s->empty_pages = 0;
	else if (++s->empty_pages > PSVC_SCAN_MAX_EMPTY_PAGES)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("GET %s answered %d pages in a row without items", st->ep->list->route,
						s->empty_pages),
				 errdetail("Each named a next page; a listing ends after %d consecutive empty pages.",
						   PSVC_SCAN_MAX_EMPTY_PAGES)));
}

/* Frees the current page and the response it points into. */
static void
release_page(PsvcScanState *st)
{
	st->page = NULL;
	MemoryContextReset(st->page_cxt);
	if (st->page_body_cxt != NULL)
	{
		MemoryContextDelete(st->page_body_cxt);
		st->page_body_cxt = NULL;
	}
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
		values[i] = pv->texts[value_index(st, i, s->value)];
	}
	psvc_est_record(st->server->serverid, st->ep->list->route,
					psvc_est_key(st->npushed, names, values),
					psvc_est_key(st->npushed, names, NULL), s->kept);
}

/*
 * Makes the next page current.  Returns false at the end of the scan.
 */
static bool
advance(PsvcScanState *st)
{
	while (st->cur < st->nstreams)
	{
		Stream	   *s = &st->streams[st->cur];
		PsvcHttpResponse *resp;
		instr_time	t0,
					t1;
		MemoryContext old;
		MemoryContext body_cxt;
		const char *next;
		ErrorContextCallback errcb;
		ScanErrorArg arg = {st, NULL};

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
			start_page(st, s);
		}

		errcb.callback = scan_error_callback;
		errcb.arg = &arg;
		errcb.previous = error_context_stack;
		error_context_stack = &errcb;

		INSTR_TIME_SET_CURRENT(t0);
		resp = psvc_http_finish(s->xfer);
		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		st->wait_ms += INSTR_TIME_GET_MILLISEC(t1);
		st->n_retries += resp->retries;
		st->n_requests += resp->retries;
		if (resp->from_cache)
		{
			st->n_requests--;	/* counted when started: nothing was sent */
			st->cache_hits++;
		}
		else if (resp->cache_miss)
			st->cache_misses++;
		st->n_bytes += resp->bytes;
		st->rl_wait_ms += resp->rl_wait_ms;
		s->xfer = NULL;

		if (resp->status < 200 || resp->status > 299)
		{
			if (!is_empty_answer(st, s, resp))
				psvc_http_raise(build_request(st, s), resp);
			error_context_stack = errcb.previous;
			MemoryContextDelete(s->xfer_cxt);
			s->xfer_cxt = NULL;
			s->done = true;
			s->complete = true; /* the documented "nothing here" */
			continue;
		}

		/*
		 * Ask for the next page now, on a cursor peeked from the body, so
		 * that the service prepares it while this page is decoded; the
		 * decoded cursor confirms the guess below, or the request is
		 * dropped.  Only where prefetch would ask for the same page
		 * anyway: under a LIMIT, only while a full page is still wanted
		 * whatever this page holds, so that neither the size of the next
		 * page nor whether there is one depends on this page's items.
		 */
		body_cxt = s->xfer_cxt;
		s->xfer_cxt = NULL;
		if (psvc_options_setting(st->server, PSVC_SETTING_PREFETCH) && !st->detail &&
			st->ep->list->paging == PSVC_PAGING_CURSOR &&
			(st->limit < 0 ||
			 st->limit - st->rows_fetched - s->asked >=
			 psvc_options_setting(st->server, PSVC_SETTING_PAGE_SIZE)))
		{
			char	   *guess;

			old = MemoryContextSwitchTo(st->run_cxt);
			guess = psvc_json_peek_cursor(resp->body, resp->body_len);
			MemoryContextSwitchTo(old);
			/* a guess check_cursor would refuse is not sent */
			if (guess != NULL &&
				(guess[0] == '\0' || strlen(guess) > PSVC_SCAN_MAX_CURSOR ||
				 (s->cursor != NULL && strcmp(guess, s->cursor) == 0)))
			{
				pfree(guess);
				guess = NULL;
			}
			if (guess != NULL)
			{
				if (s->cursor)
					pfree(s->cursor);
				s->cursor = guess;
				start_page(st, s);
			}
		}

		release_page(st);
		/* the page points into the body, which lives until the page does */
		st->page_body_cxt = body_cxt;
		old = MemoryContextSwitchTo(st->page_cxt);
		st->page = decode_response(st, resp);
		MemoryContextSwitchTo(old);
		error_context_stack = errcb.previous;

		st->item = 0;
		st->n_pages++;
		s->pages++;
		st->rows_fetched += st->page->nitems;

		next = (!st->detail && st->ep->list->paging == PSVC_PAGING_CURSOR) ?
			st->page->next_cursor : NULL;
		if (next != NULL)
			check_cursor(st, s, next, st->page->nitems);
		/* a wrong guess: its page is not the next one */
		if (s->xfer != NULL && (next == NULL || strcmp(next, s->cursor) != 0))
			drop_transfer(s);
		if (s->xfer != NULL)
			return true;		/* the guess was right: already asked */

		if (s->cursor)
			pfree(s->cursor);
		s->cursor = NULL;
		if (next != NULL)
		{
			s->cursor = MemoryContextStrdup(st->run_cxt, next);
			if (st->limit >= 0 && st->rows_fetched >= st->limit)
				s->done = true;
			else if (psvc_options_setting(st->server, PSVC_SETTING_PREFETCH))
				start_page(st, s);
		}
		else
		{
			if (!st->detail && st->ep->list->paging == PSVC_PAGING_CURSOR && st->page->has_more)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_ERROR),
						 errmsg("GET %s answered has_more without a next_cursor", st->ep->list->route),
						 errdetail("The listing cannot continue without a cursor.")));
			s->done = true;
			s->complete = true;
		}
		return true;
	}
	return false;
}

/*
 * The page of a 2xx response, in CurrentMemoryContext (the page context),
 * pointing into resp's body and decoded page, which live in the
 * transfer's context (page_body_cxt) as long as the page.  An answer of
 * the response cache may come with its decoded page (json_page_flat.c):
 * then nothing is parsed.  Otherwise the body is decoded, and the page is
 * left beside a cached answer for the next scan.
 */
static PsvcPage *
decode_response(PsvcScanState *st, PsvcHttpResponse *resp)
{
	PsvcPage   *page = NULL;
	char	   *flat;
	size_t		flat_len;
	size_t		room;

	if (resp->decoded != NULL)
		page = psvc_json_page_unflatten(resp->decoded, resp->decoded_len,
										resp->body, resp->body_len, st->nfields);
	if (page != NULL)
		return page;
	page = psvc_json_decode_page_in_place(resp->body, resp->body_len,
										  items_key(st), st->detail,
										  st->nfields, st->fields, st->want_jsonb,
										  psprintf("GET %s", st->detail ?
												   st->ep->detail->route :
												   st->ep->list->route));
	room = psvc_http_decoded_room(resp);
	if (room > 0)
	{
		flat = psvc_json_page_flatten(page, resp->body, resp->body_len,
									  st->nfields, room, &flat_len);
		if (flat != NULL)
		{
			psvc_http_keep_decoded(resp, flat, flat_len);
			pfree(flat);
		}
	}
	return page;
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

static void
fill_slot(PsvcScanState *st, TupleTableSlot *slot, PsvcItem *it)
{
	Stream	   *s = &st->streams[st->cur];
	ErrorContextCallback errcb;
	ScanErrorArg arg = {st, NULL};

	errcb.callback = scan_error_callback;
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
		if (c->def->kind == PSVC_COL_RAW)
			text = pnstrdup(it->json, it->json_len);
		else if (c->field >= 0)
			text = it->values[c->field];

		if (text == NULL && c->echo >= 0)
		{
			PushedValue *pv = &st->pushed[c->echo];
			int			v = value_index(st, c->echo, s->value);

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
	ListCell   *lc;
	int			i;

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
	st->detail = intVal(list_nth(priv, PSVC_PRIV_DETAIL)) != 0;
	st->limit = intVal(list_nth(priv, PSVC_PRIV_LIMIT));

	st->npushed = list_length(pushed);
	st->pushed = palloc0(sizeof(PushedValue) * Max(st->npushed, 1));
	i = 0;
	foreach(lc, pushed)
	{
		List	   *p = lfirst(lc);
		PushedValue *pv = &st->pushed[i];
		Expr	   *expr = list_nth(plan->fdw_exprs, intVal(lsecond(p)));
		const char *colname = strVal(linitial(p));

		for (int a = 0; a < desc->natts; a++)
			if (strcmp(NameStr(TupleDescAttr(desc, a)->attname), colname) == 0)
				pv->def = psvc_fdw_column_def(st->ep, RelationGetRelid(st->rel),
											  TupleDescAttr(desc, a));
		if (pv->def == NULL)
			elog(ERROR, "pushed column \"%s\" not found", colname);
		pv->is_array = intVal(lthird(p)) != 0;
		pv->type = exprType((Node *) expr);
		if (pv->is_array)
			pv->type = get_element_type(pv->type);
		pv->expr = ExecInitExpr(expr, (PlanState *) node);
		i++;
	}

	st->ncols = list_length(attrs);
	st->cols = palloc0(sizeof(ScanColumn) * Max(st->ncols, 1));
	/* room for each column's member and the member an echo is checked in */
	st->fields = palloc0(sizeof(char *) * Max(2 * st->ncols, 1));
	i = 0;
	foreach(lc, attrs)
	{
		ScanColumn *c = &st->cols[i++];
		Form_pg_attribute att = TupleDescAttr(desc, lfirst_int(lc) - 1);
		Oid			infunc;

		c->attno = att->attnum;
		c->def = psvc_fdw_column_def(st->ep, RelationGetRelid(st->rel), att);
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

	st->decoded_sig = psvc_json_decode_signature(items_key(st), st->detail,
												 st->nfields, st->fields,
												 st->want_jsonb,
												 &st->decoded_sig_len);

	st->recheck = ExecInitQual(plan->fdw_recheck_quals, (PlanState *) node);
	if (list_length(priv) > PSVC_PRIV_MISSING &&
		strVal(list_nth(priv, PSVC_PRIV_MISSING))[0] != '\0')
		st->missing = strVal(list_nth(priv, PSVC_PRIV_MISSING));

	/*
	 * The key is that of the role the table's permissions are checked as:
	 * the view owner through a view, else the current user (as
	 * postgres_fdw chooses its connection's user mapping).
	 */
	{
		RangeTblEntry *rte = exec_rt_fetch(plan->scan.scanrelid, node->ss.ps.state);

		st->server->userid = OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
	}

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
			psvc_http_poll();
		}
		fill_slot(st, slot, &st->page->items[st->item++]);
		if (st->recheck == NULL)
			break;
		econtext->ecxt_scantuple = slot;
		if (ExecQual(st->recheck, econtext))
			break;
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
		drop_transfer(&st->streams[i]);
	st->nstreams = 0;
	release_page(st);
}

void
psvc_fdw_rescan(ForeignScanState *node)
{
	PsvcScanState *st = node->fdw_state;

	stop_streams(st);
	st->started = false;
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

/*
 * The request(s) a scan will send, with the values the plan knows
 * (constants) and $n-style placeholders for values known only at run time.
 */
void
psvc_fdw_explain(ForeignScanState *node, ExplainState *es)
{
	PsvcScanState *st = node->fdw_state;
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	List	   *pushed = list_nth(plan->fdw_private, PSVC_PRIV_PUSHED);
	StringInfoData buf;
	PsvcHttpRequest *req;
	Stream		s0 = {0};
	int64		fetched;
	int			nreq = 1;
	ListCell   *lc;
	int			i = 0;

	/* values for the description: constants as they are, others by name */
	foreach(lc, pushed)
	{
		List	   *p = lfirst(lc);
		Expr	   *expr = list_nth(plan->fdw_exprs, intVal(lsecond(p)));
		PushedValue *pv = &st->pushed[i++];

		pv->texts = palloc(sizeof(char *));
		if (IsA(expr, Const) && !((Const *) expr)->constisnull)
		{
			Const	   *c = (Const *) expr;
			Oid			out;
			bool		varlena;

			getTypeOutputInfo(c->consttype, &out, &varlena);
			pv->texts[0] = OidOutputFunctionCall(out, c->constvalue);
			if (pv->is_array)
			{
				ArrayType  *arr = DatumGetArrayTypeP(c->constvalue);

				nreq *= ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
				pv->texts[0] = psprintf("{%s}", pv->def->param);
			}
		}
		else
			pv->texts[0] = psprintf("{%s}", pv->def->kind == PSVC_COL_PATH ? pv->def->param : pv->def->name);
	}
	/* the first request, as planned: not what is left after a run (ANALYZE) */
	fetched = st->rows_fetched;
	st->rows_fetched = 0;
	req = build_request(st, &s0);
	st->rows_fetched = fetched;
	/* a plan without the required key shows it as a placeholder */
	if (st->missing)
	{
		const PsvcColumnDef *c = psvc_endpoint_column(st->ep, st->missing);
		const char *param = c ? c->param : st->missing;

		req->path_params = lappend(req->path_params,
								   psvc_kv(param, psprintf("{%s}", param)));
	}
	/* placeholders are shown as written, not URL-encoded */
	initStringInfo(&buf);
	for (const char *p = psvc_http_describe(req); *p; p++)
	{
		if (strncmp(p, "%7B", 3) == 0 || strncmp(p, "%7D", 3) == 0)
		{
			appendStringInfoChar(&buf, p[2] == 'B' ? '{' : '}');
			p += 2;
		}
		else
			appendStringInfoChar(&buf, *p);
	}
	ExplainPropertyText("Partner Request", buf.data, es);
	if (st->missing)
		ExplainPropertyText("Partner Missing Key", st->missing, es);
	if (nreq > 1)
		ExplainPropertyInteger("Partner Fan-out", NULL, nreq, es);
	if (st->limit >= 0)
		ExplainPropertyInteger("Partner Limit", NULL, st->limit, es);
	if (es->verbose && list_length(plan->fdw_private) > PSVC_PRIV_ESTIMATE &&
		strVal(list_nth(plan->fdw_private, PSVC_PRIV_ESTIMATE))[0] != '\0')
		ExplainPropertyText("Partner Estimate",
							strVal(list_nth(plan->fdw_private, PSVC_PRIV_ESTIMATE)), es);
	if (es->verbose)
		psvc_options_explain(st->server, es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Partner Pages", NULL, st->n_pages, es);
		ExplainPropertyInteger("Partner Requests", NULL, st->n_requests, es);
		ExplainPropertyInteger("Partner Retries", NULL, st->n_retries, es);
		if (st->rows_rejected > 0)
			ExplainPropertyInteger("Rows Removed by Partner Recheck", NULL, st->rows_rejected, es);
		ExplainPropertyInteger("Partner Bytes", NULL, st->n_bytes, es);
		if (st->cache_hits + st->cache_misses > 0)
			ExplainPropertyText("Partner Cache",
								psprintf("hits=" INT64_FORMAT " misses=" INT64_FORMAT,
										 st->cache_hits, st->cache_misses), es);
		if (es->timing)
		{
			ExplainPropertyFloat("Partner Wait Time", "ms", st->wait_ms, 3, es);
			ExplainPropertyFloat("Partner Rate Limit Wait", "ms", st->rl_wait_ms, 3, es);
		}
	}
}
