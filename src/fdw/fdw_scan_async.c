/*-------------------------------------------------------------------------
 *
 * fdw_scan_async.c
 *		  Asynchronous scans of partner_svc foreign tables: the executor's
 *		  callbacks for a scan that an Append runs asynchronously
 *		  (PostgreSQL's asynchronous execution, nodeAppend.c and
 *		  execAsync.c), so that the scans of a UNION ALL, of a view over
 *		  several services or of a table partitioned over foreign tables
 *		  have their requests in flight together.
 *
 * The planner makes a scan asynchronous when its table, or else its
 * server, has the option async_capable and it is a subplan of an Append
 * (psvc_fdw_async_capable, fdw_plan.c).  The Append then asks each such
 * scan for a row (ForeignAsyncRequest) instead of calling it in turn; a
 * scan that cannot answer without waiting says so, and the Append waits
 * for all of them at once (ForeignAsyncConfigureWait) and tells a scan
 * when it may go on (ForeignAsyncNotify).
 *
 * Our scans never wait for anything but their pages, and every transfer
 * of the backend runs in one libcurl multi handle (src/call/http_wait.c).
 * A row is taken by running the scan node itself (its iterate callback,
 * fdw_scan.c, then the node's local conditions and projection), which in
 * asynchronous mode returns no row rather than wait for a page still in
 * flight (would_block).  The first request of each scan starts its first
 * pages, so the Append's first round sends every scan's first requests
 * before any answer is read; each page asks for the next as before
 * (prefetch), and rows are produced as pages arrive, from whichever scan
 * has one.
 *
 * Waiting.  The call module gives one descriptor for all the backend's
 * transfers (psvc_call_event_fd, src/call/http_events.c): it polls
 * readable when curl has something to do or its timer, or a retry, is
 * due.  A WaitEventSet must not hold one descriptor twice, so of our scans
 * that wait in one Append only the first (in the Append's order) adds it;
 * when it is notified it lets the transfers progress once and hands a
 * row, or the end, to every one of our waiting scans whose page has come,
 * as postgres_fdw answers for the other scans of a shared connection.  A
 * scan whose page came while another scan ran (whose pumping moved every
 * transfer) must not wait for the next event: the descriptor is then
 * armed to poll readable at once.
 *
 * Cancel and statement_timeout: the Append's wait watches the latch and
 * runs CHECK_FOR_INTERRUPTS; the descriptor also wakes it within a second,
 * and the notify callback runs CHECK_FOR_INTERRUPTS.  Errors: a failed page
 * raises when its scan is notified, as a synchronous scan raises when it
 * waits; the other scans' transfers go with their contexts.  The rate
 * limiter, the response cache and retries work below the call module, as
 * for any scan.  EXPLAIN: PostgreSQL shows "Async Foreign Scan"; Partner
 * Wait Time is, for such a scan, the time it was pending.
 *
 * Memory: nothing of its own; rows in the scan's contexts (fdw_scan.c).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_scan_async.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/execAsync.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "foreign/fdwapi.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "storage/latch.h"

#include "fdw.h"
#include "fdw_scan_int.h"

/* Whether areq asks a scan of ours: some other wrapper's may share the Append. */
static bool
is_ours(AsyncRequest *areq)
{
	return IsA(areq->requestee, ForeignScanState) &&
		((ForeignScanState *) areq->requestee)->fdwroutine->ForeignAsyncNotify ==
		psvc_fdw_async_notify;
}

static PsvcScanState *
scan_of(AsyncRequest *areq)
{
	return (PsvcScanState *) ((ForeignScanState *) areq->requestee)->fdw_state;
}

/*
 * Whether the scan still waits: its last row stopped at its current
 * stream's page, and that page is still in flight.
 */
static bool
still_waits(PsvcScanState *st)
{
	Stream	   *s;

	if (!st->would_block || st->cur >= st->nstreams)
		return false;
	s = &st->streams[st->cur];
	return s->xfer != NULL && !psvc_call_ready(s->xfer);
}

/*
 * Answers areq with the scan's next row, or its end, when that needs no
 * wait; else marks it pending.  The row is made by the scan node itself
 * (ExecProcNodeReal: the node's local conditions and projection apply,
 * and the Append's execAsync.c keeps the instrumentation).
 */
static void
produce(AsyncRequest *areq)
{
	ForeignScanState *node = (ForeignScanState *) areq->requestee;
	PsvcScanState *st = node->fdw_state;
	TupleTableSlot *result;

	if (still_waits(st))
	{
		ExecAsyncRequestPending(areq);
		return;
	}
	if (st->blocked)
	{
		instr_time	now;

		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, st->blocked_at);
		st->wait_ms += INSTR_TIME_GET_MILLISEC(now);
		st->blocked = false;
	}
	result = node->ss.ps.ExecProcNodeReal(&node->ss.ps);
	if (TupIsNull(result) && st->would_block)
	{
		INSTR_TIME_SET_CURRENT(st->blocked_at);
		st->blocked = true;
		ExecAsyncRequestPending(areq);
	}
	else
		ExecAsyncRequestDone(areq, result);
}

/*
 * Answers areq, pending in the Append, outside the Append's own
 * notification: as ExecAsyncNotify does (instrumentation, the response).
 */
static void
answer_other(AsyncRequest *areq)
{
	PlanState  *ps = areq->requestee;

	areq->callback_pending = false;
	if (ps->instrument)
		InstrStartNode(ps->instrument);
	produce(areq);
	ExecAsyncResponse(areq);
	if (ps->instrument)
		InstrStopNode(ps->instrument, TupIsNull(areq->result) ? 0.0 : 1.0);
}

/* ForeignAsyncRequest: a row, the end, or pending. */
void
psvc_fdw_async_request(AsyncRequest *areq)
{
	produce(areq);
}

/*
 * ForeignAsyncConfigureWait: the first of our pending scans in the Append
 * adds the call module's descriptor to the Append's wait, armed to poll
 * readable at once when a pending scan of ours no longer needs to wait.
 */
void
psvc_fdw_async_configure_wait(AsyncRequest *areq)
{
	AppendState *append = castNode(AppendState, areq->requestor);
	bool		now = false;
	int			i = -1;

	while ((i = bms_next_member(append->as_asyncplans, i)) >= 0)
	{
		AsyncRequest *other = append->as_asyncrequests[i];

		if (other == areq)
			break;
		if (other->callback_pending && is_ours(other))
			return;				/* it added the descriptor */
	}
	i = -1;
	while (!now && (i = bms_next_member(append->as_asyncplans, i)) >= 0)
	{
		AsyncRequest *other = append->as_asyncrequests[i];

		if (other->callback_pending && is_ours(other) && !still_waits(scan_of(other)))
			now = true;
	}
	psvc_call_prepare_wait(now);
	AddWaitEventToSet(append->as_eventset, WL_SOCKET_READABLE,
					  psvc_call_event_fd(), NULL, areq);
}

/*
 * ForeignAsyncNotify: the descriptor areq added polled readable.  Lets
 * the transfers progress, then answers every pending scan of ours in the
 * Append whose page has come, areq last (the Append takes its answer).
 */
void
psvc_fdw_async_notify(AsyncRequest *areq)
{
	AppendState *append = castNode(AppendState, areq->requestor);
	int			i = -1;

	psvc_call_poll();
	CHECK_FOR_INTERRUPTS();
	while ((i = bms_next_member(append->as_asyncplans, i)) >= 0)
	{
		AsyncRequest *other = append->as_asyncrequests[i];

		if (other != areq && other->callback_pending && is_ours(other) &&
			!still_waits(scan_of(other)))
			answer_other(other);
	}
	produce(areq);
}
