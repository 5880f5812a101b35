/*-------------------------------------------------------------------------
 *
 * tokens.h
 *		  OAuth2 access tokens kept in shared memory per partner account,
 *		  so that every session of the cluster uses the one token of its
 *		  account until shortly before it expires (tokens.c).
 *
 * The store knows no HTTP: the call module (http_token.c) asks for a
 * token, and when the store says so, fetches one and hands it back.  One
 * caller at a time fetches for an account; the others wait for it, so
 * many sessions starting at once make one grant.
 *
 * Memory: tokens live in shared memory when the library is preloaded,
 * else in this backend's static storage; callers get copies in their own
 * buffers.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/tokens.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_TOKENS_H
#define PSVC_TOKENS_H

#include "datatype/timestamp.h"

/* The longest access token kept, with its NUL. */
#define PSVC_TOKEN_MAX 2048
/* Characters of an account's key (a hex digest) with the NUL. */
#define PSVC_TOKEN_ACCOUNT_LEN 65

struct PsvcSegment;				/* segments.h */
extern const struct PsvcSegment psvc_token_segment;	/* for _PG_init */

/*
 * The token of account into out (PSVC_TOKEN_MAX bytes) and its generation
 * into *gen: true.  False when the caller must fetch one, then call
 * psvc_token_store or psvc_token_abandon: no token, or it is due for
 * renewal, and no other process is fetching it (while one is, this waits
 * for it, up to wait_ms, then takes the fetch over).
 */
extern bool psvc_token_get(const char *account, char *out, uint64 *gen,
						   long wait_ms);
/*
 * The token fetched for account, usable until renew_at; its generation
 * into *gen.  Wakes the waiting processes.
 */
extern void psvc_token_store(const char *account, const char *token,
							 TimestampTz renew_at, uint64 *gen);
/* The fetch failed: another process may try.  Never raises. */
extern void psvc_token_abandon(const char *account);
/*
 * The partner refused the token of generation gen (a 401): it is not
 * used again.  A newer token stays.
 */
extern void psvc_token_forget(const char *account, uint64 gen);

#endif							/* PSVC_TOKENS_H */
