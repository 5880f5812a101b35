/*-------------------------------------------------------------------------
 *
 * json_page_flat.c
 *		  A decoded page as one position-independent block of bytes, so
 *		  that the response cache can keep it beside the body it came from
 *		  and a later scan of the same answer need not parse it again.
 *
 * A cached scan of a small page spent a third of its time in PostgreSQL's
 * JSON lexer, decoding a body that had been decoded the same way before
 * (docs/performance.md).  The decoded page is a pure function of the body
 * and of how it was decoded (the items member, single or list, the fields
 * in order, whether items' jsonb was built), so the block is tagged with
 * that signature, and a page is rebuilt from it only for the very same
 * signature and the very same body: the cache hands a block back only with
 * the body it was made from (cache.c).
 *
 * Layout, every offset from the start of the block:
 *		FlatHeader
 *		FlatItem[nitems]
 *		int32 value offset[nitems * nfields], -1 for NULL
 *		the data: NUL-terminated values and the cursor, then each item's
 *		jsonb at a MAXALIGN'd offset
 * An item's JSON text is an offset into the body, not a copy.  The block
 * is read only where it was made, in the same database, so Jsonb's binary
 * form and the encoding are the same on both sides.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/json/json_page_flat.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/memutils.h"

#include "json.h"

#define FLAT_MAGIC		0x50534631	/* "PSF1" */

typedef struct FlatHeader
{
	uint32		magic;
	int32		nitems;
	int32		nfields;
	uint32		body_len;		/* of the body the block belongs to */
	int32		cursor;			/* offset of next_cursor, -1: NULL */
	bool		has_pagination;
	bool		has_more;
} FlatHeader;

typedef struct FlatItem
{
	uint32		json_off;		/* into the body */
	int32		json_len;
	int32		jsonb;			/* offset of its Jsonb, -1: NULL */
} FlatItem;

/*
 * The signature of a decoding: the arguments of psvc_json_decode_page that
 * shape its result, as bytes (NUL-separated, so two signatures are equal
 * exactly when the decodings are).  Allocated in CurrentMemoryContext.
 */
char *
psvc_json_decode_signature(const char *items_key, bool single, int nfields,
						   const char *const *fields, bool want_jsonb,
						   size_t *len)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%s%c%c%c%d", items_key ? items_key : "", '\0',
					 items_key ? 'k' : '-', single ? 's' : 'l', want_jsonb);
	for (int i = 0; i < nfields; i++)
	{
		appendStringInfoChar(&buf, '\0');
		appendStringInfoString(&buf, fields[i]);
	}
	*len = buf.len;
	return buf.data;
}

/*
 * Walks page in the block's order, adding up the bytes of its data from
 * *off on; with out, also copies the data there and fills the tables.
 */
static void
flat_data(const PsvcPage *page, const char *body, int nfields, Size *off,
		  char *out)
{
	FlatHeader *h = (FlatHeader *) out;
	FlatItem   *items = out ? (FlatItem *) (out + sizeof(FlatHeader)) : NULL;
	int32	   *voff = out ? (int32 *) (items + page->nitems) : NULL;

	if (page->next_cursor != NULL)
	{
		size_t		n = strlen(page->next_cursor) + 1;

		if (out)
		{
			h->cursor = (int32) *off;
			memcpy(out + *off, page->next_cursor, n);
		}
		*off += n;
	}
	for (int i = 0; i < page->nitems; i++)
	{
		const PsvcItem *it = &page->items[i];

		if (out)
		{
			items[i].json_off = (uint32) (it->json - body);
			items[i].json_len = it->json_len;
			items[i].jsonb = -1;
		}
		for (int f = 0; f < nfields; f++)
		{
			const char *v = it->values[f];
			size_t		n = v ? strlen(v) + 1 : 0;

			if (out)
			{
				voff[(Size) i * nfields + f] = v ? (int32) *off : -1;
				if (v)
					memcpy(out + *off, v, n);
			}
			*off += n;
		}
		if (it->jsonb != NULL)
		{
			size_t		n = VARSIZE(it->jsonb);

			*off = MAXALIGN(*off);
			if (out)
			{
				items[i].jsonb = (int32) *off;
				memcpy(out + *off, it->jsonb, n);
			}
			*off += n;
		}
	}
}

/*
 * page, decoded from body (psvc_json_decode_page_in_place: the items'
 * text points into body), as a block of *len bytes allocated in
 * CurrentMemoryContext; NULL, allocating nothing, when the block would be
 * larger than max_len (or than offsets of the block can say).  A first
 * walk sizes the block, a second fills it.
 */
char *
psvc_json_page_flatten(const PsvcPage *page, const char *body,
					   size_t body_len, int nfields, size_t max_len,
					   size_t *len)
{
	Size		fixed = sizeof(FlatHeader) + page->nitems * sizeof(FlatItem) +
		(Size) page->nitems * nfields * sizeof(int32);
	Size		size = fixed;
	FlatHeader *h;
	char	   *out;

	flat_data(page, body, nfields, &size, NULL);
	if (size > max_len || size > (Size) PG_INT32_MAX || size >= MaxAllocSize ||
		body_len > PG_UINT32_MAX)
		return NULL;

	out = palloc0(size);
	h = (FlatHeader *) out;
	h->magic = FLAT_MAGIC;
	h->nitems = page->nitems;
	h->nfields = nfields;
	h->body_len = (uint32) body_len;
	h->cursor = -1;
	h->has_pagination = page->has_pagination;
	h->has_more = page->has_more;
	size = fixed;
	flat_data(page, body, nfields, &size, out);
	*len = size;
	return out;
}

/*
 * The page held by the block flat of len bytes, made by
 * psvc_json_page_flatten from body with nfields fields; NULL if the block
 * does not fit them (then decode the body).  The page is allocated in
 * CurrentMemoryContext and points into both flat and body, which must
 * outlive it; flat must be MAXALIGN'd (palloc'd).
 */
PsvcPage *
psvc_json_page_unflatten(const char *flat, size_t len, const char *body,
						 size_t body_len, int nfields)
{
	FlatHeader	h;
	const FlatItem *fi;
	const int32 *voff;
	PsvcPage   *page;
	char	  **pool = NULL;
	Size		need;

	if (len < sizeof(h))
		return NULL;
	memcpy(&h, flat, sizeof(h));
	need = sizeof(h) + (Size) h.nitems * sizeof(FlatItem) +
		(Size) h.nitems * nfields * sizeof(int32);
	if (h.magic != FLAT_MAGIC || h.nfields != nfields || h.nitems < 0 ||
		h.body_len != body_len || need > len)
		return NULL;
	fi = (const FlatItem *) (flat + sizeof(h));
	voff = (const int32 *) (flat + sizeof(h) + (Size) h.nitems * sizeof(FlatItem));

	page = palloc0(sizeof(PsvcPage));
	page->nitems = h.nitems;
	page->has_pagination = h.has_pagination;
	page->has_more = h.has_more;
	page->next_cursor = h.cursor >= 0 ? unconstify(char *, flat + h.cursor) : NULL;
	page->items = palloc(Max(h.nitems, 1) * sizeof(PsvcItem));
	if (nfields > 0)
		pool = palloc((Size) Max(h.nitems, 1) * nfields * sizeof(char *));
	for (int i = 0; i < h.nitems; i++)
	{
		PsvcItem   *it = &page->items[i];

		it->json = body + fi[i].json_off;
		it->json_len = fi[i].json_len;
		it->jsonb = fi[i].jsonb >= 0 ?
			(Jsonb *) unconstify(char *, flat + fi[i].jsonb) : NULL;
		it->values = nfields > 0 ? pool + (Size) i * nfields : NULL;
		for (int f = 0; f < nfields; f++)
		{
			int32		off = voff[(Size) i * nfields + f];

			it->values[f] = off >= 0 ? unconstify(char *, flat + off) : NULL;
		}
	}
	return page;
}
