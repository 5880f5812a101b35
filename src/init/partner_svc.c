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
 * Every setting is a row of guc.c's one table, defined first; then the
 * one request and startup of shared memory for every segment (segments.c,
 * the list below), and the workers are registered.  GUCs
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
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "bgstats.h"
#include "cache.h"
#include "deferred.h"
#include "estimates.h"
#include "fdw.h"
#include "guc.h"
#include "handoff.h"
#include "inflight.h"
#include "partner_svc.h"
#include "pg_compat.h"
#include "ratelimit.h"
#include "segments.h"
#include "webhook.h"
#include "tokens.h"

PSVC_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(psvc_module_version);

void		_PG_init(void);

/*
 * Every segment of shared memory, made in this order by the one startup
 * of segments.c (only when preloaded).
 */
static const PsvcSegment *const segments[] = {
	&psvc_rl_segment,
	&psvc_quota_segment,
	&psvc_cache_segment,
	&psvc_wh_segment,
	&psvc_wh_poll_segment,
	&psvc_est_segment,
	&psvc_inflight_segment,
	&psvc_handoff_segment,
	&psvc_def_segment,
	&psvc_token_segment,
	&psvc_bgs_segment,
};

/*
 * The background worker slots partner_svc and parallel queries want of
 * max_worker_processes: every sender (partner_svc.deferred_senders), the
 * webhook worker, the quota worker when a coordinator is set, and
 * max_parallel_workers.  A server started with fewer gets one LOG line
 * with the number (docs/reference.md#background-worker-slots): without
 * them senders do not start and parallel queries run without workers.
 * Only the postmaster's preload says it, so it is said once per start.
 */
static void
check_worker_slots(void)
{
	int			ours = psvc_guc_tasks.senders + 1 +
		(psvc_guc_quota_coordinator && psvc_guc_quota_coordinator[0] ? 1 : 0);

	if (!process_shared_preload_libraries_in_progress || IsUnderPostmaster ||
		IsBinaryUpgrade || max_worker_processes >= ours + max_parallel_workers)
		return;
	ereport(LOG,
			(errmsg("max_worker_processes is %d; partner_svc and parallel queries need %d",
					max_worker_processes, ours + max_parallel_workers),
			 errdetail("partner_svc starts up to %d background workers (%d deferred senders, the webhook worker%s) and max_parallel_workers is %d.",
					   ours, psvc_guc_tasks.senders,
					   ours > psvc_guc_tasks.senders + 1 ? ", the quota worker" : "",
					   max_parallel_workers),
			 errhint("Set max_worker_processes to at least %d and restart the server, or lower partner_svc.deferred_senders.",
					 ours + max_parallel_workers)));
}

/*
 * Defines the GUCs, reserves their prefix, and sets up the modules.  Runs once per process that
 * loads the library, whether or not it is being preloaded.
 */
void
_PG_init(void)
{
	psvc_guc_init();
	if (process_shared_preload_libraries_in_progress)
		psvc_shmem_install(segments, lengthof(segments));
	psvc_worker_init();
	psvc_fdw_jit_init();
	psvc_deferred_init();
	check_worker_slots();

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
