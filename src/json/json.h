/*-------------------------------------------------------------------------
 *
 * json.h
 *		  The JSON layer of partner_svc: response bodies into items, with
 *		  PostgreSQL's own JSON parser (common/jsonapi.h) and jsonb.
 *
 * The module is json_decode.c (one pass over a list or detail body: the
 * requested members of every item, and each item's jsonb when asked),
 * json_decode_util.c (text, strings and errors), json_page_flat.c (a
 * decoded page as a block the response cache keeps), json_decode_jsonb.c
 * (the one jsonb builder: an item's jsonb in the decoder's pass, and a
 * whole text's, psvc_json_to_jsonb) and json_error.c (the one reader of
 * error bodies); their shared internals are in json_decode_int.h.  It
 * needs nothing of the other modules: the FDW, the SQL functions and the
 * HTTP client's error messages call it, with a body that http.c has
 * already converted to the server encoding (error messages: as received).
 *
 * Memory: every result (pages, items, values, jsonb, error members) is
 * allocated in CurrentMemoryContext, the caller's per-page or per-call
 * context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/json/json.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_JSON_H
#define PSVC_JSON_H

#include "utils/jsonb.h"

typedef struct PsvcItem
{
	const char *json;			/* the item's JSON text, inside the page's copy
								 * of the body (not NUL-terminated) */
	int			json_len;
	/*
	 * One per requested field: NULL when absent or JSON null; a string's
	 * unescaped text; a number's or boolean's literal text; an object's or
	 * array's JSON text.
	 */
	char	  **values;
	/*
	 * With want_jsonb, the item as jsonb_in would make it of json, built
	 * in the decoding pass; NULL without want_jsonb, or when jsonb_in must
	 * make it (items whose jsonb_in might raise, which then raises there).
	 */
	Jsonb	   *jsonb;
} PsvcItem;

typedef struct PsvcPage
{
	int			nitems;
	PsvcItem   *items;
	bool		has_pagination;	/* the body had a "pagination" object */
	bool		has_more;		/* pagination.has_more */
	char	   *next_cursor;	/* pagination.next_cursor; NULL if null */
} PsvcPage;

/*
 * Decodes one response body.  items_key names the member of the top-level
 * object that holds the items ("data", "result", "executions"), or is NULL
 * when the body itself is the array.  A dotted items_key ("data.events.data",
 * the nested lists of docs/sandbox-movies.md) is a path of members through nested
 * objects; the "pagination" object is then read beside the last of them
 * (data.events.pagination), as it is beside "data" at the top level.  With single, that member (or the
 * body) is one object and gives one item.  fields are member names of each
 * item; "" stands for the item itself (lists of strings).  Only the
 * requested fields are extracted; with want_jsonb, each item's jsonb too
 * (PsvcItem.jsonb).  Allocates in CurrentMemoryContext (the
 * caller's per-page context).  Malformed JSON or another shape raises an
 * ERROR whose message names "what" (method and route template).
 */
extern PsvcPage *psvc_json_decode_page(const char *body, size_t len,
									   const char *items_key, bool single,
									   int nfields, const char *const *fields,
									   bool want_jsonb, const char *what);
/*
 * The same without the page's own copy of the body: the page points into
 * body, which must be NUL-terminated at len and outlive the page.
 */
extern PsvcPage *psvc_json_decode_page_in_place(const char *body, size_t len,
												const char *items_key, bool single,
												int nfields, const char *const *fields,
												bool want_jsonb, const char *what);

/*
 * A guess at pagination.next_cursor read from the end of a body without
 * parsing it, or NULL; the decoded page has the truth.  Allocates in
 * CurrentMemoryContext.
 */
extern char *psvc_json_peek_cursor(const char *body, size_t len);

/*
 * in json_page_flat.c: a decoded page kept beside its body (the response
 * cache's decoded pages), so that a scan of a cached answer skips the
 * parse.  All three allocate in CurrentMemoryContext.
 *
 * The signature of a decoding (the arguments above that shape the page),
 * as *len bytes: two decodings give the same page of the same body
 * exactly when their signatures are equal.
 */
extern char *psvc_json_decode_signature(const char *items_key, bool single,
										int nfields, const char *const *fields,
										bool want_jsonb, size_t *len);
/*
 * A page decoded in place from body, as one block of *len bytes; NULL,
 * having allocated nothing that stays, when it would exceed max_len.
 */
extern char *psvc_json_page_flatten(const PsvcPage *page, const char *body,
									size_t body_len, int nfields,
									size_t max_len, size_t *len);
/*
 * The page of such a block, pointing into flat and body (both must outlive
 * it); NULL when the block does not belong to that body and nfields.
 */
extern PsvcPage *psvc_json_page_unflatten(const char *flat, size_t len,
										  const char *body, size_t body_len,
										  int nfields);

/* in json_decode_jsonb.c */

/*
 * jsonb of a JSON text in the server encoding, as jsonb_in makes it, or
 * NULL when the text is empty or not JSON that jsonb can hold (never
 * raises for a bad body; values beyond jsonb's limits raise as in
 * jsonb_in).  Allocates in CurrentMemoryContext.
 */
extern Jsonb *psvc_json_to_jsonb(const char *text, size_t len);

/* in json_error.c: what a service's error body says */
typedef struct PsvcJsonErrorBody
{
	char	   *error;			/* {"error": scalar} */
	bool		error_is_string;
	char	   *code;			/* {"error": {"code": scalar}} */
	bool		code_is_string;
	char	   *message;		/* {"error": {"message": scalar}} */
	char	   *title;			/* problem+json {"title": ...} */
	char	   *detail;			/* problem+json {"detail": ...} */
	char	   *top_message;	/* {"message": scalar} */
} PsvcJsonErrorBody;

/*
 * Fills *eb from an error body in the given encoding; false (and all
 * NULL) when the body is empty, malformed or nested too deep.  Never
 * raises for the body.  Allocates in CurrentMemoryContext.
 */
extern bool psvc_json_error_body(const char *body, size_t len, int encoding,
								 PsvcJsonErrorBody *eb);

#endif							/* PSVC_JSON_H */
