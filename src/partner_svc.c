/*-------------------------------------------------------------------------
 *
 * partner_svc.c
 *		  Module entry point of partner_svc: module magic, _PG_init and the
 *		  configuration parameters (GUCs).
 *
 * The library is meant to be loaded with shared_preload_libraries, but it
 * must also work when a backend loads it on demand (CREATE EXTENSION, LOAD,
 * or the first call of one of its functions).  _PG_init therefore defines
 * the GUCs in either case.  Work that is only possible at postmaster start
 * (shared memory, the background worker) belongs behind a test of
 * process_shared_preload_libraries_in_progress; none exists yet.
 *
 * GUCs are documented in docs/reference.md; define none that is not
 * documented there.  The prefix "partner_svc" is reserved, so a misspelt
 * partner_svc.* setting is an error instead of a silent placeholder.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/partner_svc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "cache.h"
#include "partner_svc.h"

PG_MODULE_MAGIC;

int			psvc_guc_connect_timeout = 5000;
int			psvc_guc_request_timeout = 30000;
int			psvc_guc_max_retries = 3;
int			psvc_guc_page_size = 100;
int			psvc_guc_fanout = 8;
bool		psvc_guc_prefetch = true;
int			psvc_guc_max_response_size = PSVC_DEFAULT_MAX_RESPONSE_SIZE;

PG_FUNCTION_INFO_V1(psvc_module_version);

void		_PG_init(void);

/*
 * Defines the GUCs and reserves their prefix.  Runs once per process that
 * loads the library, whether or not it is being preloaded.
 */
void
_PG_init(void)
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

	psvc_rl_init();
	psvc_cache_init();
	psvc_worker_init();

	MarkGUCPrefixReserved("partner_svc");
}

/*
 * partner_svc.version() returns the version of the loaded library, which
 * can differ from pg_extension.extversion after an upgrade of the files
 * without ALTER EXTENSION ... UPDATE.
 */
Datum
psvc_module_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(PSVC_VERSION));
}
