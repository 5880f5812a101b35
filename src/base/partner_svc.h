/*-------------------------------------------------------------------------
 *
 * partner_svc.h
 *		  The version of the partner_svc library, and nothing else.
 *
 * Every module has its own header (catalog.h, options.h, guc.h, call.h,
 * json.h, ratelimit.h, xact_writes.h, fdw.h, functions.h, webhook.h);
 * docs/architecture.md describes them and the order of their layers.
 * This one only names the version of the build, for the files that print
 * it.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/partner_svc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PARTNER_SVC_H
#define PARTNER_SVC_H

/*
 * Version of this build of the library.  The Makefile passes it
 * (-DPSVC_VERSION from EXTVERSION, which it reads from default_version of
 * partner_svc.control); partner_svc.version() returns it, so a session can
 * tell when the installed SQL objects and the loaded library disagree.
 * Built outside the Makefile (an analyser), it reads "unknown".
 */
#ifndef PSVC_VERSION
#define PSVC_VERSION "unknown"
#endif

#endif							/* PARTNER_SVC_H */
