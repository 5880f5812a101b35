/*-------------------------------------------------------------------------
 * paging.c
 *	  Cursor pagination over a list whose items a service produces by
 *	  index, with the movie document's rules applied to every list.
 *
 * A cursor is opaque to clients but simple inside: base64url of
 * "offset.page.issued.bindhash.mac".  "bindhash" ties it to the endpoint,
 * its filters and its sort (the caller's bind string), "issued" lets it
 * expire after 24 sandbox hours, and "mac" (seeded) makes an edited
 * cursor invalid.  "page" counts pages served in this walk: the choice of
 * a short page hashes it, so an empty page with has_more still leads
 * somewhere new on the next request.
 *
 * Nested lists (sb_page_nested, docs/sandbox-movies.md, paging rule 4) use the
 * same cursors and window but return the {"data","pagination"} object for
 * the caller's detail instead of replying, and make the second page of
 * every walk short (half the limit) while more items follow, so a client
 * meets a short page on every walk of three pages or more.
 *
 * Page cache (sb_page_pure): lists whose items are a pure function of the
 * bind string and the index (the movie content lists: text drawn from the
 * seed) keep the serialised "data" array of a page in a bounded LRU keyed
 * by (bind, offset, count), and the envelope around it is written as text.
 * Producing a page of 100 themes through jansson's DOM costs ~0.25 ms of
 * CPU, nearly all of a cursor walk's time per page on loopback; a cached
 * page costs a copy.  The bytes are the same either way: the array text
 * is json_dumps of the same DOM, the envelope is written exactly as
 * jansson writes it compactly (members in insertion order).  The cache is
 * bounded by page_cache_mb (0 turns it off) and emptied by any config
 * change and by reset; it is only touched with the state lock held.
 *-------------------------------------------------------------------------
 */
#include "sandbox.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CURSOR_TTL_MS (24.0 * 60.0 * SB_MINUTE)
#define MAX_LIMIT 100
#define DEFAULT_LIMIT 20

static const char b64url[] =
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void
encode(const char *in, char *out)
{
	size_t		n = strlen(in);
	size_t		o = 0;

	for (size_t i = 0; i < n; i += 3)
	{
		uint32_t	v = (uint32_t) (unsigned char) in[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t) (unsigned char) in[i + 1] << 8;
		if (i + 2 < n)
			v |= (uint32_t) (unsigned char) in[i + 2];
		out[o++] = b64url[(v >> 18) & 63];
		out[o++] = b64url[(v >> 12) & 63];
		if (i + 1 < n)
			out[o++] = b64url[(v >> 6) & 63];
		if (i + 2 < n)
			out[o++] = b64url[v & 63];
	}
	out[o] = '\0';
}

/* Returns false on a character outside the alphabet or a bad length. */
static bool
decode(const char *in, char *out, size_t outlen)
{
	size_t		n = strlen(in);
	size_t		o = 0;
	uint32_t	acc = 0;
	int			bits = 0;

	if (n % 4 == 1)
		return false;
	for (size_t i = 0; i < n; i++)
	{
		const char *p = strchr(b64url, in[i]);

		if (in[i] == '\0' || p == NULL)
			return false;
		acc = (acc << 6) | (uint32_t) (p - b64url);
		bits += 6;
		if (bits >= 8)
		{
			bits -= 8;
			if (o + 1 >= outlen)
				return false;
			out[o++] = (char) ((acc >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	return true;
}

static uint64_t
cursor_mac(int64_t offset, int64_t page, int64_t issued, uint64_t bindhash)
{
	return sb_hash(sb_hash((uint64_t) offset, (uint64_t) page),
				   sb_hash((uint64_t) issued, bindhash ^ 0xc0c0a5ULL));
}

static char *
cursor_make(const char *bind, int64_t offset, int64_t page)
{
	char		plain[160];
	char	   *out;
	int64_t		issued = sb_sandbox_now_ms();
	uint64_t	bh = sb_hash_str(bind, 0xb1dULL);

	/*
	 * issued is zero-padded, so that a cursor's length (and a page's size)
	 * does not depend on how long the sandbox has run: byte counts a test
	 * or the README shows are then the same from run to run.
	 */
	snprintf(plain, sizeof(plain), "%" PRId64 ".%" PRId64 ".%013" PRId64 ".%016" PRIx64 ".%016" PRIx64,
			 offset, page, issued, bh, cursor_mac(offset, page, issued, bh));
	out = malloc(strlen(plain) * 2 + 4);
	encode(plain, out);
	return out;
}

/*
 * Checks a cursor against bind; on failure replies 400 with the reason and
 * returns false.
 */
static bool
cursor_parse(sb_request *req, sb_response *resp, const char *bind,
			 const char *cursor, int64_t *offset, int64_t *page)
{
	char		plain[200];
	int64_t		off,
				pg,
				issued;
	uint64_t	bh,
				mac;
	int			used = 0;

	if (strlen(cursor) < 1 || strlen(cursor) > 4096 ||
		!decode(cursor, plain, sizeof(plain)) ||
		sscanf(plain, "%" SCNd64 ".%" SCNd64 ".%" SCNd64 ".%16" SCNx64 ".%16" SCNx64 "%n",
			   &off, &pg, &issued, &bh, &mac, &used) != 5 ||
		plain[used] != '\0' ||
		mac != cursor_mac(off, pg, issued, bh) || off < 0)
	{
		sb_reply_error(req, resp, 400, "invalid_cursor",
					   "the cursor is not valid; restart the listing without a cursor");
		return false;
	}
	if (bh != sb_hash_str(bind, 0xb1dULL))
	{
		sb_reply_error(req, resp, 400, "cursor_mismatch",
					   "the cursor belongs to another endpoint, filter or sort; restart the listing without a cursor");
		return false;
	}
	if ((double) (sb_sandbox_now_ms() - issued) > CURSOR_TTL_MS)
	{
		sb_reply_error(req, resp, 400, "cursor_expired",
					   "the cursor has expired; restart the listing without a cursor");
		return false;
	}
	*offset = off;
	*page = pg;
	return true;
}

/* ---- page cache ---- */

#define CACHE_BUCKETS 4096

typedef struct page_entry
{
	struct page_entry *hnext;	/* bucket chain */
	struct page_entry *prev;	/* LRU list, most recent first */
	struct page_entry *next;
	uint64_t	hash;
	int64_t		offset;
	int64_t		count;
	char	   *bind;
	char	   *text;			/* the "data" array, compact JSON */
	size_t		len;
} page_entry;

static page_entry *buckets[CACHE_BUCKETS];
static page_entry *lru_head;
static page_entry *lru_tail;
static size_t cache_bytes;
static int64_t cache_pages;
static int64_t cache_hits;
static int64_t cache_misses;

static uint64_t
page_key(const char *bind, int64_t offset, int64_t count)
{
	return sb_hash(sb_hash_str(bind, 0x9a6eULL), sb_hash((uint64_t) offset, (uint64_t) count));
}

static void
lru_unlink(page_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		lru_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		lru_tail = e->prev;
	e->prev = e->next = NULL;
}

static void
lru_push(page_entry *e)
{
	e->prev = NULL;
	e->next = lru_head;
	if (lru_head)
		lru_head->prev = e;
	lru_head = e;
	if (lru_tail == NULL)
		lru_tail = e;
}

static void
entry_drop(page_entry *e)
{
	page_entry **pp = &buckets[e->hash % CACHE_BUCKETS];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	lru_unlink(e);
	cache_bytes -= e->len + strlen(e->bind) + sizeof(page_entry);
	cache_pages--;
	free(e->bind);
	free(e->text);
	free(e);
}

/* Empties the page cache (config change, reset). */
void
sb_page_cache_clear(void)
{
	while (lru_tail)
		entry_drop(lru_tail);
	cache_hits = cache_misses = 0;
}

/* {"pages","bytes","hits","misses"} of the cache since it was last emptied. */
json_t *
sb_page_cache_json(void)
{
	return json_pack("{s:I, s:I, s:I, s:I}", "pages", (json_int_t) cache_pages,
					 "bytes", (json_int_t) cache_bytes, "hits", (json_int_t) cache_hits,
					 "misses", (json_int_t) cache_misses);
}

static page_entry *
cache_find(const char *bind, int64_t offset, int64_t count)
{
	uint64_t	h = page_key(bind, offset, count);

	for (page_entry *e = buckets[h % CACHE_BUCKETS]; e; e = e->hnext)
		if (e->hash == h && e->offset == offset && e->count == count &&
			strcmp(e->bind, bind) == 0)
		{
			lru_unlink(e);
			lru_push(e);
			return e;
		}
	return NULL;
}

/* Takes text (malloc'd); evicts least recently used pages over the bound. */
static void
cache_add(const char *bind, int64_t offset, int64_t count, char *text, size_t len)
{
	size_t		limit = (size_t) sb_cfg.page_cache_mb * 1024 * 1024;
	page_entry *e;

	e = malloc(sizeof(page_entry));
	e->hash = page_key(bind, offset, count);
	e->offset = offset;
	e->count = count;
	e->bind = strdup(bind);
	e->text = text;
	e->len = len;
	e->hnext = buckets[e->hash % CACHE_BUCKETS];
	buckets[e->hash % CACHE_BUCKETS] = e;
	lru_push(e);
	cache_bytes += len + strlen(bind) + sizeof(page_entry);
	cache_pages++;
	while (cache_bytes > limit && lru_tail)
		entry_drop(lru_tail);
}

/* ---- the page ---- */

/*
 * Reads limit and cursor and decides the window of the page: its limit,
 * offset, walk page number and item count.  Replies 400 and returns false
 * on a bad limit or cursor.  short_page_two: the second page of every
 * walk (page 1) is short, half the limit, while more items follow (the
 * nested lists' rule); other pages are short at short_page_rate.
 */
static bool
page_window_named(sb_request *req, sb_response *resp, const char *bind, int64_t total,
				  bool short_page_two, const char *cursor_param, int64_t *limit_out,
				  int64_t *offset_out, int64_t *page_out, int64_t *count_out)
{
	const char *limit_s = sb_query(req, "limit");
	const char *cursor = sb_query(req, cursor_param);
	int64_t		limit = DEFAULT_LIMIT;
	int64_t		offset = 0;
	int64_t		page = 0;
	int64_t		count;

	if (limit_s != NULL &&
		(!sb_parse_int64(limit_s, &limit) || limit < 1 || limit > MAX_LIMIT))
	{
		sb_reply_error(req, resp, 400, "invalid_limit",
					   "limit must be an integer from 1 to %d", MAX_LIMIT);
		return false;
	}
	if (cursor != NULL && !cursor_parse(req, resp, bind, cursor, &offset, &page))
		return false;

	count = limit;
	if (offset + count > total)
		count = total - offset;
	if (count < 0)
		count = 0;
	/* A short page, only where more items follow, so the end stays exact. */
	if (offset + count < total && short_page_two && page == 1)
		count = limit / 2;
	else if (offset + count < total && sb_cfg.short_page_rate > 0)
	{
		uint64_t	h = sb_hash(sb_hash_str(bind, (uint64_t) offset), (uint64_t) page);

		if ((double) (h % 1000000) / 1e6 < sb_cfg.short_page_rate)
			count = (int64_t) ((h >> 20) % (uint64_t) count);
	}
	*limit_out = limit;
	*offset_out = offset;
	*page_out = page;
	*count_out = count;
	return true;
}

/* page_window of the cursor parameter "cursor", the movie document's. */
static bool
page_window(sb_request *req, sb_response *resp, const char *bind, int64_t total,
			bool short_page_two, int64_t *limit_out, int64_t *offset_out,
			int64_t *page_out, int64_t *count_out)
{
	return page_window_named(req, resp, bind, total, short_page_two, "cursor",
							 limit_out, offset_out, page_out, count_out);
}

/*
 * Shared by sb_page and sb_page_pure.  pure: items are a pure function of
 * (bind, index), so the page's "data" text may come from or go to the
 * cache, and the envelope is written as text (extra must be NULL).
 */
static void
page_reply(sb_request *req, sb_response *resp, const char *bind,
		   int64_t total, sb_item_fn item, void *arg, json_t *extra, bool pure)
{
	int64_t		limit;
	int64_t		offset;
	int64_t		page;
	int64_t		count;
	json_t	   *data;
	json_t	   *obj;
	bool		has_more;
	char	   *next = NULL;

	if (!page_window(req, resp, bind, total, false, &limit, &offset, &page, &count))
	{
		json_decref(extra);
		return;
	}
	has_more = offset + count < total;

	if (pure && extra == NULL && sb_cfg.page_cache_mb > 0)
	{
		page_entry *e = cache_find(bind, offset, count);
		char		tail[512];
		size_t		tlen;
		char	   *body;
		char	   *text = NULL;
		size_t		len;
		const char *dtext;

		if (e != NULL)
		{
			cache_hits++;
			dtext = e->text;
			len = e->len;
		}
		else
		{
			cache_misses++;
			data = json_array();
			for (int64_t i = 0; i < count; i++)
				json_array_append_new(data, item(offset + i, arg));
			text = json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY);
			json_decref(data);
			if (text == NULL)
			{
				sb_reply_error(req, resp, 500, "internal", "could not encode");
				return;
			}
			dtext = text;
			len = strlen(text);
		}
		if (has_more)
			next = cursor_make(bind, offset + count, page + 1);
		/* as jansson writes {"limit":L,"has_more":B,"next_cursor":C} */
		tlen = (size_t) snprintf(tail, sizeof(tail),
								 ",\"pagination\":{\"limit\":%" PRId64 ",\"has_more\":%s,\"next_cursor\":%s%s%s}}",
								 limit, has_more ? "true" : "false",
								 next ? "\"" : "", next ? next : "null", next ? "\"" : "");
		free(next);
		body = malloc(8 + len + tlen + 1);
		memcpy(body, "{\"data\":", 8);
		memcpy(body + 8, dtext, len);
		memcpy(body + 8 + len, tail, tlen + 1);
		if (text != NULL)
			cache_add(bind, offset, count, text, len);
		sb_reply_raw(resp, 200, "application/json", body, 8 + len + tlen);
		free(body);
		return;
	}

	data = json_array();
	for (int64_t i = 0; i < count; i++)
		json_array_append_new(data, item(offset + i, arg));
	if (has_more)
		next = cursor_make(bind, offset + count, page + 1);

	obj = extra ? extra : json_object();
	json_object_set_new(obj, "data", data);
	json_object_set_new(obj, "pagination",
						json_pack("{s:I, s:b, s:o}", "limit", (json_int_t) limit,
								  "has_more", has_more,
								  "next_cursor", next ? json_string(next) : json_null()));
	free(next);
	sb_reply_json(resp, 200, obj);
}

void
sb_page(sb_request *req, sb_response *resp, const char *bind,
		int64_t total, sb_item_fn item, void *arg, json_t *extra)
{
	page_reply(req, resp, bind, total, item, arg, extra, false);
}

void
sb_page_pure(sb_request *req, sb_response *resp, const char *bind,
			 int64_t total, sb_item_fn item, void *arg)
{
	page_reply(req, resp, bind, total, item, arg, NULL, true);
}

/*
 * A page of a nested list (docs/sandbox-movies.md, paging rule 4): the object
 * {"data":[...],"pagination":{...}} that the caller puts inside its detail
 * object.  limit and cursor are read from the detail request's query; the
 * second page of every walk is short while more items follow.  Returns a
 * new reference, or NULL after replying 400 (bad limit or cursor).
 */
json_t *
sb_page_nested(sb_request *req, sb_response *resp, const char *bind,
			   int64_t total, sb_item_fn item, void *arg)
{
	int64_t		limit;
	int64_t		offset;
	int64_t		page;
	int64_t		count;
	json_t	   *data;
	char	   *next = NULL;
	json_t	   *obj;

	if (!page_window(req, resp, bind, total, true, &limit, &offset, &page, &count))
		return NULL;
	data = json_array();
	for (int64_t i = 0; i < count; i++)
		json_array_append_new(data, item(offset + i, arg));
	if (offset + count < total)
		next = cursor_make(bind, offset + count, page + 1);
	obj = json_pack("{s:o, s:{s:I, s:b, s:o}}", "data", data,
					"pagination", "limit", (json_int_t) limit,
					"has_more", next != NULL,
					"next_cursor", next ? json_string(next) : json_null());
	free(next);
	return obj;
}

/*
 * The window of a cursor walk for a caller that shapes the page itself
 * (services/jobs_pages.c: a next URL, a Link header).  The cursor is read
 * from cursor_param; the second page of every walk is short while more
 * items follow, as in a nested list.  *next is malloc'd, or NULL on the
 * last page.  Returns false after replying 400.
 */
bool
sb_page_slice(sb_request *req, sb_response *resp, const char *bind,
			  int64_t total, const char *cursor_param, int64_t *offset,
			  int64_t *count, int64_t *limit, char **next)
{
	int64_t		page;

	*next = NULL;
	if (!page_window_named(req, resp, bind, total, true, cursor_param,
						   limit, offset, &page, count))
		return false;
	if (*offset + *count < total)
		*next = cursor_make(bind, *offset + *count, page + 1);
	return true;
}
