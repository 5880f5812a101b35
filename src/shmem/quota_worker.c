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
 *		  src/shmem/quota_worker.c
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

#include "guc.h"
#include "pg_compat.h"
#include "ratelimit_int.h"

#define CYCLE_MS			100
#define BACKOFF_MIN_MS		1000
#define BACKOFF_MAX_MS		30000
/* Reports of large routes without a lease request go at least this often. */
#define BULK_REPORT_US		(INT64CONST(1000000))

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

/* What one cycle sends for one key, and what came back. */
typedef struct QuotaItem
{
	PsvcRlKey	key;
	char	   *qkey;			/* the key at the coordinator */
	int			limit;
	int			want;
	int			moved;
	int			added;
	int			returned;
	int			block_ms;
	int64		report_block;
	int			granted;
	int			blocked_ms;
	int			retry_ms;
} QuotaItem;

static volatile sig_atomic_t got_sigterm = false;
static PGconn *conn = NULL;
static char *conn_string = NULL;	/* the setting conn was made with */

static void
quota_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/* Worker exit: the backends start a new one when they need it. */
static void
quota_worker_exit(int code, Datum arg)
{
	if (conn != NULL)
	{
		PQfinish(conn);
		conn = NULL;
	}
	SpinLockAcquire(&psvc_quota_shared->mutex);
	psvc_quota_shared->worker_state = 0;
	psvc_quota_shared->worker_latch = NULL;
	SpinLockRelease(&psvc_quota_shared->mutex);
}

/* Sets every waiting backend's latch. */
static void
wake_waiters(void)
{
	for (int i = 0; i < psvc_quota_shared->nprocs; i++)
	{
		if (psvc_quota_shared->waiting[i])
			SetLatch(&ProcGlobal->allProcs[i].procLatch);
	}
}

/* The coordinator answered: leased mode (logged when it is a change). */
static void
note_contact(void)
{
	PsvcQuotaMode old;

	SpinLockAcquire(&psvc_quota_shared->mutex);
	old = psvc_quota_shared->mode;
	psvc_quota_shared->mode = PSVC_QUOTA_LEASED;
	psvc_quota_shared->last_contact = GetCurrentTimestamp();
	psvc_quota_shared->last_error[0] = '\0';
	SpinLockRelease(&psvc_quota_shared->mutex);
	if (old != PSVC_QUOTA_LEASED)
	{
		ereport(LOG,
				(errmsg("partner_svc quota worker: leasing rate-limit budget from the coordinator")));
		wake_waiters();
	}
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

/* True when msg ends with a full stop, question or exclamation mark. */
static bool
ends_sentence(const char *msg)
{
	size_t		len = strlen(msg);

	return len > 0 && strchr(".?!", msg[len - 1]) != NULL;
}

/*
 * The coordinator did not answer: fallback mode, whose share may be used
 * one window plus the longest life of a lease after now (quota.c).
 */
static void
note_failure(const char *what, const char *err)
{
	PsvcQuotaMode old;
	int64		now = psvc_rl_now();
	int64		from;
	char		msg[sizeof(psvc_quota_shared->last_error)];

	snprintf(msg, sizeof(msg), "%s: %s", what, err ? err : "");
	one_line(msg);

	SpinLockAcquire(&psvc_quota_shared->mutex);
	old = psvc_quota_shared->mode;
	if (old != PSVC_QUOTA_FALLBACK)
	{
		psvc_quota_shared->lost_at = now;
		psvc_quota_shared->fallback_from = now + psvc_quota_hold_us() +
			psvc_rl_bucket_width() * PSVC_RL_BUCKETS;
		/* backends read mode without the lock (quota.c) */
		pg_write_barrier();
		psvc_quota_shared->mode = PSVC_QUOTA_FALLBACK;
	}
	from = psvc_quota_shared->fallback_from;
	strlcpy(psvc_quota_shared->last_error, msg,
			sizeof(psvc_quota_shared->last_error));
	SpinLockRelease(&psvc_quota_shared->mutex);

	if (old != PSVC_QUOTA_FALLBACK)
	{
		ereport(LOG,
				(errmsg("partner_svc quota worker: coordinator unreachable, falling back to %g of each rate limit",
						psvc_guc_quota_fallback_share),
				 errdetail("%s%s  The share is used from %s on; the worker keeps trying to reach the coordinator.",
						   msg, ends_sentence(msg) ? "" : ".",
						   timestamptz_to_str(psvc_rl_timestamp(from)))));
		wake_waiters();
	}
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

	if (got_sigterm || now >= deadline)
		return false;
	timeout = (long) ((deadline - now + 999) / 1000);
	rc = WaitLatchOrSocket(MyLatch,
						   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events,
						   PQsocket(conn), timeout, psvc_wait_event(PSVC_WAIT_QUOTA));
	if (rc & WL_LATCH_SET)
		ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	return !got_sigterm;
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
 * and why in err, or false with got_sigterm set.
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

	for (int i = 0; i < nhosts && !got_sigterm; i++)
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
			note_contact();
			return true;
		}
		if (got_sigterm)
			break;
		if (nhosts > 1)
			appendStringInfo(&errs, "%shost \"%s\": ", errs.len > 0 ? "; " : "",
							 host ? host : addr ? addr : "");
		else if (errs.len > 0)
			appendStringInfoString(&errs, "; ");
		appendStringInfoString(&errs, err);
	}
	PQconninfoFree(opts);
	if (!got_sigterm)
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

static int
item_cmp(const void *a, const void *b)
{
	return strcmp(((const QuotaItem *) a)->qkey, ((const QuotaItem *) b)->qkey);
}

/*
 * Takes from every entry what is due to the coordinator.  Returns the
 * items, sorted by key (so the coordinator locks its rows in one order),
 * allocated in the current context.
 */
static QuotaItem *
collect(int *nitems)
{
	static int64 next_bulk = 0;
	HASH_SEQ_STATUS seq;
	PsvcRlEntry *e;
	int64		now = psvc_rl_now();
	int			n = 0;
	int			cap;
	QuotaItem  *items;
	bool		bulk = now >= next_bulk;

	LWLockAcquire(psvc_rl_shared->lock, LW_SHARED);
	cap = Max((int) hash_get_num_entries(psvc_rl_key_table), 1);
	items = palloc0(sizeof(QuotaItem) * cap);
	hash_seq_init(&seq, psvc_rl_key_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		QuotaItem  *it = &items[n];

		if (n >= cap)
		{
			hash_seq_term(&seq);
			break;
		}
		SpinLockAcquire(&e->mutex);
		if (e->leased > 0 && now >= e->lease_until)
		{
			e->report_returned += e->leased;
			e->leased = 0;
		}
		it->want = (e->lease_wanted && now >= e->lease_retry_at) ?
			psvc_quota_lease_size(e->route_limit) : 0;

		/*
		 * Reports alone go at once for keys of small limits, whose
		 * throughput the delay costs most; for large routes (leases of
		 * more than one unit) with the next lease, or once a second.
		 */
		if (it->want > 0 || e->report_block > now ||
			((bulk || psvc_quota_lease_size(e->route_limit) == 1) &&
			 (e->report_moved > 0 || e->report_added > 0 ||
			  e->report_returned > 0)))
		{
			it->key = e->key;
			it->limit = e->route_limit;
			it->moved = e->report_moved;
			it->added = e->report_added;
			it->returned = e->report_returned;
			it->report_block = e->report_block;
			it->block_ms = e->report_block > now ?
				(int) Min((e->report_block - now) / 1000 + 1, INT_MAX) : 0;
			e->report_moved = e->report_added = e->report_returned = 0;
			e->report_block = 0;
			if (it->want > 0)
				e->lease_wanted = false;
			/* the account's digest: one fleet budget per partner account */
			it->qkey = psprintf("%s|%s|%s", e->key.account, e->key.route,
								e->key.resource);
			n++;
		}
		else if (e->report_block != 0 && e->report_block <= now)
			e->report_block = 0;
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(psvc_rl_shared->lock);

	if (bulk)
		next_bulk = now + BULK_REPORT_US;
	if (n > 1)
		qsort(items, n, sizeof(QuotaItem), item_cmp);
	*nitems = n;
	return items;
}

/*
 * Applies the coordinator's answers (ok) or puts everything back to be
 * sent again (!ok).  sent_at: monotonic time the statement was sent.
 */
static void
apply(QuotaItem *items, int n, bool ok, int64 sent_at)
{
	int64		now = psvc_rl_now();

	LWLockAcquire(psvc_rl_shared->lock, LW_SHARED);
	for (int i = 0; i < n; i++)
	{
		QuotaItem  *it = &items[i];
		PsvcRlEntry *e = hash_search(psvc_rl_key_table, &it->key, HASH_FIND, NULL);

		/* an evicted key: granted units stay counted until they expire */
		if (e == NULL)
			continue;
		SpinLockAcquire(&e->mutex);
		if (!ok)
		{
			e->report_moved += it->moved;
			e->report_added += it->added;
			e->report_returned += it->returned;
			e->report_block = Max(e->report_block, it->report_block);
			if (it->want > 0)
				e->lease_wanted = true;
		}
		else
		{
			if (it->granted > 0)
			{
				/*
				 * Units left of an older lease go back: they may start only
				 * within their own lease's validity.
				 */
				e->report_returned += e->leased;
				e->leased = it->granted;
				e->lease_until = sent_at + psvc_quota_lease_valid_us();
			}
			if (it->want > 0 && it->granted == 0)
				e->lease_retry_at = now + (int64) Max(it->retry_ms, 1) * 1000;
			if (it->blocked_ms > 0)
				e->blocked_until = Max(e->blocked_until,
									   now + (int64) it->blocked_ms * 1000);
		}
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(psvc_rl_shared->lock);
}

/* Builds the nine parameters of LEASE_QUERY. */
static void
build_params(QuotaItem *items, int n, StringInfo p)
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
exchange(QuotaItem *items, int n, const char **err)
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
	QuotaItem  *items = collect(&n);
	int64		sent_at = psvc_rl_now();
	const char *err = NULL;
	bool		ok;

	if (n == 0)
		return true;
	ok = exchange(items, n, &err);
	apply(items, n, ok, sent_at);
	if (ok)
		note_contact();
	else
		note_failure("asking the quota coordinator", err);
	wake_waiters();
	return ok;
}

/* The setting was emptied: forget every lease and report, then exit. */
static void
forget_fleet(void)
{
	HASH_SEQ_STATUS seq;
	PsvcRlEntry *e;

	LWLockAcquire(psvc_rl_shared->lock, LW_SHARED);
	hash_seq_init(&seq, psvc_rl_key_table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		SpinLockAcquire(&e->mutex);
		e->leased = 0;
		e->lease_wanted = false;
		e->lease_retry_at = 0;
		e->report_moved = e->report_added = e->report_returned = 0;
		e->report_block = 0;
		SpinLockRelease(&e->mutex);
	}
	LWLockRelease(psvc_rl_shared->lock);

	SpinLockAcquire(&psvc_quota_shared->mutex);
	psvc_quota_shared->mode = PSVC_QUOTA_CONNECTING;
	psvc_quota_shared->last_error[0] = '\0';
	psvc_quota_shared->last_contact = 0;
	SpinLockRelease(&psvc_quota_shared->mutex);
	wake_waiters();
}

void
psvc_quota_worker_main(Datum arg)
{
	MemoryContext cycle_cxt;
	int64		next_connect = 0;
	int			backoff_ms = BACKOFF_MIN_MS;

	pqsignal(SIGTERM, quota_sigterm);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	if (psvc_quota_shared == NULL || psvc_rl_shared == NULL)
		proc_exit(0);
	before_shmem_exit(quota_worker_exit, (Datum) 0);
	SpinLockAcquire(&psvc_quota_shared->mutex);
	psvc_quota_shared->worker_state = 2;
	psvc_quota_shared->worker_latch = MyLatch;
	SpinLockRelease(&psvc_quota_shared->mutex);

	cycle_cxt = AllocSetContextCreate(TopMemoryContext, "partner_svc quota worker",
									  ALLOCSET_DEFAULT_SIZES);

	while (!got_sigterm)
	{
		int64		now;
		long		timeout = CYCLE_MS;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			if (conn != NULL && conn_string != NULL &&
				strcmp(conn_string, psvc_guc_quota_coordinator) != 0)
			{
				close_conn();
				next_connect = 0;
			}
		}
		if (psvc_guc_quota_coordinator[0] == '\0')
		{
			forget_fleet();
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
		if (got_sigterm)
			break;

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, psvc_wait_event(PSVC_WAIT_QUOTA));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	proc_exit(0);
}
