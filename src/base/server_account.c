/*-------------------------------------------------------------------------
 *
 * server_account.c
 *		  The partner account a server's calls are made as: a digest of the
 *		  service's base URL and the API key of the user mapping, which the
 *		  rate limiter and the fleet quota budget by.
 *
 * The documents count requests "per partner and per route": the partner
 * is whoever holds the API key at that service, whatever the server, the
 * database or the cluster that sends.  So the account is the SHA-256 of
 * the normalised base URL (scheme and host in lower case, no default
 * port, no trailing slash) and the key, in hex, truncated to
 * PSVC_ACCOUNT_LEN characters (128 bits): two servers with one key at one
 * service share it, two keys never do, and a server's name, which any
 * role may choose, plays no part.  Only the digest is kept or shown; the
 * key is read, digested and wiped.
 *
 * Memory: the kept digests are in a static array; nothing else outlives a
 * call.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/server_account.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/cryptohash.h"
#include "common/sha2.h"
#include "miscadmin.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "options.h"

/*
 * Digests computed last, per backend: each needs the user mapping's key
 * and a SHA-256, and every call asks.  A digest depends on the server's
 * base URL and the mapping that gives the key (server, role), and holds
 * while the options epoch (options.h) has not moved.
 */
#define PSVC_ACCOUNT_MEMO 16

typedef struct AccountMemo
{
	Oid			serverid;
	Oid			userid;
	uint64		epoch;
	bool		used;
	bool		has_key;
	char		account[PSVC_ACCOUNT_LEN + 1];
	uint8		key_digest[PSVC_KEY_DIGEST_LEN];
} AccountMemo;

static AccountMemo account_memo[PSVC_ACCOUNT_MEMO];
static int	account_memo_next = 0;

/*
 * The base URL as the account reads it: scheme and host in lower case,
 * the scheme's default port dropped, no trailing slash (the server's
 * base_url has none).  CurrentMemoryContext.
 */
static pg_noinline char *
normalise_url(const char *url)
{
	char	   *u = pstrdup(url);
	char	   *host = strstr(u, "://");
	char	   *end;
	char	   *port;
	StringInfoData buf;

	if (host == NULL)
		return u;
	host += 3;
	end = host + strcspn(host, "/?#");
	for (char *p = u; p < end; p++)
		*p = pg_ascii_tolower((unsigned char) *p);
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, u, end - u);
	port = buf.data + (host - u);
	port = strrchr(port, ':');
	if (port != NULL && strchr(port, ']') == NULL &&
		((strncmp(buf.data, "https://", 8) == 0 && strcmp(port, ":443") == 0) ||
		 (strncmp(buf.data, "http://", 7) == 0 && strcmp(port, ":80") == 0)))
	{
		*port = '\0';
		buf.len = port - buf.data;
	}
	appendStringInfoString(&buf, end);
	pfree(u);
	return buf.data;
}

/*
 * The digest of url and key (NULL: a keyless mapping) into out, hex, with
 * its NUL.  The key is only read.
 */
static void
digest_account(const char *url, const char *key, char *out)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		sum[PG_SHA256_DIGEST_LENGTH];
	bool		ok;

	/* each part ends with its NUL, and no key has a marker of its own */
	ok = ctx != NULL &&
		pg_cryptohash_init(ctx) == 0 &&
		pg_cryptohash_update(ctx, (const uint8 *) "partner_svc account", 20) == 0 &&
		pg_cryptohash_update(ctx, (const uint8 *) url, strlen(url) + 1) == 0 &&
		pg_cryptohash_update(ctx, (const uint8 *) (key ? "K" : "-"), 1) == 0 &&
		(key == NULL ||
		 pg_cryptohash_update(ctx, (const uint8 *) key, strlen(key) + 1) == 0) &&
		pg_cryptohash_final(ctx, sum, sizeof(sum)) == 0;
	pg_cryptohash_free(ctx);
	if (!ok)
		elog(ERROR, "could not compute the partner account digest");
	hex_encode((const char *) sum, PSVC_ACCOUNT_LEN / 2, out);
	out[PSVC_ACCOUNT_LEN] = '\0';
}

/* The SHA-256 of key into out; the key is only read. */
static void
digest_key(const char *key, uint8 *out)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	bool		ok;

	ok = ctx != NULL &&
		pg_cryptohash_init(ctx) == 0 &&
		pg_cryptohash_update(ctx, (const uint8 *) "partner_svc key", 16) == 0 &&
		pg_cryptohash_update(ctx, (const uint8 *) key, strlen(key) + 1) == 0 &&
		pg_cryptohash_final(ctx, out, PSVC_KEY_DIGEST_LEN) == 0;
	pg_cryptohash_free(ctx);
	if (!ok)
		elog(ERROR, "could not compute the API key digest");
}

/*
 * The one reading of a server's mapping a call makes: the account and the
 * key's digest, kept, or computed from the key, which then stays in
 * out->api_key for the request's header (the caller clears it).
 */
void
psvc_options_access(const PsvcServer *server, PsvcServerAccess *out)
{
	Oid			userid = OidIsValid(server->userid) ?
		server->userid : GetUserId();
	uint64		epoch = psvc_options_epoch();
	char	   *url;
	AccountMemo *m;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < PSVC_ACCOUNT_MEMO; i++)
	{
		m = &account_memo[i];
		if (m->used && m->serverid == server->serverid &&
			m->userid == userid && m->epoch == epoch)
		{
			memcpy(out->account, m->account, PSVC_ACCOUNT_LEN + 1);
			memcpy(out->key_digest, m->key_digest, PSVC_KEY_DIGEST_LEN);
			out->has_key = m->has_key;
			return;
		}
	}

	url = normalise_url(server->base_url);
	out->api_key = psvc_options_api_key(server);
	out->has_key = out->api_key != NULL;
	PG_TRY();
	{
		digest_account(url, out->api_key, out->account);
		if (out->api_key != NULL)
			digest_key(out->api_key, out->key_digest);
	}
	PG_CATCH();
	{
		psvc_options_access_clear(out);
		PG_RE_THROW();
	}
	PG_END_TRY();
	pfree(url);

	/* kept only when no change came while the key was read */
	if (epoch != psvc_options_epoch())
		return;
	m = &account_memo[account_memo_next];
	account_memo_next = (account_memo_next + 1) % PSVC_ACCOUNT_MEMO;
	m->serverid = server->serverid;
	m->userid = userid;
	m->epoch = epoch;
	m->used = true;
	m->has_key = out->has_key;
	memcpy(m->account, out->account, PSVC_ACCOUNT_LEN + 1);
	memcpy(m->key_digest, out->key_digest, PSVC_KEY_DIGEST_LEN);
}

const char *
psvc_options_access_key(const PsvcServer *server, PsvcServerAccess *a)
{
	if (a->api_key == NULL && a->has_key)
		a->api_key = psvc_options_api_key(server);
	return a->api_key;
}

void
psvc_options_access_clear(PsvcServerAccess *a)
{
	if (a->api_key != NULL)
	{
		explicit_bzero(a->api_key, strlen(a->api_key));
		pfree(a->api_key);
		a->api_key = NULL;
	}
}

/* The account alone (the views of the limiter): the key is not kept. */
void
psvc_options_account(const PsvcServer *server, char *out)
{
	PsvcServerAccess a;

	psvc_options_access(server, &a);
	psvc_options_access_clear(&a);
	memcpy(out, a.account, PSVC_ACCOUNT_LEN + 1);
}
