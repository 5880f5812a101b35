/*-------------------------------------------------------------------------
 *
 * json_decode_int.h
 *		  Internals shared by json_decode.c and json_decode_util.c, and by
 *		  no other file.
 *
 * The public side of the decoder (psvc_json_decode_page,
 * psvc_json_peek_cursor) is in partner_svc.h; this header holds what the
 * decoder's semantic actions (json_decode.c) use of its helpers
 * (json_decode_util.c): the text of the body and of its strings, and the
 * errors.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/json_decode_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_JSON_DECODE_INT_H
#define PSVC_JSON_DECODE_INT_H

#include "common/jsonapi.h"

#include "partner_svc.h"

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
 * The body in the server encoding, NUL-terminated, in CurrentMemoryContext:
 * validated as UTF-8 and converted, or a plain copy.  *len is updated.
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

/* Raises the error for a body that the parser rejected. */
extern void psvc_json_report_invalid(JsonParseErrorType error,
									 JsonLexContext *lex,
									 const char *what) pg_attribute_noreturn();

/*
 * Raises the error for a shape problem: found is the token where another
 * was expected, key the items member (or NULL), index the element's.
 */
extern void psvc_json_report_shape(ShapeProblem problem, JsonTokenType found,
								   const char *key, int index,
								   const char *what) pg_attribute_noreturn();

#endif							/* PSVC_JSON_DECODE_INT_H */
