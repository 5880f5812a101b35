/*-------------------------------------------------------------------------
 *
 * cache_int.h
 *		  What the files of the response cache share among themselves
 *		  (cache.c, cache_key.c), and no other file.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/cache_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_CACHE_INT_H
#define PSVC_CACHE_INT_H

#include "cache.h"

#define PSVC_CACHE_KEY_LEN		32	/* SHA-256 */

struct PsvcServer;				/* options.h */
struct PsvcServerAccess;		/* options.h */

/*
 * in cache_key.c: the key of a call of method to url (its full URL) on
 * server, made as access says, into key (PSVC_CACHE_KEY_LEN bytes): kept
 * from an earlier call, or computed.  Reads no option and no key.
 */
extern void psvc_cache_call_key(const struct PsvcServer *server,
								const struct PsvcServerAccess *access,
								const char *method, const char *url,
								uint8 *key);

#endif							/* PSVC_CACHE_INT_H */
