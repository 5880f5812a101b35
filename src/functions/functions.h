/*-------------------------------------------------------------------------
 *
 * functions.h
 *		  What the SQL functions of partner_svc share: the server a call
 *		  uses (functions.c), answers as jsonb, and the one executor that
 *		  runs an operation of the catalogue as a SQL function
 *		  (functions_exec.c).
 *
 * The functions themselves are in one file per service family:
 * functions_orders.c, functions_content.c (movies, catalog, generation),
 * functions_files.c and functions_scheduler.c; they export nothing but
 * their entry points, each of which names its operation (catalog.h).
 * They send through the HTTP client (http.h) and read answers as jsonb.
 *
 * Memory: everything returned here is allocated in CurrentMemoryContext,
 * the function call's context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_FUNCTIONS_H
#define PSVC_FUNCTIONS_H

#include "fmgr.h"
#include "utils/jsonb.h"

#include "http.h"
#include "options.h"

/*
 * The server a function uses: the one named by argument argno, or the only
 * server of service.  Checks USAGE.  Allocates in CurrentMemoryContext.
 */
extern PsvcServer *psvc_fn_server(const char *service,
								  FunctionCallInfo fcinfo, int argno);
/*
 * Reading answers (all allocate in CurrentMemoryContext).  psvc_fn_parse
 * never raises for a bad body: NULL when it is not UTF-8 JSON.
 */
extern Jsonb *psvc_fn_parse(const char *text, size_t len);
extern JsonbValue *psvc_fn_member(Jsonb *j, const char *key);
extern char *psvc_fn_member_text(Jsonb *j, const char *key);	/* strings only */
extern Jsonb *psvc_fn_member_jsonb(Jsonb *j, const char *key);	/* NULL for null */
/* error.code or a string error of an error body, else NULL */
extern char *psvc_fn_error_code(const PsvcHttpResponse *resp);
/* the body as jsonb; raise naming req when it is not JSON */
extern Jsonb *psvc_fn_body(const PsvcHttpRequest *req, const PsvcHttpResponse *resp);
/* j as JSON text in UTF-8, for a request body */
extern char *psvc_fn_json_text(Jsonb *j, size_t *len);

/* ---- functions_exec.c: the one executor of the SQL functions ---- */

/*
 * A SQL function that is one operation of the catalogue: its C entry point
 * names the row, and psvc_exec does the rest (argument, server, request,
 * answer, errors).  Write PSVC_OPERATION_FUNCTION(fn, id) without a
 * semicolon after it.
 */
struct PsvcOperation;			/* catalog.h */
extern Datum psvc_exec(FunctionCallInfo fcinfo, const struct PsvcOperation *op);
#define PSVC_OPERATION_FUNCTION(fn, opid) \
	PG_FUNCTION_INFO_V1(fn); \
	Datum fn(PG_FUNCTION_ARGS) { return psvc_exec(fcinfo, psvc_op(opid)); }
/* The server of op's service: argument argno, or the only one; USAGE. */
extern PsvcServer *psvc_exec_server(const struct PsvcOperation *op,
									FunctionCallInfo fcinfo, int argno);
/*
 * The request of op on server, its path parameters from values (one per
 * op->params, in order; NULL when op has none), retries as op->safe says,
 * errors given back (return_errors).  CurrentMemoryContext.
 */
extern PsvcHttpRequest *psvc_exec_request(const struct PsvcOperation *op,
										  const PsvcServer *server,
										  const char *const *values);
/* Sets req's body to JSON text (server encoding) of len bytes. */
extern void psvc_exec_set_body(PsvcHttpRequest *req, char *json, size_t len);
/* The body {"<body_member>": value} of a PSVC_ARG_BODY_MEMBER operation; 22023 if empty. */
extern void psvc_exec_set_member_body(PsvcHttpRequest *req, const char *value);
/* The payload of a 2xx answer: its envelope's member, or the body. */
extern Jsonb *psvc_exec_payload(const PsvcHttpRequest *req,
								const PsvcHttpResponse *resp);
/*
 * Sends req and returns the payload; NULL for a 404 whose code the
 * operation names as "nothing here".  Other failures raise.
 */
extern Jsonb *psvc_exec_send(const PsvcHttpRequest *req);

/*
 * A create whose answer may be lost (create_order, create_transaction):
 * what it is called, and how to find out whether a lost request made its
 * object.  settle returns that object, read back and marked "recovered",
 * or NULL with *none when not a trace of it exists (then the create is
 * sent again); a partial trace raises psvc_exec_create_unknown.  can_settle
 * is false when the payload carries nothing to look it up by.
 */
typedef Jsonb *(*PsvcSettleFn) (void *arg, const char *failure, bool *none);
typedef struct PsvcCreateDef
{
	const char *function;		/* "create_order" */
	const char *object;			/* "order" */
	const char *where;			/* where a reader looks for one by hand */
} PsvcCreateDef;

/*
 * Sends the create req (its body set) until it has an answer, settling
 * each lost one with settle(arg); returns the object made.  Every failure
 * raises.  CurrentMemoryContext.
 */
extern Jsonb *psvc_exec_create(const PsvcCreateDef *def, PsvcServer *server,
							   PsvcHttpRequest *req, bool can_settle,
							   PsvcSettleFn settle, void *arg);
/* The error of a create whose outcome could not be found out (08006). */
extern void psvc_exec_create_unknown(const PsvcCreateDef *def, const char *failure,
									 const char *found, bool have_ids) pg_attribute_noreturn();

#endif							/* PSVC_FUNCTIONS_H */
