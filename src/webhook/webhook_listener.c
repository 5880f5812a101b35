/*-------------------------------------------------------------------------
 *
 * webhook_listener.c
 *		  The webhook listener: libmicrohttpd driven from the worker's own
 *		  wait loop, its access handler, and the deliveries it holds.
 *
 * Design notes:
 *
 * - libmicrohttpd runs in "external epoll" mode: no thread of its own.
 *   Its epoll descriptor (psvc_wh_http_fd) sits in the worker's
 *   WaitEventSet beside the latch; when it is readable, or when
 *   psvc_wh_http_timeout says so, the worker calls psvc_wh_http_run, and
 *   every callback below runs in the worker's one thread, inside
 *   MHD_run.  No thread ever touches PostgreSQL state.
 * - The callbacks must not palloc, ereport or longjmp (they run inside
 *   library frames): they use malloc, and record what they decided in the
 *   PsvcWhDelivery of the request.  The counters of what was answered
 *   are plain integers (psvc_wh_counters, webhook_http.c); the store adds
 *   to them through psvc_wh_http_count_*, the worker reads a copy.
 * - What can be decided from the request line and the headers is answered
 *   at once, without the database: 404 (path, webhook_guard.c), 405
 *   (method), 401 (secret, webhook_http.c), 413 (Content-Length over the
 *   body limit).  A chunked body
 *   that grows over the limit is read to its end and then answered 413.
 * - A complete body is put on the pending list and its connection is
 *   suspended (MHD_suspend_connection).  After MHD_run returns, the worker
 *   takes the whole list as one batch, stores it in one transaction, sets
 *   each delivery's status and calls psvc_wh_http_answer, which resumes
 *   the connections; libmicrohttpd then calls the handler once more and
 *   the handler queues the answer.  So no 200 leaves before its commit,
 *   and all deliveries read in one run share one commit.
 * - Containment (see the invariant in webhook_worker.c): every suspended
 *   connection is on the pending list or is the batch the worker took
 *   (held_batch), and psvc_wh_http_release_held answers both (503 with
 *   Retry-After unless already decided) without palloc or ereport, for
 *   the worker's error recovery and exit callback.  The memory of a body
 *   is reserved from its Content-Length before it is read; when malloc
 *   fails there or while a chunked body grows, the rest is read and
 *   dropped and the answer is 503 (no_memory), decided in the callback.
 * - A suspended connection never times out and is never freed, so batch
 *   entries stay valid until answered.  A client that stalls before its
 *   body is complete is closed after partner_svc.webhook_header_timeout
 *   seconds of silence (MHD_OPTION_CONNECTION_TIMEOUT); it never blocks
 *   anybody else.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_listener.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guc.h"
#include "webhook_http_int.h"

/* listen(2) backlog: one less than the connections the listener serves */
#define PSVC_WH_BACKLOG (PSVC_WH_CONNECTION_LIMIT - 1)
/* Seconds a sender is asked to wait after any 503 (Retry-After). */
#define PSVC_WH_RETRY_AFTER "5"
/* Rounds of MHD_run that flush the answers of released deliveries. */
#define PSVC_WH_FLUSH_ROUNDS 8

static struct MHD_Daemon *daemon_h = NULL;
static int	daemon_fd = -1;
static int	running_per_address = 0;	/* the cap the daemon was started with */
static bool running_loopback = true;	/* it listens on a loopback address */

/* Complete deliveries waiting for the next batch, oldest first. */
static PsvcWhDelivery *pending_head = NULL;
static PsvcWhDelivery *pending_tail = NULL;
static int	pending_n = 0;

/*
 * The batch the worker took and has not answered yet.  With the pending
 * list it is every suspended connection: psvc_wh_http_release_held walks
 * both, so no error or exit path can leave one suspended.
 */
static PsvcWhDelivery *held_batch = NULL;

static const char ok_body[] = "{\"status\":\"ok\"}";

/*
 * Queues the answer of a request: status and a JSON body (the static "ok"
 * body when json is NULL).  Runs inside a libmicrohttpd callback.
 */
static enum MHD_Result
queue_answer(struct MHD_Connection *conn, int status, const char *json)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (json == NULL && status != MHD_HTTP_OK)
		json = "{\"error\":\"request failed\"}";
	if (json == NULL)
		r = MHD_create_response_from_buffer(sizeof(ok_body) - 1, (void *) ok_body,
											MHD_RESPMEM_PERSISTENT);
	else
		r = MHD_create_response_from_buffer(strlen(json), (void *) json,
											MHD_RESPMEM_MUST_COPY);
	if (r == NULL)
		return MHD_NO;			/* out of memory: libmicrohttpd closes it */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "POST");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, PSVC_WH_RETRY_AFTER);
	ret = MHD_queue_response(conn, (unsigned int) status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A fixed error answer (no escaping needed: msg is ours). */
static enum MHD_Result
queue_error(struct MHD_Connection *conn, int status, const char *msg)
{
	char		buf[256];

	snprintf(buf, sizeof(buf), "{\"error\":\"%s\"}", msg);
	return queue_answer(conn, status, buf);
}

/*
 * Checks of the in-flight budget at the first call: reserves what the
 * announced body will hold in memory (Content-Length and its NUL, see
 * reserve_body).  False after queueing a 503.
 */
static bool
budget_admit(struct MHD_Connection *conn, PsvcWhConn *c, const char *clen,
			 unsigned long long clen_n, enum MHD_Result *ret)
{
	if (c != NULL &&
		(clen == NULL || psvc_wh_guard_reserve(c, (size_t) clen_n + 1)))
		return true;
	psvc_wh_counters.failed++;
	*ret = queue_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
					   c == NULL ? "out of memory" : "too many webhook bodies in flight: retry later");
	return false;
}

/*
 * Containment: obtains the memory of a body announced by Content-Length
 * before any of it is read, with room for the NUL the worker needs, so
 * that running out of memory is a 503 decided here, never a failure later
 * while the delivery is held.  The in-flight budget already holds these
 * bytes (budget_admit); they are given back when malloc fails.  Returns
 * false when malloc fails.  (The body is still read, and dropped, so that
 * the sender, still writing it, gets the 503 rather than a reset
 * connection.)
 */
static bool
reserve_body(PsvcWhConn *c, PsvcWhDelivery *d, unsigned long long clen)
{
	d->body = malloc((size_t) clen + 1);
	if (d->body == NULL)
	{
		if (c != NULL)
			psvc_wh_guard_release(c);
		return false;
	}
	d->cap = (size_t) clen + 1;
	return true;
}

/*
 * First call for a request (headers read, body not yet): decides what can
 * be decided now.  Returns NULL after queueing an answer.
 */
static PsvcWhDelivery *
first_call(struct MHD_Connection *conn, const char *method, const char *version,
		   enum MHD_Result *ret)
{
	PsvcWhConn	   *c = psvc_wh_guard_conn(conn);
	const char *env = c ? c->raw_env : NULL;
	const char *clen;
	unsigned long long clen_n = 0;
	PsvcWhDelivery *d;

	psvc_wh_counters.requests++;
	if (c != NULL)
		psvc_wh_guard_headers_done(c);
	/* a target with a byte no path holds is no path of ours either */
	if (c != NULL && !psvc_wh_guard_target_whole(c, version))
		env = NULL;
	if (env == NULL && c != NULL)
	{
		psvc_wh_counters.not_found++;
		*ret = queue_error(conn, MHD_HTTP_NOT_FOUND, "no such path: webhooks are POST /webhooks/sandbox or /webhooks/production");
		return NULL;
	}
	if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
	{
		psvc_wh_counters.bad_method++;
		*ret = queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: use POST");
		return NULL;
	}
	if (!psvc_wh_http_secret_ok(conn))
	{
		psvc_wh_counters.unauthorized++;
		*ret = queue_error(conn, MHD_HTTP_UNAUTHORIZED, "missing or wrong " PSVC_WH_SECRET_HEADER);
		return NULL;
	}
	clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
									   MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (clen != NULL)
		clen_n = strtoull(clen, NULL, 10);
	if (clen_n > (unsigned long long) psvc_wh_http_body_cap())
	{
		psvc_wh_counters.too_large++;
		*ret = queue_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
		return NULL;
	}
	if (!budget_admit(conn, c, clen, clen_n, ret))
		return NULL;
	d = calloc(1, sizeof(PsvcWhDelivery));
	if (d == NULL)
	{
		psvc_wh_guard_release(c);
		psvc_wh_counters.failed++;
		*ret = queue_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
		return NULL;
	}
	d->conn = conn;
	d->environment = env;
	/* no memory: the body is read and dropped, then answered 503 */
	if (clen != NULL && !reserve_body(c, d, clen_n))
		d->no_memory = true;
	*ret = MHD_YES;
	return d;
}

/* Frees what a body holds, and its share of the in-flight budget. */
static void
drop_body(PsvcWhConn *c, PsvcWhDelivery *d)
{
	free(d->body);
	d->body = NULL;
	d->len = d->cap = 0;
	if (c != NULL)
		psvc_wh_guard_release(c);
}

/*
 * Appends a piece of the body.  Past psvc_wh_http_body_cap() (too_large), once memory
 * ran out (no_memory) or once the in-flight budget had no room for a
 * chunked body that grows (over_budget), it only reads it: such requests
 * are answered 413 or 503 when the body is complete.  Keeps room for the
 * terminating NUL.  The reservation in the budget is always the memory
 * the body holds (its cap), so the budget counts what malloc holds.
 */
static bool
append_body(PsvcWhConn *c, PsvcWhDelivery *d, const char *data, size_t size)
{
	bool		over_budget = (c != NULL && c->over_budget);

	if (c != NULL)
		c->body_bytes += size;
	if (d->too_large || d->no_memory || over_budget ||
		d->len + size > psvc_wh_http_body_cap())
	{
		if (!d->no_memory && !over_budget)
			d->too_large = true;
		drop_body(c, d);
		return true;
	}
	if (d->len + size + 1 > d->cap)
	{
		size_t		cap = d->cap ? d->cap : 1024;
		char	   *b;

		while (cap < d->len + size + 1)
			cap *= 2;
		/* never more than the largest body and its NUL (body_cap) */
		cap = Min(cap, psvc_wh_http_body_cap() + 1);
		if (c != NULL && !psvc_wh_guard_reserve(c, cap))
		{
			c->over_budget = true;
			drop_body(c, d);
			return true;
		}
		b = realloc(d->body, cap);
		if (b == NULL)
		{
			d->no_memory = true;
			drop_body(c, d);
			return true;
		}
		d->body = b;
		d->cap = cap;
	}
	memcpy(d->body + d->len, data, size);
	d->len += size;
	return true;
}

/* libmicrohttpd's access handler: see the file header for the protocol. */
static enum MHD_Result
handle_request(void *cls, struct MHD_Connection *conn, const char *url,
			   const char *method, const char *version, const char *upload_data,
			   size_t *upload_data_size, void **req_cls)
{
	PsvcWhDelivery *d = *req_cls;
	enum MHD_Result ret;

	if (d == NULL)
	{
		d = first_call(conn, method, version, &ret);
		*req_cls = d;
		if (d == NULL)
			psvc_wh_guard_complete(psvc_wh_guard_conn(conn));
		return ret;
	}
	if (*upload_data_size > 0)
	{
		bool		ok = append_body(psvc_wh_guard_conn(conn), d, upload_data,
									 *upload_data_size);

		*upload_data_size = 0;
		return ok ? MHD_YES : MHD_NO;
	}
	/* the body is complete, or we were resumed with an answer */
	psvc_wh_guard_complete(psvc_wh_guard_conn(conn));
	if (d->status != 0)
		return queue_answer(conn, d->status, d->answer);
	if (d->too_large)
	{
		psvc_wh_counters.too_large++;
		return queue_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
	}
	if (psvc_wh_guard_conn(conn) != NULL && psvc_wh_guard_conn(conn)->over_budget)
	{
		psvc_wh_counters.failed++;
		return queue_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
						   "too many webhook bodies in flight: retry later");
	}
	if (d->no_memory)
	{
		psvc_wh_counters.failed++;
		return queue_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory: retry later");
	}
	if (d->body != NULL)
		d->body[d->len] = '\0';	/* cap > len always */
	d->suspended = true;
	d->next = NULL;
	if (pending_tail)
		pending_tail->next = d;
	else
		pending_head = d;
	pending_tail = d;
	pending_n++;
	MHD_suspend_connection(conn);
	return MHD_YES;
}

/* libmicrohttpd is done with a request: frees its delivery. */
static void
request_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
				  enum MHD_RequestTerminationCode toe)
{
	PsvcWhDelivery *d = *req_cls;

	if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
		psvc_wh_counters.timed_out++;
	psvc_wh_guard_request_done(psvc_wh_guard_conn(conn));
	if (d == NULL)
		return;
	free(d->body);
	free(d->answer);
	free(d);
	*req_cls = NULL;
}

/* True for 127.0.0.0/8, ::1 and IPv4-mapped 127.x addresses. */
static bool
address_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
	{
		const struct sockaddr_in *in4 = (const struct sockaddr_in *) sa;

		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6)
	{
		const struct in6_addr *a = &((const struct sockaddr_in6 *) sa)->sin6_addr;

		if (IN6_IS_ADDR_LOOPBACK(a))
			return true;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return false;
}

/*
 * Opens the listening socket ourselves, so a failure to bind has a clear
 * reason (libmicrohttpd only says that it failed).  Without a secret, an
 * address that is not loopback is refused before anything is bound.
 * Returns -1 and fills err on failure.
 */
static int
open_listener(const char *address, int port, char *err, size_t errlen)
{
	struct addrinfo hints;
	struct addrinfo *ai = NULL;
	char		portstr[16];
	int			rc;
	int			fd;
	int			one = 1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(portstr, sizeof(portstr), "%d", port);
	rc = getaddrinfo(address, portstr, &hints, &ai);
	if (rc != 0 || ai == NULL)
	{
		snprintf(err, errlen, "could not resolve \"%s\": %s", address, gai_strerror(rc));
		return -1;
	}
	running_loopback = address_is_loopback(ai->ai_addr);
	if (!running_loopback && !psvc_wh_http_any_secret())
	{
		snprintf(err, errlen, "refusing to listen on \"%s\": it is not a loopback address and partner_svc.webhook_secret is not set",
				 address);
		freeaddrinfo(ai);
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
	{
		snprintf(err, errlen, "could not create socket: %s", strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
		listen(fd, PSVC_WH_BACKLOG) != 0)
	{
		snprintf(err, errlen, "could not listen on %s port %d: %s",
				 address, port, strerror(errno));
		close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/*
 * Starts listening.  Returns false and fills err (for the log) when the
 * address cannot be used.
 */
bool
psvc_wh_http_start(const char *address, int port, int timeout_s,
				   char *err, size_t errlen)
{
	int			lfd;
	const union MHD_DaemonInfo *info;

	Assert(daemon_h == NULL);
	lfd = open_listener(address, port, err, errlen);
	if (lfd < 0)
		return false;
	running_per_address = psvc_guc_webhook.max_connections_per_address;
	daemon_h = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME,
								(uint16_t) port, NULL, NULL,
								handle_request, NULL,
								MHD_OPTION_LISTEN_SOCKET, lfd,
								MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) timeout_s,
								MHD_OPTION_CONNECTION_LIMIT, (unsigned int) PSVC_WH_CONNECTION_LIMIT,
								MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int) running_per_address,
								MHD_OPTION_NOTIFY_CONNECTION, psvc_wh_guard_notify, NULL,
								MHD_OPTION_URI_LOG_CALLBACK, psvc_wh_guard_uri, NULL,
								MHD_OPTION_NOTIFY_COMPLETED, request_completed, NULL,
								MHD_OPTION_END);
	if (daemon_h == NULL)
	{
		close(lfd);
		snprintf(err, errlen, "could not start the HTTP server (libmicrohttpd)");
		return false;
	}
	info = MHD_get_daemon_info(daemon_h, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL)
	{
		MHD_stop_daemon(daemon_h);
		daemon_h = NULL;
		snprintf(err, errlen, "libmicrohttpd has no epoll descriptor");
		return false;
	}
	daemon_fd = info->epoll_fd;
	return true;
}

/*
 * True when the running listener no longer matches the settings that
 * only a restart applies: the cap per source address changed, or the
 * address is not loopback and no secret is set any more.
 */
bool
psvc_wh_http_stale(void)
{
	if (daemon_h == NULL)
		return false;
	return running_per_address != psvc_guc_webhook.max_connections_per_address ||
		(!running_loopback && !psvc_wh_http_any_secret());
}

/*
 * Stops listening and closes every connection.  Every delivery still held
 * is answered first (503 unless it has its answer), and libmicrohttpd is
 * given a few rounds to send those answers: MHD_stop_daemon must never
 * see a suspended connection (it aborts the process).  Never raises: it
 * runs from the worker's exit callback too.
 */
void
psvc_wh_http_stop(void)
{
	if (daemon_h == NULL)
		return;
	psvc_wh_http_release_held();
	MHD_stop_daemon(daemon_h);
	daemon_h = NULL;
	daemon_fd = -1;
	psvc_wh_guard_forget();
}

/* Answers one list of held deliveries; returns how many got 503. */
static int
release_list(PsvcWhDelivery *d)
{
	int			n503 = 0;

	while (d != NULL)
	{
		PsvcWhDelivery *next = d->next;

		if (d->status == 0)
		{
			/* the static body of queue_answer: nothing to allocate here */
			free(d->answer);
			d->answer = NULL;
			d->status = MHD_HTTP_SERVICE_UNAVAILABLE;
			n503++;
		}
		d->next = NULL;
		d->suspended = false;
		MHD_resume_connection(d->conn);
		d = next;
	}
	return n503;
}

int
psvc_wh_http_release_held(void)
{
	PsvcWhDelivery *held = held_batch;
	PsvcWhDelivery *pending = pending_head;
	int			n503;

	held_batch = NULL;
	pending_head = pending_tail = NULL;
	pending_n = 0;
	n503 = release_list(held) + release_list(pending);
	psvc_wh_counters.failed += n503;
	if (daemon_h != NULL && (held != NULL || pending != NULL))
	{
		/* resumed connections get their answer queued, then written */
		for (int i = 0; i < PSVC_WH_FLUSH_ROUNDS; i++)
			MHD_run(daemon_h);
	}
	return n503;
}

bool
psvc_wh_http_running(void)
{
	return daemon_h != NULL;
}

int
psvc_wh_http_fd(void)
{
	return daemon_fd;
}

/*
 * How long the worker may wait before calling psvc_wh_http_run: what
 * libmicrohttpd asks for, and no longer than the next sweep of the
 * deadlines.
 */
long
psvc_wh_http_timeout(void)
{
	MHD_UNSIGNED_LONG_LONG t;
	long		ms;
	long		sweep;

	if (daemon_h == NULL)
		return -1;
	if (MHD_get_timeout(daemon_h, &t) != MHD_YES)
		ms = -1;
	else
		ms = t > 60000 ? 60000 : (long) t;
	sweep = psvc_wh_guard_timeout();
	if (sweep >= 0 && (ms < 0 || sweep < ms))
		ms = sweep;
	return ms;
}

/* Lets libmicrohttpd do whatever is ready, then the deadlines; never blocks. */
void
psvc_wh_http_run(void)
{
	if (daemon_h == NULL)
		return;
	MHD_run(daemon_h);
	psvc_wh_guard_sweep();
}

int
psvc_wh_http_pending(void)
{
	return pending_n;
}

PsvcWhDelivery *
psvc_wh_http_take_batch(int *n)
{
	PsvcWhDelivery *b = pending_head;

	Assert(held_batch == NULL);
	*n = pending_n;
	pending_head = pending_tail = NULL;
	pending_n = 0;
	held_batch = b;
	return b;
}

/*
 * Resumes every connection of the batch; the handler then queues the
 * answer.  A delivery without a status (cannot happen) gets 500.
 */
void
psvc_wh_http_answer(PsvcWhDelivery *batch)
{
	PsvcWhDelivery *d = batch;

	if (batch == held_batch)
		held_batch = NULL;
	while (d != NULL)
	{
		PsvcWhDelivery *next = d->next;

		if (d->status == 0)
			d->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		d->next = NULL;
		d->suspended = false;
		MHD_resume_connection(d->conn);
		d = next;
	}
}

