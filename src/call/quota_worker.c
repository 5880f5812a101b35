/*-------------------------------------------------------------------------
 *
 * quota_worker.c
 *		  The quota worker: the one process of a node that talks to the
 *		  quota coordinator (libpq), fetching leases for the limiter's keys
 *		  and passing on what the node learnt.
 *
 * The design is in the header of quota.c.  The worker is a dynamic
 * background worker without a database connection, started by the first
 * backend that needs a lease while partner_svc.quota_coordinator is set;
 * it exits when the setting is emptied.  Each cycle it walks the limiter's
 * key table, takes from each entry what is due (a wanted lease, units that
 * ended or never reached the service, a 429 block), sends all of it in one
 * statement, applies the answers and wakes the backends that wait.  Between
 * cycles it sleeps on its latch, at most a tenth of a second, so reports
 * of keys with small limits reach the coordinator within that; those of
 * large routes go with their next lease request, or within a second.
 *
 * libpq is used as postgres_fdw's connection code does in a backend:
 * asynchronously (PQconnectStartParams / PQconnectPoll, PQsendQueryParams
 * on a non-blocking connection) with WaitLatchOrSocket, so SIGTERM, SIGHUP
 * and postmaster death are honoured while it connects or waits for an
 * answer, with a deadline of partner_svc.connect_timeout for each.  A
 * multi-host connection string with target_session_attrs=read-write finds
 * the new primary after a failover: each host is tried alone, in order,
 * with a deadline of its own (connect_coordinator), since libpq ignores
 * connect_timeout under PQconnectPoll.  On any failure the node falls back
 * (quota.c) and the worker connects again after a backoff that doubles
 * from one second to thirty; each change of mode is logged once.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/quota_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "libpq-fe.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "bgw.h"
#include "guc.h"
#include "pg_compat.h"
#include "ratelimit.h"

#define CYCLE_MS			100
#define BACKOFF_MIN_MS		1000
#define BACKOFF_MAX_MS		30000

/* The statement of one cycle; $1..$7 arrays of one element per key. */
#define LEASE_QUERY \
	"SELECT r.granted, r.blocked_ms, r.retry_ms " \
	"FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.text[]), " \
	"  pg_catalog.unnest($2::pg_catalog.int4[]), pg_catalog.unnest($3::pg_catalog.int4[]), " \
	"  pg_catalog.unnest($4::pg_catalog.int4[]), pg_catalog.unnest($5::pg_catalog.int4[]), " \
	"  pg_catalog.unnest($6::pg_catalog.int4[]), pg_catalog.unnest($7::pg_catalog.int4[])) " \
	"  WITH ORDINALITY AS a(k, lim, want, moved, added, returned, block_ms, n) " \
	"CROSS JOIN LATERAL partner_svc.quota_lease(a.k, $8::pg_catalog.int4, a.lim, " \
	"  a.want, a.moved, a.added, a.returned, a.block_ms, $9::pg_catalog.int4) r " \
	"ORDER BY a.n"


static PGconn *conn = NULL;
static char *conn_string = NULL;	/* the setting conn was made with */

PGDLLEXPORT void psvc_quota_worker_main(Datum arg);

/* Worker exit: the backends start a new one when they need it. */
static void
quota_worker_exit(int code, Datum arg)
{
	if (conn != NULL)
	{
		PQfinish(conn);
		conn = NULL;
	}
	(void) psvc_quota_worker_running(NULL);
}

/*
 * Makes a libpq message one line in place: each line break and the tabs
 * that indent libpq's continuation lines become one space, and trailing
 * blanks go.
 */
static void
one_line(char *msg)
{
	char	   *out = msg;

	for (const char *in = msg; *in; in++)
	{
		if (*in == '\n' || *in == '\t')
		{
			if (out > msg && out[-1] != ' ')
				*out++ = ' ';
			continue;
		}
		*out++ = *in;
	}
	while (out > msg && out[-1] == ' ')
		out--;
	*out = '\0';
}

/* The limiter's fallback, with what was being done and the error in one line. */
static void
note_failure(const char *what, const char *err)
{
	char		msg[256];

	snprintf(msg, sizeof(msg), "%s: %s", what, err ? err : "");
	one_line(msg);
	psvc_quota_note_failure(msg);
}

static void
close_conn(void)
{
	if (conn != NULL)
		PQfinish(conn);
	conn = NULL;
}

/*
 * Waits until conn's socket is ready for what is asked, the latch is set
 * or the deadline (monotonic us) passes.  Returns false on SIGTERM or at
 * the deadline.
 */
static bool
wait_socket(int events, int64 deadline)
{
	int64		now = psvc_rl_now();
	long		timeout;
	int			rc;

	if (psvc_bgw_terminating() || now >= deadline)
		return false;
	timeout = (long) ((deadline - now + 999) / 1000);
	rc = WaitLatchOrSocket(MyLatch,
						   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events,
						   PQsocket(conn), timeout, psvc_wait_event(PSVC_WAIT_QUOTA));
	if (rc & WL_LATCH_SET)
		ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	return !psvc_bgw_terminating();
}

/*
 * libpq's notice receiver for the coordinator's connection: a NOTICE or
 * WARNING the coordinator sends (a trigger of its own, say) goes to the
 * server log through elog, with the log line prefix, instead of libpq's
 * default, a bare line on stderr.  Runs inside libpq: it allocates
 * nothing and logs at LOG, which raises no ERROR through libpq's frames
 * (walreceiver's notice receiver does the same).
 */
static void
quota_notice_receiver(void *arg, const PGresult *res)
{
	char		msg[1024];

	strlcpy(msg, PQresultErrorMessage(res), sizeof(msg));
	one_line(msg);
	ereport(LOG,
			(errmsg("partner_svc quota worker: the coordinator says: %s", msg)));
}

/*
 * One attempt to connect with the given libpq parameters, within its own
 * deadline of partner_svc.connect_timeout.  Returns true with conn open
 * (non-blocking, its notices routed to the log); else false, conn NULL,
 * and why in err, or false with psvc_bgw_terminating() set.
 */
static bool
connect_attempt(const char *const *keys, const char *const *vals,
				char *err, size_t errlen)
{
	int64		deadline = psvc_rl_now() + (int64) psvc_guc_connect_timeout * 1000;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;

	close_conn();
	conn = PQconnectStartParams(keys, vals, 0);
	if (conn == NULL)
	{
		strlcpy(err, "out of memory", errlen);
		return false;
	}
	if (PQstatus(conn) == CONNECTION_BAD)
	{
		strlcpy(err, PQerrorMessage(conn), errlen);
		close_conn();
		return false;
	}
	PQsetNoticeReceiver(conn, quota_notice_receiver, NULL);
	while (st != PGRES_POLLING_OK)
	{
		int			ev;

		if (st == PGRES_POLLING_FAILED)
		{
			strlcpy(err, PQerrorMessage(conn), errlen);
			close_conn();
			return false;
		}
		ev = (st == PGRES_POLLING_READING) ? WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE;
		if (!wait_socket(ev, deadline))
		{
			strlcpy(err, "timeout (partner_svc.connect_timeout)", errlen);
			close_conn();
			return false;
		}
		st = PQconnectPoll(conn);
	}
	if (PQsetnonblocking(conn, 1) != 0)
	{
		strlcpy(err, PQerrorMessage(conn), errlen);
		close_conn();
		return false;
	}
	return true;
}

/*
 * Element i of a comma-separated libpq host, hostaddr or port list
 * (allocated in the current context); a list of one element applies to
 * every host, as libpq reads it.  NULL when the list is absent or empty.
 */
static char *
host_list_element(const char *list, int i)
{
	const char *p = list;

	if (list == NULL || list[0] == '\0')
		return NULL;
	if (strchr(list, ',') == NULL)
		return pstrdup(list);
	for (int k = 0; k < i && p != NULL; k++)
	{
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	if (p == NULL)
		return NULL;
	return pnstrdup(p, strcspn(p, ","));
}

/* Elements of a comma-separated list; 0 for an absent or empty one. */
static int
host_list_length(const char *list)
{
	int			n = 1;

	if (list == NULL || list[0] == '\0')
		return 0;
	for (const char *p = list; *p; p++)
		n += (*p == ',');
	return n;
}

/*
 * Connects to the coordinator; false (and conn NULL) on failure.
 *
 * Each host of a multi-host connection string is tried alone, in order,
 * with its own deadline of partner_svc.connect_timeout.  libpq moves to
 * the next host after connect_timeout only in its blocking PQconnectdb;
 * under PQconnectPoll it ignores connect_timeout, so a first host that
 * drops packets (or accepts and never answers) would spend the whole
 * deadline of one attempt shared by all hosts, and the worker would never
 * reach the second.  So the string is split (PQconninfoParse: keywords or
 * a URI) into one set of parameters per host, each keeping every other
 * parameter: libpq then checks target_session_attrs on each connection,
 * and a standby is passed over for the next host as before.  Allocates
 * in the current (cycle) context.
 */
static bool
connect_coordinator(void)
{
	char	   *perr = NULL;
	PQconninfoOption *opts = PQconninfoParse(psvc_guc_quota_coordinator, &perr);
	const char *hosts = NULL;
	const char *addrs = NULL;
	const char *ports = NULL;
	int			nopts = 0;
	int			nhosts;
	StringInfoData errs;

	if (opts == NULL)
	{
		note_failure("connecting to the quota coordinator",
					 perr ? perr : "out of memory");
		if (perr)
			PQfreemem(perr);
		return false;
	}
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
	{
		nopts++;
		if (o->val == NULL)
			continue;
		if (strcmp(o->keyword, "host") == 0)
			hosts = o->val;
		else if (strcmp(o->keyword, "hostaddr") == 0)
			addrs = o->val;
		else if (strcmp(o->keyword, "port") == 0)
			ports = o->val;
	}
	nhosts = Max(Max(host_list_length(hosts), host_list_length(addrs)), 1);
	initStringInfo(&errs);

	for (int i = 0; i < nhosts && !psvc_bgw_terminating(); i++)
	{
		const char **keys = palloc0(sizeof(char *) * (nopts + 2));
		const char **vals = palloc0(sizeof(char *) * (nopts + 2));
		char		err[512];
		int			n = 0;
		bool		app_name = false;
		char	   *host = host_list_element(hosts, i);
		char	   *addr = host_list_element(addrs, i);

		for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		{
			const char *v = o->val;

			if (strcmp(o->keyword, "host") == 0)
				v = host;
			else if (strcmp(o->keyword, "hostaddr") == 0)
				v = addr;
			else if (strcmp(o->keyword, "port") == 0)
				v = host_list_element(ports, i);
			if (v == NULL || v[0] == '\0')
				continue;
			app_name |= strcmp(o->keyword, "fallback_application_name") == 0;
			keys[n] = o->keyword;
			vals[n++] = v;
		}
		if (!app_name)
		{
			keys[n] = "fallback_application_name";
			vals[n++] = "partner_svc quota worker";
		}
		keys[n] = NULL;
		if (connect_attempt(keys, vals, err, sizeof(err)))
		{
			PQconninfoFree(opts);
			if (conn_string)
				pfree(conn_string);
			conn_string = MemoryContextStrdup(TopMemoryContext, psvc_guc_quota_coordinator);
			psvc_quota_note_contact();
			return true;
		}
		if (psvc_bgw_terminating())
			break;
		if (nhosts > 1)
			appendStringInfo(&errs, "%shost \"%s\": ", errs.len > 0 ? "; " : "",
							 host ? host : addr ? addr : "");
		else if (errs.len > 0)
			appendStringInfoString(&errs, "; ");
		appendStringInfoString(&errs, err);
	}
	PQconninfoFree(opts);
	if (!psvc_bgw_terminating())
		note_failure("connecting to the quota coordinator", errs.data);
	return false;
}

/* Appends s to buf as an element of a text array literal. */
static void
append_array_text(StringInfo buf, const char *s)
{
	appendStringInfoChar(buf, '"');
	for (; *s; s++)
	{
		if (*s == '"' || *s == '\\')
			appendStringInfoChar(buf, '\\');
		appendStringInfoChar(buf, *s);
	}
	appendStringInfoChar(buf, '"');
}

/* Builds the nine parameters of LEASE_QUERY. */
static void
build_params(PsvcQuotaItem *items, int n, StringInfo p)
{
	for (int a = 0; a < 7; a++)
	{
		initStringInfo(&p[a]);
		appendStringInfoChar(&p[a], '{');
	}
	for (int i = 0; i < n; i++)
	{
		int			v[6] = {items[i].limit, items[i].want, items[i].moved,
		items[i].added, items[i].returned, items[i].block_ms};

		if (i > 0)
			for (int a = 0; a < 7; a++)
				appendStringInfoChar(&p[a], ',');
		append_array_text(&p[0], items[i].qkey);
		for (int a = 0; a < 6; a++)
			appendStringInfo(&p[a + 1], "%d", v[a]);
	}
	for (int a = 0; a < 7; a++)
		appendStringInfoChar(&p[a], '}');
	initStringInfo(&p[7]);
	appendStringInfo(&p[7], "%d", psvc_guc_window_ms);
	initStringInfo(&p[8]);
	appendStringInfo(&p[8], "%d", (int) Min(psvc_quota_hold_us() / 1000, INT_MAX));
}

/*
 * Sends the items and reads the answers into them.  Returns false with
 * *err set when the coordinator could not be asked or answered an error.
 */
static bool
exchange(PsvcQuotaItem *items, int n, const char **err)
{
	StringInfoData p[9];
	const char *values[9];
	int64		deadline = psvc_rl_now() + (int64) psvc_guc_connect_timeout * 1000;
	PGresult   *res;
	bool		ok = true;
	int			rc;

	build_params(items, n, p);
	for (int a = 0; a < 9; a++)
		values[a] = p[a].data;
	if (!PQsendQueryParams(conn, LEASE_QUERY, 9, NULL, values, NULL, NULL, 0))
	{
		*err = pstrdup(PQerrorMessage(conn));
		return false;
	}
	while ((rc = PQflush(conn)) == 1)
	{
		if (!wait_socket(WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE, deadline))
		{
			*err = "timeout sending to the coordinator";
			return false;
		}
		if (!PQconsumeInput(conn))
		{
			*err = pstrdup(PQerrorMessage(conn));
			return false;
		}
	}
	if (rc < 0)
	{
		*err = pstrdup(PQerrorMessage(conn));
		return false;
	}
	for (;;)
	{
		while (PQisBusy(conn))
		{
			if (!wait_socket(WL_SOCKET_READABLE, deadline))
			{
				*err = "timeout waiting for the coordinator (partner_svc.connect_timeout)";
				return false;
			}
			if (!PQconsumeInput(conn))
			{
				*err = pstrdup(PQerrorMessage(conn));
				return false;
			}
		}
		res = PQgetResult(conn);
		if (res == NULL)
			break;
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			if (ok)
				*err = pstrdup(PQresultErrorMessage(res));
			ok = false;
		}
		else if (PQntuples(res) != n || PQnfields(res) != 3)
		{
			*err = "unexpected answer of partner_svc.quota_lease";
			ok = false;
		}
		else
		{
			for (int i = 0; i < n; i++)
			{
				items[i].granted = atoi(PQgetvalue(res, i, 0));
				items[i].blocked_ms = atoi(PQgetvalue(res, i, 1));
				items[i].retry_ms = atoi(PQgetvalue(res, i, 2));
			}
		}
		PQclear(res);
	}
	return ok;
}

/*
 * One cycle while connected: sends what is due, applies the answers.
 * Returns false when the connection failed (everything was put back).
 */
static bool
cycle(void)
{
	int			n;
	PsvcQuotaItem  *items = psvc_quota_collect(&n);
	int64		sent_at = psvc_rl_now();
	const char *err = NULL;
	bool		ok;

	if (n == 0)
		return true;
	ok = exchange(items, n, &err);
	psvc_quota_apply(items, n, ok, sent_at);
	if (ok)
		psvc_quota_note_contact();
	else
		note_failure("asking the quota coordinator", err);
	psvc_quota_wake_waiters();
	return ok;
}

void
psvc_quota_worker_main(Datum arg)
{
	MemoryContext cycle_cxt;
	int64		next_connect = 0;
	int			backoff_ms = BACKOFF_MIN_MS;

	psvc_bgw_signals_soft();
	if (!psvc_quota_worker_running(MyLatch))
		proc_exit(0);
	before_shmem_exit(quota_worker_exit, (Datum) 0);

	cycle_cxt = AllocSetContextCreate(TopMemoryContext, "partner_svc quota worker",
									  ALLOCSET_DEFAULT_SIZES);

	while (!psvc_bgw_terminating())
	{
		int64		now;
		long		timeout = CYCLE_MS;

		if (psvc_bgw_reload())
		{
			if (conn != NULL && conn_string != NULL &&
				strcmp(conn_string, psvc_guc_quota_coordinator) != 0)
			{
				close_conn();
				next_connect = 0;
			}
		}
		if (psvc_guc_quota_coordinator[0] == '\0')
		{
			psvc_quota_forget();
			break;
		}

		MemoryContextReset(cycle_cxt);
		MemoryContextSwitchTo(cycle_cxt);
		now = psvc_rl_now();
		if (conn == NULL && now >= next_connect)
		{
			if (connect_coordinator())
				backoff_ms = BACKOFF_MIN_MS;
			else
			{
				next_connect = psvc_rl_now() + (int64) backoff_ms * 1000;
				backoff_ms = Min(backoff_ms * 2, BACKOFF_MAX_MS);
			}
		}
		if (conn != NULL && !cycle())
		{
			close_conn();
			next_connect = psvc_rl_now() + (int64) backoff_ms * 1000;
			backoff_ms = Min(backoff_ms * 2, BACKOFF_MAX_MS);
		}
		MemoryContextSwitchTo(TopMemoryContext);
		if (psvc_bgw_terminating())
			break;

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, psvc_wait_event(PSVC_WAIT_QUOTA));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	proc_exit(0);
}
