/*-------------------------------------------------------------------------
 *
 * functions.h
 *		  What the SQL functions of partner_svc share (functions.c): the
 *		  server a call uses, one request and its answer as jsonb.
 *
 * The functions themselves are in one file per service family:
 * functions_orders.c, functions_content.c (movies, catalog, generation),
 * functions_files.c and functions_scheduler.c; they export nothing but
 * their PG_FUNCTION_INFO_V1 entry points.  They send through the HTTP
 * client (http.h) and read answers as jsonb.
 *
 * Memory: everything returned here is allocated in CurrentMemoryContext,
 * the function call's context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions.h
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
/* jsonb from JSON text, NULL for empty text; CurrentMemoryContext. */
extern Jsonb *psvc_fn_jsonb(const char *text, size_t len);
extern Jsonb *psvc_fn_call(PsvcHttpRequest *req, bool null_on_404);
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
/* the body as jsonb, or its "data" member; raise naming req when absent */
extern Jsonb *psvc_fn_body(const PsvcHttpRequest *req, const PsvcHttpResponse *resp);
extern Jsonb *psvc_fn_data(const PsvcHttpRequest *req, const PsvcHttpResponse *resp);
/* 22023 unless value has 1..maxlen characters; before anything is sent */
extern void psvc_fn_check_ref(const char *argname, const char *value, int maxlen);
/* j as JSON text in UTF-8, for a request body */
extern char *psvc_fn_json_text(Jsonb *j, size_t *len);

#endif							/* PSVC_FUNCTIONS_H */
