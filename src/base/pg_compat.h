/*-------------------------------------------------------------------------
 *
 * pg_compat.h
 *	  What differs between the PostgreSQL majors partner_svc builds on
 *	  (15 to 19), in one place.
 *
 * The modules write the newest form of each API (pg_noreturn, ProcNumber
 * thinking, the split EXPLAIN headers) or call one of the small inline
 * functions below; only this header knows which major it is built for.
 * Each entry names the major that changed the API.  16, 17 and 19 are
 * written from PostgreSQL's history (postgres_fdw's own branches show each
 * change) and are not built here; 15 and 18 are built and tested
 * (docs/testing.md, "Majors").
 *
 * 19 needs nothing here: its signal handlers take two arguments, and
 * every handler of ours is declared with SIGNAL_ARGS (never SIG_IGN
 * through pqsignal); its StaticAssert macros need C11, and the Makefile
 * never asks for an older -std than the compiler's default (gnu17).
 *
 * Include it after postgres.h and after the PostgreSQL headers whose
 * difference it covers (the EXPLAIN part keys on commands/explain.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_PG_COMPAT_H
#define PSVC_PG_COMPAT_H

#include "catalog/pg_foreign_server.h"
#include "common/base64.h"
#include "common/jsonapi.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "optimizer/pathnode.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#else
#include "storage/backendid.h"
#endif

#define PSVC_PG16_GTE (PG_VERSION_NUM >= 160000)
#define PSVC_PG17_GTE (PG_VERSION_NUM >= 170000)
#define PSVC_PG18_GTE (PG_VERSION_NUM >= 180000)

/*
 * 18 replaced the trailing by the leading function
 * specifier pg_noreturn.  GCC and MSVC both take the older attribute in
 * front of a declaration, so before 18 pg_noreturn is that attribute.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* 18 lets a library say its name and version (pg_get_loaded_modules). */
#ifdef PG_MODULE_MAGIC_EXT
#define PSVC_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "partner_svc", .version = PSVC_VERSION)
#else
#define PSVC_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/*
 * 16 keeps the GUCs in a hash table and lists them into an array it
 * allocates (CurrentMemoryContext); before, the array was the table.
 * Only for a file that includes utils/guc_tables.h (guc.c): from 16 that
 * header declares names, such as find_option, that other files use.
 */
#ifdef GUC_TABLES_H
static inline struct config_generic **
psvc_guc_variables(int *n)
{
#if PSVC_PG16_GTE
	return get_guc_variables(n);
#else
	*n = GetNumConfigOptions();
	return get_guc_variables();
#endif
}
#endif

/* 16 replaced the per-object ACL checks by object_aclcheck. */
static inline AclResult
psvc_server_aclcheck(Oid serverid, Oid roleid, AclMode mode)
{
#if PSVC_PG16_GTE
	return object_aclcheck(ForeignServerRelationId, serverid, roleid, mode);
#else
	return pg_foreign_server_aclcheck(serverid, roleid, mode);
#endif
}

/*
 * create_foreignscan_path: 17 added fdw_restrictinfo (which a scan without
 * joins or parameterised paths leaves NIL), 18 the count of disabled nodes
 * (none here).
 */
static inline ForeignPath *
psvc_create_foreignscan_path(PlannerInfo *root, RelOptInfo *rel, PathTarget *target,
							 double rows, Cost startup_cost, Cost total_cost,
							 List *pathkeys, Relids required_outer,
							 Path *fdw_outerpath, List *fdw_private)
{
#if PSVC_PG18_GTE
	return create_foreignscan_path(root, rel, target, rows, 0, startup_cost, total_cost,
								   pathkeys, required_outer, fdw_outerpath, NIL,
								   fdw_private);
#elif PSVC_PG17_GTE
	return create_foreignscan_path(root, rel, target, rows, startup_cost, total_cost,
								   pathkeys, required_outer, fdw_outerpath, NIL,
								   fdw_private);
#else
	return create_foreignscan_path(root, rel, target, rows, startup_cost, total_cost,
								   pathkeys, required_outer, fdw_outerpath, fdw_private);
#endif
}

/*
 * The JSON parser: since 16 each semantic action returns an error code
 * (JSON_SUCCESS to go on), since 17 the lexer is made into a caller's
 * struct or, given NULL, a palloc'd one.  An action is declared
 * "static psvc_json_action f(...)" and ends with "return PSVC_JSON_OK;".
 */
#if PSVC_PG16_GTE
typedef JsonParseErrorType psvc_json_action;
#define PSVC_JSON_OK JSON_SUCCESS
#else
typedef void psvc_json_action;
#define PSVC_JSON_OK
#endif

/* Allocates in CurrentMemoryContext. */
static inline JsonLexContext *
psvc_json_lexer(const char *json, size_t len, int encoding, bool need_escapes)
{
#if PSVC_PG17_GTE
	return makeJsonLexContextCstringLen(NULL, json, len, encoding, need_escapes);
#else
	return makeJsonLexContextCstringLen(unconstify(char *, json), (int) len, encoding,
										need_escapes);
#endif
}

/*
 * A wait event set that outlives any resource owner (17 ties a set to
 * one, or to none given NULL): the caller frees it with FreeWaitEventSet.
 * Before 17 it is allocated in TopMemoryContext.
 */
static inline WaitEventSet *
psvc_wait_set_create(int nevents)
{
#if PSVC_PG17_GTE
	return CreateWaitEventSet(NULL, nevents);
#else
	return CreateWaitEventSet(TopMemoryContext, nevents);
#endif
}

/*
 * This backend's index among the MaxBackends regular backends (which
 * include background workers), from 0, or -1 for another kind of
 * process: 17 numbers processes by ProcNumber (from 0; regular backends
 * first), older majors by BackendId (from 1).
 */
static inline int
psvc_backend_index(void)
{
#if PSVC_PG17_GTE
	if (MyProcNumber == INVALID_PROC_NUMBER || MyProcNumber >= MaxBackends)
		return -1;
	return (int) MyProcNumber;
#else
	if (MyBackendId == InvalidBackendId || MyBackendId < 1 || MyBackendId > MaxBackends)
		return -1;
	return (int) MyBackendId - 1;
#endif
}

/*
 * This process's index in PostgreSQL's array of PGPROCs (any kind of
 * process), or -1 before it has one: 17 calls it ProcNumber.
 */
static inline int
psvc_proc_index(void)
{
#if PSVC_PG17_GTE
	return MyProcNumber == INVALID_PROC_NUMBER ? -1 : (int) MyProcNumber;
#else
	return MyProc == NULL ? -1 : MyProc->pgprocno;
#endif
}

/* 18 reads base64 input as bytes. */
#if PSVC_PG18_GTE
#define psvc_b64_encode(src, len, dst, dstlen) \
	pg_b64_encode((const uint8 *) (src), (len), (dst), (dstlen))
#else
#define psvc_b64_encode(src, len, dst, dstlen) \
	pg_b64_encode((const char *) (src), (len), (dst), (dstlen))
#endif

/*
 * A check hook's extra: since 16 PostgreSQL frees it with guc_free, so it
 * must come from guc_malloc; before, from malloc.  NULL when out of memory
 * (after a LOG line since 16).
 */
static inline void *
psvc_guc_extra_alloc(size_t size)
{
#if PSVC_PG16_GTE
	return guc_malloc(LOG, size);
#else
	return malloc(size);
#endif
}

static inline void
psvc_guc_extra_free(void *extra)
{
#if PSVC_PG16_GTE
	guc_free(extra);
#else
	free(extra);
#endif
}

/*
 * The role a scan's key is chosen for (the view owner through a view,
 * else the current user): 16 moved checkAsUser from the range table entry
 * to the plan (ForeignScan) and to the result relation's permission info.
 */
static inline Oid
psvc_scan_user(ForeignScan *plan, EState *estate)
{
#if PSVC_PG16_GTE
	return OidIsValid(plan->checkAsUser) ? plan->checkAsUser : GetUserId();
#else
	RangeTblEntry *rte = exec_rt_fetch(plan->scan.scanrelid, estate);

	return OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
#endif
}

static inline Oid
psvc_modify_user(ResultRelInfo *rinfo, EState *estate)
{
#if PSVC_PG16_GTE
	return ExecGetResultRelCheckAsUser(rinfo, estate);
#else
	Index		rti = rinfo->ri_RangeTableIndex;

	/* a partition reached by tuple routing is checked as its root */
	if (rti == 0 && rinfo->ri_RootResultRelInfo)
		rti = rinfo->ri_RootResultRelInfo->ri_RangeTableIndex;
	if (rti > 0)
	{
		RangeTblEntry *rte = exec_rt_fetch(rti, estate);

		return OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
	}
	return GetUserId();
#endif
}

/*
 * Named wait events.  17 lets an extension register names of its own,
 * shown in pg_stat_activity.wait_event; before, every wait is the one
 * event "Extension".  Registered on first use in each process.
 */
typedef enum PsvcWaitEvent
{
	PSVC_WAIT_TRANSFER,			/* an HTTP exchange with a partner */
	PSVC_WAIT_RATE_LIMIT,		/* budget of the shared rate limiter */
	PSVC_WAIT_DEFERRED_RESULT,	/* deferred_result(id, wait) */
	PSVC_WAIT_SENDER_IDLE,		/* a deferred sender with no work */
	PSVC_WAIT_WORKER,			/* the webhook worker's main loop */
	PSVC_WAIT_QUOTA,			/* the fleet quota worker */
	PSVC_WAIT_UPLOAD,			/* a pause between upload chunks */
	PSVC_WAIT_COUNT
} PsvcWaitEvent;

static inline uint32
psvc_wait_event(PsvcWaitEvent which)
{
#if PSVC_PG17_GTE
	static const char *const names[PSVC_WAIT_COUNT] = {
		[PSVC_WAIT_TRANSFER] = "PartnerSvcTransfer",
		[PSVC_WAIT_RATE_LIMIT] = "PartnerSvcRateLimit",
		[PSVC_WAIT_DEFERRED_RESULT] = "PartnerSvcDeferredResult",
		[PSVC_WAIT_SENDER_IDLE] = "PartnerSvcSenderIdle",
		[PSVC_WAIT_WORKER] = "PartnerSvcWorker",
		[PSVC_WAIT_QUOTA] = "PartnerSvcQuota",
		[PSVC_WAIT_UPLOAD] = "PartnerSvcUpload",
	};
	static uint32 ids[PSVC_WAIT_COUNT];

	if (ids[which] == 0)
		ids[which] = WaitEventExtensionNew(names[which]);
	return ids[which];
#else
	return PG_WAIT_EXTENSION;
#endif
}

#endif							/* PSVC_PG_COMPAT_H */

/*
 * 18 moved the EXPLAIN property functions and ExplainState out of
 * commands/explain.h.  Outside the guard above: a file that includes
 * commands/explain.h gets them whenever it includes this header after it,
 * even if another header included this one first.
 */
#if defined(EXPLAIN_H) && PG_VERSION_NUM >= 180000 && !defined(PSVC_PG_COMPAT_EXPLAIN)
#define PSVC_PG_COMPAT_EXPLAIN
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
