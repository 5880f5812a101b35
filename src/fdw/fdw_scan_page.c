/*-------------------------------------------------------------------------
 *
 * fdw_scan_page.c
 *		  The page source of a scan of a partner_svc foreign table: for
 *		  one stream (fdw_scan.c), the request for its next page, the
 *		  transfer, and the page decoded from the response.
 *
 * Each stream walks its cursor pages; the end is where next_cursor is
 * null, never inferred from a count.  While the executor consumes a page
 * the stream's next page is already in flight (partner_svc.prefetch), so
 * a scan costs about max(fetch, consume) rather than their sum.
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
 * A cursor the service names is checked before it is sent back (length,
 * cycles, runs of empty pages: check_cursor), so that a service that
 * misbehaves ends the scan with an error instead of running it until
 * statement_timeout.
 *
 * Memory: each transfer in a context of its own, a child of the per-scan
 * context (deleting it also releases its curl handle, see http.c), kept
 * while the page decoded from its response is current, since the page
 * points into the body instead of copying it; the decoded page in the
 * per-page context, reset, and the response deleted, before the next page
 * is decoded (psvc_scan_release_page); cursors in the run context.  An
 * answer of the response cache may come with its decoded page
 * (json_page_flat.c): then nothing is parsed, and a page decoded here is
 * left beside a cached answer for the next scan.
 *
 * A 404 on a stream's first page whose error code the list operation
 * names as "nothing here" (catalog.c: movies' content_not_available, an
 * unknown user or nested-list detail) gives no rows; so does a 404 of a
 * detail read.  Any other result is raised by the call module
 * (psvc_call_raise, with the call the page was asked with), with this
 * scan's table and page in its context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_scan_page.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "fdw_scan_int.h"

/*
 * Bounds on what a service may answer to a listing (docs/foreign-tables.md):
 * a cursor has 1 to 4,096 characters (document 2, "Limits"), and a listing
 * ends with an error after this many consecutive pages without items that
 * still name a next page.
 */
#define PSVC_SCAN_MAX_CURSOR		4096
#define PSVC_SCAN_MAX_EMPTY_PAGES	100

static PsvcPage *decode_response(PsvcScanState *st, PsvcResult *resp);

/* error context: which table and page (or column) an error belongs to */
void
psvc_scan_error_callback(void *arg)
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
const char *
psvc_scan_detail_param(const PsvcEndpoint *ep)
{
	if (ep->detail == NULL || ep->detail->params[0] == NULL)
		elog(ERROR, "resource \"%s\" has no detail read by key", ep->resource);
	return ep->detail->params[0]->name;
}

/*
 * Items a page asks for after fetched rows: the page size, or what a
 * LIMIT still needs.
 */
int64
psvc_scan_page_limit(PsvcScanState *st, int64 fetched)
{
	int64		want = psvc_scan_paging_page_size(st);

	if (st->limit >= 0 && st->limit - fetched < want)
		want = Max(st->limit - fetched, 1);
	return want;
}

/* The member of a body that holds the scan's items (json.h). */
const char *
psvc_scan_items_key(PsvcScanState *st)
{
	if (st->detail)
		return st->ep->detail->envelope;
	return st->ep->items_key ? st->ep->items_key : st->ep->list->envelope;
}

/* The value of path parameter name of call, or a placeholder for it. */
static void
set_path(PsvcCall *call, const char *name, const char *value, bool placeholder)
{
	if (placeholder)
		psvc_call_set_placeholder(call, name, value);
	else
		psvc_call_set_path(call, name, value);
}

/*
 * The call that asks for a page of the scan: the table's list or detail
 * read with texts[i], the text of pushed value i, in its place (a path
 * value, the detail key, or a filter), asking for limit items after
 * cursor (NULL: the first page).  placeholders (or NULL) marks the texts
 * that EXPLAIN shows as written, values known only at run time.  Reads
 * nothing of the scan's run.  Allocates in CurrentMemoryContext.
 */
PsvcCall *
psvc_scan_make_call(PsvcScanState *st, const char *const *texts,
					const bool *placeholders, int64 limit, const char *cursor)
{
	PsvcCall   *call = psvc_call_make(st->detail ? st->ep->detail : st->ep->list,
									  st->server, NULL);

	for (int i = 0; i < st->npushed; i++)
	{
		PushedValue *pv = &st->pushed[i];
		const char *value = texts[i];
		bool		placeholder = placeholders != NULL && placeholders[i];

		if (pv->def->kind == PSVC_COL_PATH)
			set_path(call, pv->def->param, value, placeholder);
		else if (psvc_endpoint_is_detail_key(st->ep, pv->def))
		{
			if (st->detail)
				set_path(call, psvc_scan_detail_param(st->ep), value, placeholder);
		}
		else if (!st->detail && placeholder && pv->closed)
		{
			/*
			 * a closed filter always sends its value (the others are never
			 * asked for, fdw_scan_values.c): its placeholder stands for one
			 * of its documented values, so it is shown where they go
			 */
			psvc_call_add_query(call, pv->def->param, value, true);
		}
		else if (!st->detail)
		{
			/* a value no filter value selects exactly: list, then recheck */
			value = psvc_endpoint_filter_param(pv->def, value);
			if (value != NULL)
				psvc_call_add_query(call, pv->def->param, value, placeholder);
		}
	}
	psvc_scan_paging_query(st, call, limit, cursor);
	psvc_call_set_decoding(call, st->decoded_sig, st->decoded_sig_len);
	if (!st->detail && st->ep->list->paging == PSVC_PAGING_LINK)
		psvc_call_set_cache_ttl(call, 0);	/* the cache keeps no Link header */
	else if (st->cache_ttl_ms >= 0)
		psvc_call_set_cache_ttl(call, st->cache_ttl_ms);
	return call;
}

/*
 * Sends the call for stream s's next page, with each pushed value's text
 * for that stream.  The call and the transfer live in a new context of
 * their own, a child of scan_cxt (s->xfer_cxt), until the page decoded
 * from the answer is released.
 */
void
psvc_scan_start_page(PsvcScanState *st, Stream *s)
{
	MemoryContext old;
	const char **texts;

	s->xfer_cxt = AllocSetContextCreate(st->scan_cxt, "partner_svc transfer",
										ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(s->xfer_cxt);
	s->asked = psvc_scan_page_limit(st, st->rows_fetched);
	/*
	 * Page numbers count pages of one size: a stream's later pages are as
	 * long as its first, whatever a LIMIT still needs (page 2 of 2 items
	 * would be items 3 and 4, not the ones after a first page of 10)
	 */
	if (!st->detail && st->ep->list->paging == PSVC_PAGING_PAGE)
	{
		if (s->cursor == NULL)
			s->first_asked = s->asked;
		else
			s->asked = s->first_asked;
	}
	texts = palloc(sizeof(char *) * Max(st->npushed, 1));
	for (int i = 0; i < st->npushed; i++)
		texts[i] = st->pushed[i].texts[psvc_scan_value_index(st, i, s->value)];
	s->call = psvc_scan_make_call(st, texts, NULL, s->asked, s->cursor);
	s->xfer = psvc_call_start(s->call, s->xfer_cxt);
	MemoryContextSwitchTo(old);
	st->n_requests++;
}

/* Cancels the stream's page in flight, if any, and frees its context. */
void
psvc_scan_drop_transfer(Stream *s)
{
	if (s->xfer)
	{
		psvc_call_cancel(s->xfer);
		s->xfer = NULL;
	}
	if (s->xfer_cxt)
	{
		MemoryContextDelete(s->xfer_cxt);
		s->xfer_cxt = NULL;
		s->call = NULL;
	}
}

/*
 * Is this result of stream s's first page a documented "nothing here"?  A
 * detail read's 404 is no row with that key; a list's 404 is no rows when
 * its error code is one the operation's row names (movies'
 * content_not_available).
 */
static bool
is_empty_answer(PsvcScanState *st, Stream *s, PsvcResult *res)
{
	if (res->kind != PSVC_CALL_HTTP_ERROR || res->status != 404 || s->pages > 0)
		return false;
	return st->detail || psvc_call_is_empty(s->call, res);
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
void
psvc_scan_release_page(PsvcScanState *st)
{
	st->page = NULL;
	MemoryContextReset(st->page_cxt);
	if (st->page_body_cxt != NULL)
	{
		MemoryContextDelete(st->page_body_cxt);
		st->page_body_cxt = NULL;
	}
}

/* Counts resp, the answer to one of st's requests, in st's figures. */
static void
count_answer(PsvcScanState *st, const PsvcResult *resp, instr_time waited)
{
	st->wait_ms += INSTR_TIME_GET_MILLISEC(waited);
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
}

/*
 * Asks for s's next page now, on a cursor peeked from resp's body, so that
 * the service prepares it while this page is decoded; the decoded cursor
 * confirms the guess (psvc_scan_fetch_page), or the request is dropped.
 * Only where prefetch would ask for the same page anyway: under a LIMIT,
 * only while a full page is still wanted whatever this page holds, so that
 * neither the size of the next page nor whether there is one depends on
 * this page's items.  The cursor in run_cxt.
 */
static void
prefetch_on_guess(PsvcScanState *st, Stream *s, const PsvcResult *resp)
{
	MemoryContext old;
	char	   *guess;

	if (!psvc_options_setting(st->server, PSVC_SETTING_PREFETCH) ||
		!psvc_scan_paging_fast(st) ||
		(st->limit >= 0 &&
		 st->limit - st->rows_fetched - s->asked <
		 psvc_scan_paging_page_size(st)))
		return;

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
		psvc_scan_start_page(st, s);
	}
}

/*
 * What follows s's current page, the answer resp: what leads to the next
 * page in the list's paging style (fdw_scan_paging.c), checked, and its
 * page asked for (unless the guess of prefetch_on_guess already did); or
 * the end of the stream.  The cursor in run_cxt.
 */
static void
follow_cursor(PsvcScanState *st, Stream *s, const PsvcResult *resp)
{
	MemoryContext old;
	char	   *next;

	old = MemoryContextSwitchTo(st->run_cxt);
	next = psvc_scan_paging_next(st, resp, st->page, s->cursor);
	MemoryContextSwitchTo(old);
	if (next != NULL)
		check_cursor(st, s, next, st->page->nitems);
	/* a wrong guess: its page is not the next one */
	if (s->xfer != NULL && (next == NULL || strcmp(next, s->cursor) != 0))
		psvc_scan_drop_transfer(s);
	if (s->xfer != NULL)
	{
		pfree(next);
		return;					/* the guess was right: already asked */
	}

	if (s->cursor)
		pfree(s->cursor);
	s->cursor = NULL;
	if (next != NULL)
	{
		s->cursor = next;		/* in run_cxt */
		if (st->limit >= 0 && st->rows_fetched >= st->limit)
			s->done = true;
		else if (psvc_options_setting(st->server, PSVC_SETTING_PREFETCH))
			psvc_scan_start_page(st, s);
	}
	else
	{
		if (psvc_scan_paging_fast(st) && st->page->has_more)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("GET %s answered has_more without a next_cursor", st->ep->list->route),
					 errdetail("The listing cannot continue without a cursor.")));
		s->done = true;
		s->complete = true;
	}
}

/*
 * Waits for stream s's page in flight (started by psvc_scan_start_page)
 * and makes it the scan's current page, asking for the next one ahead
 * when prefetch is on.  Returns false, with the stream done, when the
 * answer is the documented "nothing here" (is_empty_answer); any other
 * failure is an ERROR.  The page is decoded in the page context, pointing
 * into the response, which stays in the transfer's context
 * (page_body_cxt) until psvc_scan_release_page; the next cursor in
 * run_cxt.
 */
bool
psvc_scan_fetch_page(PsvcScanState *st, Stream *s)
{
	PsvcResult *resp;
	instr_time	t0,
				t1;
	MemoryContext old;
	MemoryContext body_cxt;
	ErrorContextCallback errcb;
	ScanErrorArg arg = {st, NULL};

	errcb.callback = psvc_scan_error_callback;
	errcb.arg = &arg;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	INSTR_TIME_SET_CURRENT(t0);
	resp = psvc_call_finish(s->xfer);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	count_answer(st, resp, t1);
	s->xfer = NULL;

	if (resp->kind != PSVC_CALL_OK)
	{
		if (!is_empty_answer(st, s, resp))
			psvc_call_raise(s->call, resp);
		st->n_not_found++;
		error_context_stack = errcb.previous;
		MemoryContextDelete(s->xfer_cxt);
		s->xfer_cxt = NULL;
		s->call = NULL;
		s->done = true;
		s->complete = true; /* the documented "nothing here" */
		return false;
	}

	body_cxt = s->xfer_cxt;
	s->xfer_cxt = NULL;
	s->call = NULL;
	prefetch_on_guess(st, s, resp);

	psvc_scan_release_page(st);
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

	follow_cursor(st, s, resp);
	return true;
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
decode_response(PsvcScanState *st, PsvcResult *resp)
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
										  psvc_scan_items_key(st), st->detail,
										  st->nfields, st->fields, st->want_jsonb,
										  psprintf("GET %s", st->detail ?
												   st->ep->detail->route :
												   st->ep->list->route));
	room = psvc_call_decoded_room(resp);
	if (room > 0)
	{
		flat = psvc_json_page_flatten(page, resp->body, resp->body_len,
									  st->nfields, room, &flat_len);
		if (flat != NULL)
		{
			psvc_call_keep_decoded(resp, flat, flat_len);
			pfree(flat);
		}
	}
	return page;
}
