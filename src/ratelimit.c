/*-------------------------------------------------------------------------
 *
 * ratelimit.c
 *		  The shared-memory rate limiter (not built yet: see the issue).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/ratelimit.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "partner_svc.h"

void
psvc_rl_init(void)
{
}
