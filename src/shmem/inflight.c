/*-------------------------------------------------------------------------
 *
 * inflight.c
 *		  The requests in flight of every backend in shared memory, and the
 *		  function behind the view partner_svc.requests.
 *
 * One slot per backend (MaxBackends slots, indexed by BackendId), each of
 * PSVC_INFLIGHT_PER_BACKEND requests, a segment of the one request and
 * startup of shared memory (segments.h).  Without preloading nothing is tracked and the view is empty.
 *
 * Locking: none.  Only the owning backend writes its slot, and it does so
 * at a request's changes of state, never per byte read (the bytes are
 * written with the state, from libcurl's progress callback, only when they
 * changed).  A writer makes changecount odd, writes, and makes it even
 * again, with write barriers between; a reader copies the slot and keeps
 * the copy only when changecount was even and the same before and after
 * it, as pgstat_begin_read_activity and pgstat_end_read_activity do for
 * PgBackendStatus.  A slot names its owner's pid: a backend that exits
 * (FATAL included) clears its slot from a before_shmem_exit callback, and
 * a new owner of the slot starts from an empty one.
 *
 * What the view shows: pid, database, server, route template, state,
 * start, bytes of the current attempt; the request's path and query only
 * to superusers and members of pg_read_all_stats (resource ids are user
 * data, as partner_svc.rate_limits treats them).  The key is never stored.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/inflight.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "inflight.h"
#include "pg_compat.h"
#include "segments.h"

#define PSVC_INFLIGHT_ROUTE	160
#define PSVC_INFLIGHT_PATH	256

typedef struct InflightReq
{
	bool		used;
	uint8		state;			/* PsvcInflightState */
	TimestampTz started;
	int64		bytes;
	char		server[NAMEDATALEN];
	char		route[PSVC_INFLIGHT_ROUTE];
	char		path[PSVC_INFLIGHT_PATH];
} InflightReq;

typedef struct InflightSlot
{
	uint32		changecount;	/* odd while its owner writes */
	int			pid;			/* owner, 0: none */
	Oid			dbid;
	InflightReq req[PSVC_INFLIGHT_PER_BACKEND];
} InflightSlot;

static InflightSlot *slots = NULL;	/* MaxBackends of them */
static InflightSlot *my_slot = NULL;


PG_FUNCTION_INFO_V1(psvc_inflight_requests);

static Size
inflight_shmem_size(void)
{
	return mul_size(MaxBackends, sizeof(InflightSlot));
}

/* Makes (postmaster) or attaches to the slots, under AddinShmemInitLock. */
static void
inflight_shmem_startup(void)
{
	bool		found;

	slots = ShmemInitStruct("partner_svc requests in flight",
							mul_size(MaxBackends, sizeof(InflightSlot)), &found);
	if (!found)
		memset(slots, 0, mul_size(MaxBackends, sizeof(InflightSlot)));
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_inflight_segment = {
	.size = inflight_shmem_size,
	.startup = inflight_shmem_startup,
};

#define BEGIN_WRITE(s) \
	do { (s)->changecount++; pg_write_barrier(); } while (0)
#define END_WRITE(s) \
	do { pg_write_barrier(); (s)->changecount++; } while (0)

/* Process exit: nothing of this backend is in flight any more. */
static void
inflight_exit(int code, Datum arg)
{
	if (my_slot == NULL)
		return;
	BEGIN_WRITE(my_slot);
	my_slot->pid = 0;
	memset(my_slot->req, 0, sizeof(my_slot->req));
	END_WRITE(my_slot);
	my_slot = NULL;
}

/* This backend's slot, taken over on first use; NULL when there is none. */
static InflightSlot *
own_slot(void)
{
	if (my_slot != NULL)
		return my_slot;
	if (slots == NULL || psvc_backend_index() < 0)
		return NULL;
	my_slot = &slots[psvc_backend_index()];
	BEGIN_WRITE(my_slot);
	my_slot->pid = MyProcPid;
	my_slot->dbid = MyDatabaseId;
	memset(my_slot->req, 0, sizeof(my_slot->req));
	END_WRITE(my_slot);
	before_shmem_exit(inflight_exit, (Datum) 0);
	return my_slot;
}

int
psvc_inflight_begin(const char *server, const char *method, const char *route,
					const char *path)
{
	InflightSlot *s = own_slot();

	if (s == NULL)
		return -1;
	for (int i = 0; i < PSVC_INFLIGHT_PER_BACKEND; i++)
	{
		InflightReq *r = &s->req[i];

		if (r->used)
			continue;
		BEGIN_WRITE(s);
		r->used = true;
		r->state = PSVC_INFLIGHT_SENDING;
		r->started = GetCurrentTimestamp();
		r->bytes = 0;
		strlcpy(r->server, server ? server : "", sizeof(r->server));
		snprintf(r->route, sizeof(r->route), "%s %s", method, route);
		strlcpy(r->path, path ? path : "", sizeof(r->path));
		END_WRITE(s);
		return i;
	}
	return -1;
}

void
psvc_inflight_set(int handle, PsvcInflightState state, int64 bytes)
{
	InflightReq *r;

	if (handle < 0 || my_slot == NULL)
		return;
	r = &my_slot->req[handle];
	if (r->state == state && r->bytes == bytes)
		return;
	BEGIN_WRITE(my_slot);
	r->state = state;
	r->bytes = bytes;
	END_WRITE(my_slot);
}

void
psvc_inflight_end(int handle)
{
	if (handle < 0 || my_slot == NULL)
		return;
	BEGIN_WRITE(my_slot);
	my_slot->req[handle].used = false;
	END_WRITE(my_slot);
}

static const char *
state_text(uint8 state)
{
	switch ((PsvcInflightState) state)
	{
		case PSVC_INFLIGHT_WAITING:
			return "waiting for budget";
		case PSVC_INFLIGHT_SENDING:
			return "sending";
		case PSVC_INFLIGHT_RECEIVING:
			return "receiving";
		case PSVC_INFLIGHT_BACKOFF:
			return "backing off";
	}
	return "unknown";
}

/*
 * Copies slot s into *copy as the file header says; false when it has no
 * owner.  Retries while the owner is writing (a few stores).
 */
static bool
read_slot(volatile InflightSlot *s, InflightSlot *copy)
{
	for (;;)
	{
		uint32		before = s->changecount;
		uint32		after;

		pg_read_barrier();
		memcpy(copy, (const InflightSlot *) s, sizeof(InflightSlot));
		pg_read_barrier();
		after = s->changecount;
		if (before == after && (before & 1) == 0)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	return copy->pid != 0;
}

/*
 * partner_svc.requests(): one row per request in flight of any backend:
 * pid, dbid, server, route, state, started, bytes, path (NULL unless the
 * caller may see it: see the file header).  Rows live in the per-query
 * tuplestore; the copy of a slot in CurrentMemoryContext.
 */
Datum
psvc_inflight_requests(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		see_path;
	InflightSlot *copy;

	InitMaterializedSRF(fcinfo, 0);
	if (slots == NULL)
		return (Datum) 0;
	see_path = superuser() ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	copy = palloc(sizeof(InflightSlot));
	for (int b = 0; b < MaxBackends; b++)
	{
		if (!read_slot(&slots[b], copy))
			continue;
		for (int i = 0; i < PSVC_INFLIGHT_PER_BACKEND; i++)
		{
			InflightReq *r = &copy->req[i];
			Datum		values[8];
			bool		nulls[8] = {0};

			if (!r->used)
				continue;
			values[0] = Int32GetDatum(copy->pid);
			values[1] = ObjectIdGetDatum(copy->dbid);
			values[2] = CStringGetTextDatum(r->server);
			values[3] = CStringGetTextDatum(r->route);
			values[4] = CStringGetTextDatum(state_text(r->state));
			values[5] = TimestampTzGetDatum(r->started);
			values[6] = Int64GetDatum(r->bytes);
			if (see_path)
				values[7] = CStringGetTextDatum(r->path);
			else
				nulls[7] = true;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}
	pfree(copy);
	return (Datum) 0;
}
