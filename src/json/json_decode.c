/*-------------------------------------------------------------------------
 *
 * json_decode.c
 *		  Decoding of list and detail responses into items and the values of
 *		  the requested fields, in one pass of PostgreSQL's JSON parser: the
 *		  semantic actions.  The body's encoding, the de-escaping of
 *		  strings, the errors and the cursor peek are in json_decode_util.c.
 *
 * A response body is parsed once, by pg_parse_json, without de-escaping
 * (need_escapes = false): the lexer then validates every token but copies
 * nothing, and the parser allocates nothing per token.  Our semantic
 * actions keep only positions and look at member names only where they
 * matter: the top level of the body (the items member, "pagination"), the
 * top level of each item (the requested fields) and the top level of the
 * pagination object.  For a nested list (items_key "data.events.data")
 * the "top level" is the object the path leads to: the parser's level is
 * compared with the path's depth, and the objects on the way are entered
 * one member name at a time.  Everything deeper is skipped by comparing
 * lex->lex_level with the level of interest, so a large nested value costs
 * no more than the lexer's scan of it.
 *
 * Values are cut from the text: a requested member's value spans from the
 * lexer's token_start at object_field_start to its prev_token_terminator at
 * object_field_end; an item spans from token_start at array_element_start
 * to prev_token_terminator at array_element_end.  A string without a
 * backslash is its text between the quotes; a string with escapes is
 * lexed again on its own with need_escapes = true, so PostgreSQL does the
 * de-escaping and the conversion of \u escapes to the server encoding.
 * Each value is one pnstrdup.  The page keeps its own copy of the body and
 * items point into that copy, so a page lives exactly as long as the
 * context it was decoded in, whatever becomes of the response.  (Measured on
 * pages of 100 items of 150 to 190 bytes: about 1.5 times the time of a
 * bare validating parse of the body, two thirds of a parse with
 * need_escapes = true and no-op actions, where a decoder that lets the
 * parser de-escape everything starts, and 0.4 times jsonb_in.  The lexer
 * takes over half of the time; the copy of the body, about 1 microsecond
 * per 15 kB.  Cutting values in place from that copy instead of pnstrdup
 * saved nothing.)
 *
 * Borrowed shape: this relies on where PostgreSQL 15's recursive-descent
 * parser (src/common/jsonapi.c) leaves the lexer when it calls each action,
 * and on member names being recoverable from the text: a name is the
 * string token between the '{' or ',' that precedes it and the ':' that
 * ends at prev_token_terminator when object_field_start runs.  Only JSON
 * whitespace can stand between those delimiters and the name.
 *
 * With want_jsonb (a scan that returns the column raw as jsonb), other
 * actions wrap these and also feed every token of each item to a jsonb
 * builder (json_decode_jsonb.c), so the item's jsonb comes out of this
 * one pass instead of a second parse of its text by jsonb_in; without it,
 * the parser calls no action for scalars or container ends, as before.
 *
 * The body arrives validated as UTF-8 and converted to the server
 * encoding (http.c, the one place that converts responses), so values are
 * in the server encoding.  Malformed JSON is reported before a body of another shape.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/json/json_decode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"

#include "json_decode_int.h"

/* Most objects an items_key path may go through before its last name. */
#define PSVC_JSON_MAX_DEPTH 4

/* What object_field_end must do with the value that just ended. */
#define CAPTURE_NONE	(-1)
#define CAPTURE_CURSOR	(-2)	/* pagination.next_cursor */

static PsvcPage *decode_page(const char *body, size_t len,
							const char *items_key, bool single,
							int nfields, const char *const *fields,
							bool want_jsonb, const char *what, bool copy);

/* Everything the semantic actions share; see psvc_json_decode_page. */
typedef struct DecodeState
{
	JsonLexContext *lex;
	const char *what;			/* names the request in errors */

	/* the request */
	const char *items_key;		/* NULL: no envelope; else the whole path,
								 * for messages */
	const char *key_name[PSVC_JSON_MAX_DEPTH + 1];	/* its member names */
	int			key_len[PSVC_JSON_MAX_DEPTH + 1];
	int			depth;			/* names before the items member: 0 for
								 * "data", 2 for "data.events.data" */
	int			entered;		/* of those, how many objects the parser
								 * is inside now */
	bool		single;
	int			nfields;
	const char *const *fields;
	int		   *field_len;
	int		   *field_first;	/* index of the first field of that name */
	bool		want_self;		/* some field is "" */
	bool		want_members;	/* some field names a member */
	bool		has_duplicates; /* some member is requested twice */

	/* where the items are */
	int			item_level;		/* lex_level of an item's own value */
	bool		in_items;		/* inside the value of items_key */
	bool		seen_items;
	bool		in_pagination;

	/* the item being read */
	bool		in_item;
	const char *item_start;
	JsonTokenType item_token;
	char	  **values;			/* of the item being read */
	int			capture;		/* field index, CAPTURE_NONE, CAPTURE_CURSOR */
	const char *value_start;
	JsonTokenType value_token;
	int			match_hint;		/* try this field first */

	/* where the name of the next member of the current object begins */
	const char *name_from;

	/* the item's jsonb, built as it is parsed (want_jsonb) */
	bool		want_jsonb;
	PsvcItemJsonb jb;
	const char *scalar_start;	/* where the value being parsed begins */

	/* the result */
	PsvcPage   *page;
	int			items_alloc;
	char	  **value_pool;		/* items_alloc * nfields */

	/* the first shape problem, reported after the parse */
	ShapeProblem problem;
	JsonTokenType problem_token;
	int			problem_index;
} DecodeState;

pg_noreturn static void report_shape(DecodeState *st, const char *what);
static void note_problem(DecodeState *st, ShapeProblem problem,
						 JsonTokenType token);
static char *copy_value(DecodeState *st, const char *start, const char *end,
						JsonTokenType token);
static void member_name(DecodeState *st, const char **name, int *len);
static bool name_is(DecodeState *st, const char *name, int len,
					const char *want, int want_len);
static int	match_field(DecodeState *st, const char *name, int len);
static void begin_item(DecodeState *st, const char *start, JsonTokenType token);
static void end_item(DecodeState *st, const char *end);
static psvc_json_action on_object_start(void *state);
static psvc_json_action on_field_start(void *state, char *fname, bool isnull);
static psvc_json_action on_field_end(void *state, char *fname, bool isnull);
static psvc_json_action on_element_start(void *state, bool isnull);
static psvc_json_action on_element_end(void *state, bool isnull);
static void items_member_start(DecodeState *st);
static psvc_json_action jb_object_start(void *state);
static psvc_json_action jb_object_end(void *state);
static psvc_json_action jb_array_start(void *state);
static psvc_json_action jb_array_end(void *state);
static psvc_json_action jb_field_start(void *state, char *fname, bool isnull);
static psvc_json_action jb_element_start(void *state, bool isnull);
static psvc_json_action jb_scalar(void *state, char *token, JsonTokenType tokentype);
static void pagination_member_start(DecodeState *st);

/*
 * Records the first shape problem.  Parsing goes on, so that malformed JSON
 * later in the body is still reported as such, but nothing more is
 * collected.
 */
static void
note_problem(DecodeState *st, ShapeProblem problem, JsonTokenType token)
{
	if (st->problem != SHAPE_OK)
		return;
	st->problem = problem;
	st->problem_token = token;
	st->problem_index = st->page->nitems;
	st->in_item = false;
	st->in_items = false;
	st->in_pagination = false;
	st->capture = CAPTURE_NONE;
}

/* Raises the error for the problem recorded by note_problem. */
static void
report_shape(DecodeState *st, const char *what)
{
	psvc_json_report_shape(st->problem, st->problem_token, st->items_key,
						   st->problem_index, what);
}

/*
 * The value of a member or of an item as PsvcItem.values holds it, for the
 * text from start to end (a whole value, as the parser delimited it),
 * allocated in CurrentMemoryContext.  JSON null is NULL.
 */
static char *
copy_value(DecodeState *st, const char *start, const char *end,
		   JsonTokenType token)
{
	if (token == JSON_TOKEN_NULL)
		return NULL;
	if (token == JSON_TOKEN_STRING)
	{
		if (memchr(start + 1, '\\', end - start - 2) != NULL)
			return psvc_json_unescape(start, end - start, st->what, true);
		return pnstrdup(start + 1, end - start - 2);
	}
	return pnstrdup(start, end - start);
}

/*
 * The raw text (between the quotes, escapes not resolved) of the name of
 * the member whose object_field_start is running.  See the file header for
 * why this is found between name_from and the ':'.
 */
static inline void
member_name(DecodeState *st, const char **name, int *len)
{
	const char *open = st->name_from;
	const char *close = st->lex->prev_token_terminator - 1;	/* the ':' */

	while (*open != '"')
		open++;
	do
		close--;
	while (*close != '"');
	*name = open + 1;
	*len = close - open - 1;
}

/* Whether a raw member name equals want, resolving escapes if it has any. */
static bool
name_is(DecodeState *st, const char *name, int len,
		const char *want, int want_len)
{
	char	   *plain;

	if (len == want_len && memcmp(name, want, len) == 0)
		return true;
	if (len <= want_len || memchr(name, '\\', len) == NULL)
		return false;
	plain = psvc_json_unescape(name - 1, len + 2, st->what, false);
	return plain != NULL && strlen(plain) == (size_t) want_len &&
		memcmp(plain, want, want_len) == 0;
}

/*
 * The index of the requested field a member name matches, or -1.  Items of
 * one list repeat their members in one order, so the search starts after
 * the last match.
 */
static int
match_field(DecodeState *st, const char *name, int len)
{
	int			i = st->match_hint;
	int			k;

	for (k = 0; k < st->nfields; k++)
	{
		if (st->field_len[i] == len && st->field_first[i] == i &&
			len > 0 && memcmp(st->fields[i], name, len) == 0)
		{
			st->match_hint = (i + 1 < st->nfields) ? i + 1 : 0;
			return i;
		}
		if (++i == st->nfields)
			i = 0;
	}

	/* Rare: an escaped member name.  Compare its de-escaped text. */
	if (memchr(name, '\\', len) != NULL)
	{
		char	   *plain = psvc_json_unescape(name - 1, len + 2, st->what, false);

		if (plain == NULL)
			return -1;			/* a name no field can have */
		for (i = 0; i < st->nfields; i++)
		{
			if (st->field_first[i] == i && st->field_len[i] > 0 &&
				strcmp(st->fields[i], plain) == 0)
				return i;
		}
	}
	return -1;
}

/* Starts an item whose value begins at start with a token of that type. */
static void
begin_item(DecodeState *st, const char *start, JsonTokenType token)
{
	PsvcPage   *page = st->page;

	if (page->nitems == st->items_alloc)
	{
		st->items_alloc *= 2;
		page->items = repalloc(page->items, st->items_alloc * sizeof(PsvcItem));
		if (st->nfields > 0)
			st->value_pool = repalloc(st->value_pool,
									  (Size) st->items_alloc * st->nfields * sizeof(char *));
	}
	st->values = st->value_pool + (Size) page->nitems * st->nfields;
	if (st->nfields > 0)
		memset(st->values, 0, st->nfields * sizeof(char *));
	st->item_start = start;
	st->item_token = token;
	st->in_item = true;
	st->capture = CAPTURE_NONE;
	if (st->want_jsonb)
	{
		psvc_json_jb_begin(&st->jb);
		st->scalar_start = start;
	}
}

/* Ends the current item, whose value ends just before end. */
static void
end_item(DecodeState *st, const char *end)
{
	PsvcPage   *page = st->page;
	PsvcItem   *item = &page->items[page->nitems];

	item->json = st->item_start;
	item->json_len = end - st->item_start;
	item->values = NULL;		/* set when the pool stops moving */
	item->jsonb = st->want_jsonb ? psvc_json_jb_end(&st->jb, item->json_len) : NULL;
	if (st->want_self)
	{
		char	   *self = copy_value(st, st->item_start, end, st->item_token);
		int			i;

		for (i = 0; i < st->nfields; i++)
			if (st->field_len[i] == 0)
				st->values[i] = self;
	}
	if (st->has_duplicates)
	{
		int			i;

		for (i = 0; i < st->nfields; i++)
			if (st->field_first[i] != i)
				st->values[i] = st->values[st->field_first[i]];
	}
	page->nitems++;
	st->in_item = false;

	/* A huge page must stay cancellable. */
	CHECK_FOR_INTERRUPTS();
}

/*
 * The semantic actions.  pg_parse_json calls them for every object, member
 * and element at every depth; each returns at once unless the lexer's
 * level and our flags say the value is one we look at.  They may raise
 * errors (interrupts, encoding): the parser holds no resource.
 */

static psvc_json_action
on_object_start(void *state)
{
	DecodeState *st = (DecodeState *) state;

	st->name_from = st->lex->token_start + 1;
	return PSVC_JSON_OK;
}

/* The member items_key of the top-level object begins. */
static void
items_member_start(DecodeState *st)
{
	JsonTokenType token = st->lex->token_type;

	st->seen_items = true;
	st->page->nitems = 0;		/* a repeated member: the last one counts */
	if (!st->single)
	{
		if (token != JSON_TOKEN_ARRAY_START)
			note_problem(st, SHAPE_ITEMS_NOT_ARRAY, token);
		else
			st->in_items = true;
	}
	else if (token == JSON_TOKEN_NULL)
		return;					/* no item */
	else if (st->want_members && token != JSON_TOKEN_OBJECT_START)
		note_problem(st, SHAPE_ITEM_NOT_OBJECT, token);
	else
		begin_item(st, st->lex->token_start, token);
}

/* A member of the pagination object begins. */
static void
pagination_member_start(DecodeState *st)
{
	JsonTokenType token = st->lex->token_type;
	const char *name;
	int			len;

	member_name(st, &name, &len);
	if (name_is(st, name, len, "has_more", 8))
	{
		if (token == JSON_TOKEN_TRUE)
			st->page->has_more = true;
		else if (token == JSON_TOKEN_FALSE || token == JSON_TOKEN_NULL)
			st->page->has_more = false;
		else
			note_problem(st, SHAPE_HAS_MORE_NOT_BOOLEAN, token);
	}
	else if (name_is(st, name, len, "next_cursor", 11))
	{
		st->page->next_cursor = NULL;
		if (token == JSON_TOKEN_STRING)
		{
			st->capture = CAPTURE_CURSOR;
			st->value_start = st->lex->token_start;
			st->value_token = token;
		}
		else if (token != JSON_TOKEN_NULL)
			note_problem(st, SHAPE_CURSOR_NOT_STRING, token);
	}
}

static psvc_json_action
on_field_start(void *state, char *fname, bool isnull)
{
	DecodeState *st = (DecodeState *) state;
	int			level = st->lex->lex_level;

	if (st->in_item && level == st->item_level + 1)
	{
		const char *name;
		int			len;
		int			i;

		if (!st->want_members)
			return PSVC_JSON_OK;
		member_name(st, &name, &len);
		i = match_field(st, name, len);
		if (i >= 0)
		{
			st->capture = i;
			st->value_start = st->lex->token_start;
			st->value_token = st->lex->token_type;
		}
	}
	else if (st->items_key != NULL && level <= st->depth + 1 &&
			 st->entered == level - 1 && st->problem == SHAPE_OK)
	{
		const char *name;
		int			len;

		member_name(st, &name, &len);
		if (level <= st->depth)
		{
			/* a member on the way to a nested list: enter it if an object */
			if (name_is(st, name, len, st->key_name[level - 1], st->key_len[level - 1]) &&
				st->lex->token_type == JSON_TOKEN_OBJECT_START)
				st->entered = level;
		}
		else if (name_is(st, name, len, st->key_name[st->depth], st->key_len[st->depth]))
			items_member_start(st);
		else if (name_is(st, name, len, "pagination", 10))
		{
			JsonTokenType token = st->lex->token_type;

			if (token == JSON_TOKEN_OBJECT_START)
			{
				st->page->has_pagination = true;
				st->page->has_more = false;
				st->page->next_cursor = NULL;
				st->in_pagination = true;
			}
			else if (token != JSON_TOKEN_NULL)
				note_problem(st, SHAPE_PAGINATION_NOT_OBJECT, token);
		}
	}
	else if (level == st->depth + 2 && st->in_pagination)
		pagination_member_start(st);
	return PSVC_JSON_OK;
}

static psvc_json_action
on_field_end(void *state, char *fname, bool isnull)
{
	DecodeState *st = (DecodeState *) state;
	int			level = st->lex->lex_level;

	/* The next member's name begins after the ',' now being looked at. */
	st->name_from = st->lex->token_start + 1;

	if (st->capture == CAPTURE_NONE)
	{
		if (st->items_key == NULL)
			return PSVC_JSON_OK;
		if (level == st->depth + 1 && st->entered == st->depth)
		{
			if (st->in_item)	/* single: the items member ends */
				end_item(st, st->lex->prev_token_terminator);
			st->in_items = false;
			st->in_pagination = false;
		}
		else if (level <= st->depth && st->entered == level)
			st->entered = level - 1;	/* left an object of the path */
		return PSVC_JSON_OK;
	}
	if (st->capture >= 0 && st->in_item && level == st->item_level + 1)
	{
		st->values[st->capture] = copy_value(st, st->value_start,
											st->lex->prev_token_terminator,
											st->value_token);
		st->capture = CAPTURE_NONE;
	}
	else if (st->capture == CAPTURE_CURSOR && level == st->depth + 2)
	{
		st->page->next_cursor = copy_value(st, st->value_start,
										  st->lex->prev_token_terminator,
										  st->value_token);
		st->capture = CAPTURE_NONE;
	}
	return PSVC_JSON_OK;
}

static psvc_json_action
on_element_start(void *state, bool isnull)
{
	DecodeState *st = (DecodeState *) state;

	if (st->lex->lex_level != st->item_level || st->single)
		return PSVC_JSON_OK;
	if (st->items_key != NULL ? !st->in_items : st->problem != SHAPE_OK)
		return PSVC_JSON_OK;
	if (st->want_members && st->lex->token_type != JSON_TOKEN_OBJECT_START)
	{
		note_problem(st, SHAPE_ELEMENT_NOT_OBJECT, st->lex->token_type);
		return PSVC_JSON_OK;
	}
	begin_item(st, st->lex->token_start, st->lex->token_type);
	return PSVC_JSON_OK;
}

static psvc_json_action
on_element_end(void *state, bool isnull)
{
	DecodeState *st = (DecodeState *) state;

	if (st->in_item && st->lex->lex_level == st->item_level && !st->single)
		end_item(st, st->lex->prev_token_terminator);
	return PSVC_JSON_OK;
}

/*
 * The actions with want_jsonb: they wrap the ones above and, while an
 * item is read, feed its tokens to the item's jsonb builder
 * (json_decode_jsonb.c).  The parser calls an object's or array's start
 * action before it raises lex_level, and a scalar's action after it has
 * lexed past the scalar: the scalar's text is then from scalar_start, set
 * where each member or element begins, to prev_token_terminator.
 */

static psvc_json_action
jb_object_start(void *state)
{
	DecodeState *st = (DecodeState *) state;

	on_object_start(state);
	if (st->in_item)
		psvc_json_jb_container(&st->jb, WJB_BEGIN_OBJECT);
	return PSVC_JSON_OK;
}

static psvc_json_action
jb_object_end(void *state)
{
	DecodeState *st = (DecodeState *) state;

	if (st->in_item)
		psvc_json_jb_container(&st->jb, WJB_END_OBJECT);
	return PSVC_JSON_OK;
}

static psvc_json_action
jb_array_start(void *state)
{
	DecodeState *st = (DecodeState *) state;

	if (st->in_item)
		psvc_json_jb_container(&st->jb, WJB_BEGIN_ARRAY);
	return PSVC_JSON_OK;
}

static psvc_json_action
jb_array_end(void *state)
{
	DecodeState *st = (DecodeState *) state;

	if (st->in_item)
		psvc_json_jb_container(&st->jb, WJB_END_ARRAY);
	return PSVC_JSON_OK;
}

static psvc_json_action
jb_field_start(void *state, char *fname, bool isnull)
{
	DecodeState *st = (DecodeState *) state;
	bool		inside = st->in_item;

	/* A member of the item, or the envelope's member that is the item. */
	on_field_start(state, fname, isnull);
	if (!st->in_item)
		return PSVC_JSON_OK;
	if (inside)
	{
		const char *name;
		int			len;

		member_name(st, &name, &len);
		psvc_json_jb_key(&st->jb, name - 1, len + 2);
	}
	st->scalar_start = st->lex->token_start;
	return PSVC_JSON_OK;
}

static psvc_json_action
jb_element_start(void *state, bool isnull)
{
	DecodeState *st = (DecodeState *) state;

	on_element_start(state, isnull);
	if (st->in_item)
		st->scalar_start = st->lex->token_start;
	return PSVC_JSON_OK;
}

static psvc_json_action
jb_scalar(void *state, char *token, JsonTokenType tokentype)
{
	DecodeState *st = (DecodeState *) state;

	if (st->in_item)
		psvc_json_jb_scalar(&st->jb, st->scalar_start,
							st->lex->prev_token_terminator, token, tokentype);
	if (token != NULL)
		pfree(token);
	return PSVC_JSON_OK;
}

/*
 * Decodes one response body into its items; see json.h for the
 * contract.  Every allocation (the page, the items, their values, the
 * page's copy of the body, in the server encoding) is made in
 * CurrentMemoryContext, the caller's per-page context: resetting it frees
 * the page.  PsvcItem.json points into that copy, so the caller may free
 * body as soon as this returns.  Items of a list must be objects when fields name members; with
 * only "" requested they may be any value.  A single item given as JSON
 * null (e.g. {"data": null}) yields a page of no item.  A member repeated
 * in an object counts with its last occurrence.
 */
PsvcPage *
psvc_json_decode_page(const char *body, size_t len,
					  const char *items_key, bool single,
					  int nfields, const char *const *fields,
					  bool want_jsonb, const char *what)
{
	return decode_page(body, len, items_key, single, nfields, fields,
					   want_jsonb, what, true);
}

/*
 * psvc_json_decode_page without the page's own copy of the body: the page
 * (PsvcItem.json, and values that need no de-escaping) points into body,
 * which must be NUL-terminated at len and outlive the page.  Saves a copy
 * of every page, and a page's worth of memory, to a scan that keeps the
 * response until the page is done (fdw_scan_page.c).
 */
PsvcPage *
psvc_json_decode_page_in_place(const char *body, size_t len,
							   const char *items_key, bool single,
							   int nfields, const char *const *fields,
							   bool want_jsonb, const char *what)
{
	return decode_page(body, len, items_key, single, nfields, fields,
					   want_jsonb, what, false);
}

/*
 * The decoder's state for one page: the path of the items key, the
 * members wanted (and which repeat an earlier one), the items' first
 * room.  CurrentMemoryContext (the page's).
 */
static void
init_state(DecodeState *st, PsvcPage *page, const char *items_key, bool single,
		   int nfields, const char *const *fields, bool want_jsonb,
		   const char *what)
{
	int			i;

	memset(st, 0, sizeof(*st));
	st->page = page;
	st->what = what;
	st->items_key = items_key;
	if (items_key != NULL)
	{
		const char *p = items_key;

		for (;;)
		{
			const char *dot = strchr(p, '.');

			if (st->depth > PSVC_JSON_MAX_DEPTH)
				elog(ERROR, "items key \"%s\" is too deep", items_key);
			st->key_name[st->depth] = p;
			st->key_len[st->depth] = dot ? dot - p : strlen(p);
			if (dot == NULL)
				break;
			st->depth++;
			p = dot + 1;
		}
	}
	st->single = single;
	st->nfields = nfields;
	st->fields = fields;
	st->capture = CAPTURE_NONE;
	st->want_jsonb = want_jsonb;
	if (want_jsonb)
		psvc_json_jb_init(&st->jb);
	if (nfields > 0)
	{
		st->field_len = palloc(nfields * sizeof(int));
		st->field_first = palloc(nfields * sizeof(int));
	}
	for (i = 0; i < nfields; i++)
	{
		int			j;

		st->field_len[i] = strlen(fields[i]);
		st->field_first[i] = i;
		if (st->field_len[i] == 0)
		{
			st->want_self = true;
			continue;
		}
		st->want_members = true;
		for (j = 0; j < i; j++)
		{
			if (strcmp(fields[j], fields[i]) == 0)
			{
				st->field_first[i] = j;
				st->has_duplicates = true;
				break;
			}
		}
	}

	st->items_alloc = single ? 1 : 16;
	page->items = palloc(st->items_alloc * sizeof(PsvcItem));
	if (nfields > 0)
		st->value_pool = palloc((Size) st->items_alloc * nfields * sizeof(char *));

	/* Levels: see on_field_start; an item's members are one level below. */
	if (single)
		st->item_level = items_key ? 1 + st->depth : 0;
	else
		st->item_level = items_key ? 2 + st->depth : 1;
}

/*
 * After a successful parse: whether the body has the shape the page's
 * operation documents (an envelope with its items, a list, an object),
 * noted for report_shape; a single item that is the body itself ends here.
 * first: the body's first byte that is not white space.
 */
static void
check_shape(DecodeState *st, const char *text, size_t len, const char *first)
{
	const char *items_key = st->items_key;
	bool		single = st->single;
	JsonTokenType first_token;

	/* The body is valid JSON, so its first byte tells its kind. */
	switch (*first)
	{
		case '{':
			first_token = JSON_TOKEN_OBJECT_START;
			break;
		case '[':
			first_token = JSON_TOKEN_ARRAY_START;
			break;
		case '"':
			first_token = JSON_TOKEN_STRING;
			break;
		case 't':
			first_token = JSON_TOKEN_TRUE;
			break;
		case 'f':
			first_token = JSON_TOKEN_FALSE;
			break;
		case 'n':
			first_token = JSON_TOKEN_NULL;
			break;
		default:
			first_token = JSON_TOKEN_NUMBER;
			break;
	}

	if (items_key != NULL)
	{
		if (first_token != JSON_TOKEN_OBJECT_START)
			note_problem(st, SHAPE_BODY_NOT_ENVELOPE, first_token);
		else if (!st->seen_items)
			note_problem(st, SHAPE_NO_ITEMS_MEMBER, JSON_TOKEN_INVALID);
	}
	else if (!single)
	{
		if (first_token != JSON_TOKEN_ARRAY_START)
			note_problem(st, SHAPE_BODY_NOT_ARRAY, first_token);
	}
	else if (st->want_members && first_token != JSON_TOKEN_OBJECT_START)
		note_problem(st, SHAPE_BODY_NOT_OBJECT, first_token);
	else if (first_token == JSON_TOKEN_NULL)
		st->in_item = false;		/* no item */
	else
	{
		/* The body is the item, whitespace around it excluded. */
		const char *end = text + len;

		while (end > first &&
			   (end[-1] == ' ' || end[-1] == '\t' ||
				end[-1] == '\n' || end[-1] == '\r'))
			end--;
		st->item_token = first_token;
		end_item(st, end);
	}
}

/* Both of the above; copy says whether the page gets its own copy. */
static PsvcPage *
decode_page(const char *body, size_t len,
			const char *items_key, bool single,
			int nfields, const char *const *fields,
			bool want_jsonb, const char *what, bool copy)
{
	DecodeState st;
	JsonSemAction sem;
	JsonParseErrorType error;
	PsvcPage   *page;
	const char *text;
	const char *first;

	if (len > (size_t) (INT_MAX - 1))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("response of %s is too large to decode", what),
				 errdetail("The response has %zu bytes; the limit is %d.",
						   len, INT_MAX - 1)));

	/* the page's own copy of the body (already in the server encoding) */
	if (copy)
		text = psvc_json_server_text(body, &len, what);
	else
	{
		Assert(body[len] == '\0');
		text = body;
	}

	page = palloc0(sizeof(PsvcPage));
	init_state(&st, page, items_key, single, nfields, fields, want_jsonb, what);

	st.lex = psvc_json_lexer(text, len, GetDatabaseEncoding(), false);

	first = text;
	while (first < text + len &&
		   (*first == ' ' || *first == '\t' || *first == '\n' || *first == '\r'))
		first++;
	if (single && items_key == NULL)
		begin_item(&st, first, JSON_TOKEN_INVALID); /* type known below */

	memset(&sem, 0, sizeof(sem));
	sem.semstate = &st;
	sem.object_start = on_object_start;
	sem.object_field_start = on_field_start;
	sem.object_field_end = on_field_end;
	sem.array_element_start = on_element_start;
	sem.array_element_end = on_element_end;
	if (want_jsonb)
	{
		sem.object_start = jb_object_start;
		sem.object_end = jb_object_end;
		sem.array_start = jb_array_start;
		sem.array_end = jb_array_end;
		sem.object_field_start = jb_field_start;
		sem.array_element_start = jb_element_start;
		sem.scalar = jb_scalar;
	}

	error = pg_parse_json(st.lex, &sem);
	if (error != JSON_SUCCESS)
		psvc_json_report_invalid(error, st.lex, what);

	check_shape(&st, text, len, first);

	if (st.problem != SHAPE_OK)
		report_shape(&st, what);

	if (want_jsonb)
		psvc_json_jb_free(&st.jb);

	/* The pool has stopped moving: point the items at their values. */
	for (int i = 0; i < page->nitems; i++)
		page->items[i].values = nfields > 0 ? st.value_pool + (Size) i * nfields : NULL;

	return page;
}
