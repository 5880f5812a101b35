/*-------------------------------------------------------------------------
 *
 * guc_legacy.h
 *		  The settings of 0.3 that 0.4 replaced (guc_legacy.c), for the
 *		  table of guc.c only.  Modules read the settings through guc.h.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/guc_legacy.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_GUC_LEGACY_H
#define PSVC_GUC_LEGACY_H

#include "utils/guc.h"

/*
 * Reports a value of partner_svc.webhook_listener, worker or worker_tasks
 * (name without the prefix), from their check hooks; true if it did.
 */
extern bool psvc_guc_legacy_report(const char *name, const char *value,
								   GucSource source);

#endif							/* PSVC_GUC_LEGACY_H */
