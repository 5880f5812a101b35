/*-------------------------------------------------------------------------
 *
 * guc.h
 *		  The client settings of partner_svc (GUCs partner_svc.*), owned by
 *		  guc.c.
 *
 * guc.c defines the settings of the HTTP client and the scan (timeouts,
 * retries, page size, fan-out, prefetch, response size); a server option
 * of the same name overrides each for one server (options.h,
 * psvc_options_setting).  The rate limiter and the webhook worker define
 * their own settings in their modules.  Everything here is plain static
 * storage of the process; nothing is allocated.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/guc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_GUC_H
#define PSVC_GUC_H

#include "utils/memutils.h"

/* Bounds of the settings, shared by the GUCs and the server options. */
#define PSVC_MAX_CONNECT_TIMEOUT_MS (10 * 60 * 1000)
#define PSVC_MAX_REQUEST_TIMEOUT_MS (60 * 60 * 1000)
#define PSVC_MAX_RETRIES 10
#define PSVC_MAX_PAGE_SIZE 100
#define PSVC_MAX_FANOUT 64

extern int	psvc_guc_connect_timeout;	/* milliseconds */
extern int	psvc_guc_request_timeout;	/* milliseconds */
extern int	psvc_guc_max_retries;
extern int	psvc_guc_page_size;			/* items per page asked for */
extern int	psvc_guc_fanout;			/* concurrent first pages */
extern int	psvc_guc_max_response_size;	/* bytes */

/* partner_svc.max_response_size: default, and the most it may be */
#define PSVC_DEFAULT_MAX_RESPONSE_SIZE	(64 * 1024 * 1024)
#define PSVC_MAX_RESPONSE_SIZE_LIMIT	((int) (MaxAllocSize - 1))
extern bool psvc_guc_prefetch;			/* fetch the next page early */

/* Defines the settings above (from _PG_init, preloaded or not). */
extern void psvc_guc_init(void);

#endif							/* PSVC_GUC_H */
