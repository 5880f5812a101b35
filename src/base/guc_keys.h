/*-------------------------------------------------------------------------
 *
 * guc_keys.h
 *		  Hooks of the "key=value ..." settings, for the table of guc.c.
 *		  Modules read the parsed values through guc.h.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/guc_keys.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_GUC_KEYS_H
#define PSVC_GUC_KEYS_H

#include "utils/guc.h"

extern bool psvc_guc_check_listener(char **newval, void **extra, GucSource source);
extern void psvc_guc_assign_listener(const char *newval, void *extra);
extern bool psvc_guc_check_worker(char **newval, void **extra, GucSource source);
extern void psvc_guc_assign_worker(const char *newval, void *extra);
extern bool psvc_guc_check_tasks(char **newval, void **extra, GucSource source);
extern void psvc_guc_assign_tasks(const char *newval, void *extra);
extern void psvc_guc_keys_init(void);

#endif							/* PSVC_GUC_KEYS_H */
