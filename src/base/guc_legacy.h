/*-------------------------------------------------------------------------
 *
 * guc_legacy.h
 *		  The settings of 0.3 that 0.4 replaced (guc_legacy.c), and the
 *		  refusal of the worker's connection both files record; for the
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

/* check hooks of partner_svc.webhook_listener, worker and worker_tasks */
extern bool psvc_guc_check_legacy_listener(char **newval, void **extra, GucSource source);
extern bool psvc_guc_check_legacy_worker(char **newval, void **extra, GucSource source);
extern bool psvc_guc_check_legacy_tasks(char **newval, void **extra, GucSource source);

/* in guc.c: the worker's connection given at start is not trusted */
extern void psvc_guc_refuse_worker(const char *setting, const char *why);

#endif							/* PSVC_GUC_LEGACY_H */
