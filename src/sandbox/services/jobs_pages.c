/*-------------------------------------------------------------------------
 * jobs_pages.c
 *	  The six paging styles of the job families' lists, one a family
 *	  (docs/sandbox-jobs.md, "Paging"): a cursor in the body, a next URL in
 *	  the body, a Link header, offset, page number, none.
 *
 * Design notes:
 *
 * - Every style pages an array of the whole (filtered) list that the
 *   caller built; the lists are short (seeded history plus the jobs a
 *   partner created), so slicing an array is simpler than producing items
 *   by index and costs nothing that matters.
 * - The three cursor styles share core/paging.c's opaque cursors (bound to
 *   the route, filters and partner; edited, foreign or expired ones are
 *   400) under the parameter names cursor, page_token and after.
 * - Every style serves a page shorter than its limit that is not the last
 *   one, so a client that ends a walk on a short page is caught: the
 *   second page of a cursor walk holds half the limit, the page at offset
 *   == limit holds half the limit, and page 2 holds half of per_page,
 *   whenever more items follow (with a limit of 1, a cursor walk's second
 *   page is empty; offset and page numbers keep it whole: an empty page
 *   would hold an offset walk where it is).  Nothing is lost or repeated by it: the
 *   next page starts where the short one ended.
 * - Completion is told by the answer, never by a count: a null cursor or
 *   next URL, no Link rel="next", has_more false (offset and page, which
 *   also give total and total_pages).
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"

#define JOBS_MAX_LIMIT 100
#define JOBS_DEFAULT_LIMIT 20

static const char *const params_cursor[] = {"limit", "cursor", NULL};
static const char *const params_next_url[] = {"limit", "page_token", NULL};
static const char *const params_link[] = {"limit", "after", NULL};
static const char *const params_offset[] = {"limit", "offset", NULL};
static const char *const params_page[] = {"page", "per_page", NULL};
static const char *const params_none[] = {NULL};

const char *const *
jobs_paging_params(const jobs_family *fam)
{
	switch (fam->paging)
	{
		case JOBS_PAGING_CURSOR:
			return params_cursor;
		case JOBS_PAGING_NEXT_URL:
			return params_next_url;
		case JOBS_PAGING_LINK:
			return params_link;
		case JOBS_PAGING_OFFSET:
			return params_offset;
		case JOBS_PAGING_PAGE:
			return params_page;
		case JOBS_PAGING_NONE:
			break;
	}
	return params_none;
}

static json_t *
item_of(int64_t i, void *arg)
{
	return json_incref(json_array_get((json_t *) arg, (size_t) i));
}

/* items[offset, offset + count) as a new array. */
static json_t *
slice(json_t *items, int64_t offset, int64_t count)
{
	json_t	   *out = json_array();

	for (int64_t i = 0; i < count; i++)
		json_array_append(out, json_array_get(items, (size_t) (offset + i)));
	return out;
}

/* Appends s to the buffer at *o, percent-encoding all but unreserved bytes. */
static void
url_encode(char **o, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
	{
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			(*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' || *p == '~')
			*(*o)++ = (char) *p;
		else
		{
			*(*o)++ = '%';
			*(*o)++ = hex[*p >> 4];
			*(*o)++ = hex[*p & 15];
		}
	}
	**o = '\0';
}

/*
 * The absolute URL of the next page: this request's URL (host from the
 * Host header) with its query parameters in their order, the cursor
 * parameter replaced by next.  malloc'd.
 */
static char *
next_url(sb_request *req, const char *cursor_param, const char *next)
{
	const char *host = sb_header(req, "Host");
	size_t		need = 64 + strlen(host ? host : "") + strlen(req->path) * 3 + strlen(next) * 3;
	char	   *out;
	char	   *o;
	bool		first = true;

	for (int i = 0; i < req->nquery; i++)
		need += (strlen(req->query[i].key) + strlen(req->query[i].value)) * 3 + 2;
	out = malloc(need);
	o = out + sprintf(out, "http://%s%s", host ? host : "127.0.0.1", req->path);
	for (int i = 0; i < req->nquery; i++)
	{
		if (strcmp(req->query[i].key, cursor_param) == 0)
			continue;
		*o++ = first ? '?' : '&';
		first = false;
		url_encode(&o, req->query[i].key);
		*o++ = '=';
		url_encode(&o, req->query[i].value);
	}
	*o++ = first ? '?' : '&';
	o += sprintf(o, "%s=", cursor_param);
	url_encode(&o, next);
	return out;
}

/* A query parameter as a whole number in [min, max]; def when absent. */
static bool
int_param(sb_request *req, sb_response *resp, const char *name, int64_t min,
		  int64_t max, int64_t def, const char *code, int64_t *out)
{
	const char *s = sb_query(req, name);

	*out = def;
	if (s == NULL)
		return true;
	if (!sb_parse_int64(s, out) || *out < min || *out > max)
	{
		if (max == INT64_MAX)
			sb_reply_error(req, resp, 400, code,
						   "%s must be an integer of at least %" PRId64, name, min);
		else
			sb_reply_error(req, resp, 400, code,
						   "%s must be an integer from %" PRId64 " to %" PRId64,
						   name, min, max);
		return false;
	}
	return true;
}

/*
 * The first item and the item count of page k of the page style: pages of
 * per_page items, except page 2, which holds half of per_page while more
 * items follow it.
 */
static void
page_bounds(int64_t k, int64_t per_page, int64_t total, int64_t *start, int64_t *count)
{
	int64_t		half = per_page > 1 ? per_page / 2 : 1;
	int64_t		len = per_page;
	int64_t		s;

	if (k == 1)
		s = 0;
	else if (k == 2)
	{
		s = per_page;
		if (s + per_page < total)
			len = half;
	}
	else if (per_page + per_page >= total)
		s = total;				/* page 2 was the last one */
	else
		s = per_page + half + (k - 3) * per_page;
	if (s > total)
		s = total;
	*start = s;
	*count = s + len > total ? total - s : len;
}

static void
reply_page_style(sb_request *req, sb_response *resp, json_t *items)
{
	int64_t		total = (int64_t) json_array_size(items);
	int64_t		page;
	int64_t		per_page;
	int64_t		start;
	int64_t		count;
	int64_t		pages = 1;

	if (!int_param(req, resp, "page", 1, INT64_MAX / 4, 1, "invalid_page", &page) ||
		!int_param(req, resp, "per_page", 1, JOBS_MAX_LIMIT, JOBS_DEFAULT_LIMIT,
				   "invalid_limit", &per_page))
		return;
	/* the last page is the first whose items reach the end of the list */
	for (;;)
	{
		page_bounds(pages, per_page, total, &start, &count);
		if (start + count >= total)
			break;
		pages++;
	}
	if (page > pages)
		start = total, count = 0;
	else
		page_bounds(page, per_page, total, &start, &count);
	sb_reply_json(resp, 200,
				  json_pack("{s:o, s:I, s:I, s:I, s:b}",
							"data", slice(items, start, count),
							"page", (json_int_t) page,
							"per_page", (json_int_t) per_page,
							"total_pages", (json_int_t) pages,
							"has_more", page < pages));
}

static void
reply_offset_style(sb_request *req, sb_response *resp, json_t *items)
{
	int64_t		total = (int64_t) json_array_size(items);
	int64_t		offset;
	int64_t		limit;
	int64_t		count;

	if (!int_param(req, resp, "limit", 1, JOBS_MAX_LIMIT, JOBS_DEFAULT_LIMIT,
				   "invalid_limit", &limit) ||
		!int_param(req, resp, "offset", 0, INT64_MAX / 4, 0, "invalid_offset", &offset))
		return;
	count = offset < total ? total - offset : 0;
	if (count > limit)
		count = limit;
	/*
	 * The page after a first full page is short while more items follow;
	 * never empty, or a client that advances by the rows received would
	 * ask for it forever.
	 */
	if (offset > 0 && offset == limit && offset + count < total && limit > 1)
		count = limit / 2;
	sb_reply_json(resp, 200,
				  json_pack("{s:o, s:I, s:I, s:I, s:b}",
							"items", slice(items, offset, count),
							"offset", (json_int_t) offset,
							"limit", (json_int_t) limit,
							"total", (json_int_t) total,
							"has_more", offset + count < total));
}

void
jobs_reply_list(sb_request *req, sb_response *resp, const jobs_family *fam,
				const char *bind, json_t *items, const char *member)
{
	int64_t		total = (int64_t) json_array_size(items);
	int64_t		offset;
	int64_t		count;
	int64_t		limit;
	char	   *next = NULL;
	char	   *url;
	json_t	   *obj;

	switch (fam->paging)
	{
		case JOBS_PAGING_CURSOR:
			obj = sb_page_nested(req, resp, bind, total, item_of, items);
			if (obj != NULL)
				sb_reply_json(resp, 200, obj);
			return;
		case JOBS_PAGING_NEXT_URL:
			if (!sb_page_slice(req, resp, bind, total, "page_token",
							   &offset, &count, &limit, &next))
				return;
			url = next ? next_url(req, "page_token", next) : NULL;
			sb_reply_json(resp, 200,
						  json_pack("{s:o, s:o}",
									"results", slice(items, offset, count),
									"next", url ? json_string(url) : json_null()));
			free(url);
			free(next);
			return;
		case JOBS_PAGING_LINK:
			if (!sb_page_slice(req, resp, bind, total, "after",
							   &offset, &count, &limit, &next))
				return;
			sb_reply_json(resp, 200, slice(items, offset, count));
			if (next)
			{
				char	   *link;

				url = next_url(req, "after", next);
				link = malloc(strlen(url) + 32);
				sprintf(link, "<%s>; rel=\"next\"", url);
				sb_add_header(resp, "Link", link);
				free(link);
				free(url);
				free(next);
			}
			return;
		case JOBS_PAGING_OFFSET:
			reply_offset_style(req, resp, items);
			return;
		case JOBS_PAGING_PAGE:
			reply_page_style(req, resp, items);
			return;
		case JOBS_PAGING_NONE:
			offset = total > JOBS_NONE_MAX ? total - JOBS_NONE_MAX : 0;
			sb_reply_json(resp, 200,
						  json_pack("{s:o}", member, slice(items, offset, total - offset)));
			return;
	}
}
