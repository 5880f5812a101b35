/*-------------------------------------------------------------------------
 *
 * fdw_modify_row.c
 *		  Rows and JSON for INSERT, UPDATE and DELETE on partner_svc foreign
 *		  tables: the request body made from a row, the row made from the
 *		  service's answer, and the checks on what may be sent.
 *
 * What a statement sends is data (PsvcModifyDef in endpoints.c): the
 * method and route of each operation, the member that identifies a row
 * (its value fills the route's {name}), and the body style.  A row becomes
 *	- a JSON object of its member columns (todos): on INSERT every non-NULL
 *	  column, on UPDATE exactly the columns the statement assigns (NULL as
 *	  null), under their JSON member names; or
 *	- a JSON string of its one column (notifications).
 * Numbers and booleans go as JSON numbers and booleans, json/jsonb as
 * they are, everything else as a JSON string of its text.  The key column
 * is assigned by the service: it cannot be inserted or updated, and "raw"
 * (the whole item) is read-only.  A value check of the catalogue (the
 * email format) runs before anything is sent.
 *
 * RETURNING shows the row as the service answered it (the created todo
 * with its id, the updated todo, the stored address); when the answer has
 * no body, the row as sent.  DELETE ... RETURNING shows the row as read:
 * for it we also ask for the whole-row junk column, as PostgreSQL itself
 * does for UPDATE.
 *
 * Both run in the per-row context of fdw_modify.c; the row made from an
 * answer is materialized into the slot, so it outlives that context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_modify_row.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "fdw_modify_int.h"
#include "json.h"

static void append_json_value(StringInfo buf, ModifyColumn *c, Datum d);
static bool is_email(const char *s);
static void check_value(PsvcModifyState *st, ModifyColumn *c, const char *text);

/* The column of attno, or NULL. */
ModifyColumn *
psvc_fdw_modify_column(PsvcModifyState *st, AttrNumber attno)
{
	for (int i = 0; i < st->ncols; i++)
		if (st->cols[i].attno == attno)
			return &st->cols[i];
	return NULL;
}

/*
 * Raises unless the row's value of c may be sent: the key is assigned by
 * the service, and only member columns (not "raw") map to the body.
 */
void
psvc_fdw_modify_check_writable(PsvcModifyState *st, ModifyColumn *c)
{
	if (c == NULL || (c != st->key && c->def->kind == PSVC_COL_FIELD))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 st->op == CMD_INSERT ?
			 errmsg("cannot insert a value into column \"%s\" of foreign table \"%s\"",
					c->name, RelationGetRelationName(st->rel)) :
			 errmsg("cannot update column \"%s\" of foreign table \"%s\"",
					c->name, RelationGetRelationName(st->rel)),
			 c == st->key ?
			 errdetail("The service assigns it, and it identifies the row in requests.") :
			 errdetail("Only columns that map to a member of the item can be written.")));
}

/* Appends value d of column c as a JSON value. */
static void
append_json_value(StringInfo buf, ModifyColumn *c, Datum d)
{
	char	   *text = OutputFunctionCall(&c->out, d);

	if (c->typcategory == TYPCATEGORY_BOOLEAN)
		appendStringInfoString(buf, DatumGetBool(d) ? "true" : "false");
	else if (c->typcategory == TYPCATEGORY_NUMERIC &&
			 (isdigit((unsigned char) text[0]) ||
			  (text[0] == '-' && isdigit((unsigned char) text[1]))))
		appendStringInfoString(buf, text);	/* not NaN, Infinity, money */
	else if (c->typid == JSONBOID || c->typid == JSONOID)
		appendStringInfoString(buf, text);
	else
		escape_json(buf, text);
}

/*
 * Is s an email address as the scheduler accepts it: at most 254 bytes,
 * local@domain; the local part of letters, digits and
 * !#$%&'*+/=?^_`{|}~- with single dots inside; the domain two or more
 * labels of letters, digits and inner hyphens (1 to 63 bytes), the last
 * of two or more letters.
 */
static bool
is_email(const char *s)
{
	const char *at = strchr(s, '@');
	const char *p;
	const char *label;
	bool		last_alpha = true;
	int			labels = 0;

	if (strlen(s) > 254 || at == NULL || at == s || strchr(at + 1, '@') != NULL)
		return false;
	for (p = s; p < at; p++)
	{
		if (*p == '.')
		{
			if (p == s || p + 1 == at || p[1] == '.')
				return false;
		}
		else if (!(isascii((unsigned char) *p) && isalnum((unsigned char) *p)) &&
				 strchr("!#$%&'*+/=?^_`{|}~-", *p) == NULL)
			return false;
	}
	label = at + 1;
	for (p = label;; p++)
	{
		if (*p == '.' || *p == '\0')
		{
			int			len = p - label;

			if (len < 1 || len > 63 || label[0] == '-' || p[-1] == '-')
				return false;
			labels++;
			last_alpha = len >= 2;
			for (const char *q = label; q < p; q++)
				if (!(isascii((unsigned char) *q) && isalpha((unsigned char) *q)))
					last_alpha = false;
			if (*p == '\0')
				break;
			label = p + 1;
		}
		else if (!(isascii((unsigned char) *p) && isalnum((unsigned char) *p)) && *p != '-')
			return false;
	}
	return labels >= 2 && last_alpha;
}

/* Runs the catalogue's value check on column c's value text. */
static void
check_value(PsvcModifyState *st, ModifyColumn *c, const char *text)
{
	if (st->md->check == PSVC_CHECK_EMAIL && !is_email(text))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid email address \"%s\" for column \"%s\" of foreign table \"%s\"",
						text, c->name, RelationGetRelationName(st->rel)),
				 errdetail("An address is local@domain of at most 254 bytes: the local part of letters, digits and !#$%%&'*+/=?^_`{|}~- with single inner dots; the domain two or more labels of letters, digits and inner hyphens, the last one of two or more letters."),
				 errhint("Nothing was sent to the service.")));
}

/*
 * The body of a request for the row in slot (all attributes fetched):
 * see the file header.  NULL when the operation sends none (DELETE).
 * Raises for values that cannot be written.  CurrentMemoryContext.
 */
StringInfo
psvc_fdw_modify_body(PsvcModifyState *st, TupleTableSlot *slot)
{
	StringInfo	buf;
	ListCell   *lc;
	int			nsent = 0;
	const char **sent;

	if (st->op == CMD_DELETE)
		return NULL;
	buf = makeStringInfo();
	sent = palloc(sizeof(char *) * Max(st->ncols, 1));
	if (st->md->body == PSVC_BODY_OBJECT)
		appendStringInfoChar(buf, '{');

	foreach(lc, st->target_attrs)
	{
		AttrNumber	attno = lfirst_int(lc);
		ModifyColumn *c = psvc_fdw_modify_column(st, attno);
		bool		isnull = slot->tts_isnull[attno - 1];
		Datum		d = slot->tts_values[attno - 1];
		bool		dup = false;

		/* INSERT: a NULL column is left out, so the service's default holds */
		if (c == NULL || (st->op == CMD_INSERT && isnull))
			continue;
		psvc_fdw_modify_check_writable(st, c);

		if (!isnull && st->md->check != PSVC_CHECK_NONE && st->md->check_field &&
			strcmp(c->def->field, st->md->check_field) == 0)
			check_value(st, c, OutputFunctionCall(&c->out, d));

		if (st->md->body == PSVC_BODY_STRING)
		{
			if (c->def->field[0] != '\0')
				continue;
			escape_json(buf, OutputFunctionCall(&c->out, d));
			nsent++;
			continue;
		}

		for (int i = 0; i < nsent; i++)
			if (strcmp(sent[i], c->def->field) == 0)
				dup = true;
		if (dup)
			continue;
		if (nsent > 0)
			appendStringInfoChar(buf, ',');
		escape_json(buf, c->def->field);
		appendStringInfoChar(buf, ':');
		if (isnull)
			appendStringInfoString(buf, "null");
		else
			append_json_value(buf, c, d);
		sent[nsent++] = c->def->field;
	}

	if (st->md->body == PSVC_BODY_OBJECT)
		appendStringInfoChar(buf, '}');
	else if (nsent == 0)
	{
		ModifyColumn *c = NULL;

		for (int i = 0; i < st->ncols; i++)
			if (st->cols[i].def->kind == PSVC_COL_FIELD &&
				st->cols[i].def->field[0] == '\0')
				c = &st->cols[i];
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("null value in column \"%s\" of foreign table \"%s\" cannot be sent",
						c ? c->name : "?", RelationGetRelationName(st->rel)),
				 errdetail("The body of %s %s is the value of this column.",
						   st->rd->method, st->rd->route)));
	}
	return buf;
}

/*
 * Replaces the row in slot by the service's answer, if it has one: each
 * member column from its member (absent: NULL), "raw" from the whole
 * item.  Materializes the slot, so the row outlives the per-row context.
 */
void
psvc_fdw_modify_store_answer(PsvcModifyState *st, TupleTableSlot *slot, PsvcResult *resp)
{
	PsvcPage   *page;
	PsvcItem   *it;
	size_t		i = 0;

	while (i < resp->body_len && isspace((unsigned char) resp->body[i]))
		i++;
	if (i == resp->body_len)
	{
		ExecMaterializeSlot(slot);
		return;
	}
	page = psvc_json_decode_page(resp->body, resp->body_len, NULL, true,
								 st->nfields, st->fields, false,
								 psprintf("%s %s", st->rd->method, st->rd->route));
	if (page->nitems == 0)
	{
		ExecMaterializeSlot(slot);
		return;
	}
	it = &page->items[0];

	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (int c = 0; c < st->ncols; c++)
	{
		ModifyColumn *col = &st->cols[c];
		char	   *text = NULL;

		if (col->def->kind == PSVC_COL_RAW)
			text = pnstrdup(it->json, it->json_len);
		else if (col->field >= 0)
			text = it->values[col->field];
		if (text == NULL)
			continue;
		slot->tts_values[col->attno - 1] = InputFunctionCall(&col->in, text,
															 col->ioparam, col->typmod);
		slot->tts_isnull[col->attno - 1] = false;
	}
	ExecStoreVirtualTuple(slot);
	ExecMaterializeSlot(slot);
}
