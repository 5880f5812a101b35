/*-------------------------------------------------------------------------
 *
 * tokens.c
 *		  The store of OAuth2 access tokens per partner account (tokens.h).
 *
 * Design notes:
 *
 * - A fixed table of PSVC_TOKEN_SLOTS slots, a segment of the one
 *   shared-memory startup (segments.c, psvc_token_segment); a slot per
 *   account (the
 *   digest of token URL, client and scopes, never a secret), the least
 *   recently used one given to a new account when all are taken.
 * - Locking: one LWLock of the tranche "partner_svc tokens" guards every
 *   slot; it is held only to copy a token in or out, never across a
 *   request.  A slot's "fetching" flag says that one process is fetching
 *   its token; the others sleep on the condition variable, which a store
 *   or an abandon broadcasts, and take the fetch over only when the
 *   fetcher has taken longer than their own wait (it may have died).
 * - Without preloading there is no shared memory: the same table lives in
 *   this backend's static storage, so a session still fetches once.
 * - The token is a secret: the table is never shown, and a slot given to
 *   another account is zeroed first.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/tokens.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "segments.h"
#include "tokens.h"

#define PSVC_TOKEN_SLOTS 64
/* How long a waiter sleeps before it looks at the slot again. */
#define PSVC_TOKEN_NAP_MS 100

typedef struct TokenSlot
{
	char		account[PSVC_TOKEN_ACCOUNT_LEN];	/* "" when free */
	bool		fetching;		/* a process is fetching its token */
	TimestampTz fetch_started;
	TimestampTz renew_at;		/* 0: no usable token */
	TimestampTz last_used;
	uint64		gen;			/* of the token held */
	char		token[PSVC_TOKEN_MAX];
} TokenSlot;

typedef struct TokenShared
{
	LWLock	   *lock;
	ConditionVariable cv;
	uint64		next_gen;
	TokenSlot	slots[PSVC_TOKEN_SLOTS];
} TokenShared;

static TokenShared *tokens = NULL;	/* shared, or local_tokens */
static TokenShared *local_tokens = NULL;
static bool shared_tokens = false;

static Size
token_shmem_size(void)
{
	return MAXALIGN(sizeof(TokenShared));
}

/* Called with AddinShmemInitLock held (segments.c). */
static void
token_shmem_startup(void)
{
	bool		found;
	TokenShared *t;

	t = ShmemInitStruct("partner_svc tokens", sizeof(TokenShared), &found);
	if (!found)
	{
		memset(t, 0, sizeof(TokenShared));
		t->lock = &(GetNamedLWLockTranche("partner_svc tokens"))->lock;
		ConditionVariableInit(&t->cv);
		t->next_gen = 1;
	}
	tokens = t;
	shared_tokens = true;
}

/* The segment, for the one startup of segments.c. */
const PsvcSegment psvc_token_segment = {
	.size = token_shmem_size,
	.tranche = "partner_svc tokens",
	.nlocks = 1,
	.startup = token_shmem_startup,
};

/* The table: shared, else this backend's own (TopMemoryContext). */
static TokenShared *
token_table(void)
{
	if (tokens == NULL)
	{
		local_tokens = MemoryContextAllocZero(TopMemoryContext, sizeof(TokenShared));
		local_tokens->next_gen = 1;
		tokens = local_tokens;
	}
	return tokens;
}

static void
token_lock(TokenShared *t)
{
	if (shared_tokens)
		LWLockAcquire(t->lock, LW_EXCLUSIVE);
}

static void
token_unlock(TokenShared *t)
{
	if (shared_tokens)
		LWLockRelease(t->lock);
}

/* The slot of account, or a new one for it (the lock held). */
static TokenSlot *
token_slot(TokenShared *t, const char *account, bool create)
{
	TokenSlot  *victim = NULL;

	for (int i = 0; i < PSVC_TOKEN_SLOTS; i++)
	{
		TokenSlot  *s = &t->slots[i];

		if (strcmp(s->account, account) == 0)
			return s;
		if (s->fetching)
			continue;
		if (victim == NULL || s->account[0] == '\0' ||
			(victim->account[0] != '\0' && s->last_used < victim->last_used))
			victim = s;
	}
	if (!create || victim == NULL)
		return NULL;
	explicit_bzero(victim, sizeof(TokenSlot));
	strlcpy(victim->account, account, PSVC_TOKEN_ACCOUNT_LEN);
	return victim;
}

bool
psvc_token_get(const char *account, char *out, uint64 *gen, long wait_ms)
{
	TokenShared *t = token_table();
	TimestampTz start = GetCurrentTimestamp();

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		TokenSlot  *s;
		bool		wait = false;

		token_lock(t);
		s = token_slot(t, account, true);
		if (s == NULL)
		{
			/* every slot is being fetched: fetch without keeping */
			token_unlock(t);
			break;
		}
		if (s->renew_at > now)
		{
			strlcpy(out, s->token, PSVC_TOKEN_MAX);
			*gen = s->gen;
			s->last_used = now;
			token_unlock(t);
			if (shared_tokens)
				ConditionVariableCancelSleep();
			return true;
		}
		if (s->fetching && shared_tokens &&
			!TimestampDifferenceExceeds(start, now, (int) wait_ms))
			wait = true;
		else
		{
			s->fetching = true;
			s->fetch_started = now;
		}
		token_unlock(t);
		if (!wait)
			break;
		/* another process fetches it: sleep until it stores or gives up */
		(void) ConditionVariableTimedSleep(&t->cv, PSVC_TOKEN_NAP_MS,
										   PG_WAIT_EXTENSION);
		CHECK_FOR_INTERRUPTS();
	}
	if (shared_tokens)
		ConditionVariableCancelSleep();
	return false;
}

void
psvc_token_store(const char *account, const char *token,
				 TimestampTz renew_at, uint64 *gen)
{
	TokenShared *t = token_table();
	TokenSlot  *s;

	token_lock(t);
	*gen = t->next_gen++;
	s = token_slot(t, account, true);
	if (s != NULL)
	{
		explicit_bzero(s->token, PSVC_TOKEN_MAX);
		strlcpy(s->token, token, PSVC_TOKEN_MAX);
		s->renew_at = renew_at;
		s->gen = *gen;
		s->fetching = false;
		s->last_used = GetCurrentTimestamp();
	}
	token_unlock(t);
	if (shared_tokens)
		ConditionVariableBroadcast(&t->cv);
}

void
psvc_token_abandon(const char *account)
{
	TokenShared *t = token_table();
	TokenSlot  *s;

	token_lock(t);
	s = token_slot(t, account, false);
	if (s != NULL)
		s->fetching = false;
	token_unlock(t);
	if (shared_tokens)
		ConditionVariableBroadcast(&t->cv);
}

void
psvc_token_forget(const char *account, uint64 gen)
{
	TokenShared *t = token_table();
	TokenSlot  *s;

	token_lock(t);
	s = token_slot(t, account, false);
	if (s != NULL && s->gen == gen)
	{
		s->renew_at = 0;
		explicit_bzero(s->token, PSVC_TOKEN_MAX);
	}
	token_unlock(t);
}
