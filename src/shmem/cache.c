/*-------------------------------------------------------------------------
 *
 * cache.c
 *		  The response cache: answers of safe GET requests to the partner
 *		  services, shared by every backend of the server, in a fixed
 *		  segment of shared memory.
 *
 * What is cached.  A GET whose row of the catalogue is safe (the call
 * module probes no other call), answered 2xx, whose TTL is above zero.  The TTL is, first found: the foreign table's option
 * cache_ttl (scans only), the server's option cache_ttl, the default of the
 * request's operation (cache_ttl_s of its row in catalog.c: product
 * catalogue and movie content; everything else 0).  Errors, answers larger than an eighth of
 * the cache and answers over max_response_size (an error) are never kept;
 * a request that changes state is never cached.  docs/cache.md has the
 * defaults and the reasons.
 *
 * The key (cache_key.c).  SHA-256 of (database, server, the API key, method, full URL
 * with its query string, the server's proxy and TLS files).  An answer is
 * thus served only to a role whose user mapping gives the same key (the
 * key itself is never stored, only the hash of the whole request), and a
 * changed base_url, query, proxy or CA file is another entry.  The TTL is
 * not part of the key: it is applied when an entry is read, with the TTL
 * of the reading request, so a lowered TTL takes effect at once; so is
 * the request's response size limit, so a lowered max_response_size
 * refuses a cached answer as it would refuse the service's.
 *
 * Revalidation.  An entry past the reading request's TTL whose answer
 * came with an ETag (the product catalogue's, in the sandbox) is not
 * dropped: http.c sends the request with If-None-Match, and a 304 Not
 * Modified makes the entry fresh again and serves it (psvc_cache_refresh);
 * the request counts against the rate limit, but no body is transferred.
 *
 * Invalidation.  Every call that may change state at a service (every
 * operation whose row is not safe) bumps the generation of
 * its server when it starts, when it ends and when it is abandoned; an
 * entry made under an older generation is stale, and an answer whose
 * request started before a bump is not stored.  A cancel_order(id) or an
 * UPDATE of a todo therefore makes every cached read of that server miss,
 * the detail read of that id included.  Per-id invalidation would be
 * finer but is not correct by itself: a write to an order also changes
 * the orders list, its status route and a user's orders, and nothing
 * says which reads a write touches.  Generations live in a small array of
 * slots hashed by (database, server); two servers sharing a slot only
 * invalidate each other more often.
 *
 * Memory.  partner_svc.cache_size (PGC_POSTMASTER) is the whole segment:
 * header, hash table and data blocks.  Bodies are stored in fixed blocks
 * of PSVC_CACHE_BLOCK bytes chained by an index array, so a freed entry's
 * blocks serve any later entry (no fragmentation).  When an answer needs
 * more blocks than are free, or the entry table is full, the least
 * recently used entries are evicted.
 *
 * Locking.  One LWLock of the tranche "partner_svc_cache" protects
 * everything but the generations: exclusive for lookups (a hit moves the
 * entry to the front of the LRU list and copies the body out), stores,
 * evictions and resets; shared for the usage view.  Generations are
 * atomics, read without the lock.  Nothing under the lock raises: the
 * copy out of a hit is allocated with MCXT_ALLOC_NO_OOM.  Two backends
 * that fill the same entry at once both send their request; the second to
 * store keeps the first one's entry.
 *
 * Without preloading there is no cache: requests are sent as usual.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "funcapi.h"
#include "lib/ilist.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "cache_int.h"
#include "catalog.h"
#include "guc.h"
#include "options.h"
#include "ratelimit.h"
#include "segments.h"

#define PSVC_CACHE_TRANCHE		"partner_svc_cache"
#define PSVC_CACHE_BLOCK		2048	/* bytes of one data block */
#define PSVC_CACHE_GEN_SLOTS	256 /* server generations */
#define PSVC_CACHE_MIN_KB		128

/* One cached answer; the hash table's entry. */
typedef struct CacheEntry
{
	uint8		key[PSVC_CACHE_KEY_LEN];	/* hash key */
	dlist_node	lru;			/* in CacheShared.lru, most recent first */
	Oid			dbid;
	Oid			serverid;
	uint64		gen;			/* of its server when its request started */
	TimestampTz fetched_at;		/* when its request started */
	int32		first_block;	/* chain of nblocks blocks via next[] */
	int32		nblocks;
	int32		status;
	uint32		ctype_len;		/* content type, ETag, then body, in the
								 * blocks */
	uint32		etag_len;
	uint32		body_len;
	uint64		stamp;			/* tells this answer from a later one of
								 * the same key */
	/* the decoded page of the body, if a scan left one (see the header) */
	int32		dec_block;		/* chain of dec_nblocks blocks, -1: none */
	int32		dec_nblocks;
	uint32		dec_sig_len;	/* its signature, then the page, in them */
	uint32		dec_len;
} CacheEntry;

/* The fixed part of the segment. */
typedef struct CacheShared
{
	LWLock	   *lock;
	int			nblocks;		/* data blocks */
	int			max_entries;
	int			max_entry_blocks;	/* larger answers are not kept */
	int			nfree;
	int32		free_head;		/* -1: none */
	int32	   *next;			/* next block of each block, -1 ends */
	char	   *blocks;
	dlist_head	lru;
	int64		nentries;
	Size		segment_bytes;	/* all the cache took of shared memory */
	/* counters since the last reset, under the lock */
	int64		hits;
	int64		misses;
	int64		stores;
	int64		evictions;
	int64		not_stored;		/* too large, or stale when it came */
	int64		revalidated;	/* stale answers the service confirmed (304) */
	int64		decoded_hits;	/* hits served with their decoded page */
	TimestampTz reset_at;
	uint64		last_stamp;
	pg_atomic_uint64 gens[PSVC_CACHE_GEN_SLOTS];
} CacheShared;

struct PsvcCacheProbe
{
	MemoryContext cxt;
	uint8		key[PSVC_CACHE_KEY_LEN];
	Oid			serverid;
	int			slot;
	uint64		gen;
	int			ttl_ms;
	size_t		max_body;		/* the response size limit of the request */
	TimestampTz started;
	const PsvcOperation *op;	/* the catalogue's row, for the stats row */
	const char *dec_sig;		/* the signature of the caller's decoding */
	size_t		dec_sig_len;
	uint64		stamp;			/* of the entry read or stored, 0: none */
	int			entry_blocks;	/* that entry's answer's blocks */
};

static CacheShared *cache = NULL;
static HTAB *cache_table = NULL;


PG_FUNCTION_INFO_V1(psvc_cache_reset);
PG_FUNCTION_INFO_V1(psvc_cache_usage);


/* ---------------------------------------------------------------------
 * Set-up
 * ---------------------------------------------------------------------
 */

/* How partner_svc.cache_size divides into entries and blocks. */
static void
cache_layout(int *max_entries, int *nblocks, Size *fixed)
{
	Size		total = (Size) psvc_guc_cache_size * 1024;
	Size		used;

	*max_entries = (int) Max(total / (2 * PSVC_CACHE_BLOCK), 32);
	*fixed = MAXALIGN(sizeof(CacheShared));
	/* the index array is MAXALIGNed: keep room for its padding */
	used = *fixed + hash_estimate_size(*max_entries, sizeof(CacheEntry)) +
		MAXIMUM_ALIGNOF;
	*nblocks = (int) ((total - used) / (PSVC_CACHE_BLOCK + sizeof(int32)));
}

static Size
cache_shmem_size(void)
{
	return (Size) psvc_guc_cache_size * 1024;
}

/* Makes or attaches to the segment, under AddinShmemInitLock. */
static void
cache_shmem_startup(void)
{
	int			max_entries;
	int			nblocks;
	Size		fixed;
	Size		data;
	bool		found;
	HASHCTL		info;

	cache_layout(&max_entries, &nblocks, &fixed);
	data = MAXALIGN(sizeof(int32) * nblocks) + (Size) nblocks * PSVC_CACHE_BLOCK;

	cache = ShmemInitStruct("partner_svc response cache", fixed + data, &found);
	if (!found)
	{
		char	   *p = (char *) cache + fixed;

		memset(cache, 0, sizeof(CacheShared));
		cache->lock = &(GetNamedLWLockTranche(PSVC_CACHE_TRANCHE))->lock;
		cache->nblocks = nblocks;
		cache->max_entries = max_entries;
		cache->max_entry_blocks = Max(nblocks / 8, 1);
		cache->next = (int32 *) p;
		cache->blocks = p + MAXALIGN(sizeof(int32) * nblocks);
		for (int i = 0; i < nblocks; i++)
			cache->next[i] = i + 1 < nblocks ? i + 1 : -1;
		cache->free_head = nblocks > 0 ? 0 : -1;
		cache->nfree = nblocks;
		dlist_init(&cache->lru);
		cache->segment_bytes = fixed + data +
			hash_estimate_size(max_entries, sizeof(CacheEntry));
		cache->reset_at = GetCurrentTimestamp();
		for (int i = 0; i < PSVC_CACHE_GEN_SLOTS; i++)
			pg_atomic_init_u64(&cache->gens[i], 0);
	}

	memset(&info, 0, sizeof(info));
	info.keysize = PSVC_CACHE_KEY_LEN;
	info.entrysize = sizeof(CacheEntry);
	cache_table = ShmemInitHash("partner_svc response cache entries",
								max_entries, max_entries,
								&info, HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_cache_segment = {
	.size = cache_shmem_size,
	.tranche = PSVC_CACHE_TRANCHE,
	.nlocks = 1,
	.startup = cache_shmem_startup,
};

/* ---------------------------------------------------------------------
 * TTLs
 * ---------------------------------------------------------------------
 */

/*
 * The TTL of a call in real milliseconds: table_ttl_ms (the table's
 * option, -1 without), the server's option, else the default of its
 * operation in the catalogue (catalog.c),
 * all in the partners' time, scaled by partner_svc.time_scale (a
 * scaled TTL is at least 1 ms: only 0 means "not cached").
 */
static int
request_ttl(const PsvcCallKey *ck, int table_ttl_ms)
{
	int			ttl;

	if (table_ttl_ms >= 0)
		ttl = table_ttl_ms;
	else if (ck->server->cache_ttl_ms >= 0)
		ttl = ck->server->cache_ttl_ms;
	else
		ttl = ck->op->cache_ttl_s * 1000;
	if (ttl <= 0 || psvc_guc_time_scale >= 1.0)
		return ttl;
	return Max((int) (ttl * psvc_guc_time_scale), 1);
}

/* ---------------------------------------------------------------------
 * Blocks and entries (all under the lock held exclusively; none raises)
 * ---------------------------------------------------------------------
 */

static int
gen_slot(Oid dbid, Oid serverid)
{
	return (int) (hash_combine(murmurhash32(dbid), murmurhash32(serverid)) %
				  PSVC_CACHE_GEN_SLOTS);
}

/* Gives the chain of blocks from b back to the free list. */
static void
free_chain(int32 b)
{
	while (b >= 0)
	{
		int32		nb = cache->next[b];

		cache->next[b] = cache->free_head;
		cache->free_head = b;
		cache->nfree++;
		b = nb;
	}
}

/* A chain of need free blocks (there must be that many); its first block. */
static int32
take_chain(int need)
{
	int32		first = -1;
	int32		prev = -1;

	Assert(cache->nfree >= need);
	for (int i = 0; i < need; i++)
	{
		int32		b = cache->free_head;

		cache->free_head = cache->next[b];
		cache->nfree--;
		cache->next[b] = -1;
		if (prev < 0)
			first = b;
		else
			cache->next[prev] = b;
		prev = b;
	}
	return first;
}

/* Forgets e's decoded page. */
static void
drop_decoded(CacheEntry *e)
{
	free_chain(e->dec_block);
	e->dec_block = -1;
	e->dec_nblocks = 0;
	e->dec_sig_len = e->dec_len = 0;
}

/* Gives e's blocks back and forgets e. */
static void
remove_entry(CacheEntry *e)
{
	free_chain(e->first_block);
	drop_decoded(e);
	dlist_delete(&e->lru);
	cache->nentries--;
	hash_search(cache_table, e->key, HASH_REMOVE, NULL);
}

/* Copies len bytes between buf and the chain at (*block, *off), advancing it. */
static void
copy_chain(int32 *block, int *off, char *buf, size_t len, bool out)
{
	while (len > 0)
	{
		size_t		n = Min(len, (size_t) (PSVC_CACHE_BLOCK - *off));
		char	   *p = cache->blocks + (Size) (*block) * PSVC_CACHE_BLOCK + *off;

		if (out)
			memcpy(buf, p, n);
		else
			memcpy(p, buf, n);
		buf += n;
		len -= n;
		*off += n;
		if (*off == PSVC_CACHE_BLOCK)
		{
			*block = cache->next[*block];
			*off = 0;
		}
	}
}

/* ---------------------------------------------------------------------
 * The request path (http.c)
 * ---------------------------------------------------------------------
 */

PsvcCacheProbe *
psvc_cache_probe(const PsvcCallKey *ck, int table_ttl_ms,
				 const char *sig, size_t sig_len, MemoryContext cxt)
{
	PsvcCacheProbe *p;
	int			ttl;

	if (cache == NULL || !psvc_guc_cache)
		return NULL;
	ttl = request_ttl(ck, table_ttl_ms);
	if (ttl <= 0)
		return NULL;

	p = MemoryContextAllocZero(cxt, sizeof(PsvcCacheProbe));
	p->cxt = cxt;
	p->serverid = ck->server->serverid;
	p->slot = gen_slot(MyDatabaseId, p->serverid);
	p->gen = pg_atomic_read_u64(&cache->gens[p->slot]);
	p->ttl_ms = ttl;
	p->max_body = (size_t) psvc_guc_max_response_size;
	if (ck->server->max_response_size > 0)
		p->max_body = Min(p->max_body, (size_t) ck->server->max_response_size);
	p->started = GetCurrentTimestamp();
	p->op = ck->op;
	if (sig != NULL)
	{
		char	   *copy = MemoryContextAlloc(cxt, sig_len);

		memcpy(copy, sig, sig_len);
		p->dec_sig = copy;
		p->dec_sig_len = sig_len;
	}

	psvc_cache_call_key(ck->server, ck->access, ck->op->method, ck->url, p->key);
	return p;
}

/* Whether the chain at b holds the bytes of buf first. */
static bool
chain_starts_with(int32 b, const char *buf, size_t len)
{
	size_t		done = 0;

	while (done < len && b >= 0)
	{
		size_t		n = Min(len - done, (size_t) PSVC_CACHE_BLOCK);

		if (memcmp(cache->blocks + (Size) b * PSVC_CACHE_BLOCK, buf + done, n) != 0)
			return false;
		done += n;
		b = cache->next[b];
	}
	return done == len;
}

/*
 * Copies e's decoded page into *a in cxt when it was made by a decoding of
 * the probe's signature; else, or when memory is short, leaves none.
 */
static void
copy_out_decoded(CacheEntry *e, PsvcCacheProbe *p, PsvcCachedAnswer *a)
{
	char	   *page;
	int32		b = e->dec_block;
	int			off;

	a->decoded = NULL;
	a->decoded_len = 0;
	if (b < 0 || p->dec_sig == NULL || e->dec_sig_len != p->dec_sig_len ||
		!chain_starts_with(b, p->dec_sig, p->dec_sig_len))
		return;
	page = MemoryContextAllocExtended(p->cxt, e->dec_len, MCXT_ALLOC_NO_OOM);
	if (page == NULL)
		return;
	/* the page follows its signature in the chain */
	for (int i = 0; i < (int) (e->dec_sig_len / PSVC_CACHE_BLOCK); i++)
		b = cache->next[b];
	off = e->dec_sig_len % PSVC_CACHE_BLOCK;
	copy_chain(&b, &off, page, e->dec_len, true);
	a->decoded = page;
	a->decoded_len = e->dec_len;
}

/* Copies e's answer into *a in cxt; false when memory is short. */
static bool
copy_out(CacheEntry *e, MemoryContext cxt, PsvcCachedAnswer *a)
{
	char	   *ctype = MemoryContextAllocExtended(cxt, e->ctype_len + 1, MCXT_ALLOC_NO_OOM);
	char	   *etag = MemoryContextAllocExtended(cxt, e->etag_len + 1, MCXT_ALLOC_NO_OOM);
	char	   *body = MemoryContextAllocExtended(cxt, (Size) e->body_len + 1, MCXT_ALLOC_NO_OOM);
	int32		b = e->first_block;
	int			off = 0;

	if (ctype == NULL || etag == NULL || body == NULL)
		return false;
	copy_chain(&b, &off, ctype, e->ctype_len, true);
	ctype[e->ctype_len] = '\0';
	copy_chain(&b, &off, etag, e->etag_len, true);
	etag[e->etag_len] = '\0';
	copy_chain(&b, &off, body, e->body_len, true);
	body[e->body_len] = '\0';
	a->body = body;
	a->len = e->body_len;
	a->status = e->status;
	a->content_type = e->ctype_len > 0 ? ctype : NULL;
	a->etag = e->etag_len > 0 ? etag : NULL;
	return true;
}

PsvcCacheFound
psvc_cache_lookup(PsvcCacheProbe *p, PsvcCachedAnswer *answer)
{
	CacheEntry *e;
	PsvcCacheFound found = PSVC_CACHE_MISS;
	TimestampTz now = GetCurrentTimestamp();

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	e = hash_search(cache_table, p->key, HASH_FIND, NULL);
	if (e != NULL && e->gen != pg_atomic_read_u64(&cache->gens[p->slot]))
	{
		/* made before a write to its server */
		remove_entry(e);
		e = NULL;
	}
	/*
	 * Only within the reading request's size limit (a larger answer is sent
	 * for, and refused as it would be uncached); fresh while younger than
	 * its TTL, else worth a revalidation when it has an ETag.
	 */
	if (e != NULL && e->body_len <= p->max_body)
	{
		if (now - e->fetched_at < (TimestampTz) p->ttl_ms * 1000)
		{
			if (copy_out(e, p->cxt, answer))
			{
				dlist_move_head(&cache->lru, &e->lru);
				found = PSVC_CACHE_HIT;
			}
		}
		else if (e->etag_len > 0 && copy_out(e, p->cxt, answer))
			found = PSVC_CACHE_STALE;
	}
	if (found != PSVC_CACHE_MISS)
	{
		/* the decoded page goes with the body it was made from */
		copy_out_decoded(e, p, answer);
		p->stamp = e->stamp;
		p->entry_blocks = e->nblocks;
		if (answer->decoded != NULL && found == PSVC_CACHE_HIT)
			cache->decoded_hits++;
	}
	if (found == PSVC_CACHE_HIT)
		cache->hits++;
	else
		cache->misses++;
	LWLockRelease(cache->lock);

	psvc_rl_count_cache(p->serverid, p->op->method, p->op->route,
						found == PSVC_CACHE_HIT);
	return found;
}

void
psvc_cache_refresh(PsvcCacheProbe *p)
{
	CacheEntry *e;

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	e = hash_search(cache_table, p->key, HASH_FIND, NULL);
	if (e != NULL && e->gen == p->gen &&
		pg_atomic_read_u64(&cache->gens[p->slot]) == p->gen &&
		e->fetched_at < p->started)
	{
		e->fetched_at = p->started;
		dlist_move_head(&cache->lru, &e->lru);
		cache->revalidated++;
	}
	LWLockRelease(cache->lock);
}

void
psvc_cache_store(PsvcCacheProbe *p, const char *body, size_t len,
				 long status, const char *content_type, const char *etag)
{
	size_t		ctype_len = content_type ? strlen(content_type) : 0;
	size_t		etag_len = etag ? strlen(etag) : 0;
	size_t		total = ctype_len + etag_len + len;
	int			need;
	CacheEntry *e;
	bool		found;
	int32		b;
	int			off = 0;

	if (total > (size_t) cache->max_entry_blocks * PSVC_CACHE_BLOCK)
	{
		LWLockAcquire(cache->lock, LW_EXCLUSIVE);
		cache->not_stored++;
		LWLockRelease(cache->lock);
		return;
	}
	need = (int) Max((total + PSVC_CACHE_BLOCK - 1) / PSVC_CACHE_BLOCK, 1);

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	if (pg_atomic_read_u64(&cache->gens[p->slot]) != p->gen)
	{
		/* a write began since the request: its answer may be stale */
		cache->not_stored++;
		LWLockRelease(cache->lock);
		return;
	}
	e = hash_search(cache_table, p->key, HASH_FIND, NULL);
	if (e != NULL && e->gen == p->gen && e->fetched_at >= p->started)
	{
		/* another backend filled it with an answer as fresh as ours */
		LWLockRelease(cache->lock);
		return;
	}
	if (e != NULL)
		remove_entry(e);

	/* room: blocks and an entry, the least recently used going first */
	while (cache->nfree < need || cache->nentries >= cache->max_entries)
	{
		CacheEntry *victim;

		if (dlist_is_empty(&cache->lru))
		{
			cache->not_stored++;
			LWLockRelease(cache->lock);
			return;
		}
		victim = dlist_container(CacheEntry, lru, dlist_tail_node(&cache->lru));
		remove_entry(victim);
		cache->evictions++;
	}

	e = hash_search(cache_table, p->key, HASH_ENTER_NULL, &found);
	if (e == NULL)
	{
		cache->not_stored++;
		LWLockRelease(cache->lock);
		return;
	}
	Assert(!found);
	e->dbid = MyDatabaseId;
	e->serverid = p->serverid;
	e->gen = p->gen;
	e->fetched_at = p->started;
	e->status = (int32) status;
	e->ctype_len = (uint32) ctype_len;
	e->etag_len = (uint32) etag_len;
	e->body_len = (uint32) len;
	e->nblocks = need;
	e->first_block = take_chain(need);
	e->stamp = ++cache->last_stamp;
	p->stamp = e->stamp;
	p->entry_blocks = need;
	e->dec_block = -1;
	e->dec_nblocks = 0;
	e->dec_sig_len = e->dec_len = 0;
	b = e->first_block;
	copy_chain(&b, &off, (char *) content_type, ctype_len, false);
	copy_chain(&b, &off, (char *) etag, etag_len, false);
	copy_chain(&b, &off, (char *) body, len, false);
	dlist_push_head(&cache->lru, &e->lru);
	cache->nentries++;
	cache->stores++;
	LWLockRelease(cache->lock);
}

size_t
psvc_cache_decoded_room(PsvcCacheProbe *p)
{
	size_t		room;

	if (p->stamp == 0 || p->dec_sig == NULL ||
		p->entry_blocks >= cache->max_entry_blocks)
		return 0;
	room = (size_t) (cache->max_entry_blocks - p->entry_blocks) * PSVC_CACHE_BLOCK;
	return room > p->dec_sig_len ? room - p->dec_sig_len : 0;
}

void
psvc_cache_keep_decoded(PsvcCacheProbe *p, const char *page, size_t len)
{
	CacheEntry *e;
	size_t		total = p->dec_sig_len + len;
	int			need;
	int32		b;
	int			off = 0;

	if (p->stamp == 0 || p->dec_sig == NULL)
		return;
	need = (int) Max((total + PSVC_CACHE_BLOCK - 1) / PSVC_CACHE_BLOCK, 1);

	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	e = hash_search(cache_table, p->key, HASH_FIND, NULL);
	/* only beside the very answer it was decoded from, within the limit */
	if (e == NULL || e->stamp != p->stamp ||
		e->nblocks + need > cache->max_entry_blocks ||
		(e->dec_block >= 0 && e->dec_sig_len == p->dec_sig_len &&
		 chain_starts_with(e->dec_block, p->dec_sig, p->dec_sig_len)))
	{
		LWLockRelease(cache->lock);
		return;
	}
	/* another decoding's page gives way: the last scan's is kept */
	drop_decoded(e);
	while (cache->nfree < need)
	{
		dlist_node *n = dlist_tail_node(&cache->lru);
		CacheEntry *victim = dlist_container(CacheEntry, lru, n);

		if (victim == e)
		{
			if (!dlist_has_prev(&cache->lru, n))
				break;
			victim = dlist_container(CacheEntry, lru, dlist_prev_node(&cache->lru, n));
		}
		remove_entry(victim);
		cache->evictions++;
	}
	if (cache->nfree >= need)
	{
		e->dec_block = take_chain(need);
		e->dec_nblocks = need;
		e->dec_sig_len = (uint32) p->dec_sig_len;
		e->dec_len = (uint32) len;
		b = e->dec_block;
		copy_chain(&b, &off, unconstify(char *, p->dec_sig), p->dec_sig_len, false);
		copy_chain(&b, &off, unconstify(char *, page), len, false);
	}
	LWLockRelease(cache->lock);
}

void
psvc_cache_note_write(Oid serverid)
{
	if (cache == NULL)
		return;
	pg_atomic_fetch_add_u64(&cache->gens[gen_slot(MyDatabaseId, serverid)], 1);
}

/* ---------------------------------------------------------------------
 * SQL functions
 * ---------------------------------------------------------------------
 */

static void
require_cache(const char *what)
{
	if (cache == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs partner_svc in shared_preload_libraries", what),
				 errdetail("The response cache lives in shared memory, which partner_svc has only when it is preloaded.")));
}

/*
 * partner_svc.cache_reset(): forgets every entry of every database and
 * zeroes the counters of partner_svc.cache_usage.  Returns the number of
 * entries forgotten.
 */
Datum
psvc_cache_reset(PG_FUNCTION_ARGS)
{
	int64		n;

	require_cache("partner_svc.cache_reset()");
	LWLockAcquire(cache->lock, LW_EXCLUSIVE);
	n = cache->nentries;
	while (!dlist_is_empty(&cache->lru))
		remove_entry(dlist_container(CacheEntry, lru, dlist_head_node(&cache->lru)));
	cache->hits = cache->misses = cache->stores = 0;
	cache->evictions = cache->not_stored = cache->revalidated = 0;
	cache->decoded_hits = 0;
	cache->reset_at = GetCurrentTimestamp();
	LWLockRelease(cache->lock);
	PG_RETURN_INT64(n);
}

/*
 * partner_svc.cache_usage(): one row: size_limit (partner_svc.cache_size
 * in bytes), shared_bytes (what the cache took of shared memory, tables
 * included), bytes_used (data blocks held by entries), bytes_cached (the
 * answers' own bytes), entries, max_entries, max_entry_bytes, then hits,
 * misses, stores, evictions, not_stored, revalidated and reset_at.
 */
Datum
psvc_cache_usage(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[15];
	bool		nulls[15];
	int64		cached = 0;
	dlist_iter	it;
	int			i = 0;

	require_cache("partner_svc.cache_usage");
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(nulls, 0, sizeof(nulls));

	LWLockAcquire(cache->lock, LW_SHARED);
	dlist_foreach(it, &cache->lru)
	{
		CacheEntry *e = dlist_container(CacheEntry, lru, it.cur);

		cached += e->ctype_len + e->etag_len + e->body_len;
	}
	values[i++] = Int64GetDatum((int64) psvc_guc_cache_size * 1024);
	values[i++] = Int64GetDatum((int64) cache->segment_bytes);
	values[i++] = Int64GetDatum((int64) (cache->nblocks - cache->nfree) * PSVC_CACHE_BLOCK);
	values[i++] = Int64GetDatum(cached);
	values[i++] = Int64GetDatum(cache->nentries);
	values[i++] = Int32GetDatum(cache->max_entries);
	values[i++] = Int64GetDatum((int64) cache->max_entry_blocks * PSVC_CACHE_BLOCK);
	values[i++] = Int64GetDatum(cache->hits);
	values[i++] = Int64GetDatum(cache->misses);
	values[i++] = Int64GetDatum(cache->stores);
	values[i++] = Int64GetDatum(cache->evictions);
	values[i++] = Int64GetDatum(cache->not_stored);
	values[i++] = Int64GetDatum(cache->revalidated);
	values[i++] = Int64GetDatum(cache->decoded_hits);
	values[i++] = TimestampTzGetDatum(cache->reset_at);
	LWLockRelease(cache->lock);
	Assert(i == lengthof(values));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
