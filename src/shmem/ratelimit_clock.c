/*-------------------------------------------------------------------------
 *
 * ratelimit_clock.c
 *		  The clock and the window of the rate limiter: the lowest layer of
 *		  the ratelimit module, shared by the limiter (ratelimit.c,
 *		  ratelimit_request.c, ratelimit_views.c) and the fleet quota
 *		  (quota.c, quota_exchange.c, src/call/quota_worker.c).
 *
 * Times in shared memory are microseconds of CLOCK_MONOTONIC (the same in
 * every process of the machine), offset so that bucket numbers are never
 * negative; psvc_rl_timestamp turns one into wall-clock time for the
 * views and messages.  The bucket width follows from the window,
 * psvc_guc_window_ms, one minute times partner_svc.time_scale (guc.c;
 * the window logic is in the header of ratelimit.c).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/ratelimit_clock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "utils/timestamp.h"

#include "guc.h"
#include "ratelimit_int.h"

/* Added to CLOCK_MONOTONIC so bucket numbers are never negative. */
#define PSVC_RL_CLOCK_OFFSET	INT64CONST(1000000000000)

int64
psvc_rl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return PSVC_RL_CLOCK_OFFSET + (int64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

TimestampTz
psvc_rl_timestamp(int64 mono_us)
{
	return GetCurrentTimestamp() + (mono_us - psvc_rl_now());
}

int64
psvc_rl_bucket_width(void)
{
	int64		w = (int64) psvc_guc_window_ms * 1000;
	int64		margin = Max(w / 1000, 1000);

	return (w + margin + PSVC_RL_BUCKETS - 1) / PSVC_RL_BUCKETS;
}
