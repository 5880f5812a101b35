/*-------------------------------------------------------------------------
 *
 * partner_svc.h
 *		  The one shared header of the partner_svc extension.
 *
 * Everything one source file exports to the others is declared here,
 * grouped under the file that defines it.  Exported C symbols carry the
 * prefix psvc_<module>_; everything else in a file is static.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/partner_svc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PARTNER_SVC_H
#define PARTNER_SVC_H

#include "fmgr.h"

/*
 * Version of this build of the library.  It equals default_version of
 * partner_svc.control; partner_svc.version() returns it, so a session can
 * tell when the installed SQL objects and the loaded library disagree.
 */
#define PSVC_VERSION "0.1"

/* in partner_svc.c */
extern int	psvc_guc_connect_timeout;	/* milliseconds */
extern int	psvc_guc_request_timeout;	/* milliseconds */
extern int	psvc_guc_max_retries;
extern Datum psvc_module_version(PG_FUNCTION_ARGS);

/* in options.c */
extern Datum psvc_options_validator(PG_FUNCTION_ARGS);

/* in fdw_handler.c */
extern Datum psvc_fdw_handler(PG_FUNCTION_ARGS);

#endif							/* PARTNER_SVC_H */
