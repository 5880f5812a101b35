/*-------------------------------------------------------------------------
 *
 * cache.h
 *		  The response cache of partner_svc: answers of safe GET requests,
 *		  kept in shared memory for every backend of the server (cache.c).
 *
 * The HTTP client (http.c) is the only caller of the request-path
 * functions: it probes the cache when a request starts, serves a hit
 * without the rate limiter or the network, stores a 2xx answer when a
 * miss completes, and reports every request that changes state at a
 * service.  What a probe allocates lives in the memory
 * context the caller gives (the transfer's).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_CACHE_H
#define PSVC_CACHE_H

#include "http.h"

/* One request's dealings with the cache, opaque outside cache.c. */
typedef struct PsvcCacheProbe PsvcCacheProbe;

/* From _PG_init: GUCs, and when preloading the shared memory hooks. */
extern void psvc_cache_init(void);

/*
 * The probe of req, whose full URL is url and whose API key is api_key
 * (NULL: none), allocated in cxt; NULL when the request is not cached: not
 * a safe GET, a TTL of 0, the cache off or not in shared memory.  Reads
 * no catalog.  The key itself is not kept, only its SHA-256.
 */
extern PsvcCacheProbe *psvc_cache_probe(const PsvcHttpRequest *req,
										const char *url, const char *api_key,
										MemoryContext cxt);

/*
 * Looks the probe's answer up.  On a hit, returns true with a copy of the
 * body (NUL-terminated, as received: UTF-8), its status and content type
 * allocated in the probe's context; a miss returns false.  Either way it
 * is counted in partner_svc.stats.  Never raises for want of memory (a
 * copy that cannot be made is a miss).
 */
extern bool psvc_cache_lookup(PsvcCacheProbe *probe, char **body, size_t *len,
							  long *status, char **content_type);

/*
 * Keeps a 2xx answer of a probed request, unless a write to its server
 * began since the probe, or it is larger than the cache takes.  Evicts
 * the least recently used entries for room.  Never raises.
 */
extern void psvc_cache_store(PsvcCacheProbe *probe, const char *body, size_t len,
							 long status, const char *content_type);

/*
 * A request that may change state at the service of server serverid (of
 * this database) starts, ends or is abandoned: every entry of that server
 * stored before now is stale.  Never raises.
 */
extern void psvc_cache_note_write(Oid serverid);

#endif							/* PSVC_CACHE_H */
