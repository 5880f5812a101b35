/*-------------------------------------------------------------------------
 *
 * cache_key.c
 *		  The keys of the response cache: which answers are the same
 *		  answer.  A key is the SHA-256 digest of (database, server, the
 *		  digest of the user mapping's API key (PsvcServerAccess, which
 *		  the call resolved once), method, full URL with its query,
 *		  the server's proxy and TLS files), computed once per backend and
 *		  kept until a server or user mapping changes (cache.c describes
 *		  what the key is for).
 *
 * Secrets.  The API key is never read here: the call's access holds its
 * digest (server_account.c); only digests are kept.
 *
 * Memory: the kept keys live in a child of TopMemoryContext; nothing else
 * outlives a call.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/cache_key.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <openssl/evp.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "cache_int.h"
#include "options.h"

/*
 * SHA-256 of the concatenation of n (pointer, length) pairs into out.
 *
 * Straight through OpenSSL's EVP interface with the algorithm fetched once
 * and one context per backend, both kept for the life of the process
 * (OpenSSL's own allocations, a few hundred bytes).  pg_cryptohash asks
 * OpenSSL 3 to look the algorithm up and makes a context for every digest:
 * that was 13% of a cached scan of products, two digests per probe
 * (docs/performance.md).  The context holds no input after a digest:
 * OpenSSL clears its block buffer when it finishes.  A failure leaves the
 * context to be initialised again by the next call.
 */
static void
sha256(uint8 *out, int n, const void **parts, const size_t *lens)
{
	static EVP_MD *md = NULL;
	static EVP_MD_CTX *ctx = NULL;
	unsigned int outlen = 0;
	bool		ok;

	if (ctx == NULL)
	{
		if (md == NULL)
			md = EVP_MD_fetch(NULL, "SHA256", NULL);
		if (md != NULL)
			ctx = EVP_MD_CTX_new();
		if (ctx == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("OpenSSL could not set up SHA-256 for the response cache key.")));
	}
	ok = EVP_DigestInit_ex2(ctx, md, NULL) == 1;
	for (int i = 0; ok && i < n; i++)
		ok = EVP_DigestUpdate(ctx, parts[i], lens[i]) == 1;
	ok = ok && EVP_DigestFinal_ex(ctx, out, &outlen) == 1 &&
		outlen == PSVC_CACHE_KEY_LEN;
	if (!ok)
		elog(ERROR, "could not compute the response cache key with OpenSSL");
}

/*
 * The request keys computed last, per backend.  A key needs a SHA-256
 * digest: a quarter of what a scan answered
 * by the cache spent outside PostgreSQL's executor.  A key depends only on
 * the database (fixed for the backend), the server and role whose mapping
 * gives the API key, the server's options (proxy, TLS files), the method
 * and the URL; it is reused while the options epoch (options.h: any change
 * of a server or user mapping moves it) has not moved.  Only digests are
 * kept, never an API key.
 */
#define PSVC_CACHE_KEY_MEMO 16

typedef struct KeyMemo
{
	Oid			serverid;
	Oid			userid;
	uint64		epoch;
	char	   *request;		/* "METHOD URL", in key_memo_cxt; NULL: free */
	uint8		key[PSVC_CACHE_KEY_LEN];
} KeyMemo;

static KeyMemo key_memo[PSVC_CACHE_KEY_MEMO];
static int	key_memo_next = 0;	/* the slot a new key replaces */
static MemoryContext key_memo_cxt = NULL;

/*
 * The digest of one request (with its server's options and the digest of
 * its API key, never the key) into key.
 */
static void
digest_request(const PsvcServer *server, const PsvcServerAccess *access,
			   const char *method, const char *url, uint8 *key)
{
	Oid			ids[2];
	const char *conn[4];
	const void *parts[9];
	size_t		lens[9];

	/*
	 * Every string ends with its NUL so that no two requests give the same
	 * input, and a request without a key has a marker of its own.
	 */
	ids[0] = MyDatabaseId;
	ids[1] = server->serverid;
	parts[0] = ids;
	lens[0] = sizeof(ids);
	parts[1] = access->has_key ? "K" : "-";
	lens[1] = 1;
	parts[2] = access->key_digest;
	lens[2] = access->has_key ? PSVC_KEY_DIGEST_LEN : 0;
	parts[3] = method;
	lens[3] = strlen(method) + 1;
	parts[4] = url;
	lens[4] = strlen(url) + 1;
	/* how the answer was fetched: another proxy or TLS setup, another entry */
	conn[0] = server->proxy;
	conn[1] = server->ssl_ca_file;
	conn[2] = server->ssl_cert_file;
	conn[3] = server->ssl_key_file;
	for (int i = 0; i < 4; i++)
	{
		parts[5 + i] = conn[i] ? conn[i] : "";
		lens[5 + i] = strlen(parts[5 + i]) + 1;
	}
	sha256(key, 9, parts, lens);
}

/* The key of a call of method to url on server into key: kept, or computed. */
void
psvc_cache_call_key(const PsvcServer *server, const PsvcServerAccess *access,
					const char *method, const char *url, uint8 *key)
{
	Oid			userid = OidIsValid(server->userid) ?
		server->userid : GetUserId();
	uint64		epoch = psvc_options_epoch();
	size_t		mlen = strlen(method);
	KeyMemo    *m;

	for (int i = 0; i < PSVC_CACHE_KEY_MEMO; i++)
	{
		m = &key_memo[i];
		if (m->request != NULL && m->serverid == server->serverid &&
			m->userid == userid && m->epoch == epoch &&
			strncmp(m->request, method, mlen) == 0 &&
			m->request[mlen] == ' ' && strcmp(m->request + mlen + 1, url) == 0)
		{
			memcpy(key, m->key, PSVC_CACHE_KEY_LEN);
			return;
		}
	}

	digest_request(server, access, method, url, key);
	/* kept only when no change came while the key was read */
	if (epoch != psvc_options_epoch())
		return;
	if (key_memo_cxt == NULL)
		key_memo_cxt = AllocSetContextCreate(TopMemoryContext,
											 "partner_svc cache keys",
											 ALLOCSET_SMALL_SIZES);
	m = &key_memo[key_memo_next];
	key_memo_next = (key_memo_next + 1) % PSVC_CACHE_KEY_MEMO;
	if (m->request != NULL)
		pfree(m->request);
	m->request = MemoryContextStrdup(key_memo_cxt, psprintf("%s %s", method, url));
	m->serverid = server->serverid;
	m->userid = userid;
	m->epoch = epoch;
	memcpy(m->key, key, PSVC_CACHE_KEY_LEN);
}
