/*-------------------------------------------------------------------------
 *
 * webhook_http.c
 *		  The webhook listener: libmicrohttpd driven from the worker's own
 *		  wait loop, and the HTTP-level checks of a delivery.
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
 *   PsvcWhDelivery of the request.  Counters are plain integers of the
 *   worker (psvc_wh_counters).
 * - What can be decided from the request line and the headers is answered
 *   at once, without the database: 404 (path), 405 (method), 401 (secret),
 *   413 (Content-Length over partner_svc.webhook_max_body).  A chunked body
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
 *   body is complete is closed after partner_svc.webhook_client_timeout
 *   seconds of silence (MHD_OPTION_CONNECTION_TIMEOUT); it never blocks
 *   anybody else.
 * - The secret (partner_svc.webhook_secret) is the header
 *   X-Partner-Webhook-Secret, compared in time independent of where the
 *   values differ.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook_http.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "mb/pg_wchar.h"
#include "utils/json.h"

#include "partner_svc.h"

#define PSVC_WH_CONNECTION_LIMIT 512
#define PSVC_WH_BACKLOG 511
#define PSVC_WH_SECRET_HEADER "X-Partner-Webhook-Secret"
/* Seconds a sender is asked to wait after a 503 (Retry-After). */
#define PSVC_WH_RETRY_AFTER "5"
/* Rounds of MHD_run that flush the answers of released deliveries. */
#define PSVC_WH_FLUSH_ROUNDS 8

static struct MHD_Daemon *daemon_h = NULL;
static int	daemon_fd = -1;

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
 * True when given equals the secret.  Takes the same time whatever the
 * position of the first difference (it walks the whole secret always);
 * only the length of the given value shows.
 */
static bool
secret_matches(const char *given, const char *secret)
{
	size_t		glen = given ? strlen(given) : 0;
	size_t		slen = strlen(secret);
	unsigned int diff = (glen != slen);

	for (size_t i = 0; i < slen; i++)
	{
		unsigned char g = i < glen ? (unsigned char) given[i] : 0;

		diff |= g ^ (unsigned char) secret[i];
	}
	return given != NULL && diff == 0;
}

/* The environment of a path, or NULL for a path we do not serve. */
static const char *
environment_of(const char *url)
{
	if (strcmp(url, "/webhooks/sandbox") == 0)
		return "sandbox";
	if (strcmp(url, "/webhooks/production") == 0)
		return "production";
	return NULL;
}

/*
 * Containment: obtains the memory of a body announced by Content-Length
 * before any of it is read, with room for the NUL the worker needs, so
 * that running out of memory is a 503 decided here, never a failure later
 * while the delivery is held.  Returns false when malloc fails.  (The
 * body is still read, and dropped, so that the sender, still writing it,
 * gets the 503 rather than a reset connection.)
 */
static bool
reserve_body(PsvcWhDelivery *d, unsigned long long clen)
{
	d->body = malloc((size_t) clen + 1);
	if (d->body == NULL)
		return false;
	d->cap = (size_t) clen + 1;
	return true;
}

/*
 * First call for a request (headers read, body not yet): decides what can
 * be decided now.  Returns NULL after queueing an answer.
 */
static PsvcWhDelivery *
first_call(struct MHD_Connection *conn, const char *url, const char *method,
		   enum MHD_Result *ret)
{
	const char *env = environment_of(url);
	const char *clen;
	PsvcWhDelivery *d;

	psvc_wh_counters.requests++;
	if (env == NULL)
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
	if (psvc_wh_secret != NULL && psvc_wh_secret[0] != '\0' &&
		!secret_matches(MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
													PSVC_WH_SECRET_HEADER),
						psvc_wh_secret))
	{
		psvc_wh_counters.unauthorized++;
		*ret = queue_error(conn, MHD_HTTP_UNAUTHORIZED, "missing or wrong " PSVC_WH_SECRET_HEADER);
		return NULL;
	}
	clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
									   MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (clen != NULL && strtoull(clen, NULL, 10) > (unsigned long long) psvc_wh_max_body)
	{
		psvc_wh_counters.too_large++;
		*ret = queue_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
		return NULL;
	}
	d = calloc(1, sizeof(PsvcWhDelivery));
	if (d == NULL)
	{
		psvc_wh_counters.failed++;
		*ret = queue_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
		return NULL;
	}
	d->conn = conn;
	d->environment = env;
	/* no memory: the body is read and dropped, then answered 503 */
	if (clen != NULL && !reserve_body(d, strtoull(clen, NULL, 10)))
		d->no_memory = true;
	*ret = MHD_YES;
	return d;
}

/*
 * Appends a piece of the body; past the limit, or once memory ran out
 * (no_memory: answered 503 when the body is complete), only reads it.
 * Keeps room for the terminating NUL.
 */
static bool
append_body(PsvcWhDelivery *d, const char *data, size_t size)
{
	if (d->too_large || d->no_memory || d->len + size > (size_t) psvc_wh_max_body)
	{
		if (!d->no_memory)
			d->too_large = true;
		free(d->body);
		d->body = NULL;
		d->len = d->cap = 0;
		return true;
	}
	if (d->len + size + 1 > d->cap)
	{
		size_t		cap = d->cap ? d->cap : 1024;
		char	   *b;

		while (cap < d->len + size + 1)
			cap *= 2;
		b = realloc(d->body, cap);
		if (b == NULL)
		{
			free(d->body);
			d->body = NULL;
			d->len = d->cap = 0;
			d->no_memory = true;
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
		d = first_call(conn, url, method, &ret);
		*req_cls = d;
		return ret;
	}
	if (*upload_data_size > 0)
	{
		bool		ok = append_body(d, upload_data, *upload_data_size);

		*upload_data_size = 0;
		return ok ? MHD_YES : MHD_NO;
	}
	/* the body is complete, or we were resumed with an answer */
	if (d->status != 0)
		return queue_answer(conn, d->status, d->answer);
	if (d->too_large)
	{
		psvc_wh_counters.too_large++;
		return queue_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "body too large");
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
	if (d == NULL)
		return;
	free(d->body);
	free(d->answer);
	free(d);
	*req_cls = NULL;
}

/*
 * Opens the listening socket ourselves, so a failure to bind has a clear
 * reason (libmicrohttpd only says that it failed).  Returns -1 and fills
 * err on failure.
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
	daemon_h = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME,
								(uint16_t) port, NULL, NULL,
								handle_request, NULL,
								MHD_OPTION_LISTEN_SOCKET, lfd,
								MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) timeout_s,
								MHD_OPTION_CONNECTION_LIMIT, (unsigned int) PSVC_WH_CONNECTION_LIMIT,
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

/* How long the worker may wait before calling psvc_wh_http_run. */
long
psvc_wh_http_timeout(void)
{
	MHD_UNSIGNED_LONG_LONG t;

	if (daemon_h == NULL || MHD_get_timeout(daemon_h, &t) != MHD_YES)
		return -1;
	return t > 60000 ? 60000 : (long) t;
}

/* Lets libmicrohttpd do whatever is ready; never blocks. */
void
psvc_wh_http_run(void)
{
	if (daemon_h != NULL)
		MHD_run(daemon_h);
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

/*
 * Sets the answer of a delivery to status with {"error": msg}.  Runs in
 * the worker, outside libmicrohttpd (it may palloc); msg is cut to 300
 * bytes and escaped.
 */
void
psvc_wh_http_set_error(PsvcWhDelivery *d, int status, const char *msg)
{
	StringInfoData buf;
	char	   *cut;
	int			len = strlen(msg);

	if (len > 300)
		len = pg_mbcliplen(msg, len, 300);
	cut = pnstrdup(msg, len);
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"error\":");
	escape_json(&buf, cut);
	appendStringInfoChar(&buf, '}');
	free(d->answer);
	d->answer = strdup(buf.data);	/* NULL on OOM: the "ok" body, status kept */
	pfree(buf.data);
	pfree(cut);
	d->status = status;
}
