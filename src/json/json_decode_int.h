/*-------------------------------------------------------------------------
 *
 * json_decode_int.h
 *		  Internals shared by json_decode.c, json_decode_util.c and
 *		  json_decode_jsonb.c, and by no other file.
 *
 * The public side of the decoder (psvc_json_decode_page,
 * psvc_json_peek_cursor) is in json.h; this header holds what the
 * decoder's semantic actions (json_decode.c) use of its helpers: the text
 * of the body and of its strings, and the errors (json_decode_util.c),
 * and the building of items' jsonb (json_decode_jsonb.c).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/json/json_decode_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_JSON_DECODE_INT_H
#define PSVC_JSON_DECODE_INT_H

#include "common/jsonapi.h"
#include "utils/jsonb.h"

#include "json.h"
#include "pg_compat.h"

/* What was wrong with the shape of a well-formed body. */
typedef enum ShapeProblem
{
	SHAPE_OK = 0,
	SHAPE_BODY_NOT_ENVELOPE,	/* items_key given, body not an object */
	SHAPE_BODY_NOT_ARRAY,		/* list without items_key, body not an array */
	SHAPE_BODY_NOT_OBJECT,		/* single item without items_key */
	SHAPE_NO_ITEMS_MEMBER,		/* items_key absent from the body */
	SHAPE_ITEMS_NOT_ARRAY,		/* list: items member not an array */
	SHAPE_ITEM_NOT_OBJECT,		/* single: items member not an object */
	SHAPE_ELEMENT_NOT_OBJECT,	/* list: an element is not an object */
	SHAPE_PAGINATION_NOT_OBJECT,
	SHAPE_HAS_MORE_NOT_BOOLEAN,
	SHAPE_CURSOR_NOT_STRING
} ShapeProblem;

/*
 * A NUL-terminated copy of the body (already in the server encoding,
 * converted by http.c) in CurrentMemoryContext.
 */
extern const char *psvc_json_server_text(const char *body, size_t *len,
										 const char *what);

/*
 * The de-escaped text of one string token (quotes included), in
 * CurrentMemoryContext; NULL for escapes that mean nothing valid when
 * !report, else the invalid-JSON error.
 */
extern char *psvc_json_unescape(const char *token, int len, const char *what,
								bool report);

/*
 * The jsonb of one item, built from the tokens the decoder's actions feed
 * (json_decode_jsonb.c).  ok turns false where jsonb_in must make it.
 */
typedef struct PsvcItemJsonb
{
	bool		ok;
	JsonbParseState *state;
	JsonbValue *result;
	MemoryContext cxt;			/* the building's garbage */
} PsvcItemJsonb;

extern void psvc_json_jb_init(PsvcItemJsonb *b);
extern void psvc_json_jb_free(PsvcItemJsonb *b);
extern void psvc_json_jb_begin(PsvcItemJsonb *b);
extern Jsonb *psvc_json_jb_end(PsvcItemJsonb *b, int text_len);
extern void psvc_json_jb_container(PsvcItemJsonb *b, JsonbIteratorToken token);
extern void psvc_json_jb_key(PsvcItemJsonb *b, const char *token, int len);
extern void psvc_json_jb_scalar(PsvcItemJsonb *b, const char *start,
								const char *end, const char *token,
								JsonTokenType type);

/* Raises the error for a body that the parser rejected. */
pg_noreturn extern void psvc_json_report_invalid(JsonParseErrorType error,
									 JsonLexContext *lex,
									 const char *what);

/*
 * Raises the error for a shape problem: found is the token where another
 * was expected, key the items member (or NULL), index the element's.
 */
pg_noreturn extern void psvc_json_report_shape(ShapeProblem problem, JsonTokenType found,
								   const char *key, int index,
								   const char *what);

#endif							/* PSVC_JSON_DECODE_INT_H */
