/*-------------------------------------------------------------------------
 *
 * fdw_jit.c
 *		  Keeps the time a plan waits for partner services out of the
 *		  decision to JIT-compile it.
 *
 * PostgreSQL compiles a query with LLVM when the plan's total cost passes
 * jit_above_cost (and optimises and inlines past their own thresholds).
 * A partner_svc scan costs mostly its HTTP requests (fdw_plan.c charges a
 * request like a thousand page reads, so that plans avoid them), which is
 * waiting, not work JIT could speed up: a scan of a 1,000-page list passed
 * every threshold and paid 8 to 21 ms of compilation on every execution,
 * more than a tenth of the scan itself (docs/performance.md).
 *
 * So a planner hook decides again, after the standard planner, for plans
 * that JIT would compile: it takes out the cost of partner_svc's foreign
 * scans, multiplied by how often a nested loop runs them, and applies the
 * same three thresholds to what is left.  Plans without partner_svc scans
 * keep the standard decision; the estimate errs towards less JIT (a
 * Memoize or a correlated subquery's repeated scans are not counted).
 *
 * Memory: none beyond what the planner allocates.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_jit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "foreign/fdwapi.h"
#include "jit/jit.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "optimizer/planner.h"

#include "fdw.h"

static planner_hook_type prev_planner_hook = NULL;

/* Is this foreign scan one of ours? */
static bool
scan_is_ours(ForeignScan *fs)
{
	FdwRoutine *routine;

	if (!OidIsValid(fs->fs_server))
		return false;
	routine = GetFdwRoutineByServerId(fs->fs_server);
	return routine->GetForeignPlan == psvc_fdw_get_plan;
}

/*
 * The cost of partner_svc's scans under plan, each times the number of
 * times it runs (loops: how often plan itself runs).
 */
static Cost
remote_cost(Plan *plan, double loops)
{
	Cost		sum = 0;
	ListCell   *lc;

	if (plan == NULL)
		return 0;
	check_stack_depth();
	switch (nodeTag(plan))
	{
		case T_ForeignScan:
			if (scan_is_ours((ForeignScan *) plan))
				return plan->total_cost * loops;
			break;
		case T_NestLoop:
			sum += remote_cost(plan->lefttree, loops);
			sum += remote_cost(plan->righttree,
							   loops * Max(plan->lefttree->plan_rows, 1));
			return sum;
		case T_Append:
			foreach(lc, ((Append *) plan)->appendplans)
				sum += remote_cost(lfirst(lc), loops);
			break;
		case T_MergeAppend:
			foreach(lc, ((MergeAppend *) plan)->mergeplans)
				sum += remote_cost(lfirst(lc), loops);
			break;
		case T_SubqueryScan:
			sum += remote_cost(((SubqueryScan *) plan)->subplan, loops);
			break;
		case T_BitmapAnd:
			foreach(lc, ((BitmapAnd *) plan)->bitmapplans)
				sum += remote_cost(lfirst(lc), loops);
			break;
		case T_BitmapOr:
			foreach(lc, ((BitmapOr *) plan)->bitmapplans)
				sum += remote_cost(lfirst(lc), loops);
			break;
		default:
			break;
	}
	sum += remote_cost(plan->lefttree, loops);
	sum += remote_cost(plan->righttree, loops);
	return sum;
}

/* The standard rule (planner.c), applied to cost. */
static int
jit_flags_for(Cost cost)
{
	int			flags = PGJIT_NONE;

	if (jit_enabled && jit_above_cost >= 0 && cost > jit_above_cost)
	{
		flags |= PGJIT_PERFORM;
		if (jit_optimize_above_cost >= 0 && cost > jit_optimize_above_cost)
			flags |= PGJIT_OPT3;
		if (jit_inline_above_cost >= 0 && cost > jit_inline_above_cost)
			flags |= PGJIT_INLINE;
		if (jit_expressions)
			flags |= PGJIT_EXPR;
		if (jit_tuple_deforming)
			flags |= PGJIT_DEFORM;
	}
	return flags;
}

static PlannedStmt *
jit_planner(Query *parse, const char *query_string, int cursorOptions,
			ParamListInfo boundParams)
{
	PlannedStmt *result;
	Cost		remote;

	if (prev_planner_hook)
		result = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		result = standard_planner(parse, query_string, cursorOptions, boundParams);

	if ((result->jitFlags & PGJIT_PERFORM) == 0 || result->planTree == NULL)
		return result;
	remote = remote_cost(result->planTree, 1);
	for (ListCell *lc = list_head(result->subplans); lc; lc = lnext(result->subplans, lc))
		remote += remote_cost(lfirst(lc), 1);
	if (remote > 0)
		result->jitFlags = jit_flags_for(Max(result->planTree->total_cost - remote, 0));
	return result;
}

void
psvc_fdw_jit_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = jit_planner;
}
