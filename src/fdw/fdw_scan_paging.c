/*-------------------------------------------------------------------------
 *
 * fdw_scan_paging.c
 *		  The paging styles of the scan engine as data: how the list
 *		  operation's paging kind and parameters (PsvcPager, catalog.h)
 *		  become the query of a page's request, and how an answer names
 *		  the next page.  The page source (fdw_scan_page.c) calls these
 *		  two and nothing else of a style.
 *
 * A stream's "cursor" (Stream.cursor) is what leads to its next page, in
 * every style: the cursor of the body, the next URL (of the body or of
 * the Link header), or the offset or page number as decimal text.  So the
 * page source's checks (length, cycles, runs of empty pages) hold for all
 * of them.
 *
 * Completion follows the answer, never a count of items: a cursor or next
 * URL that is null or absent, no Link rel="next"; for offset and page,
 * which name no next page, a page without items or whose top-level
 * has_more is false (docs/declared-endpoints.md).  The catalogue's rows,
 * and a declared cursor at pagination.next_cursor beside its items, are
 * read by the decoder in its one pass (PsvcPage.next_cursor, the fast
 * path the response cache's decoded pages and the prefetch's peek know);
 * another style parses the body once more into jsonb for its members.
 *
 * Memory: a query's texts in the call's context (CurrentMemoryContext);
 * the next cursor in the run context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_scan_paging.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "fdw_scan_int.h"

/* the most members a cursor_path or next_path may go through */
#define PAGING_MAX_DEPTH 8

static const PsvcPager catalogue_pager = {
	.limit_param = "limit",
	.cursor_path = "pagination.next_cursor",
	.cursor_param = "cursor",
};

static const PsvcPager *
pager_of(const PsvcOperation *op)
{
	return op->pager ? op->pager : &catalogue_pager;
}

bool
psvc_scan_paging_fast(const PsvcScanState *st)
{
	const PsvcOperation *op = st->ep->list;

	if (st->detail || op->paging != PSVC_PAGING_CURSOR)
		return false;
	if (op->pager == NULL)
		return true;
	/* the decoder reads the pagination object beside the items' member */
	return strcmp(op->pager->cursor_path, "pagination.next_cursor") == 0 &&
		(st->ep->items_key == NULL || strchr(st->ep->items_key, '.') == NULL);
}

int64
psvc_scan_paging_page_size(const PsvcScanState *st)
{
	const PsvcPager *pg = st->ep->list->pager;

	if (pg != NULL && pg->page_size > 0)
		return pg->page_size;
	return psvc_options_setting(st->server, PSVC_SETTING_PAGE_SIZE);
}

/* The value of hex digit c, or -1. */
static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* len bytes of s with %XX decoded; CurrentMemoryContext. */
static char *
percent_decode(const char *s, int len)
{
	char	   *out = palloc(len + 1);
	int			n = 0;

	for (int i = 0; i < len; i++)
	{
		if (s[i] == '%' && i + 2 < len &&
			hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0)
		{
			out[n++] = (char) (hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
			i += 2;
		}
		else
			out[n++] = s[i];
	}
	out[n] = '\0';
	return out;
}

/*
 * Adds the query of next URL url to call, each parameter as the URL
 * gives it (decoded, since the call encodes).  The URL's path is the
 * route's: only its query leads to the next page.
 */
static void
add_url_query(PsvcCall *call, const char *url)
{
	const char *q = strchr(url, '?');
	const char *end;

	if (q == NULL)
		return;
	q++;
	end = strchr(q, '#');
	if (end == NULL)
		end = q + strlen(q);
	while (q < end)
	{
		const char *amp = memchr(q, '&', end - q);
		const char *stop = amp ? amp : end;
		const char *eq = memchr(q, '=', stop - q);

		if (stop > q)
			psvc_call_add_query(call,
								percent_decode(q, (eq ? eq : stop) - q),
								eq ? percent_decode(eq + 1, stop - eq - 1) : NULL,
								false);
		q = stop + 1;
	}
}

void
psvc_scan_paging_query(const PsvcScanState *st, PsvcCall *call, int64 limit,
					   const char *cursor)
{
	const PsvcOperation *op = st->ep->list;
	const PsvcPager *pg = pager_of(op);

	if (st->detail || op->paging == PSVC_PAGING_NONE)
		return;
	/* a next URL holds every parameter of the next page, its size too */
	if ((op->paging == PSVC_PAGING_NEXT_URL || op->paging == PSVC_PAGING_LINK) &&
		cursor != NULL)
	{
		add_url_query(call, cursor);
		return;
	}
	if (pg->limit_param != NULL)
		psvc_call_add_query(call, pg->limit_param, psprintf(INT64_FORMAT, limit), false);
	if (cursor == NULL)
		return;
	switch (op->paging)
	{
		case PSVC_PAGING_CURSOR:
			psvc_call_add_query(call, pg->cursor_param, cursor, false);
			break;
		case PSVC_PAGING_OFFSET:
			psvc_call_add_query(call, pg->offset_param, cursor, false);
			break;
		case PSVC_PAGING_PAGE:
			psvc_call_add_query(call, pg->page_param, cursor, false);
			break;
		default:
			break;
	}
}

bool
psvc_scan_json_member(JsonbContainer *c, const char *path, JsonbValue *out)
{
	const char *p = path;

	for (int depth = 0; depth < PAGING_MAX_DEPTH; depth++)
	{
		const char *dot = strchr(p, '.');
		int			len = dot ? dot - p : (int) strlen(p);
		JsonbValue *v;

		if (c == NULL || !JsonContainerIsObject(c))
			return false;
		v = getKeyJsonValueFromContainer(c, p, len, out);
		if (v == NULL)
			return false;
		if (dot == NULL)
			return true;
		c = v->type == jbvBinary ? v->val.binary.data : NULL;
		p = dot + 1;
	}
	return false;
}

char *
psvc_scan_json_scalar(const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvString:
			return pnstrdup(v->val.string.val, v->val.string.len);
		case jbvNumeric:
			return DatumGetCString(DirectFunctionCall1(numeric_out,
													   NumericGetDatum(v->val.numeric)));
		default:
			return NULL;
	}
}

/*
 * The URL of the Link header's rel="next" (RFC 8288: "<url>; rel=next",
 * several links separated by commas, rel possibly a list), or NULL.
 */
static char *
link_next(const char *link)
{
	const char *p = link;

	while (p != NULL && *p != '\0')
	{
		const char *lt = strchr(p, '<');
		const char *gt = lt ? strchr(lt, '>') : NULL;
		const char *end;
		char	   *params;

		if (gt == NULL)
			return NULL;
		end = strchr(gt, ',');
		/* a comma inside the next link's URL cannot be: it is in <> */
		params = pnstrdup(gt + 1, end ? end - gt - 1 : strlen(gt + 1));
		for (char *c = params; *c; c++)
			*c = pg_ascii_tolower((unsigned char) *c);
		if (strstr(params, "rel=\"next\"") != NULL ||
			strstr(params, "rel=next") != NULL ||
			(strstr(params, "rel=\"") != NULL && strstr(params, " next") != NULL))
			return pnstrdup(lt + 1, gt - lt - 1);
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/*
 * What leads to the page after page (decoded from resp) of a stream whose
 * cursor was cursor (NULL: the first page), or NULL at the end of the
 * list.  Allocates in CurrentMemoryContext.
 */
char *
psvc_scan_paging_next(const PsvcScanState *st, const PsvcResult *resp,
					  const PsvcPage *page, const char *cursor)
{
	const PsvcOperation *op = st->ep->list;
	const PsvcPager *pg = pager_of(op);
	Jsonb	   *body = NULL;
	JsonbValue	v;

	if (st->detail || op->paging == PSVC_PAGING_NONE)
		return NULL;
	if (psvc_scan_paging_fast(st))
		return page->next_cursor ? pstrdup(page->next_cursor) : NULL;
	if (op->paging == PSVC_PAGING_LINK)
		return resp->link ? link_next(resp->link) : NULL;
	if (resp->body_len > 0 && resp->body[0] != '[')
		body = psvc_json_to_jsonb(resp->body, resp->body_len);
	switch (op->paging)
	{
		case PSVC_PAGING_CURSOR:
			return body && psvc_scan_json_member(&body->root, pg->cursor_path, &v) ?
				psvc_scan_json_scalar(&v) : NULL;
		case PSVC_PAGING_NEXT_URL:
			return body && psvc_scan_json_member(&body->root, pg->next_path, &v) &&
				v.type == jbvString ? psvc_scan_json_scalar(&v) : NULL;
		case PSVC_PAGING_OFFSET:
		case PSVC_PAGING_PAGE:
			{
				int64		at;

				if (page->nitems == 0)
					return NULL;
				if (body && psvc_scan_json_member(&body->root, "has_more", &v) &&
					v.type == jbvBool && !v.val.boolean)
					return NULL;
				if (op->paging == PSVC_PAGING_OFFSET)
					at = (cursor ? pg_strtoint64(cursor) : 0) + page->nitems;
				else
					at = (cursor ? pg_strtoint64(cursor) : 1) + 1;
				return psprintf(INT64_FORMAT, at);
			}
		default:
			return NULL;
	}
}
