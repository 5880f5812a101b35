/*-------------------------------------------------------------------------
 *
 * http_events.c
 *		  One descriptor that says when the backend's running calls have
 *		  something to do, for callers that wait in a WaitEventSet of their
 *		  own: the asynchronous foreign scans under an Append
 *		  (src/fdw/fdw_scan.c), whose Append waits for all its subplans at
 *		  once and lets each add one descriptor to its wait.
 *
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
 *		  src/call/http_events.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>
#ifdef HAVE_SYS_EPOLL_H
#include <sys/epoll.h>
#include <sys/timerfd.h>
#endif

#include "storage/fd.h"

#include "http_int.h"

#ifdef HAVE_SYS_EPOLL_H

static int	event_fd = -1;		/* the epoll instance callers wait on */
static int	timer_fd = -1;		/* in it: curl's timer, the next retry */

/*
 * The socket hook (http_wait.c): registers fd in the epoll instance for
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
	psvc_http_set_socket_hook(socket_changed);
	return event_fd;
}

void
psvc_call_prepare_wait(bool now)
{
	struct itimerspec its;
	long		ms;

	if (timer_fd < 0)
		return;
	ms = now ? 0 : psvc_http_next_timeout();
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
