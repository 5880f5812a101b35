/*-------------------------------------------------------------------------
 *
 * json_decode_util.c
 *		  Helpers of the response decoder (json_decode.c): the body's
 *		  encoding, the de-escaping of strings, the errors for malformed
 *		  JSON and for bodies of another shape, and the cursor peek.
 *
 * The body is JSON over HTTP, hence UTF-8 (RFC 8259).  http.c validates
 * it and converts it to the server encoding before it comes here (the one
 * place where response bodies are converted); values are therefore in the
 * server encoding.  The lexer alone does not check the encoding.
 *
 * Strings with escapes are lexed again on their own with need_escapes =
 * true, so PostgreSQL does the de-escaping and the conversion of \u
 * escapes to the server encoding (see json_decode.c).
 *
 * Cursor peek: psvc_json_peek_cursor reads next_cursor from the tail of a
 * body by a byte search, so a scan can ask for the next page before it
 * decodes this one (see fdw_scan_page.c).  It knows nothing of the structure,
 * so its answer is only a guess that the decoded page confirms or not.
 *
 * Errors: malformed JSON raises ERRCODE_FDW_INVALID_STRING_FORMAT with the
 * parser's own detail (the remote side sent an unreadable reply; the user's
 * input is not at fault, so not 22P02); a body of another shape raises
 * ERRCODE_FDW_ERROR with a detail that says what was expected.  When both
 * apply, the malformed JSON is reported.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/json/json_decode_util.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"

#include "json_decode_int.h"

/* How far from the end of a body psvc_json_peek_cursor looks. */
#define PEEK_WINDOW		8192

static const char *token_kind(JsonTokenType token);
static void encoding_error_context(void *arg);

/*
 * The page's own copy of the body, for the parser: NUL-terminated, in
 * CurrentMemoryContext.  The body is already in the server encoding:
 * http.c verified its UTF-8 and converted it (psvc_call_finish), the one
 * conversion of every response.  *len is unchanged.
 */
const char *
psvc_json_server_text(const char *body, size_t *len, const char *what)
{
	char	   *copy = palloc(*len + 1);

	memcpy(copy, body, *len);
	copy[*len] = '\0';
	return copy;
}

/*
 * The de-escaped text of one string token (quotes included), lexed on its
 * own so that PostgreSQL's lexer does the de-escaping and the conversion of
 * \u escapes to the server encoding.  Allocates in CurrentMemoryContext.
 * The main pass has checked the token's syntax but not what its escapes
 * mean (surrogate pairs, \u0000): such a string raises the invalid-JSON
 * error if report, else gives NULL.  A character the server encoding lacks
 * always raises PostgreSQL's error, with what in its context.
 */
char *
psvc_json_unescape(const char *token, int len, const char *what, bool report)
{
	JsonLexContext *lex;
	JsonParseErrorType error;
	ErrorContextCallback errcallback;

	errcallback.callback = encoding_error_context;
	errcallback.arg = unconstify(char *, what);
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	lex = psvc_json_lexer(token, len, GetDatabaseEncoding(), true);
	error = json_lex(lex);

	error_context_stack = errcallback.previous;

	if (error != JSON_SUCCESS)
	{
		if (!report)
			return NULL;
		psvc_json_report_invalid(error, lex, what);
	}
	return lex->strval->data;
}


/*
 * Raises the error for a body that the parser rejected.  The detail is the
 * parser's; the context shows the text of the offending line up to the
 * error, as PostgreSQL's own json input does.
 */
void
psvc_json_report_invalid(JsonParseErrorType error, JsonLexContext *lex,
						 const char *what)
{
	const char *end = lex->token_terminator;
	const char *start = lex->line_start;
	bool		cut = false;
	int			sqlstate = ERRCODE_FDW_INVALID_STRING_FORMAT;

	/* Show at most about 50 bytes, starting on a character boundary. */
	while (end - start >= 50)
	{
		start += pg_mblen(start);
		cut = true;
	}

	/* Not the partner's fault: the server encoding cannot hold the text. */
	if (error == JSON_UNICODE_CODE_POINT_ZERO ||
		error == JSON_UNICODE_HIGH_ESCAPE)
		sqlstate = ERRCODE_UNTRANSLATABLE_CHARACTER;

	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("invalid JSON in the response of %s", what),
			 errdetail_internal("%s", json_errdetail(error, lex)),
			 errcontext("JSON data, line %d: %s%.*s",
						lex->line_number, cut ? "..." : "",
						(int) (end - start), start)));
}


/* How a detail names the kind of value found where another was expected. */
static const char *
token_kind(JsonTokenType token)
{
	switch (token)
	{
		case JSON_TOKEN_OBJECT_START:
			return "an object";
		case JSON_TOKEN_ARRAY_START:
			return "an array";
		case JSON_TOKEN_STRING:
			return "a string";
		case JSON_TOKEN_NUMBER:
			return "a number";
		case JSON_TOKEN_TRUE:
		case JSON_TOKEN_FALSE:
			return "a boolean";
		case JSON_TOKEN_NULL:
			return "null";
		default:
			return "an unexpected token";
	}
}


/*
 * Raises the error for the problem recorded by note_problem (json_decode.c):
 * found is what stood where another kind of value was expected, key the
 * items member (NULL without an envelope), index the offending element's.
 */
void
psvc_json_report_shape(ShapeProblem problem, JsonTokenType found_token,
					   const char *key, int index, const char *what)
{
	const char *found = token_kind(found_token);

	switch (problem)
	{
		case SHAPE_BODY_NOT_ENVELOPE:
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("unexpected response shape from %s", what),
					 errdetail("Expected a JSON object with member \"%s\", got %s.",
							   key, found)));
			break;
		case SHAPE_BODY_NOT_ARRAY:
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("unexpected response shape from %s", what),
					 errdetail("Expected a JSON array, got %s.", found)));
			break;
		case SHAPE_BODY_NOT_OBJECT:
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("unexpected response shape from %s", what),
					 errdetail("Expected a JSON object, got %s.", found)));
			break;
		case SHAPE_NO_ITEMS_MEMBER:
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("unexpected response shape from %s", what),
					 errdetail("Expected member \"%s\" in the top-level object, but it is absent.",
							   key)));
			break;
		case SHAPE_ITEMS_NOT_ARRAY:
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("unexpected response shape from %s", what),
					 errdetail("Expected member \"%s\" to be an array, got %s.",
							   key, found)));
			break;
		case SHAPE_ITEM_NOT_OBJECT:
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("unexpected response shape from %s", what),
					 errdetail("Expected member \"%s\" to be an object, got %s.",
							   key, found)));
			break;
		case SHAPE_ELEMENT_NOT_OBJECT:
			if (key)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_ERROR),
						 errmsg("unexpected response shape from %s", what),
						 errdetail("Expected the elements of member \"%s\" to be objects, but the element at index %d is %s.",
								   key, index, found)));
			else
				ereport(ERROR,
						(errcode(ERRCODE_FDW_ERROR),
						 errmsg("unexpected response shape from %s", what),
						 errdetail("Expected the elements of the array to be objects, but the element at index %d is %s.",
								   index, found)));
			break;
		case SHAPE_PAGINATION_NOT_OBJECT:
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("unexpected response shape from %s", what),
					 errdetail("Expected member \"pagination\" to be an object, got %s.",
							   found)));
			break;
		case SHAPE_HAS_MORE_NOT_BOOLEAN:
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("unexpected response shape from %s", what),
					 errdetail("Expected \"pagination.has_more\" to be a boolean, got %s.",
							   found)));
			break;
		case SHAPE_CURSOR_NOT_STRING:
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("unexpected response shape from %s", what),
					 errdetail("Expected \"pagination.next_cursor\" to be a string or null, got %s.",
							   found)));
			break;
		case SHAPE_OK:
			break;
	}
	elog(ERROR, "unrecognized response shape problem %d", (int) problem);
}


/* Names the response in errors about its encoding. */
static void
encoding_error_context(void *arg)
{
	errcontext("response of %s", (const char *) arg);
}

/*
 * A guess at pagination.next_cursor, for asking for the next page before
 * this one is decoded: the value of the last "next_cursor" member that
 * starts in the last PEEK_WINDOW bytes of body, when that value is a
 * string of printable ASCII without escapes followed by '}' or ','.  NULL
 * otherwise (null, absent, escaped, elsewhere in a long body).  The search
 * does not parse: the text found may belong to an item, or the body may be
 * malformed, so the caller compares the guess with the cursor of the
 * decoded page before relying on it.  Costs a scan of the tail, never of
 * the body.  Allocates the result in CurrentMemoryContext.
 */
char *
psvc_json_peek_cursor(const char *body, size_t len)
{
	static const char key[] = "\"next_cursor\"";
	const size_t keylen = sizeof(key) - 1;
	const char *end = body + len;
	size_t		low = len > PEEK_WINDOW ? len - PEEK_WINDOW : 0;
	size_t		at;

	if (len < keylen)
		return NULL;
	/* from the last possible position back to low, without leaving body */
	for (at = len - keylen + 1; at-- > low;)
	{
		const char *v = body + at;
		const char *start;
		const char *close;

		if (*v != '"' || memcmp(v, key, keylen) != 0)
			continue;
		v += keylen;
		while (v < end && (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r'))
			v++;
		if (v == end || *v++ != ':')
			return NULL;
		while (v < end && (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r'))
			v++;
		if (v == end || *v++ != '"')
			return NULL;		/* null, or not a string */
		start = v;
		for (close = start; close < end && *close != '"'; close++)
		{
			unsigned char c = (unsigned char) *close;

			if (c < 0x20 || c > 0x7e || c == '\\')
				return NULL;
		}
		if (close == end || close == start)
			return NULL;
		for (v = close + 1; v < end && (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r'); v++)
			;
		if (v == end || (*v != '}' && *v != ','))
			return NULL;
		return pnstrdup(start, close - start);
	}
	return NULL;
}
