/*-------------------------------------------------------------------------
 *
 * http_wait.c
 *		  The HTTP client's engine room: the backend's libcurl multi handle,
 *		  the pool of easy handles, the sockets libcurl asks us to watch,
 *		  and the pumping and waiting that make transfers progress, and
 *		  the one descriptor an Append's wait watches for all of them.
 *
 * Connections.  Each backend has one libcurl multi handle, made on first
 * use and closed at process exit.  Every transfer of the backend runs in
 * it, so all of them share its connection cache (see http.c for when a
 * request opens a fresh connection).  Easy handles are pooled and
 * curl_easy_reset() before reuse; a handle goes back to the pool as soon
 * as its attempt completes, so the pool only holds handles of transfers
 * in flight plus a few idle ones.
 *
 * Progress.  Nothing runs in the background: transfers progress whenever a
 * psvc_http_* function is called ("pumping").  We use libcurl's socket
 * interface: CURLMOPT_SOCKETFUNCTION tells us which sockets to watch for
 * what, curl_multi_timeout() when curl next wants to run, and we hand
 * readiness back with curl_multi_socket_action().  psvc_call_poll() looks
 * at the sockets with poll(2) and a zero timeout, so it costs one system
 * call when transfers are running and nothing when none is.  Only
 * psvc_call_finish() (and psvc_http_run_alone, for the OAuth2 token
 * grant of http_token.c, a transfer of its own in the same multi handle)
 * blocks, in a WaitEventSet on the process latch and curl's sockets, with
 * a timeout that is the earliest of curl's timer and the next retry.  While one transfer is waited for, all the others
 * progress, retries included.
 *
 * Layers.  This file sits below http.c: it starts a due retry and hands
 * over a finished attempt through the PsvcHttpDriver that http.c gives
 * psvc_http_ensure_multi, and calls nothing of http.c by name.
 *
 * The wait set is kept from one wait to the next and rebuilt only when
 * the sockets to watch really differ (see wait_set_current).  libcurl
 * takes a kept-alive connection's socket off its watch list when a
 * transfer ends and puts it back for the next one, so "curl changed its
 * sockets" is true for every request; rebuilding then (a new epoll
 * descriptor, one registration per event, a close) cost about a fifth of
 * a backend's CPU time per call of a small function (test/bench/
 * func_bench.sh).  A socket is identified by descriptor and inode, so a
 * descriptor number that curl closed and reused is never mistaken for the
 * one the set holds.
 *
 * Interrupts.  After every wakeup we reset the latch and run
 * CHECK_FOR_INTERRUPTS(), so Ctrl-C and statement_timeout are reported by
 * PostgreSQL itself (57014) within one wakeup.  The progress callback also
 * aborts a transfer when an interrupt is pending and could be serviced;
 * the pump then runs CHECK_FOR_INTERRUPTS().  No callback of libcurl ever
 * raises an error or allocates memory in a way that could: callbacks only
 * record what happened, and the pump acts on it after libcurl returns.
 *
 * The descriptor of the asynchronous scans (psvc_call_event_fd): callers
 * that wait in a WaitEventSet of their own (the asynchronous foreign scans
 * under an Append, src/fdw/fdw_scan.c, whose Append waits for all its
 * subplans at once and lets each add one descriptor to its wait).
 * libcurl watches many sockets and a timer, and a transfer may also wait
 * for a retry; psvc_http_wait sleeps on all of them.  Here they become one
 * descriptor: an epoll instance that holds every socket curl asks to
 * watch, for what curl asks (http_wait.c hands every change through the
 * socket hook), and a timerfd armed before each wait for curl's timer or
 * the next retry (psvc_call_prepare_wait).  An epoll descriptor polls
 * readable when one of its descriptors is ready, so the caller's wait
 * wakes exactly when psvc_http_wait would, and the caller then pumps
 * (psvc_call_poll).  Re-arming the timer clears an expiry already counted.
 *
 * The timer is armed for a second at most, as psvc_http_wait sleeps: a
 * socket the hook failed to register (epoll_ctl out of memory) delays its
 * transfer by that second, never forever, and a wait whose set does not
 * watch the latch still reaches CHECK_FOR_INTERRUPTS.
 *
 * Linux only (epoll, timerfd).  Elsewhere psvc_call_event_fd returns -1
 * and scans are never asynchronous (fdw_scan.c).
 *
 * The two descriptors live as long as the backend (the kernel closes them
 * at exit); they are counted as PostgreSQL's external descriptors.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/http_wait.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_SYS_EPOLL_H
#include <sys/epoll.h>
#include <sys/timerfd.h>
#endif

#include <curl/curl.h>

#include "lib/ilist.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "http_int.h"
#include "inflight.h"
#include "pg_compat.h"

/* Idle easy handles kept for reuse; more are closed when they come back. */
#define PSVC_HTTP_POOL_SIZE			8

/* Longest single wait; a safety net, curl's own timer is always shorter. */
#define PSVC_HTTP_MAX_WAIT_MS		1000

/* A socket libcurl asked us to watch, and for what (CURL_POLL_*). */
typedef struct PsvcSocket
{
	curl_socket_t fd;
	int			what;
} PsvcSocket;

/* Per-backend state.  Nothing here is palloc'd except wait_set and watched. */
static CURLM *multi = NULL;
static bool curl_ready = false;
static bool exit_callback_set = false;
static dlist_head active_transfers = DLIST_STATIC_INIT(active_transfers);
static int	n_backoff = 0;		/* active transfers in XFER_BACKOFF */
static CURL *pool[PSVC_HTTP_POOL_SIZE];
static int	pool_len = 0;
static PsvcSocket *sockets = NULL;	/* malloc'd: callbacks must not palloc */
static int	n_sockets = 0;
static int	max_sockets = 0;
static bool sockets_changed = true;
static WaitEventSet *wait_set = NULL;	/* in TopMemoryContext */

/* A socket wait_set watches, as it was when the set was built. */
typedef struct PsvcWatched
{
	curl_socket_t fd;
	int			what;			/* CURL_POLL_* */
	dev_t		dev;			/* identity of the open socket */
	ino_t		ino;
} PsvcWatched;

static PsvcWatched *watched = NULL; /* in TopMemoryContext */
static int	n_watched = 0;
static bool interrupt_seen = false; /* progress_cb aborted a transfer */
/* psvc_http_run_alone: its handle, whether and how it ended */
static CURL *alone_easy = NULL;
static bool alone_done = false;
static CURLcode alone_code = CURLE_OK;

/* What http.c handed over: the calls back into the transfers. */
static const PsvcHttpDriver *http_driver = NULL;

/*
 * Told of every socket curl watches and of each change (what: CURL_POLL_*,
 * CURL_POLL_REMOVE when no longer watched); runs inside libcurl's socket
 * callback, so it must neither raise nor palloc.
 */
typedef void (*PsvcHttpSocketHook) (curl_socket_t fd, int what);

/* Set once an Append asks for the descriptor (psvc_call_event_fd, below). */
static PsvcHttpSocketHook socket_hook = NULL;

static void http_exit(int code, Datum arg);
static int	socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp,
					  void *socketp);
static void pool_put(CURL *easy);
static void drive_ready_sockets(void);
static void drive_timer(void);
static void collect_finished(void);
static void start_due_retries(void);
static void pump_all(void);
static bool wait_set_current(void);
static void build_wait_set(void);

/* ---------------------------------------------------------------------
 * The multi handle, its sockets and the pool of easy handles
 * ---------------------------------------------------------------------
 */

/*
 * Makes the backend's multi handle on first use and arranges for its
 * cleanup at process exit.
 */
void
psvc_http_ensure_multi(const PsvcHttpDriver *driver)
{
	http_driver = driver;
	if (multi != NULL)
		return;

	if (!curl_ready)
	{
		if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("could not initialize libcurl")));
		curl_ready = true;
	}

	multi = curl_multi_init();
	if (multi == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Could not create a libcurl multi handle.")));
	if (curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, socket_cb) != CURLM_OK)
		elog(ERROR, "could not set libcurl option CURLMOPT_SOCKETFUNCTION");

	if (!exit_callback_set)
	{
		on_proc_exit(http_exit, (Datum) 0);
		exit_callback_set = true;
	}
}

/*
 * Process exit: abort whatever still runs, close every handle and, with
 * the multi handle, every cached connection.
 */
static void
http_exit(int code, Datum arg)
{
	dlist_mutable_iter iter;

	if (multi == NULL)
		return;

	dlist_foreach_modify(iter, &active_transfers)
	{
		PsvcTransfer *t = dlist_container(PsvcTransfer, node, iter.cur);

		if (t->easy != NULL)
		{
			if (t->in_multi)
				curl_multi_remove_handle(multi, t->easy);
			curl_easy_cleanup(t->easy);
			t->easy = NULL;
			t->in_multi = false;
		}
		if (t->headers != NULL)
		{
			curl_slist_free_all(t->headers);
			t->headers = NULL;
		}
		dlist_delete(&t->node);
		t->linked = false;
		t->state = XFER_CANCELLED;
	}
	while (pool_len > 0)
		curl_easy_cleanup(pool[--pool_len]);
	curl_multi_cleanup(multi);
	multi = NULL;
	free(sockets);
	sockets = NULL;
	n_sockets = max_sockets = 0;
}

/*
 * CURLMOPT_SOCKETFUNCTION: libcurl tells us to watch fd for "what", or to
 * stop watching it.  Only records; the next wait checks whether its wait
 * set still fits.  Uses malloc, so nothing here can raise an error.
 */
static int
socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	int			i;

	for (i = 0; i < n_sockets; i++)
		if (sockets[i].fd == fd)
			break;

	if (what == CURL_POLL_REMOVE)
	{
		if (i < n_sockets)
		{
			sockets[i] = sockets[--n_sockets];
			sockets_changed = true;
			if (socket_hook)
				socket_hook(fd, CURL_POLL_REMOVE);
		}
		return 0;
	}

	if (i == n_sockets)
	{
		if (n_sockets == max_sockets)
		{
			int			newmax = Max(8, max_sockets * 2);
			PsvcSocket *s = realloc(sockets, newmax * sizeof(PsvcSocket));

			if (s == NULL)
				return -1;		/* libcurl fails the transfer */
			sockets = s;
			max_sockets = newmax;
		}
		sockets[n_sockets].fd = fd;
		sockets[n_sockets].what = 0;
		n_sockets++;
	}
	if (sockets[i].what != what)
	{
		sockets[i].what = what;
		sockets_changed = true;
		if (socket_hook)
			socket_hook(fd, what);
	}
	return 0;
}

/*
 * Has hook called for every socket curl watches now, then at every change
 * (CURL_POLL_REMOVE: no longer watched).  The hook runs inside libcurl's
 * socket callback: it must not raise or palloc.
 */
static void
set_socket_hook(PsvcHttpSocketHook hook)
{
	socket_hook = hook;
	for (int i = 0; i < n_sockets; i++)
		hook(sockets[i].fd, sockets[i].what);
}

/* An easy handle from the pool, or a new one. */
CURL *
psvc_http_pool_get(void)
{
	CURL	   *easy;

	if (pool_len > 0)
		easy = pool[--pool_len];
	else
	{
		easy = curl_easy_init();
		if (easy == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Could not create a libcurl easy handle.")));
	}
	return easy;
}

/*
 * Gives an easy handle back, reset.  Connections stay in the multi
 * handle's cache.  Runs from reset callbacks: must not raise.
 */
static void
pool_put(CURL *easy)
{
	curl_easy_reset(easy);
	if (pool_len < PSVC_HTTP_POOL_SIZE)
		pool[pool_len++] = easy;
	else
		curl_easy_cleanup(easy);
}

/*
 * Takes a transfer's easy handle out of the multi handle (which closes
 * its connection if the exchange was not complete) and pools it.  Must
 * not raise: runs from reset callbacks, also during abort.
 */
void
psvc_http_detach_handle(PsvcTransfer *t)
{
	if (t->easy == NULL)
		return;
	if (t->in_multi && multi != NULL)
		curl_multi_remove_handle(multi, t->easy);
	t->in_multi = false;
	pool_put(t->easy);
	t->easy = NULL;
}

/*
 * Adds t's easy handle, set up by http.c, to the multi handle, where the
 * attempt runs.  Raises if libcurl refuses it; t's reset callback then
 * gives the handle back.
 */
void
psvc_http_add_handle(PsvcTransfer *t)
{
	CURLMcode	mrc;

	mrc = curl_multi_add_handle(multi, t->easy);
	if (mrc != CURLM_OK)
		elog(ERROR, "could not add a libcurl handle: %s", curl_multi_strerror(mrc));
	t->in_multi = true;
}

/* Puts t on the list of active transfers, which the pump drives. */
void
psvc_http_link(PsvcTransfer *t)
{
	dlist_push_tail(&active_transfers, &t->node);
	t->linked = true;
	/* partner_svc.requests shows it from now until it is unlinked */
	t->inflight = psvc_inflight_begin(t->servername, t->method, t->route,
									  t->description);
}

/*
 * Takes t off the list of active transfers, if it is on it.  Must not
 * raise: runs from reset callbacks.
 */
void
psvc_http_unlink(PsvcTransfer *t)
{
	if (t->linked)
	{
		if (t->state == XFER_BACKOFF)
			n_backoff--;
		dlist_delete(&t->node);
		t->linked = false;
		psvc_inflight_end(t->inflight);
		t->inflight = -1;
	}
}

/*
 * Gives t's handle back and puts t in backoff: the pump starts its next
 * attempt once delay_ms have passed.
 */
void
psvc_http_schedule_retry(PsvcTransfer *t, long delay_ms)
{
	psvc_http_detach_handle(t);
	t->state = XFER_BACKOFF;
	t->retry_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), delay_ms);
	psvc_inflight_set(t->inflight, PSVC_INFLIGHT_BACKOFF, 0);
	n_backoff++;
}

/*
 * Called when the progress callback aborted an attempt for a pending
 * interrupt: the pump then runs CHECK_FOR_INTERRUPTS.
 */
void
psvc_http_note_interrupt(void)
{
	interrupt_seen = true;
}

/* ---------------------------------------------------------------------
 * Pumping and waiting
 * ---------------------------------------------------------------------
 */

/*
 * Lets every transfer progress without blocking: sockets that are ready,
 * curl's expired timers, completed attempts, due retries.  Runs
 * CHECK_FOR_INTERRUPTS when the progress callback aborted an attempt.
 */
void
psvc_http_pump(void)
{
	if (multi == NULL || (dlist_is_empty(&active_transfers) && alone_easy == NULL))
		return;
	pump_all();
}

/* psvc_http_pump's work, whatever runs. */
static void
pump_all(void)
{
	/* every call into libcurl is followed by collect_finished */
	if (n_backoff > 0)
		start_due_retries();
	if (n_sockets > 0)
		drive_ready_sockets();
	drive_timer();
	collect_finished();

	if (interrupt_seen)
	{
		interrupt_seen = false;
		CHECK_FOR_INTERRUPTS();
	}
}

/* Hands libcurl the sockets that poll(2) says are ready now. */
static void
drive_ready_sockets(void)
{
	struct pollfd local[16];
	struct pollfd *fds = local;
	int			n = n_sockets;
	int			i;
	int			running;

	if (n > lengthof(local))
		fds = palloc(n * sizeof(struct pollfd));
	for (i = 0; i < n; i++)
	{
		fds[i].fd = sockets[i].fd;
		fds[i].events = ((sockets[i].what & CURL_POLL_IN) ? POLLIN : 0) |
			((sockets[i].what & CURL_POLL_OUT) ? POLLOUT : 0);
		fds[i].revents = 0;
	}
	if (poll(fds, n, 0) > 0)
	{
		/* the socket callback may change sockets[]; fds is our copy */
		for (i = 0; i < n; i++)
		{
			int			mask = 0;
			CURLMcode	mrc;

			if (fds[i].revents == 0)
				continue;
			if (fds[i].revents & (POLLIN | POLLHUP))
				mask |= CURL_CSELECT_IN;
			if (fds[i].revents & POLLOUT)
				mask |= CURL_CSELECT_OUT;
			if (fds[i].revents & (POLLERR | POLLNVAL))
				mask |= CURL_CSELECT_ERR;
			mrc = curl_multi_socket_action(multi, fds[i].fd, mask, &running);
			if (mrc != CURLM_OK && mrc != CURLM_BAD_SOCKET)
				elog(ERROR, "libcurl failed: %s", curl_multi_strerror(mrc));
		}
	}
	if (fds != local)
		pfree(fds);
}

/* Runs libcurl's timers when they are due. */
static void
drive_timer(void)
{
	long		ms = -1;
	int			running;

	if (curl_multi_timeout(multi, &ms) == CURLM_OK && ms == 0)
	{
		CURLMcode	mrc = curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT,
												   0, &running);

		if (mrc != CURLM_OK)
			elog(ERROR, "libcurl failed: %s", curl_multi_strerror(mrc));
	}
}

/* Takes libcurl's reports of completed attempts. */
static void
collect_finished(void)
{
	CURLMsg    *msg;
	int			left;

	while ((msg = curl_multi_info_read(multi, &left)) != NULL)
	{
		PsvcTransfer *t = NULL;
		CURLcode	code = msg->data.result;

		if (msg->msg != CURLMSG_DONE)
			continue;
		if (alone_easy != NULL && msg->easy_handle == alone_easy)
		{
			alone_done = true;
			alone_code = code;
			continue;
		}
		if (curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **) &t) != CURLE_OK ||
			t == NULL)
			elog(ERROR, "libcurl reported an unknown transfer");
		http_driver->attempt_finished(t, code);
	}
}

/* Starts the next attempt of every transfer whose backoff is over. */
static void
start_due_retries(void)
{
	dlist_mutable_iter iter;
	TimestampTz now = GetCurrentTimestamp();

	dlist_foreach_modify(iter, &active_transfers)
	{
		PsvcTransfer *t = dlist_container(PsvcTransfer, node, iter.cur);

		if (t->state == XFER_BACKOFF && t->retry_at <= now)
		{
			n_backoff--;
			t->state = XFER_RUNNING;	/* start_attempt sets it again */
			http_driver->start_attempt(t);
		}
	}
}

/*
 * Whether wait_set watches exactly what curl asked for: the same sockets
 * (descriptor and inode: fstat tells a reused descriptor number from the
 * socket the set holds) for the same events.  Cheap: one fstat per socket,
 * and nothing at all when curl has not called socket_cb since the build.
 */
static bool
wait_set_current(void)
{
	int			wanted = 0;
	int			i;

	if (wait_set == NULL || n_watched < 0)
		return false;
	if (!sockets_changed)
		return true;

	for (i = 0; i < n_sockets; i++)
	{
		int			j;
		struct stat st;

		if ((sockets[i].what & (CURL_POLL_IN | CURL_POLL_OUT)) == 0)
			continue;
		wanted++;
		for (j = 0; j < n_watched; j++)
			if (watched[j].fd == sockets[i].fd)
				break;
		if (j == n_watched || watched[j].what != sockets[i].what)
			return false;
		if (fstat(sockets[i].fd, &st) != 0 ||
			st.st_dev != watched[j].dev || st.st_ino != watched[j].ino)
			return false;
	}
	if (wanted != n_watched)
		return false;
	sockets_changed = false;
	return true;
}

/*
 * Makes wait_set anew: the latch, postmaster death, and every socket curl
 * wants watched, remembered in watched[].  Raises if the set cannot be
 * made; the next wait then builds it again.
 */
static void
build_wait_set(void)
{
	int			i;
	int			n = 0;

	/* until the set is complete, nothing matches it */
	n_watched = -1;
	if (wait_set != NULL)
	{
		FreeWaitEventSet(wait_set);
		wait_set = NULL;
	}
	if (watched != NULL)
		pfree(watched);
	watched = MemoryContextAlloc(TopMemoryContext,
								 Max(n_sockets, 1) * sizeof(PsvcWatched));

	wait_set = psvc_wait_set_create(n_sockets + 2);
	AddWaitEventToSet(wait_set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	/* as WaitLatch does: a single-user backend has no postmaster to watch */
	if (IsUnderPostmaster)
		AddWaitEventToSet(wait_set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
	for (i = 0; i < n_sockets; i++)
	{
		uint32		ev = 0;
		struct stat st;
		PsvcWatched *w;

		if (sockets[i].what & CURL_POLL_IN)
			ev |= WL_SOCKET_READABLE;
		if (sockets[i].what & CURL_POLL_OUT)
			ev |= WL_SOCKET_WRITEABLE;
		if (ev == 0)
			continue;
		AddWaitEventToSet(wait_set, ev, sockets[i].fd, NULL, NULL);
		/* an unknown identity never matches: the next wait rebuilds */
		w = &watched[n++];
		w->fd = sockets[i].fd;
		w->what = sockets[i].what;
		w->dev = 0;
		w->ino = 0;
		if (fstat(sockets[i].fd, &st) == 0)
		{
			w->dev = st.st_dev;
			w->ino = st.st_ino;
		}
		else
			w->what = -1;
	}
	n_watched = n;
	sockets_changed = false;
}

/*
 * Milliseconds until curl's timer or the next retry is due, 0 when one is
 * due now, at most PSVC_HTTP_MAX_WAIT_MS.
 */
static long
next_timeout(void)
{
	long		timeout = -1;

	if (multi == NULL || curl_multi_timeout(multi, &timeout) != CURLM_OK)
		timeout = -1;
	if (n_backoff > 0)
	{
		dlist_iter iter;
		TimestampTz now = GetCurrentTimestamp();

		dlist_foreach(iter, &active_transfers)
		{
			PsvcTransfer *t = dlist_container(PsvcTransfer, node, iter.cur);

			if (t->state == XFER_BACKOFF)
			{
				long		ms = TimestampDifferenceMilliseconds(now, t->retry_at);

				if (timeout < 0 || ms < timeout)
					timeout = ms;
			}
		}
	}
	if (timeout < 0 || timeout > PSVC_HTTP_MAX_WAIT_MS)
		timeout = PSVC_HTTP_MAX_WAIT_MS;
	return timeout;
}

/*
 * Sleeps until a socket curl watches is ready, curl's timer or a retry is
 * due, or the latch is set; then resets the latch, hands ready sockets to
 * libcurl and runs CHECK_FOR_INTERRUPTS.
 */
void
psvc_http_wait(void)
{
	WaitEvent	events[16];
	long		timeout = next_timeout();
	int			nevents;
	int			i;
	int			running;

	if (timeout == 0)
		return;

	if (!wait_set_current())
		build_wait_set();

	nevents = WaitEventSetWait(wait_set, timeout, events, lengthof(events),
							   psvc_wait_event(PSVC_WAIT_TRANSFER));
	ResetLatch(MyLatch);
	for (i = 0; i < nevents; i++)
	{
		int			mask = 0;
		CURLMcode	mrc;

		if (events[i].events & WL_SOCKET_READABLE)
			mask |= CURL_CSELECT_IN;
		if (events[i].events & WL_SOCKET_WRITEABLE)
			mask |= CURL_CSELECT_OUT;
		if (mask == 0)
			continue;
		mrc = curl_multi_socket_action(multi, events[i].fd, mask, &running);
		if (mrc != CURLM_OK && mrc != CURLM_BAD_SOCKET)
			elog(ERROR, "libcurl failed: %s", curl_multi_strerror(mrc));
	}
	CHECK_FOR_INTERRUPTS();
}

/*
 * Runs easy, a transfer that is none of the call path's (the OAuth2 token
 * grant, http_token.c), to its end in the multi handle and returns its
 * result.  It waits as every transfer does (psvc_http_wait: the latch,
 * curl's sockets and timer, CHECK_FOR_INTERRUPTS after every wakeup), so
 * Ctrl-C and statement_timeout end it within one wakeup, and the other
 * transfers of the backend progress meanwhile.  One such transfer at a
 * time.  The handle is out of the multi handle when this returns or
 * raises; the caller cleans it up.
 */
CURLcode
psvc_http_run_alone(CURL *easy)
{
	CURLMcode	mrc;

	if (multi == NULL)
		elog(ERROR, "the HTTP client is not started");
	if (alone_easy != NULL)
		elog(ERROR, "a transfer of its own is already running");
	mrc = curl_multi_add_handle(multi, easy);
	if (mrc != CURLM_OK)
		elog(ERROR, "libcurl failed: %s", curl_multi_strerror(mrc));
	alone_easy = easy;
	alone_done = false;
	alone_code = CURLE_OK;
	PG_TRY();
	{
		int			running;

		/* starts it: libcurl asks for its sockets or sets its timer */
		mrc = curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
		if (mrc != CURLM_OK)
			elog(ERROR, "libcurl failed: %s", curl_multi_strerror(mrc));
		pump_all();
		while (!alone_done)
		{
			psvc_http_wait();
			pump_all();
		}
	}
	PG_FINALLY();
	{
		curl_multi_remove_handle(multi, easy);
		alone_easy = NULL;
	}
	PG_END_TRY();
	return alone_code;
}

/* ---------------------------------------------------------------------
 * The interface
 * ---------------------------------------------------------------------
 */

/*
 * Lets running transfers progress without blocking: one poll(2) and a
 * look at curl's timer while transfers run, nothing otherwise.  May raise
 * PostgreSQL's cancel error when an interrupt is pending.
 */
void
psvc_call_poll(void)
{
	psvc_http_pump();
}


/* ---------------------------------------------------------------------
 * The descriptor an Append's wait watches (see the header)
 * ---------------------------------------------------------------------
 */

#ifdef HAVE_SYS_EPOLL_H

static int	event_fd = -1;		/* the epoll instance callers wait on */
static int	timer_fd = -1;		/* in it: curl's timer, the next retry */

/*
 * The socket hook (set_socket_hook): registers fd in the epoll instance for
 * what curl watches it for, or removes it.  Runs inside libcurl's socket
 * callback: raises nothing, keeps errno.  A descriptor curl closed
 * without telling has left the instance by itself, so a reused number is
 * added anew (ENOENT on modify).
 */
static void
socket_changed(curl_socket_t fd, int what)
{
	int			save_errno = errno;
	struct epoll_event ev;

	if (what == CURL_POLL_REMOVE)
		(void) epoll_ctl(event_fd, EPOLL_CTL_DEL, fd, NULL);
	else
	{
		memset(&ev, 0, sizeof(ev));
		ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) |
			((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
		ev.data.fd = fd;
		if (epoll_ctl(event_fd, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
			(void) epoll_ctl(event_fd, EPOLL_CTL_ADD, fd, &ev);
	}
	errno = save_errno;
}

int
psvc_call_event_fd(void)
{
	struct epoll_event ev;
	int			efd;
	int			tfd;

	if (event_fd >= 0)
		return event_fd;

	efd = epoll_create1(EPOLL_CLOEXEC);
	if (efd < 0)
		ereport(ERROR,
				(errcode_for_socket_access(),
				 errmsg("could not create an epoll descriptor for partner requests: %m")));
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (tfd < 0)
	{
		close(efd);
		ereport(ERROR,
				(errcode_for_socket_access(),
				 errmsg("could not create a timer descriptor for partner requests: %m")));
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = tfd;
	if (epoll_ctl(efd, EPOLL_CTL_ADD, tfd, &ev) != 0)
	{
		int			save_errno = errno;

		close(tfd);
		close(efd);
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_socket_access(),
				 errmsg("could not watch a timer descriptor for partner requests: %m")));
	}
	ReserveExternalFD();
	ReserveExternalFD();
	event_fd = efd;
	timer_fd = tfd;
	/* the sockets curl watches now, then every change */
	set_socket_hook(socket_changed);
	return event_fd;
}

void
psvc_call_prepare_wait(bool now)
{
	struct itimerspec its;
	long		ms;

	if (timer_fd < 0)
		return;
	ms = now ? 0 : next_timeout();
	memset(&its, 0, sizeof(its));
	/* an all-zero value would disarm it: "now" is one nanosecond */
	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = ms > 0 ? (ms % 1000) * 1000000L : 1;
	(void) timerfd_settime(timer_fd, 0, &its, NULL);
}

#else							/* !HAVE_SYS_EPOLL_H */

int
psvc_call_event_fd(void)
{
	return -1;
}

void
psvc_call_prepare_wait(bool now)
{
}

#endif							/* HAVE_SYS_EPOLL_H */

bool
psvc_call_ready(const PsvcTransfer *t)
{
	return t->state != XFER_RUNNING && t->state != XFER_BACKOFF;
}
