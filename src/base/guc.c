/*-------------------------------------------------------------------------
 *
 * guc.c
 *		  The client settings of partner_svc: the GUCs partner_svc.* of the
 *		  HTTP client and the scan.
 *
 * Each is also a server option of the same name that overrides it for
 * one server (server_options.c reads both: psvc_options_setting).  They
 * are defined in every process that loads the library, preloaded or not,
 * by _PG_init (partner_svc.c) through psvc_guc_init.  The bounds are in
 * guc.h, shared with the server options.  Documented in
 * docs/reference.md.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/guc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"

#include "guc.h"

int			psvc_guc_connect_timeout = 5000;
int			psvc_guc_request_timeout = 30000;
int			psvc_guc_max_retries = 3;
int			psvc_guc_page_size = 100;
int			psvc_guc_fanout = 8;
bool		psvc_guc_prefetch = true;
int			psvc_guc_max_response_size = PSVC_DEFAULT_MAX_RESPONSE_SIZE;

/* Defines the settings; from _PG_init, once per process. */
void
psvc_guc_init(void)
{
	DefineCustomIntVariable("partner_svc.connect_timeout",
							"Time allowed to open a connection to a partner service.",
							NULL,
							&psvc_guc_connect_timeout,
							5000,
							1,
							PSVC_MAX_CONNECT_TIMEOUT_MS,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("partner_svc.request_timeout",
							"Time allowed for one HTTP request to a partner service, connecting included.",
							"Applies to each attempt separately; retries get a fresh timeout.",
							&psvc_guc_request_timeout,
							30000,
							1,
							PSVC_MAX_REQUEST_TIMEOUT_MS,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("partner_svc.max_retries",
							"Maximum number of retries of a request that failed transiently.",
							"Zero disables retries.",
							&psvc_guc_max_retries,
							3,
							0,
							PSVC_MAX_RETRIES,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("partner_svc.page_size",
							"Items asked for per page of a cursor-paginated list.",
							"A pushed-down LIMIT asks for fewer when it needs fewer.",
							&psvc_guc_page_size,
							100,
							1,
							PSVC_MAX_PAGE_SIZE,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("partner_svc.fanout",
							"Maximum number of first pages fetched at once by one scan.",
							"Applies to a path parameter given as a list, as in movie = ANY(...).",
							&psvc_guc_fanout,
							8,
							1,
							PSVC_MAX_FANOUT,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("partner_svc.prefetch",
							 "Fetches a list's next page while the current one is consumed.",
							 NULL,
							 &psvc_guc_prefetch,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("partner_svc.max_response_size",
							"Largest response body accepted from a partner service.",
							"A larger response ends the request with an error; a server's option max_response_size may set a lower bound for that server.",
							&psvc_guc_max_response_size,
							PSVC_DEFAULT_MAX_RESPONSE_SIZE,
							1024,
							PSVC_MAX_RESPONSE_SIZE_LIMIT,
							PGC_USERSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);
}
