/*-------------------------------------------------------------------------
 *
 * cache.h
 *		  The response cache of partner_svc: answers of safe GET requests,
 *		  kept in shared memory for every backend of the server (cache.c).
 *
 * The call module (http.c) is the only caller of the request-path
 * functions: it probes the cache when a request starts, serves a hit
 * without the rate limiter or the network, stores a 2xx answer when a
 * miss completes, and reports every request that changes state at a
 * service.  A scan may leave the decoded page of an answer beside it, so
 * that a hit serves the page too and the body is not parsed again.  What
 * a probe allocates lives in the memory
 * context the caller gives (the transfer's).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_CACHE_H
#define PSVC_CACHE_H

#include "utils/palloc.h"

struct PsvcCallKey;				/* options.h */

/* One request's dealings with the cache, opaque outside cache.c. */
typedef struct PsvcCacheProbe PsvcCacheProbe;

struct PsvcSegment;				/* segments.h */
/* The response cache in shared memory (its size: partner_svc.cache_size). */
extern const struct PsvcSegment psvc_cache_segment;

/*
 * The probe of the call ck, allocated in cxt; NULL when the call is not
 * cached: a TTL of 0 (table_ttl_ms: a foreign table's cache_ttl, or -1),
 * the cache off or not in shared memory.  The caller probes only the
 * calls that may be cached at all: a GET whose row is safe.  sig (sig_len bytes, or NULL) is the signature the caller
 * decodes pages with (psvc_cache_keep_decoded).  The call's key is a
 * SHA-256 digest that includes the API key of the server's user mapping:
 * computed once per backend and kept (the digest, never the API key)
 * until a server or user mapping changes.  Reads the user mapping only
 * then.
 */
extern PsvcCacheProbe *psvc_cache_probe(const struct PsvcCallKey *ck,
										int table_ttl_ms, const char *sig,
										size_t sig_len, MemoryContext cxt);

/* What a lookup found. */
typedef enum PsvcCacheFound
{
	PSVC_CACHE_MISS,			/* nothing usable: send the request */
	PSVC_CACHE_HIT,				/* a fresh answer: send nothing */
	PSVC_CACHE_STALE			/* an answer past its TTL that has an ETag:
								 * send the request with If-None-Match, and
								 * on 304 use the answer
								 * (psvc_cache_refresh) */
} PsvcCacheFound;

/*
 * An answer as the cache gives it back, allocated in the probe's context:
 * the body NUL-terminated, in the database's encoding.
 */
typedef struct PsvcCachedAnswer
{
	char	   *body;
	size_t		len;
	long		status;
	char	   *content_type;	/* or NULL */
	char	   *etag;			/* or NULL */
	/*
	 * The decoded page a scan left beside the body (json_page_flat.c), when
	 * it was made by a decoding of the probed request's signature; or NULL.
	 */
	char	   *decoded;
	size_t		decoded_len;
} PsvcCachedAnswer;

/*
 * Looks the probe's answer up; on a hit or a stale answer fills *answer.
 * A hit is counted as a hit in partner_svc.stats, anything else as a
 * miss.  Never raises for want of memory (a copy that cannot be made is a
 * miss).
 */
extern PsvcCacheFound psvc_cache_lookup(PsvcCacheProbe *probe,
										PsvcCachedAnswer *answer);

/*
 * The service answered 304 Not Modified to the revalidation of a stale
 * answer: it is fresh again from the probe's start, unless a write began
 * since.  Never raises.
 */
extern void psvc_cache_refresh(PsvcCacheProbe *probe);

/*
 * Keeps a 2xx answer of a probed request, unless a write to its server
 * began since the probe, or it is larger than the cache takes.  Evicts
 * the least recently used entries for room.  Never raises.
 */
extern void psvc_cache_store(PsvcCacheProbe *probe, const char *body, size_t len,
							 long status, const char *content_type,
							 const char *etag);

/*
 * The most bytes a decoded page of the answer the probe read or stored
 * may have for psvc_cache_keep_decoded to keep it (an answer and its page
 * take at most an eighth of the cache); 0 when none would be kept.  Reads
 * no shared state that needs the lock.
 */
extern size_t psvc_cache_decoded_room(PsvcCacheProbe *probe);

/*
 * Keeps page, the decoded page (json_page_flat.c) of the answer the probe
 * read or stored, beside that answer, tagged with the signature of the
 * probed call (the sig given to psvc_cache_probe); replaces the page of
 * another signature.  Nothing when the entry has gone or changed since,
 * or when the page would make the entry larger than the cache takes.
 * Evicts other entries for room.  Never raises.
 */
extern void psvc_cache_keep_decoded(PsvcCacheProbe *probe, const char *page,
									size_t len);

/*
 * A request that may change state at the service of server serverid (of
 * this database) starts, ends or is abandoned: every entry of that server
 * stored before now is stale.  Never raises.
 */
extern void psvc_cache_note_write(Oid serverid);

#endif							/* PSVC_CACHE_H */
