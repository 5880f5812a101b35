/*-------------------------------------------------------------------------
 *
 * call.c
 *		  Calls: building them from an operation row of the catalogue, a
 *		  server and values (call.h), starting them as the row says, and
 *		  raising or reading what came back.
 *
 * A call holds the row it calls and nothing derived from it: the method,
 * the route, whether a retry is harmless, whether the answer may be
 * cached, the envelope and the "nothing here" codes are read from the row
 * where they are needed (http.c, http_attempt.c, cache.c, the callers).
 * This file and the psvc_call_set_* functions are the only code that
 * fills a PsvcCall, and this file is the only one of the transport that
 * reads a call's row (psvc_call_start, psvc_call_raise);
 * test/call_check.sh fails the suite when another file builds a call or
 * copies a field of a row.
 *
 * Memory: everything is allocated in CurrentMemoryContext; a call points
 * to its values, which the caller keeps.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/call.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"

#include "catalog.h"
#include "http_int.h"
#include "json.h"
#include "xact_writes.h"

StaticAssertDecl(PSVC_CALL_MAX_PATH == PSVC_MAX_PATH_PARAMS,
				 "a call holds a value for every path parameter of a route");

PsvcCall *
psvc_call_make(const PsvcOperation *op, const struct PsvcServer *server,
			   const char *const *path)
{
	PsvcCall   *call = palloc0(sizeof(PsvcCall));

	call->op = op;
	call->server = server;
	for (int i = 0; i < PSVC_MAX_PATH_PARAMS && op->params[i]; i++)
		call->path[i] = path != NULL ? path[i] : NULL;
	call->cache_ttl_ms = -1;
	call->budget_share = 100;
	call->max_retries = -1;
	return call;
}

/* The index of path parameter name in call's row; elog when it has none. */
static int
path_index(const PsvcCall *call, const char *name)
{
	for (int i = 0; i < PSVC_MAX_PATH_PARAMS && call->op->params[i]; i++)
		if (strcmp(call->op->params[i]->name, name) == 0)
			return i;
	elog(ERROR, "%s %s has no path parameter \"%s\"",
		 call->op->method, call->op->route, name);
	pg_unreachable();
}

void
psvc_call_set_path(PsvcCall *call, const char *name, const char *value)
{
	int			i = path_index(call, name);

	call->path[i] = value;
	call->placeholders &= ~(1U << i);
}

void
psvc_call_set_placeholder(PsvcCall *call, const char *name, const char *text)
{
	int			i = path_index(call, name);

	call->path[i] = text;
	call->placeholders |= 1U << i;
}

void
psvc_call_add_query(PsvcCall *call, const char *name, const char *value,
					bool placeholder)
{
	PsvcKV	   *kv = palloc(sizeof(PsvcKV));

	kv->name = name;
	kv->value = value;
	kv->placeholder = placeholder;
	call->query = lappend(call->query, kv);
}

void
psvc_call_set_body(PsvcCall *call, const char *json, size_t len)
{
	call->body = json;
	call->body_len = len;
}

void
psvc_call_set_cache_ttl(PsvcCall *call, int ttl_ms)
{
	call->cache_ttl_ms = ttl_ms;
}

void
psvc_call_set_share(PsvcCall *call, int percent)
{
	call->budget_share = Min(Max(percent, 1), 100);
}

void
psvc_call_set_retries(PsvcCall *call, int n)
{
	call->max_retries = Max(n, 0);
}

void
psvc_call_set_idempotency_key(PsvcCall *call, const char *key)
{
	call->idempotency_key = key;
}

void
psvc_call_set_decoding(PsvcCall *call, const char *sig, size_t len)
{
	call->decoded_sig = sig;
	call->decoded_sig_len = len;
}

/*
 * The error code of an error answer: error.code, or a string error, of
 * the body read by the JSON layer's one reader of error bodies (which
 * never raises); NULL when it has none.  CurrentMemoryContext.
 */
char *
psvc_call_error_code(const PsvcResult *res)
{
	PsvcJsonErrorBody eb;

	if (res->body == NULL ||
		!psvc_json_error_body(res->body, res->body_len,
							  GetDatabaseEncoding(), &eb))
		return NULL;
	if (eb.error != NULL)
		return eb.error_is_string ? eb.error : NULL;
	return eb.code_is_string ? eb.code : NULL;
}

/*
 * Whether res is a 404 whose error code the call's row names as "nothing
 * here" (movies' content_not_available, an unknown order looked up by
 * custom id).
 */
bool
psvc_call_is_empty(const PsvcCall *call, const PsvcResult *res)
{
	return res->kind == PSVC_CALL_HTTP_ERROR && res->status == 404 &&
		call->op->empty_codes != NULL &&
		psvc_op_empty_code(call->op, psvc_call_error_code(res));
}

/*
 * Starts call: reads its row for the transport (the method and route it
 * is sent and named by, whether it may be repeated, whether its answer
 * may be cached) and hands it to http.c.  See call.h.
 */
PsvcTransfer *
psvc_call_start(const PsvcCall *call, MemoryContext cxt)
{
	const PsvcOperation *op = call->op;
	PsvcHttpPlan plan;

	/* every call is an operation of the catalogue (catalog.c) */
	if (op == NULL)
		elog(ERROR, "call names no operation of the catalogue");
	if (call->placeholders != 0)
		elog(ERROR, "%s %s has a placeholder for a value", op->method, op->route);
	/* a write at a partner is refused where a local one would be */
	if (!op->safe)
		psvc_xact_check_writable(op->name);
	plan.method = op->method;
	plan.route = op->route;
	/* the row says whether repeating it is harmless; nothing else does */
	plan.idempotent = op->safe;
	/* only a read that is safe to repeat may be answered from the cache */
	plan.cacheable = op->safe && strcmp(op->method, "GET") == 0;
	return psvc_http_start(call, &plan, cxt);
}

/* start + finish, with everything in CurrentMemoryContext. */
PsvcResult *
psvc_call_run(const PsvcCall *call)
{
	return psvc_call_finish(psvc_call_start(call, CurrentMemoryContext));
}

/*
 * Raises the ERROR of res, a result of call that is not OK: for an HTTP
 * status, by the status rules of http_errors.c with the service's error
 * in the detail; for a lost answer or a failure, the error rendered when
 * the call ended.  The context line names the method, the route template
 * and the server, never the URL or the key.
 */
void
psvc_call_raise(const PsvcCall *call, const PsvcResult *res)
{
	const PsvcCallError *e = res->error;

	if (res->kind == PSVC_CALL_OK)
		elog(ERROR, "%s %s succeeded", call->op->method, call->op->route);
	if (res->kind == PSVC_CALL_HTTP_ERROR)
		psvc_http_report_status(call->op->method, call->op->route, call->server,
								res->status, res->body, res->body_len,
								res->retries);
	ereport(ERROR,
			(errcode(e->sqlstate),
			 errmsg_internal("%s", e->message),
			 e->detail ? errdetail_internal("%s", e->detail) : 0,
			 e->hint ? errhint("%s", e->hint) : 0,
			 errcontext("%s", e->context)));
	pg_unreachable();
}
