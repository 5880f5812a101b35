/*-------------------------------------------------------------------------
 *
 * partner_svc.c
 *		  Module entry point of partner_svc: module magic and _PG_init, which
 *		  defines the configuration parameters (GUCs) of every module.
 *
 * The library is meant to be loaded with shared_preload_libraries, but it
 * must also work when a backend loads it on demand (CREATE EXTENSION, LOAD,
 * or the first call of one of its functions).  _PG_init therefore defines
 * the GUCs in either case.  Work that is only possible at postmaster start
 * (shared memory, the background worker) belongs behind a test of
 * process_shared_preload_libraries_in_progress; none exists yet.
 *
 * Every setting is a row of guc.c's one table, defined first; the modules'
 * init functions then ask for shared memory and register workers.  GUCs
 * are documented in docs/reference.md; define none that is not
 * documented there.  The prefix "partner_svc" is reserved, so a misspelt
 * partner_svc.* setting is an error instead of a silent placeholder.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/init/partner_svc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "cache.h"
#include "deferred.h"
#include "guc.h"
#include "partner_svc.h"
#include "pg_compat.h"
#include "ratelimit.h"
#include "webhook.h"
#include "estimates.h"
#include "inflight.h"
#include "fdw.h"
#include "handoff.h"

PSVC_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(psvc_module_version);

void		_PG_init(void);

/*
 * Defines the GUCs, reserves their prefix, and sets up the modules.  Runs once per process that
 * loads the library, whether or not it is being preloaded.
 */
void
_PG_init(void)
{
	psvc_guc_init();
	psvc_rl_init();
	psvc_cache_init();
	psvc_worker_init();
	psvc_est_init();
	psvc_inflight_init();
	psvc_fdw_jit_init();
	psvc_handoff_init();
	psvc_deferred_init();

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
