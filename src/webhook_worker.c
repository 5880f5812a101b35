/*-------------------------------------------------------------------------
 *
 * webhook_worker.c
 *		  The background worker that receives webhooks (not built yet: see the issue).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "partner_svc.h"

void
psvc_worker_init(void)
{
}
