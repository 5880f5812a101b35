/*-------------------------------------------------------------------------
 *
 * webhook_store.c
 *		  Validation and storage of a batch of webhook deliveries: one
 *		  transaction, one commit, then every delivery gets its answer.
 *
 * Design notes:
 *
 * - A batch is every delivery libmicrohttpd finished reading in one turn
 *   of the worker's loop (webhook_listener.c).  First each body is checked and
 *   classified, outside any transaction: valid text, JSON (jsonb_in; its
 *   error, caught, becomes the reason), and one of the three documented
 *   events.  Then one transaction stores the batch with two statements
 *   prepared once (SPI_keepplan), each taking whole columns as arrays:
 *   the events (webhook_events, order_states, transactions and the
 *   NOTIFYs in one statement of data-modifying CTEs) and the rejects.
 *   The commit (synchronous_commit as configured) precedes every answer.
 * - Retries are stored once: webhook_events.dedupe_key is sha256 of the
 *   environment, a NUL byte and the raw body, and the insert is ON
 *   CONFLICT DO NOTHING; a duplicate is answered 200 again.
 * - order_states and transactions only move along the chains of the
 *   rule of statuses (webhook_rules.c, as data), never back; a pdf_url,
 *   once known, is never set back to null.  A webhook marks the row's
 *   source 'webhook' when it moves the status or tells the same one (a
 *   row the reconciler or a create wrote: webhook_reconcile.c).
 * - Catching jsonb_in's ERROR without a subtransaction is safe because
 *   it runs outside any transaction and holds no resource: only memory
 *   of the batch context.
 * - If the batch transaction fails, it is aborted and each delivery is
 *   tried again alone, so one delivery that breaks a statement cannot
 *   fail the others; what still fails is answered 500 (the sender
 *   retries).  An error no delivery caused (lock_timeout, out of memory,
 *   a cancel: error_is_transient) answers the whole batch 503 at once
 *   instead: one by one would only repeat it.  Nothing here raises to the
 *   caller; an ERROR outside these catches (the batch's own memory) is
 *   caught by the worker's loop, which answers the batch 503.
 * - The body is parsed where webhook_listener.c holds it (NUL-terminated, its
 *   memory reserved before it was read): no copy of a large body.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_store.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "bgstats.h"
#include "webhook_int.h"

/* The three event types of the orders document (spec 000, Events). */
#define PSVC_WH_ORDER_STATUS_CHANGED "ORDER_STATUS_CHANGED"
#define PSVC_WH_ORDER_CONFIRMATION "ORDER_CONFIRMATION_RECEIVED"
#define PSVC_WH_CHECKOUT_STATUS_CHANGED "CHECKOUT_STATUS_CHANGED"

/* The longest id we accept. */
#define PSVC_WH_MAX_ID 256
#define PSVC_WH_MAX_URL 2048
/* Bytes of a rejected body kept in webhook_rejects. */
#define PSVC_WH_REJECT_KEEP 8192

/* One delivery after classification. */
typedef struct WhItem
{
	PsvcWhDelivery *d;
	const char *reject;			/* NULL: a valid event; else the reason */
	bool		transient;		/* could not be classified now: answer 500 */
	const char *event_type;
	const char *status;
	const char *unique_id;
	const char *custom_id;
	const char *transaction_id;
	const char *pdf_url;
	Datum		payload;		/* jsonb */
} WhItem;

#define NEVENT_ARGS 12
static SPIPlanPtr events_plan = NULL;
static SPIPlanPtr rejects_plan = NULL;

/*
 * The events statement.  Its NOTIFY carries the event's id and nothing
 * else: any role may LISTEN, so the payload must tell nothing that
 * needs SELECT on webhook_events to read.  $10..$12 are the chains of
 * the rule of statuses (kind, from, to: every pair joined by a chain of
 * moves, psvc_wh_status_chains); a status replaces the stored one when
 * PSVC_WH_MOVES says it may.  Within
 * one batch, the events of one order or checkout are reduced to the
 * status furthest along (the one with the most statuses before it); among
 * equals, the first received of an order, the last of a checkout (whose
 * order_ids it sets).
 */
static const char events_sql[] =
"WITH b AS ("
"  SELECT * FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]),"
"      pg_catalog.unnest($3::text[]), pg_catalog.unnest($4::text[]), pg_catalog.unnest($5::text[]),"
"      pg_catalog.unnest($6::text[]), pg_catalog.unnest($7::text[]), pg_catalog.unnest($8::jsonb[]),"
"      pg_catalog.unnest($9::bytea[]))"
"    WITH ORDINALITY AS b(environment, event_type, status, unique_id, custom_id,"
"                         transaction_id, pdf_url, payload, dedupe_key, ord)"
"), m AS ("
"  SELECT * FROM ROWS FROM (pg_catalog.unnest($10::text[]), pg_catalog.unnest($11::text[]),"
"      pg_catalog.unnest($12::text[])) AS m(kind, from_status, to_status)"
"), ins AS ("
"  INSERT INTO partner_svc.webhook_events AS e (environment, event_type, status, unique_id,"
"         custom_id, transaction_id, pdf_url, payload, dedupe_key)"
"  SELECT environment, event_type, status, unique_id, custom_id, transaction_id, pdf_url,"
"         payload, dedupe_key FROM b ORDER BY ord"
"  ON CONFLICT (dedupe_key) DO NOTHING"
"  RETURNING e.id, e.event_type, e.status, e.unique_id, e.custom_id,"
"            e.transaction_id, e.pdf_url, e.payload"
"), o AS ("
"  INSERT INTO partner_svc.order_states AS s (unique_id, custom_id, status, pdf_url, updated_at)"
"  SELECT unique_id,"
"         (pg_catalog.array_agg(custom_id ORDER BY id DESC) FILTER (WHERE custom_id IS NOT NULL))[1],"
"         (pg_catalog.array_agg(status ORDER BY (SELECT pg_catalog.count(*) FROM m"
"              WHERE m.kind = 'order' AND m.to_status = ins.status) DESC, id))[1],"
"         (pg_catalog.array_agg(pdf_url ORDER BY id DESC) FILTER (WHERE pdf_url IS NOT NULL))[1],"
"         pg_catalog.now()"
"  FROM ins WHERE unique_id IS NOT NULL GROUP BY unique_id"
"  ON CONFLICT (unique_id) DO UPDATE SET"
"    status = CASE WHEN " PSVC_WH_MOVES("order", "s.status", "excluded.status")
"                  THEN excluded.status ELSE s.status END,"
"    source = CASE WHEN " PSVC_WH_MOVES("order", "s.status", "excluded.status")
"                    OR excluded.status = s.status THEN 'webhook' ELSE s.source END,"
"    custom_id = COALESCE(excluded.custom_id, s.custom_id),"
"    pdf_url = COALESCE(excluded.pdf_url, s.pdf_url),"
"    updated_at = excluded.updated_at"
"  WHERE " PSVC_WH_MOVES("order", "s.status", "excluded.status")
"     OR (excluded.status = s.status AND s.source <> 'webhook')"
"     OR (excluded.pdf_url IS NOT NULL AND excluded.pdf_url IS DISTINCT FROM s.pdf_url)"
"     OR (excluded.custom_id IS NOT NULL AND excluded.custom_id IS DISTINCT FROM s.custom_id)"
"), t AS ("
"  INSERT INTO partner_svc.transactions AS x (transaction_id, status, order_ids, updated_at)"
"  SELECT DISTINCT ON (transaction_id) transaction_id, status,"
"         ARRAY(SELECT p OPERATOR(pg_catalog.->>) 'unique_id'"
"               FROM pg_catalog.jsonb_array_elements(payload OPERATOR(pg_catalog.->) 'products') p),"
"         pg_catalog.now()"
"  FROM ins WHERE event_type = '" PSVC_WH_CHECKOUT_STATUS_CHANGED "'"
"  ORDER BY transaction_id, (SELECT pg_catalog.count(*) FROM m"
"              WHERE m.kind = 'checkout' AND m.to_status = ins.status) DESC, id DESC"
"  ON CONFLICT (transaction_id) DO UPDATE SET"
"    status = excluded.status, order_ids = excluded.order_ids, updated_at = excluded.updated_at,"
"    source = 'webhook'"
"  WHERE " PSVC_WH_MOVES("checkout", "x.status", "excluded.status")
"     OR (excluded.status = x.status AND x.source <> 'webhook')"
") "
"SELECT pg_catalog.pg_notify('partner_svc_events', id::text) FROM ins ORDER BY id";

static const char rejects_sql[] =
"INSERT INTO partner_svc.webhook_rejects (environment, reason, body_bytes, body)"
" SELECT * FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]),"
"                          pg_catalog.unnest($3::int4[]), pg_catalog.unnest($4::text[]))";

/* A string member of obj; *out NULL when absent or null. */
static const char *
get_string(JsonbContainer *obj, const char *key, const char **out, bool required,
		   int maxlen)
{
	JsonbValue	v;

	*out = NULL;
	if (getKeyJsonValueFromContainer(obj, key, strlen(key), &v) == NULL ||
		v.type == jbvNull)
		return required ? psprintf("member \"%s\" is missing", key) : NULL;
	if (v.type != jbvString)
		return psprintf("member \"%s\" is not a string", key);
	if (v.val.string.len == 0 && required)
		return psprintf("member \"%s\" is empty", key);
	if (v.val.string.len > maxlen)
		return psprintf("member \"%s\" is longer than %d bytes", key, maxlen);
	*out = pnstrdup(v.val.string.val, v.val.string.len);
	return NULL;
}

/* An object or array member of obj, or NULL. */
static JsonbContainer *
get_container(JsonbContainer *obj, const char *key, bool array)
{
	JsonbValue	v;

	if (getKeyJsonValueFromContainer(obj, key, strlen(key), &v) == NULL ||
		v.type != jbvBinary)
		return NULL;
	if (array ? !JsonContainerIsArray(v.val.binary.data)
		: !JsonContainerIsObject(v.val.binary.data))
		return NULL;
	return v.val.binary.data;
}

static bool
one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static const char *const order_statuses[] =
{"CREATED", "PENDING", "DEFERRED", "ACTIVE", "REFUNDED", NULL};
static const char *const checkout_statuses[] = {"CREATED", "SUCCESS", "FAILED", NULL};

/*
 * Checks that the jsonb is one of the three documented events and takes
 * its fields into it.  Returns NULL, or the reason it is not (palloc'd).
 * Members the documents do not name are allowed (and kept in payload).
 */
static const char *
classify_event(Jsonb *jb, WhItem *it)
{
	JsonbContainer *root = &jb->root;
	const char *err;

	if (JB_ROOT_IS_SCALAR(jb) || !JB_ROOT_IS_OBJECT(jb))
		return "the body is not a JSON object";
	if ((err = get_string(root, "event_type", &it->event_type, true, 64)) != NULL)
		return err;
	if ((err = get_string(root, "status", &it->status, true, 64)) != NULL)
		return err;
	if (strcmp(it->event_type, PSVC_WH_ORDER_STATUS_CHANGED) == 0 ||
		strcmp(it->event_type, PSVC_WH_ORDER_CONFIRMATION) == 0)
	{
		/* a confirmation must carry its pdf_url */
		bool		confirmation = strcmp(it->event_type, PSVC_WH_ORDER_CONFIRMATION) == 0;
		JsonbContainer *product = get_container(root, "product", false);

		if (!one_of(it->status, order_statuses))
			return psprintf("unknown order status \"%s\"", it->status);
		if (product == NULL)
			return "member \"product\" is missing or not an object";
		if ((err = get_string(product, "unique_id", &it->unique_id, true, PSVC_WH_MAX_ID)) ||
			(err = get_string(product, "custom_id", &it->custom_id, false, PSVC_WH_MAX_ID)) ||
			(err = get_string(product, "pdf_url", &it->pdf_url, confirmation, PSVC_WH_MAX_URL)))
			return psprintf("product: %s", err);
		return NULL;
	}
	if (strcmp(it->event_type, PSVC_WH_CHECKOUT_STATUS_CHANGED) == 0)
	{
		JsonbContainer *products = get_container(root, "products", true);
		int			n;

		if (!one_of(it->status, checkout_statuses))
			return psprintf("unknown checkout status \"%s\"", it->status);
		if ((err = get_string(root, "transaction_id", &it->transaction_id, true, PSVC_WH_MAX_ID)))
			return err;
		if (products == NULL)
			return "member \"products\" is missing or not an array";
		n = JsonContainerSize(products);
		for (int i = 0; i < n; i++)
		{
			JsonbValue *p = getIthJsonbValueFromContainer(products, i);
			const char *id;

			if (p->type != jbvBinary || !JsonContainerIsObject(p->val.binary.data))
				return psprintf("products[%d] is not an object", i);
			if ((err = get_string(p->val.binary.data, "unique_id", &id, true, PSVC_WH_MAX_ID)))
				return psprintf("products[%d]: %s", i, err);
		}
		return NULL;
	}
	return psprintf("unknown event_type \"%s\"", it->event_type);
}

/*
 * Classifies one delivery: sets it->reject, or the event's fields and
 * payload.  Runs outside a transaction, in the batch context.
 */
static void
classify(PsvcWhDelivery *d, WhItem *it)
{
	MemoryContext cxt = CurrentMemoryContext;

	memset(it, 0, sizeof(*it));
	it->d = d;
	if (d->len == 0)
	{
		it->reject = "the body is empty";
		return;
	}
	if (memchr(d->body, '\0', d->len) != NULL ||
		!pg_verifymbstr(d->body, d->len, true))
	{
		it->reject = "the body is not valid UTF-8 text";
		return;
	}
	/* webhook_listener.c NUL-terminates a complete body: no copy of it here */
	PG_TRY();
	{
		it->payload = DirectFunctionCall1(jsonb_in, CStringGetDatum(d->body));
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		if (ERRCODE_TO_CATEGORY(edata->sqlerrcode) == ERRCODE_DATA_EXCEPTION ||
			ERRCODE_TO_CATEGORY(edata->sqlerrcode) == ERRCODE_PROGRAM_LIMIT_EXCEEDED)
			it->reject = psprintf("not JSON: %s%s%s", edata->message,
								  edata->detail ? ": " : "",
								  edata->detail ? edata->detail : "");
		else
		{
			/* out of memory, a cancel: not the body's fault; answer 503 */
			ereport(WARNING,
					(errmsg("partner_svc webhook worker could not parse a delivery"),
					 errdetail("%s", edata->message)));
			it->transient = true;
		}
		FreeErrorData(edata);
	}
	PG_END_TRY();
	if (it->reject == NULL && !it->transient)
		it->reject = classify_event(DatumGetJsonbP(it->payload), it);
}

/* A text[] of n values (NULL elements allowed). */
static Datum
text_array(const char **vals, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * n);
	bool	   *nulls = palloc(sizeof(bool) * n);
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int i = 0; i < n; i++)
	{
		nulls[i] = vals[i] == NULL;
		elems[i] = nulls[i] ? (Datum) 0 : CStringGetTextDatum(vals[i]);
	}
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, TEXTOID,
											  -1, false, TYPALIGN_INT));
}

/* sha256(environment, NUL, body) as bytea; needs a resource owner. */
static Datum
dedupe_key(PsvcWhDelivery *d)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	bytea	   *key = palloc(VARHDRSZ + PG_SHA256_DIGEST_LENGTH);

	SET_VARSIZE(key, VARHDRSZ + PG_SHA256_DIGEST_LENGTH);
	if (pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) d->environment,
							 strlen(d->environment) + 1) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) d->body, d->len) < 0 ||
		pg_cryptohash_final(ctx, (uint8 *) VARDATA(key), PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute sha256 of a webhook body");
	pg_cryptohash_free(ctx);
	return PointerGetDatum(key);
}

/* The body of a reject as stored: text cut to 8 kB, or \x-hex if not text. */
static const char *
reject_body(PsvcWhDelivery *d)
{
	if (memchr(d->body, '\0', d->len) == NULL && pg_verifymbstr(d->body, d->len, true))
		return pnstrdup(d->body,
						pg_mbcliplen(d->body, d->len, Min(d->len, PSVC_WH_REJECT_KEEP)));
	else
	{
		size_t		nbytes = Min(d->len, PSVC_WH_REJECT_KEEP / 2 - 1);
		char	   *hex = palloc(2 + nbytes * 2 + 1);

		hex[0] = '\\';
		hex[1] = 'x';
		hex_encode(d->body, nbytes, hex + 2);
		hex[2 + nbytes * 2] = '\0';
		return hex;
	}
}

static void
prepare_plans(void)
{
	Oid			etypes[NEVENT_ARGS] = {TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID,
		TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, JSONBARRAYOID,
	BYTEAARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID};
	Oid			rtypes[4] = {TEXTARRAYOID, TEXTARRAYOID, INT4ARRAYOID, TEXTARRAYOID};

	if (events_plan == NULL)
	{
		SPIPlanPtr	p = SPI_prepare(events_sql, NEVENT_ARGS, etypes);

		if (p == NULL)
			elog(ERROR, "SPI_prepare failed for the webhook events statement: %s",
				 SPI_result_code_string(SPI_result));
		SPI_keepplan(p);
		events_plan = p;
	}
	if (rejects_plan == NULL)
	{
		SPIPlanPtr	p = SPI_prepare(rejects_sql, 4, rtypes);

		if (p == NULL)
			elog(ERROR, "SPI_prepare failed for the webhook rejects statement: %s",
				 SPI_result_code_string(SPI_result));
		SPI_keepplan(p);
		rejects_plan = p;
	}
}

/* Runs the events statement for the valid items; returns rows inserted. */
static int64
insert_events(WhItem **items, int n)
{
	const char **cols[7];
	const char *chain_kind[PSVC_WH_MAX_CHAINS];
	const char *chain_from[PSVC_WH_MAX_CHAINS];
	const char *chain_to[PSVC_WH_MAX_CHAINS];
	int			nchains;
	Datum	   *payloads = palloc(sizeof(Datum) * n);
	Datum	   *keys = palloc(sizeof(Datum) * n);
	Datum		args[NEVENT_ARGS];
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int			rc;

	for (int c = 0; c < 7; c++)
		cols[c] = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		WhItem	   *it = items[i];

		cols[0][i] = it->d->environment;
		cols[1][i] = it->event_type;
		cols[2][i] = it->status;
		cols[3][i] = it->unique_id;
		cols[4][i] = it->custom_id;
		cols[5][i] = it->transaction_id;
		cols[6][i] = it->pdf_url;
		payloads[i] = it->payload;
		keys[i] = dedupe_key(it->d);
	}
	for (int c = 0; c < 7; c++)
		args[c] = text_array(cols[c], n);
	args[7] = PointerGetDatum(construct_md_array(payloads, NULL, 1, dims, lbs, JSONBOID,
												 -1, false, TYPALIGN_INT));
	args[8] = PointerGetDatum(construct_md_array(keys, NULL, 1, dims, lbs, BYTEAOID,
												 -1, false, TYPALIGN_INT));
	nchains = psvc_wh_status_chains(chain_kind, chain_from, chain_to);
	args[9] = text_array(chain_kind, nchains);
	args[10] = text_array(chain_from, nchains);
	args[11] = text_array(chain_to, nchains);
	rc = SPI_execute_plan(events_plan, args, NULL, false, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "webhook events statement failed: %s", SPI_result_code_string(rc));
	return (int64) SPI_processed;
}

static void
insert_rejects(WhItem **items, int n)
{
	const char **env = palloc(sizeof(char *) * n);
	const char **reason = palloc(sizeof(char *) * n);
	const char **body = palloc(sizeof(char *) * n);
	Datum	   *bytes = palloc(sizeof(Datum) * n);
	Datum		args[4];
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int			rc;

	for (int i = 0; i < n; i++)
	{
		env[i] = items[i]->d->environment;
		reason[i] = items[i]->reject;
		body[i] = reject_body(items[i]->d);
		bytes[i] = Int32GetDatum((int32) items[i]->d->len);
	}
	args[0] = text_array(env, n);
	args[1] = text_array(reason, n);
	args[2] = PointerGetDatum(construct_md_array(bytes, NULL, 1, dims, lbs, INT4OID,
												 4, true, TYPALIGN_INT));
	args[3] = text_array(body, n);
	rc = SPI_execute_plan(rejects_plan, args, NULL, false, 0);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "webhook rejects statement failed: %s", SPI_result_code_string(rc));
}

/* How a batch transaction ended. */
typedef enum WhStoreResult
{
	WH_STORED,					/* committed; every item has its answer */
	WH_FAILED,					/* an error that one item may have caused */
	WH_FAILED_TRANSIENT			/* an error of the moment: retry later */
} WhStoreResult;

/*
 * True for errors no delivery of the batch caused (a lock wait over
 * lock_timeout, out of memory or disk, a cancel, a connection or system
 * failure): storing the deliveries one by one would only repeat them.
 */
static bool
error_is_transient(int sqlerrcode)
{
	int			cat = ERRCODE_TO_CATEGORY(sqlerrcode);

	return sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE ||
		sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE ||
		sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED ||
		cat == ERRCODE_INSUFFICIENT_RESOURCES ||
		cat == ERRCODE_OPERATOR_INTERVENTION ||
		cat == ERRCODE_SYSTEM_ERROR ||
		cat == ERRCODE_CONNECTION_EXCEPTION;
}

/*
 * Stores items in one transaction and sets their answers.  Returns
 * WH_STORED, or (after aborting, logging, and setting nothing) how the
 * transaction failed.  Called with CurrentMemoryContext the batch context.
 */
static WhStoreResult
store_items(WhItem *items, int n, const PsvcWhStatusSink *status)
{
	MemoryContext cxt = CurrentMemoryContext;
	WhItem	  **valid = palloc(sizeof(WhItem *) * n);
	WhItem	  **rejects = palloc(sizeof(WhItem *) * n);
	int			nvalid = 0;
	int			nrejects = 0;
	volatile int64 inserted = 0;
	volatile bool missing = false;
	volatile WhStoreResult result = WH_STORED;

	for (int i = 0; i < n; i++)
	{
		if (items[i].reject)
			rejects[nrejects++] = &items[i];
		else
			valid[nvalid++] = &items[i];
	}

	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		if (!OidIsValid(get_extension_oid("partner_svc", true)))
			missing = true;
		else
		{
			if (SPI_connect() != SPI_OK_CONNECT)
				elog(ERROR, "SPI_connect failed");
			PushActiveSnapshot(GetTransactionSnapshot());
			prepare_plans();
			if (nvalid > 0)
				inserted = insert_events(valid, nvalid);
			if (nrejects > 0)
				insert_rejects(rejects, nrejects);
			PopActiveSnapshot();
			SPI_finish();
		}
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		HOLD_INTERRUPTS();
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		RESUME_INTERRUPTS();
		MemoryContextSwitchTo(cxt);
		ereport(WARNING,
				(errmsg("partner_svc webhook worker could not store %d deliveries", n),
				 errdetail("%s", edata->message)));
		status->set_error(edata->message);
		result = error_is_transient(edata->sqlerrcode) ? WH_FAILED_TRANSIENT : WH_FAILED;
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);

	if (result != WH_STORED)
		return result;
	if (missing)
	{
		status->extension_missing();
		for (int i = 0; i < n; i++)
			psvc_wh_http_set_error(items[i].d, 503, "the receiver is not set up yet");
		psvc_wh_http_count_failed(n);
		return WH_STORED;
	}
	status->clear_error(PSVC_WH_NO_EXTENSION_MSG);
	status->stored();
	for (int i = 0; i < n; i++)
	{
		if (items[i].reject)
			psvc_wh_http_set_error(items[i].d, 400, items[i].reject);
		else
			items[i].d->status = 200;
	}
	psvc_wh_http_count_batch(n, inserted, nvalid - inserted, nrejects);
	psvc_bgs_add(PSVC_BGS_WEBHOOKS_STORED, nvalid);
	psvc_bgs_add(PSVC_BGS_WEBHOOKS_REJECTED, nrejects);
	return WH_STORED;
}

void
psvc_wh_store_batch(PsvcWhDelivery *batch, int n, const PsvcWhStatusSink *status)
{
	WhItem	   *items = palloc(sizeof(WhItem) * n);
	int			i = 0;

	psvc_bgs_add(PSVC_BGS_WEBHOOKS_RECEIVED, n);

	for (PsvcWhDelivery *d = batch; d; d = d->next)
	{
		classify(d, &items[i]);
		if (items[i].transient)
		{
			psvc_wh_http_set_error(d, 503, "the delivery could not be read now; retry later");
			psvc_wh_http_count_failed(1);
			continue;
		}
		i++;
	}
	n = i;
	if (n == 0)
		return;

	switch (store_items(items, n, status))
	{
		case WH_STORED:
			return;
		case WH_FAILED_TRANSIENT:
			/* one by one would only wait again: all 503 */
			for (i = 0; i < n; i++)
				psvc_wh_http_set_error(items[i].d, 503,
									   "the delivery could not be stored now; retry later");
			psvc_wh_http_count_failed(n);
			return;
		case WH_FAILED:
			break;
	}
	/* one by one: only the deliveries that fail alone get 500 */
	for (i = 0; i < n; i++)
	{
		WhStoreResult r = n > 1 ? store_items(&items[i], 1, status) : WH_FAILED;

		if (r == WH_STORED)
			continue;
		if (r == WH_FAILED_TRANSIENT)
			psvc_wh_http_set_error(items[i].d, 503, "the delivery could not be stored now; retry later");
		else
			psvc_wh_http_set_error(items[i].d, 500, "the delivery could not be stored; retry later");
		psvc_wh_http_count_failed(1);
	}
}
