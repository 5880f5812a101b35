/*-------------------------------------------------------------------------
 *
 * webhook_guard.c
 *		  The webhook listener's guard: per-connection state, the deadlines
 *		  and the minimum rate, the budget of body bytes in flight, and the
 *		  checks of the raw request target.
 *
 * Design notes:
 *
 * - Hostile clients (this file, "the guard"): every connection has
 *   a PsvcWhConn (MHD_OPTION_NOTIFY_CONNECTION, its socket context) that
 *   records where its current request is: waiting for its headers, in
 *   its body, or complete (held in a batch or being answered).  After
 *   each MHD_run, at most every PSVC_WH_SWEEP_MS, psvc_wh_guard_sweep cuts off
 *   the connections that missed the header deadline, the request
 *   deadline or the minimum body rate, by shutdown(2) of their socket:
 *   libmicrohttpd then sees the end of the stream and closes them itself
 *   (it owns the descriptor).  A request's clock starts when its
 *   connection opens or when the previous request on it was answered, so
 *   an idle kept-alive connection also ends at the header deadline.
 *   Complete requests are never cut.  libmicrohttpd itself enforces the
 *   cap per source address (MHD_OPTION_PER_IP_CONNECTION_LIMIT).
 * - Body bytes in flight: one global budget
 *   (partner_svc.webhook_max_body_in_flight) counts the memory that the
 *   bodies hold, one accounting with the containment of
 *   webhook_listener.c: a request reserves its Content-Length and the NUL
 *   before the listener mallocs them (reserve_body there), and a chunked
 *   body each time its buffer grows; the reservation is given back
 *   whenever the body is freed (dropped, answered, connection closed).  A request that does not fit is answered 503
 *   with Retry-After.  With the defaults one address (64 connections of
 *   at most 64 kB) cannot take the whole budget.
 * - The path is compared byte for byte with the raw request target (URI
 *   log callback), before libmicrohttpd decodes %XX escapes: a decoded
 *   NUL, an escape, a query or any other extra byte is a 404.  So is a
 *   target with a byte that is not visible ASCII, and one that a NUL
 *   byte cuts short (the callback sees a C string:
 *   psvc_wh_guard_target_whole finds the bytes after the NUL).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_guard.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/socket.h>
#include <time.h>

#include "guc.h"
#include "webhook_http_int.h"

#define PSVC_WH_SWEEP_MS 200	/* how often the deadlines are checked */
#define PSVC_WH_RATE_GRACE_MS 2000	/* body time before the rate counts */
/* The bytes a request target may hold: '!' .. '~' (RFC 9112, no CTL, no SP). */
#define PSVC_WH_TARGET_MIN_BYTE 0x21
#define PSVC_WH_TARGET_MAX_BYTE 0x7e

static PsvcWhConn *conns = NULL;	/* every open connection */
static size_t in_flight = 0;	/* sum of the reservations */
static uint64 next_sweep = 0;	/* ms */

/*
 * True when every byte of a request target is a visible ASCII character,
 * the only bytes RFC 9112 allows in one (no space, no control byte, no
 * byte above 0x7e).  A target with another byte is answered 404 without
 * being compared: whatever stands in front of the listener may read such
 * bytes differently.
 */
static bool
target_bytes_ok(const char *raw_target)
{
	for (const unsigned char *p = (const unsigned char *) raw_target; *p; p++)
	{
		if (*p < PSVC_WH_TARGET_MIN_BYTE || *p > PSVC_WH_TARGET_MAX_BYTE)
			return false;
	}
	return true;
}

/*
 * The environment of a raw request target (as sent, before any %XX
 * decoding, query included), or NULL for one we do not serve.
 */
static const char *
environment_of(const char *raw_target)
{
	Assert(target_bytes_ok(raw_target));
	if (strcmp(raw_target, "/webhooks/sandbox") == 0)
		return "sandbox";
	if (strcmp(raw_target, "/webhooks/production") == 0)
		return "production";
	return NULL;
}

/* Monotonic milliseconds. */
static uint64
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64) ts.tv_sec * 1000 + (uint64) ts.tv_nsec / 1000000;
}

/* The PsvcWhConn of a connection (NULL when its allocation failed). */
PsvcWhConn *
psvc_wh_guard_conn(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? (PsvcWhConn *) ci->socket_context : NULL;
}

/* Gives back what a request holds of the in-flight budget. */
void
psvc_wh_guard_release(PsvcWhConn *c)
{
	Assert(in_flight >= c->reserved);
	in_flight -= c->reserved;
	c->reserved = 0;
}

/*
 * Makes the request's reservation at least total bytes; false (and
 * nothing reserved beyond what was) when the budget has no room.
 */
bool
psvc_wh_guard_reserve(PsvcWhConn *c, size_t total)
{
	size_t		more;

	if (total <= c->reserved)
		return true;
	more = total - c->reserved;
	if (in_flight + more > (size_t) psvc_guc_webhook.max_body_in_flight)
		return false;
	in_flight += more;
	c->reserved = total;
	return true;
}

/* libmicrohttpd opened or closed a connection. */
void
psvc_wh_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
			 enum MHD_ConnectionNotificationCode code)
{
	PsvcWhConn	   *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED)
	{
		const union MHD_ConnectionInfo *ci;

		c = calloc(1, sizeof(PsvcWhConn));
		*socket_context = c;
		if (c == NULL)
			return;				/* its requests are answered 503 */
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		c->fd = ci ? ci->connect_fd : -1;
		c->phase = PSVC_WH_HEADERS;
		c->request_start = now_ms();
		c->next = conns;
		if (conns)
			conns->prev = c;
		conns = c;
		return;
	}
	if (c == NULL)
		return;
	psvc_wh_guard_release(c);
	if (c->prev)
		c->prev->next = c->next;
	else
		conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
	*socket_context = NULL;
}

/*
 * The request line is in: records whether its raw target is one of our
 * paths.  Returns NULL, which libmicrohttpd makes the request's initial
 * *req_cls (so the handler still sees NULL on its first call).
 */
void *
psvc_wh_guard_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	PsvcWhConn	   *c = psvc_wh_guard_conn(conn);

	if (c != NULL)
	{
		c->raw_target = uri;
		/* now: libmicrohttpd cuts and decodes the target in place later */
		c->raw_len = uri ? strlen(uri) : 0;
		c->raw_env = (uri != NULL && target_bytes_ok(uri)) ? environment_of(uri) : NULL;
	}
	return NULL;
}

/*
 * True when the raw target recorded by psvc_wh_guard_uri is the whole target of
 * the request line: no NUL byte cut it short.  The URI callback gets the
 * target as a C string, so a NUL inside it hides the rest from every
 * comparison.  libmicrohttpd (0.9.75, the version we build against) keeps
 * the request line in its connection's memory pool and ends the target by
 * writing a NUL over the space before the HTTP version, so the version
 * string starts exactly one byte after the target's end; anything else
 * means bytes after a NUL (or a request line we cannot account for), and
 * the request is refused.  test/scenario/69_webhook_trust.t checks both
 * ways.
 */
bool
psvc_wh_guard_target_whole(const PsvcWhConn *c, const char *version)
{
	uintptr_t	end;

	if (c->raw_target == NULL || version == NULL || version[0] == '\0')
		return false;
	end = (uintptr_t) c->raw_target + c->raw_len + 1;
	return (uintptr_t) version == end;
}

/* The headers of the request are in. */
void
psvc_wh_guard_headers_done(PsvcWhConn *c)
{
	c->phase = PSVC_WH_BODY;
	c->body_start = now_ms();
	c->body_bytes = 0;
	c->over_budget = false;
}

/* The request is complete (held in a batch, or answered at once). */
void
psvc_wh_guard_complete(PsvcWhConn *c)
{
	if (c != NULL)
		c->phase = PSVC_WH_COMPLETE;
}

/* libmicrohttpd is done with the request; the connection may stay open. */
void
psvc_wh_guard_request_done(PsvcWhConn *c)
{
	if (c == NULL)
		return;
	psvc_wh_guard_release(c);
	c->phase = PSVC_WH_HEADERS;
	c->request_start = now_ms();
}

/* True when a connection has missed a deadline or the minimum rate. */
static bool
guard_too_slow(const PsvcWhConn *c, uint64 now)
{
	uint64		age = now - c->request_start;

	if (c->phase == PSVC_WH_HEADERS)
		return age >= (uint64) psvc_guc_webhook.header_timeout * 1000 ||
			age >= (uint64) psvc_guc_webhook.request_timeout * 1000;
	if (c->phase == PSVC_WH_BODY)
	{
		uint64		body_ms = now - c->body_start;

		if (age >= (uint64) psvc_guc_webhook.request_timeout * 1000)
			return true;
		if (psvc_guc_webhook.min_rate > 0 && body_ms >= PSVC_WH_RATE_GRACE_MS &&
			(uint64) c->body_bytes * 1000 < (uint64) psvc_guc_webhook.min_rate * body_ms)
			return true;
	}
	return false;
}

/*
 * Cuts off the connections that are too slow (shutdown: libmicrohttpd
 * sees the end of the stream at its next run and closes them).  At most
 * every PSVC_WH_SWEEP_MS; a walk over every open connection.
 */
void
psvc_wh_guard_sweep(void)
{
	uint64		now = now_ms();

	if (now < next_sweep)
		return;
	next_sweep = now + PSVC_WH_SWEEP_MS;
	for (PsvcWhConn *c = conns; c != NULL; c = c->next)
	{
		if (c->cut || c->fd < 0 || !guard_too_slow(c, now))
			continue;
		c->cut = true;
		psvc_wh_counters.timed_out++;
		(void) shutdown(c->fd, SHUT_RDWR);
	}
}

/*
 * Forgets every connection once the daemon is gone (libmicrohttpd
 * notifies each close while stopping, so normally nothing is left).
 */
void
psvc_wh_guard_forget(void)
{
	while (conns != NULL)
	{
		PsvcWhConn	   *c = conns;

		conns = c->next;
		free(c);
	}
	in_flight = 0;
}

/* Milliseconds until the next sweep is due, -1 when nothing waits. */
long
psvc_wh_guard_timeout(void)
{
	uint64		now;

	if (conns == NULL)
		return -1;
	now = now_ms();
	return now >= next_sweep ? 0 : (long) (next_sweep - now);
}
