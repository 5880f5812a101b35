/*-------------------------------------------------------------------------
 *
 * fdw_scan_int.h
 *		  What the files of the scan engine share, and nothing else
 *		  includes: the state of one scan, its streams and pushed values.
 *
 * The scan is four files, whose calls go one way:
 *	- fdw_scan.c: the executor callbacks (Begin, Iterate, ReScan, End, and
 *	  those of a scan an Append runs asynchronously),
 *	  the streams the pushed values fan out to, which stream's page is
 *	  current, and the rows built from it;
 *	- fdw_scan_values.c: the pushed values of a (re)scan, arrays reduced
 *	  to distinct values, and the combinations that make the streams;
 *	- fdw_scan_page.c: the page source of one stream: the request for its
 *	  next page, the transfer, the response (or the decoded page the
 *	  response cache kept) decoded into a page, the prefetch of the next
 *	  one, and the checks on the cursor it names;
 *	- fdw_scan_paging.c: the paging styles, which fdw_scan_page.c asks
 *	  for a page's paging parameters and for what leads to the next page;
 *	- fdw_explain.c: EXPLAIN, which describes the first page's call as
 *	  the page source's one builder of calls makes it from the plan.
 * fdw_scan.c calls fdw_scan_values.c; it, fdw_scan_values.c and
 * fdw_explain.c call fdw_scan_page.c; never the reverse.  The
 * asynchronous callbacks of fdw_scan.c take rows through the executor
 * (ExecProcNode).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_scan_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_FDW_SCAN_INT_H
#define PSVC_FDW_SCAN_INT_H

#include "fmgr.h"
#include "nodes/execnodes.h"
#include "portability/instr_time.h"
#include "utils/rel.h"

#include "catalog.h"
#include "call.h"
#include "json.h"
#include "options.h"

/* A column the query needs and how to fill it. */
typedef struct ScanColumn
{
	AttrNumber	attno;
	const PsvcColumnDef *def;
	int			field;			/* index in fields[], or -1 */
	int			echo;			/* index in pushed[] to echo, or -1 */
	int			echo_check;		/* index in fields[] of the array member
								 * that must hold the echoed value, or -1 */
	Oid			typid;
	FmgrInfo	in;
	Oid			ioparam;
	int32		typmod;
	bool		decoded_jsonb;	/* raw as jsonb: from PsvcItem.jsonb */
	bool		walk;			/* a declared member read from the item's
								 * jsonb: a dotted json_path, or a json or
								 * jsonb column, which takes it as is */
	Datum		echo_datum;		/* the echoed value, as the column's type */
	int			echo_for;		/* the stream value it was made for, or -1 */
} ScanColumn;

/* A pushed-down equality and its value(s) for the current (re)scan. */
typedef struct PushedValue
{
	const PsvcColumnDef *def;
	ExprState  *expr;
	bool		expr_is_array;	/* expr is an array (col = ANY) */
	int			nalso;			/* further equalities on the column, whose
								 * values are intersected with expr's */
	ExprState **also;
	bool	   *also_array;
	bool		is_array;		/* fans out: expr_is_array, or nalso > 0 */
	Oid			type;			/* of the value, or of an array's elements */
	int			nvalues;
	Datum	   *values;			/* in the scan context */
	char	  **texts;			/* as sent */
	int			stride;			/* array: streams per step of its index
								 * (mixed radix over all the arrays) */
	bool		closed;			/* a filter of documented values on a column
								 * compared exactly: the others are dropped
								 * (psvc_endpoint_filter_excludes) */
	int			field;			/* closed array: index in fields[] of the
								 * member each stream's rows must hold its
								 * value in, or -1 */
} PushedValue;

typedef struct Stream
{
	int			value;			/* the combination of fanned-out values
								 * (value_index) */
	PsvcTransfer *xfer;			/* the page in flight, or NULL */
	PsvcCall   *call;			/* its call (in xfer_cxt), or NULL */
	MemoryContext xfer_cxt;
	char	   *cursor;			/* for the next page; NULL on the first */
	int64		asked;			/* items asked for by the page in flight */
	int64		first_asked;	/* paging by page number: the size of the
								 * stream's first page, which its later
								 * pages keep */
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

/*
 * The state of one scan, in the executor's per-query context (its
 * contexts are described in the header of fdw_scan.c).
 */
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
	const char *missing_hint;	/* its hint when the query has a condition
								 * on it that cannot be sent, or NULL */
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
	int64		n_not_found;	/* first pages answered by a 404 "nothing
								 * here": a key the service does not hold */
	int64		n_bytes;
	double		wait_ms;
	double		rl_wait_ms;		/* of that, waiting for rate-limit budget */
	int64		cache_hits;		/* pages the response cache answered */
	int64		cache_misses;

	/* run asynchronously by an Append (fdw_scan.c) */
	bool		async;			/* node->ss.ps.async_capable */
	bool		would_block;	/* the last iterate stopped at the current
								 * stream's page, still in flight */
	bool		blocked;		/* pending since blocked_at */
	instr_time	blocked_at;

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

/*
 * Which of pushed value i's values stream value v stands for: the streams
 * enumerate every combination of the array values, the first array
 * varying fastest; a single value is index 0.
 */
static inline int
psvc_scan_value_index(const PsvcScanState *st, int i, int v)
{
	const PushedValue *pv = &st->pushed[i];

	if (!pv->is_array || pv->nvalues <= 1)
		return 0;
	return (v / pv->stride) % pv->nvalues;
}

/* in fdw_scan_values.c */
extern int	psvc_scan_eval_values(PsvcScanState *st, ExprContext *econtext);

/* in fdw_scan_page.c */
extern void psvc_scan_error_callback(void *arg);
extern const char *psvc_scan_detail_param(const PsvcEndpoint *ep);
extern const char *psvc_scan_items_key(PsvcScanState *st);
extern int64 psvc_scan_page_limit(PsvcScanState *st, int64 fetched);
extern PsvcCall *psvc_scan_make_call(PsvcScanState *st, const char *const *texts,
									 const bool *placeholders, int64 limit,
									 const char *cursor);
extern void psvc_scan_start_page(PsvcScanState *st, Stream *s);
extern void psvc_scan_drop_transfer(Stream *s);
extern bool psvc_scan_fetch_page(PsvcScanState *st, Stream *s);
extern void psvc_scan_release_page(PsvcScanState *st);

/* in fdw_scan_paging.c: the paging styles, as data of the list operation */
/* Whether the decoder's one pass gives the next cursor (PsvcPage). */
extern bool psvc_scan_paging_fast(const PsvcScanState *st);
/* Items a full page asks for: the table's page_size, else the setting. */
extern int64 psvc_scan_paging_page_size(const PsvcScanState *st);
/* Adds the paging parameters of a page after cursor (NULL: the first). */
extern void psvc_scan_paging_query(const PsvcScanState *st, PsvcCall *call,
								   int64 limit, const char *cursor);
/*
 * The member at dotted path of c into *out, or false; a container's
 * member is jbvBinary.  Allocates in CurrentMemoryContext.
 */
extern bool psvc_scan_json_member(JsonbContainer *c, const char *path, JsonbValue *out);
/* A string (unquoted) or number member as text, else NULL. */
extern char *psvc_scan_json_scalar(const JsonbValue *v);
/* What leads to the next page, or NULL at the end (CurrentMemoryContext). */
extern char *psvc_scan_paging_next(const PsvcScanState *st, const PsvcResult *resp,
								   const PsvcPage *page, const char *cursor);

#endif							/* PSVC_FDW_SCAN_INT_H */
