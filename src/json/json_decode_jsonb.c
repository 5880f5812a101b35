/*-------------------------------------------------------------------------
 *
 * json_decode_jsonb.c
 *		  The jsonb of an item, built in the decoder's one pass over a page
 *		  (json_decode.c) instead of by jsonb_in on the item's text, which
 *		  parsed every item a second time.
 *
 * The decoder's semantic actions feed the item's tokens here, and they are
 * pushed with pushJsonbValue as jsonb_in's own actions push them
 * (utils/adt/jsonb.c): keys and strings de-escaped, numbers through
 * numeric_in, a scalar item as a raw scalar array.  pushJsonbValue sorts an
 * object's keys and keeps the last of duplicate keys, and
 * JsonbValueToJsonb lays the value out: so the result is byte for byte
 * what jsonb_in makes of the item's text.
 *
 * jsonb_in raises for some valid JSON (\u0000, lone surrogates, numbers
 * outside numeric's range, values beyond jsonb's size limits).
 * PostgreSQL 15 has no soft input errors, and an error raised while a page
 * is decoded would come for an item whose row may never be asked for, and
 * in another context than the row's.  So where jsonb_in would or might
 * raise, the builder gives up on the item (ok = false) and gives no jsonb;
 * the scan then calls jsonb_in on the item's text, which raises where and
 * as it always did.  The tests for "might raise" are deliberately coarse
 * (any exponent, any \u escape outside UTF-8 databases): such items are
 * rare and only lose the speed-up.
 *
 * The same builder makes the jsonb of a whole text (psvc_json_to_jsonb),
 * the one text-to-jsonb path of the extension: the SQL functions read
 * every answer through it.  There nothing may raise for a bad body, so
 * what the builder leaves to jsonb_in is first checked by a de-escaping
 * pass of the lexer, and gives NULL where that pass fails.
 *
 * Memory: the parse state, de-escaped strings and numerics are garbage
 * once the item's Jsonb is made; they live in a context of the builder's,
 * reset after each item.  The Jsonb itself is made in
 * CurrentMemoryContext.  Strings without escapes point into the page's
 * text, which outlives the item.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/json/json_decode_jsonb.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "json_decode_int.h"

/*
 * Items of more text than this are left to jsonb_in: their jsonb might
 * exceed jsonb's size limits (JENTRY_OFFLENMASK), which raise.  A jsonb
 * takes at most about 8 bytes per byte of text ("[[],[],...]").
 */
#define BUILD_MAX_TEXT	(JENTRY_OFFLENMASK / 16)

static bool jsonb_string(JsonbValue *v, const char *token, int len);
static bool jsonb_number(JsonbValue *v, const char *token);
static void push(PsvcItemJsonb *b, JsonbIteratorToken token, JsonbValue *v);

/*
 * The jbvString of one string token (from its opening quote to just after
 * its closing quote), as jsonb_in would make it, or false when jsonb_in
 * would or might raise.  A string without escapes points into the token;
 * one with escapes is de-escaped in CurrentMemoryContext.  Outside UTF-8
 * databases a \u escape may name a character the server encoding lacks,
 * so strings with one are left to jsonb_in.
 */
static bool
jsonb_string(JsonbValue *v, const char *token, int len)
{
	const char *s = token + 1;
	int			n = len - 2;

	if (memchr(s, '\\', n) != NULL)
	{
		char	   *plain;

		if (GetDatabaseEncoding() != PG_UTF8)
		{
			for (int i = 0; i + 1 < n; i++)
				if (s[i] == '\\' && s[i + 1] == 'u')
					return false;
		}
		plain = psvc_json_unescape(token, len, "", false);
		if (plain == NULL)
			return false;		/* \u0000, a lone surrogate: jsonb_in raises */
		s = plain;
		n = strlen(plain);
	}
	if (n > JENTRY_OFFLENMASK)
		return false;
	v->type = jbvString;
	v->val.string.len = n;
	v->val.string.val = unconstify(char *, s);
	return true;
}

/*
 * The jbvNumeric of one number token (NUL-terminated): an integer of up to
 * 18 digits straight from its value, any other through numeric_in as
 * jsonb_in does, or false when numeric_in might raise: a number with an
 * exponent, or longer than NUMERIC_MAX_PRECISION characters (far above any
 * real member).  Without an exponent and within that length, every JSON
 * number is in numeric's range (131072 digits before the decimal point,
 * 16383 after).
 */
static bool
jsonb_number(JsonbValue *v, const char *token)
{
	const char *d = token + (token[0] == '-');
	size_t		ndigits = strspn(d, "0123456789");

	/*
	 * An integer of up to 18 digits (ids, positions, counts: most numbers
	 * of a page) fits in int64 and is made without parsing it as text
	 * again: the same numeric as numeric_in gives ("-0" is 0 in both).
	 */
	if (ndigits > 0 && ndigits <= 18 && d[ndigits] == '\0')
	{
		int64		n = 0;

		for (size_t i = 0; i < ndigits; i++)
			n = n * 10 + (d[i] - '0');
		v->type = jbvNumeric;
		v->val.numeric = int64_to_numeric(d == token ? n : -n);
		return true;
	}
	if (strlen(token) > NUMERIC_MAX_PRECISION || strpbrk(token, "eE") != NULL)
		return false;
	v->type = jbvNumeric;
	v->val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in,
														 CStringGetDatum(token),
														 ObjectIdGetDatum(InvalidOid),
														 Int32GetDatum(-1)));
	return true;
}

/* pushJsonbValue in the builder's context. */
static void
push(PsvcItemJsonb *b, JsonbIteratorToken token, JsonbValue *v)
{
	MemoryContext old = MemoryContextSwitchTo(b->cxt);

	b->result = pushJsonbValue(&b->state, token, v);
	MemoryContextSwitchTo(old);
}

/* Makes the builder's context, a child of CurrentMemoryContext. */
void
psvc_json_jb_init(PsvcItemJsonb *b)
{
	memset(b, 0, sizeof(*b));
	b->cxt = AllocSetContextCreate(CurrentMemoryContext,
								   "partner_svc item jsonb",
								   ALLOCSET_DEFAULT_SIZES);
}

/* Frees what the builder holds. */
void
psvc_json_jb_free(PsvcItemJsonb *b)
{
	MemoryContextDelete(b->cxt);
	b->cxt = NULL;
}

/* An item begins. */
void
psvc_json_jb_begin(PsvcItemJsonb *b)
{
	b->ok = true;
	b->state = NULL;
	b->result = NULL;
}

/*
 * The item, of text_len bytes of text, has ended: its Jsonb, in
 * CurrentMemoryContext, or NULL when jsonb_in must make it.
 */
Jsonb *
psvc_json_jb_end(PsvcItemJsonb *b, int text_len)
{
	Jsonb	   *jb = NULL;

	if (b->ok && b->result != NULL && b->state == NULL &&
		text_len <= BUILD_MAX_TEXT)
		jb = JsonbValueToJsonb(b->result);
	b->ok = false;
	b->state = NULL;
	b->result = NULL;
	MemoryContextReset(b->cxt);
	return jb;
}

/* An object or array begins or ends: WJB_BEGIN_OBJECT ... WJB_END_ARRAY. */
void
psvc_json_jb_container(PsvcItemJsonb *b, JsonbIteratorToken token)
{
	if (b->ok)
		push(b, token, NULL);
}

/* A member's name, the string token of len bytes at token. */
void
psvc_json_jb_key(PsvcItemJsonb *b, const char *token, int len)
{
	JsonbValue	v;
	MemoryContext old;

	if (!b->ok)
		return;
	old = MemoryContextSwitchTo(b->cxt);
	b->ok = jsonb_string(&v, token, len);
	MemoryContextSwitchTo(old);
	if (b->ok)
		push(b, WJB_KEY, &v);
}

/*
 * A scalar: its token's text runs from start to end; token is the
 * parser's copy of a non-string token (NUL-terminated), or NULL.
 */
void
psvc_json_jb_scalar(PsvcItemJsonb *b, const char *start, const char *end,
					const char *token, JsonTokenType type)
{
	JsonbValue	v;
	MemoryContext old;

	if (!b->ok)
		return;
	old = MemoryContextSwitchTo(b->cxt);
	switch (type)
	{
		case JSON_TOKEN_STRING:
			b->ok = jsonb_string(&v, start, end - start);
			break;
		case JSON_TOKEN_NUMBER:
			b->ok = jsonb_number(&v, token);
			break;
		case JSON_TOKEN_TRUE:
		case JSON_TOKEN_FALSE:
			v.type = jbvBool;
			v.val.boolean = (type == JSON_TOKEN_TRUE);
			break;
		default:
			v.type = jbvNull;
			break;
	}
	MemoryContextSwitchTo(old);
	if (!b->ok)
		return;

	if (b->state == NULL)
	{
		/* the item is this scalar: a raw scalar array, as in jsonb_in */
		JsonbValue	va;

		va.type = jbvArray;
		va.val.array.rawScalar = true;
		va.val.array.nElems = 1;
		push(b, WJB_BEGIN_ARRAY, &va);
		push(b, WJB_ELEM, &v);
		push(b, WJB_END_ARRAY, NULL);
	}
	else if (b->state->contVal.type == jbvArray)
		push(b, WJB_ELEM, &v);
	else
		push(b, WJB_VALUE, &v);
}

/* ---------------------------------------------------------------------
 * A whole JSON text into jsonb: psvc_json_to_jsonb
 * ---------------------------------------------------------------------
 */

/*
 * The actions that feed the builder above with every token of a whole
 * text, as json_decode.c feeds it the tokens of an item.  The same
 * borrowed shape (see the header of json_decode.c): a member's name is
 * the string token between the '{' or ',' before it (name_from) and the
 * ':' that ends at prev_token_terminator when object_field_start runs; a
 * scalar runs from where its member or element began (scalar_start) to
 * prev_token_terminator when its action runs.
 */
typedef struct WholeText
{
	JsonLexContext *lex;
	PsvcItemJsonb jb;
	const char *name_from;
	const char *scalar_start;
} WholeText;

static psvc_json_action
whole_object_start(void *state)
{
	WholeText  *w = (WholeText *) state;

	w->name_from = w->lex->token_start + 1;
	psvc_json_jb_container(&w->jb, WJB_BEGIN_OBJECT);
	return PSVC_JSON_OK;
}

static psvc_json_action
whole_object_end(void *state)
{
	psvc_json_jb_container(&((WholeText *) state)->jb, WJB_END_OBJECT);
	return PSVC_JSON_OK;
}

static psvc_json_action
whole_array_start(void *state)
{
	psvc_json_jb_container(&((WholeText *) state)->jb, WJB_BEGIN_ARRAY);
	return PSVC_JSON_OK;
}

static psvc_json_action
whole_array_end(void *state)
{
	psvc_json_jb_container(&((WholeText *) state)->jb, WJB_END_ARRAY);
	return PSVC_JSON_OK;
}

static psvc_json_action
whole_field_start(void *state, char *fname, bool isnull)
{
	WholeText  *w = (WholeText *) state;
	const char *open = w->name_from;
	const char *close = w->lex->prev_token_terminator - 1;	/* the ':' */

	while (*open != '"')
		open++;
	do
		close--;
	while (*close != '"');
	psvc_json_jb_key(&w->jb, open, close - open + 1);
	w->scalar_start = w->lex->token_start;
	return PSVC_JSON_OK;
}

static psvc_json_action
whole_field_end(void *state, char *fname, bool isnull)
{
	WholeText  *w = (WholeText *) state;

	w->name_from = w->lex->token_start + 1;
	return PSVC_JSON_OK;
}

static psvc_json_action
whole_element_start(void *state, bool isnull)
{
	WholeText  *w = (WholeText *) state;

	w->scalar_start = w->lex->token_start;
	return PSVC_JSON_OK;
}

static psvc_json_action
whole_scalar(void *state, char *token, JsonTokenType tokentype)
{
	WholeText  *w = (WholeText *) state;

	psvc_json_jb_scalar(&w->jb, w->scalar_start, w->lex->prev_token_terminator,
						token, tokentype);
	if (token != NULL)
		pfree(token);
	return PSVC_JSON_OK;
}

/*
 * jsonb of a JSON text in the server encoding (a service's body: http.c
 * converts every response), as jsonb_in makes it, or NULL when the text is
 * empty or not JSON that jsonb can hold: malformed, a NUL byte, \u0000, a
 * lone surrogate, an escape the server encoding lacks.  So it never raises
 * for a bad body, and callers can look into error bodies safely; valid
 * JSON beyond what jsonb holds (numbers outside numeric, values over its
 * size limits) raises as in jsonb_in.  One pass of the parser and the
 * builder above; what the builder leaves to jsonb_in (see the file
 * header) is checked with a de-escaping pass first, then made by
 * jsonb_in.  Allocates the result in CurrentMemoryContext.
 */
Jsonb *
psvc_json_to_jsonb(const char *text, size_t len)
{
	char	   *conv;
	WholeText	w;
	JsonSemAction sem;
	JsonParseErrorType error;
	JsonLexContext *lex;
	Jsonb	   *jb = NULL;

	if (text == NULL || len == 0 || len >= MaxAllocSize)
		return NULL;
	conv = pnstrdup(text, len);
	if (strlen(conv) != len)
		return NULL;			/* a NUL byte: not JSON text */

	memset(&w, 0, sizeof(w));
	w.lex = psvc_json_lexer(conv, len, GetDatabaseEncoding(), false);
	w.scalar_start = conv;
	while (*w.scalar_start == ' ' || *w.scalar_start == '\t' ||
		   *w.scalar_start == '\n' || *w.scalar_start == '\r')
		w.scalar_start++;

	memset(&sem, 0, sizeof(sem));
	sem.semstate = &w;
	sem.object_start = whole_object_start;
	sem.object_end = whole_object_end;
	sem.array_start = whole_array_start;
	sem.array_end = whole_array_end;
	sem.object_field_start = whole_field_start;
	sem.object_field_end = whole_field_end;
	sem.array_element_start = whole_element_start;
	sem.scalar = whole_scalar;

	psvc_json_jb_init(&w.jb);
	psvc_json_jb_begin(&w.jb);
	error = pg_parse_json(w.lex, &sem);
	if (error == JSON_SUCCESS)
		jb = psvc_json_jb_end(&w.jb, (int) len);
	psvc_json_jb_free(&w.jb);
	if (error != JSON_SUCCESS)
		return NULL;
	if (jb != NULL)
		return jb;

	/* left to jsonb_in: first what only the de-escaping lexer rejects */
	lex = psvc_json_lexer(conv, len, GetDatabaseEncoding(), true);
	if (pg_parse_json(lex, &nullSemAction) != JSON_SUCCESS)
		return NULL;
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(conv)));
}
