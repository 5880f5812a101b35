/*-------------------------------------------------------------------------
 *
 * json_error.c
 *		  The one reader of the partner services' error bodies, used by the
 *		  HTTP client's error messages (http_errors.c) and by the SQL
 *		  functions that look at a service's error code (functions.c).
 *
 * The services answer errors in a few shapes: {"error":{"code","message"}}
 * (orders, movies), {"error":"..."} (scheduler, files), problem+json
 * ({"title","detail"}) and {"message":"..."}.  One walk of PostgreSQL's
 * JSON parser (with de-escaping) picks out those members, at the depths
 * where they mean that, and ignores everything else.
 *
 * An error body is whatever the service (or a proxy in between) sent, so
 * nothing here raises for it: malformed text gives nothing, and a body
 * nested deeper than PSVC_JSON_ERROR_DEPTH is not parsed at all (the
 * parser's recursion would otherwise reach check_stack_depth, which
 * raises).  Deeper than that, none of the shapes above is meant.
 *
 * Memory: the strings found are allocated in CurrentMemoryContext.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/json/json_error.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/jsonapi.h"
#include "utils/memutils.h"

#include "json.h"
#include "pg_compat.h"

/* Bodies nested deeper than this are not parsed. */
#define PSVC_JSON_ERROR_DEPTH	32

/* The walk: where it is, and the result it fills in. */
typedef struct ErrorWalk
{
	int			depth;
	char	   *field[3];		/* member being read at depths 1 and 2 */
	bool		array[3];		/* depth is an array */
	PsvcJsonErrorBody *eb;
} ErrorWalk;

static psvc_json_action
ew_object_start(void *state)
{
	ErrorWalk  *ew = (ErrorWalk *) state;

	ew->depth++;
	if (ew->depth < lengthof(ew->field))
	{
		ew->field[ew->depth] = NULL;
		ew->array[ew->depth] = false;
	}
	return PSVC_JSON_OK;
}

static psvc_json_action
ew_array_start(void *state)
{
	ErrorWalk  *ew = (ErrorWalk *) state;

	ew->depth++;
	if (ew->depth < lengthof(ew->field))
	{
		ew->field[ew->depth] = NULL;
		ew->array[ew->depth] = true;
	}
	return PSVC_JSON_OK;
}

static psvc_json_action
ew_end(void *state)
{
	((ErrorWalk *) state)->depth--;
	return PSVC_JSON_OK;
}

static psvc_json_action
ew_field(void *state, char *fname, bool isnull)
{
	ErrorWalk  *ew = (ErrorWalk *) state;

	if (ew->depth < lengthof(ew->field))
		ew->field[ew->depth] = fname;
	return PSVC_JSON_OK;
}

static psvc_json_action
ew_scalar(void *state, char *token, JsonTokenType type)
{
	ErrorWalk  *ew = (ErrorWalk *) state;
	PsvcJsonErrorBody *eb = ew->eb;
	const char *f;

	if (type == JSON_TOKEN_NULL)
		return PSVC_JSON_OK;
	if (ew->depth == 1 && !ew->array[1] && (f = ew->field[1]) != NULL)
	{
		if (strcmp(f, "error") == 0)
		{
			eb->error = token;
			eb->error_is_string = (type == JSON_TOKEN_STRING);
		}
		else if (strcmp(f, "title") == 0)
			eb->title = token;
		else if (strcmp(f, "detail") == 0)
			eb->detail = token;
		else if (strcmp(f, "message") == 0)
			eb->top_message = token;
	}
	else if (ew->depth == 2 && !ew->array[1] && !ew->array[2] &&
			 ew->field[1] != NULL && strcmp(ew->field[1], "error") == 0 &&
			 (f = ew->field[2]) != NULL)
	{
		if (strcmp(f, "code") == 0)
		{
			eb->code = token;
			eb->code_is_string = (type == JSON_TOKEN_STRING);
		}
		else if (strcmp(f, "message") == 0)
			eb->message = token;
	}
	return PSVC_JSON_OK;
}

/* Nesting depth of a JSON text, strings skipped; stops past limit. */
static int
json_depth(const char *s, size_t len, int limit)
{
	int			depth = 0;
	int			deepest = 0;
	bool		in_string = false;
	size_t		i;

	for (i = 0; i < len && deepest <= limit; i++)
	{
		char		c = s[i];

		if (in_string)
		{
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		}
		else if (c == '"')
			in_string = true;
		else if (c == '{' || c == '[')
		{
			depth++;
			deepest = Max(deepest, depth);
		}
		else if (c == '}' || c == ']')
			depth--;
	}
	return deepest;
}

/*
 * Reads an error body of len bytes in the given encoding into *eb: true
 * when it is JSON (whatever its shape; members not found stay NULL),
 * false with *eb all NULL when it is empty, malformed or too deep.  A
 * scalar member's value is its text (a string de-escaped, a number or
 * boolean as written); a member given twice counts with its last value.
 * Never raises for the body.  Allocates in CurrentMemoryContext.
 */
bool
psvc_json_error_body(const char *body, size_t len, int encoding,
					 PsvcJsonErrorBody *eb)
{
	ErrorWalk	ew;
	JsonLexContext *lex;
	JsonSemAction sem;

	memset(eb, 0, sizeof(*eb));
	if (body == NULL || len == 0 || len >= MaxAllocSize ||
		json_depth(body, len, PSVC_JSON_ERROR_DEPTH) > PSVC_JSON_ERROR_DEPTH)
		return false;

	memset(&ew, 0, sizeof(ew));
	ew.eb = eb;
	memset(&sem, 0, sizeof(sem));
	sem.semstate = &ew;
	sem.object_start = ew_object_start;
	sem.object_end = ew_end;
	sem.array_start = ew_array_start;
	sem.array_end = ew_end;
	sem.object_field_start = ew_field;
	sem.scalar = ew_scalar;
	lex = psvc_json_lexer(body, len, encoding, true);
	if (pg_parse_json(lex, &sem) != JSON_SUCCESS)
	{
		memset(eb, 0, sizeof(*eb));
		return false;
	}
	return true;
}
